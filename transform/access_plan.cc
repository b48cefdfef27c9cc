#include "transform/access_plan.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "transform/key_anatomy.h"

namespace widen {

namespace {

constexpr EnumName<AccessKind> kAccessKindEntries[] = {{AccessKind::kGet, "get"},
                                                       {AccessKind::kScan, "scan"},
                                                       {AccessKind::kBucketScan, "bucket_scan"},
                                                       {AccessKind::kNotServed, "not_served"}};
constexpr NameTable<AccessKind> kAccessKindTable{kAccessKindEntries};

// A column reference as the table names it: "column" for the driving
// table's (also when written `from.column`), "alias.column" for a join's.
std::string Normal(const ColumnRef& ref, const std::string& from) {
  if (ref.alias.empty() || ref.alias == from) return ref.column;
  return ref.alias + "." + ref.column;
}

// `s` as a YAML scalar in a flow map: plain when YAML reads it back as the
// same text, else double-quoted.
std::string Y(const std::string& s) {
  bool plain = !s.empty() &&
               (std::isalpha(static_cast<unsigned char>(s.front())) != 0 || s.front() == '_') &&
               s.back() != ' ';
  for (char c : s) {
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' ||
                      c == ' ' || c == '=' || c == '<' || c == '>');
  }
  std::string lower = s;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* w : {"true", "false", "yes", "no", "on", "off", "null", "y", "n"}) {
    plain = plain && lower != w;
  }
  if (plain) return s;
  std::string out = "\"";
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7F) {
      out += fmt::format("\\x{:02X}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Whether key part `p` sorts descending by its value: a binary `desc` part,
// or a `reverse` timestamp (Long.MAX_VALUE - ms); both together ascend.
bool Descends(const KeyPartPlan& p, KeyForm form) {
  return (form == KeyForm::kBinary && p.desc) != p.reverse;
}

// Why key part `m` of `tp` cannot give an order by its value, or "": its
// bytes do not sort like its values, or (text form) another part follows
// it and its text has no fixed width.
std::string OrderProblem(const TablePlan& tp, size_t m, const SourceSchema& schema) {
  const KeyPartPlan& p = tp.key.parts()[m];
  const bool text = tp.key.form() == KeyForm::kText;
  const SourceColumn* c = KeyPartColumn(tp, p, schema);
  if (text && !p.reverse && p.width == 0 &&
      (p.value_type == ValueType::kInt || p.value_type == ValueType::kUInt)) {
    return fmt::format(
        "'{}' is an integer without a width in a text key: it sorts as text "
        "(10 before 9)",
        p.name);
  }
  if (c != nullptr) {
    if (std::string why = KeyOrderProblem(p, *c, text); !why.empty()) return why;
  }
  if (text && m + 1 < tp.key.parts().size()) return TextWidthProblem(p, tp.key.separator());
  return "";
}

// The name of each key part as a pattern names it ("c.region", "id").
std::vector<std::string> PartNames(const TablePlan& tp) {
  std::vector<std::string> out;
  const auto& spec = tp.mapping->key.parts;
  for (size_t i = 0; i < spec.size(); ++i) {
    out.push_back(spec[i].is_literal ? "'" + spec[i].literal + "'"
                                     : Normal(spec[i].column, tp.mapping->from));
  }
  return out;
}

// The source column a pattern's column names in `tp` (a driving-table
// column, or a join's), or nullptr (a free-form query's, or unknown);
// *joined tells a join's (which a LEFT JOIN can make NULL).
const SourceColumn* PatternColumn(const TablePlan& tp, const ColumnRef& ref,
                                  const SourceSchema& schema, bool* joined) {
  const std::string& from = tp.mapping->from;
  *joined = !ref.alias.empty() && ref.alias != from;
  std::string table = tp.scan.table;
  if (*joined) {
    table.clear();
    for (const JoinSpec& j : tp.mapping->joins) {
      if (j.alias == ref.alias) table = j.table;
    }
  }
  const SourceTable* st = table.empty() ? nullptr : schema.FindTable(table);
  return st == nullptr ? nullptr : st->FindColumn(ref.column);
}

// What alias `alias` of `t` joins, in words that do not depend on alias
// names: "table(.column=ref_column,...)", an `on` column of an earlier join
// written with that join's signature; "" for the driving table.
std::string JoinSignature(const TableMapping& t, const std::string& alias, int depth = 0) {
  if (alias.empty() || alias == t.from) return "";
  if (depth > 32) return "?";
  for (const JoinSpec& j : t.joins) {
    if (j.alias != alias) continue;
    std::vector<std::string> on;
    for (const auto& [left, right] : j.on) {
      on.push_back(
          fmt::format("{}.{}={}", JoinSignature(t, left.alias, depth + 1), left.column, right));
    }
    std::sort(on.begin(), on.end());
    return fmt::format("{}({})", j.table, fmt::join(on, ","));
  }
  return "?";
}

// The conjuncts of a SQL condition: split at the ANDs outside quotes and
// parentheses, each trimmed, its white space runs made one space, and
// parentheses around the whole removed. "" gives none.
std::vector<std::string> Conjuncts(const std::string& where) {
  std::vector<std::string> out;
  auto clean = [](std::string s) {
    std::string t;
    for (char c : s) {
      const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
      if (space && (t.empty() || t.back() == ' ')) continue;
      t += space ? ' ' : c;
    }
    while (!t.empty() && t.back() == ' ') t.pop_back();
    // Outer parentheses that enclose the whole conjunct.
    while (t.size() >= 2 && t.front() == '(' && t.back() == ')') {
      int depth = 0;
      bool whole = true;
      for (size_t i = 0; i + 1 < t.size() && whole; ++i) {
        depth += t[i] == '(' ? 1 : t[i] == ')' ? -1 : 0;
        if (depth == 0) whole = false;
      }
      if (!whole) break;
      t = t.substr(1, t.size() - 2);
      while (!t.empty() && t.front() == ' ') t.erase(0, 1);
      while (!t.empty() && t.back() == ' ') t.pop_back();
    }
    return t;
  };
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < where.size(); ++i) {
    const char c = where[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"' || c == '`') {
      quote = c;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (depth == 0 && i + 5 <= where.size() && i > 0 &&
               std::isspace(static_cast<unsigned char>(where[i - 1])) &&
               (where[i] == 'a' || where[i] == 'A') &&
               (where[i + 1] == 'n' || where[i + 1] == 'N') &&
               (where[i + 2] == 'd' || where[i + 2] == 'D') &&
               std::isspace(static_cast<unsigned char>(where[i + 3]))) {
      out.push_back(clean(where.substr(start, i - start)));
      start = i + 3;
    }
  }
  out.push_back(clean(where.substr(start)));
  std::vector<std::string> kept;
  for (auto& c : out) {
    if (!c.empty()) kept.push_back(std::move(c));
  }
  return kept;
}

// The column of a conjunct "column IS NOT NULL" (its quotes removed), or "".
std::string NotNullColumn(const std::string& conjunct) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < conjunct.size()) {
    const size_t j = conjunct.find(' ', i);
    words.push_back(conjunct.substr(i, j == std::string::npos ? std::string::npos : j - i));
    i = j == std::string::npos ? conjunct.size() : j + 1;
  }
  if (words.size() != 4) return "";
  auto is = [&](size_t k, const char* w) {
    std::string a = words[k];
    for (char& c : a) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return a == w;
  };
  if (!is(1, "IS") || !is(2, "NOT") || !is(3, "NULL")) return "";
  std::string col = words[0];
  if (col.size() >= 2 && (col.front() == '"' || col.front() == '`') && col.back() == col.front()) {
    col = col.substr(1, col.size() - 2);
  }
  return col;
}

// The conjuncts of `where` that filter rows a pattern with `by` columns
// could read: those but "c IS NOT NULL" of a `by` column c (a row with a
// NULL there never equals a given value), sorted.
std::vector<std::string> Filters(const std::string& where, const std::vector<std::string>& by) {
  std::vector<std::string> out;
  for (const std::string& c : Conjuncts(where)) {
    const std::string col = NotNullColumn(c);
    if (!col.empty() && std::find(by.begin(), by.end(), col) != by.end()) continue;
    out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Why a driving row of `tp` can give no row ("" when each gives one):
// every cell it writes can be left out (a NULL under on_null: omit, the
// default; a joined column is NULL when no row matches), and a row whose
// cells are all left out, with no nested row, has no cell — HBase keeps
// no row without one. "" too when a column's nullability is unknown (a
// free-form query's).
std::string EmptyRowProblem(const TablePlan& tp, const SourceSchema& schema) {
  const TableMapping& t = *tp.mapping;
  std::vector<std::string> nullable;
  for (const ColumnSpec& c : t.columns) {
    if (c.on_null != NullPolicy::kOmit) return "";
    bool joined = false;
    const SourceColumn* sc = PatternColumn(tp, c.column, schema, &joined);
    if (!joined && sc == nullptr) return "";
    if (!joined && !sc->nullable) return "";
    nullable.push_back(c.column.ToString());
  }
  return fmt::format(
      "every cell a row writes can be left out ({}{}): a row whose values are NULL{} gets no "
      "cell, and HBase keeps no row without one, so the read misses it",
      nullable.empty() ? "it maps no column"
                       : fmt::format("{} can be NULL", fmt::join(nullable, ", ")),
      t.nests.empty() ? "" : "; nested rows are cells only when there are some",
      t.nests.empty() ? "" : " and that has no nested row");
}

// The names a suggested table may not take: the mapping's tables, and the
// names already suggested for other keys (name -> key).
struct Names {
  std::set<std::string> tables;
  std::map<std::string, std::string> suggested;
};

// A name for a new table keyed by `key` in `tp`'s namespace, after its
// source table and the pattern's columns: not a table's of the mapping,
// nor one suggested for another key; recorded in *names.
std::string DuplicateName(const TablePlan& tp, const AccessPattern& a, const std::string& key,
                          Names* names) {
  auto word = [](const std::string& s) {
    std::string out;
    for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
    return out;
  };
  std::string base = tp.descriptor.name_space.empty() || tp.descriptor.name_space == "default"
                         ? ""
                         : tp.descriptor.name_space + ":";
  base += word(tp.mapping->from);
  std::vector<std::string> by, order;
  for (const AccessColumn& c : a.by) by.push_back(word(c.column.ToString()));
  for (const AccessColumn& c : a.order) order.push_back(word(c.column.ToString()));
  if (!by.empty()) {
    base += fmt::format("_by_{}", fmt::join(by, "_"));
  } else if (!order.empty()) {
    base += fmt::format("_ordered_by_{}", fmt::join(order, "_"));
  } else {
    base += "_scan";
  }
  std::string name = base;
  for (int i = 2; names->tables.count(name) > 0 ||
                  (names->suggested.count(name) > 0 && names->suggested[name] != key);
       ++i) {
    name = base + std::to_string(i);
  }
  names->suggested[name] = key;
  return name;
}

// The key that would serve `a` on `tp`: the `by` columns, then the `order`
// columns with their directions, then the columns that keep a row's key
// unique (the driving table's primary key; a free-form query's, the
// current key's columns); as a mapping's `key:` would say it. *where gets
// the `where` such a table needs ("" = none). The text form (integers
// zero-padded, a descending timestamp `reverse`) unless a part needs the
// binary form: a text column beside others (it could hold the separator),
// an ordered part whose text does not sort like its values or (followed by
// others) has no fixed width, a descending part that is no timestamp, a
// NULL that must keep its row (a nullable `order` column, a joined `by`
// column: on_null: marker).
std::string SuggestedKey(const TablePlan& tp, const AccessPattern& a, const SourceSchema& schema,
                         std::string* where) {
  const std::string& from = tp.mapping->from;
  struct Col {
    std::string name;  // as the pattern names it
    ColumnRef ref;
    bool desc = false, ordered = false, by = false;
    const SourceColumn* c = nullptr;  // nullptr: unknown
    bool joined = false;
    const KeyPart* spec = nullptr;  // when taken from the current key
  };
  std::vector<Col> cols;
  auto add = [&](const ColumnRef& ref, bool desc, bool ordered, bool by, const KeyPart* spec) {
    const std::string name = Normal(ref, from);
    for (auto& c : cols) {
      if (c.name != name) continue;
      if (spec != nullptr) c.spec = spec;  // a part of the current key too
      return;
    }
    Col c;
    c.name = name;
    c.ref = ref;
    c.desc = desc;
    c.ordered = ordered;
    c.by = by;
    c.spec = spec;
    c.c = PatternColumn(tp, ref, schema, &c.joined);
    cols.push_back(c);
  };
  for (const AccessColumn& c : a.by) add(c.column, false, false, true, nullptr);
  for (const AccessColumn& c : a.order) add(c.column, c.desc, true, false, nullptr);
  const SourceTable* st = tp.scan.table.empty() ? nullptr : schema.FindTable(tp.scan.table);
  if (st != nullptr && !st->primary_key.empty()) {
    for (const std::string& pk : st->primary_key)
      add(ColumnRef{"", pk}, false, false, false, nullptr);
  } else {
    for (const KeyPart& kp : tp.mapping->key.parts) {
      if (!kp.is_literal) add(kp.column, false, false, false, &kp);
    }
  }
  auto is_time = [](const SourceColumn* c) {
    return c != nullptr && (c->type == ValueType::kTimestamp || c->type == ValueType::kTimestampTz);
  };
  // A free-form query's columns count as nullable (the planner says so).
  const bool query = tp.scan.table.empty();
  auto nullable = [&](const Col& c) {
    return c.joined || query || (c.c != nullptr && c.c->nullable);
  };
  bool binary = false;
  for (size_t i = 0; i < cols.size(); ++i) {
    const Col& col = cols[i];
    const SourceColumn* c = col.c;
    if (col.spec == nullptr && nullable(col) && (col.ordered || col.joined || query)) {
      binary = true;  // on_null: marker
    }
    if (col.desc && !is_time(c)) binary = true;
    if (c == nullptr) continue;
    const bool textual =
        c->type == ValueType::kText || c->type == ValueType::kBytes || c->type == ValueType::kJson;
    if (textual && cols.size() > 1) binary = true;
    if (col.ordered && !col.desc &&
        (c->type == ValueType::kDecimal || c->type == ValueType::kFloat ||
         c->type == ValueType::kTimestampTz || c->type == ValueType::kTime ||
         ((c->type == ValueType::kOther || c->type == ValueType::kJson) &&
          !TextSortsLikeValues(*c)) ||
         c->is_enum)) {
      binary = true;
    }
    if (col.ordered && !col.desc && i + 1 < cols.size()) {
      KeyPartPlan p;
      p.name = c->name;
      p.value_type = c->type;
      p.source_type = c->storage_type();
      p.width = IsIntegerType(c->type) ? 1 : 0;  // integers get a width below
      if (!TextWidthProblem(p, "|").empty()) binary = true;
    }
  }
  std::vector<std::string> parts, not_null;
  for (const Col& col : cols) {
    const SourceColumn* c = col.c;
    std::vector<std::string> fields;
    if (col.desc) fields.push_back(is_time(c) ? "reverse: true" : "desc: true");
    const auto range = c == nullptr ? std::nullopt : DeclaredIntegerRange(*c);
    if (!col.desc && !binary && range && IsIntegerType(c->type)) {
      fields.push_back(fmt::format("width: {}", std::to_string(range->max).size()));
    }
    if (binary && !col.desc && c != nullptr) {
      // Microseconds: a binary timestamp keeps milliseconds; its text
      // (escaped and terminated) keeps them all, in order.
      if (c->type == ValueType::kTimestamp && FractionDigits(c->storage_type()) > 3) {
        fields.push_back("type: string");
      } else if ((c->type == ValueType::kOther || c->type == ValueType::kJson) &&
                 !TextSortsLikeValues(*c)) {
        fields.push_back("type: string");
      }
    }
    if (col.spec != nullptr) {
      // A part of the current key (a free-form query's): as it is written there.
      if (col.spec->width > 0 && !binary)
        fields.push_back(fmt::format("width: {}", col.spec->width));
      if (col.spec->on_null_given) {
        fields.push_back(col.spec->on_null == KeyNullRule::kMarker ? "on_null: marker"
                                                                   : "on_null: reject");
      }
    } else if (nullable(col)) {
      if (col.by && !col.joined && !query) {
        // A row with a NULL there never equals a given value: leave it out.
        fields.push_back("on_null: reject");
        not_null.push_back(col.ref.column + " IS NOT NULL");
      } else {
        fields.push_back("on_null: marker");  // its rows keep their place: NULL sorts first
      }
    }
    const std::string name = Y(col.name);
    parts.push_back(
        fields.empty() ? name : fmt::format("{{column: {}, {}}}", name, fmt::join(fields, ", ")));
  }
  *where = "";
  if (!not_null.empty()) {
    const std::string own = tp.mapping->where;
    *where =
        fmt::format("{}{}", own.empty() ? "" : "(" + own + ") AND ", fmt::join(not_null, " AND "));
  } else {
    *where = tp.mapping->where;
  }
  return fmt::format("key: {{{}parts: [{}]}}", binary ? "form: binary, " : "",
                     fmt::join(parts, ", "));
}

AccessProof NotServed(AccessProof proof, const TablePlan& tp, const AccessPattern& a,
                      const SourceSchema& schema, std::string problem, Names* names,
                      std::string fix = "") {
  proof.kind = AccessKind::kNotServed;
  proof.problem = std::move(problem);
  proof.how = "not served: it would take a full scan of the table";
  if (!fix.empty()) {
    proof.fix = std::move(fix);
    return proof;
  }
  std::string where;
  const std::string key = SuggestedKey(tp, a, schema, &where);
  proof.fix = fmt::format(
      "a table keyed by {} serves it: change this table's key, or add a table with that key "
      "(duplication: {{name: {}, from: {}{}, ...}} with {}the columns the read needs) and "
      "declare the pattern there",
      key, DuplicateName(tp, a, key, names), Y(tp.mapping->from),
      where.empty() ? "" : ", where: " + Y(where),
      tp.mapping->joins.empty() ? "" : "this table's joins and ");
  return proof;
}

// Whether the columns in `cols` hold the primary key or a unique key of
// NOT NULL columns of `t`: no two of its rows have the same values there.
bool HoldsUniqueKey(const SourceTable* t, const std::set<std::string>& cols) {
  if (t == nullptr) return false;
  auto held = [&](const std::vector<std::string>& key) {
    return !key.empty() && std::all_of(key.begin(), key.end(),
                                       [&](const std::string& c) { return cols.count(c) > 0; });
  };
  if (held(t->primary_key)) return true;
  for (const auto& u : t->unique_keys) {
    const bool not_null = std::all_of(u.begin(), u.end(), [&](const std::string& c) {
      const SourceColumn* col = t->FindColumn(c);
      return col != nullptr && !col->nullable;
    });
    if (not_null && held(u)) return true;
  }
  return false;
}

AccessProof Prove(const TablePlan& tp, const AccessPattern& a, const SourceSchema& schema,
                  Names* names) {
  AccessProof proof;
  proof.pattern = &a;
  proof.declared_on = &tp;
  proof.served_by = &tp;
  const std::string& from = tp.mapping->from;
  const auto parts = tp.key.parts();
  const auto& spec = tp.mapping->key.parts;
  const KeyForm form = tp.key.form();
  const bool text = form == KeyForm::kText;
  // The key part each column of the table is, by its normal name.
  auto part_of = [&](const std::string& name) -> int {
    for (size_t i = 0; i < parts.size() && i < spec.size(); ++i) {
      if (!spec[i].is_literal && Normal(spec[i].column, from) == name) return static_cast<int>(i);
    }
    return -1;
  };
  std::vector<std::string> by;
  for (const AccessColumn& c : a.by) by.push_back(Normal(c.column, from));
  for (size_t i = 0; i < by.size(); ++i) {
    const int at = part_of(by[i]);
    if (at < 0) {
      return NotServed(proof, tp, a, schema,
                       fmt::format("'{}' is not a part of the row key, whose parts are {} ({})",
                                   by[i], fmt::join(PartNames(tp), ", "), tp.key.Anatomy()),
                       names);
    }
    proof.by_indexes.push_back(parts[static_cast<size_t>(at)].index);
  }
  // The leading parts the `by` values fix.
  size_t k = 0;
  while (k < parts.size() && k < spec.size()) {
    if (!parts[k].is_literal &&
        std::find(by.begin(), by.end(), Normal(spec[k].column, from)) == by.end()) {
      break;
    }
    ++k;
  }
  proof.leading_parts = k;
  for (const std::string& b : by) {
    const size_t at = static_cast<size_t>(part_of(b));
    if (at >= k) {
      return NotServed(
          proof, tp, a, schema,
          fmt::format("'{}' is key part {} of {}, but part {} ('{}') before it is not among the "
                      "'by' columns: rows with one '{}' are spread over the whole key range",
                      b, at + 1, parts.size(), k + 1, parts[k].name, b),
          names);
    }
  }
  auto hashed_beyond = [&](const KeyHashPlan& h, std::string* name) {
    for (size_t i : h.parts) {
      if (i >= k) {
        *name = parts[i].name;
        return true;
      }
    }
    return false;
  };
  std::string missing;
  if (tp.key.hash_prefix().size > 0 && hashed_beyond(tp.key.hash_prefix(), &missing)) {
    return NotServed(proof, tp, a, schema,
                     fmt::format("the key's hash prefix hashes '{}', which the 'by' columns do "
                                 "not give: the rows are spread over the whole key range",
                                 missing),
                     names);
  }
  if (const std::string empty = EmptyRowProblem(tp, schema); !empty.empty()) {
    std::string keep;
    for (const KeyPart& kp : spec) {
      if (!kp.is_literal && keep.empty()) keep = kp.column.ToString();
    }
    return NotServed(
        proof, tp, a, schema, empty, names,
        fmt::format("keep a column that is never NULL as a cell (a key column, e.g. {{column: "
                    "{}, to: \"{}:{}\"}}), or give a column on_null: empty",
                    keep.empty() ? "id" : keep,
                    tp.mapping->families.empty() ? "d" : tp.mapping->families.front().name,
                    keep.empty() ? "id" : keep.substr(keep.find('.') + 1)));
  }
  const bool salted = tp.key.salt().size > 0 && hashed_beyond(tp.key.salt(), &missing);
  if (k == parts.size()) {
    proof.kind = AccessKind::kGet;
    proof.how = by.empty() ? "one Get: the key has no column part"
                           : fmt::format("one Get: ({}) is the whole row key", fmt::join(by, ", "));
    return proof;
  }
  // The order: each `order` column not fixed by `by` must be the next key
  // part, sorting the way asked — until the parts so far tell every row
  // apart (the whole key, or a unique key of the driving table): no two
  // rows tie there, so later columns cannot change the order.
  const SourceTable* driving = tp.scan.table.empty() ? nullptr : schema.FindTable(tp.scan.table);
  std::set<std::string> held;
  for (const AccessColumn& c : a.by) {
    if (c.column.alias.empty() || c.column.alias == from) held.insert(c.column.column);
  }
  std::vector<std::string> order_text;
  size_t m = k;
  bool distinct = HoldsUniqueKey(driving, held);
  for (const AccessColumn& o : a.order) {
    const std::string name = Normal(o.column, from);
    if (std::find(by.begin(), by.end(), name) != by.end()) continue;  // one value: any order
    while (m < parts.size() && parts[m].is_literal) ++m;
    if (m >= parts.size()) distinct = true;  // the whole key: one row per key
    if (distinct) {
      order_text.push_back(fmt::format("then {} (no two rows tie before it)", name));
      continue;
    }
    if (m >= spec.size() || Normal(spec[m].column, from) != name) {
      return NotServed(proof, tp, a, schema,
                       fmt::format("the rows are wanted ordered by '{}', but after the given parts "
                                   "the key's next part is '{}': a scan returns them in key order",
                                   name, parts[m].name),
                       names);
    }
    const KeyPartPlan& p = parts[m];
    if (const std::string why = OrderProblem(tp, m, schema); !why.empty()) {
      return NotServed(proof, tp, a, schema,
                       fmt::format("the rows are wanted ordered by '{}', whose key part does not "
                                   "sort like its values ({})",
                                   name, why),
                       names);
    }
    const bool descends = Descends(p, form);
    if (descends != o.desc) {
      return NotServed(
          proof, tp, a, schema,
          fmt::format("the rows are wanted ordered by '{}' {}, but its key part sorts {}{}", name,
                      o.desc ? "descending" : "ascending", descends ? "descending" : "ascending",
                      descends ? (p.reverse ? " (reverse: true)" : " (desc: true)")
                               : (o.desc ? " (give it desc: true in the binary form, or reverse: "
                                           "true for a timestamp)"
                                         : "")),
          names);
    }
    std::string how = fmt::format("{} {}", name, o.desc ? "descending" : "ascending");
    if (p.reverse) {
      how += " (a reverse part)";
    } else if (p.desc) {
      how += " (a desc part)";
    } else if (p.type == KeyType::kString && p.value_type == ValueType::kText) {
      how += " (as bytes: SQL's ORDER BY in a binary collation)";
    }
    if (p.null_marker) {
      // The marker 0x00 sorts before every value; desc inverts it.
      how += form == KeyForm::kBinary && p.desc ? ", NULLs last" : ", NULLs first";
    }
    const bool ms = p.reverse || (!text && p.type == KeyType::kTimestamp);
    const int digits = FractionDigits(p.source_type);
    if (ms && m + 1 < parts.size() &&
        (p.value_type == ValueType::kTimestamp || p.value_type == ValueType::kTimestampTz) &&
        (digits > 3 || digits < 0)) {
      how += fmt::format(
          " to the millisecond (the key keeps {}'s milliseconds: rows within one millisecond come "
          "in the order of the parts after it)",
          name);
    }
    order_text.push_back(how);
    if (o.column.alias.empty() || o.column.alias == from) held.insert(o.column.column);
    ++m;
    if (HoldsUniqueKey(driving, held)) distinct = true;
  }
  std::vector<std::string> fixed;
  for (size_t i = 0; i < k; ++i) {
    if (!parts[i].is_literal) fixed.push_back(parts[i].name);
  }
  const std::string prefix =
      fixed.empty() ? "the whole table" : fmt::format("the prefix ({})", fmt::join(fixed, ", "));
  const std::string order =
      order_text.empty() ? ""
                         : fmt::format("; rows come ordered by {}", fmt::join(order_text, ", "));
  if (salted) {
    proof.kind = AccessKind::kBucketScan;
    proof.buckets = tp.key.salt().size;
    proof.how = fmt::format(
        "{} prefix Scans of {}, one per salt bucket (the salt hashes '{}', which the 'by' "
        "columns do not give){}; merge the buckets by the key after the salt",
        proof.buckets, prefix, missing, order.empty() ? "" : order + " within each bucket");
    return proof;
  }
  proof.kind = AccessKind::kScan;
  proof.how = fmt::format("one prefix Scan of {}{}", prefix, order);
  return proof;
}

}  // namespace

const NameTable<AccessKind>& AccessKindNames() { return kAccessKindTable; }

AccessProof ProveAccess(const TablePlan& tp, const AccessPattern& a, const SourceSchema& schema) {
  Names names;
  names.tables.insert(tp.mapping->name);
  return Prove(tp, a, schema, &names);
}

std::vector<AccessProof> ProveAccessPatterns(const std::vector<const TablePlan*>& tables,
                                             const SourceSchema& schema) {
  Names names;
  for (const TablePlan* tp : tables) names.tables.insert(tp->mapping->name);
  std::vector<AccessProof> out;
  for (const TablePlan* tp : tables) {
    for (const AccessPattern& a : tp->mapping->access) {
      AccessProof proof = Prove(*tp, a, schema, &names);
      if (proof.kind == AccessKind::kNotServed && !tp->scan.table.empty()) {
        std::vector<std::string> by;
        for (const AccessColumn& c : a.by) {
          if (c.column.alias.empty() || c.column.alias == tp->mapping->from) {
            by.push_back(c.column.column);
          }
        }
        const std::vector<std::string> filters = Filters(tp->mapping->where, by);
        for (const TablePlan* other : tables) {
          if (other == tp || other->scan.table != tp->scan.table) continue;
          // The same rows: the same filters (but IS NOT NULL of a `by`
          // column, which no row the read finds fails).
          if (Filters(other->mapping->where, by) != filters) continue;
          // The pattern in the other table's words: its joins of the same
          // table on the same columns.
          AccessPattern translated = a;
          bool ok = true;
          auto translate = [&](AccessColumn& c) {
            if (c.column.alias.empty() || c.column.alias == tp->mapping->from) {
              c.column.alias.clear();
              return;
            }
            const std::string sig = JoinSignature(*tp->mapping, c.column.alias);
            std::string alias;
            for (const JoinSpec& j : other->mapping->joins) {
              if (alias.empty() && JoinSignature(*other->mapping, j.alias) == sig) alias = j.alias;
            }
            if (alias.empty()) ok = false;
            c.column.alias = alias;
          };
          for (AccessColumn& c : translated.by) translate(c);
          for (AccessColumn& c : translated.order) translate(c);
          if (!ok) continue;
          Names scratch = names;  // its fix is not kept
          AccessProof there = Prove(*other, translated, schema, &scratch);
          if (there.kind == AccessKind::kNotServed) continue;
          there.pattern = &a;
          there.declared_on = tp;
          there.how += fmt::format(" — in table {} (the same source rows keyed for this read)",
                                   other->mapping->name);
          proof = std::move(there);
          break;
        }
      }
      out.push_back(std::move(proof));
    }
  }
  return out;
}

Status AccessPrefixes(const AccessProof& proof, const Row& row,
                      std::vector<std::string>* prefixes) {
  if (proof.kind == AccessKind::kNotServed || proof.served_by == nullptr) {
    return Status::FailedPrecondition(
        fmt::format("access pattern '{}' is not served: {}",
                    proof.pattern == nullptr ? "" : proof.pattern->name, proof.problem));
  }
  return proof.served_by->key.EncodePrefixes(row, proof.leading_parts, prefixes);
}

}  // namespace widen
