#include "cmd/atomic_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "cmd/run.h"

namespace widen {

namespace {

namespace fs = std::filesystem;

// The folder a file name is in ("." for a bare name).
std::string FolderOf(const std::string& path) {
  const fs::path folder = fs::path(path).parent_path();
  return folder.empty() ? "." : folder.string();
}

// The file PATH names once its symbolic links are followed (a dangling
// link gives the path it points to); LocalIo after 40 links (a loop).
Result<std::string> ResolveLinks(const std::string& path, const std::string& option) {
  std::string at = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (::lstat(at.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return at;
    std::string link(static_cast<size_t>(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
    const ssize_t n = ::readlink(at.c_str(), link.data(), link.size());
    if (n < 0)
      return LocalIoError(fmt::format("{} {}: cannot read the link '{}'", option, path, at), errno);
    link.resize(static_cast<size_t>(n));
    const fs::path to(link);
    at = to.is_absolute() ? link : (fs::path(FolderOf(at)) / to).string();
  }
  return LocalIoError(fmt::format("{} {}: cannot follow its links", option, path), ELOOP);
}

// A path's real form for comparisons: links followed, weakly_canonical.
fs::path RealPath(const std::string& path) {
  auto linked = ResolveLinks(path, "");
  std::error_code ec;
  fs::path p = fs::weakly_canonical(linked.ok() ? *linked : path, ec);
  return ec ? fs::absolute(path, ec).lexically_normal() : p;
}

// `inner` is `outer` or inside it (both real paths).
bool Inside(const fs::path& inner, const fs::path& outer) {
  auto [o, i] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return o == outer.end() || (std::next(o) == outer.end() && o->empty());
}

// The folder of the embedded store the run writes, "" when none is known.
std::string StoreFolder(const std::string& mapping_path, const std::string& target_url) {
  std::string url = target_url;
  if (url.empty() && mapping_path.empty()) return "";
  if (url.empty()) {
    DesignRequest dr;
    dr.mapping_path = mapping_path;
    dr.open_source = false;
    auto design = LoadDesign(dr);
    if (!design.ok() || !(*design)->mapping.target_problem.ok()) return "";
    url = (*design)->mapping.target_url;
  }
  return url.rfind("leveldb:", 0) == 0 ? url.substr(8) : "";
}

}  // namespace

Status CheckOutputPaths(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs,
                        const std::string& mapping_path, const std::string& target_url) {
  struct File {
    const NamedPath* named;
    fs::path real;
    bool exists = false;
    struct stat st {};
  };
  auto file = [](const NamedPath& n) {
    File f{&n, RealPath(n.path)};
    f.exists = ::stat(f.real.c_str(), &f.st) == 0;
    return f;
  };
  std::vector<File> ins, outs;
  for (const NamedPath& n : inputs) {
    if (!n.path.empty()) ins.push_back(file(n));
  }
  for (const NamedPath& n : outputs) {
    if (!n.path.empty()) outs.push_back(file(n));
  }
  auto same = [](const File& a, const File& b) {
    if (a.exists && b.exists) return a.st.st_dev == b.st.st_dev && a.st.st_ino == b.st.st_ino;
    return a.real == b.real;
  };
  for (size_t i = 0; i < outs.size(); ++i) {
    const File& out = outs[i];
    auto refuse = [&](const File& other, const char* kind) {
      return Status::InvalidArgument(
          fmt::format("{} {} is the same file as {} {}: {}; give another path", out.named->option,
                      out.named->path, other.named->option, other.named->path, kind));
    };
    for (const File& in : ins) {
      if (same(out, in)) return refuse(in, "widen would write over its input");
    }
    for (size_t j = 0; j < i; ++j) {
      if (same(out, outs[j])) return refuse(outs[j], "one output would replace the other");
    }
  }
  if (outs.empty()) return Status::OK();
  const std::string store = StoreFolder(mapping_path, target_url);
  if (store.empty()) return Status::OK();
  const fs::path store_real = RealPath(store);
  for (const File& out : outs) {
    if (Inside(out.real, store_real)) {
      return Status::InvalidArgument(fmt::format(
          "{} {}: that is inside the target store {} (leveldb:{}), whose files it would "
          "replace; give a path outside the store",
          out.named->option, out.named->path, store_real.string(), store));
    }
  }
  return Status::OK();
}

Result<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::string& path,
                                                       const std::string& option) {
  // A link stays a link: the new file replaces what it points to.
  WIDEN_ASSIGN_OR_RETURN(const std::string target, ResolveLinks(path, option));
  const std::string folder = FolderOf(target);
  struct stat st;
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return LocalIoError(fmt::format("{} {}: cannot write the file there", option, path), EISDIR);
    }
    if (!S_ISREG(st.st_mode)) {
      return Status::LocalIo(fmt::format(
          "{} {}: {} is not a regular file (a FIFO, a device or a socket); give the path of a "
          "file",
          option, path, target == path ? "it" : "'" + target + "', where it links,"));
    }
  }
  // A short name whatever the file's (a 255-byte file name stays valid);
  // the pid tells whose it is (README, "Operating it").
  std::string temp =
      (fs::path(folder) / fmt::format(".widen-{}-XXXXXX", static_cast<long>(::getpid()))).string();
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    std::error_code ec;
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
  return std::unique_ptr<AtomicFile>(new AtomicFile(path, option, target, temp, fd));
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
  if (::rename(temp_path_.c_str(), target_.c_str()) != 0) {
    return LocalIoError(fmt::format("{}: cannot rename '{}' onto it", what(), temp_path_), errno);
  }
  committed_ = true;
  return Status::OK();
}

}  // namespace widen
