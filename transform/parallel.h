// Parallel jobs: one target table's driving rows split into ranges of an
// integer column, each range assembled by its own thread, Source and sink.
//
// The sources must read one snapshot (Source::OpenSiblings), so the jobs
// together read what one reader would. The ranges cover every value (the
// first and last are open-ended, the last also takes NULLs), so each driving
// row and each nested row is read by exactly one job; the cells the jobs
// write are the cells a single run writes.
//
// Thread safety: RunJobs calls the progress hook and the RejectHandler from
// the job threads one at a time (under a lock), so neither needs to be
// thread safe; each job's sink is used by its thread alone.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/cell_sink.h"
#include "common/status.h"
#include "extract/source.h"
#include "transform/assembler.h"
#include "transform/plan.h"

namespace widen {

/// How a table's driving rows are split among jobs.
struct RowSplit {
  std::vector<RowRange> ranges;  // at least one
  std::string column;            // "alias.column" split on (empty: not split)
  /// When fewer ranges than the jobs asked: the reason, for the user.
  std::string why_not;
  /// Several ranges whose row keys sort like the ranges (KeyFollowsSplit):
  /// the first job writes to the store while the others spool, so the store
  /// gets the cells in key order. False with several ranges: every job sorts
  /// its cells into runs merged after the jobs.
  bool in_key_order = false;
};

/// Splits `plan`'s driving rows into at most `jobs` ranges of its
/// SplitColumn, evenly over [min, max] of that column (read by one aggregate
/// query on the driving table alone: the ranges only balance the work, they
/// never decide which rows are read). Signed and unsigned integer columns
/// split (bounds at most 2^63 - 1; the last range is open above). One
/// unbounded range when `jobs` < 2, when there is no split column, when it
/// is not an integer column, or when it has fewer distinct values than jobs.
/// Jobs the machine has no cores for are not made, and why_not says so:
/// with `cores` > 0 (the cores the run may use) at most cores / 2 jobs, each
/// keeping about two busy (reading and encoding; writing, with the store's
/// compaction) beside a database server's work. Sets in_key_order. Errors:
/// the source's.
Result<RowSplit> SplitRows(const TablePlan& plan, Source* source, int jobs, int cores = 0);

/// What the ranges of a table are cut from: its SplitColumn ("alias.column")
/// and that column's smallest and largest value (the largest capped at
/// 2^63 - 1), or why it cannot be split (`column` empty).
struct SplitBounds {
  std::string column;
  int64_t min = 0;
  int64_t max = 0;
  std::string why_not;
  /// Distinct values in [min, max] (0 when not split).
  __int128 span() const { return column.empty() ? 0 : static_cast<__int128>(max) - min + 1; }
};

/// Reads `plan`'s SplitBounds (one aggregate query on the driving table, as
/// SplitRows). Errors: the source's.
Result<SplitBounds> ReadSplitBounds(const TablePlan& plan, Source* source);

/// Slices `first` to `first + count - 1` of [bounds.min, bounds.max] cut into
/// `parts` even slices, in order: slice k holds lo_k <= column < lo_(k+1),
/// lo_k = min + span * k / parts; slice 0 is open below, slice parts - 1
/// open above and with the NULLs. So the slices of one cut, whoever takes
/// them, cover every row once: slices k*J to k*J + J - 1 of a cut into N*J
/// parts are exactly slice k of a cut into N parts. Sets in_key_order (when
/// count > 1). REQUIRES: bounds has a column; 0 <= first, 1 <= count,
/// first + count <= parts <= bounds.span().
RowSplit SliceRows(const TablePlan& plan, const SplitBounds& bounds, int parts, int first,
                   int count);

/// lo_k of SliceRows: where slice k of a cut into `parts` begins.
/// REQUIRES: as SliceRows, 0 < k < parts.
int64_t SliceBound(const SplitBounds& bounds, int parts, int k);

/// True when `plan`'s row keys sort like its SplitColumn ranges: no salt or
/// hash prefix, and the first key part is the split column, ascending. Then
/// RunJobs writes the cells in range order (see there).
bool KeyFollowsSplit(const TablePlan& plan);

/// Makes a sink for the plan's target table; called once per job.
using SinkFactory = std::function<Result<std::unique_ptr<CellSink>>()>;

/// Runs `plan` over `split.ranges`, range i on sources[i] (REQUIRES:
/// sources.size() >= split.ranges.size(), all on one snapshot) with a sink
/// from `new_sink`, each in its own thread (one range runs on the calling
/// thread). Every sink is closed here. With split.in_key_order, the store gets
/// the cells in key order as from one job: the first job writes to its sink
/// while the others put their cells into temporary files (unlinked, under
/// $TMPDIR or /tmp: room for (N-1)/N of the table's cell bytes), which are
/// written to their sinks after the jobs, in range order. *stats is the sum
/// of the jobs' counters (overwritten from the sinks; seconds is the wall
/// time). The first job error stops the others and is returned;
/// options.cancel stops all jobs with Cancelled.
Status RunJobs(const TablePlan& plan, const RowSplit& split, const std::vector<Source*>& sources,
               const SinkFactory& new_sink, const AssembleOptions& options, TableStats* stats);

}  // namespace widen
