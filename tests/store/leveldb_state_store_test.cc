// LevelDbStore's StateStore against a real LevelDB database in a temporary
// directory: the state survives reopening, compare-and-set lets one writer
// of two win, and the key and value bytes are the layout drawn in
// store/leveldb_store.h (tag 0x03) and store/state_store.h.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <leveldb/db.h>
#include <leveldb/options.h>

#include "store/leveldb_store.h"
#include "store/state_store.h"
#include "store/table_state.h"

namespace widen {
namespace {

using namespace std::string_literals;

class LevelDbStateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "widen_state_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/store";
    Open();
  }
  void TearDown() override {
    states_.reset();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void Open() {
    states_.reset();
    store_.reset();
    Result<std::unique_ptr<LevelDbStore>> r = LevelDbStore::Open(path_, StoreOptions());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    store_ = std::move(r).value();
    Result<std::unique_ptr<StateStore>> s = store_->NewStateStore();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    states_ = std::move(s).value();
  }

  void Close() {
    states_.reset();
    store_.reset();
  }

  static TableState State(TableStatus status, std::string run_id) {
    TableState s;
    s.status = status;
    s.run_id = std::move(run_id);
    s.started_ms = 1700000000000;
    return s;
  }

  std::string dir_;
  std::string path_;
  std::unique_ptr<LevelDbStore> store_;
  std::unique_ptr<StateStore> states_;
};

TEST_F(LevelDbStateStoreTest, AStoreWithoutStatesHasNoneAndUnknownTablesNeither) {
  Result<std::optional<TableState>> got = states_->Get("ns:t");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_FALSE(got->has_value());
  Result<std::vector<std::pair<std::string, TableState>>> all = states_->List();
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());
}

TEST_F(LevelDbStateStoreTest, EveryFieldRoundTripsAndSurvivesReopening) {
  TableState want = State(TableStatus::kComplete, "run-1");
  want.finished_ms = 1700000009999;
  want.mapping_fingerprint = "\x00\x9f\xff"s;
  want.watermarks.push_back(Watermark{
      "public.orders",
      {"updated_at", "id"},
      {Value::Temporal(ValueType::kTimestamp, -86400000000), Value::Null(ValueType::kInt)}});
  FinishedRange r;
  r.source_table = "public.orders";
  r.columns = {"id"};
  r.has_lo = true;
  r.lo = {Value::Int(-7)};
  r.has_hi = true;
  r.hi = {Value::Int(100)};
  want.finished_ranges.push_back(r);
  want.extensions["x"] = "\x00"s;
  Result<uint64_t> v = states_->Put("ns:t", std::nullopt, want);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, 1u);

  Close();
  Open();
  Result<std::optional<TableState>> got = states_->Get("ns:t");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  const TableState& s = **got;
  EXPECT_EQ(s.version, 1u);
  EXPECT_EQ(s.status, TableStatus::kComplete);
  EXPECT_EQ(s.run_id, "run-1");
  EXPECT_EQ(s.started_ms, 1700000000000);
  EXPECT_EQ(s.finished_ms, 1700000009999);
  EXPECT_EQ(s.mapping_fingerprint, "\x00\x9f\xff"s);
  ASSERT_EQ(s.watermarks.size(), 1u);
  EXPECT_EQ(s.watermarks[0].source_table, "public.orders");
  EXPECT_EQ(s.watermarks[0].columns, (std::vector<std::string>{"updated_at", "id"}));
  ASSERT_EQ(s.watermarks[0].values.size(), 2u);
  EXPECT_EQ(s.watermarks[0].values[0].type(), ValueType::kTimestamp);
  EXPECT_EQ(s.watermarks[0].values[0].as_int(), -86400000000);
  EXPECT_TRUE(s.watermarks[0].values[1].is_null());
  EXPECT_EQ(s.watermarks[0].values[1].type(), ValueType::kInt);
  ASSERT_EQ(s.finished_ranges.size(), 1u);
  EXPECT_EQ(s.finished_ranges[0].lo[0].as_int(), -7);
  EXPECT_EQ(s.finished_ranges[0].hi[0].as_int(), 100);
  EXPECT_FALSE(s.finished_ranges[0].with_null);
  EXPECT_EQ(s.extensions.at("x"), "\x00"s);
}

// Put and Delete compare the version they are given with the one stored;
// a mismatch changes nothing and is Aborted.
TEST_F(LevelDbStateStoreTest, CompareAndSetRefusesAStaleVersion) {
  ASSERT_EQ(states_->Put("t", std::nullopt, State(TableStatus::kLoading, "a")).value(), 1u);
  // Absent was expected: another run recorded it first.
  Result<uint64_t> again = states_->Put("t", std::nullopt, State(TableStatus::kLoading, "b"));
  EXPECT_EQ(again.status().code(), StatusCode::kAborted);
  EXPECT_NE(again.status().message().find("the state of table 't'"), std::string::npos)
      << again.status().message();
  EXPECT_NE(again.status().message().find("is at version 1, not absent"), std::string::npos)
      << again.status().message();
  ASSERT_EQ(states_->Put("t", 1, State(TableStatus::kComplete, "a")).value(), 2u);
  Result<uint64_t> stale = states_->Put("t", 1, State(TableStatus::kFailed, "b"));
  EXPECT_EQ(stale.status().code(), StatusCode::kAborted);
  EXPECT_NE(stale.status().message().find("is at version 2, not at version 1"), std::string::npos)
      << stale.status().message();
  EXPECT_EQ(states_->Put("t", 3, State(TableStatus::kFailed, "b")).status().code(),
            StatusCode::kAborted);
  EXPECT_EQ(states_->Delete("t", 1).code(), StatusCode::kAborted);
  // Nothing of the refused writes is stored.
  Result<std::optional<TableState>> got = states_->Get("t");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->version, 2u);
  EXPECT_EQ((*got)->status, TableStatus::kComplete);
  EXPECT_EQ((*got)->run_id, "a");
  // A version for a table with no state is refused too.
  EXPECT_EQ(states_->Put("other", 1, State(TableStatus::kLoading, "a")).status().code(),
            StatusCode::kAborted);
  EXPECT_EQ(states_->Delete("other", 0).code(), StatusCode::kAborted);
}

// Writers on several threads and StateStores of one store, each reading
// the state and putting it back one version on: exactly one of them wins
// each version, so the final version counts every win.
TEST_F(LevelDbStateStoreTest, OfWritersThatReadTheSameVersionOneWins) {
  ASSERT_TRUE(states_->Put("t", std::nullopt, State(TableStatus::kLoading, "w")).ok());
  constexpr int kThreads = 8;
  constexpr int kRounds = 50;
  std::atomic<int> wins{0};
  std::atomic<int> conflicts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Result<std::unique_ptr<StateStore>> mine = store_->NewStateStore();
      ASSERT_TRUE(mine.ok());
      for (int i = 0; i < kRounds; ++i) {
        Result<std::optional<TableState>> got = (*mine)->Get("t");
        ASSERT_TRUE(got.ok() && got->has_value());
        TableState next = **got;
        next.run_id = "w" + std::to_string(t);
        Result<uint64_t> v = (*mine)->Put("t", (*got)->version, next);
        if (v.ok()) {
          ASSERT_EQ(*v, (*got)->version + 1);
          ++wins;
        } else {
          ASSERT_EQ(v.status().code(), StatusCode::kAborted) << v.status().ToString();
          ++conflicts;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wins + conflicts, kThreads * kRounds);
  EXPECT_GT(wins.load(), 0);
  Result<std::optional<TableState>> got = states_->Get("t");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->version, 1u + static_cast<uint64_t>(wins.load()));
}

// Delete leaves a tombstone: the state is gone, its version is not, so a
// version handed out before never comes back.
TEST_F(LevelDbStateStoreTest, DeleteLeavesATombstoneAndVersionsKeepGrowing) {
  ASSERT_EQ(states_->Put("t", std::nullopt, State(TableStatus::kComplete, "a")).value(), 1u);
  ASSERT_TRUE(states_->Delete("t", 1).ok());
  Result<std::optional<TableState>> got = states_->Get("t");
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
  EXPECT_TRUE(states_->List()->empty());
  EXPECT_EQ(states_->Delete("t", 2).code(), StatusCode::kAborted);  // nothing to delete
  EXPECT_EQ(states_->Put("t", 2, State(TableStatus::kLoading, "b")).status().code(),
            StatusCode::kAborted);  // absent: expect nullopt
  Result<uint64_t> v = states_->Put("t", std::nullopt, State(TableStatus::kLoading, "b"));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, 3u);
}

// "default:t" and "t" name one table; List orders by name and skips
// tombstones; the tables and cells of the store are unaffected.
TEST_F(LevelDbStateStoreTest, NamesAreCanonicalAndListIsOrdered) {
  TableDescriptor d;
  d.table = "t";
  FamilyDescriptor f;
  f.name = "d";
  d.families = {f};
  ASSERT_TRUE(store_->CreateTable(d).ok());
  ASSERT_TRUE(states_->Put("default:t", std::nullopt, State(TableStatus::kLoading, "1")).ok());
  ASSERT_TRUE(states_->Put("zz:b", std::nullopt, State(TableStatus::kFailed, "2")).ok());
  ASSERT_TRUE(states_->Put("a", std::nullopt, State(TableStatus::kComplete, "3")).ok());
  ASSERT_TRUE(states_->Put("gone", std::nullopt, State(TableStatus::kComplete, "4")).ok());
  ASSERT_TRUE(states_->Delete("gone", 1).ok());
  Result<std::optional<TableState>> got = states_->Get("t");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->run_id, "1");
  Result<std::vector<std::pair<std::string, TableState>>> all = states_->List();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::vector<std::string> names;
  for (const auto& [name, state] : *all) {
    names.push_back(name);
    EXPECT_EQ(state.version, 1u);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a", "t", "zz:b"}));
  Result<std::vector<TableDescriptor>> tables = store_->ListTables();
  ASSERT_TRUE(tables.ok());
  ASSERT_EQ(tables->size(), 1u);
  EXPECT_EQ((*tables)[0].FullName(), "t");
}

// The key is 0x03 + the table's full name; the value the version (8 bytes,
// big-endian) and the state record; a tombstone is the version alone.
TEST_F(LevelDbStateStoreTest, KeyAndValueBytesAreTheDrawnLayout) {
  TableState s = State(TableStatus::kComplete, "r");
  ASSERT_EQ(states_->Put("ns:t", std::nullopt, s).value(), 1u);
  ASSERT_EQ(states_->Put("ns:t", 1, s).value(), 2u);
  ASSERT_TRUE(states_->Put("u", std::nullopt, s).ok());
  ASSERT_TRUE(states_->Delete("u", 1).ok());
  const std::string record = EncodeTableState(s).value();
  Close();

  leveldb::DB* raw = nullptr;
  ASSERT_TRUE(leveldb::DB::Open(leveldb::Options(), path_, &raw).ok());
  std::unique_ptr<leveldb::DB> db(raw);
  std::string value;
  ASSERT_TRUE(db->Get(leveldb::ReadOptions(), "\x03ns:t", &value).ok());
  EXPECT_EQ(value, "\x00\x00\x00\x00\x00\x00\x00\x02"s + record);
  ASSERT_TRUE(db->Get(leveldb::ReadOptions(), "\x03u", &value).ok());
  EXPECT_EQ(value, "\x00\x00\x00\x00\x00\x00\x00\x02"s);
  // Nothing else was written under the tag.
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator(leveldb::ReadOptions()));
  std::vector<std::string> keys;
  for (it->Seek("\x03"); it->Valid() && it->key()[0] == '\x03'; it->Next()) {
    keys.push_back(it->key().ToString());
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"\x03ns:t", "\x03u"}));
}

TEST_F(LevelDbStateStoreTest, AMalformedStateIsDataLoss) {
  Close();
  {
    leveldb::DB* raw = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(leveldb::Options(), path_, &raw).ok());
    std::unique_ptr<leveldb::DB> db(raw);
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(), "\x03short", "\x01\x02").ok());
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(),
                        "\x03"
                        "cut",
                        "\x00\x00\x00\x00\x00\x00\x00\x01\x01"s)
                    .ok());
  }
  Open();
  Result<std::optional<TableState>> got = states_->Get("short");
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(got.status().message().find("shorter than its version"), std::string::npos)
      << got.status().message();
  got = states_->Get("cut");
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(got.status().message().find("table 'cut'"), std::string::npos)
      << got.status().message();
  EXPECT_EQ(states_->List().status().code(), StatusCode::kDataLoss);
}

TEST_F(LevelDbStateStoreTest, AClosedStoreGivesNoStateStore) {
  ASSERT_TRUE(store_->Close().ok());
  EXPECT_EQ(store_->NewStateStore().status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace widen
