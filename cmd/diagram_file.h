// The file `widen plan --diagram PATH` writes: Graphviz DOT text as is
// (PATH ending in .dot or .gv) or rendered by Graphviz's `dot` (.svg, .png,
// .pdf). The file is built beside PATH, in a hidden temporary file of the
// same folder made when the command starts (so a missing folder or one
// widen cannot write in is named before the source is read), and renamed
// onto PATH once whole: PATH is either left as it was or holds the whole
// diagram. widen writes every byte itself (dot's output comes through a
// pipe), so a full disk is reported as such, never as dot's failure.
//
// Thread safety: not thread safe; one object per command.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"

namespace widen {

class DiagramFile {
 public:
  /// Checks PATH's extension (InvalidArgument naming the ones accepted) and
  /// makes the temporary file in PATH's folder. LocalIo naming the folder
  /// when it does not exist ("the folder 'out/x' does not exist") or cannot
  /// be written in, with the system's reason.
  static Result<std::unique_ptr<DiagramFile>> Create(const std::string& path);
  DiagramFile(const DiagramFile&) = delete;
  DiagramFile& operator=(const DiagramFile&) = delete;
  /// Removes the temporary file unless Commit succeeded.
  ~DiagramFile();

  /// Writes `dot` (Graphviz DOT text), rendered when PATH asks for it, into
  /// the temporary file and renames it onto PATH. LocalIo naming the file
  /// and the reason (a full disk) when a write fails; Unavailable when
  /// Graphviz's dot is not installed or fails (its own message is on
  /// stderr). REQUIRES: called at most once.
  Status Commit(const std::string& dot);

 private:
  DiagramFile(std::string path, std::string format, std::string temp_path, int fd)
      : path_(std::move(path)),
        format_(std::move(format)),
        temp_path_(std::move(temp_path)),
        fd_(fd) {}

  Status WriteAll(const char* data, size_t size);
  Status Render(const std::string& dot);

  const std::string path_;       // as the user gave it
  const std::string format_;     // "dot" (written as is), "svg", "png" or "pdf"
  const std::string temp_path_;  // the hidden file beside path_
  int fd_;                       // temp_path_, open for writing; -1 once closed
  bool committed_ = false;
};

}  // namespace widen
