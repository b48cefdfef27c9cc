#include "transform/cell_timestamp.h"

#include <fmt/format.h>

namespace widen {

namespace {

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

bool VersionValueMs(const Value& v, int64_t* ms) {
  if (v.is_null()) return false;
  switch (v.type()) {
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz:
      if (v.as_int() == INT64_MAX || v.as_int() == INT64_MIN) return false;
      *ms = FloorDiv(v.as_int(), 1000);
      return true;
    case ValueType::kDate:
      if (v.as_int() == INT64_MAX || v.as_int() == INT64_MIN) return false;
      *ms = v.as_int() * 86400000;
      return true;
    case ValueType::kInt:
      *ms = v.as_int();
      return true;
    default:
      return false;
  }
}

bool CellTimestampMs(const Value& v, int64_t* ms, std::string* why) {
  if (!VersionValueMs(v, ms)) {
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
