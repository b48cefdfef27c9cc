#include "extract/prefetch_stream.h"

#include <utility>

namespace widen {

namespace {

// About the bytes a row's values take.
size_t RowBytes(const Row& row) {
  size_t n = 0;
  for (const Value& v : row.values) n += sizeof(Value) + v.as_bytes().size();
  return n;
}

}  // namespace

PrefetchStream::PrefetchStream(std::unique_ptr<RowStream> inner) : inner_(std::move(inner)) {
  thread_ = std::thread([this] { ReadLoop(); });
  TakeBatch();
}

PrefetchStream::~PrefetchStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  thread_.join();
}

void PrefetchStream::ReadLoop() {
  std::vector<Row> batch;
  for (;;) {
    size_t n = 0, bytes = 0;
    while (inner_->Valid() && n < kBatchRows && bytes < kBatchBytes && !stop_) {
      if (batch.size() <= n) batch.emplace_back();
      // Copy-assigning reuses the buffers of the batch's earlier rows.
      batch[n].values = inner_->row().values;
      bytes += RowBytes(batch[n]);
      ++n;
      inner_->Next();
    }
    batch.resize(n);
    const bool end = !inner_->Valid();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return queue_.size() < kQueuedBatches || stop_; });
    if (stop_) return;
    if (!batch.empty()) queue_.push_back(std::move(batch));
    batch = std::vector<Row>();
    if (!spare_.empty()) {
      batch = std::move(spare_.back());
      spare_.pop_back();
    }
    if (end) {
      ended_ = true;
      end_status_ = inner_->status();
      cv_.notify_all();
      return;
    }
    cv_.notify_all();
  }
}

void PrefetchStream::TakeBatch() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!current_.empty()) spare_.push_back(std::move(current_));
  current_.clear();
  index_ = 0;
  cv_.wait(lock, [this] { return !queue_.empty() || ended_; });
  if (!queue_.empty()) {
    current_ = std::move(queue_.front());
    queue_.pop_front();
    cv_.notify_all();
    return;
  }
  status_ = end_status_;
}

void PrefetchStream::Next() {
  if (++index_ < current_.size()) return;
  TakeBatch();
}

}  // namespace widen
