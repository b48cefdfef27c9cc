#include "transform/row_builder.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/cell_check.h"
#include "transform/cell_timestamp.h"
#include "transform/value_codec.h"

namespace widen {

RowCell* RowCells::Add(std::string_view family, int64_t timestamp_ms, CellType type) {
  if (n_ > 0) {
    const RowCell& last = cells_[n_ - 1];
    bytes_ += last.family.size() + last.qualifier.size() + last.value.size() + kCellOverheadBytes;
  }
  if (n_ == cells_.size()) cells_.emplace_back();
  RowCell& c = cells_[n_++];
  c.family.assign(family);
  c.qualifier.clear();
  c.value.clear();
  c.timestamp_ms = timestamp_ms;
  c.type = type;
  return &c;
}

void RowCells::Truncate(size_t n) {
  if (n >= n_) return;
  bytes_ = 0;
  for (size_t i = 0; i + 1 < n; ++i) {
    const RowCell& c = cells_[i];
    bytes_ += c.family.size() + c.qualifier.size() + c.value.size() + kCellOverheadBytes;
  }
  n_ = n;
}

size_t RowCells::bytes() const {
  if (n_ == 0) return 0;
  const RowCell& last = cells_[n_ - 1];
  return bytes_ + last.family.size() + last.qualifier.size() + last.value.size() +
         kCellOverheadBytes;
}

std::span<const size_t> RowCells::Sorted() {
  auto before = [this](size_t a, size_t b) {
    const RowCell& x = cells_[a];
    const RowCell& y = cells_[b];
    if (int c = x.family.compare(y.family)) return c < 0;
    if (int c = x.qualifier.compare(y.qualifier)) return c < 0;
    if (x.timestamp_ms != y.timestamp_ms) return x.timestamp_ms > y.timestamp_ms;
    if (x.type != y.type) return x.type > y.type;
    return a < b;
  };
  order_.resize(n_);
  for (size_t i = 0; i < n_; ++i) order_[i] = i;
  // A row's cells mostly come as a few ascending runs (RowBuilder adds the
  // driving columns in (family, qualifier) order, then each nest's cells in
  // child order): a sorted row costs one comparison per cell, a few runs
  // are merged one after another into the sorted prefix, and only a row of
  // many runs is sorted.
  constexpr size_t kMergedRuns = 8;
  size_t runs = 1;
  for (size_t i = 1; i < n_ && runs <= kMergedRuns; ++i) runs += before(i, i - 1);
  if (runs == 1) return order_;
  if (runs > kMergedRuns) {
    std::sort(order_.begin(), order_.end(), before);
    return order_;
  }
  for (size_t i = 1; i < n_;) {
    if (!before(order_[i], order_[i - 1])) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < n_ && !before(order_[end], order_[end - 1])) ++end;
    merged_.resize(end);
    std::merge(order_.begin(), order_.begin() + i, order_.begin() + i, order_.begin() + end,
               merged_.begin(), before);
    std::copy(merged_.begin(), merged_.begin() + end, order_.begin());
    i = end;
  }
  return order_;
}

bool RowBuilder::FitsLimit(const RowCell& cell, std::string* reason) const {
  if (options_.max_cell_bytes <= 0) return true;
  const int64_t size = static_cast<int64_t>(key_.size() + cell.family.size() +
                                            cell.qualifier.size() + cell.value.size()) +
                       kCellOverheadBytes;
  if (size <= options_.max_cell_bytes) return true;
  *reason = fmt::format(
      "the cell {}:{} is {} bytes as HBase counts it (row + family + qualifier + value + {}), "
      "over the target's largest, {} (hbase.server.keyvalue.maxsize)",
      cell.family, ToStringBinary(cell.qualifier), size, kCellOverheadBytes,
      options_.max_cell_bytes);
  return false;
}

RowCell* RowBuilder::Put(RowCells* cells, std::string_view family, int64_t timestamp_ms) {
  if (puts_++ == 0 || timestamp_ms < oldest_ts_) oldest_ts_ = timestamp_ms;
  return cells->Add(family, timestamp_ms);
}

RowBuilder::RowBuilder(const TablePlan& plan, RowBuilderOptions options)
    : plan_(plan), options_(options) {
  as_mapped_.resize(plan_.cells.size());
  for (size_t i = 0; i < as_mapped_.size(); ++i) as_mapped_[i] = i;
  by_column_ = as_mapped_;
  std::stable_sort(by_column_.begin(), by_column_.end(), [&](size_t a, size_t b) {
    const CellPlan& x = plan_.cells[a];
    const CellPlan& y = plan_.cells[b];
    if (int c = x.family.compare(y.family)) return c < 0;
    return x.qualifier < y.qualifier;
  });
}

bool RowBuilder::StartRow(const Row& row, RowCells* cells, std::string* reason) {
  cells->Clear();
  key_.clear();
  puts_ = 0;
  oldest_ts_ = 0;
  if (Status s = plan_.key.Encode(row, &key_); !s.ok()) {
    *reason = s.message();
    return false;
  }
  if (key_.empty() || key_.size() > kMaxRowKeyBytes) {
    *reason =
        fmt::format("the row key is {} bytes; HBase takes 1 to {}", key_.size(), kMaxRowKeyBytes);
    return false;
  }
  int64_t row_ts = options_.timestamp_ms;
  if (plan_.version_index >= 0 && !CellTimestampMs(row[plan_.version_index], &row_ts, &why_)) {
    *reason = fmt::format("version column {} is {}", plan_.scan.columns[plan_.version_index].column,
                          why_);
    return false;
  }
  row_ts_ = row_ts;
  // In (family, qualifier) order, so that Sorted finds the row in order; a
  // row to reject is gone through again in mapping order, so that the
  // column named is the first one refused as the mapping lists them.
  if (AddColumns(row, by_column_, cells, reason)) return true;
  cells->Clear();
  puts_ = 0;
  oldest_ts_ = 0;
  return AddColumns(row, as_mapped_, cells, reason);
}

bool RowBuilder::AddColumns(const Row& row, const std::vector<size_t>& order, RowCells* cells,
                            std::string* reason) {
  const int64_t row_ts = row_ts_;
  for (size_t i : order) {
    const CellPlan& c = plan_.cells[i];
    const Value& v = row[c.index];
    int64_t ts = row_ts;
    if (c.version_index >= 0 && !CellTimestampMs(row[c.version_index], &ts, &why_)) {
      *reason = fmt::format("version column {} of {} is {}",
                            plan_.scan.columns[c.version_index].column, c.column, why_);
      return false;
    }
    if (v.is_null()) {
      if (c.on_null == NullPolicy::kOmit) continue;
      if (c.on_null == NullPolicy::kReject) {
        *reason = fmt::format("column {} is NULL", c.column);
        return false;
      }
      Put(cells, c.family, ts)->qualifier.assign(c.qualifier);
      continue;
    }
    RowCell* cell = Put(cells, c.family, ts);
    cell->qualifier.assign(c.qualifier);
    if (Status s = EncodeValue(c.codec, v, &cell->value); !s.ok()) {
      *reason = fmt::format("column {}: {}", c.column, s.message());
      return false;
    }
    if (!FitsLimit(*cell, &why_)) {
      *reason = fmt::format("column {}: {}", c.column, why_);
      return false;
    }
  }
  return true;
}

bool RowBuilder::AddNested(const NestPlan& n, const Row& child, std::string_view outer,
                           RowCells* cells, std::string* qualifier, bool* all_null,
                           std::string* reason) {
  qualifier->assign(outer);
  qualifier->append(n.prefix);
  if (Status st = n.qualifier.Encode(child, qualifier); !st.ok()) {
    *reason = st.message();
    return false;
  }
  const size_t cells_before = cells->size();
  const uint64_t puts_before = puts_;
  const int64_t oldest_before = oldest_ts_;
  int64_t ts = row_ts_;
  if (n.version_index >= 0 && !CellTimestampMs(child[n.version_index], &ts, &why_)) {
    *reason = fmt::format("version column {} is {}", n.scan.columns[n.version_index].column, why_);
    return false;
  }
  *all_null = true;
  for (const auto& vc : n.value_columns) *all_null = *all_null && child[vc.second].is_null();
  if (n.layout == NestLayout::kValue) {
    const Value& v = child[n.value_columns.front().second];
    if (!v.is_null()) {
      RowCell* cell = Put(cells, n.family, ts);
      cell->qualifier.assign(*qualifier);
      v.AppendText(&cell->value);
    }
  } else if (n.layout == NestLayout::kCells) {
    for (const auto& [name, idx] : n.value_columns) {
      if (child[idx].is_null()) continue;
      RowCell* cell = Put(cells, n.family, ts);
      cell->qualifier.assign(*qualifier);
      cell->qualifier.append(n.attribute_separator);
      cell->qualifier.append(name);
      child[idx].AppendText(&cell->value);
    }
  } else {
    RowCell* cell = Put(cells, n.family, ts);
    cell->qualifier.assign(*qualifier);
    std::string* v = &cell->value;
    v->push_back('{');
    bool first = true;
    for (const auto& [name, idx] : n.value_columns) {
      // SQL NULL: no attribute (as layout: cells has no cell), so that
      // `null` is only ever a JSON column's JSON null.
      if (child[idx].is_null()) continue;
      if (!first) v->push_back(',');
      first = false;
      AppendJsonString(name, v);
      v->push_back(':');
      AppendJson(child[idx], v);
    }
    v->push_back('}');
  }
  for (size_t i = cells_before; i < cells->size(); ++i) {
    if (!FitsLimit((*cells)[i], reason)) {
      // The child alone is left out: its cells go, as if never added.
      cells->Truncate(cells_before);
      puts_ = puts_before;
      oldest_ts_ = oldest_before;
      return false;
    }
  }
  return true;
}

bool RowBuilder::FinishRow(RowCells* cells, std::string* reason) {
  if (!options_.replace) return true;
  const int64_t oldest = puts_ > 0 ? oldest_ts_ : row_ts_;
  if (oldest <= kMinCellTimestampMs) {
    *reason = fmt::format(
        "replace mode: the row's oldest cell has timestamp {}, which leaves no timestamp below it "
        "for the delete markers (HBase refuses negative timestamps)",
        oldest);
    return false;
  }
  for (const FamilyDescriptor& f : plan_.descriptor.families) {
    cells->Add(f.name, oldest - 1, CellType::kDeleteFamily);
  }
  return true;
}

namespace {

// Adds `rows` of nest `n` under qualifier `outer`, and their own nested rows.
void AddAll(RowBuilder* b, const NestPlan& n, std::span<const NestedRow> rows,
            std::string_view outer, RowCells* cells, BuiltRow* out) {
  std::string qualifier;
  std::string reason;
  for (const NestedRow& r : rows) {
    bool all_null = false;
    if (!b->AddNested(n, r.row, outer, cells, &qualifier, &all_null, &reason)) {
      out->nested_rejects.push_back(reason);
      continue;
    }
    if (all_null) ++out->all_null_nested;
    for (size_t i = 0; i < r.nested.size() && i < n.children.size(); ++i) {
      AddAll(b, n.children[i], r.nested[i], qualifier, cells, out);
    }
  }
}

}  // namespace

BuiltRow BuildRow(const TablePlan& plan, const RowBuilderOptions& options, const Row& driving,
                  std::span<const std::vector<NestedRow>> nested) {
  BuiltRow out;
  RowBuilder b(plan, options);
  RowCells cells;
  if (!b.StartRow(driving, &cells, &out.reject)) return out;
  for (size_t i = 0; i < nested.size() && i < plan.nests.size(); ++i) {
    AddAll(&b, plan.nests[i], nested[i], std::string_view(), &cells, &out);
  }
  if (!b.FinishRow(&cells, &out.reject)) return out;
  out.row_key = b.row_key();
  out.timestamp_ms = b.timestamp_ms();
  Status s = cells.Emit(
      [&](const RowCell& c) {
        out.cells.push_back(c);
        return Status::OK();
      },
      [&](const RowCell& c) { out.replaced.push_back(c); });
  (void)s;  // put never fails here
  return out;
}

}  // namespace widen
