#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "common/temporal.h"
#include "extract/pg_text_internal.h"

namespace widen::pg_internal {

namespace {

// PostgreSQL type OIDs (pg_type.dat; stable across versions).
enum : uint32_t {
  kBoolOid = 16,
  kByteaOid = 17,
  kCharOid = 18,
  kNameOid = 19,
  kInt8Oid = 20,
  kInt2Oid = 21,
  kInt4Oid = 23,
  kTextOid = 25,
  kOidOid = 26,
  kJsonOid = 114,
  kFloat4Oid = 700,
  kFloat8Oid = 701,
  kBpcharOid = 1042,
  kVarcharOid = 1043,
  kDateOid = 1082,
  kTimeOid = 1083,
  kTimestampOid = 1114,
  kTimestampTzOid = 1184,
  kNumericOid = 1700,
  kJsonbOid = 3802,
};

bool ParseDigits(std::string_view s, size_t pos, size_t n, int64_t* out) {
  if (pos + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

bool StripBc(std::string_view* s) {
  if (s->size() > 3 && s->substr(s->size() - 3) == " BC") {
    s->remove_suffix(3);
    return true;
  }
  return false;
}

// Parses "YYYY...-MM-DD" at the start of s; sets *used to the bytes consumed.
bool ParseDatePrefix(std::string_view s, bool bc, int64_t* days, size_t* used) {
  size_t dash = s.find('-');
  // PostgreSQL's years have 4 to 7 digits (5874897 AD at most).
  if (dash == std::string_view::npos || dash < 4 || dash > 9) return false;
  int64_t y, m, d;
  if (!ParseDigits(s, 0, dash, &y) || s.size() < dash + 6 || s[dash + 3] != '-' ||
      !ParseDigits(s, dash + 1, 2, &m) || !ParseDigits(s, dash + 4, 2, &d)) {
    return false;
  }
  if (bc) y = 1 - y;  // 1 BC is year 0 (proleptic)
  if (!IsCivilDate(y, m, d)) return false;
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  *used = dash + 6;
  return true;
}

// "HH:MM:SS[.ffffff]" at the start of s (hours may have more than two digits).
bool ParseClockPrefix(std::string_view s, int64_t* micros, size_t* used) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  int64_t h, m, sec;
  if (!ParseDigits(s, 0, colon, &h) || s.size() < colon + 6 || s[colon + 3] != ':' ||
      !ParseDigits(s, colon + 1, 2, &m) || !ParseDigits(s, colon + 4, 2, &sec)) {
    return false;
  }
  size_t pos = colon + 6;
  int64_t frac = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 6) {
        frac = frac * 10 + (s[pos] - '0');
        ++digits;
      }
      ++pos;
    }
    while (digits++ < 6) frac *= 10;
  }
  *micros = ClockMicros(h, m, sec, frac);
  *used = pos;
  return true;
}

int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

ValueType TypeForOid(uint32_t oid) {
  switch (oid) {
    case kBoolOid:
      return ValueType::kBool;
    case kInt2Oid:
    case kInt4Oid:
    case kInt8Oid:
    case kOidOid:
      return ValueType::kInt;
    case kFloat4Oid:
    case kFloat8Oid:
      return ValueType::kFloat;
    case kNumericOid:
      return ValueType::kDecimal;
    case kTextOid:
    case kVarcharOid:
    case kBpcharOid:
    case kCharOid:
    case kNameOid:
      return ValueType::kText;
    case kByteaOid:
      return ValueType::kBytes;
    case kDateOid:
      return ValueType::kDate;
    case kTimeOid:
      return ValueType::kTime;
    case kTimestampOid:
      return ValueType::kTimestamp;
    case kTimestampTzOid:
      return ValueType::kTimestampTz;
    case kJsonOid:
    case kJsonbOid:
      return ValueType::kJson;
    default:
      return ValueType::kOther;
  }
}

bool ParseDate(std::string_view s, int64_t* days) {
  if (s == "infinity") {
    *days = kTemporalInfinity;
    return true;
  }
  if (s == "-infinity") {
    *days = kTemporalMinusInfinity;
    return true;
  }
  bool bc = StripBc(&s);
  size_t used = 0;
  return ParseDatePrefix(s, bc, days, &used) && used == s.size();
}

namespace {

enum class TsParse { kOk, kMalformed, kOverflow };

TsParse ParseTimestampImpl(std::string_view s, int64_t* micros);

}  // namespace

bool ParseTimestamp(std::string_view s, int64_t* micros) {
  return ParseTimestampImpl(s, micros) == TsParse::kOk;
}

namespace {

TsParse ParseTimestampImpl(std::string_view s, int64_t* micros) {
  if (s == "infinity") {
    *micros = kTemporalInfinity;
    return TsParse::kOk;
  }
  if (s == "-infinity") {
    *micros = kTemporalMinusInfinity;
    return TsParse::kOk;
  }
  bool bc = StripBc(&s);
  int64_t days = 0, clock = 0;
  size_t used = 0, used2 = 0;
  if (!ParseDatePrefix(s, bc, &days, &used) || used >= s.size() || s[used] != ' ')
    return TsParse::kMalformed;
  std::string_view rest = s.substr(used + 1);
  if (!ParseClockPrefix(rest, &clock, &used2)) return TsParse::kMalformed;
  rest.remove_prefix(used2);
  int64_t offset = 0;
  if (!rest.empty()) {
    if (rest[0] != '+' && rest[0] != '-') return TsParse::kMalformed;
    int sign = rest[0] == '-' ? -1 : 1;
    int64_t h = 0, m = 0, sec = 0;
    if (!ParseDigits(rest, 1, 2, &h)) return TsParse::kMalformed;
    size_t pos = 3;
    if (pos < rest.size()) {
      if (rest[pos] != ':' || !ParseDigits(rest, pos + 1, 2, &m)) return TsParse::kMalformed;
      pos += 3;
    }
    if (pos < rest.size()) {
      if (rest[pos] != ':' || !ParseDigits(rest, pos + 1, 2, &sec)) return TsParse::kMalformed;
      pos += 3;
    }
    if (pos != rest.size()) return TsParse::kMalformed;
    offset = sign * ClockMicros(h, m, sec, 0);
  }
  // Beyond 294247-01-10 04:00:54.775807 UTC (PostgreSQL goes to 294276) the microseconds since
  // 1970 do not fit in 64 bits: refuse rather than wrap around.
  return DayAndClockToMicros(days, clock - offset, micros) ? TsParse::kOk : TsParse::kOverflow;
}

}  // namespace

bool ParseTime(std::string_view s, int64_t* micros) {
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  size_t used = 0;
  if (!ParseClockPrefix(s, micros, &used) || used != s.size()) return false;
  if (neg) *micros = -*micros;
  return true;
}

bool ParseByteaHex(std::string_view s, std::string* out) {
  out->clear();
  if (s.size() < 2 || s[0] != '\\' || s[1] != 'x' || (s.size() % 2) != 0) return false;
  out->reserve((s.size() - 2) / 2);
  for (size_t i = 2; i < s.size(); i += 2) {
    int h = HexVal(s[i]), l = HexVal(s[i + 1]);
    if (h < 0 || l < 0) return false;
    out->push_back(static_cast<char>(h * 16 + l));
  }
  return true;
}

bool ParseText(uint32_t oid, std::string_view text, Value* out) {
  switch (oid) {
    case kBoolOid:
      if (text == "t") {
        out->SetInt(ValueType::kBool, 1);
      } else if (text == "f") {
        out->SetInt(ValueType::kBool, 0);
      } else {
        return false;
      }
      return true;
    case kInt2Oid:
    case kInt4Oid:
    case kInt8Oid:
    case kOidOid: {
      int64_t v = 0;
      auto r = std::from_chars(text.data(), text.data() + text.size(), v);
      if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return false;
      out->SetInt(ValueType::kInt, v);
      return true;
    }
    case kFloat4Oid:
    case kFloat8Oid: {
      double d;
      if (text == "NaN") {
        d = std::numeric_limits<double>::quiet_NaN();
      } else if (text == "Infinity") {
        d = std::numeric_limits<double>::infinity();
      } else if (text == "-Infinity") {
        d = -std::numeric_limits<double>::infinity();
      } else {
        std::string tmp(text);  // strtod needs a terminator
        char* end = nullptr;
        d = oid == kFloat4Oid ? static_cast<double>(std::strtof(tmp.c_str(), &end))
                              : std::strtod(tmp.c_str(), &end);
        if (end != tmp.c_str() + tmp.size()) return false;
      }
      out->SetDouble(d);
      return true;
    }
    case kByteaOid:
      return ParseByteaHex(text, out->mutable_bytes(ValueType::kBytes));
    case kDateOid: {
      int64_t days;
      if (!ParseDate(text, &days)) return false;
      out->SetInt(ValueType::kDate, days);
      return true;
    }
    case kTimeOid: {
      int64_t us;
      if (!ParseTime(text, &us)) return false;
      out->SetInt(ValueType::kTime, us);
      return true;
    }
    case kTimestampOid:
    case kTimestampTzOid: {
      int64_t us;
      switch (ParseTimestampImpl(text, &us)) {
        case TsParse::kOk:
          break;
        case TsParse::kOverflow:
          // Outside widen's range (see ParseTimestampImpl): the server's text.
          out->SetBytes(ValueType::kOther, text);
          return true;
        case TsParse::kMalformed:
          return false;
      }
      out->SetInt(oid == kTimestampOid ? ValueType::kTimestamp : ValueType::kTimestampTz, us);
      return true;
    }
    default:
      out->SetBytes(TypeForOid(oid), text);
      return true;
  }
}

std::string WithPassword(const std::string& url, const char* password) {
  const size_t scheme = url.find("://");
  if (password == nullptr || scheme == std::string::npos) return url;
  const size_t end = url.find_first_of("/?", scheme + 3);
  const std::string authority =
      url.substr(scheme + 3, end == std::string::npos ? std::string::npos : end - scheme - 3);
  const size_t at = authority.rfind('@');
  if (at != std::string::npos && authority.substr(0, at).find(':') != std::string::npos) {
    return url;  // the URL's own password wins
  }
  if (url.find("password=", end == std::string::npos ? url.size() : end) != std::string::npos) {
    return url;
  }
  std::string out = url;
  if (end == std::string::npos) out += "/";
  out += url.find('?') == std::string::npos ? "?password=" : "&password=";
  for (unsigned char c : std::string(password)) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out.append(buf);
    }
  }
  return out;
}

std::string WithConnectTimeout(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos || url.find("connect_timeout=") != std::string::npos) return url;
  std::string out = url;
  if (url.find_first_of("/?", scheme + 3) == std::string::npos) out += "/";
  out += url.find('?') == std::string::npos ? "?" : "&";
  out += "connect_timeout=10";
  return out;
}

std::string WithConnectionDefaults(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  std::string out = url;
  if (url.find_first_of("/?", scheme + 3) == std::string::npos) out += "/";
  const size_t query = out.find('?');
  for (const char* param : {"keepalives=1", "keepalives_idle=60", "keepalives_interval=10",
                            "keepalives_count=6", "tcp_user_timeout=120000"}) {
    const std::string_view p(param);
    const std::string key(p.substr(0, p.find('=') + 1));
    // A parameter the URL sets (after '?' or '&') is kept.
    if (query != std::string::npos && (out.find("?" + key, query) != std::string::npos ||
                                       out.find("&" + key, query) != std::string::npos)) {
      continue;
    }
    out += out.find('?') == std::string::npos ? "?" : "&";
    out += param;
  }
  return out;
}

}  // namespace widen::pg_internal
