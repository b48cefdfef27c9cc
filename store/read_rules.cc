#include "store/read_rules.h"

#include <algorithm>

namespace widen {

ReadRules::ReadRules(const std::vector<FamilyDescriptor>& families, int max_versions,
                     int64_t now_ms) {
  for (const FamilyDescriptor& f : families) {
    Family rule;
    rule.name = f.name;
    rule.max_versions = std::min(max_versions, f.versions);
    rule.min_versions = f.min_versions;
    rule.oldest_ms = std::numeric_limits<int64_t>::min();
    if (f.ttl_seconds > 0) {
      int64_t ttl_ms = 0;
      int64_t oldest = 0;
      if (!__builtin_mul_overflow(f.ttl_seconds, int64_t{1000}, &ttl_ms) &&
          !__builtin_sub_overflow(now_ms, ttl_ms, &oldest)) {
        rule.oldest_ms = oldest;
      }
    }
    families_.push_back(std::move(rule));
  }
}

bool ReadRules::Returns(const CellView& c) {
  // A new row, family or column resets what masks the cells.
  bool new_column = false;
  if (!have_row_ || c.row != row_) {
    row_.assign(c.row);
    have_row_ = true;
    family_ = nullptr;
  }
  if (family_ == nullptr || c.family != family_->name) {
    family_ = nullptr;
    for (const Family& f : families_) {
      if (f.name == c.family) family_ = &f;
    }
    if (family_ == nullptr) return false;
    family_deleted_ = false;
    new_column = true;
  }
  if (new_column || c.qualifier != qualifier_) {
    qualifier_.assign(c.qualifier);
    column_deleted_ = false;
    version_deleted_ = false;
    versions_seen_ = 0;
  }
  const int64_t ts = c.timestamp_ms;
  switch (c.type) {
    case CellType::kDeleteFamily:
      // The newest marker comes first, so the first one seen is the max.
      if (!family_deleted_) family_delete_ms_ = ts;
      family_deleted_ = true;
      return false;
    case CellType::kDeleteColumn:
      if (!column_deleted_) column_delete_ms_ = ts;
      column_deleted_ = true;
      return false;
    case CellType::kDelete:
      version_deleted_ = true;
      version_delete_ms_ = ts;
      return false;
    case CellType::kPut:
      break;
  }
  if (family_deleted_ && ts <= family_delete_ms_) return false;
  if (column_deleted_ && ts <= column_delete_ms_) return false;
  if (version_deleted_ && ts == version_delete_ms_) return false;
  ++versions_seen_;
  if (versions_seen_ > family_->max_versions) return false;
  if (versions_seen_ > family_->min_versions && ts < family_->oldest_ms) return false;
  return true;
}

}  // namespace widen
