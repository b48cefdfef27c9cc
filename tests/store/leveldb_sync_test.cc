// The embedded store's Sync against a simulated crash of the machine
// (tests/store/crash_env.h: what was not synced is lost): cells a sink only
// flushed through LevelDB's write path are gone, cells it synced are all
// there — also when LevelDB switched logs while they were written (the log
// it left was closed unsynced), and a state Put after Sync finds its cells;
// the same of a RowWriter (what sync writes through). Each test runs with
// the sink writing table files directly (StoreOptions::write_table_files)
// and through LevelDB's write path.
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

class LevelDbSyncTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "widen_sync_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/store";
    StoreOptions options;
    options.write_table_files = GetParam();
    Result<std::unique_ptr<LevelDbStore>> r = LevelDbStore::Open(path_, options, crash_.env());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    store_ = std::move(r).value();
    CreateTable("t");
  }

  // Creates table `name` with one family, d.
  void CreateTable(const std::string& name) {
    TableDescriptor d;
    d.table = name;
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

  // Puts `n` cells of `value_bytes` each into `table` through one sink and
  // returns it (not closed).
  std::unique_ptr<CellSink> Write(int n, size_t value_bytes, const std::string& table = "t") {
    Result<std::unique_ptr<CellSink>> sink = store_->NewSink(table);
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

  // Replaces rows r<first>..r<first+n-1> of table t, one cell of
  // `value_bytes` each, through `w` (not synced).
  void ReplaceRows(RowWriter* w, int first, int n, size_t value_bytes) {
    const std::string value(value_bytes, 'w');
    char row[16];
    for (int i = first; i < first + n; ++i) {
      std::snprintf(row, sizeof row, "r%08d", i);
      CellBatch b;
      b.Add(row, "d", "q", 1, value);
      Status s = w->ReplaceRow(row, b, "digest");
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
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

// Flush hands the cells to LevelDB (a reader sees them). Through LevelDB's
// write path that does not make them durable: a crash loses them, which is
// why Flush is not Sync. Table files are synced before the database lists
// them: there the cells a Flush wrote survive.
TEST_P(LevelDbSyncTest, FlushedCellsAreLostInACrashUnlessWrittenAsTableFiles) {
  std::unique_ptr<CellSink> sink = Write(1000, 100);
  ASSERT_TRUE(sink->Flush().ok());
  Result<std::unique_ptr<CellReader>> reader = store_->NewReader("t", ReadOptions());
  ASSERT_TRUE(reader.ok());
  int64_t visible = 0;
  for (; (*reader)->Valid(); (*reader)->Next()) ++visible;
  EXPECT_EQ(visible, 1000);
  EXPECT_EQ(CellsAfterCrash(), GetParam() ? 1000 : 0);
}

TEST_P(LevelDbSyncTest, SyncedCellsSurviveACrash) {
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
TEST_P(LevelDbSyncTest, SyncedCellsSurviveACrashAfterLevelDbSwitchedLogs) {
  std::unique_ptr<CellSink> sink = Write(5000, 8000);
  ASSERT_TRUE(sink->Sync().ok());
  EXPECT_EQ(CellsAfterCrash(), 5000);
}

// The order a state needs: cells synced, then the state Put (itself
// durable when Put returns).
TEST_P(LevelDbSyncTest, AStatePutAfterSyncFindsItsCellsAfterACrash) {
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

// A RowWriter (what sync writes through) as a sink: rows it only flushed
// are lost in a crash, rows it synced are all there. Without a log switch
// its Sync is one synced write; the tests below switch logs in each way.
TEST_P(LevelDbSyncTest, RowsARowWriterSyncedSurviveACrash) {
  Result<std::unique_ptr<RowWriter>> w = store_->NewRowWriter("t");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ReplaceRows(w->get(), 0, 1000, 100);
  ASSERT_TRUE((*w)->Flush().ok());
  EXPECT_EQ(CellsAfterCrash(), 0);
  ASSERT_TRUE((*w)->Sync().ok());
  EXPECT_EQ(CellsAfterCrash(), 1000);
  ReplaceRows(w->get(), 1000, 1, 100);
  ASSERT_TRUE((*w)->Sync().ok());
  EXPECT_EQ(CellsAfterCrash(), 1001);
}

// 40 MB of rows: LevelDB switched logs while the writer wrote them.
TEST_P(LevelDbSyncTest, RowsARowWriterSyncedSurviveACrashAfterItsWritesSwitchedLogs) {
  Result<std::unique_ptr<RowWriter>> w = store_->NewRowWriter("t");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ReplaceRows(w->get(), 0, 5000, 8000);
  ASSERT_TRUE((*w)->Sync().ok());
  EXPECT_EQ(CellsAfterCrash(), 5000);
}

// The writer's rows went to a log that another writer's 40 MB (a sink of
// table u, never synced) then made LevelDB close, unsynced: Sync still
// makes the rows durable (whether LevelDB's background work has written
// that memtable out by then or not).
TEST_P(LevelDbSyncTest, RowsARowWriterSyncedSurviveACrashAfterAnotherWriterSwitchedLogs) {
  CreateTable("u");
  Result<std::unique_ptr<RowWriter>> w = store_->NewRowWriter("t");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ReplaceRows(w->get(), 0, 1000, 100);
  ASSERT_TRUE((*w)->Flush().ok());
  std::unique_ptr<CellSink> sink = Write(5000, 8000, "u");
  ASSERT_TRUE(sink->Flush().ok());
  ASSERT_TRUE((*w)->Sync().ok());
  EXPECT_EQ(CellsAfterCrash(), 1000);
}

// A sync's order: a state Put, rows replaced and synced, a state Put: the
// rows and the last state are there after a crash.
TEST_P(LevelDbSyncTest, StatePutsAroundARowWritersSyncFindTheirRowsAfterACrash) {
  Result<std::unique_ptr<StateStore>> states = store_->NewStateStore();
  ASSERT_TRUE(states.ok());
  TableState running;
  running.status = TableStatus::kLoading;
  ASSERT_TRUE((*states)->Put("t", std::nullopt, running).ok());
  Result<std::unique_ptr<RowWriter>> w = store_->NewRowWriter("t");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ReplaceRows(w->get(), 0, 2000, 100);
  ASSERT_TRUE((*w)->Sync().ok());
  TableState done;
  done.status = TableStatus::kComplete;
  Result<std::optional<TableState>> now = (*states)->Get("t");
  ASSERT_TRUE(now.ok() && now->has_value());
  ASSERT_TRUE((*states)->Put("t", (*now)->version, done).ok());
  EXPECT_EQ(CellsAfterCrash(), 2000);
  Result<std::unique_ptr<StateStore>> after = last_copy_->NewStateStore();
  ASSERT_TRUE(after.ok());
  Result<std::optional<TableState>> got = (*after)->Get("t");
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status().ToString();
  EXPECT_EQ((*got)->status, TableStatus::kComplete);
}

INSTANTIATE_TEST_SUITE_P(Sinks, LevelDbSyncTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "TableFiles" : "WritePath";
                         });

}  // namespace
}  // namespace widen
