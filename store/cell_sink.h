// CellSink: where the transformer puts the cells of one target table.
//
// A sink is a small interface like leveldb::WritableFile: Put buffers a cell,
// Flush makes everything put so far durable in the target, Close flushes and
// releases the target. BufferedCellSink writes the buffering once (DuckDB's
// BaseAppender): cells are copied into a CellBatch, and when the batch reaches
// `batch_bytes` it is sorted in HBase's cell order and handed to the one hook,
// WriteSorted.
//
// Thread safety: a sink is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/cell.h"
#include "common/status.h"

namespace widen {

/// Counters a sink keeps; cells and bytes count what reached WriteSorted.
struct SinkStats {
  uint64_t cells = 0;
  uint64_t bytes = 0;  // row + family + qualifier + value bytes of every cell
  uint64_t batches = 0;
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
  /// sorted and written. Default 4 MiB.
  explicit BufferedCellSink(size_t batch_bytes = 4 << 20) : batch_bytes_(batch_bytes) {}

  Status Put(const CellView& cell) final;
  Status Flush() final;
  Status Close() override { return Flush(); }
  const SinkStats& stats() const final { return stats_; }

 protected:
  /// The one hook: write `batch`, already sorted in HBase cell order. Called
  /// only with a non-empty batch; the batch is cleared after it returns.
  virtual Status WriteSorted(const CellBatch& batch) = 0;

 private:
  size_t batch_bytes_;
  CellBatch batch_;
  SinkStats stats_;
};

}  // namespace widen
