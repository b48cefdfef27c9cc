// PrefetchStream: a RowStream read ahead by a thread of its own, so that
// decoding the rows (COPY's text into Values) runs beside the assembly that
// takes them.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/status.h"
#include "common/value.h"
#include "extract/source.h"

namespace widen {

/// Wraps `inner` (owned, already positioned at its first row or at its
/// end): a thread moves through it and copies its rows into batches of at
/// most kBatchRows rows or about kBatchBytes bytes of values, of which at
/// most kQueuedBatches wait for the reader (memory: a few MiB, whatever the
/// stream's length). The rows, their order and the final status() are
/// inner's; status() is inner's first error once Valid() turned false,
/// after every row read before it.
/// REQUIRES: `inner` uses nothing that another thread uses meanwhile (its
/// own connection: a PostgreSQL COPY stream). Destroying the stream early
/// stops the thread after the row it is reading, then destroys `inner` on
/// the destroying thread. Used from one thread.
class PrefetchStream : public RowStream {
 public:
  static constexpr size_t kBatchRows = 512;
  static constexpr size_t kBatchBytes = 1 << 20;
  static constexpr size_t kQueuedBatches = 3;

  explicit PrefetchStream(std::unique_ptr<RowStream> inner);
  ~PrefetchStream() override;
  PrefetchStream(const PrefetchStream&) = delete;
  PrefetchStream& operator=(const PrefetchStream&) = delete;

  bool Valid() const override { return index_ < current_.size(); }
  void Next() override;
  const Row& row() const override { return current_[index_]; }
  const RowSchema& schema() const override { return inner_->schema(); }
  Status status() const override { return status_; }

 private:
  // Takes the next batch from the queue (waiting for it) into current_.
  void TakeBatch();
  void ReadLoop();

  std::unique_ptr<RowStream> inner_;
  std::vector<Row> current_;  // the batch being read; rows [0, index_) done
  size_t index_ = 0;
  Status status_;  // set when the last batch was taken

  // Guarded by mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<Row>> queue_;
  std::vector<std::vector<Row>> spare_;  // batches given back, to reuse their rows' buffers
  bool ended_ = false;                   // the thread read inner to its end
  Status end_status_;                    // inner's status at its end
  std::atomic<bool> stop_{false};        // the destructor asks the thread to stop
  std::thread thread_;
};

}  // namespace widen
