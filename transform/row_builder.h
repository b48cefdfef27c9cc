// RowBuilder: turns one driving source row and its nested rows into the
// cells of one target row — the row key, one cell per mapped column, one
// cell (or one per attribute) per nested row — or into the reason the row is
// rejected. It does no I/O and keeps no state between rows but reusable
// buffers: whoever reads the rows (the Assembler, transform/assembler.h,
// which merges the driving and nested streams) hands it the driving row,
// whose joined columns are part of it (the driving scan joins them), then
// each nested row in stream order, and takes the cells from a RowCells
// buffer, which it may empty between calls (to spill a very large row).
//
//   builder.StartRow(driving, &cells, &reason)       key, timestamp, columns
//   builder.AddNested(nest, child, outer, &cells...)  per nested row, depth first
//   builder.FinishRow(&cells, &reason)               replace mode's markers
//   cells.Emit(put, replaced)                        HBase order, last of equal cells
//
// BuildRow does the same for a whole row given as plain values.
//
// Replace mode (RowBuilderOptions::replace): the row is written as "delete
// what the row held before, then the new cells". FinishRow adds one
// DeleteFamily marker (empty qualifier) per family of the table at
// timestamp D = (the oldest timestamp among the row's new cells, or the
// row's timestamp when it has none) - 1. In HBase a delete marker at D masks
// every cell of its family in the row with timestamp <= D — also one written
// later — and a marker and a put at the same timestamp would lose the put, so
// D lies strictly below every new cell: no new cell is masked, and every cell
// the row held at a timestamp below its oldest new cell is. Cells held at a
// timestamp >= the oldest new cell stay unless a new cell has their
// coordinates: a replacing run needs a later timestamp than the run that
// wrote the row before (with a version column, the markers go below the
// oldest version the row gives now: older versions go, newer ones stay). A
// row whose oldest new cell is at timestamp 0 leaves no timestamp for the
// markers (HBase refuses negative timestamps): it is rejected. A row with no
// put (every mapped value NULL, no nested row) gives the markers alone: the
// target row is deleted.
//
// Thread safety: a RowBuilder or RowCells is used by one thread at a time;
// builders over one TablePlan are independent.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/cell.h"
#include "common/status.h"
#include "common/value.h"
#include "transform/plan.h"

namespace widen {

/// One cell of a row being built; owns its bytes. The row key is not kept
/// per cell (RowBuilder::row_key()).
struct RowCell {
  std::string family;
  std::string qualifier;
  std::string value;  // empty for a delete marker
  int64_t timestamp_ms = 0;
  CellType type = CellType::kPut;
};

/// The cells of one target row, in the order they were built. Clear keeps
/// every string's capacity, so building row after row does not allocate once
/// the buffers have grown.
class RowCells {
 public:
  /// Empties the buffer (size() 0, bytes() 0); capacity is kept.
  void Clear() {
    n_ = 0;
    bytes_ = 0;
  }
  /// Drops the cells added after the first `n`. REQUIRES: n <= size().
  void Truncate(size_t n);
  /// Appends a cell of `family` at `timestamp_ms` with an empty qualifier
  /// and value, which the caller then fills. The pointer is valid until the
  /// next Add or Clear.
  RowCell* Add(std::string_view family, int64_t timestamp_ms, CellType type = CellType::kPut);

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  /// REQUIRES: i < size().
  const RowCell& operator[](size_t i) const { return cells_[i]; }

  /// An estimate of the memory the cells take (their bytes plus
  /// kCellOverheadBytes each), for a caller that spills large rows.
  size_t bytes() const;
  static constexpr size_t kCellOverheadBytes = 128;  // three strings and a timestamp

  /// The cells' indexes in HBase cell order: family and qualifier ascending,
  /// timestamp descending, type code descending; equal cells in the order
  /// they were added. The view is valid until the next Add, Clear or Sorted.
  std::span<const size_t> Sorted();

  /// Calls put(const RowCell&) for each cell in HBase cell order; of cells
  /// with the same family, qualifier, timestamp and type (the later replaces
  /// the earlier in a store) only the last added is put, and each earlier one
  /// goes to replaced(const RowCell&) instead. Stops at the first non-OK
  /// Status of put and returns it.
  template <typename Put, typename Replaced>
  Status Emit(Put&& put, Replaced&& replaced) {
    std::span<const size_t> order = Sorted();
    for (size_t n = 0; n < order.size(); ++n) {
      const RowCell& c = cells_[order[n]];
      if (n + 1 < order.size() && SameCoordinates(c, cells_[order[n + 1]])) {
        replaced(c);
        continue;
      }
      WIDEN_RETURN_IF_ERROR(put(c));
    }
    return Status::OK();
  }

  /// Whether a and b have the same family, qualifier, timestamp and type.
  static bool SameCoordinates(const RowCell& a, const RowCell& b) {
    return a.timestamp_ms == b.timestamp_ms && a.type == b.type && a.qualifier == b.qualifier &&
           a.family == b.family;
  }

 private:
  std::vector<RowCell> cells_;  // [0, n_) in use; the rest keeps capacity
  size_t n_ = 0;
  size_t bytes_ = 0;  // estimate for cells_[0, n_ - 1): the last may still grow
  std::vector<size_t> order_;
  std::vector<size_t> merged_;  // scratch of Sorted's merges
};

struct RowBuilderOptions {
  /// The default cell timestamp (ms since the epoch) when the table has no
  /// version column.
  int64_t timestamp_ms = 0;
  /// Replace mode (see the file comment): FinishRow adds a DeleteFamily
  /// marker per family of the table below the row's new cells.
  bool replace = false;
  /// The target's largest cell as HBase counts it (row + family + qualifier
  /// + value + kCellOverheadBytes, common/cell_check.h); 0 = any size. A
  /// larger cell rejects its row (a column's) or its nested row (a nest's).
  int64_t max_cell_bytes = 0;
};

/// Builds the cells of one row at a time over one TablePlan (see the file
/// comment): StartRow, AddNested per nested row, FinishRow.
class RowBuilder {
 public:
  /// `plan` must outlive the builder.
  RowBuilder(const TablePlan& plan, RowBuilderOptions options);

  /// Starts the row of driving source row `driving` (TablePlan::scan's
  /// columns): clears *cells, encodes the row key and the row's timestamp,
  /// and adds one cell per mapped column (a NULL is left out, written empty
  /// or rejects the row, as the column's on_null says). Returns false with
  /// *reason when the row must be rejected: the row key cannot be encoded
  /// (KeyCodec's message), is empty or longer than kMaxRowKeyBytes ("the
  /// row key is N bytes; HBase takes 1 to 32767"), a version column is no
  /// cell timestamp ("version column C is ...", "version column C of
  /// alias.col is ..."), a column is NULL under on_null: reject ("column
  /// alias.col is NULL") or does not fit its codec ("column alias.col:
  /// ..."), or its cell is over max_cell_bytes ("column alias.col: the cell
  /// d:q is N bytes ..."). The row's nested rows must then not be added.
  bool StartRow(const Row& driving, RowCells* cells, std::string* reason);

  /// Adds nested row `child` of `nest` (one of the plan's NestPlans, or one
  /// of their children) under qualifier `outer`: "" for a top-level nest, a
  /// second-level nest's parent child's *qualifier. Sets *qualifier to the
  /// child's qualifier (outer + prefix + id parts) and *all_null to whether
  /// every value column of the child is NULL (with layout json that is a
  /// cell of nulls, with cells and value no cell at all). Returns false with
  /// *reason when the child alone is rejected (its id parts cannot be
  /// encoded, "version column C is ...", or a cell of it is over
  /// max_cell_bytes: "the cell l:q is N bytes ..."); no cell is added then,
  /// and its own nested rows must not be added. REQUIRES: StartRow returned true for
  /// the current row.
  bool AddNested(const NestPlan& nest, const Row& child, std::string_view outer, RowCells* cells,
                 std::string* qualifier, bool* all_null, std::string* reason);

  /// Ends the row. In replace mode adds the DeleteFamily markers to *cells
  /// (returning false with *reason when the row's oldest new cell is at
  /// timestamp 0: "replace mode: ..."); otherwise adds nothing and returns
  /// true. REQUIRES: StartRow returned true for the current row.
  bool FinishRow(RowCells* cells, std::string* reason);

  /// The current row's key; valid until the next StartRow.
  const std::string& row_key() const { return key_; }
  /// The current row's default cell timestamp (ms): the table's version
  /// column, else RowBuilderOptions::timestamp_ms.
  int64_t timestamp_ms() const { return row_ts_; }
  /// Put cells added since StartRow (those a caller took out of *cells
  /// included).
  uint64_t puts() const { return puts_; }

 private:
  RowCell* Put(RowCells* cells, std::string_view family, int64_t timestamp_ms);
  // False with *reason when `cell` is over options_.max_cell_bytes.
  bool FitsLimit(const RowCell& cell, std::string* reason) const;
  // Adds the cells of plan_.cells[i] for each i of `order` (StartRow's loop).
  bool AddColumns(const Row& row, const std::vector<size_t>& order, RowCells* cells,
                  std::string* reason);

  const TablePlan& plan_;
  const RowBuilderOptions options_;
  // plan_.cells' indexes in (family, qualifier) order, and in mapping order.
  std::vector<size_t> by_column_;
  std::vector<size_t> as_mapped_;
  std::string key_;
  int64_t row_ts_ = 0;
  int64_t oldest_ts_ = 0;  // the oldest timestamp among the row's puts
  uint64_t puts_ = 0;
  std::string why_;  // scratch for CellTimestampMs
};

/// A nested row for BuildRow, with its own nested rows: one list per
/// NestPlan::children of its nest, in that order.
struct NestedRow {
  Row row;
  std::vector<std::vector<NestedRow>> nested;
};

/// The result of BuildRow.
struct BuiltRow {
  /// Non-empty: the row is rejected for this reason, and has no cells.
  std::string reject;
  std::string row_key;
  int64_t timestamp_ms = 0;  // the row's default cell timestamp
  /// The row's cells in HBase cell order, the last of equal cells only.
  std::vector<RowCell> cells;
  /// Cells that a later cell of the row replaced (same coordinates).
  std::vector<RowCell> replaced;
  /// Reasons of the nested rows rejected alone, in the order met.
  std::vector<std::string> nested_rejects;
  /// Nested rows whose every value column is NULL.
  uint64_t all_null_nested = 0;
};

/// Builds the row of `driving` with its nested rows — `nested[i]` are the
/// rows of plan.nests[i] under this row — as RowBuilder does, in one call.
/// REQUIRES: nested.size() is 0 or plan.nests.size().
BuiltRow BuildRow(const TablePlan& plan, const RowBuilderOptions& options, const Row& driving,
                  std::span<const std::vector<NestedRow>> nested);

}  // namespace widen
