#include "store/leveldb_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include "common/bytes.h"
#include "store/leveldb_create_internal.h"
#include "store/leveldb_files_internal.h"
#include "store/leveldb_format_internal.h"
#include "store/leveldb_ingest_internal.h"
#include "store/leveldb_marker_internal.h"
#include "store/state_store.h"
#include "store/table_state.h"

namespace widen {

namespace lf = leveldb_format;
namespace lfiles = leveldb_files;
namespace lingest = leveldb_ingest;
namespace lmarker = leveldb_marker;

namespace {

// `holder`: FlockHolder's text, or "".
std::string InUseMessage(const std::string& context, const std::string& holder = "") {
  return context + ": the store is in use by another widen process" + holder +
         " (one process at a time may open it); run again when that one has ended";
}

Status FromLevelDb(const leveldb::Status& s, const std::string& context) {
  std::string m = context + ": " + s.ToString();
  if (s.IsNotFound()) return Status::NotFound(std::move(m));
  if (s.IsCorruption()) return Status::DataLoss(std::move(m));
  if (s.IsIOError()) {
    const std::string t = s.ToString();
    if (t.find("LOCK") != std::string::npos &&
        (t.find("already held") != std::string::npos ||
         t.find("temporarily unavailable") != std::string::npos)) {
      return Status::Aborted(InUseMessage(context));
    }
    // Every other I/O error of the embedded store is one of this machine's
    // file system (LevelDB's text names the file and gives strerror's
    // reason: "IO error: DIR/000012.log: No space left on device").
    return Status::LocalIo(std::move(m));
  }
  if (s.IsInvalidArgument()) return Status::InvalidArgument(std::move(m));
  if (s.IsNotSupportedError()) return Status::FailedPrecondition(std::move(m));
  return Status::Internal(std::move(m));
}

std::string Quoted(std::string_view bytes) { return "'" + ToStringBinary(bytes) + "'"; }

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A LevelDB iterator that is no longer Valid() once its status() is not OK.
// LevelDB's own iterator moves past a block that fails its checksum (or
// cannot be read) to the next one and reports the error only in status();
// a reader that stops early (scan --limit, a prefix, a row) or streams what
// it reads would serve the keys after the damage as if none were missing.
// Through this one every loop ends where the damage is met, and the
// status() check after it reports it.
// It also holds a shared lock on the database's use (Database::use_mu)
// while it lives, so that the database is not closed under it.
class StrictIterator final : public leveldb::Iterator {
 public:
  StrictIterator(leveldb::Iterator* inner, std::shared_lock<std::shared_timed_mutex> lock)
      : lock_(std::move(lock)), inner_(inner) {}
  bool Valid() const override { return inner_->Valid() && inner_->status().ok(); }
  void SeekToFirst() override { inner_->SeekToFirst(); }
  void SeekToLast() override { inner_->SeekToLast(); }
  void Seek(const leveldb::Slice& target) override { inner_->Seek(target); }
  void Next() override { inner_->Next(); }
  void Prev() override { inner_->Prev(); }
  leveldb::Slice key() const override { return inner_->key(); }
  leveldb::Slice value() const override { return inner_->value(); }
  leveldb::Status status() const override { return inner_->status(); }

 private:
  std::shared_lock<std::shared_timed_mutex> lock_;  // declared first: released last
  std::unique_ptr<leveldb::Iterator> inner_;
};

// The database after it could not be opened again (Database::AddTables):
// every call fails with the reason.
class ClosedDb final : public leveldb::DB {
 public:
  explicit ClosedDb(std::string why) : why_(std::move(why)) {}
  leveldb::Status Put(const leveldb::WriteOptions&, const leveldb::Slice&,
                      const leveldb::Slice&) override {
    return Error();
  }
  leveldb::Status Delete(const leveldb::WriteOptions&, const leveldb::Slice&) override {
    return Error();
  }
  leveldb::Status Write(const leveldb::WriteOptions&, leveldb::WriteBatch*) override {
    return Error();
  }
  leveldb::Status Get(const leveldb::ReadOptions&, const leveldb::Slice&, std::string*) override {
    return Error();
  }
  leveldb::Iterator* NewIterator(const leveldb::ReadOptions&) override {
    return leveldb::NewErrorIterator(Error());
  }
  const leveldb::Snapshot* GetSnapshot() override { return nullptr; }
  void ReleaseSnapshot(const leveldb::Snapshot*) override {}
  bool GetProperty(const leveldb::Slice&, std::string*) override { return false; }
  void GetApproximateSizes(const leveldb::Range*, int n, uint64_t* sizes) override {
    for (int i = 0; i < n; ++i) sizes[i] = 0;
  }
  void CompactRange(const leveldb::Slice*, const leveldb::Slice*) override {}

 private:
  leveldb::Status Error() const { return leveldb::Status::IOError("the store is closed", why_); }
  std::string why_;
};

}  // namespace

namespace leveldb_store_internal {

// The open database, shared by the store and its sinks and readers, with
// the store directory's lock. The cache is declared first so that it
// outlives the DB. The destructor closes the DB, then seals the store
// (store/leveldb_marker_internal.h) and releases the lock.
struct Database {
  std::string path;             // the store directory
  leveldb::Env* env = nullptr;  // LevelDB's Env (borrowed)
  int lock_fd = -1;             // the directory, flock()ed; -1: none
  // flock() took the directory's lock. Without it (a file system without
  // flock) only LevelDB's own lock keeps other processes out, and LevelDB
  // is never closed while the store is open: no table files are added.
  bool flock_held = false;
  bool seal_on_close = false;   // set once LevelDB opened the directory
  std::unique_ptr<leveldb::Cache> block_cache;
  // The open database. Every use of it (a call, a live iterator) holds
  // use_mu shared (Use, NewIterator); AddTables holds it exclusively while
  // it closes and reopens the database. Never null while the Database is
  // in use (ClosedDb after a failed reopen).
  std::unique_ptr<leveldb::DB> db;
  mutable std::shared_timed_mutex use_mu;
  // Serialises the state records' read-compare-writes (every StateStore
  // of this open store; the directory's lock keeps other processes out).
  std::mutex state_mu;
  // The key ranges the memtable may hold since WriteOutMemtable last ran,
  // each written by one kind of writer: table descriptors (tag 0x01, below
  // every cell key), cells of a sink (LevelDbSink) and state keys (above
  // every cell key). Only work depends on them: each table file holds one
  // range (see LevelDbStateStore::Write), and a sync of a few rows writes no
  // memtable out. Cells of a row writer (a sync's few rows) are not counted:
  // they spread over the key space anyway. All false at open: LevelDB's
  // recovery writes the memtable it rebuilt from the log out to a table file.
  enum Range { kDescriptors, kSinkCells, kState, kRanges };
  std::atomic<bool> in_memtable[kRanges] = {};

  /// Before a write of keys in `range`: writes the memtable out when it
  /// holds keys of another range, so that no table file spans two.
  void KeepApart(Range range) {
    for (int r = 0; r < kRanges; ++r) {
      if (r != range && in_memtable[r]) {
        WriteOutMemtable();
        return;
      }
    }
  }

  /// The database, held open for as long as the lease lives (to the end of
  /// the full expression in `db_->Use()->Write(...)`).
  struct Lease {
    std::shared_lock<std::shared_timed_mutex> lock;
    leveldb::DB* db;
    leveldb::DB* operator->() const { return db; }
  };
  Lease Use() const {
    std::shared_lock<std::shared_timed_mutex> lock(use_mu);
    return Lease{std::move(lock), db.get()};
  }

  /// A new iterator over the database (owned by the caller; a
  /// StrictIterator), which holds the database open while it lives.
  leveldb::Iterator* NewIterator(const leveldb::ReadOptions& options) const {
    std::shared_lock<std::shared_timed_mutex> lock(use_mu);
    leveldb::Iterator* inner = db->NewIterator(options);
    return new StrictIterator(inner, std::move(lock));
  }

  /// Opens LevelDB in `path` with the store's options (the database must
  /// exist) into `db`; LevelDB's error otherwise.
  leveldb::Status OpenLevelDb() {
    if (block_cache == nullptr) block_cache.reset(leveldb::NewLRUCache(lf::kBlockCacheBytes));
    leveldb::Options lo = lf::StoreOptions(block_cache.get());
    lo.create_if_missing = false;
    lo.env = env;
    leveldb::DB* raw = nullptr;
    leveldb::Status s = leveldb::DB::Open(lo, path, &raw);
    if (s.ok()) db.reset(raw);
    return s;
  }

  /// Adds table files written by a TableFileWriter (or ParallelTableWriter) to the database
  /// (leveldb_ingest::AddTables): waits until no other use of the database
  /// is under way (at most kAddWait), writes the memtable out, closes
  /// LevelDB, adds the files, and opens it again. Unavailable, with nothing
  /// changed, when another use (an iterator another thread keeps) held on
  /// past the wait; FailedPrecondition, with nothing changed, when the
  /// database holds keys within the files' key ranges. When the database
  /// cannot be opened again, the MANIFEST from before is restored and that
  /// error returned; when even that cannot be opened, every later use of
  /// the store fails with the reason, and the store is not sealed.
  Result<std::vector<lingest::AddedTable>> AddTables(
      const std::vector<lingest::BuiltTable>& tables) {
    std::unique_lock<std::shared_timed_mutex> lock(use_mu, std::defer_lock);
    if (!lock.try_lock_for(kAddWait)) {
      return Status::Unavailable("store '" + path + "' is being read");
    }
    WriteOutMemtableOf(db.get());  // the log then holds nothing LevelDB must recover
    db.reset();                    // waits for LevelDB's background work
    std::string previous;
    Result<std::vector<lingest::AddedTable>> added =
        lingest::AddTables(env, path, tables, &previous);
    std::string context = "opening store '" + path + "' again";
    leveldb::Status opened = OpenLevelDb();
    if (!opened.ok() && !previous.empty()) {
      const Status restored = lingest::RestoreCurrent(env, path, previous);
      if (restored.ok() && OpenLevelDb().ok()) {
        return FromLevelDb(opened, context + " with new table files added (they were left out)");
      }
      context += " after new table files were added to it (" +
                 (restored.ok() ? std::string("its MANIFEST from before did not open either")
                                 : "its MANIFEST from before could not be put back: " +
                                       restored.message()) +
                 "; the store is left as it is, marked open: open it again (widen scan), or "
                 "copy it with widen repair)";
    }
    if (!opened.ok()) {
      db.reset(new ClosedDb(opened.ToString()));
      seal_on_close = false;
      return FromLevelDb(opened, context);
    }
    for (auto& held : in_memtable) held = false;  // as after any open
    return added;
  }
  static constexpr std::chrono::seconds kAddWait{10};

  Database() = default;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  /// The Status for a failed LevelDB call on this store. A corruption
  /// becomes DataLoss naming the damaged file(s): the live table files whose
  /// keys meet [from, to) (to empty: no bound) are read whole with checksums
  /// verified, then the others when none of those is damaged. An I/O error
  /// naming a live table file becomes DataLoss when that file is damaged (cut
  /// short, unreadable). Other errors map as FromLevelDb.
  Status Error(const leveldb::Status& s, const std::string& context, std::string_view from = {},
               std::string_view to = {}) const;

  /// Writes the memtable out to a synced table file recorded in the synced
  /// MANIFEST, after any earlier one LevelDB switched away from (a
  /// compaction of the state keys' range, which holds no cell), and clears
  /// in_memtable (first: a write that races it sets its flag again).
  /// LevelDB's errors of that work surface on the next write.
  void WriteOutMemtable() { WriteOutMemtableOf(Use().db); }
  /// WriteOutMemtable of `of` (the caller holds use_mu).
  void WriteOutMemtableOf(leveldb::DB* of) {
    for (auto& held : in_memtable) held = false;
    const leveldb::Slice past_every_key(lf::kPastEveryKey.data(), lf::kPastEveryKey.size());
    of->CompactRange(&past_every_key, &past_every_key);
  }

  /// The number of the newest write-ahead log file (NNNNNN.log) in the
  /// store directory; 0 when none can be listed. LevelDB writes to the
  /// newest and starts a new one when it switches memtables.
  uint64_t NewestLogNumber() const {
    std::vector<std::string> children;
    if (!env->GetChildren(path, &children).ok()) return 0;
    uint64_t newest = 0;
    for (const std::string& c : children) {
      if (c.size() <= 4 || c.compare(c.size() - 4, 4, ".log") != 0) continue;
      uint64_t n = 0;
      bool digits = true;
      for (size_t i = 0; i + 4 < c.size() && digits; ++i) {
        digits = c[i] >= '0' && c[i] <= '9';
        n = n * 10 + static_cast<uint64_t>(c[i] - '0');
      }
      if (digits) newest = std::max(newest, n);
    }
    return newest;
  }
};

}  // namespace leveldb_store_internal

namespace {

using leveldb_store_internal::Database;

// A DataLoss for damage to the store at `path`, with the way out.
Status Damaged(const std::string& path, const std::string& what) {
  return Status::DataLoss(
      "store '" + path + "' is damaged: " + what +
      "; the damaged file was left as it is (`widen repair --target leveldb:" + path +
      " --into leveldb:NEWPATH` copies what can be read into a new store)");
}

std::string Joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

std::string PathIn(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

// Whether table file `number` is live in `db` now. A background compaction
// (which Open or a write may start) deletes the files it replaced after
// they left the live set, so a file found missing or unreadable after the
// list was read is damage only when it is still live afterwards (table
// files are written before they become live, and never change).
bool StillLive(leveldb::DB* db, uint64_t number) {
  std::string property;
  if (!db->GetProperty("leveldb.sstables", &property)) return true;
  for (const lfiles::LiveTable& t : lfiles::ParseLiveTables(property)) {
    if (t.number == number) return true;
  }
  return false;
}

// The damaged live table files of an open database (see Database::Error).
// With `only_file` set, just that one when it is a live table file.
std::vector<std::string> FindDamagedTables(leveldb::DB* db, leveldb::Env* env,
                                           const std::string& path, std::string_view from,
                                           std::string_view to,
                                           std::optional<std::string> only_file) {
  std::string property;
  if (!db->GetProperty("leveldb.sstables", &property)) return {};
  const std::vector<lfiles::LiveTable> tables = lfiles::ParseLiveTables(property);
  auto overlaps = [&](const lfiles::LiveTable& t) {
    if (only_file) return false;
    if (!t.keys_known) return true;
    if (!to.empty() && std::string_view(t.smallest) >= to) return false;
    return std::string_view(t.largest) >= from;
  };
  std::vector<std::string> damaged;
  for (int pass = 0; pass < 2 && damaged.empty(); ++pass) {
    for (const lfiles::LiveTable& t : tables) {
      if (only_file && lfiles::TableFileName(path, t.number) != *only_file) continue;
      if (overlaps(t) != (pass == 0)) continue;
      const std::string file = PathIn(path, lfiles::TableFileName(path, t.number));
      std::optional<std::string> problem = lfiles::CheckTableFile(env, file, t.size_bytes, nullptr);
      if (problem && StillLive(db, t.number)) {
        damaged.push_back("table file '" + file + "': " + *problem);
      }
    }
  }
  return damaged;
}

// The log and MANIFEST files of `path` whose records do not all read back.
std::vector<std::string> FindDamagedLogs(const std::string& path) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
    const std::string name = e.path().filename().string();
    const lfiles::FileKind kind = lfiles::KindOf(name);
    if (kind == lfiles::FileKind::kLog || kind == lfiles::FileKind::kManifest)
      names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> damaged;
  for (const std::string& name : names) {
    Result<std::optional<std::string>> problem = lfiles::CheckLogFile(PathIn(path, name));
    if (!problem.ok()) {
      damaged.push_back(problem.status().message());
    } else if (problem->has_value()) {
      damaged.push_back("file '" + PathIn(path, name) + "': " + **problem);
    }
  }
  return damaged;
}

}  // namespace

namespace leveldb_store_internal {

Database::~Database() {
  const bool opened = db != nullptr;
  db.reset();  // waits for LevelDB's background work
  block_cache.reset();
  if (opened && seal_on_close) {
    // When sealing fails the marker stays "open": the next open then checks
    // less, but never reports damage that is not there.
    Result<lmarker::Marker> seal = lmarker::Seal(path);
    if (seal.ok()) {
      seal->format = lf::kFormatVersion;
      (void)lmarker::WriteText(path, lmarker::Encode(*seal));
    }
  }
  if (lock_fd >= 0) ::close(lock_fd);
}

Status Database::Error(const leveldb::Status& s, const std::string& context, std::string_view from,
                       std::string_view to) const {
  if (!s.IsCorruption() && !s.IsIOError()) return FromLevelDb(s, context);
  const Status mapped = FromLevelDb(s, context);
  if (mapped.code() == StatusCode::kAborted) return mapped;
  // An I/O error names its file ("IO error: DIR/000005.ldb: Invalid
  // argument"): only a live table file is looked at (a full disk is not
  // damage).
  std::optional<std::string> only_file;
  if (s.IsIOError()) {
    const std::string text = s.ToString();
    size_t end = std::string::npos;
    for (const char* ext : {".ldb", ".sst"}) end = std::min(end, text.find(ext));
    if (end == std::string::npos) return mapped;
    size_t begin = end;
    while (begin > 0 && text[begin - 1] >= '0' && text[begin - 1] <= '9') --begin;
    only_file = text.substr(begin, end + 4 - begin);
  }
  std::vector<std::string> damaged = FindDamagedTables(Use().db, env, path, from, to, only_file);
  if (!damaged.empty()) return Damaged(path, context + ": " + Joined(damaged));
  if (s.IsCorruption()) return Damaged(path, context + ": " + s.ToString());
  return mapped;
}

}  // namespace leveldb_store_internal

namespace {

// ---------------------------------------------------------------------------
// Sink: sorted batches of cells, into table files written directly while
// the cells come in key order into a key range that held nothing, else each
// batch as one leveldb::WriteBatch.

// Threads a sink writes table files on (ParallelTableWriter): the cells
// of an external sort's merge reach the sink faster than one thread
// compresses and writes them.
constexpr int kTableFileThreads = 2;

// Whether two cells have the same coordinates (and so the same key).
bool SameCoordinates(const CellView& a, const CellView& b) {
  return a.timestamp_ms == b.timestamp_ms && a.type == b.type && a.qualifier == b.qualifier &&
         a.family == b.family && a.row == b.row;
}

class LevelDbSink final : public BufferedCellSink, private CellBatch::Handler {
 public:
  /// `starts_empty`: the table held no cell when the sink was made.
  /// `files`: write the cells into table files directly while they come in
  /// key order (null: through LevelDB's write path).
  LevelDbSink(std::shared_ptr<Database> db, std::string full_name, TableDescriptor descriptor,
              size_t batch_bytes, bool starts_empty,
              std::unique_ptr<lingest::ParallelTableWriter> files)
      : BufferedCellSink(batch_bytes, /*background=*/true),
        write_bytes_(batch_bytes),
        starts_empty_(starts_empty),
        db_(std::move(db)),
        full_name_(std::move(full_name)),
        descriptor_(std::move(descriptor)),
        files_(std::move(files)) {
    lf::AppendCellKeyPrefix(&key_, full_name_);
    prefix_bytes_ = key_.size();
    SetTable(descriptor_, CellLimits());  // the store's order holds negative timestamps
  }

  ~LevelDbSink() override { StopWriter(); }

 protected:
  Status WriteSorted(const CellBatch& batch) override {
    if (files_ != nullptr) return WriteFiles(batch);
    write_batch_.Clear();
    last_row_valid_ = false;
    batch.Iterate(this);
    leveldb::WriteOptions unsynced;
    unsynced.sync = false;
    leveldb::Status s = db_->Use()->Write(unsynced, &write_batch_);
    db_->in_memtable[Database::kSinkCells] = true;
    ++written_batches_;
    if (!s.ok()) {
      return db_->Error(
          s, "writing " + std::to_string(batch.size()) + " cells to table " + Quoted(full_name_));
    }
    return Status::OK();
  }

  // At the end of every Flush: the table files written so far join the
  // database (durable at once: they are synced, and so is the MANIFEST that
  // lists them).
  Status WaitWritten() override { return AddFiles(); }

  // A synced write makes durable the log it is written to, but not the log
  // LevelDB switched away from when a memtable filled (closed unsynced; its
  // cells are durable only once that memtable is written out as a table
  // file). So: write out the memtable (a compaction of a key range that
  // holds no key, which LevelDB begins by writing the memtable to a synced
  // table file and recording it in its synced MANIFEST, after any earlier
  // one), then one synced (empty) write, which also reports an error of
  // that background work. Cells written as table files are durable already.
  Status SyncWritten() override {
    if (written_batches_ == synced_batches_) return Status::OK();  // nothing new through LevelDB
    db_->WriteOutMemtable();
    leveldb::WriteBatch empty;
    leveldb::WriteOptions sync;
    sync.sync = true;
    leveldb::Status s = db_->Use()->Write(sync, &empty);
    if (!s.ok()) return db_->Error(s, "syncing table " + Quoted(full_name_));
    synced_batches_ = written_batches_;
    return Status::OK();
  }

  Result<bool> StartsEmpty() override { return starts_empty_; }

  // The table's cell keys from `from` to `to`, decoded (values not read).
  // Table files written so far join the database first, and the cells that
  // follow go through LevelDB's write path (they fall among those).
  Status ReadBack(const CellView& from, const CellView& to,
                  const std::function<Status(const CellView&)>& fn) override {
    WIDEN_RETURN_IF_ERROR(AddFiles());
    files_.reset();
    std::string lo, hi;
    lf::AppendCellKeyPrefix(&lo, full_name_);
    hi = lo;
    lf::AppendEscapedTerminated(&lo, from.row);
    lf::AppendCellKeyAfterRow(&lo, from);
    lf::AppendEscapedTerminated(&hi, to.row);
    lf::AppendCellKeyAfterRow(&hi, to);
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(lf::VerifiedReads()));
    lf::DecodedCellKey k;
    for (it->Seek(lo); it->Valid(); it->Next()) {
      const leveldb::Slice key = it->key();
      if (std::string_view(key.data(), key.size()) > std::string_view(hi)) break;
      if (!lf::DecodeCellKey(std::string_view(key.data(), key.size()), &k)) {
        return Status::DataLoss("table " + Quoted(full_name_) + ": a malformed cell key");
      }
      WIDEN_RETURN_IF_ERROR(
          fn(CellView{k.row, k.family, k.qualifier, k.timestamp_ms, k.type, std::string_view()}));
    }
    if (!it->status().ok()) {
      return db_->Error(it->status(), "reading table " + Quoted(full_name_), lo, hi);
    }
    return Status::OK();
  }

 private:
  // CellBatch::Handler: appends one cell to write_batch_. The cell passed
  // the checks (SetTable) before its batch reached WriteSorted.
  void Cell(const CellView& cell) override {
    EncodeKey(cell);
    write_batch_.Put(leveldb::Slice(key_.data(), key_.size()),
                     leveldb::Slice(cell.value.data(), cell.value.size()));
  }

  // Sets key_ to the cell's key. Cells of one row are adjacent in a sorted
  // batch: the encoded row is kept while the row stays (last_row_ is a view
  // into the batch, reset with each batch).
  void EncodeKey(const CellView& cell) {
    if (!last_row_valid_ || cell.row != last_row_) {
      key_.resize(prefix_bytes_);
      lf::AppendEscapedTerminated(&key_, cell.row);
      row_key_bytes_ = key_.size();
      last_row_ = cell.row;
      last_row_valid_ = true;
    } else {
      key_.resize(row_key_bytes_);
    }
    lf::AppendCellKeyAfterRow(&key_, cell);
  }

  // Adds the batch's cells to the table files, each key once: of cells with
  // the same coordinates the last one put wins, as in LevelDB (a sorted
  // batch keeps their order). The batch's last cell is held back until the
  // next batch shows it is not replaced.
  Status WriteFiles(const CellBatch& batch) {
    last_row_valid_ = false;
    const size_t n = batch.size();
    for (size_t i = 0; i < n; ++i) {
      const CellView c = batch.Get(i);
      if (i + 1 < n && SameCoordinates(c, batch.Get(i + 1))) continue;  // replaced
      EncodeKey(c);
      lingest::AppendValueTag(&key_);
      if (held_) {  // the first cell added of this batch
        if (held_key_ != key_) files_->Add(held_key_, held_value_);
        held_ = false;
        // The batch before, with its last cell, goes to a thread of its
        // own, once the segment is worth its own table files.
        if (files_->filling_bytes() >= kSegmentBytes) {
          WIDEN_RETURN_IF_ERROR(
              files_->EndSegment().WithContext("writing table " + Quoted(full_name_)));
        }
      }
      if (i + 1 == n) {
        held_key_.assign(key_);
        held_value_.assign(c.value);
        held_ = true;
      } else {
        files_->Add(key_, c.value);
      }
    }
    ++file_batches_;
    return Status::OK();
  }

  // Bytes (keys and values) of a segment handed to a thread of table files.
  static constexpr size_t kSegmentBytes = 4 << 20;

  // Ends the table file being written and adds the finished ones to the
  // database. When the database holds keys within their key ranges (a
  // table whose cells were deleted left markers of LevelDB's), or another
  // thread keeps reading it, their cells are written through LevelDB's
  // write path instead, and so is every later cell of the sink.
  Status AddFiles() {
    if (files_ == nullptr || file_batches_ == 0) return Status::OK();
    if (held_) {
      files_->Add(held_key_, held_value_);
      held_ = false;
    }
    Result<std::vector<lingest::BuiltTable>> taken = files_->TakeFinished();
    if (!taken.ok()) return taken.status().WithContext("writing table " + Quoted(full_name_));
    std::vector<lingest::BuiltTable> tables = std::move(taken).value();
    file_batches_ = 0;
    Result<std::vector<lingest::AddedTable>> added = db_->AddTables(tables);
    if (added.ok()) return Status::OK();
    const StatusCode code = added.status().code();
    if (code != StatusCode::kFailedPrecondition && code != StatusCode::kUnavailable) {
      for (const lingest::BuiltTable& t : tables) db_->env->RemoveFile(t.path);
      return added.status().WithContext("writing table " + Quoted(full_name_));
    }
    Status s = Replay(tables);
    for (const lingest::BuiltTable& t : tables) db_->env->RemoveFile(t.path);
    files_.reset();
    return s;
  }

  // Writes the entries of `tables` through LevelDB's write path.
  Status Replay(const std::vector<lingest::BuiltTable>& tables) {
    write_batch_.Clear();
    const auto write = [&]() {
      leveldb::WriteOptions unsynced;
      leveldb::Status s = db_->Use()->Write(unsynced, &write_batch_);
      db_->in_memtable[Database::kSinkCells] = true;
      ++written_batches_;
      write_batch_.Clear();
      if (!s.ok()) return db_->Error(s, "writing cells to table " + Quoted(full_name_));
      return Status::OK();
    };
    for (const lingest::BuiltTable& t : tables) {
      WIDEN_RETURN_IF_ERROR(
          lingest::ForEachEntry(db_->env, t, [&](std::string_view key, std::string_view value) {
            write_batch_.Put(leveldb::Slice(key.data(), key.size()),
                             leveldb::Slice(value.data(), value.size()));
            return write_batch_.ApproximateSize() >= write_bytes_ ? write() : Status::OK();
          }));
    }
    return write_batch_.ApproximateSize() > kEmptyWriteBatchBytes ? write() : Status::OK();
  }

  // leveldb::WriteBatch's header (sequence and count): the size of an empty batch.
  static constexpr size_t kEmptyWriteBatchBytes = 12;

  const size_t write_bytes_;  // bytes of one leveldb::WriteBatch
  const bool starts_empty_;
  const std::shared_ptr<Database> db_;
  const std::string full_name_;
  const TableDescriptor descriptor_;
  std::string key_;           // reused: table prefix, then one cell's key
  size_t prefix_bytes_ = 0;   // bytes of the table prefix in key_
  size_t row_key_bytes_ = 0;  // bytes of prefix + ESC(row) + terminator in key_
  std::string_view last_row_;
  bool last_row_valid_ = false;
  leveldb::WriteBatch write_batch_;  // reused across batches (keeps its buffer)
  uint64_t written_batches_ = 0;     // batches written through LevelDB's write path
  uint64_t synced_batches_ = 0;      // written_batches_ at the last SyncWritten
  // Table files written directly (null: not, or no more).
  std::unique_ptr<lingest::ParallelTableWriter> files_;
  uint64_t file_batches_ = 0;  // batches in files_ since they were last added
  bool held_ = false;          // the last cell of the last batch, not yet added
  std::string held_key_, held_value_;
};

// ---------------------------------------------------------------------------
// Sync: the rows of a table with their digests, and a writer of whole rows.

// Rows with their recorded digests (tag 0x04 keys), or, from_cells, every
// row the table holds a cell or a digest key of (each once, digest empty):
// a digest key whose row lost its cells (a repair) is listed too, so that
// sync removes it.
class LevelDbDigestReader final : public RowDigestReader {
 public:
  LevelDbDigestReader(std::shared_ptr<Database> db, const std::string& full_name, bool from_cells)
      : db_(std::move(db)),
        from_cells_(from_cells),
        digests_(db_->NewIterator(ReadOpts())),
        cells_(from_cells ? db_->NewIterator(ReadOpts()) : nullptr) {
    lf::AppendRowDigestPrefix(&digest_prefix_, full_name);
    lf::AppendCellKeyPrefix(&cell_prefix_, full_name);
    digests_->Seek(digest_prefix_);
    LoadDigest();
    if (cells_ != nullptr) {
      cells_->Seek(cell_prefix_);
      LoadCellRow();
    }
    Pick();
  }
  bool Valid() const override { return valid_; }
  void Next() override {
    // Advance every source that stands at the current row.
    if (have_digest_ && digest_row_ == row_) {
      digests_->Next();
      LoadDigest();
    }
    if (have_cell_row_ && cell_row_ == row_) {
      // Past every cell of this row: ESC(row) 0x00 0x02 sorts after the
      // row's terminator 0x00 0x01 and before any longer row's bytes.
      std::string next = cell_prefix_;
      next.append(escaped_row_);
      next.append("\x00\x02", 2);
      cells_->Seek(next);
      LoadCellRow();
    }
    Pick();
  }
  std::string_view row() const override { return row_; }
  std::string_view digest() const override { return digest_; }
  Status status() const override { return status_; }

 private:
  static leveldb::ReadOptions ReadOpts() {
    leveldb::ReadOptions o = lf::VerifiedReads();
    o.fill_cache = false;
    return o;
  }
  void LoadDigest() {
    have_digest_ = false;
    if (!digests_->Valid()) {
      if (!digests_->status().ok()) {
        status_ = FromLevelDb(digests_->status(), "reading row digests");
      }
      return;
    }
    const std::string_view key(digests_->key().data(), digests_->key().size());
    if (key.substr(0, digest_prefix_.size()) != digest_prefix_) return;
    digest_row_.assign(key.substr(digest_prefix_.size()));
    digest_value_.assign(digests_->value().data(), digests_->value().size());
    have_digest_ = true;
  }
  void LoadCellRow() {
    have_cell_row_ = false;
    if (!cells_->Valid()) {
      if (!cells_->status().ok()) status_ = FromLevelDb(cells_->status(), "reading rows");
      return;
    }
    const std::string_view key(cells_->key().data(), cells_->key().size());
    if (key.substr(0, cell_prefix_.size()) != cell_prefix_) return;
    lf::CellKeyParts parts;
    if (!lf::ParseCellKeySuffix(key.substr(cell_prefix_.size()), &parts)) {
      status_ = Status::DataLoss("a malformed cell key while listing rows");
      return;
    }
    escaped_cell_row_.assign(parts.row);
    cell_row_.clear();
    if (parts.row_escaped) {
      lf::AppendUnescaped(&cell_row_, parts.row);
    } else {
      cell_row_.assign(parts.row);
    }
    have_cell_row_ = true;
  }
  // The current row: the lower of the two sources' rows.
  void Pick() {
    valid_ = false;
    if (!status_.ok()) return;
    if (!have_digest_ && !have_cell_row_) return;
    if (have_cell_row_ && (!have_digest_ || cell_row_ <= digest_row_)) {
      row_ = cell_row_;
      escaped_row_ = escaped_cell_row_;
    } else {
      row_ = digest_row_;
    }
    digest_.clear();
    if (!from_cells_) digest_ = digest_value_;
    valid_ = true;
  }

  std::shared_ptr<Database> db_;
  const bool from_cells_;
  std::unique_ptr<leveldb::Iterator> digests_, cells_;
  std::string digest_prefix_, cell_prefix_;
  bool have_digest_ = false, have_cell_row_ = false;
  std::string digest_row_, digest_value_, cell_row_, escaped_cell_row_;
  std::string row_, escaped_row_, digest_;
  bool valid_ = false;
  Status status_;
};

// The rows of a given list that have a digest key, each with its digest:
// one point read per row.
class LevelDbListedDigestReader final : public RowDigestReader {
 public:
  LevelDbListedDigestReader(std::shared_ptr<Database> db, const std::string& full_name,
                            std::vector<std::string> rows)
      : db_(std::move(db)), rows_(std::move(rows)), it_(db_->NewIterator(lf::VerifiedReads())) {
    lf::AppendRowDigestPrefix(&prefix_, full_name);
    Load();
  }
  bool Valid() const override { return status_.ok() && at_ < rows_.size(); }
  void Next() override {
    ++at_;
    Load();
  }
  std::string_view row() const override { return rows_[at_]; }
  std::string_view digest() const override { return digest_; }
  Status status() const override { return status_; }

 private:
  // Moves to the first row from at_ on that has a digest. The rows are
  // sorted, so each Seek moves forward (mostly within blocks already read).
  void Load() {
    std::string key;
    for (; at_ < rows_.size(); ++at_) {
      key.assign(prefix_);
      key.append(rows_[at_]);
      it_->Seek(key);
      if (!it_->status().ok()) {
        status_ = FromLevelDb(it_->status(), "reading row digests");
        return;
      }
      if (it_->Valid() && it_->key() == leveldb::Slice(key)) {
        digest_.assign(it_->value().data(), it_->value().size());
        return;
      }
    }
  }

  std::shared_ptr<Database> db_;
  std::vector<std::string> rows_;
  std::unique_ptr<leveldb::Iterator> it_;  // before db_ goes (declared after it)
  std::string prefix_, digest_;
  size_t at_ = 0;
  Status status_;
};

// Rows replaced in write batches of about `batch_bytes`: the row's old cell
// keys deleted, its new cells and digest put, all in one batch (after
// DeferDigestsAndIndex the digest and the index entries are held back and
// written later, by kind).
class LevelDbRowWriter final : public RowWriter {
 public:
  LevelDbRowWriter(std::shared_ptr<Database> db, std::string full_name,
                   const TableDescriptor& descriptor, size_t batch_bytes)
      : db_(std::move(db)),
        full_name_(std::move(full_name)),
        checker_(descriptor, CellLimits()),
        batch_bytes_(batch_bytes) {
    lf::AppendCellKeyPrefix(&cell_prefix_, full_name_);
    lf::AppendRowDigestPrefix(&digest_prefix_, full_name_);
    lf::AppendSyncIndexPrefix(&index_prefix_, full_name_);
    synced_log_ = db_->NewestLogNumber();
  }
  ~LevelDbRowWriter() override = default;

  Status ReplaceRow(std::string_view row, const CellBatch& cells, std::string_view digest,
                    bool same_keys) override {
    for (size_t i = 0; i < cells.size(); ++i) {
      const CellView c = cells.Get(i);
      if (c.row != row) {
        return Status::Internal("table " + Quoted(full_name_) + ": a cell of row " + Quoted(c.row) +
                                " given for row " + Quoted(row));
      }
      WIDEN_RETURN_IF_ERROR(checker_.Check(c));
    }
    std::string row_key = cell_prefix_;
    lf::AppendEscapedTerminated(&row_key, row);
    new_keys_.resize(cells.size());
    for (size_t i = 0; i < cells.size(); ++i) {
      new_keys_[i].assign(row_key);
      lf::AppendCellKeyAfterRow(&new_keys_[i], cells.Get(i));
    }
    // The row's stored cells, every version and family, through an iterator
    // made after the last write (the uncommitted batch never holds this row:
    // rows come once each). A stored cell the new ones do not put again is
    // deleted; the others are overwritten by the Put. With same_keys there
    // is none of the first kind: nothing is read.
    uint64_t removed = 0;
    if (same_keys) {
      removed = cells.size();
    } else {
      sorted_keys_.clear();
      for (const std::string& k : new_keys_) sorted_keys_.emplace_back(k);
      std::sort(sorted_keys_.begin(), sorted_keys_.end());
      if (it_ == nullptr) it_.reset(db_->NewIterator(lf::VerifiedReads()));
      for (it_->Seek(row_key); it_->Valid(); it_->Next()) {
        const leveldb::Slice k = it_->key();
        if (!k.starts_with(leveldb::Slice(row_key))) break;
        ++removed;
        if (!std::binary_search(sorted_keys_.begin(), sorted_keys_.end(),
                                std::string_view(k.data(), k.size()))) {
          batch_.Delete(k);
        }
      }
      if (!it_->status().ok()) {
        return FromLevelDb(it_->status(),
                           "reading row " + Quoted(row) + " of " + Quoted(full_name_));
      }
    }
    for (size_t i = 0; i < cells.size(); ++i) {
      const CellView c = cells.Get(i);
      batch_.Put(leveldb::Slice(new_keys_[i]), leveldb::Slice(c.value.data(), c.value.size()));
      stats_.bytes_put += new_keys_[i].size() + c.value.size();
    }
    std::string dkey = digest_prefix_;
    dkey.append(row);
    const bool drop = digest.empty() || cells.empty();
    if (defer_) {
      WIDEN_RETURN_IF_ERROR(HoldBack(0, std::move(dkey), drop ? std::string_view() : digest, drop));
    } else if (drop) {
      batch_.Delete(dkey);
    } else {
      batch_.Put(dkey, leveldb::Slice(digest.data(), digest.size()));
    }
    stats_.cells_put += cells.size();
    stats_.cells_deleted += removed;
    if (!cells.empty()) {
      ++stats_.rows_written;
    } else if (removed > 0) {
      ++stats_.rows_deleted;
    }
    if (batch_.ApproximateSize() >= batch_bytes_) return Write(false);
    return Status::OK();
  }

  // A synced write makes durable every earlier write of the log it goes to.
  // While LevelDB has not switched to a newer log since the last sync, that
  // is every write of this writer: one synced (empty) write does. After a
  // switch, the logs before it were closed unsynced: as LevelDbSink::
  // SyncWritten, the memtable is written out first.
  Status Sync() override {
    WIDEN_RETURN_IF_ERROR(WriteHeldBack());
    WIDEN_RETURN_IF_ERROR(Write(false));
    if (!written_) return Status::OK();
    const uint64_t log = db_->NewestLogNumber();
    if (log == 0 || log != synced_log_) db_->WriteOutMemtable();
    leveldb::WriteBatch empty;
    leveldb::WriteOptions sync;
    sync.sync = true;
    leveldb::Status s = db_->Use()->Write(sync, &empty);
    if (!s.ok()) return FromLevelDb(s, "syncing table " + Quoted(full_name_));
    written_ = false;
    synced_log_ = db_->NewestLogNumber();
    return Status::OK();
  }

  const RowWriterStats& stats() const override { return stats_; }

  Status PutIndex(std::string_view key, std::string_view value) override {
    std::string k = index_prefix_;
    k.append(key);
    if (defer_) return HoldBack(IndexKind(key), std::move(k), value, false);
    batch_.Put(k, leveldb::Slice(value.data(), value.size()));
    if (batch_.ApproximateSize() >= batch_bytes_) return Write(false);
    return Status::OK();
  }

  Status DeleteIndex(std::string_view key) override {
    std::string k = index_prefix_;
    k.append(key);
    if (defer_) return HoldBack(IndexKind(key), std::move(k), std::string_view(), true);
    batch_.Delete(k);
    if (batch_.ApproximateSize() >= batch_bytes_) return Write(false);
    return Status::OK();
  }

  Status ClearIndex() override {
    WIDEN_RETURN_IF_ERROR(WriteHeldBack());
    WIDEN_RETURN_IF_ERROR(Write(false));
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(lf::VerifiedReads()));
    for (it->Seek(index_prefix_); it->Valid(); it->Next()) {
      if (!it->key().starts_with(leveldb::Slice(index_prefix_))) break;
      batch_.Delete(it->key());
      if (batch_.ApproximateSize() >= batch_bytes_) WIDEN_RETURN_IF_ERROR(Write(false));
    }
    if (!it->status().ok()) {
      return FromLevelDb(it->status(), "reading the sync index of " + Quoted(full_name_));
    }
    return Write(false);
  }

  Status Flush() override {
    WIDEN_RETURN_IF_ERROR(WriteHeldBack());
    return Write(false);
  }

  void DeferDigestsAndIndex() override { defer_ = true; }

 private:
  // A digest or index write held back (DeferDigestsAndIndex): its key,
  // value, and whether it deletes the key.
  struct HeldBack {
    std::string key;
    std::string value;
    bool drop = false;
  };
  // The kinds held apart: 0 the digests, 1 + the first byte of an index
  // entry's key (the index's kinds of entries: docs/format.md).
  static constexpr size_t kKinds = 257;
  // Bytes held back before they are written: a few memtables' worth of
  // cells lie between two writes of them.
  static constexpr size_t kHeldBackBytes = 16 << 20;

  static size_t IndexKind(std::string_view key) {
    return key.empty() ? 1 : 1 + static_cast<unsigned char>(key[0]);
  }

  Status HoldBack(size_t kind, std::string key, std::string_view value, bool drop) {
    held_bytes_ += key.size() + value.size() + sizeof(HeldBack);
    held_[kind].push_back(HeldBack{std::move(key), std::string(value), drop});
    if (held_bytes_ >= kHeldBackBytes) return WriteHeldBack();
    return Status::OK();
  }

  // Writes what was held back: the rows written so far, out to table files
  // of their own; then each kind, sorted by key (the last write of a key
  // last), out to a table file of its own. The kinds arrive nearly in key
  // order (the rows' order), so each kind's files follow one another.
  Status WriteHeldBack() {
    if (held_bytes_ == 0) return Status::OK();
    WIDEN_RETURN_IF_ERROR(Write(false));
    db_->WriteOutMemtable();
    for (std::vector<HeldBack>& kind : held_) {
      if (kind.empty()) continue;
      std::stable_sort(kind.begin(), kind.end(),
                       [](const HeldBack& a, const HeldBack& b) { return a.key < b.key; });
      for (const HeldBack& h : kind) {
        if (h.drop) {
          batch_.Delete(h.key);
        } else {
          batch_.Put(h.key, h.value);
        }
        if (batch_.ApproximateSize() >= batch_bytes_) WIDEN_RETURN_IF_ERROR(Write(false));
      }
      WIDEN_RETURN_IF_ERROR(Write(false));
      db_->WriteOutMemtable();
      kind.clear();
    }
    held_bytes_ = 0;
    return Status::OK();
  }

  Status Write(bool sync) {
    if (batch_.ApproximateSize() <= kEmptyBatchBytes) return Status::OK();
    leveldb::WriteOptions o;
    o.sync = sync;
    it_.reset();  // it would not see this write
    leveldb::Status s = db_->Use()->Write(o, &batch_);
    if (!s.ok()) return FromLevelDb(s, "writing rows of table " + Quoted(full_name_));
    batch_.Clear();
    written_ = true;
    return Status::OK();
  }

  // leveldb::WriteBatch's header (sequence and count): the size of an empty batch.
  static constexpr size_t kEmptyBatchBytes = 12;

  const std::shared_ptr<Database> db_;
  const std::string full_name_;
  CellChecker checker_;
  const size_t batch_bytes_;
  std::string cell_prefix_, digest_prefix_, index_prefix_;
  leveldb::WriteBatch batch_;
  bool written_ = false;
  // The newest log when every write before was durable (made, synced).
  uint64_t synced_log_ = 0;
  RowWriterStats stats_;
  // Reading stored rows: an iterator made after the last Write (null: none
  // yet), and the keys of the row being replaced (kept for their buffers).
  std::unique_ptr<leveldb::Iterator> it_;
  std::vector<std::string> new_keys_;
  std::vector<std::string_view> sorted_keys_;
  // DeferDigestsAndIndex: what is held back, by kind, and its bytes.
  bool defer_ = false;
  std::vector<std::vector<HeldBack>> held_ = std::vector<std::vector<HeldBack>>(kKinds);
  size_t held_bytes_ = 0;
};

// ---------------------------------------------------------------------------
// Reader: a leveldb::Iterator over the table's key range, with HBase's read
// rules applied as the keys go by (they arrive in HBase cell order).

class LevelDbReader final : public CellReader {
 public:
  LevelDbReader(std::shared_ptr<Database> db, std::string full_name,
                const TableDescriptor& descriptor, const ReadOptions& options, int64_t now_ms)
      : db_(std::move(db)), full_name_(std::move(full_name)), limit_rows_(options.limit_rows) {
    for (const FamilyDescriptor& f : descriptor.families) {
      FamilyRule rule;
      rule.name = f.name;
      rule.max_versions = std::min(options.max_versions, f.versions);
      rule.min_versions = f.min_versions;
      rule.oldest_ms = std::numeric_limits<int64_t>::min();
      if (f.ttl_seconds > 0) {
        int64_t ttl_ms = 0;
        int64_t oldest = 0;
        if (!__builtin_mul_overflow(f.ttl_seconds, int64_t{1000}, &ttl_ms) &&
            !__builtin_sub_overflow(now_ms, ttl_ms, &oldest)) {
          rule.oldest_ms = oldest;
        }
      }
      families_.push_back(std::move(rule));
    }

    std::string table_prefix;
    lf::AppendCellKeyPrefix(&table_prefix, full_name_);
    table_prefix_bytes_ = table_prefix.size();
    // Upper bound: the table's prefix with its 0x00 separator raised to 0x01.
    upper_ = table_prefix;
    upper_.back() = '\x01';
    if (!options.stop_row.empty()) {
      std::string stop = table_prefix;
      lf::AppendEscapedTerminated(&stop, options.stop_row);
      upper_ = std::min(upper_, stop);
    }
    lower_ = table_prefix;
    if (!options.start_row.empty()) {
      std::string start = table_prefix;
      lf::AppendEscapedTerminated(&start, options.start_row);
      lower_ = std::max(lower_, start);
    }
    if (!options.row_prefix.empty()) {
      // ESC(prefix) without its terminator begins exactly the rows that start
      // with the prefix.
      prefix_ = table_prefix;
      lf::AppendEscapedTerminated(&prefix_, options.row_prefix);
      prefix_.resize(prefix_.size() - 2);
      lower_ = std::max(lower_, prefix_);
    }
  }

  // Creates the iterator and moves to the first live cell.
  void Start() {
    iter_.reset(db_->NewIterator(lf::VerifiedReads()));
    iter_->Seek(leveldb::Slice(lower_.data(), lower_.size()));
    Scan();
  }

  bool Valid() const override { return valid_; }

  void Next() override {
    assert(valid_);
    iter_->Next();
    Scan();
  }

  CellView cell() const override {
    assert(valid_);
    return cell_;
  }

  Status status() const override { return status_; }

 private:
  struct FamilyRule {
    std::string name;
    int max_versions;   // min(ReadOptions.max_versions, VERSIONS)
    int min_versions;   // MIN_VERSIONS: kept even when older than oldest_ms
    int64_t oldest_ms;  // cells with timestamp < oldest_ms have expired (TTL)
  };

  const FamilyRule* FindFamily(std::string_view name) const {
    for (const FamilyRule& f : families_) {
      if (f.name == name) return &f;
    }
    return nullptr;
  }

  void Fail(Status s) {
    status_ = std::move(s);
    valid_ = false;
  }

  // Moves from the iterator's position to the first live cell at or after
  // it, or to the end (valid_ = false).
  void Scan() {
    valid_ = false;
    if (!status_.ok()) return;
    const leveldb::Slice upper(upper_.data(), upper_.size());
    for (; iter_->Valid(); iter_->Next()) {
      const leveldb::Slice k = iter_->key();
      if (k.compare(upper) >= 0) break;
      if (!prefix_.empty() && !k.starts_with(leveldb::Slice(prefix_.data(), prefix_.size()))) {
        break;
      }
      const std::string_view key(k.data(), k.size());
      lf::CellKeyParts parts;
      if (!lf::ParseCellKeySuffix(key.substr(table_prefix_bytes_), &parts)) {
        return Fail(Status::DataLoss("table " + Quoted(full_name_) + ": malformed cell key " +
                                     Quoted(key)));
      }

      // Row, family and column changes reset the delete and version state.
      bool new_column = false;
      if (!row_valid_ || parts.row != row_escaped_) {
        row_escaped_.assign(parts.row.data(), parts.row.size());
        row_.clear();
        lf::AppendUnescaped(&row_, parts.row);
        row_valid_ = true;
        row_returned_ = false;
        family_ = nullptr;
      }
      if (family_ == nullptr || parts.family != family_->name) {
        family_ = FindFamily(parts.family);
        if (family_ == nullptr) {
          return Fail(Status::DataLoss("table " + Quoted(full_name_) + ": cell of row " +
                                       Quoted(row_) + " has column family " + Quoted(parts.family) +
                                       ", which the table does not have"));
        }
        family_deleted_ = false;
        new_column = true;
      }
      if (new_column || parts.qualifier != qualifier_escaped_) {
        qualifier_escaped_.assign(parts.qualifier.data(), parts.qualifier.size());
        qualifier_.clear();
        lf::AppendUnescaped(&qualifier_, parts.qualifier);
        column_deleted_ = false;
        version_deleted_ = false;
        versions_seen_ = 0;
      }

      const int64_t ts = parts.timestamp_ms;
      switch (parts.type) {
        case CellType::kDeleteFamily:
          // The newest marker comes first, so the first one seen is the max.
          if (!family_deleted_) family_delete_ms_ = ts;
          family_deleted_ = true;
          continue;
        case CellType::kDeleteColumn:
          if (!column_deleted_) column_delete_ms_ = ts;
          column_deleted_ = true;
          continue;
        case CellType::kDelete:
          version_deleted_ = true;
          version_delete_ms_ = ts;
          continue;
        case CellType::kPut:
          break;
      }
      if (family_deleted_ && ts <= family_delete_ms_) continue;
      if (column_deleted_ && ts <= column_delete_ms_) continue;
      if (version_deleted_ && ts == version_delete_ms_) continue;
      ++versions_seen_;
      if (versions_seen_ > family_->max_versions) continue;
      if (versions_seen_ > family_->min_versions && ts < family_->oldest_ms) continue;
      if (!row_returned_) {
        if (limit_rows_ != 0 && rows_returned_ >= limit_rows_) return;
        ++rows_returned_;
        row_returned_ = true;
      }
      const leveldb::Slice v = iter_->value();
      cell_.row = row_;
      cell_.family = family_->name;
      cell_.qualifier = qualifier_;
      cell_.timestamp_ms = ts;
      cell_.type = CellType::kPut;
      cell_.value = std::string_view(v.data(), v.size());
      valid_ = true;
      return;
    }
    if (!iter_->status().ok()) {
      Fail(db_->Error(iter_->status(), "reading table " + Quoted(full_name_), lower_, upper_));
    }
  }

  const std::shared_ptr<Database> db_;  // declared before iter_: outlives it
  std::unique_ptr<leveldb::Iterator> iter_;
  const std::string full_name_;
  const uint64_t limit_rows_;
  std::vector<FamilyRule> families_;
  size_t table_prefix_bytes_ = 0;
  std::string lower_;   // first key to visit
  std::string upper_;   // keys >= upper_ are past the end
  std::string prefix_;  // when not empty, every visited key starts with it

  // The current row, family and column (owned copies: the iterator moves).
  bool row_valid_ = false;
  std::string row_escaped_;
  std::string row_;
  bool row_returned_ = false;
  uint64_t rows_returned_ = 0;
  const FamilyRule* family_ = nullptr;
  bool family_deleted_ = false;
  int64_t family_delete_ms_ = 0;
  std::string qualifier_escaped_;
  std::string qualifier_;
  bool column_deleted_ = false;
  int64_t column_delete_ms_ = 0;
  bool version_deleted_ = false;
  int64_t version_delete_ms_ = 0;
  int versions_seen_ = 0;

  CellView cell_;
  bool valid_ = false;
  Status status_;
};

// ---------------------------------------------------------------------------
// StateStore: one key per table, 0x03 + full name, its value the state value
// (store/state_store.h); compare-and-set under Database::state_mu.

class LevelDbStateStore final : public StateStore {
 public:
  LevelDbStateStore(std::shared_ptr<Database> db, std::string path)
      : db_(std::move(db)), path_(std::move(path)) {}

  Result<std::optional<TableState>> Get(const std::string& table) override {
    const std::string name = CanonicalTableName(table);
    WIDEN_ASSIGN_OR_RETURN(Stored stored, Read(name));
    if (!stored.found || stored.record.empty()) return std::optional<TableState>();
    WIDEN_ASSIGN_OR_RETURN(TableState state, Decode(name, stored));
    return std::optional<TableState>(std::move(state));
  }

  Result<uint64_t> Put(const std::string& table, std::optional<uint64_t> expected_version,
                       const TableState& state) override {
    const std::string name = CanonicalTableName(table);
    WIDEN_ASSIGN_OR_RETURN(std::string record, EncodeTableState(state));
    std::lock_guard<std::mutex> lock(db_->state_mu);
    WIDEN_ASSIGN_OR_RETURN(Stored stored, Read(name));
    const bool recorded = stored.found && !stored.record.empty();
    if (expected_version.has_value() != recorded ||
        (recorded && stored.version != *expected_version)) {
      return Conflict(name, expected_version, stored);
    }
    const uint64_t version = stored.found ? stored.version + 1 : 1;
    WIDEN_RETURN_IF_ERROR(Write(name, EncodeStateValue(version, record)));
    return version;
  }

  Status Delete(const std::string& table, uint64_t expected_version) override {
    const std::string name = CanonicalTableName(table);
    std::lock_guard<std::mutex> lock(db_->state_mu);
    WIDEN_ASSIGN_OR_RETURN(Stored stored, Read(name));
    if (!stored.found || stored.record.empty() || stored.version != expected_version) {
      return Conflict(name, expected_version, stored);
    }
    return Write(name, EncodeStateValue(stored.version + 1, ""));
  }

  Result<std::vector<std::pair<std::string, TableState>>> List() override {
    std::vector<std::pair<std::string, TableState>> out;
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(lf::VerifiedReads()));
    const char tag = lf::kStateTag;
    for (it->Seek(leveldb::Slice(&tag, 1)); it->Valid(); it->Next()) {
      const leveldb::Slice k = it->key();
      if (k.empty() || k[0] != lf::kStateTag) break;
      Stored stored;
      stored.found = true;
      const std::string name(k.data() + 1, k.size() - 1);
      WIDEN_RETURN_IF_ERROR(
          Parse(name, std::string_view(it->value().data(), it->value().size()), &stored));
      if (stored.record.empty()) continue;  // a tombstone
      WIDEN_ASSIGN_OR_RETURN(TableState state, Decode(name, stored));
      out.emplace_back(name, std::move(state));
    }
    if (!it->status().ok()) {
      return db_->Error(it->status(), "listing the table states of store '" + path_ + "'",
                        std::string(1, lf::kStateTag), std::string(1, lf::kStateTag + 1));
    }
    return out;
  }

 private:
  // A state value as read: found = the key exists.
  struct Stored {
    bool found = false;
    uint64_t version = 0;
    std::string record;  // empty: a tombstone
  };

  Status Parse(const std::string& name, std::string_view value, Stored* out) const {
    std::string_view record;
    if (!DecodeStateValue(value, &out->version, &record)) {
      return Status::DataLoss("store '" + path_ + "': the state of table " + Quoted(name) + " is " +
                              std::to_string(value.size()) + " bytes, shorter than its version");
    }
    out->record.assign(record.data(), record.size());
    return Status::OK();
  }

  Result<Stored> Read(const std::string& name) const {
    std::string value;
    const std::string key = lf::StateKey(name);
    leveldb::Status s = db_->Use()->Get(lf::VerifiedReads(), key, &value);
    Stored stored;
    if (s.IsNotFound()) return stored;
    if (!s.ok())
      return db_->Error(s, "reading the state of table " + Quoted(name), key, key + '\0');
    stored.found = true;
    WIDEN_RETURN_IF_ERROR(Parse(name, value, &stored));
    return stored;
  }

  Result<TableState> Decode(const std::string& name, const Stored& stored) const {
    Result<TableState> state = DecodeTableState(stored.record);
    if (!state.ok()) {
      return state.status().WithContext("store '" + path_ + "', table " + Quoted(name));
    }
    state->version = stored.version;
    return state;
  }

  // The state key never shares a table file with cells: the memtable is
  // written out before it (and NewSink/NewRowWriter write it out before the
  // cells that follow). State keys (tag 0x03) sort above every cell key; in
  // one table file with cells written before or after them, the file's key
  // range would span the cells a run writes next, and LevelDB would have to
  // merge (rewrite) each later file of cells with it instead of moving it
  // down a level (measured: +15 % CPU on a migrate of the bench shop).
  // The same holds for a table descriptor (tag 0x01, below every cell
  // key) written just before: a first migrate's descriptor and "loading"
  // state in one small file spanned every cell the migrate then wrote, and
  // each of its later files was merged with that one and with each other
  // (209 MB rewritten by compactions for 435 MB of cells of the bench shop,
  // and more left to the next run).
  // Cells of a row writer (a sync's few rows) may share the state key's
  // file: they spread over the key space anyway, and writing them out for
  // each state write costs a sync most of its time.
  Status Write(const std::string& name, const std::string& value) {
    db_->KeepApart(Database::kState);
    leveldb::WriteOptions sync;
    sync.sync = true;
    leveldb::Status s = db_->Use()->Put(sync, lf::StateKey(name), value);
    db_->in_memtable[Database::kState] = true;
    if (!s.ok()) return db_->Error(s, "writing the state of table " + Quoted(name));
    return Status::OK();
  }

  Status Conflict(const std::string& name, std::optional<uint64_t> expected,
                  const Stored& stored) const {
    const bool recorded = stored.found && !stored.record.empty();
    return Status::Aborted(
        "the state of table " + Quoted(name) + " in store '" + path_ + "' is " +
        (recorded ? "at version " + std::to_string(stored.version) : std::string("not recorded")) +
        ", not " + (expected ? "at version " + std::to_string(*expected) : std::string("absent")) +
        " as expected: another run changed it; read it again");
  }

  const std::shared_ptr<Database> db_;
  const std::string path_;
};

// Checks the store header of an existing store.
Status CheckHeader(const Database& db) {
  const std::string key(lf::kHeaderKey);
  std::string value;
  leveldb::Status s = db.Use()->Get(lf::VerifiedReads(), key, &value);
  if (s.IsNotFound()) {
    return Damaged(db.path, "its format header (key \\x00format) is missing");
  }
  if (!s.ok()) return db.Error(s, "reading the header of store '" + db.path + "'", key, key + '\0');
  if (value.size() == 1 && static_cast<uint8_t>(value[0]) == lf::kFormatVersion) {
    return Status::OK();
  }
  std::string version = value.size() == 1 ? std::to_string(static_cast<unsigned char>(value[0]))
                                          : "'" + ToStringBinary(value) + "'";
  return Status::FailedPrecondition(
      "the store at '" + db.path + "' has format version " + version +
      "; this widen reads format version " + std::to_string(lf::kFormatVersion) +
      " (use the widen that wrote it, or migrate again into a new store)");
}

// Every live table file has the size LevelDB recorded for it (a table file
// cut short would otherwise read as an I/O error, or not at all until a
// read reaches its end). Sizes are read through the store's Env, as
// LevelDB reads the files (tests stage a compaction's race there).
Status CheckTableSizes(const Database& db) {
  std::string property;
  if (!db.Use()->GetProperty("leveldb.sstables", &property)) return Status::OK();
  for (const lfiles::LiveTable& t : lfiles::ParseLiveTables(property)) {
    const std::string file = PathIn(db.path, lfiles::TableFileName(db.path, t.number));
    uint64_t size = 0;
    const leveldb::Status read = db.env->GetFileSize(file, &size);
    if ((!read.ok() || size != t.size_bytes) && !StillLive(db.Use().db, t.number)) continue;
    if (!read.ok()) {
      return Damaged(db.path, "table file '" + file + "' cannot be read (" + read.ToString() + ")");
    }
    if (size != t.size_bytes) {
      return Damaged(db.path, "table file '" + file + "' is " + std::to_string(size) +
                                  " bytes, but its MANIFEST records " +
                                  std::to_string(t.size_bytes) +
                                  (size < t.size_bytes ? " (cut short)" : ""));
    }
  }
  return Status::OK();
}

// Takes the store directory's lock: flock() on the directory itself, held
// until the Database is destroyed. Aborted when another open holds it.
Status LockDirectory(Database* db) {
  const int fd = ::open(db->path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return LocalIoError("cannot open store directory '" + db->path + "'", err);
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      ::close(fd);
      return Status::Aborted(
          InUseMessage("opening store '" + db->path + "'", lfiles::FlockHolder(db->path)));
    }
    // A file system without flock: LevelDB's own lock still keeps other
    // processes out of the database.
  } else {
    db->flock_held = true;
  }
  db->lock_fd = fd;
  return Status::OK();
}

// Opens the existing store at `path` (it has a marker): lock, check the
// seal, mark it open, open LevelDB, check the table files' sizes and the
// header. Nothing is deleted or rewritten when a check fails.
Result<std::shared_ptr<Database>> OpenExisting(const std::string& path, leveldb::Env* env) {
  auto db = std::make_shared<Database>();
  db->path = path;
  db->env = env != nullptr ? env : leveldb::Env::Default();
  WIDEN_RETURN_IF_ERROR(LockDirectory(db.get()));

  const std::string marker_path = PathIn(path, lmarker::kMarkerFile);
  Result<std::string> read = lmarker::ReadText(path);
  if (!read.ok()) {
    if (read.status().code() == StatusCode::kDataLoss)
      return Damaged(path, read.status().message());
    return read.status();
  }
  const std::string marker_text = std::move(read).value();
  Result<lmarker::Marker> marker = lmarker::Decode(marker_text, marker_path);
  if (!marker.ok()) return Damaged(path, marker.status().message());
  if (marker->closed) {
    bool stale = false;
    Status sealed = lmarker::Verify(path, *marker, &stale);
    if (!sealed.ok()) {
      if (sealed.code() == StatusCode::kDataLoss) return Damaged(path, sealed.message());
      return sealed;
    }
  }
  std::error_code ec;
  if (!std::filesystem::exists(PathIn(path, "CURRENT"), ec)) {
    return Damaged(path, "its file '" + PathIn(path, "CURRENT") + "' is missing");
  }

  // From here until the store is closed (and sealed again) the marker says
  // "open": LevelDB rewrites its files as it opens and runs.
  lmarker::Marker open_marker;
  open_marker.format = marker->format;
  WIDEN_RETURN_IF_ERROR(lmarker::WriteText(path, lmarker::Encode(open_marker)));

  // Table files a run wrote and never added, and a MANIFEST it wrote and
  // never made live (it ended first), are not the database's.
  lingest::RemoveLeftovers(db->env, path);
  leveldb::Status s = db->OpenLevelDb();
  if (!s.ok()) {
    // LevelDB changed no file it had: the marker's seal still holds.
    (void)lmarker::WriteText(path, marker_text);
    const std::string context = "opening store '" + path + "'";
    if (s.IsCorruption()) {
      std::vector<std::string> damaged = FindDamagedLogs(path);
      return Damaged(path, damaged.empty() ? s.ToString() : Joined(damaged));
    }
    return FromLevelDb(s, context);
  }
  db->seal_on_close = true;
  WIDEN_RETURN_IF_ERROR(CheckTableSizes(*db));
  WIDEN_RETURN_IF_ERROR(CheckHeader(*db));
  return db;
}

bool IsEmptyDirectory(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_empty(dir, ec) && !ec;
}

}  // namespace

Result<std::unique_ptr<LevelDbStore>> LevelDbStore::Open(const std::string& path,
                                                         const StoreOptions& options,
                                                         leveldb::Env* env) {
  if (path.empty()) return Status::InvalidArgument("the embedded store's path is empty");
  namespace fs = std::filesystem;
  const fs::path dir(path);
  for (int attempt = 0;; ++attempt) {
    std::error_code ec;
    const fs::file_status st = fs::status(dir, ec);
    const bool exists = fs::exists(st);
    if (exists && !fs::is_directory(st)) {
      return Status::FailedPrecondition("store path '" + path + "' exists and is not a directory");
    }
    if (exists && fs::exists(dir / lmarker::kMarkerFile, ec)) break;
    // Never let LevelDB recover (and rewrite) a directory widen did not create.
    if (exists && !IsEmptyDirectory(dir)) {
      if (!options.create_if_missing && !fs::exists(dir / "CURRENT", ec)) {
        return Status::NotFound("no widen store at '" + path +
                                "': check the target path, or run widen migrate first");
      }
      if (fs::exists(dir / "CURRENT", ec)) {
        // A LevelDB database: perhaps a widen store whose marker was lost.
        return Status::FailedPrecondition(
            "'" + path + "' is not a widen store (no " + lmarker::kMarkerFile +
            " file in it) but holds a LevelDB database; give a new or empty directory, or, if it "
            "is a widen store whose " +
            lmarker::kMarkerFile +
            " file was lost, copy it into a new store with widen repair --target leveldb:" + path +
            " --into leveldb:NEWPATH");
      }
      return Status::FailedPrecondition(
          "'" + path + "' is not empty and is not a widen store (no " + lmarker::kMarkerFile +
          " file in it); give a new or empty directory");
    }
    if (!options.create_if_missing) {
      return Status::NotFound("no widen store at '" + path +
                              "': check the target path, or run widen migrate first");
    }
    if (attempt > 0) {
      return Status::Unavailable("the store at '" + path +
                                 "' was created, then removed by another process");
    }
    WIDEN_RETURN_IF_ERROR(
        leveldb_store_internal::CreateStore(path, env, leveldb_store_internal::CreationOptions()));
  }
  WIDEN_ASSIGN_OR_RETURN(std::shared_ptr<Database> db, OpenExisting(path, env));
  return std::unique_ptr<LevelDbStore>(new LevelDbStore(path, std::move(db), options));
}

LevelDbStore::LevelDbStore(std::string path, std::shared_ptr<Database> db,
                           const StoreOptions& options)
    : path_(std::move(path)), db_(std::move(db)), options_(options) {}

LevelDbStore::~LevelDbStore() = default;

Status LevelDbStore::Close() {
  db_.reset();
  return Status::OK();
}

Status LevelDbStore::CheckOpen() const {
  if (db_ == nullptr) return Status::FailedPrecondition("the store at '" + path_ + "' is closed");
  return Status::OK();
}

Status LevelDbStore::CreateTable(const TableDescriptor& descriptor) {
  WIDEN_RETURN_IF_ERROR(CheckOpen());
  WIDEN_RETURN_IF_ERROR(descriptor.Validate());
  const std::string name = descriptor.FullName();
  const std::string key = lf::TableKey(name);
  std::lock_guard<std::mutex> lock(create_mu_);
  std::string value;
  leveldb::Status s = db_->Use()->Get(lf::VerifiedReads(), key, &value);
  if (s.IsNotFound()) {
    // Kept out of the table files of state keys and cells (see
    // LevelDbStateStore::Write).
    db_->KeepApart(Database::kDescriptors);
    leveldb::WriteOptions sync;
    sync.sync = true;
    s = db_->Use()->Put(sync, key, EncodeTableDescriptor(descriptor));
    db_->in_memtable[Database::kDescriptors] = true;
    if (!s.ok()) return db_->Error(s, "creating table " + Quoted(name));
    return Status::OK();
  }
  if (!s.ok()) return db_->Error(s, "reading table " + Quoted(name), key, key + '\0');
  Result<TableDescriptor> stored = DecodeTableDescriptor(value);
  if (!stored.ok()) return stored.status().WithContext("table " + Quoted(name));
  return CheckSameTable(*stored, descriptor, "store '" + path_ + "'");
}

Status LevelDbStore::SetTableMetadata(const std::string& full_name, const std::string& key,
                                      const std::string& value) {
  WIDEN_ASSIGN_OR_RETURN(TableDescriptor d, DescribeTable(full_name));
  d.metadata[key] = value;
  db_->KeepApart(Database::kDescriptors);
  leveldb::WriteOptions sync;
  sync.sync = true;
  leveldb::Status s =
      db_->Use()->Put(sync, lf::TableKey(CanonicalTableName(full_name)), EncodeTableDescriptor(d));
  db_->in_memtable[Database::kDescriptors] = true;
  if (!s.ok()) return db_->Error(s, "updating table " + Quoted(full_name));
  return Status::OK();
}

Result<TableDescriptor> LevelDbStore::DescribeTable(const std::string& full_name) {
  WIDEN_RETURN_IF_ERROR(CheckOpen());
  const std::string name = CanonicalTableName(full_name);
  std::string value;
  const std::string key = lf::TableKey(name);
  leveldb::Status s = db_->Use()->Get(lf::VerifiedReads(), key, &value);
  if (s.IsNotFound()) {
    return Status::NotFound("table " + Quoted(name) + " does not exist in store '" + path_ + "'");
  }
  if (!s.ok()) return db_->Error(s, "reading table " + Quoted(name), key, key + '\0');
  Result<TableDescriptor> d = DecodeTableDescriptor(value);
  if (!d.ok()) return d.status().WithContext("table " + Quoted(name));
  return d;
}

Result<std::vector<TableDescriptor>> LevelDbStore::ListTables() {
  WIDEN_RETURN_IF_ERROR(CheckOpen());
  std::vector<TableDescriptor> tables;
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(lf::VerifiedReads()));
  const char tag = lf::kTableTag;
  for (it->Seek(leveldb::Slice(&tag, 1)); it->Valid(); it->Next()) {
    const leveldb::Slice k = it->key();
    if (k.empty() || k[0] != lf::kTableTag) break;
    const std::string_view name(k.data() + 1, k.size() - 1);
    Result<TableDescriptor> d =
        DecodeTableDescriptor(std::string_view(it->value().data(), it->value().size()));
    if (!d.ok()) return d.status().WithContext("table " + Quoted(name));
    tables.push_back(std::move(d).value());
  }
  if (!it->status().ok()) {
    return db_->Error(it->status(), "listing tables of '" + path_ + "'",
                      std::string(1, lf::kTableTag), std::string(1, lf::kTableTag + 1));
  }
  return tables;
}

Result<std::unique_ptr<CellSink>> LevelDbStore::NewSink(const std::string& full_name) {
  WIDEN_ASSIGN_OR_RETURN(TableDescriptor d, DescribeTable(full_name));
  std::string name = d.FullName();
  // Whether the table holds any cell yet: its sink may then write cells that
  // come in key order as they come (BufferedCellSink).
  std::string prefix;
  lf::AppendCellKeyPrefix(&prefix, name);
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(lf::VerifiedReads()));
  it->Seek(prefix);
  if (!it->status().ok()) {
    return db_->Error(it->status(), "reading table " + Quoted(name), prefix, prefix + '\xff');
  }
  const bool empty = !it->Valid() || !it->key().starts_with(prefix);
  it.reset();
  // A state key or table descriptor written before (LevelDbStateStore::
  // Write) goes out to a table file of its own before the cells come.
  db_->KeepApart(Database::kSinkCells);
  // Into a table that holds no cell, cells in key order go straight into
  // table files of LevelDB's size (max_file_size).
  // Adding them closes LevelDB for a moment: only while the directory's
  // lock keeps other processes out.
  std::unique_ptr<lingest::ParallelTableWriter> files;
  if (empty && options_.write_table_files && db_->flock_held) {
    const leveldb::Options lo = lf::StoreOptions(nullptr);
    files = std::make_unique<lingest::ParallelTableWriter>(db_->env, db_->path, lo,
                                                           lo.max_file_size, kTableFileThreads);
  }
  return std::unique_ptr<CellSink>(new LevelDbSink(db_, std::move(name), std::move(d),
                                                   options_.batch_bytes, empty, std::move(files)));
}

Result<std::unique_ptr<StateStore>> LevelDbStore::NewStateStore() {
  WIDEN_RETURN_IF_ERROR(CheckOpen());
  return std::unique_ptr<StateStore>(new LevelDbStateStore(db_, path_));
}

Result<std::unique_ptr<CellReader>> LevelDbStore::NewReader(const std::string& full_name,
                                                            const ReadOptions& options) {
  if (options.max_versions < 1) {
    return Status::InvalidArgument("max_versions must be at least 1, not " +
                                   std::to_string(options.max_versions));
  }
  WIDEN_ASSIGN_OR_RETURN(TableDescriptor d, DescribeTable(full_name));
  const int64_t now_ms = options.now_ms != 0 ? options.now_ms : SystemNowMs();
  auto reader = std::make_unique<LevelDbReader>(db_, d.FullName(), d, options, now_ms);
  reader->Start();
  return std::unique_ptr<CellReader>(std::move(reader));
}

Result<std::unique_ptr<RowDigestReader>> LevelDbStore::NewDigestReader(const std::string& full_name,
                                                                       bool from_cells) {
  WIDEN_ASSIGN_OR_RETURN(TableDescriptor d, DescribeTable(full_name));
  return std::unique_ptr<RowDigestReader>(new LevelDbDigestReader(db_, d.FullName(), from_cells));
}

Result<std::unique_ptr<RowDigestReader>> LevelDbStore::NewDigestReaderOf(
    const std::string& full_name, std::vector<std::string> rows) {
  WIDEN_ASSIGN_OR_RETURN(TableDescriptor d, DescribeTable(full_name));
  return std::unique_ptr<RowDigestReader>(
      new LevelDbListedDigestReader(db_, d.FullName(), std::move(rows)));
}

Status LevelDbStore::ScanIndex(
    const std::string& full_name, const std::vector<std::string>& prefixes,
    const std::function<bool(size_t prefix, std::string_view key, std::string_view value)>& fn) {
  WIDEN_ASSIGN_OR_RETURN(TableDescriptor d, DescribeTable(full_name));
  std::string start;
  lf::AppendSyncIndexPrefix(&start, d.FullName());
  const size_t table_bytes = start.size();
  leveldb::ReadOptions o = lf::VerifiedReads();
  o.fill_cache = false;
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(o));
  bool more = true;
  for (size_t i = 0; more && i < prefixes.size() && it->status().ok(); ++i) {
    start.resize(table_bytes);
    start.append(prefixes[i]);
    for (it->Seek(start); more && it->Valid(); it->Next()) {
      if (!it->key().starts_with(leveldb::Slice(start))) break;
      const std::string_view key(it->key().data() + table_bytes, it->key().size() - table_bytes);
      more = fn(i, key, std::string_view(it->value().data(), it->value().size()));
    }
  }
  if (!it->status().ok()) {
    return FromLevelDb(it->status(), "reading the sync index of " + Quoted(d.FullName()));
  }
  return Status::OK();
}

Result<std::unique_ptr<RowWriter>> LevelDbStore::NewRowWriter(const std::string& full_name) {
  WIDEN_ASSIGN_OR_RETURN(TableDescriptor d, DescribeTable(full_name));
  std::string name = d.FullName();
  // As NewSink: a state key or table descriptor written before goes out
  // to a file of its own.
  db_->KeepApart(Database::kSinkCells);
  return std::unique_ptr<RowWriter>(
      new LevelDbRowWriter(db_, std::move(name), d, options_.batch_bytes));
}

}  // namespace widen
