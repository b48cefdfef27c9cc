#include <fmt/format.h>

#include <algorithm>

#include "extract/mysql_dialect_internal.h"

namespace widen::mysql_internal {

namespace {

bool IsTextKind(ColumnKind k) { return k == ColumnKind::kText || k == ColumnKind::kJson; }

// A text column in a collation: itself when it has that collation (an index
// on it can order it), else converted.
std::string InCollation(const std::string& col, const ColumnMeta& m, const std::string& charset,
                        const std::string& collation) {
  if (m.collation == collation && m.charset == charset && !m.enum_or_set) return col;
  return "CONVERT(" + col + " USING " + charset + ") COLLATE " + collation;
}

}  // namespace

LinkSide SideOf(const ScanSpec& spec, const ColumnExpr& c) {
  LinkSide side;
  side.column = c.column;
  if (c.alias == spec.alias) {
    side.table = spec.table;
    side.query = spec.query;
    return side;
  }
  side.table = c.alias;
  for (const auto& j : spec.joins) {
    if (j.alias == c.alias) side.table = j.table;
  }
  return side;
}

const ColumnMeta* MySqlCatalog::Find(const std::string& table, const std::string& column) const {
  auto t = tables.find(table);
  if (t == tables.end()) return nullptr;
  auto c = t->second.find(column);
  return c == t->second.end() ? nullptr : &c->second;
}

const ColumnMeta* MySqlCatalog::Meta(const LinkSide& side) const {
  if (side.query.empty()) return Find(side.table, side.column);
  auto q = queries.find(side.query);
  if (q == queries.end()) return nullptr;
  auto c = q->second.find(side.column);
  return c == q->second.end() ? nullptr : &c->second;
}

const ColumnMeta* MySqlCatalog::Of(const ScanSpec& spec, const ColumnExpr& c) const {
  return Meta(SideOf(spec, c));
}

std::string MySqlParamForm(const ColumnMeta& m) {
  switch (m.kind) {
    case ColumnKind::kText:
    case ColumnKind::kJson:
    case ColumnKind::kBytes:
      return "CAST({} AS BINARY)";
    case ColumnKind::kDecimal:
      return fmt::format("CAST({{}} AS DECIMAL({}, {}))", std::max(m.precision, 1), m.scale);
    case ColumnKind::kDate:
      return "CAST({} AS DATE)";
    case ColumnKind::kDateTime:
    case ColumnKind::kTimestamp:
      return "CAST({} AS DATETIME(6))";
    case ColumnKind::kTime:
      return "CAST({} AS TIME(6))";
    default:
      return "{}";
  }
}

MySqlBinding MySqlBindingFor(const Value& v) {
  MySqlBinding b;
  switch (v.type()) {
    case ValueType::kInt:
    case ValueType::kBool:
      b.setter = MySqlBinding::Setter::kInt64;
      b.i = v.as_int();
      break;
    case ValueType::kUInt:
      b.setter = MySqlBinding::Setter::kUInt64;
      b.u = v.as_uint();
      break;
    case ValueType::kFloat:
      b.setter = MySqlBinding::Setter::kDouble;
      b.d = v.as_double();
      break;
    case ValueType::kDate:
    case ValueType::kTime:
    case ValueType::kTimestamp:
      b.s = v.ToText();
      break;
    case ValueType::kTimestampTz:  // as the session (UTC) prints it
      b.s = Value::Temporal(ValueType::kTimestamp, v.as_int()).ToText();
      break;
    default:
      b.s = std::string(v.as_bytes());
      break;
  }
  return b;
}

std::string MySqlDialect::QuoteIdent(std::string_view name) const {
  return mysql_internal::QuoteIdent(name);
}

std::string MySqlDialect::Placeholder(size_t index) const {
  return fmt::format("@widen_p{}", index + 1);
}

std::string MySqlDialect::TextByteOrder(const std::string& expr) const {
  return "CAST(CONVERT(" + expr + " USING utf8mb4) AS BINARY)";
}

ColumnMeta MySqlDialect::MetaOf(const ScanSpec& spec, const ColumnExpr& c, bool* known) const {
  const ColumnMeta* m = catalog_.Of(spec, c);
  *known = m != nullptr;
  if (m != nullptr) return *m;
  ColumnMeta unknown;
  unknown.kind = c.is_text ? ColumnKind::kText : ColumnKind::kOther;
  return unknown;
}

std::string MySqlDialect::SelectColumn(const ScanSpec& spec, const ColumnExpr& c) const {
  bool known = false;
  // FLOAT: the text protocol prints 6 significant digits; the float widened
  // to a double prints exactly (shortest round-trip form).
  if (MetaOf(spec, c, &known).kind == ColumnKind::kFloat) {
    return "CAST(" + Column(c) + " AS DOUBLE)";
  }
  return Column(c);
}

OrderTerm MySqlDialect::OrderBy(const ScanSpec& spec, const ColumnExpr& c) const {
  bool known = false;
  const ColumnMeta m = MetaOf(spec, c, &known);
  OrderTerm t;
  t.expr = IsTextKind(m.kind) ? TextByteOrder(Column(c)) : Column(c);
  t.param = MySqlParamForm(m);
  t.column = c;
  return t;
}

OrderTerm MySqlDialect::KeyOrder(const ScanSpec& spec, const ColumnExpr& c) const {
  bool known = false;
  const ColumnMeta m = MetaOf(spec, c, &known);
  // Columns taken from the mapping (a table without a key) may hold values
  // equal under the collation but not as bytes ('k' and 'k ' under PAD
  // SPACE): ordered and compared as bytes, as widen compares them, so that
  // each row is read once. A key the database declares unique is ordered in
  // its own collation, which its index serves.
  if (!IsTextKind(m.kind) || m.collation.empty() || spec.unique_key_from_mapping) {
    return OrderBy(spec, c);
  }
  // The column's own collation, as its index orders it.
  OrderTerm t;
  t.expr = InCollation(Column(c), m, m.charset, m.collation);
  t.param = "CONVERT({} USING " + m.charset + ") COLLATE " + m.collation;
  t.column = c;
  return t;
}

// A parameter compared with column `m` as the server's `=` compares the
// column with its own values: text in its character set and collation,
// decimals as decimals.
static std::string MySqlEqualValue(const ColumnMeta& m, const std::string& placeholder) {
  if (m.kind == ColumnKind::kText && !m.charset.empty() && !m.collation.empty()) {
    return "CONVERT(" + placeholder + " USING " + m.charset + ") COLLATE " + m.collation;
  }
  if (m.kind == ColumnKind::kDecimal) return "CAST(" + placeholder + " AS DECIMAL(65, 30))";
  return placeholder;
}

std::string MySqlDialect::NotHolding(const ScanSpec& spec, const ColumnExpr& c,
                                     const std::string& placeholder) const {
  bool known = false;
  const ColumnMeta m = MetaOf(spec, c, &known);
  return "NOT (" + Column(c) + " <=> " + MySqlEqualValue(m, placeholder) + ")";
}

std::string MySqlDialect::InValues(const ScanSpec& spec, const ColumnExpr& c,
                                   const std::vector<std::string>& placeholders) const {
  bool known = false;
  const ColumnMeta m = MetaOf(spec, c, &known);
  std::string s = Column(c) + " IN (";
  for (size_t i = 0; i < placeholders.size(); ++i) {
    s += (i ? ", " : "") + MySqlEqualValue(m, placeholders[i]);
  }
  return s + ")";
}

MergeForm MySqlDialect::MergeKey(const ScanSpec& spec, size_t l, size_t i) const {
  // For text, the column's weight string in the collation the server's `=`
  // uses for the pair, padded with the collation's pad weights (PAD SPACE: a
  // space's; NO PAD: zeros, below every character) to the longest value of
  // either side, so that byte order and equality are the collation's; the
  // rows are ordered by the column in that collation (an index on it serves
  // the order when it is the column's own). A decimal compared with a float
  // compares as a double, as the server does. Other types compare by value
  // (the column itself), or by their text (types read as text, such as
  // UUID). Each key is paged on its column's value.
  const MergeLink& link = spec.merge[l];
  const auto& [c, peer_column] = link.on[i];
  bool known = false;
  const ColumnMeta m = MetaOf(spec, c, &known);
  const LinkSide self = SideOf(spec, c);
  const LinkSide peer{link.peer_table, link.peer_query, peer_column};
  const LinkSide& parent = link.child ? peer : self;
  const LinkSide& child = link.child ? self : peer;
  const ColumnMeta* pm = catalog_.Meta(peer);
  MergeForm f;
  f.select = Column(c);
  f.kind = m.kind;
  f.order.expr = Column(c);
  f.order.param = MySqlParamForm(m);
  f.order.column = c;
  if (m.kind == ColumnKind::kText) {
    auto it = catalog_.text_compare.find(parent.Id() + '\x1e' + child.Id());
    if (it == catalog_.text_compare.end()) {
      f.error = fmt::format("no collation found for {} = {}", parent.Id(), child.Id());
    } else if (!it->second.error.empty()) {
      f.error = it->second.error;
    } else {
      const TextCompare& tc = it->second;
      f.order.expr = InCollation(Column(c), m, tc.charset, tc.collation);
      f.order.param = "CONVERT({} USING " + tc.charset + ") COLLATE " + tc.collation;
      f.select = fmt::format("WEIGHT_STRING({} AS CHAR({}))", f.order.expr, tc.pad_chars);
      f.kind = ColumnKind::kBytes;
    }
  } else if (m.kind == ColumnKind::kDecimal && pm != nullptr &&
             (pm->kind == ColumnKind::kFloat || pm->kind == ColumnKind::kDouble)) {
    f.select = "CAST(" + Column(c) + " AS DOUBLE)";
    f.kind = ColumnKind::kDouble;
  } else if (m.kind == ColumnKind::kFloat) {
    f.select = "CAST(" + Column(c) + " AS DOUBLE)";
  } else if (m.kind == ColumnKind::kOther) {
    f.select = f.order.expr = TextByteOrder(Column(c));
    f.order.param = "CAST({} AS BINARY)";
    f.kind = ColumnKind::kBytes;
  }
  return f;
}

MergeKeys MySqlDialect::Merge(const ScanSpec& spec, size_t l) const {
  MergeKeys out;
  for (size_t i = 0; i < spec.merge[l].on.size(); ++i) {
    MergeForm f = MergeKey(spec, l, i);
    out.select.push_back(std::move(f.select));
    out.order.push_back(std::move(f.order));
  }
  return out;
}

}  // namespace widen::mysql_internal
