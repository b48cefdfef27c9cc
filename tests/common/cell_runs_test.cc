#include "common/cell_runs.h"

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace widen {
namespace {

// Up to `max` random bytes from an alphabet with 0x00, 0x01, 0x7f, 0x80
// and 0xff (bytes that sort differently signed and unsigned).
std::string RandomBytes(std::mt19937& rng, size_t max) {
  static const std::string alphabet(
      "\x00\x01\x7f\x80\xff"
      "ab",
      7);
  std::string s(rng() % (max + 1), '\0');
  for (char& c : s) c = alphabet[rng() % alphabet.size()];
  return s;
}

struct Owned {
  std::string row, family, qualifier, value;
  int64_t ts;
  CellView view() const { return CellView{row, family, qualifier, ts, CellType::kPut, value}; }
};

// Random cells (bytes 0x00 and 0xff included, rows that are prefixes of
// others), added in sorted runs of random sizes, come out of Merge in HBase
// order; equal cells in the order they were added.
TEST(CellRunsTest, MergesManyRunsInCellOrderKeepingAddOrderForEqualCells) {
  std::mt19937 rng(7);
  auto random_bytes = [&](size_t max) { return RandomBytes(rng, max); };
  CellRuns runs;
  std::vector<std::pair<Owned, int>> all;  // cell, sequence number
  int seq = 0;
  // More runs than kMaxRuns, so some are merged into one before the end.
  for (size_t r = 0; r < CellRuns::kMaxRuns + 40; ++r) {
    CellBatch batch;
    const size_t n = 1 + rng() % 20;
    std::vector<Owned> cells;
    for (size_t i = 0; i < n; ++i) {
      cells.push_back(Owned{random_bytes(3), rng() % 2 ? "a" : "b", random_bytes(2),
                            "v" + std::to_string(seq + i), static_cast<int64_t>(rng() % 3) - 1});
    }
    for (const auto& c : cells) batch.Add(c.view());
    batch.Sort();
    for (size_t i = 0; i < batch.size(); ++i) {
      CellView v = batch.Get(i);
      all.push_back({Owned{std::string(v.row), std::string(v.family), std::string(v.qualifier),
                           std::string(v.value), v.timestamp_ms},
                     seq++});
    }
    ASSERT_TRUE(runs.Add(batch).ok());
  }
  EXPECT_LE(runs.runs(), CellRuns::kMaxRuns);
  EXPECT_GT(runs.runs_written(), CellRuns::kMaxRuns + 40);  // a merged run was written too
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return CompareCells(a.first.view(), b.first.view()) < 0;
  });
  std::vector<std::string> got;
  ASSERT_TRUE(runs.Merge([&](const CellView& c, bool) {
                    got.emplace_back(c.value);
                    return Status::OK();
                  })
                  .ok());
  ASSERT_EQ(got.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(got[i], all[i].first.value) << i;
  EXPECT_EQ(runs.runs(), 0u);
}

// Every field of every cell comes back as added, whatever its neighbours
// share: rows equal to, prefixes of and extending the previous row, empty
// rows, families, qualifiers and values, equal and differing timestamps
// (the extremes of int64 included), every cell type and a type code the
// runs' record has no short form for, and cells spanning the read buffer's
// end.
TEST(CellRunsTest, EveryFieldRoundTripsThroughARun) {
  std::mt19937 rng(11);
  auto random_bytes = [&](size_t max) { return RandomBytes(rng, max); };
  const CellType types[] = {CellType::kPut, CellType::kDelete, CellType::kDeleteColumn,
                            CellType::kDeleteFamily, static_cast<CellType>(5)};
  const int64_t stamps[] = {0, 1, -1, INT64_MAX, INT64_MIN, 1700000000123};
  struct Full {
    std::string row, family, qualifier, value;
    int64_t ts;
    CellType type;
    CellView view() const { return CellView{row, family, qualifier, ts, type, value}; }
  };
  std::vector<Full> cells;
  std::string row;
  for (int i = 0; i < 20000; ++i) {
    switch (rng() % 4) {
      case 0:
        break;  // the same row
      case 1:
        row += random_bytes(3);
        break;  // extends it
      case 2:
        row = row.substr(0, rng() % (row.size() + 1));
        break;  // a prefix of it
      default:
        row = random_bytes(6);
        break;
    }
    // Now and then a value longer than the 256 KiB read buffer.
    std::string value = rng() % 2000 == 0 ? std::string(300 << 10, 'v') : random_bytes(40);
    cells.push_back(Full{row, rng() % 3 == 0 ? "" : std::string(1 + rng() % 2, 'f'),
                         random_bytes(4), std::move(value), stamps[rng() % 6], types[rng() % 5]});
  }
  CellBatch batch;
  for (const auto& c : cells) batch.Add(c.view());
  batch.Sort();
  std::stable_sort(cells.begin(), cells.end(), [](const Full& a, const Full& b) {
    return CompareCells(a.view(), b.view()) < 0;
  });
  CellRuns runs;
  ASSERT_TRUE(runs.Add(batch).ok());
  size_t i = 0;
  ASSERT_TRUE(runs.Merge([&](const CellView& c, bool) {
                    EXPECT_LT(i, cells.size());
                    if (i >= cells.size()) return Status::OK();
                    const Full& want = cells[i++];
                    EXPECT_EQ(c.row, want.row) << i;
                    EXPECT_EQ(c.family, want.family) << i;
                    EXPECT_EQ(c.qualifier, want.qualifier) << i;
                    EXPECT_EQ(c.value, want.value) << i;
                    EXPECT_EQ(c.timestamp_ms, want.ts) << i;
                    EXPECT_EQ(static_cast<int>(c.type), static_cast<int>(want.type)) << i;
                    return Status::OK();
                  })
                  .ok());
  EXPECT_EQ(i, cells.size());
}

// Sorted cells cost the runs fewer bytes than the cells hold: a row's key,
// family and timestamp are written once per row, not once per cell.
TEST(CellRunsTest, ARunOfSortedCellsTakesFewerBytesThanItsCells) {
  CellBatch batch;
  size_t cell_bytes = 0;
  for (int r = 0; r < 1000; ++r) {
    const std::string row = "customer" + std::to_string(100000 + r);
    for (int q = 0; q < 10; ++q) {
      const std::string qualifier = "q" + std::to_string(q);
      batch.Add(row, "d", qualifier, 1700000000000, "value");
      cell_bytes += row.size() + 1 + qualifier.size() + 5 + 8 + 1;
    }
  }
  batch.Sort();
  CellRuns runs;
  ASSERT_TRUE(runs.Add(batch).ok());
  // Per cell: tag, two lengths, 2 qualifier and 5 value bytes (10); per
  // row besides: the prefix length, the suffix's length and bytes, the
  // family and the timestamp (at most 3 + 14 + 2 + 8).
  EXPECT_LE(runs.bytes_written(), 1000u * (10 * 10 + 27));
  EXPECT_LT(runs.bytes_written() * 2, cell_bytes);
  ASSERT_TRUE(runs.Merge([](const CellView&, bool) { return Status::OK(); }).ok());
}

// A record bigger than the read buffer is read whole.
TEST(CellRunsTest, ReadsRecordsLargerThanTheReadBuffer) {
  CellRuns runs;
  CellBatch batch;
  const std::string big(1 << 20, 'x');
  batch.Add("a", "d", "q", 1, big);
  batch.Add("b", "d", "q", 1, "small");
  ASSERT_TRUE(runs.Add(batch).ok());
  std::vector<size_t> sizes;
  ASSERT_TRUE(runs.Merge([&](const CellView& c, bool) {
                    sizes.push_back(c.value.size());
                    return Status::OK();
                  })
                  .ok());
  EXPECT_EQ(sizes, (std::vector<size_t>{big.size(), 5}));
}

TEST(CellRunsTest, AMissingDirectoryIsLocalIoNamingTheFile) {
  CellRuns runs("/nonexistent-widen-dir");
  CellBatch batch;
  batch.Add("a", "d", "q", 1, "v");
  Status s = runs.Add(batch);
  EXPECT_EQ(s.code(), StatusCode::kLocalIo);
  EXPECT_NE(s.message().find("No such file or directory"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("/nonexistent-widen-dir/widen-sort-"), std::string::npos)
      << s.message();
}

TEST(CellRunsTest, MergeStopsAtTheCallersError) {
  CellRuns runs;
  CellBatch batch;
  batch.Add("a", "d", "q", 1, "v");
  batch.Add("b", "d", "q", 1, "v");
  ASSERT_TRUE(runs.Add(batch).ok());
  int calls = 0;
  Status s = runs.Merge([&](const CellView&, bool) {
    ++calls;
    return Status::InvalidArgument("stop");
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(calls, 1);
}

// Several sets merge as one, equal cells in the order of the sets (parallel
// jobs: the later range's cell last); the written flag of a run is passed on.
TEST(CellRunsTest, MergeAllOrdersEqualCellsBySetThenRun) {
  CellRuns a, b;
  CellBatch x;
  x.Add("k", "d", "q", 1, "from b");
  ASSERT_TRUE(b.Add(x).ok());
  x.Clear();
  x.Add("k", "d", "q", 1, "from a");
  x.Add("m", "d", "q", 1, "a, written");
  ASSERT_TRUE(a.Add(x, /*written=*/true).ok());
  std::vector<std::string> got;
  ASSERT_TRUE(CellRuns::MergeAll({&a, &b}, [&](const CellView& c, bool written) {
                got.push_back(std::string(c.value) + (written ? " *" : ""));
                return Status::OK();
              }).ok());
  EXPECT_EQ(got, (std::vector<std::string>{"from a *", "from b", "a, written *"}));
}

// Runs flagged as written are merged (to bound open files) only with each
// other, and keep their flag.
TEST(CellRunsTest, WrittenRunsStayApartWhenRunsAreMerged) {
  CellRuns runs;
  int n = 0;
  for (size_t r = 0; r < CellRuns::kMaxRuns + 10; ++r) {
    CellBatch b;
    b.Add("r" + std::to_string(1000 + r), "d", "q", 1, std::to_string(n++));
    ASSERT_TRUE(runs.Add(b, /*written=*/r < 3).ok());
  }
  int written = 0, total = 0;
  ASSERT_TRUE(runs.Merge([&](const CellView& c, bool w) {
                    const int row = std::stoi(std::string(c.row.substr(1))) - 1000;
                    EXPECT_EQ(w, row < 3) << row;
                    written += w;
                    ++total;
                    return Status::OK();
                  })
                  .ok());
  EXPECT_EQ(written, 3);
  EXPECT_EQ(total, static_cast<int>(CellRuns::kMaxRuns + 10));
}

}  // namespace
}  // namespace widen
