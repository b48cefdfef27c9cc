#include "common/cell_check.h"

#include <string_view>

#include "common/bytes.h"

namespace widen {

namespace {

// Bytes of a row key shown in a message at most.
constexpr size_t kShownRowBytes = 64;

std::string Quoted(std::string_view bytes) { return "'" + ToStringBinary(bytes) + "'"; }

std::string QuotedRow(std::string_view row) {
  if (row.size() <= kShownRowBytes) return Quoted(row);
  return Quoted(row.substr(0, kShownRowBytes)) + "...";
}

bool IsKnownType(CellType t) {
  return t == CellType::kPut || t == CellType::kDelete || t == CellType::kDeleteColumn ||
         t == CellType::kDeleteFamily;
}

}  // namespace

CellChecker::CellChecker(const TableDescriptor& table, const CellLimits& limits)
    : table_(table.FullName()), family_names_(FamilyNames(table)), limits_(limits) {
  for (const FamilyDescriptor& f : table.families) families_.push_back(f.name);
}

Status CellChecker::Check(const CellView& c) {
  if (c.row.empty() || c.row.size() > kMaxRowKeyBytes) {
    return Status::InvalidArgument("table " + Quoted(table_) + ": row key of " +
                                   std::to_string(c.row.size()) + " bytes (HBase takes 1 to " +
                                   std::to_string(kMaxRowKeyBytes) + ")" +
                                   (c.row.empty() ? "" : ": row " + QuotedRow(c.row)));
  }
  auto where = [&] { return "table " + Quoted(table_) + ", row " + QuotedRow(c.row); };
  if (!has_last_ || c.family != last_family_) {
    bool found = false;
    for (const std::string& f : families_) found = found || f == c.family;
    if (!found) {
      return Status::InvalidArgument(where() + ": the table has no column family " +
                                     Quoted(c.family) + " (families: " + family_names_ + ")");
    }
    last_family_.assign(c.family);
    has_last_ = true;
  }
  if (!IsKnownType(c.type)) {
    return Status::InvalidArgument(where() + ": unknown cell type " +
                                   std::to_string(static_cast<int>(c.type)));
  }
  if (c.type == CellType::kDeleteFamily && !c.qualifier.empty()) {
    return Status::InvalidArgument(where() +
                                   ": a DeleteFamily marker must have an empty qualifier, not " +
                                   Quoted(c.qualifier));
  }
  auto column = [&] {
    return ", column " + std::string(c.family) + ":" + ToStringBinary(c.qualifier);
  };
  if (!limits_.negative_timestamps && c.timestamp_ms < 0) {
    return Status::InvalidArgument(where() + column() + ": negative timestamp " +
                                   std::to_string(c.timestamp_ms) + " (HBase takes 0 and above)");
  }
  if (limits_.max_cell_bytes > 0) {
    const int64_t size =
        static_cast<int64_t>(c.row.size() + c.family.size() + c.qualifier.size() + c.value.size()) +
        kCellOverheadBytes;
    if (size > limits_.max_cell_bytes) {
      return Status::InvalidArgument(
          where() + column() + ": the cell is " + std::to_string(size) +
          " bytes as HBase counts it, above its limit of " +
          std::to_string(limits_.max_cell_bytes) +
          " (hbase.server.keyvalue.maxsize / hbase.client.keyvalue.maxsize)");
    }
  }
  return Status::OK();
}

Status CellChecker::CheckBatch(const CellBatch& batch) {
  for (size_t i = 0; i < batch.size(); ++i) WIDEN_RETURN_IF_ERROR(Check(batch.Get(i)));
  return Status::OK();
}

}  // namespace widen
