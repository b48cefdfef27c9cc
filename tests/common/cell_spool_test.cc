#include "common/cell_spool.h"

#include <atomic>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace widen {
namespace {

struct Owned {
  std::string row, family, qualifier, value;
  int64_t ts;
  CellType type;
  bool operator==(const Owned& o) const {
    return row == o.row && family == o.family && qualifier == o.qualifier && value == o.value &&
           ts == o.ts && type == o.type;
  }
};

// Keeps every cell put, owned.
class Collect : public CellSink {
 public:
  std::vector<Owned> cells;
  Status Put(const CellView& c) override {
    cells.push_back(Owned{std::string(c.row), std::string(c.family), std::string(c.qualifier),
                          std::string(c.value), c.timestamp_ms, c.type});
    return cells.size() == fail_at ? Status::InvalidArgument("refused") : Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  const SinkStats& stats() const override { return stats_; }
  size_t fail_at = 0;  // 1-based; 0 = never

 private:
  SinkStats stats_;
};

std::string RandomBytes(std::mt19937* rng, size_t max) {
  std::string s(std::uniform_int_distribution<size_t>(0, max)(*rng), '\0');
  for (char& c : s) c = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(*rng));
  return s;
}

// Cells with any bytes (0x00, 0xff, empty parts), every type and extreme
// timestamps come back exactly, in the order put — not sorted — and more
// than the 1 MiB buffer holds.
TEST(CellSpoolTest, ReplaysEveryCellInTheOrderPut) {
  auto spool = CellSpool::Open();
  ASSERT_TRUE(spool.ok()) << spool.status().ToString();
  std::mt19937 rng(7);
  std::vector<Owned> want;
  const CellType types[] = {CellType::kPut, CellType::kDelete, CellType::kDeleteColumn,
                            CellType::kDeleteFamily};
  const int64_t stamps[] = {0, -1, INT64_MIN, INT64_MAX, 1700000000000};
  uint64_t bytes = 0;
  for (int i = 0; i < 20000; ++i) {
    Owned c{RandomBytes(&rng, 40), RandomBytes(&rng, 3),
            RandomBytes(&rng, 20), RandomBytes(&rng, i % 100 == 0 ? 70000 : 60),
            stamps[i % 5],         types[i % 4]};
    bytes += c.row.size() + c.family.size() + c.qualifier.size() + c.value.size();
    ASSERT_TRUE((*spool)->Put(CellView{c.row, c.family, c.qualifier, c.ts, c.type, c.value}).ok());
    want.push_back(std::move(c));
  }
  EXPECT_EQ((*spool)->stats().cells, want.size());
  EXPECT_EQ((*spool)->stats().bytes, bytes);
  Collect out;
  ASSERT_TRUE((*spool)->Replay(&out, nullptr).ok());
  ASSERT_EQ(out.cells.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_TRUE(out.cells[i] == want[i]) << "cell " << i;

  // Replayable again, after more cells.
  ASSERT_TRUE((*spool)->Put(CellView{"z", "d", "q", 1, CellType::kPut, "v"}).ok());
  Collect again;
  ASSERT_TRUE((*spool)->Replay(&again, nullptr).ok());
  ASSERT_EQ(again.cells.size(), want.size() + 1);
  EXPECT_EQ(again.cells.back().row, "z");
}

TEST(CellSpoolTest, ReplayStopsAtTheSinksErrorAndOnCancel) {
  auto spool = CellSpool::Open();
  ASSERT_TRUE(spool.ok());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(
        (*spool)->Put(CellView{"r" + std::to_string(i), "d", "q", 1, CellType::kPut, ""}).ok());
  }
  Collect refusing;
  refusing.fail_at = 3;
  EXPECT_EQ((*spool)->Replay(&refusing, nullptr).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refusing.cells.size(), 3u);
  std::atomic<bool> cancel{true};
  Collect cancelled;
  EXPECT_EQ((*spool)->Replay(&cancelled, &cancel).code(), StatusCode::kCancelled);
  EXPECT_TRUE(cancelled.cells.empty());
}

// A local file that cannot be written is LocalIo (exit 11), never a server's
// Unavailable (exit 3).
TEST(CellSpoolTest, AMissingDirectoryIsLocalIoNamingTheFile) {
  auto spool = CellSpool::Open("/nonexistent-widen-dir");
  ASSERT_FALSE(spool.ok());
  EXPECT_EQ(spool.status().code(), StatusCode::kLocalIo);
  EXPECT_NE(spool.status().message().find("No such file or directory"), std::string::npos)
      << spool.status().message();
  EXPECT_NE(spool.status().message().find("/nonexistent-widen-dir/widen-spool-"), std::string::npos)
      << spool.status().message();
}

}  // namespace
}  // namespace widen
