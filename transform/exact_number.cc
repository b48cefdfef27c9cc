#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "transform/exact_number_internal.h"

namespace widen::exact {

namespace {

template <typename F>
std::string ShortestOf(F f) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, r.ptr);
}

bool SameNumber(const DecimalNumber& a, const DecimalNumber& b) {
  return a.negative == b.negative && a.digits == b.digits && a.exponent == b.exponent;
}

// A decimal's nearest F, when it prints back as the same number.
template <typename F>
bool DecimalToFloating(std::string_view text, F* out) {
  if (text == "NaN") {
    *out = std::numeric_limits<F>::quiet_NaN();
    return true;
  }
  if (text == "Infinity" || text == "-Infinity") {
    *out =
        text[0] == '-' ? -std::numeric_limits<F>::infinity() : std::numeric_limits<F>::infinity();
    return true;
  }
  DecimalNumber d;
  if (!ParseDecimalNumber(text, &d)) return false;
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  F f{};
  auto r = std::from_chars(text.data(), text.data() + text.size(), f);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(f)) return false;
  DecimalNumber back;
  if (!ParseDecimalNumber(ShortestOf(f), &back) || !SameNumber(d, back)) return false;
  *out = f;
  return true;
}

std::string NotANumber(const Value& v) {
  if (v.type() == ValueType::kOther) return "it is kept as the server's text, not a number";
  return fmt::format("a {} value is not a number", ValueTypeName(v.type()));
}

}  // namespace

bool ParseDecimalNumber(std::string_view s, DecimalNumber* out) {
  *out = DecimalNumber();
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  std::string digits;
  size_t i = 0;
  int64_t frac_digits = 0;
  bool dot = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.' && !dot) {
      dot = true;
    } else if (c >= '0' && c <= '9') {
      digits.push_back(c);
      if (dot) ++frac_digits;
    } else {
      break;
    }
  }
  if (digits.empty()) return false;
  int64_t exp = 0;
  if (i < s.size()) {
    if (s[i] != 'e' && s[i] != 'E') return false;
    ++i;
    bool neg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i == s.size()) return false;
    for (; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9' || exp > 1000000000) return false;
      exp = exp * 10 + (s[i] - '0');
    }
    if (neg) exp = -exp;
  }
  const size_t lead = digits.find_first_not_of('0');
  if (lead == std::string::npos) return true;  // zero
  out->negative = negative;
  out->digits = digits.substr(lead);
  out->exponent = exp - frac_digits;
  while (out->digits.back() == '0') {
    out->digits.pop_back();
    ++out->exponent;
  }
  return true;
}

Integer Integer::Of(int64_t v) {
  return v < 0 ? Integer{true, 0 - static_cast<uint64_t>(v)} : Integer{false, uint64_t(v)};
}

bool Integer::Within(int64_t min, int64_t max) const {
  if (negative) return min < 0 && magnitude <= 0 - static_cast<uint64_t>(min);
  return max >= 0 && magnitude <= static_cast<uint64_t>(max);
}

int64_t Integer::AsInt64() const {
  return negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
}

bool ToInteger(const Value& v, Integer* out, std::string* why) {
  switch (v.type()) {
    case ValueType::kBool:
    case ValueType::kInt:
      *out = Integer::Of(v.as_int());
      return true;
    case ValueType::kUInt:
      *out = Integer{false, v.as_uint()};
      return true;
    case ValueType::kDecimal: {
      DecimalNumber d;
      if (!ParseDecimalNumber(v.as_bytes(), &d)) {
        *why = "it is not a finite number";
        return false;
      }
      if (d.exponent < 0) {
        *why = "it has a fraction";
        return false;
      }
      uint64_t m = 0;
      bool ok = d.digits.size() + static_cast<size_t>(d.exponent) <= 20;
      auto push = [&m](unsigned digit) {
        if (m > (UINT64_MAX - digit) / 10) return false;
        m = m * 10 + digit;
        return true;
      };
      for (size_t i = 0; ok && i < d.digits.size(); ++i) {
        ok = push(static_cast<unsigned>(d.digits[i] - '0'));
      }
      for (int64_t i = 0; ok && i < d.exponent; ++i) ok = push(0);
      if (!ok) {
        *why = "it is beyond 64 bits";
        return false;
      }
      *out = Integer{d.negative && m != 0, m};
      return true;
    }
    case ValueType::kFloat: {
      const double d = v.as_double();
      if (!std::isfinite(d)) {
        *why = "it is not a finite number";
        return false;
      }
      if (std::trunc(d) != d) {
        *why = "it has a fraction";
        return false;
      }
      if (std::fabs(d) >= 18446744073709551616.0) {
        *why = "it is beyond 64 bits";
        return false;
      }
      *out = Integer{d < 0, static_cast<uint64_t>(std::fabs(d))};
      return true;
    }
    default:
      *why = NotANumber(v);
      return false;
  }
}

bool ToFloating(const Value& v, bool single, double* out, std::string* why) {
  const char* type = single ? "float" : "double";
  double d = 0;
  switch (v.type()) {
    case ValueType::kFloat:
      d = v.as_double();
      break;
    case ValueType::kInt:
      d = static_cast<double>(v.as_int());
      if (d >= 9223372036854775808.0 || static_cast<int64_t>(d) != v.as_int()) {
        *why = fmt::format("a {} cannot hold it exactly", type);
        return false;
      }
      break;
    case ValueType::kUInt:
      d = static_cast<double>(v.as_uint());
      if (d >= 18446744073709551616.0 || static_cast<uint64_t>(d) != v.as_uint()) {
        *why = fmt::format("a {} cannot hold it exactly", type);
        return false;
      }
      break;
    case ValueType::kDecimal: {
      bool ok;
      if (single) {
        float f = 0;
        ok = DecimalToFloating(v.as_bytes(), &f);
        d = f;
      } else {
        ok = DecimalToFloating(v.as_bytes(), &d);
      }
      if (!ok) {
        *why = fmt::format("it has more digits than a {} holds", type);
        return false;
      }
      *out = d;
      return true;
    }
    default:
      *why = NotANumber(v);
      return false;
  }
  if (single && !std::isnan(d) && static_cast<double>(static_cast<float>(d)) != d) {
    *why = "a float cannot hold it exactly";
    return false;
  }
  *out = d;
  return true;
}

std::string Shortest(double d) { return ShortestOf(d); }

}  // namespace widen::exact
