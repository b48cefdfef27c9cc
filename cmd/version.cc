#include "cmd/version.h"

#include "widen_build_info.h"

namespace widen {

const char* WidenVersion() { return WIDEN_VERSION_STRING; }

const char* WidenSourceCommit() { return WIDEN_SOURCE_COMMIT; }

std::string WidenVersionLine() {
  return std::string("widen ") + WidenVersion() + " (commit " + WidenSourceCommit() + ")";
}

}  // namespace widen
