// Exit codes of the widen command (documented in README.md, "Exit codes").
#pragma once

#include <span>

#include "common/status.h"

namespace widen {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,         // a bug or an unexpected failure
  kExitInvalid = 2,          // bad command line, mapping or data (InvalidArgument, NotFound)
  kExitUnavailable = 3,      // a server cannot be reached or went away (Unavailable)
  kExitUnauthenticated = 4,  // credentials refused, or a privilege missing (PermissionDenied)
  kExitTargetState = 5,      // the target must be fixed first (FailedPrecondition)
  kExitDataLoss = 6,         // corrupt bytes in the target (DataLoss)
  kExitBusy = 7,             // the store is held by another widen process: retry later (Aborted)
  kExitReplaced = 8,         // the run ended, but cells replaced others of the same run
  kExitDifferent = 9,        // widen verify: the target differs from the source
  kExitOutput = 10,          // the output could not be written (a full disk, a closed file)
  kExitLocalIo = 11,         // a local file widen writes failed: nothing recorded as done (LocalIo)
  kExitCancelled = 130,      // interrupted (Ctrl-C)
};

/// The exit code for a failed Status.
int ExitCodeFor(const Status& status);

/// One exit code and what it means, in a line (the man pages' EXIT STATUS).
struct ExitCodeDoc {
  int code;
  const char* meaning;
};

/// Every code of ExitCode, in increasing order (README.md, "Exit codes",
/// says more about each).
std::span<const ExitCodeDoc> ExitCodeDocs();

}  // namespace widen
