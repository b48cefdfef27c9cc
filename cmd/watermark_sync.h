// Watermark sync: bringing a stored table up to date by rebuilding only the
// target rows that the source rows changed since the last run reach.
//
// A target table syncs in watermark mode when every source table it reads
// (driving, joined, nested) is in watermark mode (transform/sync_plan.h).
// Its first sync, and any sync after a migrate, a repair, a digest-mode
// sync or `--full`, is a full pass: every row compared by digest
// (store/row_sync.h), while the table's **sync index** is written anew
// beside the rows. Each later run:
//
//   1. reads, in the run's snapshot, each source table's highest watermark
//      (recorded once the run's cells are durable);
//   2. finds the changed source rows — `watermark >= last - lookback` — and
//      from each the **split value** of the target rows it reaches: the
//      driving row's own (SplitValueIndex), a nested row's link to its
//      top-level parent, the driving (or nested) rows that join a changed
//      joined row, through the scan's own joins;
//   3. adds the old parents of changed nested rows (a child moved to
//      another parent leaves the old one), from the index;
//   4. for the source tables it reconciles (--reconcile, or the entry's
//      `deletes: reconcile: true`), adds the split values of hard deletes:
//      those the index holds whose driving row, or whose nested row, the
//      source no longer has (in batches of kReconcileBatch), and those of
//      rows whose join no longer finds the row they refer to;
//   5. rebuilds the target rows of those values from the source in batches
//      (AssembleOptions::only), compares each with its stored digest and
//      writes only the rows that differ (SyncRows);
//   6. removes the rows the values gave before but no longer give (a key
//      column changed, a driving row deleted or soft-deleted), known from
//      the index.
// The result is what a migrate of the source's new state writes, with the
// same cell timestamps (the table's load timestamp).
//
// The sync index (RowWriter::PutIndex; in the embedded store, key tag 0x05,
// docs/format.md "Sync index") holds, per table:
//   'r' tuple(split value) row key                     -> ""
//       the target rows a driving split value gave (one per row)
//   'c' nest path 0x00 tuple(child key) tuple(split value) -> ""
//       the top-level parent of a nested row (one per nested row)
// where tuple() is AppendValueTuple (store/table_state.h), the nest path is
// the nest's position ("0", "0.1" for the second nest of the first), and
// the child key its table's primary key. It costs one entry per target row
// and one per nested row, written during the full pass.
//
// Crash safety: the index, the rows and their digests are written through
// one RowWriter, whose effects survive a crash as a prefix in call order.
// New entries are written before their rows, stale ones removed after the
// rows they named; the watermarks are recorded only after the writer's Sync.
// A run stopped anywhere leaves an index that names every row the table
// holds, and the next run, reading from the old watermarks, converges.
// A full pass holds its index entries and digests back and writes them
// after the rows (RowWriter::DeferDigestsAndIndex); it records the index
// whole only after its Sync, so a pass stopped anywhere is done again.
//
// Thread safety: one call per table at a time; SyncIndexRecorder is safe to
// call from several jobs' threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "extract/source.h"
#include "store/row_sync.h"
#include "store/store.h"
#include "store/table_state.h"
#include "transform/assembler.h"
#include "transform/plan.h"

namespace widen {

/// Split values per batch of a rebuild or a reconcile query.
inline constexpr size_t kRebuildBatch = 500;
inline constexpr size_t kReconcileBatch = 1000;
/// A temporal watermark value more than this far past the run's start (ms)
/// is taken as a placeholder or a wrong clock, not recorded (ReadWatermarks).
inline constexpr int64_t kFutureWatermarkMs = int64_t{2} * 24 * 3600 * 1000;

/// Whether a target table can sync in watermark mode; `why` (when not) for
/// plan and the summary, e.g. "reads 'customer' in digest mode".
struct WatermarkSupport {
  bool ok = false;
  std::string why;
};

/// See above: every source table `table` reads in watermark mode, no
/// free-form query, a split column that is a primary key column of the
/// driving table (never NULL), a primary key on every nested table.
WatermarkSupport CheckWatermarkSync(const TablePlan& table, const SyncPlan& sync);

/// The highest watermark of each watermark-mode source table `table`
/// reads, in `source`'s snapshot (one aggregate query each): Watermark
/// {table, [column], [max]}. The max is NULL for an empty table, and when
/// it is no value of the column's kind (a MySQL zero date, which sorts
/// below every date: the next run reads the whole table again). A
/// PostgreSQL `infinity`, or any temporal value more than
/// kFutureWatermarkMs past this machine's clock (a placeholder such as
/// 9999-12-31, a writer's wrong clock), is not a watermark either: the max
/// is taken below that bound (such rows are read by every run). Each such
/// case appends a line to *notes. Errors: the source's.
Result<std::vector<Watermark>> ReadWatermarks(const TablePlan& table, const SyncPlan& sync,
                                              Source* source, std::vector<std::string>* notes);

/// When a source table's highest watermark now is below the recorded one
/// minus the lookback (the table dropped and filled again, values set
/// back, or only its newest rows deleted): a line warning that rows written
/// with such older watermarks are not read, and that `--full` reads them;
/// "" when every watermark held, grew or went back less.
std::string WatermarkWentBack(const SyncPlan& sync, const std::vector<Watermark>& recorded,
                              const std::vector<Watermark>& now);

/// True when `recorded` has a watermark for every watermark-mode source
/// table `table` reads, on the column the mapping names now and of its
/// kind's type (a NULL of that type for an empty table).
bool WatermarksCover(const TablePlan& table, const SyncPlan& sync,
                     const std::vector<Watermark>& recorded);

/// Writes the sync index entries of the rows a full pass assembles: give
/// its hooks to AssembleOptions (on_row, on_child). Entries go through
/// `writer` (borrowed) under a mutex, so jobs may share one recorder.
class SyncIndexRecorder {
 public:
  SyncIndexRecorder(const TablePlan& table, RowWriter* writer);
  /// For AssembleOptions::on_row.
  Status OnRow(std::string_view row_key, const Row& driving);
  /// For AssembleOptions::on_child.
  Status OnChild(const NestPlan& nest, const Row& child, const Row& driving);
  /// Sets options->on_row and on_child to this recorder's hooks.
  void Hook(AssembleOptions* options);

 private:
  const TablePlan& table_;
  RowWriter* writer_;
  size_t split_index_;
  std::map<const NestPlan*, std::string> paths_;
  std::mutex mu_;
};

/// What one incremental run of a table did.
struct ChangeSyncStats {
  uint64_t changed_rows = 0;   // source rows the change queries returned
  uint64_t split_values = 0;   // distinct split values rebuilt
  uint64_t moved_parents = 0;  // of those, old parents found in the index
  uint64_t reconciled = 0;     // of those, found by reconcile (hard deletes)
};

/// One incremental run of one target table (steps 2–6 above).
struct ChangeSyncRequest {
  const TablePlan* table = nullptr;
  const SyncPlan* sync = nullptr;
  Source* source = nullptr;  // in the run's snapshot
  Store* store = nullptr;
  RowWriter* writer = nullptr;  // of `full_name`; not Synced here
  std::string full_name;
  std::vector<Watermark> recorded;  // where the last run read up to
  bool reconcile = false;           // every source table's hard deletes (--reconcile)
  /// Timestamp, rejects, cancel, progress (`only` and the hooks are set here).
  AssembleOptions assemble;
};

/// Whether a watermark-mode run of `table` finds every hard delete: with
/// `reconcile` (--reconcile), or when every source table it reads says
/// `deletes: reconcile: true`.
bool ReconcilesEverything(const TablePlan& table, const SyncPlan& sync, bool reconcile);

/// Runs `request`, adding to *read (source rows read, cells assembled),
/// *rows (rows compared, written, removed) and *stats. Errors: the
/// source's, the store's, Cancelled; rows written until then stay written,
/// each whole, and the next run (from the same watermarks) converges.
Status SyncChanges(const ChangeSyncRequest& request, TableStats* read, RowSyncStats* rows,
                   ChangeSyncStats* stats);

}  // namespace widen
