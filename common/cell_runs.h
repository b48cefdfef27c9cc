// CellRuns: cells kept in temporary files as sorted runs, and their k-way
// merge in HBase's cell order — the external sort behind BufferedCellSink
// when cells do not reach it in key order, behind parallel jobs whose row
// keys do not follow their ranges, and behind the assembler for a row too
// big to sort in memory.
//
// Each run is one unlinked temporary file under the directory given, else
// $TMPDIR, else /tmp (gone when the process ends, whatever happens). A run
// holds one record per cell, back to back (private to one process, never
// persisted; drawn in cell_runs.cc): each record leaves out the row, family
// and timestamp when they repeat the previous cell's, and a new row is
// stored as its shared prefix with the previous row plus the rest, so a
// run of sorted cells takes about half the bytes of the cells themselves.
//
// Memory: writing buffers 1 MiB; merging reads each run through a buffer
// of 16 MiB over the number of runs merged, 64 KiB to 256 KiB (larger only
// for a record that does not fit), so a merge's buffers take at most 16 MiB
// however many runs the table gave. At most kMaxRuns runs are kept: when
// Add would go beyond, the oldest kMergeWidth runs are first merged into
// one.
//
// Equal cells (same row, family, qualifier, timestamp and type) leave Merge
// in the order they were added — a cell of an earlier run first — so the last
// of them is the one a store keeps, as if the cells had been written
// directly.
//
// Thread safety: Add may be called from several threads at once (runs are
// appended under a lock); Merge REQUIRES that no Add runs concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/cell.h"
#include "common/status.h"

namespace widen {

class CellRuns {
 public:
  /// Runs at most kept before the oldest kMergeWidth are merged into one.
  static constexpr size_t kMaxRuns = 128;
  static constexpr size_t kMergeWidth = 64;

  /// Files go to `dir`, else $TMPDIR, else /tmp. Does no I/O.
  explicit CellRuns(std::string dir = "");
  ~CellRuns();
  CellRuns(const CellRuns&) = delete;
  CellRuns& operator=(const CellRuns&) = delete;

  /// Writes the cells of `batch` as one run. REQUIRES: `batch` is sorted in
  /// HBase cell order (CellBatch::Sort). An empty batch adds nothing.
  /// `written`: the cells are in the target already (a sink's read-back of
  /// what it wrote before it had to sort); Merge passes the flag on.
  /// LocalIo naming the file and the system's reason on an I/O error
  /// (a full disk, a missing directory).
  Status Add(const CellBatch& batch, bool written = false);

  /// Receives merged cells: the view is valid during the call only;
  /// `written` is the flag of the run the cell came from.
  using MergeFn = std::function<Status(const CellView& cell, bool written)>;

  /// Calls `fn` with every cell of every run in HBase cell order (equal
  /// cells in the order they were added). Stops at the first non-OK Status
  /// of `fn` and returns it; Cancelled when *cancel turns true; LocalIo
  /// on an I/O error. The runs are consumed either way: afterwards runs()
  /// is 0.
  Status Merge(const MergeFn& fn, const std::atomic<bool>* cancel = nullptr);

  /// Merges the runs of several sets as one: equal cells in the order of
  /// the sets, then of their adding (parallel jobs: the later range's cell
  /// is kept, as one job reading the ranges in turn would). Each set is
  /// first merged down to its share of kMaxRuns open files. REQUIRES: no
  /// concurrent Add on any set.
  static Status MergeAll(const std::vector<CellRuns*>& sets, const MergeFn& fn,
                         const std::atomic<bool>* cancel = nullptr);

  /// Runs held now.
  size_t runs() const;
  /// Runs written in all (merges of runs into one count once each), and
  /// the bytes of their records: what the sort cost in temporary files.
  uint64_t runs_written() const;
  uint64_t bytes_written() const;

 private:
  struct Run;
  // Merges the `count` oldest runs into one new run. REQUIRES: mu_ held.
  Status MergeOldest(size_t count);
  static Status MergeRuns(std::vector<std::unique_ptr<Run>> runs, const MergeFn& fn,
                          const std::atomic<bool>* cancel);
  Result<std::unique_ptr<Run>> NewRun();

  const std::string dir_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Run>> runs_;  // oldest first
  uint64_t runs_written_ = 0;
  uint64_t bytes_written_ = 0;
};

}  // namespace widen
