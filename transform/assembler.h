// Assembler: streams the source rows of one TablePlan and turns them into
// cells — the row key, one cell per mapped column, one cell per nested child —
// which it puts into a CellSink.
//
// Nesting is a merge join: the driving rows arrive ordered by the nests'
// parent key and each child stream by its foreign key (the database sorts);
// the assembler advances them together, so memory holds one row of each
// stream whatever the table sizes. It checks the order it relies on and fails
// (Internal) rather than lose children if a stream arrives out of order.
//
// A row that cannot be encoded (NULL or separator in a key part, a NULL where
// the mapping says reject) is handed to the RejectHandler when there is one
// (the row is then left out and counted), else the run fails with a message
// naming the target table, the row's source primary key and the reason.
//
// Thread safety: one Assemble call per thread; the Source is used by it alone.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "extract/source.h"
#include "store/cell_sink.h"
#include "transform/plan.h"

namespace widen {

/// Counters of one target table's run.
struct TableStats {
  std::string table;         // "ns:table"
  uint64_t source_rows = 0;  // rows read: driving rows plus child rows
  uint64_t rows = 0;         // target rows written
  uint64_t cells = 0;        // cells written
  uint64_t bytes = 0;        // row + family + qualifier + value bytes written
  uint64_t rejected = 0;     // source rows handed to the RejectHandler
  uint64_t orphans = 0;      // child rows whose parent was not among the written rows
  uint64_t empty_rows = 0;   // source rows that gave no cell (every mapped value NULL)
  uint64_t overwritten = 0;  // cells that replaced an identical-coordinate cell (sink's count)
  double seconds = 0;        // wall time
};

/// Receives rows that cannot be written.
class RejectHandler {
 public:
  virtual ~RejectHandler() = default;
  /// `row_id` names the source row ("order_id=1042"); `reason` says why.
  /// A non-OK Status stops the run.
  virtual Status Reject(const std::string& table, const std::string& row_id,
                        const std::string& reason) = 0;
};

/// A slice of a table's driving rows, lo <= split column < hi (see
/// SplitColumn), for one parallel job; its nests read the children of those
/// rows only. An unset bound is open; `with_null` adds the driving rows whose
/// split column is NULL (they have no children).
struct RowRange {
  std::optional<int64_t> lo;
  std::optional<int64_t> hi;
  bool with_null = false;
};

struct AssembleOptions {
  int64_t timestamp_ms = 0;          // timestamp of every cell, ms since the epoch
  RejectHandler* rejects = nullptr;  // nullptr: a bad row fails the run
  /// Called every `progress_rows` target rows with the running counters.
  std::function<void(const TableStats&)> progress;
  uint64_t progress_rows = 10000;
  /// When set and true, the run stops at the next row with Cancelled (Ctrl-C).
  const std::atomic<bool>* cancel = nullptr;
  /// Sees each target row just before its cells are put into the sink: the
  /// row key, the row's default cell timestamp (ms) and the driving source
  /// row (its primary key is at TablePlan::identity). The views are valid
  /// during the call only. For dry runs (widen plan: statistics, key
  /// collisions); a non-OK Status stops the run. Empty = none.
  std::function<Status(std::string_view row_key, int64_t timestamp_ms, const Row& source_row)>
      on_row;
  /// Reads at most this many driving rows, then stops: later rows, their
  /// children and trailing orphans are not read (0 = all rows).
  uint64_t max_driving_rows = 0;
  /// Only this slice of the driving rows (unset: all). REQUIRES: the plan has
  /// a SplitColumn.
  std::optional<RowRange> range;
};

/// The column whose integer ranges split `plan`'s driving rows among
/// parallel jobs, in the driving scan: the first nest parent column (every
/// nested scan links first to it, so a range of the linked child column
/// selects the children of the same parents), else the first primary key
/// column. nullopt when the table has neither.
std::optional<ColumnExpr> SplitColumn(const TablePlan& plan);

/// Runs `plan` against `source`, putting cells into `sink` (not closed here).
/// *stats is filled in as the run goes, also on error.
Status Assemble(const TablePlan& plan, Source* source, CellSink* sink,
                const AssembleOptions& options, TableStats* stats);

}  // namespace widen
