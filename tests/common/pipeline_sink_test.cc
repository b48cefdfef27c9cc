#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/cell_sink.h"

namespace widen {
namespace {

// What a PipelineSink hands on: every cell (row/qualifier/value), the thread
// that put it, and the calls that follow. Refuses the cell `fail_at`
// (1-based; 0 = never).
struct Seen {
  std::vector<std::string> cells;
  std::vector<std::thread::id> threads;
  int flushes = 0, syncs = 0, closes = 0;
};

class Inner : public CellSink {
 public:
  Inner(Seen* seen, size_t fail_at) : seen_(seen), fail_at_(fail_at) {}
  Status Put(const CellView& c) override {
    seen_->cells.push_back(std::string(c.row) + "/" + std::string(c.qualifier) + "/" +
                           std::string(c.value));
    seen_->threads.push_back(std::this_thread::get_id());
    ++stats_.cells;
    if (seen_->cells.size() == fail_at_) return Status::InvalidArgument("cell refused");
    return Status::OK();
  }
  Status Flush() override {
    ++seen_->flushes;
    return Status::OK();
  }
  Status Sync() override {
    ++seen_->syncs;
    return Status::OK();
  }
  Status Close() override {
    ++seen_->closes;
    return Status::OK();
  }
  const SinkStats& stats() const override { return stats_; }

 private:
  Seen* seen_;
  size_t fail_at_;
  SinkStats stats_;
};

std::string Row(int i) { return "r" + std::to_string(100000 + i); }

Status PutN(CellSink* sink, int from, int to) {
  for (int i = from; i < to; ++i) {
    const std::string row = Row(i), value = std::string(static_cast<size_t>(i % 50), 'v');
    WIDEN_RETURN_IF_ERROR(sink->Put(CellView{row, "f", "q", i, CellType::kPut, value}));
  }
  return Status::OK();
}

std::string Want(int i) { return Row(i) + "/q/" + std::string(static_cast<size_t>(i % 50), 'v'); }

// Every cell reaches the inner sink once, in the order put, with its bytes;
// full batches from the worker thread, the rest from the caller's at Flush.
TEST(PipelineSinkTest, HandsOnEveryCellInOrder) {
  Seen seen;
  PipelineSink sink(std::make_unique<Inner>(&seen, 0), 1024);
  ASSERT_TRUE(PutN(&sink, 0, 5000).ok());
  ASSERT_TRUE(sink.Flush().ok());
  EXPECT_EQ(seen.flushes, 1);
  ASSERT_EQ(seen.cells.size(), 5000u);
  ASSERT_TRUE(PutN(&sink, 5000, 7000).ok());
  ASSERT_TRUE(sink.Sync().ok());
  EXPECT_EQ(seen.syncs, 1);
  ASSERT_TRUE(PutN(&sink, 7000, 7003).ok());
  ASSERT_TRUE(sink.Close().ok());
  EXPECT_EQ(seen.closes, 1);
  ASSERT_EQ(seen.cells.size(), 7003u);
  for (int i = 0; i < 7003; ++i) ASSERT_EQ(seen.cells[i], Want(i)) << i;
  EXPECT_EQ(sink.stats().cells, 7003u);
  // The work was shared: some cells came from another thread.
  size_t other = 0;
  for (const auto& t : seen.threads) other += t != std::this_thread::get_id();
  EXPECT_GT(other, 0u);
  EXPECT_LT(other, seen.threads.size());  // the last, partial batch: the caller's
}

// An error of the inner Put comes back from a later call of the caller, and
// no cell after the refused one is handed on; Close still closes the inner sink.
TEST(PipelineSinkTest, InnerErrorStopsTheStream) {
  for (size_t fail_at : {1u, 37u, 2500u, 4999u}) {
    Seen seen;
    PipelineSink sink(std::make_unique<Inner>(&seen, fail_at), 512);
    Status put = PutN(&sink, 0, 5000);
    Status flushed = put.ok() ? sink.Flush() : put;
    EXPECT_EQ(flushed.code(), StatusCode::kInvalidArgument) << fail_at;
    EXPECT_NE(flushed.message().find("cell refused"), std::string::npos);
    EXPECT_EQ(seen.flushes, 0);  // the error stops Flush before the inner one
    Status closed = sink.Close();
    EXPECT_EQ(closed.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(seen.closes, 1);
    EXPECT_EQ(seen.cells.size(), fail_at) << "cells after the refused one";
  }
}

// Destroyed without Close (the caller gave up after an error): the worker
// stops, and what it was handed was put, in order.
TEST(PipelineSinkTest, DestroyedWithoutClose) {
  Seen seen;
  {
    PipelineSink sink(std::make_unique<Inner>(&seen, 0), 256);
    ASSERT_TRUE(PutN(&sink, 0, 3000).ok());
  }
  EXPECT_EQ(seen.closes, 0);
  ASSERT_LE(seen.cells.size(), 3000u);
  EXPECT_GT(seen.cells.size(), 0u);
  for (size_t i = 0; i < seen.cells.size(); ++i) ASSERT_EQ(seen.cells[i], Want(int(i)));
}

}  // namespace
}  // namespace widen
