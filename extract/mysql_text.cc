#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "common/temporal.h"
#include "extract/mysql_text_internal.h"
#include "extract/pg_text_internal.h"
#include "extract/source.h"

namespace widen::mysql_internal {

namespace {

int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool PercentDecode(std::string_view s, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out->push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) return false;
    int h = HexVal(s[i + 1]), l = HexVal(s[i + 2]);
    if (h < 0 || l < 0) return false;
    out->push_back(static_cast<char>(h * 16 + l));
    i += 2;
  }
  return true;
}

std::string Lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return r;
}

bool Digits(std::string_view s, size_t pos, size_t n, int64_t* out) {
  if (pos + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

}  // namespace

Result<MySqlUrl> ParseMySqlUrl(const std::string& url) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(fmt::format(
        "source '{}': {} (expected mysql://USER[:PASSWORD]@HOST[:PORT]/DB)", MaskUrl(url), why));
  };
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return bad("no scheme");
  std::string_view rest(url);
  rest.remove_prefix(scheme + 3);
  size_t q = rest.find('?');
  if (q != std::string_view::npos) return bad("URL parameters are not supported");
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return bad("no database");
  std::string_view authority = rest.substr(0, slash), db = rest.substr(slash + 1);
  MySqlUrl u;
  if (db.empty()) return bad("no database");
  if (!PercentDecode(db, &u.database)) return bad("bad %-escape in the database name");
  size_t at = authority.rfind('@');
  std::string_view hostport = authority;
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    hostport = authority.substr(at + 1);
    size_t colon = userinfo.find(':');
    if (!PercentDecode(userinfo.substr(0, colon), &u.user)) return bad("bad %-escape in the user");
    if (colon != std::string_view::npos) {
      u.has_password = true;
      if (!PercentDecode(userinfo.substr(colon + 1), &u.password)) {
        return bad("bad %-escape in the password");
      }
    }
  }
  std::string_view port;
  if (!hostport.empty() && hostport[0] == '[') {
    size_t close = hostport.find(']');
    if (close == std::string_view::npos) return bad("unclosed '[' in the host");
    u.host = std::string(hostport.substr(1, close - 1));
    std::string_view after = hostport.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return bad("junk after the host");
      port = after.substr(1);
    }
  } else {
    size_t colon = hostport.rfind(':');
    u.host = std::string(hostport.substr(0, colon));
    if (colon != std::string_view::npos) port = hostport.substr(colon + 1);
  }
  if (u.host.empty()) return bad("no host");
  if (!port.empty()) {
    auto r = std::from_chars(port.data(), port.data() + port.size(), u.port);
    if (r.ec != std::errc() || r.ptr != port.data() + port.size() || u.port <= 0 ||
        u.port > 65535) {
      return bad("bad port");
    }
  }
  return u;
}

std::string QuoteIdent(std::string_view name) {
  std::string q = "`";
  for (char c : name) {
    if (c == '`') q.push_back('`');
    q.push_back(c);
  }
  q.push_back('`');
  return q;
}

ColumnKind KindForColumn(std::string_view data_type, std::string_view column_type, bool is_json) {
  const std::string dt = Lower(data_type), ct = Lower(column_type);
  const bool is_unsigned = ct.find("unsigned") != std::string::npos;
  if (dt == "tinyint" || dt == "smallint" || dt == "mediumint" || dt == "int" || dt == "integer" ||
      dt == "year") {
    return ColumnKind::kInt;
  }
  if (dt == "bigint") return is_unsigned ? ColumnKind::kUInt : ColumnKind::kInt;
  if (dt == "bit") return ColumnKind::kUInt;
  if (dt == "float") return ColumnKind::kFloat;
  if (dt == "double" || dt == "real" || dt == "double precision") return ColumnKind::kDouble;
  if (dt == "decimal" || dt == "numeric" || dt == "fixed" || dt == "dec") {
    return ColumnKind::kDecimal;
  }
  if (dt == "json") return ColumnKind::kJson;
  if (dt == "char" || dt == "varchar" || dt == "tinytext" || dt == "text" || dt == "mediumtext" ||
      dt == "longtext" || dt == "enum" || dt == "set") {
    return is_json ? ColumnKind::kJson : ColumnKind::kText;
  }
  if (dt == "binary" || dt == "varbinary" || dt == "tinyblob" || dt == "blob" ||
      dt == "mediumblob" || dt == "longblob") {
    return ColumnKind::kBytes;
  }
  if (dt == "geometry" || dt == "point" || dt == "linestring" || dt == "polygon" ||
      dt == "multipoint" || dt == "multilinestring" || dt == "multipolygon" ||
      dt == "geometrycollection" || dt == "geomcollection") {
    return ColumnKind::kGeometry;
  }
  if (dt == "date") return ColumnKind::kDate;
  if (dt == "datetime") return ColumnKind::kDateTime;
  if (dt == "timestamp") return ColumnKind::kTimestamp;
  if (dt == "time") return ColumnKind::kTime;
  return ColumnKind::kOther;
}

ValueType TypeForKind(ColumnKind kind) {
  switch (kind) {
    case ColumnKind::kInt:
      return ValueType::kInt;
    case ColumnKind::kUInt:
      return ValueType::kUInt;
    case ColumnKind::kFloat:
    case ColumnKind::kDouble:
      return ValueType::kFloat;
    case ColumnKind::kDecimal:
      return ValueType::kDecimal;
    case ColumnKind::kText:
      return ValueType::kText;
    case ColumnKind::kJson:
      return ValueType::kJson;
    case ColumnKind::kBytes:
    case ColumnKind::kGeometry:
      return ValueType::kBytes;
    case ColumnKind::kDate:
      return ValueType::kDate;
    case ColumnKind::kDateTime:
      return ValueType::kTimestamp;
    case ColumnKind::kTimestamp:
      return ValueType::kTimestampTz;
    case ColumnKind::kTime:
      return ValueType::kTime;
    case ColumnKind::kOther:
      return ValueType::kOther;
  }
  return ValueType::kOther;
}

bool ParseCalendarDate(std::string_view s, int64_t* days) {
  int64_t y, m, d;
  if (s.size() != 10 || s[4] != '-' || s[7] != '-' || !Digits(s, 0, 4, &y) ||
      !Digits(s, 5, 2, &m) || !Digits(s, 8, 2, &d)) {
    return false;
  }
  if (!IsCivilDate(y, m, d)) return false;
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  return true;
}

bool ParseDateTime(std::string_view s, int64_t* micros) {
  int64_t days, clock;
  if (s.size() < 19 || s[10] != ' ' || !ParseCalendarDate(s.substr(0, 10), &days)) return false;
  std::string_view t = s.substr(11);
  int64_t h, m, sec;
  if (t[2] != ':' || t[5] != ':' || !Digits(t, 0, 2, &h) || !Digits(t, 3, 2, &m) ||
      !Digits(t, 6, 2, &sec) || h > 23 || m > 59 || sec > 59) {
    return false;
  }
  int64_t frac = 0;
  if (t.size() > 8) {
    if (t[8] != '.' || t.size() > 15 || t.size() == 9) return false;
    int64_t f;
    if (!Digits(t, 9, t.size() - 9, &f)) return false;
    frac = f;
    for (size_t i = t.size() - 9; i < 6; ++i) frac *= 10;
  }
  clock = ClockMicros(h, m, sec, frac);
  return DayAndClockToMicros(days, clock, micros);
}

bool ParseValue(ColumnKind kind, std::string_view text, Value* out) {
  const char* b = text.data();
  const char* e = text.data() + text.size();
  switch (kind) {
    case ColumnKind::kInt: {
      int64_t v;
      auto r = std::from_chars(b, e, v);
      if (r.ec != std::errc() || r.ptr != e) return false;
      out->SetInt(ValueType::kInt, v);
      return true;
    }
    case ColumnKind::kUInt: {
      uint64_t v;
      auto r = std::from_chars(b, e, v);
      if (r.ec != std::errc() || r.ptr != e) return false;
      out->SetUInt(v);
      return true;
    }
    case ColumnKind::kFloat:
    case ColumnKind::kDouble: {
      // The server prints doubles in shortest round-trip form; strtod reads
      // them back exactly. FLOAT arrives already widened (CAST AS DOUBLE).
      if (text.empty()) return false;
      std::string tmp(text);
      char* end = nullptr;
      double d = std::strtod(tmp.c_str(), &end);
      if (end != tmp.c_str() + tmp.size()) return false;
      out->SetDouble(d);
      return true;
    }
    case ColumnKind::kDecimal:
      out->SetBytes(ValueType::kDecimal, text);
      return true;
    case ColumnKind::kText:
      out->SetBytes(ValueType::kText, text);
      return true;
    case ColumnKind::kJson:
      out->SetBytes(ValueType::kJson, text);
      return true;
    case ColumnKind::kBytes:
    case ColumnKind::kGeometry:
      out->SetBytes(ValueType::kBytes, text);
      return true;
    case ColumnKind::kDate: {
      int64_t days;
      if (ParseCalendarDate(text, &days)) {
        out->SetInt(ValueType::kDate, days);
      } else {
        out->SetBytes(ValueType::kOther, text);  // zero or partial date, kept as printed
      }
      return true;
    }
    case ColumnKind::kDateTime:
    case ColumnKind::kTimestamp: {
      int64_t us;
      if (ParseDateTime(text, &us)) {
        out->SetInt(kind == ColumnKind::kDateTime ? ValueType::kTimestamp : ValueType::kTimestampTz,
                    us);
      } else {
        out->SetBytes(ValueType::kOther, text);
      }
      return true;
    }
    case ColumnKind::kTime: {
      int64_t us;
      if (!pg_internal::ParseTime(text, &us)) return false;
      out->SetInt(ValueType::kTime, us);
      return true;
    }
    case ColumnKind::kOther:
      out->SetBytes(ValueType::kOther, text);
      return true;
  }
  return false;
}

}  // namespace widen::mysql_internal
