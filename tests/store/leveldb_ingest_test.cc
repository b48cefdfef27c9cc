// Table files written directly (store/leveldb_ingest_internal.h): files a
// TableFileWriter builds and AddTables lists in the MANIFEST read back
// through LevelDB's own DB as if LevelDB had written them — every key by
// Get and in order, later writes and deletes of their keys winning, before
// and after LevelDB compacts them — on the deepest free level; AddTables
// refuses, changing nothing, where the database holds a key (a deletion
// too) within a file's range. Through the embedded store's sink: the same
// cells whichever way they are written (duplicates across batches, several
// flushes, a batch out of order after cells were written, deletion markers
// of LevelDB left in the table's range), table files a run left behind
// removed at open, a full disk at any write leaving the table empty or
// whole, and a reader another thread holds making the sink wait for it.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include "common/cell_sink.h"
#include "store/leveldb_files_internal.h"
#include "store/leveldb_format_internal.h"
#include "store/leveldb_ingest_internal.h"
#include "store/leveldb_marker_internal.h"
#include "store/leveldb_repair.h"
#include "store/leveldb_store.h"
#include "store/store.h"
#include "tests/store/full_disk_env.h"

namespace widen {
namespace {

namespace li = leveldb_ingest;

class IngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "widen_ingest_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    db_path_ = dir_ + "/db";
  }
  void TearDown() override {
    db_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Opens (creating) the bare LevelDB database at db_path_.
  void OpenDb() {
    leveldb::Options o;
    o.create_if_missing = true;
    o.paranoid_checks = true;
    leveldb::DB* raw = nullptr;
    leveldb::Status s = leveldb::DB::Open(o, db_path_, &raw);
    ASSERT_TRUE(s.ok()) << s.ToString();
    db_.reset(raw);
  }

  void Put(const std::string& k, const std::string& v) {
    ASSERT_TRUE(db_->Put(leveldb::WriteOptions(), k, v).ok());
  }

  // Writes the memtable out to a table file (a compaction of a range that
  // holds no key) and closes the database: its log then holds nothing.
  void FlushAndClose() {
    const leveldb::Slice past("\xff");
    db_->CompactRange(&past, &past);
    db_.reset();
  }

  // Writes keys `prefix`000000 ... (n of them) with values "v<i>" into
  // table files of about `file_bytes`, in the database's directory.
  std::vector<li::BuiltTable> Build(const std::string& prefix, int n, uint64_t file_bytes = 16384) {
    li::TableFileWriter w(leveldb::Env::Default(), db_path_, leveldb::Options(), file_bytes);
    char k[64];
    for (int i = 0; i < n; ++i) {
      std::snprintf(k, sizeof k, "%s%06d", prefix.c_str(), i);
      std::string key = k;
      li::AppendValueTag(&key);
      Status s = w.Add(key, "v" + std::to_string(i));
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    EXPECT_TRUE(w.EndFile().ok());
    Result<std::vector<li::BuiltTable>> tables = w.TakeFinished();
    EXPECT_TRUE(tables.ok()) << tables.status().ToString();
    return tables.ok() ? std::move(tables).value() : std::vector<li::BuiltTable>();
  }

  std::string Get(const std::string& k) {
    std::string v;
    leveldb::Status s = db_->Get(leveldb::ReadOptions(), k, &v);
    if (s.IsNotFound()) return "<none>";
    EXPECT_TRUE(s.ok()) << s.ToString();
    return v;
  }

  int FilesAt(int level) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty("leveldb.num-files-at-level" + std::to_string(level), &v));
    return std::stoi(v);
  }

  std::string ReadCurrent() {
    std::ifstream in(db_path_ + "/CURRENT");
    std::string s;
    std::getline(in, s);
    return s;
  }

  std::string dir_;
  std::string db_path_;
  std::unique_ptr<leveldb::DB> db_;
};

TEST_F(IngestTest, TableFilesReadBackAsLevelDbsOwn) {
  OpenDb();
  Put("a", "1");
  Put("z", "2");
  FlushAndClose();
  std::vector<li::BuiltTable> tables = Build("m", 20000);
  ASSERT_GT(tables.size(), 3u) << "several files";
  for (const auto& t : tables) {
    EXPECT_EQ(std::filesystem::path(t.path).filename().string().rfind(li::kPendingPrefix, 0), 0u);
  }
  std::string previous;
  Result<std::vector<li::AddedTable>> added =
      li::AddTables(leveldb::Env::Default(), db_path_, tables, &previous);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_FALSE(previous.empty());
  for (const li::AddedTable& a : *added) EXPECT_EQ(a.level, 6);  // nothing else at levels 1-6
  for (const auto& t : tables) EXPECT_FALSE(std::filesystem::exists(t.path));

  OpenDb();
  EXPECT_EQ(FilesAt(6), static_cast<int>(tables.size()));
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("z"), "2");
  char k[16];
  for (int i = 0; i < 20000; i += 7) {
    std::snprintf(k, sizeof k, "m%06d", i);
    ASSERT_EQ(Get(k), "v" + std::to_string(i)) << k;
  }
  EXPECT_EQ(Get("m020000"), "<none>");
  EXPECT_EQ(Get("m"), "<none>");
  // Every key once, in order, with Seek into the middle of each file.
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(leveldb::ReadOptions()));
  int n = 0;
  std::string last;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) {
    EXPECT_LT(last, it->key().ToString());
    last = it->key().ToString();
  }
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(n, 20002);
  it->Seek("m012345x");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "m012346");
  it.reset();

  // Later writes of the same keys win, also once LevelDB compacted them
  // together with the added files.
  Put("m000100", "new");
  ASSERT_TRUE(db_->Delete(leveldb::WriteOptions(), "m000200").ok());
  EXPECT_EQ(Get("m000100"), "new");
  EXPECT_EQ(Get("m000200"), "<none>");
  db_->CompactRange(nullptr, nullptr);
  EXPECT_EQ(Get("m000100"), "new");
  EXPECT_EQ(Get("m000200"), "<none>");
  EXPECT_EQ(Get("m000300"), "v300");
  db_.reset();
  OpenDb();  // and after LevelDB wrote its own MANIFEST
  EXPECT_EQ(Get("m000100"), "new");
  EXPECT_EQ(Get("m000200"), "<none>");
  EXPECT_EQ(Get("m019999"), "v19999");
}

TEST_F(IngestTest, NumbersAboveEveryFileAndTheDeepestFreeLevel) {
  OpenDb();
  // "a" and "z" in one file, compacted down to the deepest level it goes
  // (its range meets every "m" key, though it holds none of them).
  Put("a", "1");
  Put("z", "2");
  db_->CompactRange(nullptr, nullptr);
  int straddler = -1;
  for (int l = 0; l < li::kLevels; ++l) {
    if (FilesAt(l) > 0) straddler = l;
  }
  ASSERT_GT(straddler, 0);
  db_.reset();
  Result<li::ManifestState> before = li::ReadManifest(leveldb::Env::Default(), db_path_);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  uint64_t highest = 0;
  for (const auto& e : std::filesystem::directory_iterator(db_path_)) {
    const std::string name = e.path().filename().string();
    const unsigned long long number = std::strtoull(name.c_str(), nullptr, 10);
    highest = std::max<uint64_t>(highest, number);
  }

  std::vector<li::BuiltTable> tables = Build("m", 3000);
  std::string previous;
  Result<std::vector<li::AddedTable>> added =
      li::AddTables(leveldb::Env::Default(), db_path_, tables, &previous);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(previous, before->manifest_name);
  for (const li::AddedTable& a : *added) {
    EXPECT_GT(a.number, highest);
    EXPECT_GE(a.number, before->next_file);
    EXPECT_EQ(a.level, straddler == 6 ? 5 : 6);
  }
  Result<li::ManifestState> after = li::ReadManifest(leveldb::Env::Default(), db_path_);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_GT(after->next_file, added->back().number);
  EXPECT_EQ(after->last_sequence, before->last_sequence);
  EXPECT_EQ(after->comparator, before->comparator);
  size_t live = 0;
  for (const auto& level : after->levels) live += level.size();
  EXPECT_EQ(live, tables.size() + 1);
  OpenDb();
  EXPECT_EQ(Get("m002999"), "v2999");
  EXPECT_EQ(Get("a"), "1");
}

TEST_F(IngestTest, RefusedWhereTheDatabaseHoldsAKeyInTheRangeAndNothingChanges) {
  for (const bool deleted : {false, true}) {
    SCOPED_TRACE(deleted ? "a deletion" : "a value");
    db_.reset();
    std::filesystem::remove_all(db_path_);
    OpenDb();
    Put("m000500", "old");
    if (deleted) {
      ASSERT_TRUE(db_->Delete(leveldb::WriteOptions(), "m000500").ok());
    }
    FlushAndClose();  // into a level-0 table file, the deletion kept
    const std::string current = ReadCurrent();
    std::vector<li::BuiltTable> tables = Build("m", 1000);
    std::string previous;
    Result<std::vector<li::AddedTable>> added =
        li::AddTables(leveldb::Env::Default(), db_path_, tables, &previous);
    ASSERT_FALSE(added.ok());
    EXPECT_EQ(added.status().code(), StatusCode::kFailedPrecondition) << added.status().ToString();
    EXPECT_TRUE(previous.empty());
    EXPECT_EQ(ReadCurrent(), current);
    for (const auto& t : tables) EXPECT_TRUE(std::filesystem::exists(t.path));
    // Their entries can still be read, to be written the usual way.
    int entries = 0;
    for (const auto& t : tables) {
      ASSERT_TRUE(
          li::ForEachEntry(leveldb::Env::Default(), t, [&](std::string_view, std::string_view) {
            ++entries;
            return Status::OK();
          }).ok());
    }
    EXPECT_EQ(entries, 1000);
    OpenDb();
    EXPECT_EQ(Get("m000500"), deleted ? "<none>" : "old");
    EXPECT_EQ(Get("m000501"), "<none>");
  }
}

// Segments written by several threads at once come back as files in key
// order, none overlapping another, every entry once.
TEST_F(IngestTest, SegmentsWrittenOnSeveralThreadsComeBackInKeyOrder) {
  OpenDb();
  FlushAndClose();
  std::vector<li::BuiltTable> tables;
  {
    li::ParallelTableWriter w(leveldb::Env::Default(), db_path_, leveldb::Options(), 8192, 3);
    std::mt19937_64 rng(5);
    char k[16];
    int i = 0;
    for (int seg = 0; seg < 60; ++seg) {
      const int n = seg % 7 == 0 ? 1 : static_cast<int>(1 + rng() % 700);
      for (int j = 0; j < n; ++j, ++i) {
        std::snprintf(k, sizeof k, "m%06d", i);
        std::string key = k;
        li::AppendValueTag(&key);
        w.Add(key, "v" + std::to_string(i));
      }
      ASSERT_TRUE(w.EndSegment().ok());
    }
    Result<std::vector<li::BuiltTable>> r = w.TakeFinished();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    tables = std::move(r).value();
    uint64_t entries = 0;
    for (size_t t = 0; t < tables.size(); ++t) {
      entries += tables[t].entries;
      if (t > 0) {
        EXPECT_LT(li::UserKey(tables[t - 1].largest), li::UserKey(tables[t].smallest));
      }
    }
    EXPECT_EQ(entries, static_cast<uint64_t>(i));
    EXPECT_GE(tables.size(), 60u);  // a segment's files are its own
  }
  for (const auto& t : tables) EXPECT_TRUE(std::filesystem::exists(t.path)) << "taken: kept";
  std::string previous;
  Result<std::vector<li::AddedTable>> added =
      li::AddTables(leveldb::Env::Default(), db_path_, tables, &previous);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  OpenDb();
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(leveldb::ReadOptions()));
  int n = 0;
  char k[16];
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) {
    std::snprintf(k, sizeof k, "m%06d", n);
    ASSERT_EQ(it->key().ToString(), k);
    ASSERT_EQ(it->value().ToString(), "v" + std::to_string(n));
  }
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(static_cast<uint64_t>(n), [&] {
    uint64_t e = 0;
    for (const auto& t : tables) e += t.entries;
    return e;
  }());
}

// Writes in the log would be replayed above the added files: refused.
TEST_F(IngestTest, RefusedWhileTheLogHoldsWrites) {
  OpenDb();
  Put("a", "1");
  db_.reset();  // the memtable not written out: "a" is in the log only
  std::vector<li::BuiltTable> tables = Build("m", 100);
  std::string previous;
  Result<std::vector<li::AddedTable>> added =
      li::AddTables(leveldb::Env::Default(), db_path_, tables, &previous);
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.status().code(), StatusCode::kFailedPrecondition) << added.status().ToString();
  EXPECT_NE(added.status().message().find(".log"), std::string::npos);
  OpenDb();
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("m000001"), "<none>");
}

TEST_F(IngestTest, ManifestEditsAppliedInOrderAndDamageNamed) {
  OpenDb();
  for (int i = 0; i < 2000; ++i) Put("k" + std::to_string(i), std::string(100, 'x'));
  db_->CompactRange(nullptr, nullptr);  // files added and deleted over several edits
  db_.reset();
  Result<li::ManifestState> state = li::ReadManifest(leveldb::Env::Default(), db_path_);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->comparator, "leveldb.BytewiseComparator");
  // Exactly the live files: each exists, and the levels' sizes add up.
  size_t files = 0;
  for (int l = 0; l < li::kLevels; ++l) {
    for (const li::LiveFile& f : state->levels[l]) {
      char name[32];
      std::snprintf(name, sizeof name, "%06llu.ldb", static_cast<unsigned long long>(f.number));
      EXPECT_TRUE(std::filesystem::exists(db_path_ + "/" + name)) << name;
      EXPECT_EQ(std::filesystem::file_size(db_path_ + "/" + name), f.size_bytes);
      ++files;
    }
  }
  size_t on_disk = 0;
  for (const auto& e : std::filesystem::directory_iterator(db_path_)) {
    if (e.path().extension() == ".ldb") ++on_disk;
  }
  EXPECT_EQ(files, on_disk);

  // A byte changed in the MANIFEST's records is damage, named.
  const std::string manifest = db_path_ + "/" + state->manifest_name;
  std::string bytes;
  {
    std::ifstream in(manifest, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(bytes.size(), 20u);
  std::string damaged = bytes;
  damaged[12] ^= 0x40;
  std::ofstream(manifest, std::ios::binary | std::ios::trunc) << damaged;
  Result<li::ManifestState> bad = li::ReadManifest(leveldb::Env::Default(), db_path_);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(bad.status().message().find(state->manifest_name), std::string::npos);
  // A last record cut short (a write a crash interrupted) is left out.
  std::string cut = bytes;
  li::ManifestState extra = *state;
  extra.next_file += 100;
  leveldb_files::AppendLogRecord(&cut, li::EncodeSnapshot(extra));
  cut.resize(cut.size() - 3);
  std::ofstream(manifest, std::ios::binary | std::ios::trunc) << cut;
  Result<li::ManifestState> torn = li::ReadManifest(leveldb::Env::Default(), db_path_);
  ASSERT_TRUE(torn.ok()) << torn.status().ToString();
  EXPECT_EQ(torn->next_file, state->next_file);
}

// ---------------------------------------------------------------------------
// Through the embedded store's sink.

TableDescriptor OneFamily(const std::string& name) {
  TableDescriptor d;
  d.table = name;
  FamilyDescriptor f;
  f.name = "d";
  f.versions = 1000;
  d.families = {f};
  return d;
}

struct Written {
  std::vector<std::string> cells;  // "row/qualifier/ts=value", every version
  SinkStats stats;
};

// Every cell of table `name`, every version.
std::vector<std::string> ReadAll(LevelDbStore* store, const std::string& name) {
  ReadOptions ro;
  ro.max_versions = 1 << 20;
  Result<std::unique_ptr<CellReader>> r = store->NewReader(name, ro);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  std::vector<std::string> out;
  if (!r.ok()) return out;
  for (; (*r)->Valid(); (*r)->Next()) {
    const CellView c = (*r)->cell();
    out.push_back(std::string(c.row) + "/" + std::string(c.qualifier) + "/" +
                  std::to_string(c.timestamp_ms) + "=" + std::string(c.value));
  }
  EXPECT_TRUE((*r)->status().ok()) << (*r)->status().ToString();
  return out;
}

class IngestSinkTest : public IngestTest {
 protected:
  // Opens the store at dir_/NAME with `table_files`, 4 KiB batches.
  std::unique_ptr<LevelDbStore> OpenStore(const std::string& name, bool table_files,
                                          leveldb::Env* env = nullptr) {
    StoreOptions o;
    o.write_table_files = table_files;
    o.batch_bytes = 4096;
    Result<std::unique_ptr<LevelDbStore>> r = LevelDbStore::Open(dir_ + "/" + name, o, env);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return nullptr;
    Status s = (*r)->CreateTable(OneFamily("t"));
    EXPECT_TRUE(s.ok()) << s.ToString();
    return std::move(r).value();
  }

  // Puts `cells` (row, qualifier, timestamp, value) through one sink of
  // table t, calling Flush after each index in `flush_after`; Close.
  static SinkStats Load(
      LevelDbStore* store,
      const std::vector<std::tuple<std::string, std::string, int64_t, std::string>>& cells,
      const std::vector<size_t>& flush_after = {}) {
    Result<std::unique_ptr<CellSink>> sink = store->NewSink("t");
    EXPECT_TRUE(sink.ok()) << sink.status().ToString();
    if (!sink.ok()) return SinkStats();
    for (size_t i = 0; i < cells.size(); ++i) {
      const auto& [row, q, ts, v] = cells[i];
      Status s = (*sink)->Put(CellView{row, "d", q, ts, CellType::kPut, v});
      EXPECT_TRUE(s.ok()) << s.ToString();
      if (std::find(flush_after.begin(), flush_after.end(), i) != flush_after.end()) {
        s = (*sink)->Flush();
        EXPECT_TRUE(s.ok()) << s.ToString();
      }
    }
    Status s = (*sink)->Close();
    EXPECT_TRUE(s.ok()) << s.ToString();
    return (*sink)->stats();
  }
};

// The first difference of two cell lists, or "" when they are equal.
std::string FirstDifference(const std::vector<std::string>& got,
                            const std::vector<std::string>& want) {
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    if (got[i] != want[i]) return "cell " + std::to_string(i) + ": " + got[i] + " != " + want[i];
  }
  if (got.size() != want.size()) {
    return std::to_string(got.size()) + " cells, not " + std::to_string(want.size());
  }
  return "";
}

using Cells = std::vector<std::tuple<std::string, std::string, int64_t, std::string>>;

// Rows in order, each with a few cells; every 50th cell put again with
// another value (same coordinates: the later one wins), some of them the
// last cell of a batch.
Cells OrderedCellsWithRepeats(int rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Cells cells;
  char row[16];
  for (int r = 0; r < rows; ++r) {
    std::snprintf(row, sizeof row, "r%06d", r);
    for (int q = 0; q < 3; ++q) {
      std::string v(1 + rng() % 200, static_cast<char>('a' + rng() % 26));
      cells.emplace_back(row, "q" + std::to_string(q), 1000 + (rng() % 3), v);
      if (rng() % 50 == 0) cells.emplace_back(row, "q" + std::to_string(q), 1000, "again");
    }
  }
  return cells;
}

TEST_F(IngestSinkTest, TableFilesHoldWhatTheWritePathHolds) {
  const Cells cells = OrderedCellsWithRepeats(6000, 1);
  std::unique_ptr<LevelDbStore> files = OpenStore("files", true);
  std::unique_ptr<LevelDbStore> path = OpenStore("path", false);
  ASSERT_TRUE(files && path);
  const SinkStats a = Load(files.get(), cells, {99, 5000});
  const SinkStats b = Load(path.get(), cells, {99, 5000});
  EXPECT_EQ(a.cells, b.cells);
  EXPECT_EQ(a.overwritten, b.overwritten);
  EXPECT_GT(a.overwritten, 0u);
  const std::vector<std::string> want = ReadAll(path.get(), "t");
  EXPECT_EQ(FirstDifference(ReadAll(files.get(), "t"), want), "");
  // And after the store closed (sealed) and opened again.
  files.reset();
  files = OpenStore("files", true);
  ASSERT_TRUE(files);
  EXPECT_EQ(FirstDifference(ReadAll(files.get(), "t"), want), "");
  // No cell went through LevelDB's log: every table file but the small
  // ones of the descriptor and state is one the sink wrote.
  std::ifstream log(dir_ + "/files/LOG");
  std::string line;
  while (std::getline(log, line)) EXPECT_EQ(line.find("Compacting"), std::string::npos) << line;
}

TEST_F(IngestSinkTest, ABatchOutOfOrderAfterCellsWereWritten) {
  // A Flush writes rows r003000 on; the rows after it sort before them.
  Cells cells;
  for (int r = 3000; r < 5000; ++r) cells.emplace_back("r" + std::to_string(r), "q", 1, "late");
  const size_t flushed = cells.size() - 1;
  for (int r = 1000; r < 3500; ++r) cells.emplace_back("r" + std::to_string(r), "q", 1, "early");
  std::unique_ptr<LevelDbStore> files = OpenStore("files", true);
  std::unique_ptr<LevelDbStore> path = OpenStore("path", false);
  ASSERT_TRUE(files && path);
  const SinkStats a = Load(files.get(), cells, {flushed});
  const SinkStats b = Load(path.get(), cells, {flushed});
  EXPECT_EQ(a.overwritten, 500u);
  EXPECT_EQ(b.overwritten, 500u);
  const std::vector<std::string> got = ReadAll(files.get(), "t");
  EXPECT_EQ(FirstDifference(got, ReadAll(path.get(), "t")), "");
  ASSERT_EQ(got.size(), 4000u);
  EXPECT_EQ(got.front(), "r1000/q/1=early");
  EXPECT_EQ(got[2400], "r3400/q/1=early");  // put after "late": the later put wins
  EXPECT_EQ(got.back(), "r4999/q/1=late");
}

// Rows a RowWriter deleted leave LevelDB's deletion markers in the table's
// range: the table holds no cell, but table files there would be masked by
// them once compacted. Their cells go through LevelDB's write path.
TEST_F(IngestSinkTest, DeletionMarkersInTheRangeSendTheCellsThroughTheWritePath) {
  std::unique_ptr<LevelDbStore> store = OpenStore("s", true);
  ASSERT_TRUE(store);
  Cells cells;
  for (int r = 0; r < 2000; ++r) cells.emplace_back("r" + std::to_string(r), "q", 1, "first");
  Load(store.get(), cells);
  {
    Result<std::unique_ptr<RowWriter>> w = store->NewRowWriter("t");
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    for (int r = 0; r < 2000; ++r) {
      ASSERT_TRUE((*w)->ReplaceRow("r" + std::to_string(r), CellBatch(), "").ok());
    }
    ASSERT_TRUE((*w)->Sync().ok());
  }
  ASSERT_TRUE(ReadAll(store.get(), "t").empty());
  for (auto& c : cells) std::get<3>(c) = "second";
  Load(store.get(), cells);
  std::vector<std::string> got = ReadAll(store.get(), "t");
  ASSERT_EQ(got.size(), 2000u);
  for (const std::string& g : got) EXPECT_NE(g.find("=second"), std::string::npos) << g;
  store.reset();
  store = OpenStore("s", true);
  ASSERT_TRUE(store);
  got = ReadAll(store.get(), "t");
  EXPECT_EQ(got.size(), 2000u);
  for (const auto& e : std::filesystem::directory_iterator(dir_ + "/s")) {
    EXPECT_EQ(e.path().filename().string().rfind(li::kPendingPrefix, 0), std::string::npos);
  }
}

TEST_F(IngestSinkTest, TableFilesARunLeftBehindAreRemovedAtOpen) {
  std::unique_ptr<LevelDbStore> store = OpenStore("s", true);
  ASSERT_TRUE(store);
  {
    Result<std::unique_ptr<CellSink>> sink = store->NewSink("t");
    ASSERT_TRUE(sink.ok());
    for (int r = 0; r < 20000; ++r) {
      ASSERT_TRUE((*sink)
                      ->Put(CellView{"r" + std::to_string(100000 + r), "d", "q", 1, CellType::kPut,
                                     std::string(100, 'v')})
                      .ok());
    }
    // Not closed: as a run killed here leaves them (a sink destroyed
    // without Close removes its own; a killed process cannot).
    std::filesystem::path left =
        std::filesystem::path(dir_) / "s" / (std::string(li::kPendingPrefix) + "999999-1.ldb");
    std::ofstream(left) << "partial";
  }
  store.reset();
  bool pending = false;
  for (const auto& e : std::filesystem::directory_iterator(dir_ + "/s")) {
    pending |= e.path().filename().string().rfind(li::kPendingPrefix, 0) == 0;
  }
  EXPECT_TRUE(pending);
  store = OpenStore("s", true);
  ASSERT_TRUE(store);
  for (const auto& e : std::filesystem::directory_iterator(dir_ + "/s")) {
    EXPECT_NE(e.path().filename().string().rfind(li::kPendingPrefix, 0), 0u) << e.path();
  }
  EXPECT_TRUE(ReadAll(store.get(), "t").empty());
}

// A disk that fills at any write of a load of table files: Close fails,
// and the table is then empty or whole, never partly there; the store
// opens.
TEST_F(IngestSinkTest, AFullDiskAtAnyWriteLeavesTheTableEmptyOrWhole) {
  Cells cells;
  for (int r = 0; r < 3000; ++r) {
    cells.emplace_back("r" + std::to_string(100000 + r), "q", 1, std::string(300, 'v'));
  }
  int failures = 0, whole = 0;
  for (int allowed = 0;; allowed += 3) {
    SCOPED_TRACE("writes allowed: " + std::to_string(allowed));
    const std::string name = "s" + std::to_string(allowed);
    // The store is made with the default Env; only the load runs on a
    // filling disk.
    ASSERT_TRUE(OpenStore(name, true) != nullptr);
    testing::FullDiskEnv full(allowed);
    bool closed = false;
    {
      StoreOptions o;
      o.batch_bytes = 64 << 10;  // a few table files, each a few dozen writes
      Result<std::unique_ptr<LevelDbStore>> r =
          LevelDbStore::Open(dir_ + "/" + name, o, full.env());
      if (r.ok()) {
        Result<std::unique_ptr<CellSink>> sink = (*r)->NewSink("t");
        if (sink.ok()) {
          Status s;
          for (const auto& [row, q, ts, v] : cells) {
            s = (*sink)->Put(CellView{row, "d", q, ts, CellType::kPut, v});
            if (!s.ok()) break;
          }
          Status c = (*sink)->Close();
          closed = s.ok() && c.ok();
          if (!closed) {
            const Status& e = s.ok() ? c : s;
            EXPECT_TRUE(e.code() == StatusCode::kLocalIo || e.code() == StatusCode::kDataLoss)
                << e.ToString();
          }
        }
      }
    }
    std::unique_ptr<LevelDbStore> after = OpenStore(name, true);
    ASSERT_TRUE(after != nullptr);
    const size_t n = ReadAll(after.get(), "t").size();
    EXPECT_TRUE(n == 0 || n == cells.size()) << n;
    if (closed) {
      EXPECT_EQ(n, cells.size());
      ++whole;
      break;
    }
    ++failures;
    ASSERT_LT(allowed, 3000) << "never closed";
  }
  EXPECT_GT(failures, 5);
  EXPECT_EQ(whole, 1);
}

// The database is closed and opened again to add the files: a reader
// another thread keeps open holds that off until it is gone.
TEST_F(IngestSinkTest, TheSinkWaitsForAReaderAnotherThreadHolds) {
  std::unique_ptr<LevelDbStore> store = OpenStore("s", true);
  ASSERT_TRUE(store);
  Status created = store->CreateTable(OneFamily("other"));
  ASSERT_TRUE(created.ok());
  Result<std::unique_ptr<CellReader>> reader = store->NewReader("other", ReadOptions());
  ASSERT_TRUE(reader.ok());
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    reader->reset();
  });
  const auto start = std::chrono::steady_clock::now();
  Cells cells;
  for (int r = 0; r < 500; ++r) cells.emplace_back("r" + std::to_string(1000 + r), "q", 1, "v");
  Load(store.get(), cells);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  release.join();
  EXPECT_GE(waited, 0.25);
  EXPECT_EQ(ReadAll(store.get(), "t").size(), 500u);
}

// The store as a run killed while it added table files leaves it: marked
// open (not sealed).
void MarkOpen(const std::string& dir) {
  leveldb_marker::Marker open;
  open.format = leveldb_format::kFormatVersion;
  ASSERT_TRUE(leveldb_marker::WriteText(dir, leveldb_marker::Encode(open)).ok());
}

// A run killed after it renamed its table files to their numbers, before
// CURRENT named the MANIFEST that lists them: the files are not the
// store's. Opening the store drops them (LevelDB), and so does widen
// repair (it sets them aside), so the repaired store holds what the store
// held and no more.
TEST_F(IngestSinkTest, TableFilesNoManifestListsAreNotTheStoresNorTheRepairs) {
  Cells first, second;
  for (int r = 0; r < 300; ++r) first.emplace_back("r" + std::to_string(1000 + r), "q", 1, "a");
  for (int r = 0; r < 300; ++r) second.emplace_back("r" + std::to_string(2000 + r), "q", 1, "b");
  {
    std::unique_ptr<LevelDbStore> a = OpenStore("a", true);
    ASSERT_TRUE(a);
    Load(a.get(), first);
    std::unique_ptr<LevelDbStore> b = OpenStore("b", true);
    ASSERT_TRUE(b);
    Load(b.get(), second);
  }
  // b's largest table file (its cells) into a under a number above them all.
  std::string largest;
  uintmax_t size = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_ + "/b")) {
    if (e.path().extension() == ".ldb" && e.file_size() > size) {
      size = e.file_size();
      largest = e.path().string();
    }
  }
  ASSERT_FALSE(largest.empty());
  std::filesystem::copy_file(largest, dir_ + "/a/099999.ldb");
  MarkOpen(dir_ + "/a");

  Result<RepairReport> report = RepairLevelDbStore(dir_ + "/a", dir_ + "/repaired");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_NE(std::find(report->set_aside.begin(), report->set_aside.end(), "099999.ldb"),
            report->set_aside.end());
  {
    StoreOptions o;
    o.create_if_missing = false;
    Result<std::unique_ptr<LevelDbStore>> repaired = LevelDbStore::Open(dir_ + "/repaired", o);
    ASSERT_TRUE(repaired.ok()) << repaired.status().ToString();
    const std::vector<std::string> got = ReadAll(repaired->get(), "t");
    ASSERT_EQ(got.size(), 300u);
    EXPECT_EQ(got.front(), "r1000/q/1=a");
  }
  std::unique_ptr<LevelDbStore> a = OpenStore("a", true);
  ASSERT_TRUE(a);
  EXPECT_EQ(ReadAll(a.get(), "t").size(), 300u);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/a/099999.ldb"));
}

// A MANIFEST an add wrote and never made live (numbered above the one
// CURRENT names) is removed when the store opens, with the files a run
// wrote and never added; LevelDB alone would keep it, and it would stay in
// the store's seal.
TEST_F(IngestSinkTest, AManifestNeverMadeLiveIsRemovedAtOpen) {
  Cells cells;
  for (int r = 0; r < 300; ++r) cells.emplace_back("r" + std::to_string(1000 + r), "q", 1, "a");
  {
    std::unique_ptr<LevelDbStore> s = OpenStore("s", true);
    ASSERT_TRUE(s);
    Load(s.get(), cells);
  }
  const std::string dir = dir_ + "/s";
  std::ofstream(dir + "/MANIFEST-999998") << "never made live";
  std::ofstream(dir + "/" + std::string(li::kPendingPrefix) + "1-1.ldb") << "never added";
  MarkOpen(dir);
  {
    std::unique_ptr<LevelDbStore> s = OpenStore("s", true);
    ASSERT_TRUE(s);
    EXPECT_EQ(ReadAll(s.get(), "t").size(), 300u);
  }
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_NE(name, "MANIFEST-999998");
    EXPECT_NE(name.rfind(li::kPendingPrefix, 0), 0u) << name;
  }
  std::ifstream marker(dir + "/" + leveldb_marker::kMarkerFile);
  const std::string sealed((std::istreambuf_iterator<char>(marker)),
                           std::istreambuf_iterator<char>());
  EXPECT_EQ(sealed.find("MANIFEST-999998"), std::string::npos);
  EXPECT_NE(sealed.find("closed"), std::string::npos);
}

// The last cell of each batch waits for the next batch (a later cell of
// the same coordinates would replace it): at the end it goes with the
// batch before it, not into a table file of its own.
TEST_F(IngestSinkTest, NoTableFileOfOneCell) {
  std::unique_ptr<LevelDbStore> s = OpenStore("s", true);
  ASSERT_TRUE(s);
  Cells cells;
  for (int r = 0; r < 5000; ++r) {
    cells.emplace_back("r" + std::to_string(100000 + r), "q", 1, std::string(100, 'v'));
  }
  Load(s.get(), cells, {999, 2999});  // three flushes, each adding files
  s.reset();
  Result<li::ManifestState> state = li::ReadManifest(leveldb::Env::Default(), dir_ + "/s");
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  ASSERT_FALSE(state->levels[6].empty());
  for (const li::LiveFile& f : state->levels[6]) {
    // The cells' files hold hundreds of cells; a one-cell file is ~150 bytes.
    if (li::UserKey(f.smallest).rfind(std::string(1, leveldb_format::kCellTag), 0) != 0) continue;
    EXPECT_NE(li::UserKey(f.smallest), li::UserKey(f.largest)) << "file " << f.number;
  }
}

}  // namespace
}  // namespace widen
