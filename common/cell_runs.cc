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

#include "common/cell_record_internal.h"

namespace widen {

namespace {

using cell_record::kHeadBytes;
constexpr size_t kWriteBufferBytes = 1 << 20;
constexpr size_t kReadBufferBytes = 256 << 10;

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

// One run: an unlinked file written once, then read once from the start.
struct CellRuns::Run {
  int fd = -1;
  std::string path;       // for messages (the name is unlinked at once)
  uint64_t size = 0;      // bytes written
  std::string buffer;     // write buffer, then read buffer
  size_t pos = 0;         // read: next record's offset in buffer
  uint64_t file_pos = 0;  // read: file offset of buffer's end
  CellView cell;          // read: the current record, a view into buffer
  bool valid = false;
  bool written = false;  // its cells are in the target already

  ~Run() {
    if (fd >= 0) close(fd);
  }

  Status Write(const CellView& c) {
    cell_record::Append(c, &buffer);
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

  // Ensures buffer[pos, pos + bytes) holds file bytes; false at the end.
  Result<bool> Fill(size_t bytes) {
    if (buffer.size() - pos >= bytes) return true;
    buffer.erase(0, pos);
    pos = 0;
    const size_t want = std::max(bytes, kReadBufferBytes);
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

  // Reads the next record into `cell`; valid = false at the end.
  Status Advance() {
    WIDEN_ASSIGN_OR_RETURN(bool have, Fill(kHeadBytes));
    if (!have) {
      if (buffer.size() != pos) {
        return Status::LocalIo(fmt::format("the temporary sort file {} ends mid-record", path));
      }
      valid = false;
      return Status::OK();
    }
    const size_t body = cell_record::BodyBytes(buffer.data() + pos);
    WIDEN_ASSIGN_OR_RETURN(have, Fill(kHeadBytes + body));
    if (!have) {
      return Status::LocalIo(fmt::format("the temporary sort file {} ends mid-record", path));
    }
    cell = cell_record::Parse(buffer.data() + pos);
    pos += kHeadBytes + body;
    valid = true;
    return Status::OK();
  }

  Status StartReading() {
    buffer.clear();
    buffer.shrink_to_fit();
    pos = 0;
    file_pos = 0;
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
  for (auto& r : runs) WIDEN_RETURN_IF_ERROR(r->StartReading());
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
