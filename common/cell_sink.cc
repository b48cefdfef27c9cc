#include "common/cell_sink.h"

namespace widen {

namespace {

bool IsSorted(const CellBatch& batch) {
  for (size_t i = 1; i < batch.size(); ++i) {
    if (CompareCells(batch.Get(i - 1), batch.Get(i)) > 0) return false;
  }
  return true;
}

CellCoordinates Copy(const CellView& c) {
  return CellCoordinates{std::string(c.row), std::string(c.family), std::string(c.qualifier),
                         c.timestamp_ms, c.type};
}

CellView View(const CellCoordinates& c) {
  return CellView{c.row, c.family, c.qualifier, c.timestamp_ms, c.type, std::string_view()};
}

}  // namespace

BufferedCellSink::~BufferedCellSink() { StopWriter(); }

Result<bool> BufferedCellSink::HoldsDifferentValue(const CellView&) { return false; }

Status BufferedCellSink::Put(const CellView& cell) {
  batch_.Add(cell);
  if (batch_.bytes() >= threshold_.load(std::memory_order_relaxed)) {
    return background_ ? Ship() : WriteBatch(&batch_);
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
  if (!IsSorted(*batch)) batch->Sort();  // stable: cells with equal coordinates keep their order
  Status s;
  const CellView first = batch->Get(0);
  if (spilling_) {
    s = Spill(*batch);
  } else if (held_.empty()) {
    if (wrote_any_ && CompareCells(first, View(last_)) < 0) {
      // Out of order against cells already written (after a Flush).
      check_written_ = true;
      written_high_ = last_;
      s = Spill(*batch);
    } else {
      std::swap(held_, *batch);
    }
  } else if (CompareCells(first, held_.Get(held_.size() - 1)) >= 0) {
    s = WriteOrdered(held_);
    held_.Clear();
    if (s.ok()) std::swap(held_, *batch);
  } else {
    if (wrote_any_) {
      check_written_ = true;
      written_high_ = last_;
    }
    s = Spill(held_);
    held_.Clear();
    if (s.ok()) s = Spill(*batch);
  }
  // Cleared either way: a batch the target refused is reported once, in `s`,
  // and not written again with the next one.
  batch->Clear();
  return s;
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

void BufferedCellSink::Track(const CellView* prev, const CellView& c) {
  const auto start_column = [&] { column_puts_ = c.type == CellType::kPut ? 1 : 0; };
  if (prev == nullptr || c.row != prev->row) {
    ++stats_.rows;
    start_column();
    return;
  }
  if (c.family != prev->family || c.qualifier != prev->qualifier) {
    start_column();
    return;
  }
  if (c.timestamp_ms == prev->timestamp_ms && c.type == prev->type) {
    ++stats_.overwritten;
    if (!stats_.first_overwritten) stats_.first_overwritten = Copy(c);
    return;
  }
  if (c.type != CellType::kPut) return;
  const int limit = VersionsOf(c.family);
  if (++column_puts_ > static_cast<uint64_t>(limit) && limit > 0) ++stats_.beyond_versions;
}

Status BufferedCellSink::WriteOrdered(const CellBatch& batch) {
  const CellView last_written = wrote_any_ ? View(last_) : CellView{};
  const CellView* prev = wrote_any_ && !check_written_ ? &last_written : nullptr;
  CellView prev_cell;
  for (size_t i = 0; i < batch.size(); ++i) {
    const CellView cell = batch.Get(i);
    if (check_written_) {
      // Merged cells that fall among those written before the spill may
      // replace one of them: ask the target, before this batch is written.
      if (CompareCells(cell, View(written_high_)) > 0) {
        check_written_ = false;
      } else if (CompareCells(cell, View(lowest_)) >= 0) {
        WIDEN_ASSIGN_OR_RETURN(bool replaces, HoldsDifferentValue(cell));
        if (replaces) {
          ++stats_.overwritten;
          if (!stats_.first_overwritten) stats_.first_overwritten = Copy(cell);
        }
      }
    }
    Track(prev, cell);
    prev_cell = cell;
    prev = &prev_cell;
  }
  WIDEN_RETURN_IF_ERROR(WriteSorted(batch));
  stats_.cells += batch.size();
  stats_.bytes += batch.bytes();
  stats_.batches += 1;
  if (!wrote_any_) lowest_ = Copy(batch.Get(0));
  wrote_any_ = true;
  last_ = Copy(batch.Get(batch.size() - 1));
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
  Status s = runs_.Merge([&](const CellView& c) {
    chunk.Add(c);
    if (chunk.bytes() < batch_bytes_) return Status::OK();
    Status w = WriteOrdered(chunk);
    chunk.Clear();
    return w;
  });
  if (s.ok() && !chunk.empty()) s = WriteOrdered(chunk);
  spilling_ = false;
  check_written_ = false;
  threshold_.store(batch_bytes_, std::memory_order_relaxed);
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
  if (background_) {
    WIDEN_RETURN_IF_ERROR(Ship());
    WIDEN_RETURN_IF_ERROR(WaitIdle());  // the writer is idle: its state is ours now
  } else {
    WIDEN_RETURN_IF_ERROR(WriteBatch(&batch_));
  }
  return Drain();
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

}  // namespace widen
