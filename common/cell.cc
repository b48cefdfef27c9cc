#include "common/cell.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace widen {

int CompareCells(const CellView& a, const CellView& b) {
  if (int c = a.row.compare(b.row)) return c < 0 ? -1 : 1;
  if (int c = a.family.compare(b.family)) return c < 0 ? -1 : 1;
  if (int c = a.qualifier.compare(b.qualifier)) return c < 0 ? -1 : 1;
  if (a.timestamp_ms != b.timestamp_ms) return a.timestamp_ms > b.timestamp_ms ? -1 : 1;
  if (a.type != b.type) return a.type > b.type ? -1 : 1;
  return 0;
}

void CellBatch::Add(const CellView& cell) {
  assert(arena_.size() + cell.row.size() + cell.family.size() + cell.qualifier.size() +
             cell.value.size() <=
         std::numeric_limits<uint32_t>::max());
  Entry e;
  e.offset = static_cast<uint32_t>(arena_.size());
  e.row_len = static_cast<uint32_t>(cell.row.size());
  e.family_len = static_cast<uint32_t>(cell.family.size());
  e.qualifier_len = static_cast<uint32_t>(cell.qualifier.size());
  e.value_len = static_cast<uint32_t>(cell.value.size());
  e.timestamp_ms = cell.timestamp_ms;
  e.type = cell.type;
  arena_.append(cell.row);
  arena_.append(cell.family);
  arena_.append(cell.qualifier);
  arena_.append(cell.value);
  entries_.push_back(e);
}

void CellBatch::Clear() {
  arena_.clear();
  entries_.clear();
}

CellView CellBatch::View(const Entry& e) const {
  const char* p = arena_.data() + e.offset;
  CellView v;
  v.row = std::string_view(p, e.row_len);
  p += e.row_len;
  v.family = std::string_view(p, e.family_len);
  p += e.family_len;
  v.qualifier = std::string_view(p, e.qualifier_len);
  p += e.qualifier_len;
  v.value = std::string_view(p, e.value_len);
  v.timestamp_ms = e.timestamp_ms;
  v.type = e.type;
  return v;
}

CellView CellBatch::Get(size_t i) const { return View(entries_[i]); }

void CellBatch::Sort() {
  std::stable_sort(entries_.begin(), entries_.end(), [this](const Entry& a, const Entry& b) {
    return CompareCells(View(a), View(b)) < 0;
  });
}

void CellBatch::Iterate(Handler* handler) const {
  for (const Entry& e : entries_) handler->Cell(View(e));
}

}  // namespace widen
