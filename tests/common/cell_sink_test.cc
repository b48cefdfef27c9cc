#include "common/cell_sink.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace widen {
namespace {

// Records every batch it is handed (and can read its cells back, as a
// target that started empty); can be told to refuse the next one.
class RecordingSink : public BufferedCellSink {
 public:
  explicit RecordingSink(size_t batch_bytes, bool background = false, bool starts_empty = true)
      : BufferedCellSink(batch_bytes, background), starts_empty_(starts_empty) {}
  ~RecordingSink() override { StopWriter(); }

  std::vector<std::vector<std::string>> batches;  // "row/family/qualifier/ts" per cell
  Status next_status;
  int read_backs = 0;

 protected:
  Status WriteSorted(const CellBatch& batch) override {
    EXPECT_FALSE(batch.empty());
    if (!next_status.ok()) {
      Status s = next_status;
      next_status = Status::OK();
      return s;
    }
    std::vector<std::string> cells;
    for (size_t i = 0; i < batch.size(); ++i) {
      CellView c = batch.Get(i);
      cells.push_back(std::string(c.row) + "/" + std::string(c.family) + "/" +
                      std::string(c.qualifier) + "/" + std::to_string(c.timestamp_ms));
      stored_.push_back(
          {std::string(c.row), std::string(c.family), std::string(c.qualifier), c.timestamp_ms});
    }
    batches.push_back(cells);
    return Status::OK();
  }
  Result<bool> StartsEmpty() override { return starts_empty_; }
  Status ReadBack(const CellView& from, const CellView& to,
                  const std::function<Status(const CellView&)>& fn) override {
    ++read_backs;
    std::vector<CellCoordinates> sorted = stored_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return CompareCells(V(a), V(b)) < 0; });
    // A store keeps one cell per coordinates.
    sorted.erase(
        std::unique(sorted.begin(), sorted.end(),
                    [](const auto& a, const auto& b) { return CompareCells(V(a), V(b)) == 0; }),
        sorted.end());
    for (const auto& c : sorted) {
      if (CompareCells(V(c), from) >= 0 && CompareCells(V(c), to) <= 0) {
        WIDEN_RETURN_IF_ERROR(fn(V(c)));
      }
    }
    return Status::OK();
  }

 private:
  static CellView V(const CellCoordinates& c) {
    return CellView{c.row, c.family, c.qualifier, c.timestamp_ms, CellType::kPut, {}};
  }
  bool starts_empty_;
  std::vector<CellCoordinates> stored_;

  Status SyncWritten() override {
    ++syncs;
    return Status::OK();
  }

 public:
  int syncs = 0;  // SyncWritten calls
};

TEST(BufferedCellSinkTest, FlushSortsAndCounts) {
  RecordingSink sink(1 << 20);
  ASSERT_TRUE(sink.Put(CellView{"b", "d", "q", 1, CellType::kPut, "v"}).ok());
  ASSERT_TRUE(sink.Put(CellView{"a", "d", "q", 1, CellType::kPut, "vv"}).ok());
  ASSERT_TRUE(sink.Put(CellView{"a", "d", "q", 2, CellType::kPut, ""}).ok());
  EXPECT_TRUE(sink.batches.empty());
  ASSERT_TRUE(sink.Flush().ok());
  ASSERT_EQ(sink.batches.size(), 1u);
  EXPECT_EQ(sink.batches[0], (std::vector<std::string>{"a/d/q/2", "a/d/q/1", "b/d/q/1"}));
  EXPECT_EQ(sink.stats().cells, 3u);
  EXPECT_EQ(sink.stats().bytes, 4u + 5u + 3u);  // row + family + qualifier + value
  EXPECT_EQ(sink.stats().batches, 1u);
  // An empty flush does not call WriteSorted.
  ASSERT_TRUE(sink.Flush().ok());
  EXPECT_EQ(sink.batches.size(), 1u);
}

// A full batch is held back until the next one shows that the order holds,
// then written; Close writes the last one.
TEST(BufferedCellSinkTest, ThresholdFlushesFromPut) {
  RecordingSink sink(10);
  ASSERT_TRUE(sink.Put(CellView{"row", "d", "q", 2, CellType::kPut, "v"}).ok());  // 6 bytes
  EXPECT_TRUE(sink.batches.empty());
  ASSERT_TRUE(sink.Put(CellView{"row", "d", "q", 1, CellType::kPut, "v"}).ok());  // 12 bytes
  EXPECT_TRUE(sink.batches.empty());                                              // held back
  ASSERT_TRUE(sink.Put(CellView{"row2", "d", "q", 1, CellType::kPut, "v"}).ok());
  ASSERT_TRUE(sink.Put(CellView{"row2", "d", "q", 0, CellType::kPut, "v"}).ok());
  ASSERT_EQ(sink.batches.size(), 1u);
  EXPECT_EQ(sink.batches[0], (std::vector<std::string>{"row/d/q/2", "row/d/q/1"}));
  EXPECT_EQ(sink.stats().bytes, 12u);
  ASSERT_TRUE(sink.Close().ok());
  ASSERT_EQ(sink.batches.size(), 2u);
  EXPECT_EQ(sink.stats().bytes, 26u);
  EXPECT_EQ(sink.stats().rows, 2u);
  EXPECT_EQ(sink.stats().spilled_runs, 0u);
}

TEST(BufferedCellSinkTest, CloseFlushes) {
  RecordingSink sink(1 << 20);
  ASSERT_TRUE(sink.Put(CellView{"r", "d", "q", 1, CellType::kPut, "v"}).ok());
  ASSERT_TRUE(sink.Close().ok());
  EXPECT_EQ(sink.batches.size(), 1u);
  EXPECT_EQ(sink.stats().cells, 1u);
}

// Flush writes without syncing; Sync writes, then syncs once; Close syncs.
TEST(BufferedCellSinkTest, SyncWritesThenSyncsAndFlushDoesNotSync) {
  RecordingSink sink(1 << 20, /*background=*/true);
  ASSERT_TRUE(sink.Put(CellView{"r", "d", "q", 1, CellType::kPut, "v"}).ok());
  ASSERT_TRUE(sink.Flush().ok());
  EXPECT_EQ(sink.batches.size(), 1u);
  EXPECT_EQ(sink.syncs, 0);
  ASSERT_TRUE(sink.Put(CellView{"s", "d", "q", 1, CellType::kPut, "v"}).ok());
  ASSERT_TRUE(sink.Sync().ok());
  EXPECT_EQ(sink.batches.size(), 2u);  // written before the sync
  EXPECT_EQ(sink.syncs, 1);
  ASSERT_TRUE(sink.Close().ok());
  EXPECT_EQ(sink.syncs, 2);
}

// A sink whose batch fails is not synced: Sync returns the write's error.
TEST(BufferedCellSinkTest, SyncReturnsAWriteErrorWithoutSyncing) {
  RecordingSink sink(1 << 20);
  ASSERT_TRUE(sink.Put(CellView{"r", "d", "q", 1, CellType::kPut, "v"}).ok());
  sink.next_status = Status::Unavailable("gone");
  EXPECT_EQ(sink.Sync().code(), StatusCode::kUnavailable);
  EXPECT_EQ(sink.syncs, 0);
}

TEST(RunsSinkTest, SyncAddsWhatIsBuffered) {
  auto runs = std::make_shared<CellRuns>();
  RunsSink sink(runs);
  ASSERT_TRUE(sink.Put(CellView{"r", "d", "q", 1, CellType::kPut, "v"}).ok());
  EXPECT_EQ(runs->runs(), 0u);
  ASSERT_TRUE(sink.Sync().ok());
  EXPECT_EQ(runs->runs(), 1u);
}

TEST(BufferedCellSinkTest, RefusedBatchIsReportedOnceAndNotCounted) {
  RecordingSink sink(1 << 20);
  ASSERT_TRUE(sink.Put(CellView{"r", "d", "q", 1, CellType::kPut, "v"}).ok());
  sink.next_status = Status::Unavailable("gone");
  Status s = sink.Flush();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(sink.stats().cells, 0u);
  EXPECT_EQ(sink.stats().batches, 0u);
  ASSERT_TRUE(sink.Flush().ok());  // the refused batch was dropped
  EXPECT_TRUE(sink.batches.empty());
}

// The background writer delivers every batch, in order, and Flush waits for it.
TEST(BufferedCellSinkTest, BackgroundWriterKeepsOrderAndCounts) {
  RecordingSink sink(64, /*background=*/true);
  for (int i = 0; i < 1000; ++i) {
    std::string row = "r" + std::to_string(100000 + i);
    ASSERT_TRUE(sink.Put(CellView{row, "d", "q", 1, CellType::kPut, "value"}).ok());
  }
  ASSERT_TRUE(sink.Flush().ok());
  EXPECT_EQ(sink.stats().cells, 1000u);
  std::vector<std::string> all;
  for (const auto& b : sink.batches) all.insert(all.end(), b.begin(), b.end());
  ASSERT_EQ(all.size(), 1000u);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  EXPECT_GT(sink.batches.size(), 10u);
}

// A write error of the writer thread surfaces on a later call, once.
TEST(BufferedCellSinkTest, BackgroundWriterReportsErrors) {
  RecordingSink sink(8, /*background=*/true);
  sink.next_status = Status::Unavailable("disk gone");
  Status first;
  for (int i = 0; i < 10 && first.ok(); ++i) {
    first = sink.Put(CellView{"row" + std::to_string(i), "d", "q", 1, CellType::kPut, "v"});
  }
  if (first.ok()) first = sink.Flush();
  EXPECT_EQ(first.code(), StatusCode::kUnavailable);
  EXPECT_EQ(first.message(), "disk gone");
}

std::vector<std::string> Concat(const std::vector<std::vector<std::string>>& batches) {
  std::vector<std::string> all;
  for (const auto& b : batches) all.insert(all.end(), b.begin(), b.end());
  return all;
}

std::string RowName(int n) {
  std::string s = std::to_string(n);
  return "r" + std::string(6 - s.size(), '0') + s;
}

// Batches out of key order are spilled as sorted runs and merged: the
// target still receives one stream in key order, every cell once.
TEST(BufferedCellSinkTest, OutOfOrderBatchesAreMergedIntoOneSortedStream) {
  for (bool background : {false, true}) {
    RecordingSink sink(200, background);
    std::vector<int> order;
    for (int i = 0; i < 5000; ++i) order.push_back((i * 7919) % 5000);  // a permutation
    for (int n : order) {
      ASSERT_TRUE(sink.Put(CellView{RowName(n), "d", "q", 1, CellType::kPut, "v"}).ok());
    }
    ASSERT_TRUE(sink.Close().ok());
    std::vector<std::string> all = Concat(sink.batches);
    ASSERT_EQ(all.size(), 5000u);
    for (int n = 0; n < 5000; ++n) EXPECT_EQ(all[n], RowName(n) + "/d/q/1");
    EXPECT_EQ(sink.stats().cells, 5000u);
    EXPECT_EQ(sink.stats().rows, 5000u);
    EXPECT_EQ(sink.stats().overwritten, 0u);
    EXPECT_GT(sink.stats().spilled_runs, 10u);
    EXPECT_GT(sink.stats().spilled_bytes, 5000u * 8);
  }
}

// A cancel set while spilled runs wait for their merge stops Close with
// Cancelled (Ctrl-C during a sorted table's last step); without one the
// same cells are merged.
TEST(BufferedCellSinkTest, ACancelStopsTheMergeOfSpilledRuns) {
  for (bool cancelled : {true, false}) {
    std::atomic<bool> cancel{false};
    RecordingSink sink(64 << 10);
    sink.SetCancel(&cancel);
    for (int i = 0; i < 40000; ++i) {
      ASSERT_TRUE(
          sink.Put(CellView{RowName((i * 7919) % 40000), "d", "q", 1, CellType::kPut, "v"}).ok());
    }
    ASSERT_GT(sink.stats().spilled_runs, 0u);
    cancel = cancelled;
    Status s = sink.Close();
    if (cancelled) {
      EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
      EXPECT_LT(Concat(sink.batches).size(), 40000u);
    } else {
      EXPECT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(Concat(sink.batches).size(), 40000u);
    }
  }
}

// A cell with the coordinates of a cell put before it is counted, whether
// the two meet in one batch, across batches in key order, or across spilled
// runs; the first one is named.
TEST(BufferedCellSinkTest, CountsEveryReplacedCellExactly) {
  struct Case {
    const char* name;
    std::vector<std::string> rows;  // one cell each, in put order
  };
  const std::vector<Case> cases = {
      {"one batch", {"a", "b", "b", "c"}},
      {"across ordered batches", {"a", "b", "c", "d", "e", "f", "g", "h", "h", "i", "j"}},
      {"across runs", {"j", "i", "h", "g", "f", "e", "d", "c", "b", "a", "e", "x", "a"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RecordingSink sink(30);  // about three cells a batch
    std::map<std::string, int> seen;
    uint64_t expected = 0;
    for (const auto& r : c.rows) {
      if (seen[r]++ > 0) ++expected;
      ASSERT_TRUE(sink.Put(CellView{r, "d", "q", 7, CellType::kPut, "v" + r}).ok());
    }
    ASSERT_TRUE(sink.Close().ok());
    EXPECT_EQ(sink.stats().overwritten, expected);
    EXPECT_EQ(sink.stats().rows, seen.size());
    ASSERT_TRUE(sink.stats().first_overwritten.has_value());
    std::string first;
    for (const auto& [r, n] : seen) {
      if (n > 1 && first.empty()) first = r;
    }
    EXPECT_EQ(sink.stats().first_overwritten->row, first);
    EXPECT_EQ(sink.stats().first_overwritten->family, "d");
    EXPECT_EQ(sink.stats().first_overwritten->qualifier, "q");
    EXPECT_EQ(sink.stats().first_overwritten->timestamp_ms, 7);
  }
}

// Versions of one column beyond the family's VERSIONS are counted; other
// families and other timestamps are not confused with them.
TEST(BufferedCellSinkTest, CountsVersionsBeyondTheFamilysVersions) {
  RecordingSink sink(40);
  sink.SetVersions({{"a", 2}, {"b", 1}});
  // Row x: a:q has 5 versions (3 beyond 2), b:q has 2 (1 beyond 1), a:r 1.
  for (int ts : {5, 1, 4, 2, 3}) {
    ASSERT_TRUE(sink.Put(CellView{"x", "a", "q", ts, CellType::kPut, "v"}).ok());
  }
  ASSERT_TRUE(sink.Put(CellView{"x", "b", "q", 1, CellType::kPut, "v"}).ok());
  ASSERT_TRUE(sink.Put(CellView{"x", "b", "q", 2, CellType::kPut, "v"}).ok());
  ASSERT_TRUE(sink.Put(CellView{"x", "a", "r", 1, CellType::kPut, "v"}).ok());
  // Row w (before x in key order, put after it): a:q with 3 versions.
  for (int ts : {1, 2, 3}) {
    ASSERT_TRUE(sink.Put(CellView{"w", "a", "q", ts, CellType::kPut, "v"}).ok());
  }
  ASSERT_TRUE(sink.Close().ok());
  EXPECT_EQ(sink.stats().beyond_versions, 3u + 1u + 1u);
  EXPECT_EQ(sink.stats().rows, 2u);
  EXPECT_EQ(sink.stats().overwritten, 0u);
}

// Ordered batches are written, then one arrives that is not in order: what
// was written is read back and merged with the rest, so replaced cells
// (equal values too) and rows are counted exactly, and only cells not yet
// written are written.
TEST(BufferedCellSinkTest, LateDisorderReadsBackWhatWasWritten) {
  RecordingSink sink(12);  // two cells a batch
  for (const char* r : {"b", "c", "d", "e", "f", "g"}) {
    ASSERT_TRUE(sink.Put(CellView{r, "d", "q", 1, CellType::kPut, "old"}).ok());
  }
  // b..e are written by now; then out of order (c again, with the same value).
  for (const char* r : {"c", "a", "h", "z"}) {
    ASSERT_TRUE(sink.Put(CellView{r, "d", "q", 1, CellType::kPut, "old"}).ok());
  }
  ASSERT_TRUE(sink.Close().ok());
  EXPECT_EQ(sink.read_backs, 1);
  EXPECT_EQ(sink.stats().overwritten, 1u);
  EXPECT_EQ(sink.stats().first_overwritten->row, "c");
  EXPECT_EQ(sink.stats().rows, 9u);    // a..h and z
  EXPECT_EQ(sink.stats().cells, 10u);  // written, the replaced one included
  std::vector<std::string> all = Concat(sink.batches);
  std::vector<std::string> expected = {"b/d/q/1", "c/d/q/1", "d/d/q/1", "e/d/q/1",  // in order
                                       "a/d/q/1", "c/d/q/1", "f/d/q/1", "g/d/q/1",  // merged
                                       "h/d/q/1", "z/d/q/1"};
  EXPECT_EQ(all, expected);
}

// A target that may hold cells of earlier runs gets one sorted stream at
// Flush; its earlier cells are not counted as replaced.
TEST(BufferedCellSinkTest, ATargetThatHeldCellsGetsOneSortedStream) {
  RecordingSink sink(12, /*background=*/false, /*starts_empty=*/false);
  for (const char* r : {"b", "c", "d", "e", "f"}) {
    ASSERT_TRUE(sink.Put(CellView{r, "d", "q", 1, CellType::kPut, "v"}).ok());
  }
  EXPECT_TRUE(sink.batches.empty()) << "nothing is written before Flush";
  ASSERT_TRUE(sink.Close().ok());
  EXPECT_EQ(sink.read_backs, 0);
  EXPECT_EQ(sink.stats().overwritten, 0u);
  EXPECT_EQ(sink.stats().rows, 5u);
  EXPECT_GT(sink.stats().spilled_runs, 0u);
  EXPECT_EQ(Concat(sink.batches),
            (std::vector<std::string>{"b/d/q/1", "c/d/q/1", "d/d/q/1", "e/d/q/1", "f/d/q/1"}));
}

}  // namespace
}  // namespace widen
