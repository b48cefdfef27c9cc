#include "common/cell.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace widen {
namespace {

TEST(CellTest, HBaseOrder) {
  CellView a{"r1", "f", "q", 10, CellType::kPut, "v"};
  CellView b = a;
  b.timestamp_ms = 20;  // newer sorts first
  EXPECT_LT(CompareCells(b, a), 0);
  CellView d = a;
  d.type = CellType::kDelete;  // a delete precedes the put at the same timestamp
  EXPECT_LT(CompareCells(d, a), 0);
  CellView prefix{"r", "f", "q", 1, CellType::kPut, ""};
  EXPECT_LT(CompareCells(prefix, a), 0);  // a row that is a prefix sorts first
  CellView hi{std::string_view("r1\xff", 3), "a", "", 1, CellType::kPut, ""};
  EXPECT_LT(CompareCells(a, hi), 0);  // unsigned bytes
}

TEST(CellTest, BatchOwnsBytesAndSorts) {
  CellBatch batch;
  {
    std::string row = "row2", value = "x";
    batch.Add(row, "f", "b", 1, value);
    row = "row1";
    batch.Add(row, "f", "z", 1, value);
    batch.Add(row, "f", "a", 5, value);
    batch.Add(row, "f", "a", 9, value);
  }
  batch.Sort();
  ASSERT_EQ(batch.size(), 4u);
  EXPECT_EQ(batch.Get(0).row, "row1");
  EXPECT_EQ(batch.Get(0).qualifier, "a");
  EXPECT_EQ(batch.Get(0).timestamp_ms, 9);
  EXPECT_EQ(batch.Get(1).timestamp_ms, 5);
  EXPECT_EQ(batch.Get(2).qualifier, "z");
  EXPECT_EQ(batch.Get(3).row, "row2");
  EXPECT_EQ(batch.Get(3).value, "x");
  batch.Clear();
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(batch.bytes(), 0u);
}

// PopBack drops the last cell and its bytes; what is added next follows
// the cells before it.
TEST(CellTest, PopBackDropsTheLastCellAndItsBytes) {
  CellBatch batch;
  batch.Add("r1", "f", "a", 1, "one");
  const size_t one = batch.bytes();
  batch.Add("r1", "f", "b", 2, "a longer value");
  batch.PopBack();
  EXPECT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch.bytes(), one);
  batch.Add("r2", "g", "c", 3, "three");
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch.Get(0).value, "one");
  EXPECT_EQ(batch.Get(1).row, "r2");
  EXPECT_EQ(batch.Get(1).family, "g");
  EXPECT_EQ(batch.Get(1).value, "three");
  batch.PopBack();
  batch.PopBack();
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(batch.bytes(), 0u);
}

// Sort against a stable sort of every cell: rows added as spans of their
// cells, in order or not, a key repeated in spans apart, cells with equal
// coordinates (their values tell the order they were added in); bytes 0x00
// and 0xff and rows that are prefixes of others.
TEST(CellTest, SortGivesTheStableCellOrder) {
  std::mt19937 rng(11);
  const std::string alphabet(
      "\x00\x01\x7f\xff"
      "ab",
      6);
  auto random_bytes = [&](size_t max) {
    std::string s(rng() % (max + 1), '\0');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    return s;
  };
  for (int round = 0; round < 200; ++round) {
    struct Owned {
      std::string row, qualifier, value;
      int64_t ts;
    };
    std::vector<Owned> added;
    const int rows = 1 + static_cast<int>(rng() % 30);
    const bool sorted_rows = round % 3 == 0;  // a batch in order already
    std::vector<std::string> keys;
    for (int r = 0; r < rows; ++r) keys.push_back(random_bytes(3));
    if (sorted_rows) {
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    }
    for (const std::string& key : keys) {
      std::vector<Owned> cells;
      const int n = 1 + static_cast<int>(rng() % 5);
      for (int i = 0; i < n; ++i) {
        cells.push_back(Owned{key, random_bytes(2), "", static_cast<int64_t>(rng() % 3)});
      }
      if (sorted_rows || rng() % 2 == 0) {
        std::sort(cells.begin(), cells.end(), [](const Owned& a, const Owned& b) {
          return CompareCells(CellView{a.row, "f", a.qualifier, a.ts, CellType::kPut, ""},
                              CellView{b.row, "f", b.qualifier, b.ts, CellType::kPut, ""}) < 0;
        });
      }
      for (Owned& c : cells) {
        c.value = std::to_string(added.size());
        added.push_back(c);
      }
    }
    CellBatch batch;
    for (const Owned& c : added) batch.Add(c.row, "f", c.qualifier, c.ts, c.value);
    std::vector<Owned> want = added;
    std::stable_sort(want.begin(), want.end(), [](const Owned& a, const Owned& b) {
      return CompareCells(CellView{a.row, "f", a.qualifier, a.ts, CellType::kPut, ""},
                          CellView{b.row, "f", b.qualifier, b.ts, CellType::kPut, ""}) < 0;
    });
    batch.Sort();
    ASSERT_EQ(batch.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(batch.Get(i).value, want[i].value) << "round " << round << " cell " << i;
    }
  }
}

}  // namespace
}  // namespace widen
