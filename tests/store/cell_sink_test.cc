#include "store/cell_sink.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace widen {
namespace {

// Records every batch it is handed; can be told to refuse the next one.
class RecordingSink : public BufferedCellSink {
 public:
  explicit RecordingSink(size_t batch_bytes, bool background = false)
      : BufferedCellSink(batch_bytes, background) {}
  ~RecordingSink() override { StopWriter(); }

  std::vector<std::vector<std::string>> batches;  // "row/family/qualifier/ts" per cell
  Status next_status;

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
    }
    batches.push_back(cells);
    return Status::OK();
  }
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

TEST(BufferedCellSinkTest, ThresholdFlushesFromPut) {
  RecordingSink sink(10);
  ASSERT_TRUE(sink.Put(CellView{"row", "d", "q", 1, CellType::kPut, "v"}).ok());  // 6 bytes
  EXPECT_TRUE(sink.batches.empty());
  ASSERT_TRUE(sink.Put(CellView{"row", "d", "q", 2, CellType::kPut, "v"}).ok());  // 12 bytes
  ASSERT_EQ(sink.batches.size(), 1u);
  EXPECT_EQ(sink.batches[0].size(), 2u);
  EXPECT_EQ(sink.stats().bytes, 12u);
  ASSERT_TRUE(sink.Close().ok());
  EXPECT_EQ(sink.batches.size(), 1u);
}

TEST(BufferedCellSinkTest, CloseFlushes) {
  RecordingSink sink(1 << 20);
  ASSERT_TRUE(sink.Put(CellView{"r", "d", "q", 1, CellType::kPut, "v"}).ok());
  ASSERT_TRUE(sink.Close().ok());
  EXPECT_EQ(sink.batches.size(), 1u);
  EXPECT_EQ(sink.stats().cells, 1u);
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

}  // namespace
}  // namespace widen
