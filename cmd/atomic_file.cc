#include "cmd/atomic_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace widen {

namespace {

namespace fs = std::filesystem;

// The folder a file name is in ("." for a bare name).
std::string FolderOf(const std::string& path) {
  const fs::path folder = fs::path(path).parent_path();
  return folder.empty() ? "." : folder.string();
}

}  // namespace

Result<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::string& path,
                                                       const std::string& option) {
  const std::string folder = FolderOf(path);
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return LocalIoError(fmt::format("{} {}: cannot write the file there", option, path), EISDIR);
  }
  std::string temp =
      (fs::path(folder) / ("." + fs::path(path).filename().string() + ".widen-XXXXXX")).string();
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT && !fs::exists(folder, ec)) {
      return Status::LocalIo(
          fmt::format("{} {}: the folder '{}' does not exist", option, path, folder));
    }
    if (err == ENOTDIR) {
      return Status::LocalIo(fmt::format("{} {}: '{}' is not a folder", option, path, folder));
    }
    return LocalIoError(fmt::format("{} {}: cannot write in the folder '{}'", option, path, folder),
                        err);
  }
  // mkstemp makes the file 0600; the file gets the usual mode.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  (void)::fchmod(fd, 0666 & ~mask);
  return std::unique_ptr<AtomicFile>(new AtomicFile(path, option, temp, fd));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

Status AtomicFile::Write(std::string_view data) {
  const char* p = data.data();
  size_t size = data.size();
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return LocalIoError(fmt::format("{}: cannot write '{}'", what(), temp_path_), errno);
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status::OK();
}

Status AtomicFile::Commit() {
  // fsync first: after a crash PATH is the old file or the whole new one,
  // never a renamed file whose bytes did not reach the disk.
  if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) {
    return LocalIoError(fmt::format("{}: cannot write '{}'", what(), temp_path_), errno);
  }
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) {
    return LocalIoError(fmt::format("{}: cannot write '{}'", what(), temp_path_), errno);
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return LocalIoError(fmt::format("{}: cannot rename '{}' onto it", what(), temp_path_), errno);
  }
  committed_ = true;
  return Status::OK();
}

}  // namespace widen
