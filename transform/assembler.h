// Assembler: streams the source rows of one TablePlan and turns them into
// cells — the row key, one cell per mapped column, one cell per nested child —
// which it puts into a CellSink. What a row's cells are is decided by the
// RowBuilder (transform/row_builder.h, no I/O); the assembler reads and merges
// the streams, hands each row to it, sorts the row's cells (spilling a row
// past 8 MiB to temporary runs), counts, and handles rejects.
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

#include "common/cell_sink.h"
#include "common/status.h"
#include "extract/source.h"
#include "transform/plan.h"

namespace widen {

/// Counters of one target table's run.
struct TableStats {
  std::string table;         // "ns:table"
  uint64_t source_rows = 0;  // rows read: driving rows plus child rows
  uint64_t rows = 0;         // driving rows that gave cells (a target row each, unless keys repeat)
  uint64_t cells = 0;        // cells written (after the sink is closed: cells the store holds)
  uint64_t bytes = 0;        // row + family + qualifier + value bytes written
  uint64_t rejected = 0;     // source rows handed to the RejectHandler
  uint64_t orphans = 0;      // child rows whose parent was not among the written rows
  uint64_t empty_rows = 0;   // driving rows that gave no cell (every mapped value NULL, no child)
  std::string first_empty_row;  // the first of them (SourceRowId), when empty_rows > 0
  /// Nested rows whose every value column is NULL: with layout json a cell
  /// of nulls, with layouts cells and value no cell at all.
  uint64_t empty_children = 0;
  std::string first_empty_child;  // "<child table> of <parent row id>", when empty_children > 0
  /// Cells that replaced a cell of the same run with the same row, family,
  /// qualifier and timestamp (the earlier one is lost): within one source
  /// row (counted here), or between rows (counted by the sink, see
  /// SinkStats::overwritten).
  uint64_t overwritten = 0;
  std::string first_overwritten;  // what the first such cell was, when overwritten > 0
  /// After the sink is closed: distinct row keys the store received (less
  /// than `rows` when several source rows gave one row key); 0 before.
  uint64_t row_keys = 0;
  /// Cells beyond their family's VERSIONS (stored, never returned by reads).
  uint64_t beyond_versions = 0;
  /// External sort (cells not in key order): temporary runs and their bytes.
  uint64_t sort_runs = 0;
  uint64_t sort_bytes = 0;
  /// The sort was not for the key order: the target takes no cells as they
  /// come (SinkStats::sorted_all), so every cell went through it.
  bool sorted_all = false;
  double seconds = 0;  // wall time

  /// Adds every counter of `other` (of another job or batch of the same
  /// table); a "first ..." text is taken from `other` when this one has
  /// none. `table` and `seconds` are left as they are.
  void Add(const TableStats& other);
};

/// Adds the counters of a closed sink to `stats` (overwritten cells, row
/// keys, versions beyond VERSIONS, external sort), naming the first
/// overwritten cell when the assembler named none.
void AddSinkStats(const SinkStats& sink, TableStats* stats);

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
  /// Sees each cell that one source row gives more than once (same family,
  /// qualifier and timestamp; the row keeps the last one): the row key, the
  /// column and the timestamp (ms). Called after on_row for that row; the
  /// views are valid during the call only. Empty = none.
  std::function<void(std::string_view row_key, std::string_view family, std::string_view qualifier,
                     int64_t timestamp_ms)>
      on_replaced;
  /// Reads at most this many driving rows, then stops: later rows, their
  /// children and trailing orphans are not read (0 = all rows).
  uint64_t max_driving_rows = 0;
  /// Only this slice of the driving rows (unset: all). REQUIRES: the plan has
  /// a SplitColumn.
  std::optional<RowRange> range;
  /// Only the driving rows whose split column (SplitColumn) equals one of
  /// these values, and their children (every nested scan's first link
  /// column, which the split column's values are matched against): the
  /// rows `widen sync` rebuilds. Empty = all. Values as the database's `=`
  /// compares them (the column's collation). REQUIRES: a SplitColumn; not
  /// with `range`.
  std::vector<Value> only;
  /// Sees each nested row matched to a parent row (at any depth; rejected
  /// and all-NULL ones too), with the driving row it is nested in. The
  /// views are valid during the call only; called before on_row of that
  /// driving row. A non-OK Status stops the run. Empty = none.
  std::function<Status(const NestPlan& nest, const Row& child, const Row& driving)> on_child;
  /// Replace mode (transform/row_builder.h): each row's cells are preceded
  /// by a DeleteFamily marker per family, just below the row's oldest cell,
  /// so the target row holds nothing older than the new cells. The markers
  /// count as cells (TableStats::cells, bytes); a row with no put still
  /// writes them (it is counted in empty_rows); a row whose oldest cell is at
  /// timestamp 0 is rejected.
  bool replace = false;
  /// The target's largest cell as HBase counts it (Store::max_cell_bytes,
  /// RowBuilderOptions): a larger cell rejects its row, or its nested row;
  /// 0 = any size.
  int64_t max_cell_bytes = 0;
};

/// The column whose integer ranges split `plan`'s driving rows among
/// parallel jobs, in the driving scan: the first nest parent column (every
/// nested scan links first to it, so a range of the linked child column
/// selects the children of the same parents), else the first primary key
/// column. nullopt when the table has neither.
std::optional<ColumnExpr> SplitColumn(const TablePlan& plan);

/// The index of the split column's value (SplitColumn) in `plan`'s driving
/// rows: its first nest's first parent column, else its first primary key
/// column. nullopt when there is no split column.
std::optional<size_t> SplitValueIndex(const TablePlan& plan);

/// Runs `plan` against `source`, putting cells into `sink` (not closed here).
/// *stats is filled in as the run goes, also on error.
Status Assemble(const TablePlan& plan, Source* source, CellSink* sink,
                const AssembleOptions& options, TableStats* stats);

}  // namespace widen
