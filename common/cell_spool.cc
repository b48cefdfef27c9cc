#include "common/cell_spool.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "common/cell_record_internal.h"

namespace widen {

namespace {

constexpr size_t kBufferBytes = 1 << 20;

}  // namespace

Result<std::unique_ptr<CellSpool>> CellSpool::Open(const std::string& dir) {
  std::unique_ptr<CellSpool> spool(new CellSpool());
  const char* env = std::getenv("TMPDIR");
  const std::string base = !dir.empty() ? dir : env != nullptr && *env != '\0' ? env : "/tmp";
  spool->path_ = base + "/widen-spool-XXXXXX";
  const int fd = mkstemp(spool->path_.data());
  if (fd < 0) return spool->Error("creating");
  unlink(spool->path_.c_str());  // gone when closed, whatever happens
  spool->file_ = fdopen(fd, "w+b");
  if (spool->file_ == nullptr) {
    Status s = spool->Error("opening");
    close(fd);
    return s;
  }
  std::setvbuf(spool->file_, nullptr, _IOFBF, kBufferBytes);  // for Replay's reads
  return spool;
}

CellSpool::~CellSpool() {
  if (file_ != nullptr) std::fclose(file_);
}

Status CellSpool::Put(const CellView& c) {
  // One record appended to a buffer, written out 1 MiB at a time.
  cell_record::Append(c, &buffer_);
  ++stats_.cells;
  stats_.bytes += c.row.size() + c.family.size() + c.qualifier.size() + c.value.size();
  return buffer_.size() >= kBufferBytes ? WriteBuffer() : Status::OK();
}

Status CellSpool::Flush() {
  WIDEN_RETURN_IF_ERROR(WriteBuffer());
  return std::fflush(file_) == 0 ? Status::OK() : Error("writing");
}

Status CellSpool::Replay(CellSink* to, const std::atomic<bool>* cancel) {
  WIDEN_RETURN_IF_ERROR(Flush());
  if (std::fseek(file_, 0, SEEK_SET) != 0) return Error("reading");
  Status s = ReadAll(to, cancel);
  // Back to the end whatever happened, so that later Puts append.
  if (std::fseek(file_, 0, SEEK_END) != 0 && s.ok()) s = Error("reading");
  return s;
}

Status CellSpool::ReadAll(CellSink* to, const std::atomic<bool>* cancel) {
  char head[cell_record::kHeadBytes];
  std::string record;
  for (uint64_t n = 0; n < stats_.cells; ++n) {
    if ((n & 0x3fff) == 0 && cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      return Status::Cancelled("interrupted");
    }
    errno = 0;
    if (std::fread(head, sizeof head, 1, file_) != 1) return Error("reading");
    const size_t body = cell_record::BodyBytes(head);
    record.assign(head, sizeof head);
    record.resize(sizeof head + body);
    if (body > 0 && std::fread(record.data() + sizeof head, body, 1, file_) != 1) {
      return Error("reading");
    }
    WIDEN_RETURN_IF_ERROR(to->Put(cell_record::Parse(record.data())));
  }
  return Status::OK();
}

Status CellSpool::WriteBuffer() {
  if (!buffer_.empty() && std::fwrite(buffer_.data(), buffer_.size(), 1, file_) != 1) {
    return Error("writing");
  }
  buffer_.clear();
  return Status::OK();
}

Status CellSpool::Error(const char* what) const {
  const int err = errno;
  return Status::LocalIo(fmt::format(
      "{} the temporary spool file {} of a parallel job: {} (temporary files go to $TMPDIR, else "
      "/tmp)",
      what, path_, err != 0 ? std::strerror(err) : "it is shorter than written"));
}

}  // namespace widen
