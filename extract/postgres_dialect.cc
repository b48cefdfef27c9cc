#include <fmt/format.h>

#include <cstdint>
#include <limits>

#include "common/temporal.h"
#include "extract/postgres_dialect_internal.h"

namespace widen::pg_internal {

std::string QuoteIdent(std::string_view name) {
  std::string q = "\"";
  for (char c : name) {
    if (c == '"') q.push_back('"');
    q.push_back(c);
  }
  q.push_back('"');
  return q;
}

std::string PostgresDialect::QuoteIdent(std::string_view name) const {
  return pg_internal::QuoteIdent(name);
}

std::string PostgresDialect::Placeholder(size_t index) const {
  return fmt::format("${}", index + 1);
}

std::string PostgresDialect::TextByteOrder(const std::string& expr) const {
  return expr + " COLLATE \"C\"";
}

std::string PostgresDialect::NotHolding(const ScanSpec& /*spec*/, const ColumnExpr& c,
                                        const std::string& placeholder) const {
  return Column(c) + " IS DISTINCT FROM " + placeholder;
}

std::string PostgresDialect::InValues(const ScanSpec& /*spec*/, const ColumnExpr& c,
                                      const std::vector<std::string>& placeholders) const {
  std::string s = Column(c) + " IN (";
  for (size_t i = 0; i < placeholders.size(); ++i) s += (i ? ", " : "") + placeholders[i];
  return s + ")";
}

MergeKeys PostgresDialect::Merge(const ScanSpec& spec, size_t l) const {
  // A child row is matched to its parent rows by the database: it is read
  // joined to the parent table on the nest's `=` (whatever the collation:
  // nondeterministic ICU collations, char(n) padding, citext...) and
  // carries the parent's values, NULL when no parent row matches. The
  // parent rows carry their own values. Both sides are then the same
  // column's values, ordered as CompareValues orders them: text-like values
  // by their text as unsigned bytes (COLLATE "C"), others natively. Links
  // whose values compare alike in widen and in the database (by_value, or
  // text whose `=` compares bytes) use the child's own values, without the
  // join.
  const MergeLink& m = spec.merge[l];
  const bool carry = m.child && !m.by_value && !(bytes_equal_ && bytes_equal_(spec, m));
  const std::string alias = QuoteIdent(fmt::format("widen_m{}", l));
  // The peer's columns are renamed in a derived table, so that they cannot
  // make a name in the `where` text ambiguous.
  auto carried = [&](size_t i) { return QuoteIdent(fmt::format("widen_k{}_{}", l, i)); };
  MergeKeys out;
  if (carry) {
    std::string peer = "SELECT ";
    for (size_t i = 0; i < m.on.size(); ++i) {
      peer += (i ? ", " : "") + QuoteIdent(m.on[i].second) + " AS " + carried(i);
    }
    peer += m.peer_query.empty() ? " FROM " + QuoteIdent(m.peer_table)
                                 : " FROM (" + m.peer_query + ") AS widen_q";
    out.join = " LEFT JOIN (" + peer + ") AS " + alias + " ON ";
    for (size_t i = 0; i < m.on.size(); ++i) {
      if (i) out.join += " AND ";
      out.join += alias + "." + carried(i) + " = " + Column(m.on[i].first);
    }
  }
  for (size_t i = 0; i < m.on.size(); ++i) {
    const ColumnExpr& c = m.on[i].first;
    const std::string value = carry ? alias + "." + carried(i) : Column(c);
    const bool text = c.is_text && !m.by_value;
    out.select.push_back(text ? "(" + value + ")::text" : value);
    OrderTerm t;
    t.expr = text ? TextByteOrder(out.select.back()) : value;
    if (carry) {
      t.suffix = " NULLS FIRST";
      t.value = out.select.back();  // the parent's value, carried
    } else {
      t.column = c;
    }
    out.order.push_back(std::move(t));
  }
  return out;
}

namespace {

// A date's text with PostgreSQL's era: years before 1 as "YYYY-MM-DD BC".
void AppendPgDate(std::string* out, int64_t days, bool* bc) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  *bc = y < 1;
  if (*bc) y = 1 - y;  // astronomical year 0 is 1 BC
  out->append(fmt::format("{:04}-{:02}-{:02}", y, m, d));
}

void AppendClock(std::string* out, int64_t micros) {
  const int64_t secs = micros / 1000000, frac = micros % 1000000;
  out->append(fmt::format("{:02}:{:02}:{:02}", secs / 3600, (secs / 60) % 60, secs % 60));
  if (frac != 0) out->append(fmt::format(".{:06}", frac));
}

}  // namespace

std::string PgParamText(const Value& v) {
  switch (v.type()) {
    case ValueType::kBytes: {
      static constexpr char kHex[] = "0123456789abcdef";
      std::string out = "\\x";
      for (unsigned char c : v.as_bytes()) {
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
      }
      return out;
    }
    case ValueType::kDate:
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz: {
      if (v.as_int() == std::numeric_limits<int64_t>::max()) return "infinity";
      if (v.as_int() == std::numeric_limits<int64_t>::min()) return "-infinity";
      std::string out;
      bool bc = false;
      if (v.type() == ValueType::kDate) {
        AppendPgDate(&out, v.as_int(), &bc);
      } else {
        const int64_t day_us = 86400000000LL;
        int64_t day = v.as_int() / day_us;
        if (v.as_int() % day_us < 0) --day;
        AppendPgDate(&out, day, &bc);
        out.push_back(' ');
        AppendClock(&out, v.as_int() - day * day_us);
        if (v.type() == ValueType::kTimestampTz) out.append("+00");
      }
      if (bc) out.append(" BC");
      return out;
    }
    case ValueType::kTime: {
      std::string out;
      if (v.as_int() < 0) {
        out.push_back('-');
        AppendClock(&out, -v.as_int());
      } else {
        AppendClock(&out, v.as_int());
      }
      return out;
    }
    default:
      return v.ToText();  // booleans, numbers, decimal and text-like values
  }
}

}  // namespace widen::pg_internal
