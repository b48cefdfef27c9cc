// The file `widen plan --diagram PATH` writes: Graphviz DOT text as is
// (PATH ending in .dot or .gv) or rendered by Graphviz's `dot` (.svg, .png,
// .pdf). The file is an AtomicFile (cmd/atomic_file.h): made when the
// command starts (so a missing folder or one widen cannot write in is named
// before the source is read), and renamed onto PATH once whole: PATH is
// either left as it was or holds the whole diagram. widen writes every byte
// itself (dot's output comes through a pipe, RenderDot), so a full disk is
// reported as such, never as dot's failure.
//
// Thread safety: not thread safe; one object per command.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "cmd/atomic_file.h"
#include "common/status.h"

namespace widen {

/// Runs Graphviz's `dot -T<format>` ("svg", "png", "pdf") on `dot` (DOT
/// text) and hands its output to `out`, piece by piece. Unavailable when
/// dot is not installed (saying how to install it) or fails (its own message
/// is on stderr); `out`'s errors. `what` starts the messages ("--diagram
/// d.svg").
Status RenderDot(const std::string& dot, const std::string& format, const std::string& what,
                 const std::function<Status(std::string_view)>& out);

class DiagramFile {
 public:
  /// Checks PATH's extension (InvalidArgument naming the ones accepted) and
  /// makes the temporary file in PATH's folder. LocalIo naming the folder
  /// when it does not exist ("the folder 'out/x' does not exist") or cannot
  /// be written in, with the system's reason.
  static Result<std::unique_ptr<DiagramFile>> Create(const std::string& path);
  DiagramFile(const DiagramFile&) = delete;
  DiagramFile& operator=(const DiagramFile&) = delete;
  ~DiagramFile() = default;

  /// Writes `dot` (Graphviz DOT text), rendered when PATH asks for it, into
  /// the temporary file and renames it onto PATH. LocalIo naming the file
  /// and the reason (a full disk) when a write fails; Unavailable when
  /// Graphviz's dot is not installed or fails (its own message is on
  /// stderr). REQUIRES: called at most once.
  Status Commit(const std::string& dot);

 private:
  DiagramFile(std::string format, std::unique_ptr<AtomicFile> file)
      : format_(std::move(format)), file_(std::move(file)) {}

  const std::string format_;  // "dot" (written as is), "svg", "png" or "pdf"
  std::unique_ptr<AtomicFile> file_;
};

}  // namespace widen
