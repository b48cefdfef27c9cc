#include "tests/fuzz/rowkey_input.h"

#include "tests/fuzz/fuzz_check.h"

#include <utility>

namespace widen::fuzz {

namespace {

constexpr ValueType kAllTypes[] = {ValueType::kBool,      ValueType::kInt,         ValueType::kUInt,
                                   ValueType::kFloat,     ValueType::kDecimal,     ValueType::kText,
                                   ValueType::kBytes,     ValueType::kDate,        ValueType::kTime,
                                   ValueType::kTimestamp, ValueType::kTimestampTz, ValueType::kJson,
                                   ValueType::kOther};

std::optional<ValueType> TypeNamed(std::string_view name) {
  for (ValueType t : kAllTypes) {
    if (ValueTypeName(t) == name) return t;
  }
  return std::nullopt;
}

}  // namespace

bool ParseRowKeyInput(std::string_view data, RowKeyInput* out) {
  const size_t first = data.find('\n');
  if (first == std::string_view::npos) return false;
  const size_t second = data.find('\n', first + 1);
  if (second == std::string_view::npos) return false;
  out->layout_json.assign(data.substr(0, first));
  out->types.clear();
  std::string_view types = data.substr(first + 1, second - first - 1);
  while (!types.empty()) {
    const size_t comma = types.find(',');
    out->types.push_back(TypeNamed(types.substr(0, comma)));
    types.remove_prefix(comma == std::string_view::npos ? types.size() : comma + 1);
  }
  out->key.assign(data.substr(second + 1));
  return true;
}

std::string FormatRowKeyInput(std::string_view layout_json,
                              const std::vector<std::optional<ValueType>>& types,
                              std::string_view key) {
  ASSERT_INVARIANT(layout_json.find('\n') == std::string_view::npos,
                   "a key layout's JSON holds a newline: it would not read back");
  std::string s(layout_json);
  s += '\n';
  for (size_t i = 0; i < types.size(); ++i) {
    if (i > 0) s += ',';
    if (types[i]) s += ValueTypeName(*types[i]);
  }
  s += '\n';
  s += key;
  return s;
}

std::optional<KeyCodec> WithSourceTypes(const KeyCodec& codec,
                                        const std::vector<std::optional<ValueType>>& types) {
  std::vector<KeyPartPlan> parts(codec.parts().begin(), codec.parts().end());
  const bool binary = codec.form() == KeyForm::kBinary;
  for (size_t i = 0; i < parts.size() && i < types.size(); ++i) {
    KeyPartPlan& p = parts[i];
    if (!types[i] || p.is_literal) continue;
    const ValueType t = *types[i];
    if (p.reverse) {
      if (t != ValueType::kTimestamp && t != ValueType::kTimestampTz && t != ValueType::kDate &&
          t != ValueType::kInt) {
        return std::nullopt;
      }
    } else if (binary && !KeyTypeAccepts(p.type, t)) {
      return std::nullopt;
    }
    if (!binary && p.width > 0 && !IsIntegerType(t)) return std::nullopt;
    p.value_type = t;
  }
  return KeyCodec(codec.form(), std::move(parts), codec.separator(), codec.salt(),
                  codec.hash_prefix());
}

}  // namespace widen::fuzz
