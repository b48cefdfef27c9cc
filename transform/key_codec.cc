#include "transform/key_codec.h"

#include <fmt/format.h>

namespace widen {

Status KeyCodec::Encode(const Row& row, std::string* out) const {
  for (size_t i = 0; i < parts_.size(); ++i) {
    const KeyPartPlan& p = parts_[i];
    if (i > 0) out->append(separator_);
    if (p.is_literal) {
      out->append(p.literal);
      continue;
    }
    const Value& v = row[p.index];
    if (v.is_null()) {
      return Status::InvalidArgument(fmt::format("key part '{}' is NULL", p.name));
    }
    const size_t start = out->size();
    if (p.width > 0 && IsIntegerType(v.type())) {
      const bool negative = v.type() == ValueType::kInt && v.as_int() < 0;
      // Magnitude as unsigned, so INT64_MIN needs no special case.
      const uint64_t magnitude = v.type() == ValueType::kUInt ? v.as_uint()
                                 : negative ? 0 - static_cast<uint64_t>(v.as_int())
                                            : static_cast<uint64_t>(v.as_int());
      const std::string digits = std::to_string(magnitude);
      if (negative) out->push_back('-');
      for (size_t n = digits.size(); n < static_cast<size_t>(p.width); ++n) out->push_back('0');
      out->append(digits);
    } else {
      v.AppendText(out);
    }
    if (!separator_.empty() &&
        std::string_view(*out).substr(start).find(separator_) != std::string_view::npos) {
      return Status::InvalidArgument(fmt::format(
          "key part '{}' value '{}' contains the key separator '{}' (keys would be ambiguous)",
          p.name, v.DebugString(), separator_));
    }
  }
  return Status::OK();
}

bool KeyCodec::Decode(std::string_view key,
                      std::vector<std::pair<std::string, std::string>>* parts) const {
  parts->clear();
  for (size_t i = 0; i < parts_.size(); ++i) {
    std::string_view piece = key;
    if (i + 1 < parts_.size()) {
      if (separator_.empty()) return false;
      size_t pos = key.find(separator_);
      if (pos == std::string_view::npos) return false;
      piece = key.substr(0, pos);
      key.remove_prefix(pos + separator_.size());
    } else {
      key = std::string_view();
    }
    parts->emplace_back(parts_[i].name, std::string(piece));
  }
  return true;
}

}  // namespace widen
