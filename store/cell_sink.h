// CellSink: where the transformer puts the cells of one target table.
//
// A sink is a small interface like leveldb::WritableFile: Put buffers a cell,
// Flush makes everything put so far durable in the target, Close flushes and
// releases the target. BufferedCellSink writes the buffering once (DuckDB's
// BaseAppender): cells are copied into a CellBatch, and when the batch reaches
// `batch_bytes` it is sorted in HBase's cell order and handed to the one hook,
// WriteSorted.
//
// Thread safety: a sink is used by one thread at a time (a background sink
// also runs its own writer thread internally).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

#include "common/cell.h"
#include "common/status.h"

namespace widen {

/// Counters a sink keeps; cells and bytes count what reached WriteSorted.
struct SinkStats {
  uint64_t cells = 0;
  uint64_t bytes = 0;  // row + family + qualifier + value bytes of every cell
  uint64_t batches = 0;
  /// Cells with the same row, family, qualifier, timestamp and type as
  /// another cell of the same batch: the later one replaces it in the store.
  /// (Counted within a batch only; `widen plan --full` checks a whole run.)
  uint64_t overwritten = 0;
};

class CellSink {
 public:
  virtual ~CellSink() = default;
  /// Takes a copy of the cell's bytes (the view need not outlive the call).
  virtual Status Put(const CellView& cell) = 0;
  /// Writes out everything put so far.
  virtual Status Flush() = 0;
  /// Flushes and releases the target. REQUIRES: no Put after Close.
  virtual Status Close() = 0;
  virtual const SinkStats& stats() const = 0;
};

class BufferedCellSink : public CellSink {
 public:
  /// `batch_bytes`: arena size (keys + values, bytes) at which a batch is
  /// sorted and written. Default 4 MiB. With `background` the batch is sorted
  /// and written by a writer thread while the caller fills the next one
  /// (double buffering: at most two batches in memory), so producing cells
  /// and writing them overlap. A write error then surfaces on a later Put,
  /// Flush or Close.
  explicit BufferedCellSink(size_t batch_bytes = 4 << 20, bool background = false)
      : batch_bytes_(batch_bytes), background_(background) {}
  ~BufferedCellSink() override;

  Status Put(const CellView& cell) final;
  /// Writes everything put so far and waits for it.
  Status Flush() final;
  Status Close() override { return Flush(); }
  const SinkStats& stats() const final { return stats_; }

 protected:
  /// The one hook: write `batch`, already sorted in HBase cell order. Called
  /// only with a non-empty batch, from one thread at a time (the writer
  /// thread when `background`); the batch is cleared after it returns.
  virtual Status WriteSorted(const CellBatch& batch) = 0;

  /// Stops the writer thread after writing what it holds. REQUIRES: a
  /// derived class whose WriteSorted uses its own members calls this in its
  /// destructor (the base destructor runs after those members are gone).
  void StopWriter();

 private:
  // Sorts and writes `batch`, updating stats_ on success.
  Status WriteBatch(CellBatch* batch);
  // Hands the current batch to the writer thread (waits for the previous one).
  Status Ship();
  // Waits until the writer is idle; returns its sticky status.
  Status WaitIdle();
  void WriterLoop();

  size_t batch_bytes_;
  bool background_;
  CellBatch batch_;
  SinkStats stats_;

  // Writer thread state (background only), guarded by mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread writer_;
  CellBatch in_flight_;
  bool has_work_ = false;
  bool stop_ = false;
  Status writer_status_;
};

}  // namespace widen
