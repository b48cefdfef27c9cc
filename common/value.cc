#include "common/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "common/temporal.h"

namespace widen {

std::string_view ValueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kBool:
      return "bool";
    case ValueType::kInt:
      return "int";
    case ValueType::kUInt:
      return "uint";
    case ValueType::kFloat:
      return "double";
    case ValueType::kDecimal:
      return "decimal";
    case ValueType::kText:
      return "text";
    case ValueType::kBytes:
      return "bytes";
    case ValueType::kDate:
      return "date";
    case ValueType::kTime:
      return "time";
    case ValueType::kTimestamp:
      return "timestamp";
    case ValueType::kTimestampTz:
      return "timestamptz";
    case ValueType::kJson:
      return "json";
    case ValueType::kOther:
      return "other";
  }
  return "?";
}

namespace {

void AppendInt(std::string* out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

// Splits a decimal text into sign, integer digits (no leading zeros) and
// fraction digits (no trailing zeros).
struct DecimalParts {
  bool negative = false;
  std::string_view integer, fraction;
};

DecimalParts SplitDecimal(std::string_view s) {
  DecimalParts p;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    p.negative = s[0] == '-';
    s.remove_prefix(1);
  }
  size_t dot = s.find('.');
  std::string_view in = s.substr(0, dot);
  std::string_view fr = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  while (!in.empty() && in[0] == '0') in.remove_prefix(1);
  while (!fr.empty() && fr.back() == '0') fr.remove_suffix(1);
  p.integer = in;
  p.fraction = fr;
  if (in.empty() && fr.empty()) p.negative = false;  // -0 == 0
  return p;
}

int CompareMagnitude(const DecimalParts& a, const DecimalParts& b) {
  if (a.integer.size() != b.integer.size()) return a.integer.size() < b.integer.size() ? -1 : 1;
  int c = a.integer.compare(b.integer);
  if (c != 0) return c < 0 ? -1 : 1;
  c = a.fraction.compare(b.fraction);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

int CompareDecimalText(std::string_view x, std::string_view y) {
  DecimalParts a = SplitDecimal(x), b = SplitDecimal(y);
  if (a.negative != b.negative) return a.negative ? -1 : 1;
  int m = CompareMagnitude(a, b);
  return a.negative ? -m : m;
}

bool IsNumeric(ValueType t) {
  return t == ValueType::kInt || t == ValueType::kUInt || t == ValueType::kFloat ||
         t == ValueType::kBool;
}

template <typename T>
int Cmp(T a, T b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

}  // namespace

void Value::AppendText(std::string* out) const {
  switch (type_) {
    case ValueType::kBool:
      out->append(int_ ? "true" : "false");
      return;
    case ValueType::kInt:
      AppendInt(out, int_);
      return;
    case ValueType::kUInt: {
      char buf[24];
      auto r = std::to_chars(buf, buf + sizeof buf, uint_);
      out->append(buf, r.ptr);
      return;
    }
    case ValueType::kFloat: {
      if (std::isnan(double_)) {
        out->append("NaN");
      } else if (std::isinf(double_)) {
        out->append(double_ < 0 ? "-Infinity" : "Infinity");
      } else {
        char buf[32];
        auto r = std::to_chars(buf, buf + sizeof buf, double_);
        out->append(buf, r.ptr);
      }
      return;
    }
    case ValueType::kDate:
      AppendDate(out, int_);
      return;
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz:
      AppendTimestamp(out, int_, type_ == ValueType::kTimestampTz);
      return;
    case ValueType::kTime:
      AppendTime(out, int_);
      return;
    case ValueType::kDecimal:
    case ValueType::kText:
    case ValueType::kBytes:
    case ValueType::kJson:
    case ValueType::kOther:
      out->append(bytes_);
      return;
  }
}

std::string Value::DebugString() const {
  if (null_) return "NULL";
  if (type_ != ValueType::kBytes) return ToText();
  std::string s;
  for (unsigned char c : bytes_) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      s.push_back(static_cast<char>(c));
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      s.append(buf);
    }
  }
  return s;
}

int CompareValues(const Value& a, const Value& b) {
  if (a.is_null() || b.is_null()) return Cmp<int>(!a.is_null(), !b.is_null());
  const ValueType ta = a.type(), tb = b.type();
  if (IsNumeric(ta) && IsNumeric(tb)) {
    if (ta == ValueType::kFloat || tb == ValueType::kFloat) {
      auto as_d = [](const Value& v) {
        return v.type() == ValueType::kFloat  ? v.as_double()
               : v.type() == ValueType::kUInt ? static_cast<double>(v.as_uint())
                                              : static_cast<double>(v.as_int());
      };
      // A total order: NaN equals NaN and sorts after every number, as
      // PostgreSQL orders float columns.
      const double x = as_d(a), y = as_d(b);
      if (std::isnan(x) || std::isnan(y)) return Cmp<int>(std::isnan(x), std::isnan(y));
      return Cmp(x, y);
    }
    if (ta == ValueType::kUInt && tb == ValueType::kUInt) return Cmp(a.as_uint(), b.as_uint());
    if (ta == ValueType::kUInt) return b.as_int() < 0 ? 1 : Cmp(a.as_uint(), uint64_t(b.as_int()));
    if (tb == ValueType::kUInt) return a.as_int() < 0 ? -1 : Cmp(uint64_t(a.as_int()), b.as_uint());
    return Cmp(a.as_int(), b.as_int());
  }
  if (ta == ValueType::kDecimal && tb == ValueType::kDecimal) {
    return CompareDecimalText(a.as_bytes(), b.as_bytes());
  }
  if ((ta == ValueType::kDecimal && IsNumeric(tb)) ||
      (tb == ValueType::kDecimal && IsNumeric(ta))) {
    return CompareDecimalText(a.type() == ValueType::kDecimal ? a.as_bytes() : a.ToText(),
                              b.type() == ValueType::kDecimal ? b.as_bytes() : b.ToText());
  }
  switch (ta) {
    case ValueType::kDate:
    case ValueType::kTime:
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz:
      if (ta == tb) return Cmp(a.as_int(), b.as_int());
      break;
    default:
      break;
  }
  if (!IsNumeric(ta) && !IsNumeric(tb) && ta != ValueType::kDecimal && tb != ValueType::kDecimal &&
      ta != ValueType::kDate && ta != ValueType::kTime && ta != ValueType::kTimestamp &&
      ta != ValueType::kTimestampTz) {
    int c = a.as_bytes().compare(b.as_bytes());  // string-like: unsigned bytes
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  // Mixed kinds: compare the text forms as unsigned bytes.
  std::string sa = a.ToText(), sb = b.ToText();
  int c = std::string_view(sa).compare(sb);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace widen
