// Row sync: bringing a stored table to the cells its source gives now,
// writing only the rows that changed. `widen sync` assembles every row of a
// target table from the source (as migrate does) into an external sort
// (CellRuns), then SyncRows walks the sorted cells row by row beside the
// rows the store holds (RowDigestReader, both in row key order):
//
//   a row only the source gives      -> written (RowWriter::ReplaceRow)
//   a row only the store holds       -> removed
//   a row both have, digests differ  -> replaced: its old cells removed,
//                                       the new ones written
//   a row both have, digests equal   -> left alone
//
// A row's digest covers every cell of it — family, qualifier, timestamp,
// type and value — so any change that reaches a row (its driving row, a
// joined row's denormalized copy, a nested child added, changed, moved or
// removed, a row key that changed) changes its digest, and the row is
// rewritten whole. What the store then holds is exactly what a migrate of
// the source into an empty table writes, with the same timestamps.
//
// Thread safety: SyncRows uses its arguments from the calling thread only.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "common/cell.h"
#include "common/cell_runs.h"
#include "common/status.h"
#include "store/store.h"

namespace widen {

/// Bytes of a row digest.
inline constexpr size_t kRowDigestBytes = 16;

/// The digest of one row: XXH3-128 (xxHash) over, for each cell in order,
/// the family, qualifier and value each as u32 BE length + bytes, the
/// timestamp (i64 BE) and the type byte; the 128-bit result written high
/// half first, each half big-endian. 16 bytes. Persisted in stores: never
/// change it.
std::string RowDigest(const CellBatch& row_cells);

/// The digest of one row's cell coordinates: as RowDigest without the
/// values (for each cell the family and qualifier as u32 BE length + bytes,
/// the timestamp, the type byte). 16 bytes. A store records it after the
/// RowDigest (32 bytes in all; a 16-byte record, of an older widen, has
/// none), so that a row rewritten with cells of the same coordinates is put
/// over the old cells without reading them. Persisted: never change it.
std::string RowKeysDigest(const CellBatch& row_cells);

/// What SyncRows did.
struct RowSyncStats {
  uint64_t rows = 0;            // rows the source gives (distinct row keys)
  uint64_t rows_unchanged = 0;  // of those, left alone
  uint64_t rows_written = 0;    // written or replaced
  uint64_t rows_deleted = 0;    // removed: the source no longer gives them
  uint64_t cells_put = 0;
  uint64_t cells_deleted = 0;  // stored cells removed (every version)
  uint64_t bytes_put = 0;
  /// Cells that replaced a cell of this run with the same coordinates
  /// (row, family, qualifier, timestamp, type): the earlier one is lost, as
  /// in a migrate (which exits 8 for them).
  uint64_t overwritten = 0;
  std::string first_overwritten;  // the first such cell, printable

  /// Adds every counter of `other`; first_overwritten is taken from it
  /// when this one has none.
  void Add(const RowSyncStats& other);
};

/// SyncRows as a CellSink, for cells that arrive already in HBase cell
/// order (a table whose row keys follow the order its rows are read in):
/// each row is compared and written as soon as the next row begins, with
/// no sort. Put returns FailedPrecondition (kOutOfOrder in the message) at
/// the first cell that sorts before the one before it; rows written until
/// then are whole and right, and the caller runs the table again through
/// the external sort (SyncRows), which finds them unchanged (the caller
/// Syncs the writer first, so that a new reader sees what it wrote). Close
/// finishes the last row and removes the stored rows after it (nothing
/// after an out-of-order Put). `stored`, `writer`,
/// `cancel` and `stats` are borrowed. Not thread safe.
class RowSyncSink : public CellSink {
 public:
  static constexpr const char kOutOfOrder[] = "cells out of key order";
  RowSyncSink(RowDigestReader* stored, RowWriter* writer, const std::atomic<bool>* cancel,
              RowSyncStats* stats);
  ~RowSyncSink() override;
  Status Put(const CellView& cell) override;
  Status Flush() override { return Status::OK(); }
  /// Rows are durable only through the writer's Sync.
  Status Sync() override { return Status::OK(); }
  Status Close() override;
  const SinkStats& stats() const override { return sink_stats_; }

  /// The comparison itself (row_sync.cc), shared with SyncRows.
  struct State;

 private:
  std::unique_ptr<State> state_;
  SinkStats sink_stats_;
};

/// Makes the table `writer` writes hold exactly the cells `cells` holds
/// (consumed; equal coordinates: the last added wins), writing only rows
/// whose digest differs from `stored`'s (see above). `stored` and `writer`
/// are of the same table. Does not Sync the writer. Cancelled when *cancel
/// turns true (rows written so far stay written, each whole); the errors of
/// the reader, the writer and the runs.
Status SyncRows(CellRuns* cells, RowDigestReader* stored, RowWriter* writer,
                const std::atomic<bool>* cancel, RowSyncStats* stats);

}  // namespace widen
