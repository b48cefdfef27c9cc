#include "cmd/exit_codes.h"

namespace widen {

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
      return kExitInvalid;
    case StatusCode::kUnavailable:
      return kExitUnavailable;
    case StatusCode::kUnauthenticated:
    case StatusCode::kPermissionDenied:
      return kExitUnauthenticated;
    case StatusCode::kFailedPrecondition:
      return kExitTargetState;
    case StatusCode::kDataLoss:
      return kExitDataLoss;
    case StatusCode::kCancelled:
      return kExitCancelled;
    case StatusCode::kAborted:
      return kExitBusy;
    case StatusCode::kLocalIo:
      return kExitLocalIo;
    case StatusCode::kInternal:
      return kExitInternal;
  }
  return kExitInternal;
}

namespace {

constexpr ExitCodeDoc kExitCodeDocs[] = {
    {kExitOk, "success"},
    {kExitInternal, "internal error (a bug; please report it with the message)"},
    {kExitInvalid,
     "bad command line, mapping or data: the message names the file:line:col, table, column or "
     "row"},
    {kExitUnavailable,
     "a server cannot be reached, went away or stopped answering, or asks for a retry; running "
     "again may help"},
    {kExitUnauthenticated,
     "the server refused the credentials, or the user lacks a privilege the run needs"},
    {kExitTargetState,
     "the target is in a state that must be fixed first (a table with other families or another "
     "row key layout; another kind of server on an hbase:// port)"},
    {kExitDataLoss,
     "the target store is damaged (the message names the file); widen repair copies what can be "
     "read into a new store"},
    {kExitBusy,
     "the target store or table is held by another widen process: nothing was written; run again "
     "when that one has ended"},
    {kExitReplaced,
     "widen migrate or sync finished, but some cells replaced another cell of the same run (the "
     "message names the first)"},
    {kExitDifferent, "widen verify finished and the target differs from the source"},
    {kExitOutput, "the command's output could not be written (a full disk, a file that went away)"},
    {kExitLocalIo,
     "a local file widen writes failed (a full disk, no permission, a missing folder): nothing "
     "was recorded as done"},
    {kExitCancelled,
     "interrupted (Ctrl-C, SIGTERM): a table being written is left incomplete; run it again"},
};

}  // namespace

std::span<const ExitCodeDoc> ExitCodeDocs() { return kExitCodeDocs; }

}  // namespace widen
