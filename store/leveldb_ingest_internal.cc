#include "store/leveldb_ingest_internal.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include <fcntl.h>
#include <unistd.h>

#include <leveldb/comparator.h>
#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/table.h>
#include <leveldb/table_builder.h>

#include "store/leveldb_files_internal.h"

namespace widen {
namespace leveldb_ingest {

namespace {

namespace lfiles = leveldb_files;

// LevelDB's largest sequence number and the type a seek key carries
// (db/dbformat.h: kMaxSequenceNumber, kValueTypeForSeek).
constexpr uint64_t kMaxSequence = (uint64_t{1} << 56) - 1;
constexpr uint64_t kTypeValue = 1;

// The version edit's field tags (db/version_edit.cc). Never change them.
enum Tag : uint32_t {
  kComparator = 1,
  kLogNumber = 2,
  kNextFileNumber = 3,
  kLastSequence = 4,
  kCompactPointer = 5,
  kDeletedFile = 6,
  kNewFile = 7,
  kPrevLogNumber = 9,
};

void PutFixed64LE(std::string* dst, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
  dst->append(b, 8);
}

// The tag of a value at sequence 0, as its 8 bytes.
constexpr char kValueTag[kTagBytes] = {1, 0, 0, 0, 0, 0, 0, 0};

uint64_t DecodeFixed64LE(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void PutVarint(std::string* dst, uint64_t v) {
  while (v >= 0x80) {
    dst->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  dst->push_back(static_cast<char>(v));
}

void PutLengthPrefixed(std::string* dst, std::string_view bytes) {
  PutVarint(dst, bytes.size());
  dst->append(bytes);
}

// Reads a varint of at most `max_bits` from the front of *in.
bool GetVarint(std::string_view* in, uint64_t* v, int max_bits = 64) {
  uint64_t result = 0;
  for (int shift = 0; shift < max_bits && !in->empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in->front());
    in->remove_prefix(1);
    result |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

bool GetLengthPrefixed(std::string_view* in, std::string* out) {
  uint64_t n = 0;
  if (!GetVarint(in, &n, 32) || n > in->size()) return false;
  out->assign(in->data(), n);
  in->remove_prefix(n);
  return true;
}

// LevelDB's InternalKeyComparator over BytewiseComparator (db/dbformat.cc).
class InternalOrder final : public leveldb::Comparator {
 public:
  const char* Name() const override { return "leveldb.InternalKeyComparator"; }

  int Compare(const leveldb::Slice& a, const leveldb::Slice& b) const override {
    if (a.size() < kTagBytes || b.size() < kTagBytes) return a.compare(b);  // not internal keys
    const leveldb::Slice ua(a.data(), a.size() - kTagBytes);
    const leveldb::Slice ub(b.data(), b.size() - kTagBytes);
    int r = ua.compare(ub);
    if (r == 0) {
      const uint64_t ta = DecodeFixed64LE(a.data() + ua.size());
      const uint64_t tb = DecodeFixed64LE(b.data() + ub.size());
      r = ta > tb ? -1 : ta < tb ? 1 : 0;  // higher sequence first
    }
    return r;
  }

  void FindShortestSeparator(std::string* start, const leveldb::Slice& limit) const override {
    if (start->size() < kTagBytes || limit.size() < kTagBytes) return;
    const std::string_view user_start = UserKey(*start);
    const leveldb::Slice user_limit(limit.data(), limit.size() - kTagBytes);
    std::string tmp(user_start);
    leveldb::BytewiseComparator()->FindShortestSeparator(&tmp, user_limit);
    if (tmp.size() < user_start.size() &&
        leveldb::Slice(user_start.data(), user_start.size()).compare(leveldb::Slice(tmp)) < 0) {
      PutFixed64LE(&tmp, (kMaxSequence << 8) | kTypeValue);
      start->swap(tmp);
    }
  }

  void FindShortSuccessor(std::string* key) const override {
    if (key->size() < kTagBytes) return;
    const std::string_view user_key = UserKey(*key);
    std::string tmp(user_key);
    leveldb::BytewiseComparator()->FindShortSuccessor(&tmp);
    if (tmp.size() < user_key.size() &&
        leveldb::Slice(user_key.data(), user_key.size()).compare(leveldb::Slice(tmp)) < 0) {
      PutFixed64LE(&tmp, (kMaxSequence << 8) | kTypeValue);
      key->swap(tmp);
    }
  }
};

std::string PathIn(const std::string& dir, const std::string& name) { return dir + "/" + name; }

std::string NumberedName(uint64_t number, const char* suffix) {
  char name[40];
  std::snprintf(name, sizeof(name), "%06llu%s", static_cast<unsigned long long>(number), suffix);
  return name;
}

std::string ManifestName(uint64_t number) {
  char name[40];
  std::snprintf(name, sizeof(name), "MANIFEST-%06llu", static_cast<unsigned long long>(number));
  return name;
}

Status FromLevelDb(const leveldb::Status& s, const std::string& what) {
  if (s.IsCorruption()) return Status::DataLoss(what + ": " + s.ToString());
  return Status::LocalIo(what + ": " + s.ToString());
}

// Fsyncs directory `dir`, so that renames in it survive a crash.
Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return LocalIoError("cannot open directory '" + dir + "'", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return LocalIoError("cannot sync directory '" + dir + "'", err);
  return Status::OK();
}

// Writes `contents` to a new file `path` through `env`, synced.
Status WriteSynced(leveldb::Env* env, const std::string& path, std::string_view contents) {
  leveldb::WritableFile* raw = nullptr;
  leveldb::Status s = env->NewWritableFile(path, &raw);
  if (!s.ok()) return FromLevelDb(s, "cannot create '" + path + "'");
  std::unique_ptr<leveldb::WritableFile> file(raw);
  s = file->Append(leveldb::Slice(contents.data(), contents.size()));
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (!s.ok()) {
    file.reset();
    env->RemoveFile(path);
    return FromLevelDb(s, "cannot write '" + path + "'");
  }
  return Status::OK();
}

// Points CURRENT of `dir` at `manifest_name` (a temporary file renamed over
// it, as LevelDB does); *switched tells whether the rename happened. Then
// syncs the directory.
Status SetCurrent(leveldb::Env* env, const std::string& dir, const std::string& manifest_name,
                  bool* switched) {
  *switched = false;
  const std::string tmp = PathIn(dir, std::string(kPendingPrefix) + "CURRENT");
  WIDEN_RETURN_IF_ERROR(WriteSynced(env, tmp, manifest_name + "\n"));
  leveldb::Status s = env->RenameFile(tmp, PathIn(dir, "CURRENT"));
  if (!s.ok()) {
    env->RemoveFile(tmp);
    return FromLevelDb(s, "cannot replace '" + PathIn(dir, "CURRENT") + "'");
  }
  *switched = true;
  return SyncDirectory(dir);
}

// Decodes one version edit and applies it to *state (deleted files first,
// then new ones, as LevelDB's VersionSet::Builder does); false when it
// does not decode. `files` maps each level's file numbers to the files.
bool ApplyEdit(std::string_view in, ManifestState* state,
               std::map<uint64_t, LiveFile> (&files)[kLevels]) {
  std::vector<std::pair<int, LiveFile>> added;
  std::vector<std::pair<int, uint64_t>> deleted;
  while (!in.empty()) {
    uint64_t tag = 0, level = 0, number = 0;
    std::string text;
    if (!GetVarint(&in, &tag, 32)) return false;
    switch (tag) {
      case kComparator:
        if (!GetLengthPrefixed(&in, &state->comparator)) return false;
        break;
      case kLogNumber:
        if (!GetVarint(&in, &state->log_number)) return false;
        break;
      case kPrevLogNumber:
        if (!GetVarint(&in, &state->prev_log_number)) return false;
        break;
      case kNextFileNumber:
        if (!GetVarint(&in, &state->next_file)) return false;
        break;
      case kLastSequence:
        if (!GetVarint(&in, &state->last_sequence)) return false;
        break;
      case kCompactPointer:  // a hint for compactions: not kept
        if (!GetVarint(&in, &level, 32) || level >= kLevels || !GetLengthPrefixed(&in, &text)) {
          return false;
        }
        break;
      case kDeletedFile:
        if (!GetVarint(&in, &level, 32) || level >= kLevels || !GetVarint(&in, &number)) {
          return false;
        }
        deleted.emplace_back(static_cast<int>(level), number);
        break;
      case kNewFile: {
        LiveFile f;
        if (!GetVarint(&in, &level, 32) || level >= kLevels || !GetVarint(&in, &f.number) ||
            !GetVarint(&in, &f.size_bytes) || !GetLengthPrefixed(&in, &f.smallest) ||
            !GetLengthPrefixed(&in, &f.largest) || f.smallest.size() < kTagBytes ||
            f.largest.size() < kTagBytes) {
          return false;
        }
        added.emplace_back(static_cast<int>(level), std::move(f));
        break;
      }
      default:
        return false;  // an unknown tag, as LevelDB refuses it
    }
  }
  for (const auto& [l, n] : deleted) files[l].erase(n);
  for (auto& [l, f] : added) {
    const uint64_t n = f.number;
    files[l][n] = std::move(f);
  }
  return true;
}

// Whether the user key ranges [a_lo, a_hi] and [b_lo, b_hi] meet.
bool Meet(std::string_view a_lo, std::string_view a_hi, std::string_view b_lo,
          std::string_view b_hi) {
  return !(a_hi < b_lo || b_hi < a_lo);
}

// Whether live file `f` of `dir` holds an entry whose user key lies in
// [lo, hi] (user keys).
Result<bool> HoldsKeyIn(leveldb::Env* env, const std::string& dir, const LiveFile& f,
                        std::string_view lo, std::string_view hi) {
  const std::string path = PathIn(dir, lfiles::TableFileName(dir, f.number));
  leveldb::RandomAccessFile* raw_file = nullptr;
  leveldb::Status s = env->NewRandomAccessFile(path, &raw_file);
  if (!s.ok()) return FromLevelDb(s, "cannot read '" + path + "'");
  std::unique_ptr<leveldb::RandomAccessFile> file(raw_file);
  leveldb::Options options;
  options.comparator = InternalKeyOrder();
  options.env = env;
  options.paranoid_checks = true;
  leveldb::Table* raw_table = nullptr;
  s = leveldb::Table::Open(options, file.get(), f.size_bytes, &raw_table);
  if (!s.ok()) return FromLevelDb(s, "reading '" + path + "'");
  std::unique_ptr<leveldb::Table> table(raw_table);
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(ro));
  std::string target(lo);
  PutFixed64LE(&target, (kMaxSequence << 8) | kTypeValue);  // the first entry of `lo`
  it->Seek(target);
  if (!it->status().ok()) return FromLevelDb(it->status(), "reading '" + path + "'");
  if (!it->Valid()) return false;
  const std::string_view key(it->key().data(), it->key().size());
  if (key.size() < kTagBytes) return Status::DataLoss("'" + path + "': a malformed key");
  return UserKey(key) <= hi;
}

}  // namespace

const leveldb::Comparator* InternalKeyOrder() {
  static const InternalOrder* order = new InternalOrder();
  return order;
}

void AppendValueTag(std::string* key) { key->append(kValueTag, kTagBytes); }

// ---------------------------------------------------------------------------
// TableFileWriter

TableFileWriter::TableFileWriter(leveldb::Env* env, std::string dir,
                                 const leveldb::Options& options, uint64_t file_bytes)
    : env_(env), dir_(std::move(dir)), options_(options), file_bytes_(file_bytes) {
  options_.comparator = InternalKeyOrder();
  options_.filter_policy = nullptr;
  options_.env = env_;
}

TableFileWriter::~TableFileWriter() {
  if (builder_ != nullptr) {
    builder_->Abandon();
    builder_.reset();
    file_.reset();
    env_->RemoveFile(current_.path);
  }
  while (!syncs_.empty()) WaitOldestSync();
  for (const BuiltTable& t : finished_) env_->RemoveFile(t.path);
}

void TableFileWriter::WaitOldestSync() {
  const Status s = syncs_.front().get();
  syncs_.pop_front();
  if (!s.ok() && status_.ok()) status_ = s;
}

Status TableFileWriter::Fail(const std::string& what, const std::string& detail) {
  status_ = Status::LocalIo(what + " in '" + dir_ + "': " + detail);
  if (builder_ != nullptr) builder_->Abandon();
  builder_.reset();
  file_.reset();
  env_->RemoveFile(current_.path);
  return status_;
}

Status TableFileWriter::Add(std::string_view internal_key, std::string_view value) {
  WIDEN_RETURN_IF_ERROR(status_);
  if (builder_ == nullptr) {
    static std::atomic<uint64_t> next{0};
    current_ = BuiltTable();
    current_.path = PathIn(dir_, std::string(kPendingPrefix) + std::to_string(::getpid()) + "-" +
                                     std::to_string(next.fetch_add(1)) + ".ldb");
    leveldb::WritableFile* raw = nullptr;
    leveldb::Status s = env_->NewWritableFile(current_.path, &raw);
    if (!s.ok()) {
      status_ = FromLevelDb(s, "cannot create a new table file in '" + dir_ + "'");
      return status_;
    }
    file_.reset(raw);
    builder_ = std::make_unique<leveldb::TableBuilder>(options_, file_.get());
    current_.smallest.assign(internal_key);
  }
  builder_->Add(leveldb::Slice(internal_key.data(), internal_key.size()),
                leveldb::Slice(value.data(), value.size()));
  current_.largest.assign(internal_key);
  if (builder_->FileSize() >= file_bytes_) return EndFile();
  return Status::OK();
}

Status TableFileWriter::CheckWrites() {
  if (builder_ == nullptr) return status_;
  const leveldb::Status s = builder_->status();
  if (!s.ok()) return Fail("cannot write a new table file", s.ToString());
  return Status::OK();
}

Status TableFileWriter::EndFile() {
  WIDEN_RETURN_IF_ERROR(status_);
  if (builder_ == nullptr) return Status::OK();
  leveldb::Status s = builder_->Finish();
  current_.size_bytes = builder_->FileSize();
  current_.entries = builder_->NumEntries();
  builder_.reset();  // finished, even when it failed: not to be abandoned
  if (!s.ok()) return Fail("cannot write a new table file", s.ToString());
  // Synced and closed beside the next file's writing.
  if (syncs_.size() >= kSyncsInFlight) WaitOldestSync();
  syncs_.push_back(std::async(
      std::launch::async,
      [file = std::shared_ptr<leveldb::WritableFile>(std::move(file_)), path = current_.path]() {
        leveldb::Status synced = file->Sync();
        if (synced.ok()) synced = file->Close();
        if (synced.ok()) return Status::OK();
        return Status::LocalIo("cannot write a new table file ('" + path + "', removed): " +
                               synced.ToString());
      }));
  finished_.push_back(std::move(current_));
  current_ = BuiltTable();
  return status_;
}

Result<std::vector<BuiltTable>> TableFileWriter::TakeFinished() {
  while (!syncs_.empty()) WaitOldestSync();
  WIDEN_RETURN_IF_ERROR(status_);
  std::vector<BuiltTable> out;
  out.swap(finished_);
  return out;
}

// ---------------------------------------------------------------------------
// ParallelTableWriter

struct ParallelTableWriter::Worker {
  TableFileWriter files;
  std::thread thread;
  Worker(leveldb::Env* env, const std::string& dir, const leveldb::Options& options,
         uint64_t file_bytes)
      : files(env, dir, options, file_bytes) {}
};

ParallelTableWriter::ParallelTableWriter(leveldb::Env* env, std::string dir,
                                         const leveldb::Options& options, uint64_t file_bytes,
                                         int threads)
    : env_(env), limit_(static_cast<size_t>(std::max(threads, 1))) {
  for (int i = 0; i < std::max(threads, 1); ++i) {
    workers_.push_back(std::make_unique<Worker>(env, dir, options, file_bytes));
  }
  for (auto& w : workers_) {
    Worker* raw = w.get();
    w->thread = std::thread([this, raw] { Loop(raw); });
  }
}

ParallelTableWriter::~ParallelTableWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (auto& w : workers_) w->thread.join();
  // Each worker's TableFileWriter removes the files not taken.
}

void ParallelTableWriter::Loop(Worker* w) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Segment seg = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    const bool failed = !status_.ok();
    lock.unlock();
    Status s;
    if (!failed) {
      size_t at = 0;
      for (const auto& [key_bytes, value_bytes] : seg.sizes) {
        s = w->files.Add(std::string_view(seg.bytes.data() + at, key_bytes),
                         std::string_view(seg.bytes.data() + at + key_bytes, value_bytes));
        if (!s.ok()) break;
        at += key_bytes + value_bytes;
      }
      if (s.ok()) s = w->files.EndFile();  // a segment's files are its own
    }
    seg.bytes.clear();  // kept, with their buffers, for a later segment
    seg.sizes.clear();
    lock.lock();
    --busy_;
    if (!s.ok() && status_.ok()) status_ = s;
    spare_.push_back(std::move(seg));
    cv_.notify_all();
  }
}

void ParallelTableWriter::Add(std::string_view internal_key, std::string_view value) {
  filling_.bytes.append(internal_key);
  filling_.bytes.append(value);
  filling_.sizes.emplace_back(static_cast<uint32_t>(internal_key.size()),
                              static_cast<uint32_t>(value.size()));
}

Status ParallelTableWriter::EndSegment() {
  std::unique_lock<std::mutex> lock(mu_);
  WIDEN_RETURN_IF_ERROR(status_);
  if (filling_.sizes.empty()) return Status::OK();
  cv_.wait(lock, [this] { return queue_.size() + busy_ < limit_ || !status_.ok(); });
  WIDEN_RETURN_IF_ERROR(status_);
  queue_.push_back(std::move(filling_));
  filling_ = Segment();
  if (!spare_.empty()) {  // a segment's buffers again: no allocation that grows anew
    filling_ = std::move(spare_.back());
    spare_.pop_back();
  }
  cv_.notify_all();
  return Status::OK();
}

Result<std::vector<BuiltTable>> ParallelTableWriter::TakeFinished() {
  WIDEN_RETURN_IF_ERROR(EndSegment());
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return (queue_.empty() && busy_ == 0) || !status_.ok(); });
    if (!status_.ok()) {
      // The other threads finish the segment they write; what is queued is dropped.
      queue_.clear();
      cv_.wait(lock, [this] { return busy_ == 0; });
      return status_;
    }
  }
  std::vector<BuiltTable> out;
  for (auto& w : workers_) {
    Result<std::vector<BuiltTable>> files = w->files.TakeFinished();
    if (!files.ok()) {
      for (const BuiltTable& t : out) env_->RemoveFile(t.path);
      return files.status();
    }
    for (BuiltTable& t : *files) out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(), [](const BuiltTable& a, const BuiltTable& b) {
    return InternalKeyOrder()->Compare(a.smallest, b.smallest) < 0;
  });
  return out;
}

// ---------------------------------------------------------------------------
// The MANIFEST

Result<ManifestState> ReadManifest(leveldb::Env* env, const std::string& dir) {
  const std::string current_path = PathIn(dir, "CURRENT");
  std::string current;
  leveldb::Status s = leveldb::ReadFileToString(env, current_path, &current);
  if (!s.ok()) return FromLevelDb(s, "cannot read '" + current_path + "'");
  if (current.empty() || current.back() != '\n' ||
      lfiles::KindOf(std::string_view(current).substr(0, current.size() - 1)) !=
          lfiles::FileKind::kManifest) {
    return Status::DataLoss("'" + current_path + "' does not name a MANIFEST");
  }
  ManifestState state;
  state.manifest_name = current.substr(0, current.size() - 1);
  const std::string path = PathIn(dir, state.manifest_name);
  std::string bytes;
  s = leveldb::ReadFileToString(env, path, &bytes);
  if (!s.ok()) return FromLevelDb(s, "cannot read '" + path + "'");
  std::map<uint64_t, LiveFile> files[kLevels];
  uint64_t records = 0;
  WIDEN_RETURN_IF_ERROR(lfiles::ForEachLogRecord(bytes, path, [&](std::string_view record) {
    ++records;
    if (!ApplyEdit(record, &state, files)) {
      return Status::DataLoss("'" + path + "': version edit " + std::to_string(records) +
                              " does not decode");
    }
    return Status::OK();
  }));
  if (state.next_file == 0) return Status::DataLoss("'" + path + "' records no next file number");
  for (int l = 0; l < kLevels; ++l) {
    for (auto& [n, f] : files[l]) state.levels[l].push_back(std::move(f));
    std::sort(state.levels[l].begin(), state.levels[l].end(),
              [](const LiveFile& a, const LiveFile& b) {
                return InternalKeyOrder()->Compare(a.smallest, b.smallest) < 0;
              });
  }
  return state;
}

std::string EncodeSnapshot(const ManifestState& state) {
  std::string edit;
  if (!state.comparator.empty()) {
    PutVarint(&edit, kComparator);
    PutLengthPrefixed(&edit, state.comparator);
  }
  PutVarint(&edit, kLogNumber);
  PutVarint(&edit, state.log_number);
  PutVarint(&edit, kPrevLogNumber);
  PutVarint(&edit, state.prev_log_number);
  PutVarint(&edit, kNextFileNumber);
  PutVarint(&edit, state.next_file);
  PutVarint(&edit, kLastSequence);
  PutVarint(&edit, state.last_sequence);
  for (int l = 0; l < kLevels; ++l) {
    for (const LiveFile& f : state.levels[l]) {
      PutVarint(&edit, kNewFile);
      PutVarint(&edit, static_cast<uint64_t>(l));
      PutVarint(&edit, f.number);
      PutVarint(&edit, f.size_bytes);
      PutLengthPrefixed(&edit, f.smallest);
      PutLengthPrefixed(&edit, f.largest);
    }
  }
  return edit;
}

// ---------------------------------------------------------------------------
// Adding tables

Result<std::vector<AddedTable>> AddTables(leveldb::Env* env, const std::string& dir,
                                          const std::vector<BuiltTable>& tables,
                                          std::string* previous_manifest) {
  previous_manifest->clear();
  if (tables.empty()) return std::vector<AddedTable>();
  WIDEN_ASSIGN_OR_RETURN(ManifestState state, ReadManifest(env, dir));

  // Every entry is at sequence 0: no live entry may share a user key with
  // one of them (the tables' key ranges meet no key of the database).
  for (size_t i = 0; i < tables.size(); ++i) {
    const BuiltTable& t = tables[i];
    const std::string_view lo = UserKey(t.smallest), hi = UserKey(t.largest);
    if (i > 0 && !(UserKey(tables[i - 1].largest) < lo)) {
      return Status::Internal("table files to add overlap: '" + tables[i - 1].path + "', '" +
                              t.path + "'");
    }
    for (int l = 0; l < kLevels; ++l) {
      for (const LiveFile& f : state.levels[l]) {
        if (!Meet(UserKey(f.smallest), UserKey(f.largest), lo, hi)) continue;
        WIDEN_ASSIGN_OR_RETURN(bool holds, HoldsKeyIn(env, dir, f, lo, hi));
        if (holds) {
          return Status::FailedPrecondition("table file " + NumberedName(f.number, ".ldb") +
                                            " holds keys in the range of '" + t.path + "'");
        }
      }
    }
  }

  // Numbers above every file of the directory (a log LevelDB started after
  // its last MANIFEST write has one the MANIFEST does not know yet). A log
  // LevelDB would replay holds writes that no live file shows: they could
  // be of the tables' keys, and would then be replayed above them.
  std::vector<std::string> children;
  leveldb::Status s = env->GetChildren(dir, &children);
  if (!s.ok()) return FromLevelDb(s, "cannot list '" + dir + "'");
  uint64_t first = state.next_file;
  for (const std::string& c : children) {
    const uint64_t number = lfiles::NumberOf(c);
    first = std::max(first, number + 1);
    if (lfiles::KindOf(c) != lfiles::FileKind::kLog) continue;
    if (number < state.log_number && number != state.prev_log_number) continue;
    uint64_t size = 0;
    s = env->GetFileSize(PathIn(dir, c), &size);
    if (!s.ok()) return FromLevelDb(s, "cannot read '" + PathIn(dir, c) + "'");
    if (size > 0) {
      return Status::FailedPrecondition("the database's log '" + PathIn(dir, c) +
                                        "' holds writes no table file has yet");
    }
  }

  // The deepest level where no live file meets the table's key range.
  std::vector<AddedTable> added(tables.size());
  for (size_t i = 0; i < tables.size(); ++i) {
    const std::string_view lo = UserKey(tables[i].smallest), hi = UserKey(tables[i].largest);
    added[i].number = first + i;
    added[i].level = 0;
    for (int l = kLevels - 1; l >= 1; --l) {
      bool free = true;
      for (const LiveFile& f : state.levels[l]) {
        if (Meet(UserKey(f.smallest), UserKey(f.largest), lo, hi)) {
          free = false;
          break;
        }
      }
      if (free) {
        added[i].level = l;
        break;
      }
    }
  }
  const uint64_t manifest_number = first + tables.size();
  ManifestState next = state;
  next.next_file = manifest_number + 1;
  for (size_t i = 0; i < tables.size(); ++i) {
    LiveFile f;
    f.number = added[i].number;
    f.size_bytes = tables[i].size_bytes;
    f.smallest = tables[i].smallest;
    f.largest = tables[i].largest;
    next.levels[added[i].level].push_back(std::move(f));
  }

  // The files under their numbers, the new MANIFEST, then CURRENT: until
  // CURRENT is replaced LevelDB sees the old MANIFEST, and removes the
  // renamed files (not live) when it next opens the database.
  std::vector<std::string> renamed;
  const auto undo = [&]() {
    for (const std::string& r : renamed) env->RemoveFile(r);
    env->RemoveFile(PathIn(dir, ManifestName(manifest_number)));
  };
  for (size_t i = 0; i < tables.size(); ++i) {
    const std::string to = PathIn(dir, NumberedName(added[i].number, ".ldb"));
    s = env->RenameFile(tables[i].path, to);
    if (!s.ok()) {
      undo();
      return FromLevelDb(s, "cannot rename '" + tables[i].path + "'");
    }
    renamed.push_back(to);
  }
  std::string manifest;
  lfiles::AppendLogRecord(&manifest, EncodeSnapshot(next));
  bool switched = false;
  Status written = WriteSynced(env, PathIn(dir, ManifestName(manifest_number)), manifest);
  if (written.ok()) written = SyncDirectory(dir);
  if (written.ok()) written = SetCurrent(env, dir, ManifestName(manifest_number), &switched);
  if (switched) *previous_manifest = state.manifest_name;
  if (!written.ok()) {
    // Once CURRENT names the new MANIFEST (only the directory's sync
    // failed) the tables are the database's: they stay.
    if (!switched) undo();
    return written;
  }
  return added;
}

Status ForEachEntry(leveldb::Env* env, const BuiltTable& table,
                    const std::function<Status(std::string_view key, std::string_view value)>& fn) {
  leveldb::RandomAccessFile* raw_file = nullptr;
  leveldb::Status s = env->NewRandomAccessFile(table.path, &raw_file);
  if (!s.ok()) return FromLevelDb(s, "cannot read '" + table.path + "'");
  std::unique_ptr<leveldb::RandomAccessFile> file(raw_file);
  leveldb::Options options;
  options.comparator = InternalKeyOrder();
  options.env = env;
  options.paranoid_checks = true;
  leveldb::Table* raw_table = nullptr;
  s = leveldb::Table::Open(options, file.get(), table.size_bytes, &raw_table);
  if (!s.ok()) return Status::DataLoss("reading '" + table.path + "': " + s.ToString());
  std::unique_ptr<leveldb::Table> t(raw_table);
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  std::unique_ptr<leveldb::Iterator> it(t->NewIterator(ro));
  for (it->SeekToFirst(); it->Valid() && it->status().ok(); it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    if (key.size() < kTagBytes) return Status::DataLoss("'" + table.path + "': a malformed key");
    WIDEN_RETURN_IF_ERROR(
        fn(UserKey(key), std::string_view(it->value().data(), it->value().size())));
  }
  if (!it->status().ok()) {
    return Status::DataLoss("reading '" + table.path + "': " + it->status().ToString());
  }
  return Status::OK();
}

Status RestoreCurrent(leveldb::Env* env, const std::string& dir, const std::string& manifest_name) {
  bool switched = false;
  return SetCurrent(env, dir, manifest_name, &switched);
}

int RemoveLeftovers(leveldb::Env* env, const std::string& dir) {
  std::vector<std::string> children;
  if (!env->GetChildren(dir, &children).ok()) return 0;
  // The live MANIFEST's number; a MANIFEST numbered above it is one an
  // add wrote before it was cut short (LevelDB keeps such a file).
  uint64_t live = 0;
  std::string current;
  if (leveldb::ReadFileToString(env, PathIn(dir, "CURRENT"), &current).ok() &&
      !current.empty() && current.back() == '\n') {
    current.pop_back();
    if (lfiles::KindOf(current) == lfiles::FileKind::kManifest &&
        env->FileExists(PathIn(dir, current))) {
      live = lfiles::NumberOf(current);
    }
  }
  int removed = 0;
  for (const std::string& c : children) {
    const bool pending = c.compare(0, kPendingPrefix.size(), kPendingPrefix) == 0;
    const bool manifest_above = live != 0 && lfiles::KindOf(c) == lfiles::FileKind::kManifest &&
                                lfiles::NumberOf(c) > live;
    if ((pending || manifest_above) && env->RemoveFile(PathIn(dir, c)).ok()) ++removed;
  }
  return removed;
}

Result<std::vector<std::string>> UnlistedTables(leveldb::Env* env, const std::string& dir) {
  WIDEN_ASSIGN_OR_RETURN(ManifestState state, ReadManifest(env, dir));
  std::set<uint64_t> listed;
  for (const auto& level : state.levels) {
    for (const LiveFile& f : level) listed.insert(f.number);
  }
  std::vector<std::string> children;
  leveldb::Status s = env->GetChildren(dir, &children);
  if (!s.ok()) return FromLevelDb(s, "cannot list '" + dir + "'");
  std::vector<std::string> out;
  for (const std::string& c : children) {
    if (lfiles::KindOf(c) == lfiles::FileKind::kTable && listed.count(lfiles::NumberOf(c)) == 0) {
      out.push_back(c);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace leveldb_ingest
}  // namespace widen
