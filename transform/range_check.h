// RangeCheck: compares the range of a table's source values with what its
// mapping can write, before any row moves: one min/max query per column
// (SourceStats::SummarizeColumn). `widen lint` reports the findings (W114,
// W115) and `widen plan` prints them.
//
//   key widths        a text key part or nested id with `width: N` over an
//                     integer column whose values go below 0 or beyond N
//                     digits: those rows are rejected (they would sort out
//                     of order).
//   version times     a `version` column (of the table, a column or a nest)
//                     whose values go before 1970 or reach Long.MAX_VALUE:
//                     those rows are rejected (transform/cell_timestamp.h).
//
// Thread safety: one call per thread; the Source is used by it alone.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "extract/source.h"
#include "mapping/mapping.h"
#include "transform/plan.h"

namespace widen {

/// One column whose range means that some rows will be rejected.
struct RangeFinding {
  enum class Kind { kKeyWidth, kVersionTime };
  Kind kind = Kind::kKeyWidth;
  SourceLocation loc;   // the key part, nest id part, or where the version is set
  std::string message;  // what is wrong, with the column's range
  std::string fix;
};

/// The findings of one table, and the checks that could not run.
struct RangeReport {
  std::vector<RangeFinding> findings;  // in mapping order
  std::vector<std::string> notes;      // checks the source could not run, and why
};

/// Checks the key widths and version columns of `plan` against the ranges
/// of their columns on `source`. Fails only when the source cannot be read
/// (Unavailable, ...); a source that cannot summarize a column gives a note.
Result<RangeReport> CheckValueRanges(const TablePlan& plan, Source* source);

}  // namespace widen
