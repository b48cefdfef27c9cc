#include "transform/value_codec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/temporal.h"
#include "transform/exact_number_internal.h"

namespace widen {

namespace {

Status DoesNotFit(const Value& v, HBaseType t, std::string_view why = {}) {
  return Status::InvalidArgument(fmt::format("value '{}' does not fit the hbase codec's Java {}{}",
                                             v.DebugString(), HBaseTypeName(t),
                                             why.empty() ? "" : fmt::format(" ({})", why)));
}

// Two's complement big-endian bytes, minimal, of a non-negative decimal digit
// string (Java's BigInteger.toByteArray for a non-negative value).
std::string MagnitudeBytes(std::string digits) {
  std::string bytes;  // little-endian while building
  while (!(digits.empty() || (digits.size() == 1 && digits[0] == '0'))) {
    int rem = 0;
    std::string q;
    for (char c : digits) {
      int cur = rem * 10 + (c - '0');
      if (!q.empty() || cur / 256 != 0) q.push_back(static_cast<char>('0' + cur / 256));
      rem = cur % 256;
    }
    bytes.push_back(static_cast<char>(rem));
    digits = q;
  }
  std::string be(bytes.rbegin(), bytes.rend());
  return be;
}

}  // namespace

bool HBaseTypeAccepts(HBaseType t, ValueType type) {
  const bool number = type == ValueType::kInt || type == ValueType::kUInt ||
                      type == ValueType::kFloat || type == ValueType::kDecimal;
  switch (t) {
    case HBaseType::kShort:
    case HBaseType::kInt:
    case HBaseType::kLong:
      return number || type == ValueType::kBool || type == ValueType::kDate ||
             type == ValueType::kTime || type == ValueType::kTimestamp ||
             type == ValueType::kTimestampTz;
    case HBaseType::kFloat:
    case HBaseType::kDouble:
    case HBaseType::kBigDecimal:
      return number;
    case HBaseType::kBoolean:
      return type == ValueType::kBool || (number && type != ValueType::kFloat);
    case HBaseType::kString:
    case HBaseType::kBytes:
    case HBaseType::kAuto:
      return true;
  }
  return true;
}

bool AppendHBaseBigDecimal(std::string_view text, std::string* out) {
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  // Mantissa digits (the unscaled value as written) and the exponent.
  const size_t e = text.find_first_of("eE");
  std::string_view mantissa = text.substr(0, e);
  int64_t exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view x = text.substr(e + 1);
    bool neg = false;
    if (!x.empty() && (x[0] == '-' || x[0] == '+')) {
      neg = x[0] == '-';
      x.remove_prefix(1);
    }
    if (x.empty()) return false;
    for (char c : x) {
      if (c < '0' || c > '9' || exponent > 100000000) return false;
      exponent = exponent * 10 + (c - '0');
    }
    if (neg) exponent = -exponent;
  }
  size_t dot = mantissa.find('.');
  std::string_view in = mantissa.substr(0, dot);
  std::string_view fr =
      dot == std::string_view::npos ? std::string_view() : mantissa.substr(dot + 1);
  if (in.empty() && fr.empty()) return false;
  std::string digits;
  for (char c : in) {
    if (c < '0' || c > '9') return false;
    digits.push_back(c);
  }
  for (char c : fr) {
    if (c < '0' || c > '9') return false;
    digits.push_back(c);
  }
  // Java's scale is an int: "1.50" -> 2, "1.50e3" -> -1.
  const int64_t scale = static_cast<int64_t>(fr.size()) - exponent;
  if (scale < INT32_MIN || scale > INT32_MAX) return false;
  size_t lead = digits.find_first_not_of('0');
  digits = lead == std::string::npos ? "0" : digits.substr(lead);
  if (digits == "0") negative = false;
  PutFixed32BE(out, static_cast<uint32_t>(static_cast<int32_t>(scale)));
  std::string mag = MagnitudeBytes(digits);
  if (!negative) {
    if (mag.empty() || (static_cast<unsigned char>(mag[0]) & 0x80)) mag.insert(mag.begin(), '\0');
    out->append(mag);
    return true;
  }
  // Two's complement of the magnitude, minimal: invert and add one.
  if (mag.empty()) mag = std::string(1, '\0');
  std::string neg = mag;
  for (char& c : neg) c = static_cast<char>(~c);
  for (size_t i = neg.size(); i-- > 0;) {
    unsigned char c = static_cast<unsigned char>(neg[i]) + 1;
    neg[i] = static_cast<char>(c);
    if (c != 0) break;
  }
  if (!(static_cast<unsigned char>(neg[0]) & 0x80)) neg.insert(neg.begin(), '\xff');
  // Drop redundant leading 0xFF bytes (keep the sign).
  while (neg.size() > 1 && static_cast<unsigned char>(neg[0]) == 0xff &&
         (static_cast<unsigned char>(neg[1]) & 0x80)) {
    neg.erase(neg.begin());
  }
  out->append(neg);
  return true;
}

void AppendJsonString(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  // Runs of characters that need no escape are appended whole.
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 15]);
    }
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
}

namespace {

// One element of a list as JSON, from its text as the server prints it:
// numbers as numbers (non-finite doubles and decimals as strings, as
// scalars are), booleans as true/false, JSON as the document, instants in
// UTC as widen prints them, anything else as a string.
void AppendJsonElement(std::string_view text, ValueType type, std::string* out) {
  switch (type) {
    case ValueType::kInt:
    case ValueType::kUInt:
      out->append(text);
      return;
    case ValueType::kFloat:
      if (text == "NaN" || text == "Infinity" || text == "-Infinity") break;
      out->append(text);
      return;
    case ValueType::kBool:
      out->append(text == "t" || text == "true" ? "true" : "false");
      return;
    case ValueType::kJson:
      out->append(text);
      return;
    case ValueType::kTimestampTz:
      // PostgreSQL prints "2020-01-01 00:00:00.5+00" in the pinned UTC zone;
      // scalars are "2020-01-01T00:00:00.5Z".
      if (text.size() > 14 && text.substr(text.size() - 3) == "+00" && text[10] == ' ') {
        std::string iso(text.substr(0, text.size() - 3));
        iso[10] = 'T';
        iso.push_back('Z');
        AppendJsonString(iso, out);
        return;
      }
      break;
    default:
      break;
  }
  AppendJsonString(text, out);
}

// A PostgreSQL array literal as nested JSON arrays: [1,null,-3],
// [["x","y"],["z","w"]]. A lower-bound decoration ("[0:1]=") is dropped.
// Unquoted NULL is null; quoted elements lose their quotes and escapes.
// False (and *out unspecified) when `text` is not an array literal.
bool AppendPgArrayJson(std::string_view text, ValueType element, std::string* out) {
  if (!text.empty() && text[0] == '[') {
    const size_t eq = text.find("={");
    if (eq == std::string_view::npos) return false;
    text.remove_prefix(eq + 1);
  }
  size_t i = 0;
  int depth = 0;
  std::string item;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '{') {
      out->push_back('[');
      ++depth;
      ++i;
    } else if (c == '}') {
      out->push_back(']');
      if (--depth < 0) return false;
      ++i;
      if (depth == 0) return i == text.size();
    } else if (c == ',') {
      out->push_back(',');
      ++i;
    } else {
      if (depth == 0) return false;
      item.clear();
      if (c == '"') {
        for (++i; i < text.size() && text[i] != '"'; ++i) {
          if (text[i] == '\\' && i + 1 < text.size()) ++i;
          item.push_back(text[i]);
        }
        if (i == text.size()) return false;
        ++i;
        AppendJsonElement(item, element, out);
      } else {
        for (; i < text.size() && text[i] != ',' && text[i] != '}'; ++i) item.push_back(text[i]);
        if (item == "NULL") {
          out->append("null");
        } else {
          AppendJsonElement(item, element, out);
        }
      }
    }
  }
  return false;
}

}  // namespace

void AppendJson(const Value& v, std::string* out) {
  if (v.is_null()) {
    out->append("null");
    return;
  }
  if (v.list_form() == ListForm::kSet) {
    // MySQL SET labels cannot contain ',': the text splits exactly.
    out->push_back('[');
    std::string_view labels = v.as_bytes();
    for (size_t start = 0; !labels.empty() && start <= labels.size();) {
      const size_t comma = std::min(labels.find(',', start), labels.size());
      if (start > 0) out->push_back(',');
      AppendJsonString(labels.substr(start, comma - start), out);
      start = comma + 1;
    }
    out->push_back(']');
    return;
  }
  if (v.list_form() == ListForm::kPgArray) {
    const size_t mark = out->size();
    if (AppendPgArrayJson(v.as_bytes(), v.element_type(), out)) return;
    out->resize(mark);  // not an array literal after all: its text, as a string
  }
  switch (v.type()) {
    case ValueType::kBool:
    case ValueType::kInt:
    case ValueType::kUInt:
      v.AppendText(out);
      return;
    case ValueType::kFloat:
      if (std::isfinite(v.as_double())) {
        v.AppendText(out);
      } else {
        AppendJsonString(v.ToText(), out);
      }
      return;
    case ValueType::kBytes: {
      static const char kHex[] = "0123456789abcdef";
      std::string s = "\\x";
      for (unsigned char c : v.as_bytes()) {
        s.push_back(kHex[c >> 4]);
        s.push_back(kHex[c & 15]);
      }
      AppendJsonString(s, out);
      return;
    }
    case ValueType::kJson:
      out->append(v.as_bytes());
      return;
    default: {
      std::string text;
      v.AppendText(&text);
      AppendJsonString(text, out);
      return;
    }
  }
}

Status EncodeValue(const ValueCodecPlan& plan, const Value& v, std::string* out) {
  switch (plan.kind) {
    case ValueCodecKind::kString:
      v.AppendText(out);
      return Status::OK();
    case ValueCodecKind::kJson:
      AppendJson(v, out);
      return Status::OK();
    case ValueCodecKind::kRaw:
      if (v.type() == ValueType::kBytes) {
        out->append(v.as_bytes());
      } else {
        v.AppendText(out);
      }
      return Status::OK();
    case ValueCodecKind::kHBase:
      break;
  }
  const HBaseType t = plan.hbase_type;
  switch (t) {
    case HBaseType::kShort:
    case HBaseType::kInt:
    case HBaseType::kLong: {
      exact::Integer x;
      std::string why;
      switch (v.type()) {
        case ValueType::kTime:  // microseconds
          x = exact::Integer::Of(v.as_int());
          break;
        case ValueType::kDate:
        case ValueType::kTimestamp:
        case ValueType::kTimestampTz: {
          // ms since the epoch (timestamps floored to ms)
          int64_t ms;
          if (!EpochMs(v, &ms)) {
            return DoesNotFit(v, t, "an infinite date or time has no milliseconds");
          }
          x = exact::Integer::Of(ms);
          break;
        }
        default:
          if (!exact::ToInteger(v, &x, &why)) return DoesNotFit(v, t, why);
      }
      const int64_t lo = t == HBaseType::kShort ? INT16_MIN
                         : t == HBaseType::kInt ? INT32_MIN
                                                : INT64_MIN;
      const int64_t hi = t == HBaseType::kShort ? INT16_MAX
                         : t == HBaseType::kInt ? INT32_MAX
                                                : INT64_MAX;
      if (!x.Within(lo, hi)) {
        return DoesNotFit(v, t,
                          fmt::format("it holds {} to {}; type: {} holds this value", lo, hi,
                                      x.Within(INT32_MIN, INT32_MAX)   ? "int"
                                      : x.Within(INT64_MIN, INT64_MAX) ? "long"
                                                                       : "bigdecimal"));
      }
      const int64_t n = x.AsInt64();
      if (t == HBaseType::kShort) {
        PutFixed16BE(out, static_cast<uint16_t>(n));
      } else if (t == HBaseType::kInt) {
        PutFixed32BE(out, static_cast<uint32_t>(n));
      } else {
        PutFixed64BE(out, static_cast<uint64_t>(n));
      }
      return Status::OK();
    }
    case HBaseType::kFloat:
    case HBaseType::kDouble: {
      const bool single = t == HBaseType::kFloat;
      double d;
      std::string why;
      if (v.type() == ValueType::kBool || !exact::ToFloating(v, single, &d, &why)) {
        return DoesNotFit(v, t,
                          v.type() == ValueType::kBool ? "a bool value is not a number" : why);
      }
      if (std::isnan(d)) d = std::numeric_limits<double>::quiet_NaN();  // Java's Double.NaN
      if (!single) {
        uint64_t bits;
        std::memcpy(&bits, &d, 8);
        PutFixed64BE(out, bits);
      } else {
        const float f = static_cast<float>(d);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        PutFixed32BE(out, bits);
      }
      return Status::OK();
    }
    case HBaseType::kBoolean: {
      exact::Integer x;
      std::string why;
      const bool number = v.type() == ValueType::kBool || v.type() == ValueType::kInt ||
                          v.type() == ValueType::kUInt || v.type() == ValueType::kDecimal;
      if (number && exact::ToInteger(v, &x, &why) && x.Within(0, 1)) {
        out->push_back(x.magnitude != 0 ? '\xff' : '\0');
        return Status::OK();
      }
      return DoesNotFit(v, t, "only true, false, 0 and 1 are booleans");
    }
    case HBaseType::kBigDecimal: {
      std::string text;
      if (v.type() == ValueType::kDecimal) {
        text.assign(v.as_bytes());
      } else if (v.type() == ValueType::kInt || v.type() == ValueType::kUInt) {
        v.AppendText(&text);
      } else if (v.type() == ValueType::kFloat && std::isfinite(v.as_double())) {
        // The shortest decimal that reads back as the double, trailing zeros
        // stripped: 0.1 -> unscaled 1, scale 1; 100 -> 1, scale -2.
        exact::DecimalNumber d;
        exact::ParseDecimalNumber(exact::Shortest(v.as_double()), &d);
        text = d.digits.empty()
                   ? "0"
                   : fmt::format("{}{}e{}", d.negative ? "-" : "", d.digits, d.exponent);
      } else {
        return DoesNotFit(v, t,
                          v.type() == ValueType::kFloat || v.type() == ValueType::kDecimal
                              ? "it is not a finite number"
                          : v.type() == ValueType::kOther
                              ? "it is kept as the server's text, not a number"
                              : fmt::format("a {} value is not a number", ValueTypeName(v.type())));
      }
      if (!AppendHBaseBigDecimal(text, out)) return DoesNotFit(v, t, "it is not a finite number");
      return Status::OK();
    }
    case HBaseType::kBytes:
      if (v.type() == ValueType::kBytes) {
        out->append(v.as_bytes());
        return Status::OK();
      }
      [[fallthrough]];
    case HBaseType::kString:
    case HBaseType::kAuto:
      v.AppendText(out);
      return Status::OK();
  }
  return Status::OK();
}

}  // namespace widen
