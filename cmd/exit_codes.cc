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

}  // namespace widen
