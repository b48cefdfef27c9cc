#include "store/cell_sink.h"

namespace widen {

namespace {

// Sources often deliver cells already in key order; checking is O(n) and
// usually stops at the first pair out of order.
bool IsSorted(const CellBatch& batch) {
  for (size_t i = 1; i < batch.size(); ++i) {
    if (CompareCells(batch.Get(i - 1), batch.Get(i)) > 0) return false;
  }
  return true;
}

}  // namespace

Status BufferedCellSink::Put(const CellView& cell) {
  batch_.Add(cell);
  if (batch_.bytes() >= batch_bytes_) return Flush();
  return Status::OK();
}

Status BufferedCellSink::Flush() {
  if (batch_.empty()) return Status::OK();
  if (!IsSorted(batch_)) batch_.Sort();  // a stable sort leaves sorted input as it is
  Status s = WriteSorted(batch_);
  if (s.ok()) {
    stats_.cells += batch_.size();
    stats_.bytes += batch_.bytes();
    stats_.batches += 1;
  }
  // Cleared either way: a batch the target refused is reported once, in `s`,
  // and not written again with the next one.
  batch_.Clear();
  return s;
}

}  // namespace widen
