// The embedded store's Sync against a simulated crash of the machine
// (tests/store/crash_env.h: what was not synced is lost): cells a sink only
// flushed are gone, cells it synced are all there — also when LevelDB
// switched logs while they were written (the log it left was closed
// unsynced), and a state Put after Sync finds its cells.
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "store/leveldb_store.h"
#include "store/state_store.h"
#include "tests/store/crash_env.h"

namespace widen {
namespace {

class LevelDbSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "widen_sync_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/store";
    Result<std::unique_ptr<LevelDbStore>> r =
        LevelDbStore::Open(path_, StoreOptions(), crash_.env());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    store_ = std::move(r).value();
    TableDescriptor d;
    d.table = "t";
    FamilyDescriptor f;
    f.name = "d";
    d.families = {f};
    ASSERT_TRUE(store_->CreateTable(d).ok());
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Puts `n` cells of `value_bytes` each into table t through one sink and
  // returns it (not closed).
  std::unique_ptr<CellSink> Write(int n, size_t value_bytes) {
    Result<std::unique_ptr<CellSink>> sink = store_->NewSink("t");
    EXPECT_TRUE(sink.ok()) << sink.status().ToString();
    const std::string value(value_bytes, 'v');
    char row[16];
    for (int i = 0; i < n; ++i) {
      std::snprintf(row, sizeof row, "r%08d", i);
      Status s = (*sink)->Put(CellView{row, "d", "q", 1, CellType::kPut, value});
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    return std::move(sink).value();
  }

  // Opens what a crash now would leave of the store, and counts the cells
  // of table t (-1 when the copy does not open or read).
  int64_t CellsAfterCrash() {
    const std::string copy = dir_ + "/after-crash-" + std::to_string(++crashes_);
    std::string error;
    EXPECT_TRUE(crash_.CopyAfterCrash(path_, copy, &error)) << error;
    StoreOptions o;
    o.create_if_missing = false;
    Result<std::unique_ptr<LevelDbStore>> r = LevelDbStore::Open(copy, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return -1;
    Result<std::unique_ptr<CellReader>> reader = (*r)->NewReader("t", ReadOptions());
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    if (!reader.ok()) return -1;
    int64_t n = 0;
    for (; (*reader)->Valid(); (*reader)->Next()) ++n;
    EXPECT_TRUE((*reader)->status().ok()) << (*reader)->status().ToString();
    last_copy_ = std::move(r).value();
    return n;
  }

  testing::CrashEnv crash_;  // outlives store_ (declared first)
  std::string dir_;
  std::string path_;
  std::unique_ptr<LevelDbStore> store_;
  std::unique_ptr<LevelDbStore> last_copy_;
  int crashes_ = 0;
};

// Flush hands the cells to LevelDB (a reader sees them) but does not make
// them durable: a crash loses them. This is why Flush is not Sync.
TEST_F(LevelDbSyncTest, FlushedCellsAreLostInACrash) {
  std::unique_ptr<CellSink> sink = Write(1000, 100);
  ASSERT_TRUE(sink->Flush().ok());
  Result<std::unique_ptr<CellReader>> reader = store_->NewReader("t", ReadOptions());
  ASSERT_TRUE(reader.ok());
  int64_t visible = 0;
  for (; (*reader)->Valid(); (*reader)->Next()) ++visible;
  EXPECT_EQ(visible, 1000);
  EXPECT_EQ(CellsAfterCrash(), 0);
}

TEST_F(LevelDbSyncTest, SyncedCellsSurviveACrash) {
  std::unique_ptr<CellSink> sink = Write(1000, 100);
  ASSERT_TRUE(sink->Sync().ok());
  EXPECT_EQ(CellsAfterCrash(), 1000);
  // And the sink goes on: more cells, synced again.
  ASSERT_TRUE(sink->Put(CellView{"s", "d", "q", 1, CellType::kPut, "v"}).ok());
  ASSERT_TRUE(sink->Close().ok());
  EXPECT_EQ(CellsAfterCrash(), 1001);
}

// 40 MB of cells fill LevelDB's 16 MiB memtable twice over: it switched
// logs twice, closing each unsynced; Sync still makes every cell durable.
TEST_F(LevelDbSyncTest, SyncedCellsSurviveACrashAfterLevelDbSwitchedLogs) {
  std::unique_ptr<CellSink> sink = Write(5000, 8000);
  ASSERT_TRUE(sink->Sync().ok());
  EXPECT_EQ(CellsAfterCrash(), 5000);
}

// The order a state needs: cells synced, then the state Put (itself
// durable when Put returns).
TEST_F(LevelDbSyncTest, AStatePutAfterSyncFindsItsCellsAfterACrash) {
  std::unique_ptr<CellSink> sink = Write(2000, 100);
  ASSERT_TRUE(sink->Sync().ok());
  Result<std::unique_ptr<StateStore>> states = store_->NewStateStore();
  ASSERT_TRUE(states.ok());
  TableState done;
  done.status = TableStatus::kComplete;
  ASSERT_TRUE((*states)->Put("t", std::nullopt, done).ok());
  EXPECT_EQ(CellsAfterCrash(), 2000);
  Result<std::unique_ptr<StateStore>> after = last_copy_->NewStateStore();
  ASSERT_TRUE(after.ok());
  Result<std::optional<TableState>> got = (*after)->Get("t");
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status().ToString();
  EXPECT_EQ((*got)->status, TableStatus::kComplete);
}

}  // namespace
}  // namespace widen
