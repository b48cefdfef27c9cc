// The embedded store never serves damaged bytes and never makes damage
// permanent: a small store is built through the store API and sealed, then
// seeded trials change bytes of (or cut short) each kind of its files — the
// logs, the table files, the MANIFEST, CURRENT and widen's marker — and read
// the whole store back. Each trial either reads exactly what the undamaged
// store holds, or fails with DataLoss naming the damaged file; after a
// failure the damaged file is still there, byte for byte, and a second open
// fails the same way. Also: widen repair on damaged copies.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <leveldb/db.h>

#include "common/bytes.h"
#include "common/table_descriptor.h"
#include "store/leveldb_files_internal.h"
#include "store/leveldb_marker_internal.h"
#include "store/leveldb_repair.h"
#include "store/leveldb_store.h"
#include "store/table_state.h"
#include "tests/store/full_disk_env.h"

namespace widen {
namespace {

namespace fs = std::filesystem;
namespace lfiles = leveldb_files;

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void CopyDir(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::remove_all(to, ec);
  fs::copy(from, to, fs::copy_options::recursive);
}

TableDescriptor Table(const std::string& full_name, std::vector<FamilyDescriptor> families) {
  TableDescriptor d;
  SplitTableName(full_name, &d.name_space, &d.table);
  d.families = std::move(families);
  return d;
}

FamilyDescriptor Family(std::string name, int versions) {
  FamilyDescriptor f;
  f.name = std::move(name);
  f.versions = versions;
  return f;
}

std::string RandomValue(std::mt19937_64& rng) {
  std::string v(16 + rng() % 180, '\0');
  for (char& c : v) c = static_cast<char>(rng());
  return v;
}

// Everything a store holds, as text: every table's descriptor, every live
// cell of every version, every table state. `error` gets the first error.
std::string Dump(LevelDbStore* store, Status* error) {
  *error = Status::OK();
  std::string out;
  Result<std::vector<TableDescriptor>> tables = store->ListTables();
  if (!tables.ok()) {
    *error = tables.status();
    return out;
  }
  for (const TableDescriptor& d : *tables) {
    out += "table " + EncodeTableDescriptor(d) + "\n";
    ReadOptions ro;
    ro.max_versions = INT_MAX;
    ro.now_ms = 1;
    Result<std::unique_ptr<CellReader>> reader = store->NewReader(d.FullName(), ro);
    if (!reader.ok()) {
      *error = reader.status();
      return out;
    }
    for (; (*reader)->Valid(); (*reader)->Next()) {
      const CellView c = (*reader)->cell();
      out += ToStringBinary(c.row) + " " + std::string(c.family) + ":" +
             ToStringBinary(c.qualifier) + " @" + std::to_string(c.timestamp_ms) + " = " +
             ToStringBinary(c.value) + "\n";
    }
    if (!(*reader)->status().ok()) {
      *error = (*reader)->status();
      return out;
    }
  }
  Result<std::unique_ptr<StateStore>> states = store->NewStateStore();
  if (!states.ok()) {
    *error = states.status();
    return out;
  }
  auto listed = (*states)->List();
  if (!listed.ok()) {
    *error = listed.status();
    return out;
  }
  for (const auto& [name, state] : *listed) {
    out += "state " + name + " v" + std::to_string(state.version) + " " +
           HexBytes(EncodeTableState(state).value()) + "\n";
  }
  return out;
}

// Opens the store at `path` (never creating it) and dumps it.
std::string OpenAndDump(const std::string& path, Status* error) {
  StoreOptions so;
  so.create_if_missing = false;
  Result<std::unique_ptr<LevelDbStore>> store = LevelDbStore::Open(path, so);
  if (!store.ok()) {
    *error = store.status();
    return "";
  }
  return Dump(store->get(), error);
}

// Builds the reference store: two tables written through sinks (so their
// cells sit in table files), then more versions flushed but not synced and
// the table states (so the log holds cells and states at close).
void BuildReference(const std::string& path) {
  std::mt19937_64 rng(20240613);
  Result<std::unique_ptr<LevelDbStore>> opened = LevelDbStore::Open(path, StoreOptions());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  LevelDbStore* store = opened->get();
  ASSERT_TRUE(store->CreateTable(Table("shop:orders", {Family("d", 3), Family("o", 1)})).ok());
  ASSERT_TRUE(store->CreateTable(Table("shop:customers", {Family("c", 1)})).ok());
  auto write = [&](const std::string& table, const std::string& family, int rows, int64_t ts,
                   bool close) {
    Result<std::unique_ptr<CellSink>> sink = store->NewSink(table);
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    for (int r = 0; r < rows; ++r) {
      char row[16];
      std::snprintf(row, sizeof(row), "r%05d", r * 7 % rows);
      for (const char* q : {"a", "b", "c"}) {
        const std::string value = RandomValue(rng);
        ASSERT_TRUE((*sink)->Put(CellView{row, family, q, ts, CellType::kPut, value}).ok());
      }
    }
    ASSERT_TRUE((close ? (*sink)->Close() : (*sink)->Flush()).ok());
  };
  write("shop:orders", "d", 400, 1000, true);
  write("shop:customers", "c", 150, 1000, true);
  // States first: a state write puts the memtable out to a table file.
  Result<std::unique_ptr<StateStore>> states = store->NewStateStore();
  ASSERT_TRUE(states.ok());
  for (const char* t : {"shop:orders", "shop:customers"}) {
    TableState s;
    s.status = TableStatus::kComplete;
    s.run_id = "run-1";
    s.started_ms = 1;
    s.finished_ms = 2;
    ASSERT_TRUE((*states)->Put(t, std::nullopt, s).ok());
    ASSERT_TRUE(store->SetTableMetadata(t, kStateMetadata, "complete").ok());
  }
  write("shop:orders", "d", 300, 2000, false);  // in the log only
  write("shop:orders", "o", 100, 2000, false);
  ASSERT_TRUE(store->Close().ok());
}

class CorruptionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string tmpl = (fs::temp_directory_path() / "widen_corruption_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = new std::string(tmpl);
    pristine_ = new std::string(*root_ + "/pristine");
    BuildReference(*pristine_);
    // The reference dump, from a copy: opening a store rewrites its files.
    CopyDir(*pristine_, *root_ + "/reference");
    Status error;
    reference_ = new std::string(OpenAndDump(*root_ + "/reference", &error));
    ASSERT_TRUE(error.ok()) << error.ToString();
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    if (root_ != nullptr) fs::remove_all(*root_, ec);
    delete root_;
    delete pristine_;
    delete reference_;
  }

  // The pristine store's files of one kind ("marker": widen's marker).
  static std::vector<std::string> FilesOf(const std::string& dir, const std::string& kind) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      const lfiles::FileKind k = lfiles::KindOf(name);
      const bool match = (kind == "log" && k == lfiles::FileKind::kLog) ||
                         (kind == "table" && k == lfiles::FileKind::kTable) ||
                         (kind == "manifest" && k == lfiles::FileKind::kManifest) ||
                         (kind == "current" && k == lfiles::FileKind::kCurrent) ||
                         (kind == "marker" && name == leveldb_marker::kMarkerFile);
      if (match && e.file_size() > 0) out.push_back(name);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // The largest file of a kind (a table file with many blocks).
  static std::string LargestOf(const std::string& dir, const std::string& kind) {
    std::vector<std::string> files = FilesOf(dir, kind);
    return *std::max_element(files.begin(), files.end(), [&](const auto& a, const auto& b) {
      return fs::file_size(dir + "/" + a) < fs::file_size(dir + "/" + b);
    });
  }

  // A copy of the pristine store at `dir` without a seal (the marker's first
  // line only) and with one bit changed a third into its largest table file;
  // that file's name, *bytes its new content.
  static std::string DamageABlockUnsealed(const std::string& dir, std::string* bytes) {
    CopyDir(*pristine_, dir);
    WriteBytes(dir + "/" + leveldb_marker::kMarkerFile, "widen embedded store, format 1\n");
    const std::string table = LargestOf(dir, "table");
    *bytes = ReadBytes(dir + "/" + table);
    (*bytes)[bytes->size() / 3] = static_cast<char>((*bytes)[bytes->size() / 3] ^ 0x01);
    WriteBytes(dir + "/" + table, *bytes);
    return table;
  }

  static std::string* root_;
  static std::string* pristine_;
  static std::string* reference_;
};

std::string* CorruptionTest::root_ = nullptr;
std::string* CorruptionTest::pristine_ = nullptr;
std::string* CorruptionTest::reference_ = nullptr;

TEST_F(CorruptionTest, ReferenceHasEveryKindOfFile) {
  for (const char* kind : {"log", "table", "manifest", "current", "marker"}) {
    EXPECT_FALSE(FilesOf(*pristine_, kind).empty()) << kind;
  }
  EXPECT_GE(FilesOf(*pristine_, "table").size(), 2u);
  // The log holds cells: more than one 32 KiB block of them.
  EXPECT_GT(fs::file_size(*pristine_ + "/" + FilesOf(*pristine_, "log").back()), 32768u);
  EXPECT_NE(reference_->find("shop:orders"), std::string::npos);
}

// The sweep: >= 200 seeded trials over the file kinds.
TEST_F(CorruptionTest, DamagedStoreReadsBackWholeOrFailsWithDataLossNamingTheFile) {
  const uint64_t seed = 0x5EEDC0DE;
  std::mt19937_64 rng(seed);
  const std::vector<std::string> kinds = {"log", "table", "manifest", "current", "marker"};
  const int trials_per_kind = 60;
  std::map<std::string, std::map<std::string, int>> outcomes;  // kind -> outcome -> trials
  const auto started = std::chrono::steady_clock::now();
  const std::string trial_dir = *root_ + "/trial";
  for (int i = 0; i < trials_per_kind * static_cast<int>(kinds.size()); ++i) {
    const std::string& kind = kinds[i % kinds.size()];
    const std::vector<std::string> files = FilesOf(*pristine_, kind);
    const std::string name = files[rng() % files.size()];
    CopyDir(*pristine_, trial_dir);
    const std::string path = trial_dir + "/" + name;
    std::string bytes = ReadBytes(path);
    const size_t size = bytes.size();
    std::string what;
    switch (rng() % 4) {
      case 0: {  // one byte anywhere
        const size_t at = rng() % size;
        bytes[at] = static_cast<char>(bytes[at] ^ (1 + rng() % 255));
        what = "byte " + std::to_string(at) + " changed";
        break;
      }
      case 1: {  // a region of up to 32 bytes
        const size_t at = rng() % size;
        const size_t n = std::min<size_t>(size - at, 1 + rng() % 32);
        for (size_t k = 0; k < n; ++k) bytes[at + k] = static_cast<char>(rng());
        what = std::to_string(n) + " bytes from " + std::to_string(at) + " overwritten";
        break;
      }
      case 2: {  // cut short
        bytes.resize(rng() % size);
        what = "cut to " + std::to_string(bytes.size()) + " bytes";
        break;
      }
      default: {  // one byte of the last 64 (footers, the last log record)
        const size_t at = size - 1 - rng() % std::min<size_t>(size, 64);
        bytes[at] = static_cast<char>(bytes[at] ^ (1 + rng() % 255));
        what = "byte " + std::to_string(at) + " (near the end) changed";
        break;
      }
    }
    if (bytes == ReadBytes(*pristine_ + "/" + name)) continue;  // a no-op change
    WriteBytes(path, bytes);
    const std::string context =
        "trial " + std::to_string(i) + " (seed " + std::to_string(seed) + "): " + name + " " + what;

    Status error;
    const std::string dump = OpenAndDump(trial_dir, &error);
    if (error.ok()) {
      ASSERT_EQ(dump, *reference_) << context << ": read back other data with success";
      ++outcomes[kind]["same"];
      continue;
    }
    ASSERT_EQ(error.code(), StatusCode::kDataLoss) << context << ": " << error.ToString();
    ASSERT_NE(error.message().find(name), std::string::npos)
        << context << ": the message does not name the file: " << error.message();
    ++outcomes[kind]["DataLoss"];
    // Never made permanent: the damaged bytes are still there, and a second
    // open reports them again.
    ASSERT_TRUE(fs::exists(path)) << context << ": the damaged file was removed";
    ASSERT_EQ(ReadBytes(path), bytes) << context << ": the damaged file was rewritten";
    Status again;
    OpenAndDump(trial_dir, &again);
    ASSERT_EQ(again.code(), StatusCode::kDataLoss)
        << context << ": second open: " << again.ToString();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  int total = 0;
  for (const auto& [kind, by] : outcomes) {
    std::printf("corruption sweep: %-8s", kind.c_str());
    for (const auto& [outcome, n] : by) {
      std::printf(" %s %d", outcome.c_str(), n);
      total += n;
    }
    std::printf("\n");
    EXPECT_GT(by.count("DataLoss") ? by.at("DataLoss") : 0, 0) << kind << ": nothing detected";
  }
  std::printf("corruption sweep: %d trials, 0 wrong answers, %.1f s\n", total, seconds);
  EXPECT_GE(total, 200);
}

// A log the seal does not list would be replayed by LevelDB: refused.
TEST_F(CorruptionTest, ALogAddedToASealedStoreIsRefused) {
  const std::string dir = *root_ + "/added_log";
  CopyDir(*pristine_, dir);
  fs::copy_file(dir + "/" + LargestOf(dir, "log"), dir + "/999999.log");
  Status error;
  OpenAndDump(dir, &error);
  ASSERT_EQ(error.code(), StatusCode::kDataLoss) << error.ToString();
  EXPECT_NE(error.message().find("999999.log"), std::string::npos) << error.message();
}

// Without a seal (a store left by a crash, or by a widen without seals),
// LevelDB's paranoid checks still refuse a damaged log record instead of
// dropping it, and leave the log where it is.
TEST_F(CorruptionTest, UnsealedStoreRefusesADamagedLogAndKeepsIt) {
  const std::string dir = *root_ + "/unsealed";
  CopyDir(*pristine_, dir);
  WriteBytes(dir + "/" + leveldb_marker::kMarkerFile, "widen embedded store, format 1\n");
  const std::string log = LargestOf(dir, "log");
  std::string bytes = ReadBytes(dir + "/" + log);
  bytes[100] = static_cast<char>(bytes[100] ^ 0x40);  // inside the first record
  WriteBytes(dir + "/" + log, bytes);
  Status error;
  OpenAndDump(dir, &error);
  ASSERT_EQ(error.code(), StatusCode::kDataLoss) << error.ToString();
  EXPECT_NE(error.message().find(log), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("checksum"), std::string::npos) << error.message();
  EXPECT_EQ(ReadBytes(dir + "/" + log), bytes) << "the damaged log was kept as it is";
}

// A table file cut short is DataLoss naming it, also without a seal.
TEST_F(CorruptionTest, UnsealedStoreRefusesATableFileCutShort) {
  const std::string dir = *root_ + "/unsealed_table";
  CopyDir(*pristine_, dir);
  WriteBytes(dir + "/" + leveldb_marker::kMarkerFile, "widen embedded store, format 1\n");
  const std::string table = LargestOf(dir, "table");
  fs::resize_file(dir + "/" + table, fs::file_size(dir + "/" + table) / 2);
  Status error;
  OpenAndDump(dir, &error);
  ASSERT_EQ(error.code(), StatusCode::kDataLoss) << error.ToString();
  EXPECT_NE(error.message().find(table), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("cut short"), std::string::npos) << error.message();
}

// A changed byte inside a table block, without a seal: the read that meets
// it fails naming the file; nothing of the block is served.
TEST_F(CorruptionTest, UnsealedStoreNamesADamagedTableBlock) {
  const std::string dir = *root_ + "/unsealed_block";
  std::string bytes;
  const std::string table = DamageABlockUnsealed(dir, &bytes);
  Status error;
  OpenAndDump(dir, &error);
  ASSERT_EQ(error.code(), StatusCode::kDataLoss) << error.ToString();
  EXPECT_NE(error.message().find(table), std::string::npos) << error.message();
  EXPECT_EQ(ReadBytes(dir + "/" + table), bytes);
}

// A read that stops early (a start row, a prefix, a row limit) and meets a
// damaged block serves only cells the undamaged store holds, in its order,
// and ends with DataLoss where the damage is: never the rows after the
// block as if the block's rows did not exist (LevelDB's iterator moves on
// past a bad block and reports it only in its status).
TEST_F(CorruptionTest, AReadThatStopsEarlyNeverSkipsADamagedBlock) {
  const std::string dir = *root_ + "/partial_reads";
  std::string bytes;
  const std::string table = DamageABlockUnsealed(dir, &bytes);
  const std::string reference_dir = *root_ + "/partial_reference";
  CopyDir(*pristine_, reference_dir);

  auto open = [](const std::string& path) {
    StoreOptions so;
    so.create_if_missing = false;
    Result<std::unique_ptr<LevelDbStore>> store = LevelDbStore::Open(path, so);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return std::move(store).value();
  };
  // The cells a reader gives (at most `limit` rows), and its status.
  auto read = [](LevelDbStore* store, const ReadOptions& ro, Status* status) {
    std::vector<std::string> cells;
    Result<std::unique_ptr<CellReader>> reader = store->NewReader("shop:orders", ro);
    if (!reader.ok()) {
      *status = reader.status();
      return cells;
    }
    for (; (*reader)->Valid(); (*reader)->Next()) {
      const CellView c = (*reader)->cell();
      cells.push_back(ToStringBinary(c.row) + " " + std::string(c.family) + ":" +
                      ToStringBinary(c.qualifier) + " @" + std::to_string(c.timestamp_ms) + " = " +
                      ToStringBinary(c.value));
    }
    *status = (*reader)->status();
    return cells;
  };
  std::unique_ptr<LevelDbStore> damaged = open(dir);
  std::unique_ptr<LevelDbStore> reference = open(reference_dir);
  int failed = 0;
  int checked = 0;
  for (int r = 0; r < 400; r += 3) {
    char row[16];
    std::snprintf(row, sizeof(row), "r%05d", r);
    for (int variant = 0; variant < 2; ++variant) {
      ReadOptions ro;
      ro.max_versions = INT_MAX;
      ro.now_ms = 1;
      ro.limit_rows = 12;
      if (variant == 0) {
        ro.start_row = row;
      } else {
        ro.row_prefix = std::string(row).substr(0, 4);  // "r000".."r003"
      }
      SCOPED_TRACE(std::string(row) + (variant == 0 ? " start" : " prefix"));
      Status want_status, got_status;
      const std::vector<std::string> want = read(reference.get(), ro, &want_status);
      const std::vector<std::string> got = read(damaged.get(), ro, &got_status);
      ASSERT_TRUE(want_status.ok()) << want_status.ToString();
      ++checked;
      // What the damaged store gave is the reference's first cells...
      ASSERT_LE(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << i;
      // ...and when it gave fewer, it says why.
      if (got.size() < want.size()) {
        ++failed;
        EXPECT_EQ(got_status.code(), StatusCode::kDataLoss) << got_status.ToString();
        EXPECT_NE(got_status.message().find(table), std::string::npos) << got_status.message();
      } else {
        EXPECT_TRUE(got_status.ok()) << got_status.ToString();
      }
    }
  }
  // The damage lies inside the table's range: some reads met it.
  EXPECT_GT(failed, 0);
  EXPECT_GT(checked - failed, 0);
}

// A full disk is not damage: writes fail with LocalIo (exit 11), never
// DataLoss (6) or a server's Unavailable (3).
TEST_F(CorruptionTest, AFullDiskIsNotDamage) {
  const std::string dir = *root_ + "/full_disk";
  CopyDir(*pristine_, dir);
  int opened_after = 0;
  {
    testing::FullDiskEnv counting(-1);
    auto store = LevelDbStore::Open(dir, StoreOptions(), counting.env());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    opened_after = counting.writes();
  }
  testing::FullDiskEnv full(opened_after + 3);
  StoreOptions small;
  small.batch_bytes = 4096;
  auto store = LevelDbStore::Open(dir, small, full.env());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto sink = (*store)->NewSink("shop:orders");
  ASSERT_TRUE(sink.ok());
  Status s;
  for (int i = 0; i < 100000 && s.ok(); ++i) {
    const std::string row = "z" + std::to_string(i);
    s = (*sink)->Put(CellView{row, "d", "a", 5, CellType::kPut, std::string(100, 'v')});
  }
  if (s.ok()) s = (*sink)->Close();
  EXPECT_EQ(s.code(), StatusCode::kLocalIo) << s.ToString();
  EXPECT_NE(s.message().find("No space left on device"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(dir + "/"), std::string::npos) << "names the file: " << s.message();
}

// --- widen repair ---------------------------------------------------------

// The cells of a dump (its "r..." lines), for subset checks.
std::set<std::string> CellLines(const std::string& dump) {
  std::set<std::string> out;
  size_t p = 0;
  while (p < dump.size()) {
    const size_t e = dump.find('\n', p);
    const std::string line = dump.substr(p, e - p);
    if (!line.empty() && line[0] == 'r') out.insert(line);
    p = e + 1;
  }
  return out;
}

std::map<std::string, std::string> FilesBytes(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) out[e.path().filename().string()] = ReadBytes(e.path().string());
  }
  return out;
}

TEST_F(CorruptionTest, RepairOfADamagedTableBlockKeepsTheRestAndSaysWhatWasLost) {
  const std::string dir = *root_ + "/repair_table";
  const std::string into = *root_ + "/repaired_table";
  CopyDir(*pristine_, dir);
  const std::string table = LargestOf(dir, "table");
  std::string bytes = ReadBytes(dir + "/" + table);
  bytes[bytes.size() / 3] = static_cast<char>(bytes[bytes.size() / 3] ^ 0x01);
  WriteBytes(dir + "/" + table, bytes);
  const auto before = FilesBytes(dir);

  Result<RepairReport> report = RepairLevelDbStore(dir, into);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(FilesBytes(dir), before) << "the damaged store is left as it was";
  EXPECT_TRUE(report->lost_cells);
  ASSERT_FALSE(report->damage.empty());
  EXPECT_NE(report->damage[0].find(table), std::string::npos) << report->damage[0];
  ASSERT_EQ(report->tables.size(), 2u);

  Status error;
  const std::string dump = OpenAndDump(into, &error);
  ASSERT_TRUE(error.ok()) << error.ToString();
  const std::set<std::string> got = CellLines(dump);
  const std::set<std::string> want = CellLines(*reference_);
  EXPECT_LT(got.size(), want.size()) << "the damaged block's cells are gone";
  for (const std::string& cell : got) {
    ASSERT_TRUE(want.count(cell)) << "a cell the store never held: " << cell;
  }
  uint64_t cells = 0;
  for (const RepairedTable& t : report->tables) {
    cells += t.cells;
    EXPECT_TRUE(t.marked) << t.name;
    EXPECT_EQ(t.previous, "complete") << t.name;
  }
  EXPECT_EQ(cells, got.size());
  // Marked: the tables say they were repaired, their states no longer complete.
  StoreOptions so;
  so.create_if_missing = false;
  auto store = LevelDbStore::Open(into, so);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->DescribeTable("shop:orders")->metadata.at(kStateMetadata), "repaired");
  auto states = (*store)->NewStateStore();
  auto orders = (*states)->Get("shop:orders");
  ASSERT_TRUE(orders.ok() && orders->has_value());
  EXPECT_EQ((*orders)->status, TableStatus::kFailed);
}

TEST_F(CorruptionTest, RepairOfADamagedManifestLosesNothing) {
  const std::string dir = *root_ + "/repair_manifest";
  const std::string into = *root_ + "/repaired_manifest";
  CopyDir(*pristine_, dir);
  const std::string manifest = FilesOf(dir, "manifest").front();
  std::string bytes = ReadBytes(dir + "/" + manifest);
  bytes[10] = static_cast<char>(bytes[10] ^ 0x10);
  WriteBytes(dir + "/" + manifest, bytes);
  Status error;
  OpenAndDump(dir, &error);
  ASSERT_EQ(error.code(), StatusCode::kDataLoss);

  Result<RepairReport> report = RepairLevelDbStore(dir, into);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->lost_cells);
  ASSERT_EQ(report->damage.size(), 1u);
  EXPECT_NE(report->damage[0].find(manifest), std::string::npos) << report->damage[0];
  EXPECT_EQ(OpenAndDump(into, &error), *reference_);
  EXPECT_TRUE(error.ok()) << error.ToString();
}

TEST_F(CorruptionTest, RepairOfADamagedLogKeepsTheOtherRecords) {
  const std::string dir = *root_ + "/repair_log";
  const std::string into = *root_ + "/repaired_log";
  CopyDir(*pristine_, dir);
  const std::string log = LargestOf(dir, "log");
  std::string bytes = ReadBytes(dir + "/" + log);
  bytes[40000] = static_cast<char>(bytes[40000] ^ 0x01);  // in the second 32 KiB block
  WriteBytes(dir + "/" + log, bytes);

  Result<RepairReport> report = RepairLevelDbStore(dir, into);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->lost_cells);
  ASSERT_FALSE(report->damage.empty());
  EXPECT_NE(report->damage[0].find(log), std::string::npos) << report->damage[0];
  Status error;
  const std::set<std::string> got = CellLines(OpenAndDump(into, &error));
  ASSERT_TRUE(error.ok()) << error.ToString();
  const std::set<std::string> want = CellLines(*reference_);
  EXPECT_LT(got.size(), want.size());
  EXPECT_GT(got.size(), want.size() / 2) << "the table files and the other log blocks are kept";
  for (const std::string& cell : got) ASSERT_TRUE(want.count(cell)) << cell;
}

// Repair on seeded damage of every kind: the new store reads back, holds
// only cells the store held, and holds them all when the report says
// nothing was lost.
TEST_F(CorruptionTest, RepairNeverInventsCellsAndLosesNoneItDoesNotReport) {
  std::mt19937_64 rng(0xBADC0FFE);
  const std::vector<std::string> kinds = {"log", "table", "manifest", "current", "marker"};
  const std::set<std::string> want = CellLines(*reference_);
  int lossless = 0;
  for (int i = 0; i < 50; ++i) {
    const std::string dir = *root_ + "/repair_sweep";
    const std::string into = *root_ + "/repaired_sweep";
    std::error_code ec;
    fs::remove_all(into, ec);
    CopyDir(*pristine_, dir);
    const std::vector<std::string> files = FilesOf(dir, kinds[i % kinds.size()]);
    const std::string name = files[rng() % files.size()];
    std::string bytes = ReadBytes(dir + "/" + name);
    std::string what;
    if (rng() % 3 == 0) {
      bytes.resize(rng() % bytes.size());
      what = "cut to " + std::to_string(bytes.size());
    } else {
      const size_t at = rng() % bytes.size();
      bytes[at] = static_cast<char>(bytes[at] ^ (1 + rng() % 255));
      what = "byte " + std::to_string(at);
    }
    WriteBytes(dir + "/" + name, bytes);
    const std::string context = "trial " + std::to_string(i) + ": " + name + " " + what;
    Result<RepairReport> report = RepairLevelDbStore(dir, into);
    ASSERT_TRUE(report.ok()) << context << ": " << report.status().ToString();
    Status error;
    const std::string dump = OpenAndDump(into, &error);
    ASSERT_TRUE(error.ok()) << context << ": " << error.ToString();
    const std::set<std::string> got = CellLines(dump);
    for (const std::string& cell : got) {
      ASSERT_TRUE(want.count(cell)) << context << ": a cell the store never held: " << cell;
    }
    if (!report->lost_cells) {
      ++lossless;
      ASSERT_EQ(got, want) << context << ": cells lost, but the report says none";
    }
  }
  std::printf("repair sweep: 50 trials, %d without loss\n", lossless);
}

// A store whose marker was lost is not opened (LevelDB would recover what it
// found), and the message says how to get it back: repair copies every cell
// into a new store, saying the seal could not be checked.
TEST_F(CorruptionTest, RepairOfAStoreWhoseMarkerWasLostKeepsEveryCell) {
  const std::string dir = *root_ + "/repair_no_marker";
  const std::string into = *root_ + "/repaired_no_marker";
  CopyDir(*pristine_, dir);
  fs::remove(fs::path(dir) / leveldb_marker::kMarkerFile);
  StoreOptions so;
  so.create_if_missing = false;
  auto refused = LevelDbStore::Open(dir, so);
  ASSERT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("widen repair --target leveldb:" + dir),
            std::string::npos)
      << refused.status().message();
  EXPECT_FALSE(fs::exists(fs::path(dir) / leveldb_marker::kMarkerFile))
      << "the refusal wrote nothing";

  Result<RepairReport> report = RepairLevelDbStore(dir, into);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->lost_cells);
  ASSERT_FALSE(report->damage.empty());
  EXPECT_NE(report->damage[0].find("WIDEN_STORE' is missing"), std::string::npos)
      << report->damage[0];
  Status error;
  EXPECT_EQ(OpenAndDump(into, &error), *reference_);
  EXPECT_TRUE(error.ok()) << error.ToString();
}

// A LevelDB database that widen did not write is refused by repair too,
// and nothing is left at the new path.
TEST_F(CorruptionTest, RepairRefusesALevelDbDatabaseWidenDidNotWrite) {
  const std::string dir = *root_ + "/foreign_leveldb";
  const std::string into = *root_ + "/repaired_foreign";
  {
    leveldb::Options o;
    o.create_if_missing = true;
    leveldb::DB* db = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(o, dir, &db).ok());
    std::unique_ptr<leveldb::DB> owned(db);
    ASSERT_TRUE(owned->Put(leveldb::WriteOptions(), "some key", "some value").ok());
  }
  Result<RepairReport> report = RepairLevelDbStore(dir, into);
  ASSERT_EQ(report.status().code(), StatusCode::kFailedPrecondition) << report.status().ToString();
  EXPECT_NE(report.status().message().find("not a widen store"), std::string::npos)
      << report.status().message();
  EXPECT_FALSE(fs::exists(into));
  EXPECT_FALSE(fs::exists(fs::path(dir) / leveldb_marker::kMarkerFile));
}

TEST_F(CorruptionTest, RepairRefusesAnExistingTargetAndOneInsideTheStore) {
  const std::string dir = *root_ + "/repair_refusals";
  CopyDir(*pristine_, dir);
  fs::create_directories(*root_ + "/full");
  WriteBytes(*root_ + "/full/x", "x");
  EXPECT_EQ(RepairLevelDbStore(dir, *root_ + "/full").status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(RepairLevelDbStore(dir, dir + "/inner").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RepairLevelDbStore(dir, dir).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RepairLevelDbStore(*root_ + "/full", *root_ + "/new").status().code(),
            StatusCode::kFailedPrecondition);
  // In use: an open store is not repaired.
  StoreOptions so;
  so.create_if_missing = false;
  auto held = LevelDbStore::Open(dir, so);
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  EXPECT_EQ(RepairLevelDbStore(dir, *root_ + "/new").status().code(), StatusCode::kAborted);
  EXPECT_FALSE(fs::exists(*root_ + "/new"));
}

// --- the marker ----------------------------------------------------------

TEST(StoreMarkerTest, EveryChangedByteOrCutIsDamage) {
  leveldb_marker::Marker m;
  m.closed = true;
  m.files = {{"000005.ldb", 25013, std::nullopt},
             {"000008.log", 0, 0u},
             {"CURRENT", 16, 0x3f0c22a1u},
             {"MANIFEST-000006", 126, 0x0b5ad1e9u}};
  const std::string text = leveldb_marker::Encode(m);
  EXPECT_EQ(
      text,
      "widen embedded store, format 1\nclosed\n000005.ldb 25013 -\n000008.log 0 00000000\n"
      "CURRENT 16 3f0c22a1\nMANIFEST-000006 126 0b5ad1e9\nend " +
          [&] {
            char b[9];
            std::snprintf(b, sizeof(b), "%08x", lfiles::Crc32c(text.substr(0, text.rfind("end "))));
            return std::string(b);
          }() +
          "\n");
  Result<leveldb_marker::Marker> back = leveldb_marker::Decode(text, "m");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->closed);
  ASSERT_EQ(back->files.size(), 4u);
  EXPECT_EQ(back->files[2].crc, 0x3f0c22a1u);
  for (size_t i = 0; i < text.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string t = text;
      t[i] = static_cast<char>(t[i] ^ (1 << bit));
      EXPECT_EQ(leveldb_marker::Decode(t, "m").status().code(), StatusCode::kDataLoss)
          << "byte " << i << " bit " << bit;
    }
  }
  const size_t first_line = text.find('\n') + 1;
  for (size_t n = 0; n < text.size(); ++n) {
    Result<leveldb_marker::Marker> cut = leveldb_marker::Decode(text.substr(0, n), "m");
    if (n == first_line) {
      // Exactly the first line: a marker of a widen without seals.
      ASSERT_TRUE(cut.ok());
      EXPECT_FALSE(cut->closed);
    } else {
      EXPECT_EQ(cut.status().code(), StatusCode::kDataLoss) << "cut to " << n;
    }
  }
  // CRC32C's check value (RFC 3720): "123456789" -> 0xe3069283.
  EXPECT_EQ(lfiles::Crc32c("123456789"), 0xe3069283u);
  EXPECT_EQ(lfiles::Crc32cPortable("123456789"), 0xe3069283u);
}

// The processor's crc32 path gives the table's values at every length and
// alignment, in one call or continued piece by piece.
TEST(LevelDbCorruptionTest, Crc32cHardwareAndTableAgree) {
  std::string data(70000, '\0');
  uint32_t x = 12345;
  for (char& c : data) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 16);
  }
  for (size_t from : {0u, 1u, 3u, 7u}) {
    for (size_t n : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 1000u, 65536u}) {
      const std::string_view v(data.data() + from, n);
      EXPECT_EQ(lfiles::Crc32c(v), lfiles::Crc32cPortable(v)) << from << " " << n;
    }
  }
  const std::string_view all(data);
  uint32_t pieces = 0;
  for (size_t at = 0; at < all.size(); at += 4097)
    pieces = lfiles::Crc32c(all.substr(at, 4097), pieces);
  EXPECT_EQ(pieces, lfiles::Crc32cPortable(all));
}

}  // namespace
}  // namespace widen
