#include "common/cell_sink.h"

namespace widen {

namespace {

CellCoordinates Copy(const CellView& c) {
  return CellCoordinates{std::string(c.row), std::string(c.family), std::string(c.qualifier),
                         c.timestamp_ms, c.type};
}

CellView View(const CellCoordinates& c) {
  return CellView{c.row, c.family, c.qualifier, c.timestamp_ms, c.type, std::string_view()};
}

}  // namespace

BufferedCellSink::~BufferedCellSink() { StopWriter(); }

Result<bool> BufferedCellSink::StartsEmpty() { return false; }

Status BufferedCellSink::WaitWritten() { return Status::OK(); }

Status BufferedCellSink::ReadBack(const CellView&, const CellView&,
                                  const std::function<Status(const CellView&)>&) {
  return Status::Internal("this target cannot read back the cells it was given");
}

Status BufferedCellSink::Put(const CellView& cell) {
  batch_.Add(cell);
  if (batch_.bytes() >= threshold_.load(std::memory_order_relaxed)) {
    return background_ ? Ship(&batch_, false) : WriteBatch(&batch_);
  }
  return Status::OK();
}

void BufferedCellSink::SetTable(const TableDescriptor& table, const CellLimits& limits) {
  std::vector<std::pair<std::string, int>> versions;
  for (const FamilyDescriptor& f : table.families) versions.emplace_back(f.name, f.versions);
  SetVersions(std::move(versions));
  checker_.emplace(table, limits);
}

Status BufferedCellSink::WriteBatch(CellBatch* batch) {
  if (batch->empty()) return Status::OK();
  if (checker_) {
    // Every cell is checked once, before anything of its batch is written
    // or spilled; a refused batch is dropped.
    Status s = checker_->CheckBatch(*batch);
    if (!s.ok()) {
      batch->Clear();
      return s;
    }
  }
  batch->Sort();  // stable: cells with equal coordinates keep their order; one pass if sorted
  Status s;
  if (mode_ == Mode::kUndecided) {
    Result<bool> empty = StartsEmpty();
    if (!empty.ok()) {
      batch->Clear();
      return empty.status();
    }
    mode_ = *empty ? Mode::kInOrder : Mode::kSortAll;
    stats_.sorted_all = !*empty;
  }
  const CellView first = batch->Get(0);
  if (mode_ == Mode::kSortAll || spilling_) {
    s = Spill(*batch);
  } else if (held_.empty()) {
    if (wrote_any_ && CompareCells(first, View(last_)) < 0) {
      // Out of order against cells already written (after a Flush).
      s = BeginSpill();
      if (s.ok()) s = Spill(*batch);
    } else {
      std::swap(held_, *batch);
    }
  } else if (CompareCells(first, held_.Get(held_.size() - 1)) >= 0) {
    s = WriteOrdered(held_);
    held_.Clear();
    if (s.ok()) std::swap(held_, *batch);
  } else {
    s = BeginSpill();
    if (s.ok()) s = Spill(held_);
    held_.Clear();
    if (s.ok()) s = Spill(*batch);
  }
  // Cleared either way: a batch the target refused is reported once, in `s`,
  // and not written again with the next one.
  batch->Clear();
  return s;
}

Status BufferedCellSink::BeginSpill() {
  if (wrote_any_) {
    // The cells written so far become the first run (flagged as written), so
    // that the merge sees every cell of the sink in one order.
    CellBatch back;
    Status s = ReadBack(View(lowest_), View(last_), [&](const CellView& c) {
      back.Add(c);
      if (back.bytes() < 4 * batch_bytes_) return Status::OK();
      Status added = runs_.Add(back, /*written=*/true);
      back.Clear();
      return added;
    });
    if (s.ok()) s = runs_.Add(back, /*written=*/true);
    WIDEN_RETURN_IF_ERROR(s);
  }
  // Counting starts again over the merged stream.
  const SinkStats before = stats_;
  stats_ = SinkStats{};
  stats_.batches = before.batches;
  tracked_any_ = false;
  return Spill(CellBatch());
}

Status BufferedCellSink::Spill(const CellBatch& batch) {
  if (!spilling_) {
    spilling_ = true;
    threshold_.store(4 * batch_bytes_, std::memory_order_relaxed);
  }
  Status s = runs_.Add(batch);
  stats_.spilled_runs = runs_.runs_written();
  stats_.spilled_bytes = runs_.bytes_written();
  return s;
}

int BufferedCellSink::VersionsOf(std::string_view family) {
  if (family != version_family_) {
    version_family_.assign(family);
    version_limit_ = 0;
    for (const auto& [name, versions] : versions_) {
      if (name == family) version_limit_ = versions;
    }
  }
  return version_limit_;
}

void BufferedCellSink::Track(const CellView& c) {
  const uint64_t bytes = c.row.size() + c.family.size() + c.qualifier.size() + c.value.size();
  ++stats_.cells;
  stats_.bytes += bytes;
  CellCoordinates& p = tracked_;
  // Only what changed is copied.
  if (!tracked_any_ || c.row != p.row) {
    ++stats_.rows;
    column_puts_ = c.type == CellType::kPut ? 1 : 0;
    p.row.assign(c.row);
    p.family.assign(c.family);
    p.qualifier.assign(c.qualifier);
  } else if (c.family != p.family || c.qualifier != p.qualifier) {
    column_puts_ = c.type == CellType::kPut ? 1 : 0;
    p.family.assign(c.family);
    p.qualifier.assign(c.qualifier);
  } else if (c.timestamp_ms == p.timestamp_ms && c.type == p.type) {
    // The earlier cell is gone: the target keeps the later one.
    ++stats_.overwritten;
    stats_.overwritten_bytes += tracked_bytes_;
    if (!stats_.first_overwritten) stats_.first_overwritten = Copy(c);
  } else if (c.type == CellType::kPut) {
    const int limit = VersionsOf(c.family);
    if (++column_puts_ > static_cast<uint64_t>(limit) && limit > 0) ++stats_.beyond_versions;
  }
  tracked_any_ = true;
  tracked_.timestamp_ms = c.timestamp_ms;
  tracked_.type = c.type;
  tracked_bytes_ = bytes;
}

Status BufferedCellSink::WriteOrdered(const CellBatch& batch) {
  // A batch the target refuses is not counted.
  const SinkStats before = stats_;
  const bool tracked_any = tracked_any_;
  const CellCoordinates tracked = tracked_;
  const uint64_t tracked_bytes = tracked_bytes_, column_puts = column_puts_;
  for (size_t i = 0; i < batch.size(); ++i) Track(batch.Get(i));
  Status s = WriteCounted(batch);
  if (!s.ok()) {
    stats_ = before;
    tracked_any_ = tracked_any;
    tracked_ = tracked;
    tracked_bytes_ = tracked_bytes;
    column_puts_ = column_puts;
  }
  return s;
}

Status BufferedCellSink::WriteCounted(const CellBatch& batch) {
  WIDEN_RETURN_IF_ERROR(WriteSorted(batch));
  stats_.batches += 1;
  // The range written so far (a merge after a read-back may end below it).
  const CellView first = batch.Get(0);
  const CellView last = batch.Get(batch.size() - 1);
  if (!wrote_any_ || CompareCells(first, View(lowest_)) < 0) lowest_ = Copy(first);
  if (!wrote_any_ || CompareCells(last, View(last_)) > 0) last_ = Copy(last);
  wrote_any_ = true;
  return Status::OK();
}

Status BufferedCellSink::Drain() {
  if (!spilling_) {
    if (held_.empty()) return Status::OK();
    Status s = WriteOrdered(held_);
    held_.Clear();
    return s;
  }
  CellBatch chunk;
  Status s = runs_.Merge(
      [&](const CellView& c, bool written) {
        Track(c);
        if (written) return Status::OK();  // in the target already
        chunk.Add(c);
        if (chunk.bytes() < batch_bytes_) return Status::OK();
        if (background_) return Ship(&chunk, true);
        Status w = WriteCounted(chunk);
        chunk.Clear();
        return w;
      },
      cancel_);
  if (s.ok() && !chunk.empty()) s = background_ ? Ship(&chunk, true) : WriteCounted(chunk);
  if (background_) {
    const Status written = WaitIdle();  // the writer is idle again: its state is ours
    if (s.ok()) s = written;
  }
  spilling_ = false;
  threshold_.store(mode_ == Mode::kSortAll ? 4 * batch_bytes_ : batch_bytes_,
                   std::memory_order_relaxed);
  return s;
}

Status BufferedCellSink::Ship(CellBatch* batch, bool counted) {
  WIDEN_RETURN_IF_ERROR(WaitIdle());
  if (batch->empty()) return Status::OK();
  std::lock_guard<std::mutex> lock(mu_);
  if (!writer_.joinable()) writer_ = std::thread([this] { WriterLoop(); });
  std::swap(*batch, in_flight_);  // in_flight_ was written and cleared
  in_flight_counted_ = counted;
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
    const bool counted = in_flight_counted_;
    lock.unlock();
    Status s;
    if (counted) {
      s = WriteCounted(in_flight_);
      in_flight_.Clear();
    } else {
      s = WriteBatch(&in_flight_);
    }
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
  if (background_) {
    WIDEN_RETURN_IF_ERROR(Ship(&batch_, false));
    WIDEN_RETURN_IF_ERROR(WaitIdle());  // the writer is idle: its state is ours now
  } else {
    WIDEN_RETURN_IF_ERROR(WriteBatch(&batch_));
  }
  const Status drained = Drain();
  const Status written = WaitWritten();
  return drained.ok() ? written : drained;
}

Status BufferedCellSink::Sync() {
  WIDEN_RETURN_IF_ERROR(Flush());
  return SyncWritten();
}

Status RunsSink::Put(const CellView& cell) {
  batch_.Add(cell);
  ++stats_.cells;
  stats_.bytes += cell.row.size() + cell.family.size() + cell.qualifier.size() + cell.value.size();
  return batch_.bytes() >= batch_bytes_ ? Flush() : Status::OK();
}

Status RunsSink::Flush() {
  if (batch_.empty()) return Status::OK();
  batch_.Sort();
  Status s = runs_->Add(batch_);
  batch_.Clear();
  if (s.ok()) {
    ++stats_.spilled_runs;
    ++stats_.batches;
  }
  return s;
}

PipelineSink::PipelineSink(std::unique_ptr<CellSink> inner, size_t batch_bytes)
    : inner_(std::move(inner)), batch_bytes_(batch_bytes) {}

PipelineSink::~PipelineSink() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

Status PipelineSink::Put(const CellView& cell) {
  batch_.Add(cell);
  if (batch_.bytes() >= batch_bytes_) return Ship();
  return Status::OK();
}

Status PipelineSink::Ship() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !has_work_; });
  if (!status_.ok()) {
    batch_.Clear();
    return status_;
  }
  if (!worker_.joinable()) worker_ = std::thread([this] { WorkerLoop(); });
  std::swap(batch_, in_flight_);  // in_flight_ was put and cleared
  has_work_ = true;
  cv_.notify_all();
  return Status::OK();
}

void PipelineSink::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return has_work_ || stop_; });
    if (!has_work_) return;  // stop_ and nothing left
    lock.unlock();
    Status s;
    for (size_t i = 0; i < in_flight_.size() && s.ok(); ++i) s = inner_->Put(in_flight_.Get(i));
    in_flight_.Clear();
    lock.lock();
    if (status_.ok()) status_ = s;
    has_work_ = false;
    cv_.notify_all();
  }
}

Status PipelineSink::Drain() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !has_work_; });
    if (!status_.ok()) {
      batch_.Clear();
      return status_;
    }
  }
  // The worker is idle: the rest goes in from this thread.
  Status s;
  for (size_t i = 0; i < batch_.size() && s.ok(); ++i) s = inner_->Put(batch_.Get(i));
  batch_.Clear();
  if (!s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = s;
  }
  return s;
}

Status PipelineSink::Flush() {
  WIDEN_RETURN_IF_ERROR(Drain());
  return inner_->Flush();
}

Status PipelineSink::Sync() {
  WIDEN_RETURN_IF_ERROR(Drain());
  return inner_->Sync();
}

Status PipelineSink::Close() {
  Status s = Drain();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
  Status closed = inner_->Close();
  return s.ok() ? closed : s;
}

}  // namespace widen
