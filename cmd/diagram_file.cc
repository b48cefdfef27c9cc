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

#include <fmt/format.h>

extern char** environ;

namespace widen {

Result<std::unique_ptr<DiagramFile>> DiagramFile::Create(const std::string& path) {
  const size_t d = path.rfind('.');
  std::string ext = d == std::string::npos ? "" : path.substr(d + 1);
  if (ext == "gv") ext = "dot";
  if (ext != "dot" && ext != "svg" && ext != "png" && ext != "pdf") {
    return Status::InvalidArgument(
        fmt::format("--diagram {}: expected a file name ending in .dot, .svg, .png or .pdf", path));
  }
  WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> file, AtomicFile::Create(path, "--diagram"));
  return std::unique_ptr<DiagramFile>(new DiagramFile(ext, std::move(file)));
}

// Runs `dot -T<format>` with the DOT text on its standard input (a memory
// file) and copies its standard output into `out`.
Status RenderDot(const std::string& dot, const std::string& format, const std::string& what,
                 const std::function<Status(std::string_view)>& out) {
  const int in = ::memfd_create("widen-diagram-dot", MFD_CLOEXEC);
  if (in < 0) return LocalIoError(what + ": cannot make a memory file for Graphviz", errno);
  size_t done = 0;
  while (done < dot.size()) {
    const ssize_t n = ::write(in, dot.data() + done, dot.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(in);
      return LocalIoError(what + ": cannot fill a memory file for Graphviz", err);
    }
    done += static_cast<size_t>(n);
  }
  ::lseek(in, 0, SEEK_SET);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    const int err = errno;
    ::close(in);
    return LocalIoError(what + ": cannot make a pipe for Graphviz", err);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);  // widen ignores it; dot gets the default back
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  const std::string type = "-T" + format;
  char* argv[] = {const_cast<char*>("dot"), const_cast<char*>(type.c_str()), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "dot", &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(in);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    return Status::Unavailable(fmt::format(
        "{}: cannot run Graphviz's dot ({}); is it installed (apt-get install graphviz)? Or "
        "write FILE.dot and render it elsewhere",
        what, std::strerror(spawned)));
  }
  Status written;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written = out(std::string_view(buf, static_cast<size_t>(n)));
    if (!written.ok()) break;
  }
  ::close(pipe_fds[0]);  // a dot still writing gets SIGPIPE
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!written.ok()) return written;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    return Status::Unavailable(fmt::format(
        "{}: Graphviz's dot failed ({} {}; its message, if any, is above)", what,
        WIFEXITED(st) ? "exit status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st)));
  }
  return Status::OK();
}

Status DiagramFile::Commit(const std::string& dot) {
  WIDEN_RETURN_IF_ERROR(
      format_ == "dot" ? file_->Write(dot)
                       : RenderDot(dot, format_, file_->what(),
                                   [this](std::string_view bytes) { return file_->Write(bytes); }));
  return file_->Commit();
}

}  // namespace widen
