// Row verify: comparing the rows a store holds with the rows a mapping gives
// from the source — what `widen verify` does per target table. The cells
// the source gives (assembled as migrate and sync assemble them) arrive in
// HBase cell order, streamed or from an external sort (CellRuns); beside
// them a CellReader walks the stored table, also in row key order, and each
// row is compared cell by cell as both go by:
//
//   a row only the source gives      -> missing (in the source, not in the target)
//   a row only the store holds       -> extra (in the target only)
//   a row both hold, cells differ    -> different: which cells are missing,
//                                       only in the target, or hold another value
//   a row both hold, cells equal     -> equal
//
// "The cells" are what a read returns: the cells the source gives are
// passed through the table's read rules (store/read_rules.h: delete markers,
// VERSIONS, TTL), as the stored cells are by the reader; of several cells
// with equal coordinates the last one counts (the store keeps it). A cell is
// equal when family, qualifier, timestamp and value are. Stored digests are
// never consulted: the stored side is the cells themselves. Memory: one
// cell of each side, whatever the row widths (and the rows named in the
// report).
//
// A sample (RowVerifyOptions::sample_every > 1) takes the rows whose row
// key hashes into it (InVerifySample) on both sides: rows outside it are
// passed over unread, so every count is of the sample.
//
// Thread safety: used from one thread; the reader is borrowed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/cell.h"
#include "common/cell_runs.h"
#include "common/cell_sink.h"
#include "common/status.h"
#include "common/table_descriptor.h"
#include "store/store.h"

namespace widen {

/// Whether row key `row` is in a sample of one row in `every`: XXH3-64 of
/// the row key (seed 0) is a multiple of `every`. Every row when `every` is
/// 0 or 1.
bool InVerifySample(std::string_view row, uint64_t every);

/// How to compare.
struct RowVerifyOptions {
  /// The table's families as the mapping describes them: their VERSIONS,
  /// MIN_VERSIONS and TTL decide which of the source's cells a read returns.
  std::vector<FamilyDescriptor> families;
  /// The clock TTL is measured from, ms since the epoch: the stored cells'
  /// reader must be given the same (ReadOptions::now_ms).
  int64_t now_ms = 0;
  uint64_t sample_every = 1;    // 1: every row (see InVerifySample)
  size_t max_listed = 10;       // rows named per kind (missing, extra, different)
  size_t max_cells_listed = 3;  // cell differences described per named different row
};

/// One row named in the report.
struct RowMismatch {
  std::string row;     // the row key (bytes)
  uint64_t cells = 0;  // missing: the source's cells; extra: the stored ones; different: the
                       // cells that differ (a value changed counts once)
  /// Different rows: the first differences, for people ("d:status @1700000000000: value
  /// 'paid' in the target, 'new' from the source").
  std::vector<std::string> differences;
};

/// What a comparison found. Counts are of rows and cells in the sample.
struct RowVerifyStats {
  uint64_t source_rows = 0;  // rows the source gives (distinct row keys with a cell a read returns)
  uint64_t target_rows = 0;  // rows the store holds
  uint64_t rows_equal = 0;
  uint64_t rows_missing = 0;    // in the source, not in the target
  uint64_t rows_extra = 0;      // in the target only
  uint64_t rows_different = 0;  // in both, with other cells
  uint64_t source_cells = 0;    // cells the source gives that a read returns
  uint64_t target_cells = 0;    // cells the store returns
  uint64_t cells_missing = 0;   // source cells the target lacks (missing rows' too)
  uint64_t cells_extra = 0;     // stored cells the source does not give (extra rows' too)
  uint64_t cells_changed = 0;   // same family, qualifier and timestamp, another value
  /// Source cells with the coordinates of an earlier one (the later one
  /// counts, as in the store): a row key or nest id that does not identify
  /// the source rows (a migrate exits 8 for them).
  uint64_t cells_replaced = 0;
  /// The first max_listed rows of each kind, in row key order.
  std::vector<RowMismatch> missing, extra, different;

  bool equal() const { return rows_missing == 0 && rows_extra == 0 && rows_different == 0; }
};

/// The comparison as a CellSink, for cells that arrive already in HBase
/// cell order (a table whose row keys follow the order its rows are read
/// in): each row is compared as soon as the next begins, with no sort. Put
/// returns FailedPrecondition (kOutOfOrder in the message) at the first cell
/// that sorts before the one before it; the caller then compares the table
/// again through the external sort (VerifyRows), with new stats and a new
/// reader. Close finishes the last row and counts the stored rows after it
/// as extra (nothing after an out-of-order Put). `stored`, `cancel` and
/// `stats` are borrowed; `stored` is positioned at the table's first cell.
/// Not thread safe.
class RowVerifySink : public CellSink {
 public:
  static constexpr const char kOutOfOrder[] = "cells out of key order";
  RowVerifySink(CellReader* stored, RowVerifyOptions options, const std::atomic<bool>* cancel,
                RowVerifyStats* stats);
  ~RowVerifySink() override;
  Status Put(const CellView& cell) override;
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override;
  const SinkStats& stats() const override { return sink_stats_; }

  /// The comparison itself (row_verify.cc), shared with VerifyRows.
  struct State;

 private:
  std::unique_ptr<State> state_;
  SinkStats sink_stats_;
};

/// Compares the cells `expected` holds (consumed) with the table `stored`
/// reads (from its first cell), as above. Cancelled when *cancel turns
/// true; the errors of the reader and the runs.
Status VerifyRows(CellRuns* expected, CellReader* stored, const RowVerifyOptions& options,
                  const std::atomic<bool>* cancel, RowVerifyStats* stats);

}  // namespace widen
