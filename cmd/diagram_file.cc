#include "cmd/diagram_file.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

extern char** environ;

namespace widen {

namespace {

namespace fs = std::filesystem;

// The folder a file name is in ("." for a bare name).
std::string FolderOf(const std::string& path) {
  const fs::path folder = fs::path(path).parent_path();
  return folder.empty() ? "." : folder.string();
}

}  // namespace

Result<std::unique_ptr<DiagramFile>> DiagramFile::Create(const std::string& path) {
  const size_t d = path.rfind('.');
  std::string ext = d == std::string::npos ? "" : path.substr(d + 1);
  if (ext == "gv") ext = "dot";
  if (ext != "dot" && ext != "svg" && ext != "png" && ext != "pdf") {
    return Status::InvalidArgument(
        fmt::format("--diagram {}: expected a file name ending in .dot, .svg, .png or .pdf", path));
  }
  const std::string folder = FolderOf(path);
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return LocalIoError(fmt::format("--diagram {}: cannot write the diagram there", path), EISDIR);
  }
  std::string temp =
      (fs::path(folder) / ("." + fs::path(path).filename().string() + ".widen-XXXXXX")).string();
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT && !fs::exists(folder, ec)) {
      return Status::LocalIo(
          fmt::format("--diagram {}: the folder '{}' does not exist", path, folder));
    }
    if (err == ENOTDIR) {
      return Status::LocalIo(fmt::format("--diagram {}: '{}' is not a folder", path, folder));
    }
    return LocalIoError(fmt::format("--diagram {}: cannot write in the folder '{}'", path, folder),
                        err);
  }
  // mkstemp makes the file 0600; a diagram gets the usual mode.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  (void)::fchmod(fd, 0666 & ~mask);
  return std::unique_ptr<DiagramFile>(new DiagramFile(path, ext, temp, fd));
}

DiagramFile::~DiagramFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

Status DiagramFile::WriteAll(const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return LocalIoError(fmt::format("--diagram {}: cannot write '{}'", path_, temp_path_), errno);
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::OK();
}

// Runs `dot -T<format>` with the DOT text on its standard input (a memory
// file) and copies its standard output into the temporary file.
Status DiagramFile::Render(const std::string& dot) {
  const int in = ::memfd_create("widen-diagram-dot", MFD_CLOEXEC);
  if (in < 0) return LocalIoError("--diagram: cannot make a memory file for Graphviz", errno);
  size_t done = 0;
  while (done < dot.size()) {
    const ssize_t n = ::write(in, dot.data() + done, dot.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(in);
      return LocalIoError("--diagram: cannot fill a memory file for Graphviz", err);
    }
    done += static_cast<size_t>(n);
  }
  ::lseek(in, 0, SEEK_SET);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    const int err = errno;
    ::close(in);
    return LocalIoError("--diagram: cannot make a pipe for Graphviz", err);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);  // widen ignores it; dot gets the default back
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  const std::string type = "-T" + format_;
  char* argv[] = {const_cast<char*>("dot"), const_cast<char*>(type.c_str()), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "dot", &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(in);
  ::close(out[1]);
  if (spawned != 0) {
    ::close(out[0]);
    return Status::Unavailable(fmt::format(
        "--diagram {}: cannot run Graphviz's dot ({}); is it installed (apt-get install "
        "graphviz)? Or write FILE.dot and render it elsewhere",
        path_, std::strerror(spawned)));
  }
  Status written;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written = WriteAll(buf, static_cast<size_t>(n));
    if (!written.ok()) break;
  }
  ::close(out[0]);  // a dot still writing gets SIGPIPE
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!written.ok()) return written;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    return Status::Unavailable(fmt::format(
        "--diagram {}: Graphviz's dot failed ({} {}; its message, if any, is above)", path_,
        WIFEXITED(st) ? "exit status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st)));
  }
  return Status::OK();
}

Status DiagramFile::Commit(const std::string& dot) {
  WIDEN_RETURN_IF_ERROR(format_ == "dot" ? WriteAll(dot.data(), dot.size()) : Render(dot));
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) {
    return LocalIoError(fmt::format("--diagram {}: cannot write '{}'", path_, temp_path_), errno);
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return LocalIoError(fmt::format("--diagram {}: cannot rename '{}' onto it", path_, temp_path_),
                        errno);
  }
  committed_ = true;
  return Status::OK();
}

}  // namespace widen
