#include "transform/value_codec.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "common/bytes.h"

namespace widen {

namespace {

struct NamedType {
  HBaseType type;
  const char* name;
};
constexpr NamedType kHBaseTypes[] = {
    {HBaseType::kShort, "short"},
    {HBaseType::kInt, "int"},
    {HBaseType::kLong, "long"},
    {HBaseType::kFloat, "float"},
    {HBaseType::kDouble, "double"},
    {HBaseType::kBoolean, "boolean"},
    {HBaseType::kBigDecimal, "bigdecimal"},
    {HBaseType::kString, "string"},
    {HBaseType::kBytes, "bytes"},
};

bool Contains(std::string_view s, std::string_view what) {
  return s.find(what) != std::string_view::npos;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

Status DoesNotFit(const Value& v, HBaseType t) {
  return Status::InvalidArgument(fmt::format("value '{}' does not fit the hbase codec's Java {}",
                                             v.DebugString(), HBaseTypeName(t)));
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

bool ParseValueCodec(std::string_view name, ValueCodecKind* kind) {
  if (name == "string")
    *kind = ValueCodecKind::kString;
  else if (name == "hbase")
    *kind = ValueCodecKind::kHBase;
  else if (name == "json")
    *kind = ValueCodecKind::kJson;
  else if (name == "raw")
    *kind = ValueCodecKind::kRaw;
  else
    return false;
  return true;
}

bool ParseHBaseType(std::string_view name, HBaseType* type) {
  for (const auto& t : kHBaseTypes) {
    if (name == t.name) {
      *type = t.type;
      return true;
    }
  }
  return false;
}

std::string_view HBaseTypeName(HBaseType type) {
  for (const auto& t : kHBaseTypes) {
    if (t.type == type) return t.name;
  }
  return "auto";
}

HBaseType DefaultHBaseType(ValueType type, std::string_view st) {
  switch (type) {
    case ValueType::kBool:
      return HBaseType::kBoolean;
    case ValueType::kInt:
      if (Contains(st, "unsigned")) {  // one size up holds every unsigned value
        if (Contains(st, "tinyint")) return HBaseType::kShort;
        if (Contains(st, "smallint")) return HBaseType::kInt;
        return HBaseType::kLong;
      }
      if (Contains(st, "smallint") || Contains(st, "int2") || Contains(st, "tinyint")) {
        return HBaseType::kShort;
      }
      if (Contains(st, "bigint") || Contains(st, "int8") || Contains(st, "unsigned")) {
        return HBaseType::kLong;
      }
      return HBaseType::kInt;
    case ValueType::kUInt:
      return HBaseType::kLong;
    case ValueType::kFloat:
      return (Contains(st, "real") || Contains(st, "float4") || st == "float") ? HBaseType::kFloat
                                                                               : HBaseType::kDouble;
    case ValueType::kDecimal:
      return HBaseType::kBigDecimal;
    case ValueType::kBytes:
      return HBaseType::kBytes;
    case ValueType::kDate:
    case ValueType::kTime:
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz:
      return HBaseType::kLong;
    default:
      return HBaseType::kString;
  }
}

bool AppendHBaseBigDecimal(std::string_view text, std::string* out) {
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  size_t dot = text.find('.');
  std::string_view in = text.substr(0, dot);
  std::string_view fr = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
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
  size_t lead = digits.find_first_not_of('0');
  digits = lead == std::string::npos ? "0" : digits.substr(lead);
  if (digits == "0") negative = false;
  PutFixed32BE(out, static_cast<uint32_t>(fr.size()));  // scale as written ("1.50" -> 2)
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

void AppendJson(const Value& v, std::string* out) {
  if (v.is_null()) {
    out->append("null");
    return;
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
  // Integral value of v for short/int/long, if it has one.
  auto integral = [&](int64_t* x) {
    switch (v.type()) {
      case ValueType::kInt:
      case ValueType::kBool:
        *x = v.as_int();
        return true;
      case ValueType::kUInt:
        *x = static_cast<int64_t>(v.as_uint());
        return true;  // raw bits
      case ValueType::kDate:
        *x = v.as_int() * 86400000;
        return true;
      case ValueType::kTimestamp:
      case ValueType::kTimestampTz:
        *x = FloorDiv(v.as_int(), 1000);
        return true;
      case ValueType::kTime:
        *x = v.as_int();
        return true;
      default:
        return false;
    }
  };
  switch (t) {
    case HBaseType::kShort:
    case HBaseType::kInt:
    case HBaseType::kLong: {
      int64_t x;
      if (!integral(&x)) return DoesNotFit(v, t);
      if (t == HBaseType::kShort) {
        if (x < INT16_MIN || x > INT16_MAX) return DoesNotFit(v, t);
        PutFixed16BE(out, static_cast<uint16_t>(x));
      } else if (t == HBaseType::kInt) {
        if (x < INT32_MIN || x > INT32_MAX) return DoesNotFit(v, t);
        PutFixed32BE(out, static_cast<uint32_t>(x));
      } else {
        PutFixed64BE(out, static_cast<uint64_t>(x));
      }
      return Status::OK();
    }
    case HBaseType::kFloat:
    case HBaseType::kDouble: {
      double d;
      if (v.type() == ValueType::kFloat) {
        d = v.as_double();
      } else if (v.type() == ValueType::kInt) {
        d = static_cast<double>(v.as_int());
      } else {
        return DoesNotFit(v, t);
      }
      if (t == HBaseType::kDouble) {
        uint64_t bits;
        std::memcpy(&bits, &d, 8);
        PutFixed64BE(out, bits);
      } else {
        float f = static_cast<float>(d);
        if (!std::isnan(d) && static_cast<double>(f) != d) return DoesNotFit(v, t);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        PutFixed32BE(out, bits);
      }
      return Status::OK();
    }
    case HBaseType::kBoolean:
      if (v.type() == ValueType::kBool ||
          (v.type() == ValueType::kInt && (v.as_int() == 0 || v.as_int() == 1))) {
        out->push_back(v.as_int() != 0 ? '\xff' : '\0');
        return Status::OK();
      }
      return DoesNotFit(v, t);
    case HBaseType::kBigDecimal: {
      std::string text;
      if (v.type() == ValueType::kDecimal) {
        text.assign(v.as_bytes());
      } else if (v.type() == ValueType::kInt || v.type() == ValueType::kUInt) {
        v.AppendText(&text);
      } else {
        return DoesNotFit(v, t);
      }
      if (!AppendHBaseBigDecimal(text, out)) return DoesNotFit(v, t);
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
