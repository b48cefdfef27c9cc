// The timestamp of a cell taken from a source value (a `version` column of a
// table, a column or a nest): ms since the epoch, within what HBase takes
// from a client.
//
// HBase refuses negative timestamps (Put: "Timestamp cannot be negative"),
// and Long.MAX_VALUE is HConstants.LATEST_TIMESTAMP, which the region server
// replaces with its own clock. A version value outside 0 ..
// Long.MAX_VALUE - 1 ms — a date before 1970, a negative integer, an
// infinite date — therefore has no cell timestamp: its row is rejected with
// the reason, never written at another time.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "common/value.h"

namespace widen {

/// The first cell timestamp HBase takes: 1970-01-01 00:00:00 UTC.
inline constexpr int64_t kMinCellTimestampMs = 0;
/// The last: Long.MAX_VALUE - 1 (Long.MAX_VALUE means "the server's now").
inline constexpr int64_t kMaxCellTimestampMs = INT64_MAX - 1;

/// The cell timestamp of version value `v` (EpochMs, common/temporal.h):
/// true with *ms when it is one;
/// false with *why (what the value is and why it cannot be a timestamp,
/// e.g. "1953-09-02 is -515376000000 ms, before 1970: HBase refuses negative
/// cell timestamps") otherwise.
bool CellTimestampMs(const Value& v, int64_t* ms, std::string* why);

}  // namespace widen
