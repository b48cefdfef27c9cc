#include "store/cell_sink.h"

namespace widen {

namespace {

// Sources often deliver cells already in key order; one pass tells whether
// the batch is sorted and, if so, counts cells with equal coordinates.
bool IsSorted(const CellBatch& batch, uint64_t* equal) {
  uint64_t eq = 0;
  for (size_t i = 1; i < batch.size(); ++i) {
    const int c = CompareCells(batch.Get(i - 1), batch.Get(i));
    if (c > 0) return false;
    eq += c == 0;
  }
  *equal = eq;
  return true;
}

}  // namespace

BufferedCellSink::~BufferedCellSink() { StopWriter(); }

Status BufferedCellSink::Put(const CellView& cell) {
  batch_.Add(cell);
  if (batch_.bytes() >= batch_bytes_) return background_ ? Ship() : WriteBatch(&batch_);
  return Status::OK();
}

Status BufferedCellSink::WriteBatch(CellBatch* batch) {
  if (batch->empty()) return Status::OK();
  uint64_t equal = 0;
  if (!IsSorted(*batch, &equal)) {
    batch->Sort();  // stable: cells with equal coordinates keep their order
    for (size_t i = 1; i < batch->size(); ++i) {
      equal += CompareCells(batch->Get(i - 1), batch->Get(i)) == 0;
    }
  }
  stats_.overwritten += equal;
  Status s = WriteSorted(*batch);
  if (s.ok()) {
    stats_.cells += batch->size();
    stats_.bytes += batch->bytes();
    stats_.batches += 1;
  }
  // Cleared either way: a batch the target refused is reported once, in `s`,
  // and not written again with the next one.
  batch->Clear();
  return s;
}

Status BufferedCellSink::Ship() {
  WIDEN_RETURN_IF_ERROR(WaitIdle());
  if (batch_.empty()) return Status::OK();
  std::lock_guard<std::mutex> lock(mu_);
  if (!writer_.joinable()) writer_ = std::thread([this] { WriterLoop(); });
  std::swap(batch_, in_flight_);  // in_flight_ was written and cleared
  has_work_ = true;
  cv_.notify_all();
  return Status::OK();
}

Status BufferedCellSink::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !has_work_; });
  return writer_status_;
}

void BufferedCellSink::WriterLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return has_work_ || stop_; });
    if (!has_work_) return;  // stop_ and nothing left
    lock.unlock();
    Status s = WriteBatch(&in_flight_);
    lock.lock();
    if (writer_status_.ok()) writer_status_ = s;
    has_work_ = false;
    cv_.notify_all();
  }
}

void BufferedCellSink::StopWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (writer_.joinable()) writer_.join();
}

Status BufferedCellSink::Flush() {
  if (!background_) return WriteBatch(&batch_);
  WIDEN_RETURN_IF_ERROR(Ship());
  return WaitIdle();
}

}  // namespace widen
