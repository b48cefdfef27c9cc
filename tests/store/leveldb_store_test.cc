// LevelDbStore against a real LevelDB database in a temporary directory.
#include "store/leveldb_store.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <leveldb/db.h>
#include <leveldb/options.h>

#include "common/bytes.h"
#include "common/cell.h"
#include "store/state_store.h"
#include "store/store.h"
#include "store/table_state.h"
#include "tests/store/compaction_race_env.h"

namespace widen {
namespace {

// A cell with owned bytes, for expectations.
struct Cell {
  std::string row;
  std::string family;
  std::string qualifier;
  int64_t timestamp_ms = 0;
  std::string value;
  CellType type = CellType::kPut;

  CellView View() const { return CellView{row, family, qualifier, timestamp_ms, type, value}; }
  bool operator==(const Cell& o) const {
    return row == o.row && family == o.family && qualifier == o.qualifier &&
           timestamp_ms == o.timestamp_ms && value == o.value && type == o.type;
  }
};

std::ostream& operator<<(std::ostream& os, const Cell& c) {
  return os << "{" << ToStringBinary(c.row) << " " << c.family << ":" << ToStringBinary(c.qualifier)
            << " @" << c.timestamp_ms << " type " << static_cast<int>(c.type) << " = "
            << ToStringBinary(c.value) << "}";
}

Cell Put(std::string row, std::string family, std::string qualifier, int64_t ts,
         std::string value = "v") {
  return Cell{std::move(row),   std::move(family), std::move(qualifier), ts,
              std::move(value), CellType::kPut};
}

Cell Marker(CellType type, std::string row, std::string family, std::string qualifier, int64_t ts) {
  return Cell{std::move(row), std::move(family), std::move(qualifier), ts, "", type};
}

std::string B(const char* s, size_t n) { return std::string(s, n); }

FamilyDescriptor Family(std::string name, int versions = 1, int64_t ttl_seconds = 0,
                        int min_versions = 0) {
  FamilyDescriptor f;
  f.name = std::move(name);
  f.versions = versions;
  f.ttl_seconds = ttl_seconds;
  f.min_versions = min_versions;
  return f;
}

TableDescriptor Table(const std::string& full_name, std::vector<FamilyDescriptor> families) {
  TableDescriptor d;
  SplitTableName(full_name, &d.name_space, &d.table);
  d.families = std::move(families);
  return d;
}

class LevelDbStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "widen_store_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/store";
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  LevelDbStore* OpenStore(StoreOptions options = StoreOptions()) {
    store_.reset();
    Result<std::unique_ptr<LevelDbStore>> r = LevelDbStore::Open(path_, options);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return nullptr;
    store_ = std::move(r).value();
    return store_.get();
  }

  void Create(const TableDescriptor& d) {
    Status s = store_->CreateTable(d);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void Write(const std::string& table, const std::vector<Cell>& cells) {
    Result<std::unique_ptr<CellSink>> sink = store_->NewSink(table);
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    for (const Cell& c : cells) {
      Status s = (*sink)->Put(c.View());
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    Status s = (*sink)->Close();
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ((*sink)->stats().cells, cells.size());
  }

  std::vector<Cell> Read(const std::string& table, ReadOptions options = ReadOptions()) {
    std::vector<Cell> out;
    Result<std::unique_ptr<CellReader>> r = store_->NewReader(table, options);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return out;
    CellReader* reader = r->get();
    for (; reader->Valid(); reader->Next()) {
      CellView c = reader->cell();
      out.push_back(Cell{std::string(c.row), std::string(c.family), std::string(c.qualifier),
                         c.timestamp_ms, std::string(c.value), c.type});
    }
    EXPECT_TRUE(reader->status().ok()) << reader->status().ToString();
    return out;
  }

  static ReadOptions Versions(int n, int64_t now_ms = 0) {
    ReadOptions o;
    o.max_versions = n;
    o.now_ms = now_ms;
    return o;
  }

  static std::vector<std::string> Rows(const std::vector<Cell>& cells) {
    std::vector<std::string> rows;
    for (const Cell& c : cells) {
      if (rows.empty() || rows.back() != c.row) rows.push_back(c.row);
    }
    return rows;
  }

  static std::vector<int64_t> Timestamps(const std::vector<Cell>& cells) {
    std::vector<int64_t> ts;
    for (const Cell& c : cells) ts.push_back(c.timestamp_ms);
    return ts;
  }

  std::string dir_;
  std::string path_;
  std::unique_ptr<LevelDbStore> store_;
};

TEST_F(LevelDbStoreTest, RoundTripSeveralTables) {
  StoreOptions options;
  options.batch_bytes = 64;  // many small batches
  ASSERT_NE(OpenStore(options), nullptr);
  Create(Table("a", {Family("d", 3), Family("e", 3)}));
  Create(Table("ns1:a", {Family("d")}));
  Create(Table("a.b", {Family("d")}));

  // Rows that are prefixes of each other, contain 0x00 and 0xFF; empty and
  // binary qualifiers; values with zero bytes; negative and huge timestamps.
  std::vector<Cell> cells = {
      Put("a", "d", "q", 1, "a1"),
      Put("ab", "d", "q", 1, "ab1"),
      Put(B("a\x00", 2), "d", "q", 1, B("nul\x00", 4)),
      Put(B("a\x00\xff", 3), "d", "", 1, "empty-qualifier"),
      Put(B("a\x00\x00", 3), "d", B("\x00", 1), -5, "neg"),
      Put(B("\xff", 1), "d", B("q\xff\x00", 3), INT64_MAX, "max"),
      Put(B("\x00", 1), "e", "q", INT64_MIN, "min"),
      Put("a", "e", "", 7, "e-empty"),
      Put("a", "d", "q", 2, "a2"),
      Put("a", "d", "qq", 1, "a-qq"),
      Put("a", "d", B("q\x00", 2), 1, "a-q0"),
  };
  std::vector<Cell> shuffled = cells;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(42));
  Write("a", shuffled);
  Write("ns1:a", {Put("a", "d", "q", 1, "other table")});
  Write("a.b", {Put("zz", "d", "q", 1, "third table")});

  std::vector<Cell> want = cells;
  std::sort(want.begin(), want.end(),
            [](const Cell& x, const Cell& y) { return CompareCells(x.View(), y.View()) < 0; });
  EXPECT_EQ(Read("a", Versions(3)), want);
  EXPECT_EQ(Read("default:a", Versions(3)), want);
  EXPECT_EQ(Read("ns1:a"), (std::vector<Cell>{Put("a", "d", "q", 1, "other table")}));
  EXPECT_EQ(Read("a.b"), (std::vector<Cell>{Put("zz", "d", "q", 1, "third table")}));
}

TEST_F(LevelDbStoreTest, ReadsRandomCellsBackInHBaseOrder) {
  StoreOptions options;
  options.batch_bytes = 4096;
  ASSERT_NE(OpenStore(options), nullptr);
  Create(Table("t", {Family("d", 1000), Family("e", 1000)}));
  std::mt19937_64 rng(5);
  auto bytes = [&](size_t max) {
    std::string s(rng() % (max + 1), '\0');
    for (char& c : s) {
      const uint64_t r = rng() % 4;
      c = r == 0 ? '\x00' : r == 1 ? '\xff' : static_cast<char>(rng() % 256);
    }
    return s;
  };
  std::vector<Cell> cells;
  std::vector<Cell> distinct;
  for (int i = 0; i < 3000; ++i) {
    Cell c = Put("r" + bytes(3), rng() % 2 ? "d" : "e", bytes(2),
                 static_cast<int64_t>(rng() % 7) - 3, bytes(5));
    cells.push_back(c);
  }
  // Later puts of the same coordinates replace earlier ones (same key).
  for (const Cell& c : cells) {
    auto same = [&](const Cell& o) { return CompareCells(o.View(), c.View()) == 0; };
    auto it = std::find_if(distinct.begin(), distinct.end(), same);
    if (it == distinct.end()) {
      distinct.push_back(c);
    } else {
      *it = c;
    }
  }
  std::sort(distinct.begin(), distinct.end(),
            [](const Cell& x, const Cell& y) { return CompareCells(x.View(), y.View()) < 0; });
  Write("t", cells);
  EXPECT_EQ(Read("t", Versions(1000)), distinct);
}

// A directory widen did not create is refused before LevelDB touches it.
TEST_F(LevelDbStoreTest, ForeignNonEmptyDirectoryIsRefusedAndLeftAlone) {
  std::filesystem::create_directories(path_);
  { std::ofstream(path_ + "/000007.log") << "someone else's data"; }
  { std::ofstream(path_ + "/notes.txt") << "keep me"; }
  Result<std::unique_ptr<LevelDbStore>> r = LevelDbStore::Open(path_, StoreOptions());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("is not empty and is not a widen store (no WIDEN_STORE file "
                                      "in it); give a new or empty directory"),
            std::string::npos)
      << r.status().message();
  EXPECT_TRUE(std::filesystem::exists(path_ + "/000007.log"));
  EXPECT_TRUE(std::filesystem::exists(path_ + "/notes.txt"));
  EXPECT_FALSE(std::filesystem::exists(path_ + "/CURRENT"));
}

TEST_F(LevelDbStoreTest, SecondProcessGetsAClearInUseError) {
  ASSERT_NE(OpenStore(), nullptr);
  // LevelDB's lock is per process; a second open in this process hits it too.
  Result<std::unique_ptr<LevelDbStore>> r = LevelDbStore::Open(path_, StoreOptions());
  EXPECT_EQ(r.status().code(), StatusCode::kAborted);
  EXPECT_NE(r.status().message().find("in use by another widen process"), std::string::npos)
      << r.status().message();
}

TEST_F(LevelDbStoreTest, VersionsCappedByFamilyNewestFirst) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("t", {Family("d", /*versions=*/2), Family("e", /*versions=*/5)}));
  Write("t", {Put("r", "d", "q", 1, "v1"), Put("r", "d", "q", 2, "v2"), Put("r", "d", "q", 3, "v3"),
              Put("r", "e", "q", 1), Put("r", "e", "q", 2), Put("r", "e", "q", 3)});
  std::vector<Cell> got = Read("t", Versions(10));
  EXPECT_EQ(got, (std::vector<Cell>{Put("r", "d", "q", 3, "v3"), Put("r", "d", "q", 2, "v2"),
                                    Put("r", "e", "q", 3), Put("r", "e", "q", 2),
                                    Put("r", "e", "q", 1)}));
  // The default, max_versions = 1: the newest of each column.
  EXPECT_EQ(Timestamps(Read("t")), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(Timestamps(Read("t", Versions(2))), (std::vector<int64_t>{3, 2, 3, 2}));
}

TEST_F(LevelDbStoreTest, TtlWithFixedClock) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("t", {Family("d", 5, /*ttl_seconds=*/10), Family("e", 5)}));
  // now = 100 s: the oldest live timestamp is 90000 ms.
  Write("t", {Put("r", "d", "q", 95000), Put("r", "d", "q", 90000), Put("r", "d", "q", 89999),
              Put("r", "d", "old", 1000), Put("r", "e", "q", 1)});
  std::vector<Cell> got = Read("t", Versions(5, /*now_ms=*/100000));
  EXPECT_EQ(got, (std::vector<Cell>{Put("r", "d", "q", 95000), Put("r", "d", "q", 90000),
                                    Put("r", "e", "q", 1)}));
  // Far in the future everything in "d" has expired; "e" has no TTL.
  EXPECT_EQ(Read("t", Versions(5, /*now_ms=*/INT64_MAX)),
            (std::vector<Cell>{Put("r", "e", "q", 1)}));
}

TEST_F(LevelDbStoreTest, MinVersionsKeptPastTtl) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("t", {Family("d", /*versions=*/5, /*ttl_seconds=*/10, /*min_versions=*/2)}));
  Write("t", {Put("r", "d", "all-old", 50000), Put("r", "d", "all-old", 40000),
              Put("r", "d", "all-old", 30000), Put("r", "d", "mixed", 99000),
              Put("r", "d", "mixed", 50000), Put("r", "d", "mixed", 40000)});
  std::vector<Cell> got = Read("t", Versions(5, /*now_ms=*/100000));
  EXPECT_EQ(got,
            (std::vector<Cell>{Put("r", "d", "all-old", 50000), Put("r", "d", "all-old", 40000),
                               Put("r", "d", "mixed", 99000), Put("r", "d", "mixed", 50000)}));
  // Asking for one version still returns just the newest.
  EXPECT_EQ(Timestamps(Read("t", Versions(1, 100000))), (std::vector<int64_t>{50000, 99000}));
}

TEST_F(LevelDbStoreTest, DeleteMasksOneVersion) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("t", {Family("d", 5)}));
  Write("t", {Put("r", "d", "q", 1), Put("r", "d", "q", 2), Put("r", "d", "q", 3),
              Marker(CellType::kDelete, "r", "d", "q", 2),
              Marker(CellType::kDelete, "r", "d", "q", 9),  // masks nothing
              Put("r", "d", "other", 2)});
  EXPECT_EQ(
      Read("t", Versions(5)),
      (std::vector<Cell>{Put("r", "d", "other", 2), Put("r", "d", "q", 3), Put("r", "d", "q", 1)}));
}

TEST_F(LevelDbStoreTest, VersionsCountOnlyLiveCells) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("t", {Family("d", 2)}));
  Write("t", {Put("r", "d", "q", 1), Put("r", "d", "q", 2), Put("r", "d", "q", 3),
              Marker(CellType::kDelete, "r", "d", "q", 3)});
  EXPECT_EQ(Timestamps(Read("t", Versions(5))), (std::vector<int64_t>{2, 1}));
}

TEST_F(LevelDbStoreTest, DeleteColumnMasksOlderVersions) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("t", {Family("d", 5)}));
  Write("t", {Put("r", "d", "q", 1), Put("r", "d", "q", 2), Put("r", "d", "q", 3),
              Marker(CellType::kDeleteColumn, "r", "d", "q", 2), Put("r", "d", "q2", 1),
              Put("r2", "d", "q", 1)});
  EXPECT_EQ(
      Read("t", Versions(5)),
      (std::vector<Cell>{Put("r", "d", "q", 3), Put("r", "d", "q2", 1), Put("r2", "d", "q", 1)}));
}

TEST_F(LevelDbStoreTest, DeleteFamilyMasksWholeFamilyOfRow) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("t", {Family("d", 5), Family("e", 5)}));
  Write("t", {Put("r", "d", "", 1), Put("r", "d", "", 3), Put("r", "d", "a", 1),
              Put("r", "d", "a", 3), Put("r", "d", "b", 2), Put("r", "e", "a", 1),
              Put("r2", "d", "a", 1), Marker(CellType::kDeleteFamily, "r", "d", "", 2)});
  EXPECT_EQ(Read("t", Versions(5)),
            (std::vector<Cell>{Put("r", "d", "", 3), Put("r", "d", "a", 3), Put("r", "e", "a", 1),
                               Put("r2", "d", "a", 1)}));
}

TEST_F(LevelDbStoreTest, MarkerAtSameTimestampWinsOverPut) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("t", {Family("d", 5)}));
  // Same row, family, qualifier and timestamp: the markers sort first.
  Write("t",
        {Put("a", "d", "q", 5), Marker(CellType::kDelete, "a", "d", "q", 5), Put("b", "d", "q", 5),
         Marker(CellType::kDeleteColumn, "b", "d", "q", 5), Put("c", "d", "q", 5),
         Marker(CellType::kDeleteFamily, "c", "d", "", 5), Put("d", "d", "q", 5)});
  EXPECT_EQ(Read("t", Versions(5)), (std::vector<Cell>{Put("d", "d", "q", 5)}));
}

class ScanRangeTest : public LevelDbStoreTest {
 protected:
  void SetUp() override {
    LevelDbStoreTest::SetUp();
    ASSERT_NE(OpenStore(), nullptr);
    Create(Table("t", {Family("d")}));
    std::vector<Cell> cells;
    for (const std::string& row :
         {std::string("a"), std::string("ab"), std::string("abc"), std::string("b"), B("b\x00", 2),
          B("b\xff", 2), std::string("c")}) {
      cells.push_back(Put(row, "d", "x", 1));
      cells.push_back(Put(row, "d", "y", 1));
    }
    Write("t", cells);
  }
};

TEST_F(ScanRangeTest, Limit) {
  ReadOptions o;
  o.limit_rows = 2;
  std::vector<Cell> got = Read("t", o);
  EXPECT_EQ(got.size(), 4u);
  EXPECT_EQ(Rows(got), (std::vector<std::string>{"a", "ab"}));
}

TEST_F(ScanRangeTest, LimitCountsOnlyRowsWithLiveCells) {
  Write("t", {Marker(CellType::kDeleteFamily, "a", "d", "", 10)});
  ReadOptions o;
  o.limit_rows = 1;
  EXPECT_EQ(Rows(Read("t", o)), (std::vector<std::string>{"ab"}));
}

TEST_F(ScanRangeTest, Prefix) {
  ReadOptions o;
  o.row_prefix = "ab";
  EXPECT_EQ(Rows(Read("t", o)), (std::vector<std::string>{"ab", "abc"}));
  o.row_prefix = "b";
  EXPECT_EQ(Rows(Read("t", o)), (std::vector<std::string>{"b", B("b\x00", 2), B("b\xff", 2)}));
  o.row_prefix = B("b\x00", 2);
  EXPECT_EQ(Rows(Read("t", o)), (std::vector<std::string>{B("b\x00", 2)}));
  o.row_prefix = "zz";
  EXPECT_TRUE(Read("t", o).empty());
}

TEST_F(ScanRangeTest, StartInclusiveStopExclusive) {
  ReadOptions o;
  o.start_row = "ab";
  o.stop_row = B("b\xff", 2);
  EXPECT_EQ(Rows(Read("t", o)), (std::vector<std::string>{"ab", "abc", "b", B("b\x00", 2)}));
  o.start_row = "aa";  // not a row: starts at the next one
  o.stop_row = "b";
  EXPECT_EQ(Rows(Read("t", o)), (std::vector<std::string>{"ab", "abc"}));
  o.start_row = "b";
  o.stop_row = "b";
  EXPECT_TRUE(Read("t", o).empty());
  o.start_row = "c";
  o.stop_row = "a";
  EXPECT_TRUE(Read("t", o).empty());
  o.start_row = "";
  o.stop_row = "ab";
  EXPECT_EQ(Rows(Read("t", o)), (std::vector<std::string>{"a"}));
}

TEST_F(ScanRangeTest, PrefixStartStopAndLimitTogether) {
  ReadOptions o;
  o.row_prefix = "a";
  o.start_row = "ab";
  o.limit_rows = 1;
  EXPECT_EQ(Rows(Read("t", o)), (std::vector<std::string>{"ab"}));
}

TEST_F(LevelDbStoreTest, ReopenExistingStore) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("ns:t", {Family("d", 3)}));
  Write("ns:t", {Put("r", "d", "q", 1, "hello")});
  ASSERT_TRUE(store_->Close().ok());
  EXPECT_EQ(store_->DescribeTable("ns:t").status().code(), StatusCode::kFailedPrecondition);

  StoreOptions no_create;
  no_create.create_if_missing = false;
  ASSERT_NE(OpenStore(no_create), nullptr);
  Result<std::vector<TableDescriptor>> tables = store_->ListTables();
  ASSERT_TRUE(tables.ok()) << tables.status().ToString();
  ASSERT_EQ(tables->size(), 1u);
  EXPECT_EQ((*tables)[0].FullName(), "ns:t");
  EXPECT_EQ((*tables)[0].families[0].versions, 3);
  EXPECT_EQ(Read("ns:t"), (std::vector<Cell>{Put("r", "d", "q", 1, "hello")}));
}

TEST_F(LevelDbStoreTest, MissingStoreWithoutCreateIsNotFound) {
  StoreOptions no_create;
  no_create.create_if_missing = false;
  Result<std::unique_ptr<LevelDbStore>> r = LevelDbStore::Open(path_, no_create);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(LevelDbStoreTest, CreatesMissingParentDirectories) {
  path_ = dir_ + "/a/b/c";
  ASSERT_NE(OpenStore(), nullptr);
  EXPECT_TRUE(std::filesystem::exists(path_ + "/CURRENT"));
}

// Opens the store's directory with plain LevelDB and applies `mutate`.
void WithRawDb(const std::string& path, void (*mutate)(leveldb::DB*)) {
  leveldb::Options options;
  options.create_if_missing = true;
  leveldb::DB* raw = nullptr;
  leveldb::Status s = leveldb::DB::Open(options, path, &raw);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<leveldb::DB> db(raw);
  mutate(db.get());
}

// A table file that LevelDB's background compaction removes while the store
// opens is not damage: the open checks the files that are live, not those
// it listed a moment before. Three level-0 files and writes left in the
// log: the open writes a fourth level-0 file, which starts a compaction of
// the four; CompactionRaceEnv lets it remove its inputs between the open's
// listing of the table files and its first size query.
TEST_F(LevelDbStoreTest, ATableFileCompactedAwayWhileOpeningIsNotDamage) {
  ASSERT_NE(OpenStore(), nullptr);
  store_.reset();
  {
    leveldb::Options options;
    leveldb::DB* raw = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(options, path_, &raw).ok());
    std::unique_ptr<leveldb::DB> db(raw);
    auto put_keys = [&](int round) {
      for (int i = 0; i < 500; ++i) {
        const std::string key = "\x05race" + std::to_string(1000 + i);
        ASSERT_TRUE(db->Put(leveldb::WriteOptions(), key, std::string(64, 'a' + round)).ok());
      }
    };
    db->CompactRange(nullptr, nullptr);  // the store's own keys out of level 0
    // Each flush of overlapping keys lands one level up until level 0.
    std::string files = "0";
    for (int round = 0; round < 10 && files != "3"; ++round) {
      put_keys(round);
      const std::string past = "\xff\xff";
      const leveldb::Slice past_slice(past);
      db->CompactRange(&past_slice, &past_slice);  // writes the memtable out
      ASSERT_TRUE(db->GetProperty("leveldb.num-files-at-level0", &files));
    }
    ASSERT_EQ(files, "3");
    put_keys(20);  // stays in the log
  }
  testing::CompactionRaceEnv race;
  Result<std::unique_ptr<LevelDbStore>> r = LevelDbStore::Open(path_, StoreOptions(), race.env());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(race.raced()) << "no table file was removed during the open's checks";
}

TEST_F(LevelDbStoreTest, OtherFormatVersionIsFailedPrecondition) {
  ASSERT_NE(OpenStore(), nullptr);
  store_.reset();
  WithRawDb(path_, [](leveldb::DB* db) {
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(),
                        leveldb::Slice("\x00"
                                       "format",
                                       7),
                        "\x02")
                    .ok());
  });
  Result<std::unique_ptr<LevelDbStore>> r = LevelDbStore::Open(path_, StoreOptions());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("format version 2"), std::string::npos)
      << r.status().message();
}

TEST_F(LevelDbStoreTest, ForeignDatabaseIsFailedPrecondition) {
  WithRawDb(path_, [](leveldb::DB* db) {
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(), "some", "thing").ok());
  });
  Result<std::unique_ptr<LevelDbStore>> r = LevelDbStore::Open(path_, StoreOptions());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("not a widen store"), std::string::npos)
      << r.status().message();
}

TEST_F(LevelDbStoreTest, HeaderWrittenAtCreation) {
  ASSERT_NE(OpenStore(), nullptr);
  store_.reset();
  WithRawDb(path_, [](leveldb::DB* db) {
    std::string v;
    ASSERT_TRUE(db->Get(leveldb::ReadOptions(),
                        leveldb::Slice("\x00"
                                       "format",
                                       7),
                        &v)
                    .ok());
    EXPECT_EQ(v, std::string("\x01"));
  });
}

TEST_F(LevelDbStoreTest, CorruptCellKeyIsStickyDataLoss) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("t", {Family("d")}));
  Write("t", {Put("a", "d", "q", 1), Put("c", "d", "q", 1)});
  store_.reset();
  WithRawDb(path_, [](leveldb::DB* db) {
    // A key inside table t's range ("b" rows) without a valid layout.
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(),
                        leveldb::Slice("\x02t\x00"
                                       "b\x00\x07",
                                       6),
                        "x")
                    .ok());
  });
  ASSERT_NE(OpenStore(), nullptr);
  Result<std::unique_ptr<CellReader>> r = store_->NewReader("t", ReadOptions());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  CellReader* reader = r->get();
  ASSERT_TRUE(reader->Valid());
  EXPECT_EQ(reader->cell().row, "a");
  reader->Next();
  EXPECT_FALSE(reader->Valid());
  EXPECT_EQ(reader->status().code(), StatusCode::kDataLoss);
  EXPECT_NE(reader->status().message().find("'t'"), std::string::npos)
      << reader->status().message();
}

TEST_F(LevelDbStoreTest, UnknownTableIsNotFound) {
  ASSERT_NE(OpenStore(), nullptr);
  EXPECT_EQ(store_->NewSink("nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->NewReader("nope", ReadOptions()).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->DescribeTable("ns:nope").status().code(), StatusCode::kNotFound);
}

TEST_F(LevelDbStoreTest, CreateTableTwice) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("ns:t", {Family("d", 3), Family("e")}));
  // Same families in another order, other split points: the same table.
  TableDescriptor same = Table("ns:t", {Family("e"), Family("d", 3)});
  same.split_points = {"m"};
  EXPECT_TRUE(store_->CreateTable(same).ok());

  Status s = store_->CreateTable(Table("ns:t", {Family("d", 4), Family("e")}));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("VERSIONS is 3"), std::string::npos) << s.message();

  s = store_->CreateTable(Table("ns:t", {Family("d", 3), Family("e"), Family("f")}));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("'f'"), std::string::npos) << s.message();

  s = store_->CreateTable(Table("ns:t", {Family("d", 3)}));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("'e'"), std::string::npos) << s.message();

  TableDescriptor ttl = Table("ns:t", {Family("d", 3), Family("e", 1, 60)});
  s = store_->CreateTable(ttl);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("TTL"), std::string::npos) << s.message();
}

TEST_F(LevelDbStoreTest, CreateTableValidatesNames) {
  ASSERT_NE(OpenStore(), nullptr);
  EXPECT_EQ(store_->CreateTable(Table("ns:-t", {Family("d")})).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CreateTable(Table("n.s:t", {Family("d")})).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CreateTable(Table("t", {Family("a:b")})).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CreateTable(Table("t", {})).code(), StatusCode::kInvalidArgument);
  Result<std::vector<TableDescriptor>> tables = store_->ListTables();
  ASSERT_TRUE(tables.ok());
  EXPECT_TRUE(tables->empty());
}

TEST_F(LevelDbStoreTest, DescribeAndListTables) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("zeta", {Family("d")}));
  Create(Table("ns:alpha", {Family("d")}));
  Create(Table("default:beta", {Family("d", 7)}));
  Result<TableDescriptor> beta = store_->DescribeTable("beta");
  ASSERT_TRUE(beta.ok()) << beta.status().ToString();
  EXPECT_EQ(beta->families[0].versions, 7);
  EXPECT_TRUE(store_->DescribeTable("default:beta").ok());
  Result<std::vector<TableDescriptor>> tables = store_->ListTables();
  ASSERT_TRUE(tables.ok());
  std::vector<std::string> names;
  for (const TableDescriptor& d : *tables) names.push_back(d.FullName());
  EXPECT_EQ(names, (std::vector<std::string>{"beta", "ns:alpha", "zeta"}));
}

TEST_F(LevelDbStoreTest, SinkRejectsBadCells) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("ns:t", {Family("d")}));
  {
    Result<std::unique_ptr<CellSink>> sink = store_->NewSink("ns:t");
    ASSERT_TRUE(sink.ok());
    ASSERT_TRUE((*sink)->Put(Put("r", "d", "q", 1).View()).ok());
    ASSERT_TRUE((*sink)->Put(Put("r", "x", "q", 1).View()).ok());
    Status s = (*sink)->Flush();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("'ns:t'"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("'x'"), std::string::npos) << s.message();
    EXPECT_EQ((*sink)->stats().cells, 0u);
  }
  EXPECT_TRUE(Read("ns:t").empty());  // the batch holding the bad cell was not written

  auto flush_one = [&](const Cell& c) {
    Result<std::unique_ptr<CellSink>> sink = store_->NewSink("ns:t");
    EXPECT_TRUE(sink.ok());
    EXPECT_TRUE((*sink)->Put(c.View()).ok());
    return (*sink)->Close().code();
  };
  EXPECT_EQ(flush_one(Put("", "d", "q", 1)), StatusCode::kInvalidArgument);
  EXPECT_EQ(flush_one(Put(std::string(32768, 'r'), "d", "q", 1)), StatusCode::kInvalidArgument);
  EXPECT_EQ(flush_one(Put(std::string(32767, 'r'), "d", "q", 1)), StatusCode::kOk);
  EXPECT_EQ(flush_one(Marker(CellType::kDeleteFamily, "r", "d", "q", 1)),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(flush_one(Marker(static_cast<CellType>(5), "r", "d", "q", 1)),
            StatusCode::kInvalidArgument);
}

// The embedded store's limits beside the rules every store shares
// (common/cell_check.h): its key order holds negative timestamps, and it
// has no cell size limit (HBase's 10 MiB does not apply).
TEST_F(LevelDbStoreTest, SinkTakesNegativeTimestampsAndCellsOfAnySize) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("t", {Family("d", 3)}));
  const std::string big(10485761, 'v');  // above HBase's hbase.server.keyvalue.maxsize
  Write("t", {Put("r", "d", "q", -1, "old"), Put("r", "d", "q", 5, big)});
  const std::vector<Cell> got = Read("t", Versions(3));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].timestamp_ms, 5);
  EXPECT_EQ(got[0].value.size(), big.size());
  EXPECT_EQ(got[1].timestamp_ms, -1);
  // The shared rules name the table and the row.
  Result<std::unique_ptr<CellSink>> sink = store_->NewSink("t");
  ASSERT_TRUE(sink.ok());
  ASSERT_TRUE((*sink)->Put(Put("row\x01", "nope", "q", 1).View()).ok());
  Status s = (*sink)->Close();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("table 't', row 'row\\x01': the table has no column family 'nope' "
                             "(families: d)"),
            std::string::npos)
      << s.message();
}

TEST_F(LevelDbStoreTest, ReaderRejectsZeroVersions) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("t", {Family("d")}));
  EXPECT_EQ(store_->NewReader("t", Versions(0)).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(LevelDbStoreTest, SinkAndReaderOutliveStore) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("t", {Family("d")}));
  Result<std::unique_ptr<CellSink>> sink = store_->NewSink("t");
  ASSERT_TRUE(sink.ok());
  store_.reset();
  ASSERT_TRUE((*sink)->Put(Put("r", "d", "q", 1).View()).ok());
  ASSERT_TRUE((*sink)->Close().ok());
  sink->reset();
  ASSERT_NE(OpenStore(), nullptr);
  EXPECT_EQ(Read("t").size(), 1u);
}

TEST_F(LevelDbStoreTest, ThroughputSmoke) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("t", {Family("d")}));
  constexpr int kRows = 100000;
  constexpr int kColumns = 4;
  const auto start = std::chrono::steady_clock::now();
  {
    Result<std::unique_ptr<CellSink>> sink = store_->NewSink("t");
    ASSERT_TRUE(sink.ok());
    char row[16];
    const std::string value(40, 'v');
    const char* qualifiers[kColumns] = {"name", "phone", "city", "since"};
    for (int i = 0; i < kRows; ++i) {
      std::snprintf(row, sizeof(row), "C%08d", i);
      for (const char* q : qualifiers) {
        Status s = (*sink)->Put(CellView{row, "d", q, 1700000000000, CellType::kPut, value});
        ASSERT_TRUE(s.ok()) << s.ToString();
      }
    }
    ASSERT_TRUE((*sink)->Close().ok());
  }
  const auto written = std::chrono::steady_clock::now();
  uint64_t n = 0;
  {
    Result<std::unique_ptr<CellReader>> r = store_->NewReader("t", ReadOptions());
    ASSERT_TRUE(r.ok());
    for (; (*r)->Valid(); (*r)->Next()) ++n;
    ASSERT_TRUE((*r)->status().ok());
  }
  const auto read = std::chrono::steady_clock::now();
  EXPECT_EQ(n, static_cast<uint64_t>(kRows) * kColumns);
  const double write_s = std::chrono::duration<double>(written - start).count();
  const double read_s = std::chrono::duration<double>(read - written).count();
  std::printf("wrote %d cells in %.3f s (%.0f cells/s); read in %.3f s (%.0f cells/s)\n",
              kRows * kColumns, write_s, kRows * kColumns / write_s, read_s,
              kRows * kColumns / read_s);
}

// A first load writes its cells in key order into an empty table, as
// migrate does: the table's descriptor and its state, in either order, then
// the cells, several memtables of them, then the state again. LevelDB then
// moves each table file of cells down a level without reading it: no
// compaction rewrites one (LevelDB logs each such compaction as
// "Compacting" in the store's LOG). A descriptor and state written to one
// small file (keys 0x01 and 0x03, around every cell key 0x02) made every
// later file of cells be merged with it and with each other. Written as
// table files directly (the default), no memtable holds the cells at all.
TEST_F(LevelDbStoreTest, CellsInKeyOrderIntoAnEmptyTableAreNotRewrittenByCompactions) {
  for (const bool table_files : {false, true}) {
    for (const bool state_first : {true, false}) {
      SCOPED_TRACE(state_first ? "state, then descriptor" : "descriptor, then state");
      SCOPED_TRACE(table_files ? "table files" : "write path");
      store_.reset();
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
      StoreOptions options;
      options.write_table_files = table_files;
      ASSERT_NE(OpenStore(options), nullptr);
      Result<std::unique_ptr<StateStore>> states = store_->NewStateStore();
      ASSERT_TRUE(states.ok()) << states.status().ToString();
      TableState loading;
      loading.status = TableStatus::kLoading;
      std::optional<uint64_t> version;
      auto put_state = [&](const TableState& state) {
        Result<uint64_t> v = (*states)->Put("ns:t", version, state);
        ASSERT_TRUE(v.ok()) << v.status().ToString();
        version = *v;
      };
      if (state_first) put_state(loading);
      Create(Table("ns:t", {Family("d")}));
      if (!state_first) put_state(loading);
      {
        Result<std::unique_ptr<CellSink>> sink = store_->NewSink("ns:t");
        ASSERT_TRUE(sink.ok()) << sink.status().ToString();
        std::mt19937_64 rng(7);
        std::string value(64, ' ');
        char row[16];
        // About 90 MB of cells: five or six memtables of 16 MiB.
        for (int i = 0; i < 1000000; ++i) {
          std::snprintf(row, sizeof(row), "r%09d", i);
          for (char& ch : value) ch = static_cast<char>('a' + rng() % 26);
          Status s = (*sink)->Put(CellView{row, "d", "q", 1700000000000, CellType::kPut, value});
          ASSERT_TRUE(s.ok()) << s.ToString();
        }
        Status s = (*sink)->Close();
        ASSERT_TRUE(s.ok()) << s.ToString();
      }
      TableState complete = loading;
      complete.status = TableStatus::kComplete;
      put_state(complete);
      states->reset();
      store_.reset();
      std::ifstream log(path_ + "/LOG");
      ASSERT_TRUE(log.good());
      std::string line;
      int flushed = 0;
      int rewritten = 0;
      while (std::getline(log, line)) {
        if (line.find("Level-0 table #") != std::string::npos &&
            line.find("bytes OK") != std::string::npos) {
          ++flushed;
        }
        if (line.find("Compacting ") != std::string::npos) {
          ++rewritten;
          ADD_FAILURE() << line;
        }
      }
      if (table_files) {
        // The descriptor and the states, each out of the memtable on its own.
        EXPECT_LE(flushed, 4) << "cells went through the memtable";
      } else {
        EXPECT_GE(flushed, 5) << "the cells did not fill several memtables";
      }
      EXPECT_EQ(rewritten, 0);
    }
  }
}

// A full pass of a sync writes every row anew with its digest and index
// entries (DeferDigestsAndIndex): held back and written apart, each kind in
// key order, they leave the cells' table files alone as a migrate's are (no
// compaction rewrites one), and what the writer holds after Sync is what
// the calls gave: every digest, every index entry put and not deleted
// again, the last write of a key winning.
TEST_F(LevelDbStoreTest, AFullPassWritesDigestsAndIndexApartFromTheCells) {
  ASSERT_NE(OpenStore(), nullptr);
  Create(Table("ns:t", {Family("d")}));
  constexpr int kRows = 500000;
  {
    Result<std::unique_ptr<RowWriter>> w = store_->NewRowWriter("ns:t");
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    (*w)->DeferDigestsAndIndex();
    std::mt19937_64 rng(11);
    std::string value(160, ' ');
    char row[16];
    CellBatch cells;
    for (int i = 0; i < kRows; ++i) {
      std::snprintf(row, sizeof(row), "r%09d", i);
      for (char& ch : value) ch = static_cast<char>('a' + rng() % 26);
      cells.Clear();
      cells.Add(CellView{row, "d", "q", 1700000000000, CellType::kPut, value});
      // Each row's index entries before the row, as a full pass writes them.
      ASSERT_TRUE((*w)->PutIndex(std::string("r") + row, "").ok());
      ASSERT_TRUE((*w)->PutIndex(std::string("c") + row, "p").ok());
      if (i % 1000 == 7) {
        ASSERT_TRUE((*w)->DeleteIndex(std::string("c") + row).ok());
      }
      const std::string digest(32, static_cast<char>('A' + i % 26));
      Status s = (*w)->ReplaceRow(row, cells, digest);
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    // A key put again after it was deleted: the last write wins.
    ASSERT_TRUE((*w)->PutIndex("cr000000007", "again").ok());
    Status s = (*w)->Sync();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  Result<std::unique_ptr<RowDigestReader>> digests = store_->NewDigestReader("ns:t", false);
  ASSERT_TRUE(digests.ok()) << digests.status().ToString();
  int rows = 0;
  for (; (*digests)->Valid(); (*digests)->Next(), ++rows) {
    ASSERT_EQ((*digests)->digest(), std::string(32, static_cast<char>('A' + rows % 26)));
  }
  ASSERT_TRUE((*digests)->status().ok());
  EXPECT_EQ(rows, kRows);
  digests->reset();
  int r_entries = 0, c_entries = 0;
  std::string again;
  Status s = store_->ScanIndex("ns:t", {"c", "r"},
                               [&](size_t prefix, std::string_view key, std::string_view v) {
                                 if (prefix == 1) {
                                   ++r_entries;
                                 } else {
                                   ++c_entries;
                                   if (key == "cr000000007") again = std::string(v);
                                 }
                                 return true;
                               });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r_entries, kRows);
  EXPECT_EQ(c_entries, kRows - kRows / 1000 + 1);
  EXPECT_EQ(again, "again");
  store_.reset();
  std::ifstream log(path_ + "/LOG");
  ASSERT_TRUE(log.good());
  std::string line;
  int flushed = 0;
  while (std::getline(log, line)) {
    if (line.find("Level-0 table #") != std::string::npos &&
        line.find("bytes OK") != std::string::npos) {
      ++flushed;
    }
    if (line.find("Compacting ") != std::string::npos) ADD_FAILURE() << line;
  }
  EXPECT_GE(flushed, 5) << "the rows did not fill several memtables";
}

TEST(StoreOpenTest, Urls) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "widen_url_XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  Result<std::unique_ptr<Store>> s = Store::Open("leveldb:" + tmpl + "/db", StoreOptions());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  // Nothing listens on port 1: the HBase store is tried and cannot connect.
  s = Store::Open("hbase://127.0.0.1:1", StoreOptions());
#ifdef WIDEN_WITH_HBASE
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable) << s.status().ToString();
  EXPECT_NE(s.status().message().find("127.0.0.1:1"), std::string::npos);
#else
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("WIDEN_WITH_HBASE=OFF"), std::string::npos);
#endif
  s = Store::Open("hbase://127.0.0.1", StoreOptions());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << s.status().ToString();
  s = Store::Open("postgres://x", StoreOptions());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("leveldb:PATH"), std::string::npos);
  EXPECT_NE(s.status().message().find("hbase://HOST:PORT"), std::string::npos);
  s = Store::Open("leveldb:", StoreOptions());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
}

}  // namespace
}  // namespace widen
