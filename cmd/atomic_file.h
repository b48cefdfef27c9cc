// A file a command writes whole or not at all: the bytes go into a hidden
// temporary file beside PATH (".widen-PID-XXXXXX" in PATH's folder: PID the
// writer's process id, XXXXXX random; a short name whatever PATH's, so a
// file name of 255 bytes is valid), made
// when the command starts — so a folder that does not exist, or one widen
// cannot write in, is named before the source is read — and Commit makes it
// durable (fsync) and renames it onto PATH (rename(2) is atomic within a
// file system): a reader sees PATH either as it was or whole, never in part.
// A PATH that is a symbolic link (dangling or not) stays one: the file is
// written beside the file it points to and renamed onto that. A process
// killed before Commit (kill -9) leaves its temporary file behind; it can be
// removed once that process is gone (README, "Operating it").
// Used for plan's --diagram and --html files and the --metrics-file of
// migrate and sync.
//
// Every message starts with "OPTION PATH: " (the option that named the file,
// "--diagram out/d.svg: ..."), so the user knows which file failed.
//
// Thread safety: not thread safe; one object per file.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace widen {

class AtomicFile {
 public:
  /// Makes the temporary file in PATH's folder, mode 0666 less the umask (as
  /// a file made by open(2) would have), PATH's links followed. LocalIo
  /// naming the folder when it does not exist ("the folder 'out/x' does not
  /// exist"), is not a folder, or cannot be written in (with the system's
  /// reason); LocalIo when PATH is a folder, or exists and is not a regular
  /// file (a FIFO, a device: never opened). `option` names the option for
  /// messages ("--diagram").
  static Result<std::unique_ptr<AtomicFile>> Create(const std::string& path,
                                                    const std::string& option);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  /// Removes the temporary file unless Commit succeeded.
  ~AtomicFile();

  /// Appends `data` to the temporary file. LocalIo naming it and the reason
  /// (a full disk) when a write fails. REQUIRES: Commit not called.
  Status Write(std::string_view data);

  /// Flushes the temporary file to the disk (fsync), closes it and renames
  /// it onto PATH. LocalIo naming the file and the reason. REQUIRES: called
  /// at most once.
  Status Commit();

  const std::string& path() const { return path_; }
  /// The file Commit replaces: PATH with its links followed.
  const std::string& target() const { return target_; }
  /// "OPTION PATH", what messages about this file start with.
  std::string what() const { return option_ + " " + path_; }

 private:
  AtomicFile(std::string path, std::string option, std::string target, std::string temp_path,
             int fd)
      : path_(std::move(path)),
        option_(std::move(option)),
        target_(std::move(target)),
        temp_path_(std::move(temp_path)),
        fd_(fd) {}

  const std::string path_;       // as the user gave it
  const std::string option_;     // "--diagram", "--html", "--metrics-file"
  const std::string target_;     // path_ with its links followed
  const std::string temp_path_;  // the hidden file beside target_
  int fd_;                       // temp_path_, open for writing; -1 once closed
  bool committed_ = false;
};

/// A file the command line names: `option` ("-m", "--metrics-file") and
/// the path as given ("" when the option is not given).
struct NamedPath {
  std::string option;
  std::string path;
};

/// What a command checks before it reads anything: no output of `outputs`
/// is the same file as an input of `inputs` (the mapping) or another
/// output, and none is inside the embedded (leveldb:) target store.
/// Files are compared by their real paths (links followed, "." and ".."
/// resolved: std::filesystem::weakly_canonical) and, when both exist, by
/// device and inode (hard links). The store is `target_url` when set, else
/// the mapping's target (its ${VAR}s filled in; a mapping that does not
/// load is left to the run to report, and no store is checked).
/// InvalidArgument (exit 2) naming both options and paths ("--metrics-file
/// m.yaml is the same file as -m m.yaml"), or the option, the path and the
/// store. Empty paths are skipped.
Status CheckOutputPaths(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs,
                        const std::string& mapping_path, const std::string& target_url);

}  // namespace widen
