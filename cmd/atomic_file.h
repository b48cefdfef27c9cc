// A file a command writes whole or not at all: the bytes go into a hidden
// temporary file beside PATH (".NAME.widen-XXXXXX" in PATH's folder), made
// when the command starts — so a folder that does not exist, or one widen
// cannot write in, is named before the source is read — and Commit makes it
// durable (fsync) and renames it onto PATH (rename(2) is atomic within a
// file system): a reader sees PATH either as it was or whole, never in part.
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

#include "common/status.h"

namespace widen {

class AtomicFile {
 public:
  /// Makes the temporary file in PATH's folder, mode 0666 less the umask (as
  /// a file made by open(2) would have). LocalIo naming the folder when it
  /// does not exist ("the folder 'out/x' does not exist"), is not a folder,
  /// or cannot be written in (with the system's reason), and when PATH is a
  /// folder. `option` names the option for messages ("--diagram").
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
  /// "OPTION PATH", what messages about this file start with.
  std::string what() const { return option_ + " " + path_; }

 private:
  AtomicFile(std::string path, std::string option, std::string temp_path, int fd)
      : path_(std::move(path)),
        option_(std::move(option)),
        temp_path_(std::move(temp_path)),
        fd_(fd) {}

  const std::string path_;       // as the user gave it
  const std::string option_;     // "--diagram", "--html", "--metrics-file"
  const std::string temp_path_;  // the hidden file beside path_
  int fd_;                       // temp_path_, open for writing; -1 once closed
  bool committed_ = false;
};

}  // namespace widen
