#include "common/cell_runs.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <utility>

#include <fmt/format.h>

namespace widen {

namespace {

constexpr size_t kWriteBufferBytes = 1 << 20;
constexpr size_t kReadBufferBytes = 256 << 10;
// A merge's read buffers together: each run's is this over the runs merged
// (at least kMinReadBufferBytes, at most kReadBufferBytes), so that the
// memory of a merge does not grow with the number of runs, that is with
// the table.
constexpr size_t kMergeReadBytes = 16 << 20;
constexpr size_t kMinReadBufferBytes = 64 << 10;

std::string TempDir(const std::string& dir) {
  if (!dir.empty()) return dir;
  const char* env = std::getenv("TMPDIR");
  return env != nullptr && *env != '\0' ? env : "/tmp";
}

Status IoError(const char* what, const std::string& path, int err) {
  return Status::LocalIo(
      fmt::format("{} the temporary sort file {}: {} (temporary files go to $TMPDIR, else /tmp)",
                  what, path, std::strerror(err)));
}

}  // namespace

// A run's record (private to one process, never persisted): the cell's
// fields, each left out when it equals the previous cell's in the same run
// (sorted cells share their row, family and timestamp with their
// neighbours), lengths as LEB128 varints:
//
//   tag u8       bit 0: row as the previous cell's   bit 1: family as the previous
//                bit 2: timestamp as the previous     bits 3-4: type (kRunTypes index)
//                bit 5: a type byte follows (a code not in kRunTypes)
//   [shared varint, suffix len varint, suffix]  unless bit 0: the row is the
//                previous row's first `shared` bytes, then the suffix
//   [family len varint, family]                 unless bit 1
//   qualifier len varint, qualifier, value len varint, value
//   [timestamp_ms i64, host order]              unless bit 2
//   [type u8]                                   if bit 5
//
// The first record of a run repeats nothing.
namespace run_record {

constexpr unsigned kRowSame = 1, kFamilySame = 2, kTimestampSame = 4, kTypeByte = 32;
constexpr CellType kRunTypes[4] = {CellType::kPut, CellType::kDelete, CellType::kDeleteColumn,
                                   CellType::kDeleteFamily};
inline void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Reads a varint of at most 5 bytes at p[0, end); nullptr when it does not
// end before `end` (or is longer: a corrupt record).
inline const char* GetVarint(const char* p, const char* end, uint32_t* v) {
  uint32_t result = 0;
  for (int shift = 0; shift <= 28 && p < end; shift += 7) {
    const auto byte = static_cast<unsigned char>(*p++);
    result |= static_cast<uint32_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return p;
    }
  }
  return nullptr;
}

}  // namespace run_record

// One run: an unlinked file written once, then read once from the start.
struct CellRuns::Run {
  int fd = -1;
  std::string path;                      // for messages (the name is unlinked at once)
  uint64_t size = 0;                     // bytes written
  std::string buffer;                    // write buffer, then read buffer
  size_t read_bytes = kReadBufferBytes;  // read: bytes read at a time (MergeRuns sets it)
  size_t pos = 0;                        // read: next record's offset in buffer
  uint64_t file_pos = 0;                 // read: file offset of buffer's end
  CellView cell;                         // read: the current record (row and family in row/family)
  bool valid = false;
  bool written = false;  // its cells are in the target already
  // The previous cell's row, family and timestamp (writing and reading).
  std::string row, family;
  int64_t timestamp_ms = 0;
  bool first = true;

  ~Run() {
    if (fd >= 0) close(fd);
  }

  Status Write(const CellView& c) {
    using namespace run_record;
    const size_t tag_at = buffer.size();
    buffer.push_back('\0');
    unsigned tag = 0;
    if (!first && c.row == row) {
      tag |= kRowSame;
    } else {
      const size_t limit = first ? 0 : std::min(row.size(), c.row.size());
      size_t shared = 0;
      while (shared < limit && row[shared] == c.row[shared]) ++shared;
      PutVarint(shared, &buffer);
      PutVarint(c.row.size() - shared, &buffer);
      buffer.append(c.row.substr(shared));
      row.assign(c.row);
    }
    if (!first && c.family == family) {
      tag |= kFamilySame;
    } else {
      PutVarint(c.family.size(), &buffer);
      buffer.append(c.family);
      family.assign(c.family);
    }
    PutVarint(c.qualifier.size(), &buffer);
    buffer.append(c.qualifier);
    PutVarint(c.value.size(), &buffer);
    buffer.append(c.value);
    if (!first && c.timestamp_ms == timestamp_ms) {
      tag |= kTimestampSame;
    } else {
      char ts[8];
      std::memcpy(ts, &c.timestamp_ms, 8);
      buffer.append(ts, 8);
      timestamp_ms = c.timestamp_ms;
    }
    const auto* known = std::find(std::begin(kRunTypes), std::end(kRunTypes), c.type);
    if (known != std::end(kRunTypes)) {
      tag |= static_cast<unsigned>(known - std::begin(kRunTypes)) << 3;
    } else {
      tag |= kTypeByte;
      buffer.push_back(static_cast<char>(c.type));
    }
    buffer[tag_at] = static_cast<char>(tag);
    first = false;
    return buffer.size() >= kWriteBufferBytes ? FlushWrites() : Status::OK();
  }

  Status FlushWrites() {
    const char* p = buffer.data();
    size_t left = buffer.size();
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        return IoError("writing", path, errno);
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    size += buffer.size();
    buffer.clear();
    return Status::OK();
  }

  // Ensures buffer[pos, pos + bytes) holds file bytes, or as many as the
  // file has left; false when fewer than `bytes` are left.
  Result<bool> Fill(size_t bytes) {
    if (buffer.size() - pos >= bytes) return true;
    buffer.erase(0, pos);
    pos = 0;
    const size_t want = std::max(bytes, read_bytes);
    while (buffer.size() < want && file_pos < size) {
      const size_t old = buffer.size();
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(want - old, size - file_pos));
      buffer.resize(old + chunk);
      const ssize_t n = ::pread(fd, buffer.data() + old, chunk, static_cast<off_t>(file_pos));
      if (n < 0) {
        buffer.resize(old);
        if (errno == EINTR) continue;
        return IoError("reading", path, errno);
      }
      if (n == 0) {
        buffer.resize(old);
        return Status::LocalIo(
            fmt::format("the temporary sort file {} is shorter than written", path));
      }
      buffer.resize(old + static_cast<size_t>(n));
      file_pos += static_cast<uint64_t>(n);
    }
    return buffer.size() - pos >= bytes;
  }

  Status MidRecord() const {
    return Status::LocalIo(fmt::format("the temporary sort file {} ends mid-record", path));
  }

  // Reads the varint at offset *at of the current record (the record
  // starts at buffer[pos]) into *v and moves *at past it. false with *err
  // set on an I/O error or a record cut short.
  bool VarintAt(size_t* at, uint32_t* v, Status* err) {
    if (buffer.size() - pos < *at + 5) {
      Result<bool> filled = Fill(*at + 5);
      if (!filled.ok()) {
        *err = filled.status();
        return false;
      }
    }
    const char* base = buffer.data() + pos;
    const char* end = buffer.data() + buffer.size();
    const char* p = base + *at < end ? run_record::GetVarint(base + *at, end, v) : nullptr;
    if (p == nullptr) {
      *err = MidRecord();
      return false;
    }
    *at = static_cast<size_t>(p - base);
    return true;
  }

  // Reads the next record into `cell`; valid = false at the end.
  Status Advance() {
    using namespace run_record;
    WIDEN_ASSIGN_OR_RETURN(bool have, Fill(1));
    if (!have) {
      valid = false;
      return Status::OK();
    }
    const unsigned tag = static_cast<unsigned char>(buffer[pos]);
    // A record that repeats what no earlier record of the run gave is
    // corrupt.
    if (first && (tag & (kRowSame | kFamilySame | kTimestampSame)) != 0) return MidRecord();
    Status err;
    size_t at = 1, row_at = 0, family_at = 0;
    uint32_t shared = 0, suffix = 0, family_len = 0, qualifier_len = 0, value_len = 0;
    if ((tag & kRowSame) == 0) {
      if (!VarintAt(&at, &shared, &err) || !VarintAt(&at, &suffix, &err)) return err;
      if (shared > row.size()) return MidRecord();
      row_at = at;
      at += suffix;
    }
    if ((tag & kFamilySame) == 0) {
      if (!VarintAt(&at, &family_len, &err)) return err;
      family_at = at;
      at += family_len;
    }
    if (!VarintAt(&at, &qualifier_len, &err)) return err;
    const size_t qualifier_at = at;
    at += qualifier_len;
    if (!VarintAt(&at, &value_len, &err)) return err;
    const size_t value_at = at;
    at += value_len;
    const size_t timestamp_at = at;
    if ((tag & kTimestampSame) == 0) at += 8;
    const size_t type_at = at;
    if ((tag & kTypeByte) != 0) at += 1;
    WIDEN_ASSIGN_OR_RETURN(have, Fill(at));
    if (!have) return MidRecord();
    const char* r = buffer.data() + pos;
    if ((tag & kRowSame) == 0) {
      row.resize(shared);
      row.append(r + row_at, suffix);
    }
    if ((tag & kFamilySame) == 0) family.assign(r + family_at, family_len);
    if ((tag & kTimestampSame) == 0) std::memcpy(&timestamp_ms, r + timestamp_at, 8);
    cell.row = row;
    cell.family = family;
    cell.qualifier = std::string_view(r + qualifier_at, qualifier_len);
    cell.value = std::string_view(r + value_at, value_len);
    cell.timestamp_ms = timestamp_ms;
    cell.type = (tag & kTypeByte) != 0
                    ? static_cast<CellType>(static_cast<unsigned char>(r[type_at]))
                    : kRunTypes[(tag >> 3) & 3];
    pos += at;
    first = false;
    valid = true;
    return Status::OK();
  }

  Status StartReading() {
    buffer.clear();
    buffer.shrink_to_fit();
    pos = 0;
    file_pos = 0;
    row.clear();
    family.clear();
    timestamp_ms = 0;
    first = true;
    return Advance();
  }
};

CellRuns::CellRuns(std::string dir) : dir_(std::move(dir)) {}

CellRuns::~CellRuns() = default;

Result<std::unique_ptr<CellRuns::Run>> CellRuns::NewRun() {
  auto run = std::make_unique<Run>();
  run->path = TempDir(dir_) + "/widen-sort-XXXXXX";
  run->fd = mkstemp(run->path.data());
  if (run->fd < 0) return IoError("creating", run->path, errno);
  unlink(run->path.c_str());  // gone when closed, whatever happens
  return run;
}

Status CellRuns::Add(const CellBatch& batch, bool written) {
  if (batch.empty()) return Status::OK();
  WIDEN_ASSIGN_OR_RETURN(auto run, NewRun());
  run->written = written;
  run->buffer.reserve(kWriteBufferBytes + 4096);
  for (size_t i = 0; i < batch.size(); ++i) WIDEN_RETURN_IF_ERROR(run->Write(batch.Get(i)));
  WIDEN_RETURN_IF_ERROR(run->FlushWrites());
  run->buffer.shrink_to_fit();
  std::lock_guard<std::mutex> lock(mu_);
  ++runs_written_;
  bytes_written_ += run->size;
  runs_.push_back(std::move(run));
  if (runs_.size() > kMaxRuns) return MergeOldest(kMergeWidth);
  return Status::OK();
}

Status CellRuns::MergeOldest(size_t count) {
  // Runs of cells already in the target (always the oldest: a sink reads
  // them back before it spills anything else) are merged only with each
  // other, so the merged run keeps one flag.
  size_t written = 0;
  while (written < runs_.size() && runs_[written]->written) ++written;
  size_t first = 0, n = std::min(count, written);
  if (n < 2) {
    first = written;
    n = std::min(count, runs_.size() - written);
  }
  if (n < 2) return Status::OK();
  std::vector<std::unique_ptr<Run>> oldest;
  for (size_t i = first; i < first + n; ++i) oldest.push_back(std::move(runs_[i]));
  runs_.erase(runs_.begin() + static_cast<std::ptrdiff_t>(first),
              runs_.begin() + static_cast<std::ptrdiff_t>(first + n));
  WIDEN_ASSIGN_OR_RETURN(auto merged, NewRun());
  merged->written = first == 0 && written > 0;
  Run* out = merged.get();
  WIDEN_RETURN_IF_ERROR(MergeRuns(
      std::move(oldest), [out](const CellView& c, bool) { return out->Write(c); }, nullptr));
  WIDEN_RETURN_IF_ERROR(out->FlushWrites());
  out->buffer.shrink_to_fit();
  ++runs_written_;
  bytes_written_ += out->size;
  runs_.insert(runs_.begin() + static_cast<std::ptrdiff_t>(first), std::move(merged));
  return Status::OK();
}

Status CellRuns::MergeRuns(std::vector<std::unique_ptr<Run>> runs, const MergeFn& fn,
                           const std::atomic<bool>* cancel) {
  const size_t read_bytes = std::clamp(kMergeReadBytes / std::max<size_t>(runs.size(), 1),
                                       kMinReadBufferBytes, kReadBufferBytes);
  for (auto& r : runs) {
    r->read_bytes = read_bytes;
    WIDEN_RETURN_IF_ERROR(r->StartReading());
  }
  // Smallest cell first; for equal cells, the earlier run.
  auto later = [&runs](size_t a, size_t b) {
    const int c = CompareCells(runs[a]->cell, runs[b]->cell);
    return c != 0 ? c > 0 : a > b;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i]->valid) heap.push(i);
  }
  uint64_t n = 0;
  while (!heap.empty()) {
    const size_t i = heap.top();
    heap.pop();
    // The run stays the smallest while its cells come before the other
    // runs' smallest (a row's cells usually come from one run): one
    // comparison per cell instead of a pop and a push.
    for (;;) {
      if ((++n & 0x3fff) == 0 && cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
        return Status::Cancelled("interrupted");
      }
      WIDEN_RETURN_IF_ERROR(fn(runs[i]->cell, runs[i]->written));
      WIDEN_RETURN_IF_ERROR(runs[i]->Advance());
      if (!runs[i]->valid) {
        runs[i].reset();  // closes the file as soon as it is read
        break;
      }
      if (!heap.empty() && later(i, heap.top())) {
        heap.push(i);
        break;
      }
    }
  }
  return Status::OK();
}

Status CellRuns::Merge(const MergeFn& fn, const std::atomic<bool>* cancel) {
  return MergeAll({this}, fn, cancel);
}

Status CellRuns::MergeAll(const std::vector<CellRuns*>& sets, const MergeFn& fn,
                          const std::atomic<bool>* cancel) {
  std::vector<std::unique_ptr<Run>> runs;
  const size_t share = std::max<size_t>(2, kMaxRuns / std::max<size_t>(1, sets.size()));
  for (CellRuns* set : sets) {
    std::lock_guard<std::mutex> lock(set->mu_);
    while (set->runs_.size() > share) {
      const size_t before = set->runs_.size();
      WIDEN_RETURN_IF_ERROR(set->MergeOldest(std::min(kMergeWidth, before - share + 1)));
      if (set->runs_.size() == before) break;  // nothing left to merge
    }
    for (auto& r : set->runs_) runs.push_back(std::move(r));
    set->runs_.clear();
  }
  return MergeRuns(std::move(runs), fn, cancel);
}

size_t CellRuns::runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_.size();
}

uint64_t CellRuns::runs_written() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_written_;
}

uint64_t CellRuns::bytes_written() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_written_;
}

}  // namespace widen
