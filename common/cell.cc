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

void CellBatch::PopBack() {
  arena_.resize(entries_.back().offset);
  entries_.pop_back();
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
  // Cells come row by row (each row's cells put together, in order, by the
  // assembler), so the rows are sorted as whole spans by their keys; cells
  // are compared one by one only within a span out of order, or where spans
  // share a key. A batch sorted already costs one pass.
  struct Span {
    size_t begin = 0, end = 0;
    std::string_view row;
    bool sorted = true;
  };
  std::vector<Span> spans;
  bool in_order = true;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const CellView c = View(entries_[i]);
    if (!spans.empty() && c.row == spans.back().row) {
      Span& s = spans.back();
      if (s.sorted && CompareCells(View(entries_[i - 1]), c) > 0) {
        s.sorted = false;
        in_order = false;
      }
      s.end = i + 1;
      continue;
    }
    if (!spans.empty() && c.row < spans.back().row) in_order = false;
    spans.push_back(Span{i, i + 1, c.row, true});
  }
  if (in_order) return;
  std::stable_sort(spans.begin(), spans.end(),
                   [](const Span& a, const Span& b) { return a.row < b.row; });
  std::vector<Entry> out;
  out.reserve(entries_.size());
  for (size_t k = 0; k < spans.size();) {
    size_t last = k + 1;
    bool sorted = spans[k].sorted;
    while (last < spans.size() && spans[last].row == spans[k].row) {
      sorted = false;  // rows with one key: their cells interleave
      ++last;
    }
    const size_t first_out = out.size();
    for (size_t j = k; j < last; ++j) {
      out.insert(out.end(), entries_.begin() + static_cast<std::ptrdiff_t>(spans[j].begin),
                 entries_.begin() + static_cast<std::ptrdiff_t>(spans[j].end));
    }
    if (!sorted) {
      // Stable: cells with equal coordinates keep the order they were added.
      std::stable_sort(
          out.begin() + static_cast<std::ptrdiff_t>(first_out), out.end(),
          [this](const Entry& a, const Entry& b) { return CompareCells(View(a), View(b)) < 0; });
    }
    k = last;
  }
  entries_.swap(out);
}

void CellBatch::Iterate(Handler* handler) const {
  for (const Entry& e : entries_) handler->Cell(View(e));
}

}  // namespace widen
