// CellSink: where the transformer puts the cells of one target table.
//
// A sink is a small interface like leveldb::WritableFile: Put buffers a cell,
// Flush hands everything put so far to the target (written, readable, but
// not yet durable: a crash of the machine may lose it), Sync flushes and
// makes it durable, Close syncs and releases the target. Whatever records
// that cells are in a table (a table's state, store/state_store.h) is
// written only after Sync (or Close) returned OK. BufferedCellSink writes
// the buffering once (DuckDB's BaseAppender): cells are copied into a
// CellBatch, and when the batch reaches `batch_bytes` it is checked
// (CellChecker, when the sink knows its table), sorted in HBase's cell order
// and handed on.
//
// BufferedCellSink also makes sure the target receives the cells in key
// order, as one long sorted stream, whatever order they are put in (a store
// fed interleaved batches rewrites the data in compactions):
//  - when the target table held no cell when the sink was made and can read
//    back what the sink wrote (StartsEmpty, ReadBack), batches that follow
//    each other in key order are written as they come (one batch is held
//    back until the next shows the order holds). As soon as one does not,
//    the cells written so far are read back into a first sorted run, that
//    batch and every later one are spilled as sorted runs
//    (common/cell_runs.h), and Flush merges the runs into the target (writing
//    only the cells not written yet);
//  - otherwise every batch is spilled, and Flush merges them.
// Because every cell of the sink is seen in one ordered stream, the sink
// counts exactly which cells replace another put into it (same row, family,
// qualifier, timestamp and type), how many distinct rows it wrote, and which
// versions of a column lie beyond its family's VERSIONS; cells the target
// held before the sink are not counted.
//
// Thread safety: a sink is used by one thread at a time (a background sink
// also runs its own writer thread internally).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/cell.h"
#include "common/cell_check.h"
#include "common/cell_runs.h"
#include "common/status.h"
#include "common/table_descriptor.h"

namespace widen {

/// The coordinates of one cell, owned: to name a cell in messages.
struct CellCoordinates {
  std::string row;
  std::string family;
  std::string qualifier;
  int64_t timestamp_ms = 0;
  CellType type = CellType::kPut;
};

/// Counters a sink keeps about the cells it wrote to its target.
struct SinkStats {
  uint64_t cells = 0;  // cells written, including those that replaced another
  uint64_t bytes = 0;  // row + family + qualifier + value bytes of every cell written
  uint64_t batches = 0;
  /// Distinct row keys among the cells written.
  uint64_t rows = 0;
  /// Cells with the same row, family, qualifier, timestamp and type as a
  /// cell put into this sink before them: the target keeps the later one,
  /// so the earlier one is lost. Exact over everything put into the sink
  /// (see BufferedCellSink for the one case where the target is asked).
  uint64_t overwritten = 0;
  /// Bytes (row + family + qualifier + value) of the cells replaced.
  uint64_t overwritten_bytes = 0;
  /// The first such cell (in key order), when overwritten > 0.
  std::optional<CellCoordinates> first_overwritten;
  /// Put cells of a column that come after its family's VERSIONS newer
  /// versions (by timestamp, among the cells of this sink): the target holds
  /// them but reads never return them. 0 when the sink was not told the
  /// families' VERSIONS (BufferedCellSink::SetVersions).
  uint64_t beyond_versions = 0;
  /// External sort: runs spilled to temporary files and their bytes
  /// (0 when every batch arrived in key order).
  uint64_t spilled_runs = 0;
  uint64_t spilled_bytes = 0;
  /// True when every batch was spilled whatever its order, because the
  /// target could not take cells as they come (StartsEmpty said false: an
  /// HBase table, or an embedded table that held cells).
  bool sorted_all = false;
};

class CellSink {
 public:
  virtual ~CellSink() = default;
  /// Takes a copy of the cell's bytes (the view need not outlive the call).
  virtual Status Put(const CellView& cell) = 0;
  /// Writes out everything put so far: readers of the target see it, but it
  /// is not durable (a crash of the machine, or of HBase's region server
  /// before its WAL is written, may lose it).
  virtual Status Flush() = 0;
  /// Flushes, then makes every cell put so far durable in the target: it
  /// survives a crash of this process and of the machine. A sink whose
  /// cells are temporary (a spool, a sort) only flushes.
  virtual Status Sync() = 0;
  /// Syncs and releases the target. REQUIRES: no Put after Close.
  virtual Status Close() { return Sync(); }
  virtual const SinkStats& stats() const = 0;
  /// Lets Flush, Sync and Close stop with Cancelled once *cancel turns true
  /// while they merge spilled runs into the target (a Ctrl-C during the
  /// last, long step of a sorted table). `cancel` (not owned) must outlive
  /// the sink; nullptr (the default) never cancels. The default ignores it.
  virtual void SetCancel(const std::atomic<bool>* cancel) { (void)cancel; }
};

class BufferedCellSink : public CellSink {
 public:
  /// `batch_bytes`: arena size (keys + values, bytes) at which a batch is
  /// sorted and handed on. Default 4 MiB. With `background` the batch is
  /// sorted and written by a writer thread while the caller fills the next one
  /// (double buffering), so producing cells and writing them overlap. A write
  /// error then surfaces on a later Put, Flush or Close.
  /// Memory: in key order, at most three batches (the one filling, the one
  /// in flight, the one held back); once spilling, batches grow to
  /// 4 x batch_bytes (fewer, longer runs) and none is held back.
  /// `spill_dir`: where spilled runs go ("" = $TMPDIR, else /tmp).
  explicit BufferedCellSink(size_t batch_bytes = 4 << 20, bool background = false,
                            std::string spill_dir = "")
      : batch_bytes_(batch_bytes),
        threshold_(batch_bytes),
        background_(background),
        runs_(std::move(spill_dir)) {}
  ~BufferedCellSink() override;

  Status Put(const CellView& cell) final;
  /// Writes everything put so far (merging spilled runs) and waits for it.
  /// InvalidArgument when a cell fails the checks (SetTable); the batch
  /// that holds it is not written.
  Status Flush() final;
  /// Flush, then SyncWritten.
  Status Sync() final;
  void SetCancel(const std::atomic<bool>* cancel) final { cancel_ = cancel; }
  const SinkStats& stats() const final { return stats_; }

  /// Tells the sink each family's VERSIONS, for stats().beyond_versions.
  /// REQUIRES: called before the first Put.
  void SetVersions(std::vector<std::pair<std::string, int>> family_versions) {
    versions_ = std::move(family_versions);
  }

  /// Tells the sink its table: each family's VERSIONS (as SetVersions), and
  /// that every cell is checked against the table and `limits`
  /// (common/cell_check.h) before its batch is written; a batch holding a
  /// refused cell is not written, and the refusal is returned by the Put,
  /// Flush, Sync or Close that writes (or, with `background`, follows) it.
  /// REQUIRES: called before the first Put.
  void SetTable(const TableDescriptor& table, const CellLimits& limits);

 protected:
  /// The one hook: write `batch`, sorted in HBase cell order and after every
  /// batch written before it. Called only with a non-empty batch, from one
  /// thread at a time (the writer thread when `background`); the batch is
  /// cleared after it returns.
  virtual Status WriteSorted(const CellBatch& batch) = 0;

  /// Makes every batch WriteSorted wrote so far durable (see Sync). Called
  /// after a Flush, from the caller's thread, the writer being idle.
  virtual Status SyncWritten() = 0;

  /// Waits until the target has taken every batch WriteSorted was given
  /// (a target that keeps several requests in flight returns from
  /// WriteSorted before they are answered) and returns the first error
  /// among them; a later WriteSorted may return that error too. Called at
  /// the end of every Flush, from the caller's thread, the writer being
  /// idle. The default returns OK (WriteSorted wrote before it returned).
  virtual Status WaitWritten();

  /// True when the target table held no cell when the sink was made, and
  /// ReadBack returns what the sink wrote: batches in key order are then
  /// written as they come. Asked once, before the first batch is handed on,
  /// from the thread that writes. The default answers false: every batch is
  /// sorted externally and written at Flush.
  virtual Result<bool> StartsEmpty();

  /// Calls `fn` with the target's cells from `from` to `to` (both included,
  /// coordinates only: the values need not be given), in HBase cell order,
  /// every version and type as stored. Called only when StartsEmpty() said
  /// true, so they are the cells this sink wrote. The default returns
  /// Internal.
  virtual Status ReadBack(const CellView& from, const CellView& to,
                          const std::function<Status(const CellView&)>& fn);

  /// Stops the writer thread after writing what it holds. REQUIRES: a
  /// derived class whose WriteSorted uses its own members calls this in its
  /// destructor (the base destructor runs after those members are gone).
  void StopWriter();

 private:
  // Sorts `batch` and hands it on (written in order, held back, or
  // spilled); clears it.
  Status WriteBatch(CellBatch* batch);
  // Writes a batch that follows every cell written so far, counting its cells.
  Status WriteOrdered(const CellBatch& batch);
  // Writes a batch whose cells were counted; remembers the range written.
  Status WriteCounted(const CellBatch& batch);
  // Counts one cell of the ordered stream against the one before it (cells
  // and bytes, rows, replaced cells, versions beyond VERSIONS).
  void Track(const CellView& cell);
  // Writes the held batch, or merges the spilled runs into the target.
  Status Drain();
  // Starts sorting externally: what was written is read back into the
  // first run, and counting starts again over the merged stream.
  Status BeginSpill();
  Status Spill(const CellBatch& batch);
  // Hands `batch` to the writer thread (waits for the previous one) and
  // leaves it empty: to write as WriteBatch, or with `counted` (a merged
  // chunk, sorted, its cells counted) as WriteCounted, so that the merge of
  // the runs goes on meanwhile.
  Status Ship(CellBatch* batch, bool counted);
  // Waits until the writer is idle; returns its sticky status.
  Status WaitIdle();
  void WriterLoop();
  int VersionsOf(std::string_view family);

  const size_t batch_bytes_;
  std::atomic<size_t> threshold_;  // batch_bytes_, or 4x that while spilling
  bool background_;
  CellBatch batch_;
  SinkStats stats_;
  std::optional<CellChecker> checker_;  // set by SetTable

  // Order state, touched by whichever thread writes (one at a time).
  enum class Mode { kUndecided, kInOrder, kSortAll };
  Mode mode_ = Mode::kUndecided;
  CellBatch held_;         // sorted, not yet written: waits for the next batch
  bool spilling_ = false;  // batches go to runs_ until the next Drain
  CellRuns runs_;
  const std::atomic<bool>* cancel_ = nullptr;  // SetCancel; checked by Drain's merge
  bool wrote_any_ = false;                     // some cell reached WriteSorted
  CellCoordinates lowest_;                     // the first cell written (valid when wrote_any_)
  CellCoordinates last_;                       // the last cell written (valid when wrote_any_)
  // The last cell counted (Track), and its bytes.
  bool tracked_any_ = false;
  CellCoordinates tracked_;
  uint64_t tracked_bytes_ = 0;
  std::vector<std::pair<std::string, int>> versions_;  // family -> VERSIONS
  std::string version_family_;                         // cache of VersionsOf
  int version_limit_ = 0;
  uint64_t column_puts_ = 0;  // put versions of the current column so far

  // Writer thread state (background only), guarded by mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread writer_;
  CellBatch in_flight_;
  bool in_flight_counted_ = false;  // in_flight_ is a merged chunk (Ship)
  bool has_work_ = false;
  bool stop_ = false;
  Status writer_status_;
};

/// A sink that puts its cells into another sink from a second thread, so
/// that producing the cells (reading and assembling the source) and what the
/// other sink does with them (digests, comparisons, writes) run side by side.
/// Put copies the cell into a batch; a batch of `batch_bytes` (keys + values)
/// is handed to the worker thread, which Puts its cells, in order, into
/// `inner` while the caller fills the next one: memory is at most two
/// batches. The worker starts at the first full batch.
/// Errors: the first error of inner's Put is returned by the next Put,
/// Flush, Sync or Close of the caller (cells after it are not given to
/// inner); Close calls inner's Close even then and returns the first error.
/// SetCancel is passed to inner. stats() are inner's, to be read only when
/// no batch is in flight (after Flush, Sync or Close). Used from one thread.
class PipelineSink : public CellSink {
 public:
  /// Owns `inner` (non-null).
  explicit PipelineSink(std::unique_ptr<CellSink> inner, size_t batch_bytes = 1 << 20);
  ~PipelineSink() override;

  Status Put(const CellView& cell) override;
  /// Waits for the batch in flight, puts the rest, then inner's Flush.
  Status Flush() override;
  /// As Flush, with inner's Sync.
  Status Sync() override;
  /// As Flush, with inner's Close; stops the worker.
  Status Close() override;
  const SinkStats& stats() const override { return inner_->stats(); }
  void SetCancel(const std::atomic<bool>* cancel) override { inner_->SetCancel(cancel); }

 private:
  // Hands batch_ to the worker once it is idle; returns its sticky status.
  Status Ship();
  // Waits until the worker is idle, then puts what batch_ holds on this thread.
  Status Drain();
  void WorkerLoop();

  std::unique_ptr<CellSink> inner_;
  const size_t batch_bytes_;
  CellBatch batch_;  // filling, on the caller's thread

  // Guarded by mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread worker_;
  CellBatch in_flight_;
  bool has_work_ = false;
  bool stop_ = false;
  Status status_;  // the first error of inner's Put
};

/// A sink that only sorts: cells are buffered into batches of `batch_bytes`,
/// each sorted and added to `runs` as one run, so several producers (the
/// parallel jobs of one table) can feed one external sort whose merge then
/// reaches the store as one ordered stream. Flush and Close add what is
/// buffered. Cells are not checked here: the sink the merge is written
/// into checks them. stats() counts cells and bytes put (spilled_runs/bytes: the
/// runs this sink added).
class RunsSink : public CellSink {
 public:
  RunsSink(std::shared_ptr<CellRuns> runs, size_t batch_bytes = 16 << 20)
      : runs_(std::move(runs)), batch_bytes_(batch_bytes) {}
  Status Put(const CellView& cell) override;
  Status Flush() override;
  /// Flush: sorted runs are temporary (nothing outlives the process).
  Status Sync() override { return Flush(); }
  Status Close() override { return Flush(); }
  const SinkStats& stats() const override { return stats_; }

 private:
  std::shared_ptr<CellRuns> runs_;
  size_t batch_bytes_;
  CellBatch batch_;
  SinkStats stats_;
};

}  // namespace widen
