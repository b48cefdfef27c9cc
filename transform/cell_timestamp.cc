#include "transform/cell_timestamp.h"

#include <fmt/format.h>

#include "common/temporal.h"

namespace widen {

bool CellTimestampMs(const Value& v, int64_t* ms, std::string* why) {
  if (!EpochMs(v, ms)) {
    *why = v.is_null() ? "NULL, which has no timestamp"
                       : fmt::format("{}, which has no timestamp", v.DebugString());
    return false;
  }
  const std::string shown = v.type() == ValueType::kInt
                                ? v.DebugString()
                                : fmt::format("{} ({} ms)", v.DebugString(), *ms);
  if (*ms < kMinCellTimestampMs) {
    *why = fmt::format("{}, before 1970: HBase refuses negative cell timestamps", shown);
    return false;
  }
  if (*ms > kMaxCellTimestampMs) {
    *why = fmt::format(
        "{}: Long.MAX_VALUE is HBase's LATEST_TIMESTAMP, which the server replaces with its "
        "clock",
        shown);
    return false;
  }
  return true;
}

}  // namespace widen
