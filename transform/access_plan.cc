#include "transform/access_plan.h"

#include <algorithm>

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

// Whether key part `p` sorts descending by its value: a binary `desc` part,
// or a `reverse` timestamp (Long.MAX_VALUE - ms); both together ascend.
bool Descends(const KeyPartPlan& p, KeyForm form) {
  return (form == KeyForm::kBinary && p.desc) != p.reverse;
}

// Why key part `p` cannot give an order by its value, or "".
std::string OrderProblem(const TablePlan& tp, const KeyPartPlan& p, const SourceSchema& schema) {
  const bool text = tp.key.form() == KeyForm::kText;
  const SourceColumn* c = KeyPartColumn(tp, p, schema);
  if (text && !p.reverse && p.width == 0 &&
      (p.value_type == ValueType::kInt || p.value_type == ValueType::kUInt)) {
    return fmt::format(
        "'{}' is an integer without a width in a text key: it sorts as text "
        "(10 before 9)",
        p.name);
  }
  if (c == nullptr) return "";
  return KeyOrderProblem(p, *c, text);
}

// The key that would serve `a` on `tp`: the `by` columns, then the `order`
// columns with their directions, then the driving table's primary key
// columns not yet in it; as a mapping's `key:` would say it. The text form
// (integers zero-padded, a descending timestamp `reverse`) unless a part
// needs the binary form: a text column beside others (it could hold the
// separator), a type whose text does not sort like its values in the
// order, a descending part that is no timestamp.
std::string SuggestedKey(const TablePlan& tp, const AccessPattern& a, const SourceSchema& schema) {
  const std::string& from = tp.mapping->from;
  const SourceTable* st = tp.scan.table.empty() ? nullptr : schema.FindTable(tp.scan.table);
  auto type_of = [&](const std::string& name) -> const SourceColumn* {
    return st == nullptr || name.find('.') != std::string::npos ? nullptr : st->FindColumn(name);
  };
  std::vector<std::pair<std::string, bool>> cols;  // name, desc
  auto add = [&](const std::string& name, bool desc) {
    for (const auto& c : cols) {
      if (c.first == name) return;
    }
    cols.emplace_back(name, desc);
  };
  for (const AccessColumn& c : a.by) add(Normal(c.column, from), false);
  for (const AccessColumn& c : a.order) add(Normal(c.column, from), c.desc);
  if (st != nullptr) {
    for (const std::string& pk : st->primary_key) add(pk, false);
  }
  auto is_time = [](const SourceColumn* c) {
    return c != nullptr && (c->type == ValueType::kTimestamp || c->type == ValueType::kTimestampTz);
  };
  bool binary = false;
  for (const auto& [name, desc] : cols) {
    const SourceColumn* c = type_of(name);
    if (c == nullptr) continue;
    const bool ordered = std::any_of(a.order.begin(), a.order.end(), [&](const AccessColumn& o) {
      return Normal(o.column, from) == name;
    });
    if (c->type == ValueType::kText && cols.size() > 1) binary = true;
    if (desc && !is_time(c)) binary = true;
    if (ordered && !desc &&
        (c->type == ValueType::kDecimal || c->type == ValueType::kFloat ||
         c->type == ValueType::kTimestampTz || c->type == ValueType::kTime ||
         (c->type == ValueType::kOther && !TextSortsLikeValues(*c)))) {
      binary = true;
    }
  }
  std::vector<std::string> parts;
  for (const auto& [name, desc] : cols) {
    const SourceColumn* c = type_of(name);
    std::vector<std::string> fields;
    if (desc) fields.push_back(is_time(c) ? "reverse: true" : "desc: true");
    const auto range = c == nullptr ? std::nullopt : DeclaredIntegerRange(*c);
    if (!desc && !binary && range && IsIntegerType(c->type)) {
      fields.push_back(fmt::format("width: {}", std::to_string(range->max).size()));
    }
    // A joined column or a nullable one needs a NULL rule (a row without
    // one is then left out of the table).
    if (name.find('.') != std::string::npos || (c != nullptr && c->nullable)) {
      fields.push_back("on_null: reject");
    }
    parts.push_back(
        fields.empty() ? name : fmt::format("{{column: {}, {}}}", name, fmt::join(fields, ", ")));
  }
  return fmt::format("key: {{{}parts: [{}]}}", binary ? "form: binary, " : "",
                     fmt::join(parts, ", "));
}

AccessProof NotServed(AccessProof proof, const TablePlan& tp, const AccessPattern& a,
                      const SourceSchema& schema, std::string problem) {
  proof.kind = AccessKind::kNotServed;
  proof.problem = std::move(problem);
  proof.how = "not served: it would take a full scan of the table";
  std::string by_name;
  std::vector<std::string> nullable;
  const SourceTable* st = tp.scan.table.empty() ? nullptr : schema.FindTable(tp.scan.table);
  for (const AccessColumn& c : a.by) {
    by_name += "_" + c.column.column;
    const SourceColumn* col =
        st == nullptr || !c.column.alias.empty() ? nullptr : st->FindColumn(c.column.column);
    if (col != nullptr && col->nullable) nullable.push_back(c.column.column + " IS NOT NULL");
  }
  proof.fix = fmt::format(
      "a table keyed by {} serves it: change this table's key, or add a table with that key "
      "(duplication: {{name: {}_by{}, from: {}, ...}} with the columns the read needs) and "
      "declare the pattern there{}",
      SuggestedKey(tp, a, schema), tp.mapping->name, by_name.empty() ? "_order" : by_name,
      tp.mapping->from,
      nullable.empty() ? ""
                       : fmt::format(" (rows with a NULL there have no place in it: give that "
                                     "table where: {})",
                                     fmt::join(nullable, " AND ")));
  return proof;
}

}  // namespace

const NameTable<AccessKind>& AccessKindNames() { return kAccessKindTable; }

AccessProof ProveAccess(const TablePlan& tp, const AccessPattern& a, const SourceSchema& schema) {
  AccessProof proof;
  proof.pattern = &a;
  proof.declared_on = &tp;
  proof.served_by = &tp;
  const std::string& from = tp.mapping->from;
  const auto parts = tp.key.parts();
  const auto& spec = tp.mapping->key.parts;
  const KeyForm form = tp.key.form();
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
      return NotServed(
          proof, tp, a, schema,
          fmt::format("'{}' is not a part of the row key ({})", by[i], tp.key.Anatomy()));
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
                      b, at + 1, parts.size(), k + 1, parts[k].name, b));
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
                                 missing));
  }
  const bool salted = tp.key.salt().size > 0 && hashed_beyond(tp.key.salt(), &missing);
  if (k == parts.size()) {
    proof.kind = AccessKind::kGet;
    proof.how = by.empty() ? "one Get: the key has no column part"
                           : fmt::format("one Get: ({}) is the whole row key", fmt::join(by, ", "));
    return proof;
  }
  // The order: each `order` column not fixed by `by` must be the next key
  // part, sorting the way asked.
  std::vector<std::string> order_text;
  size_t m = k;
  for (const AccessColumn& o : a.order) {
    const std::string name = Normal(o.column, from);
    if (std::find(by.begin(), by.end(), name) != by.end()) continue;  // one value: any order
    while (m < parts.size() && parts[m].is_literal) ++m;
    if (m >= parts.size() || m >= spec.size() || Normal(spec[m].column, from) != name) {
      const std::string next = m < parts.size() ? fmt::format("'{}'", parts[m].name) : "none";
      return NotServed(proof, tp, a, schema,
                       fmt::format("the rows are wanted ordered by '{}', but after the given parts "
                                   "the key's next part is {}: a scan returns them in key order",
                                   name, next));
    }
    const KeyPartPlan& p = parts[m];
    if (const std::string why = OrderProblem(tp, p, schema); !why.empty()) {
      return NotServed(proof, tp, a, schema,
                       fmt::format("the rows are wanted ordered by '{}', whose key part does not "
                                   "sort like its values ({})",
                                   name, why));
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
                                         : "")));
    }
    std::string how = fmt::format("{} {}", name, o.desc ? "descending" : "ascending");
    if (p.reverse) {
      how += " (a reverse part)";
    } else if (p.desc) {
      how += " (a desc part)";
    } else if (p.type == KeyType::kString && p.value_type == ValueType::kText) {
      how += " (as bytes: SQL's ORDER BY in a binary collation)";
    }
    order_text.push_back(how);
    ++m;
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

std::vector<AccessProof> ProveAccessPatterns(const std::vector<const TablePlan*>& tables,
                                             const SourceSchema& schema) {
  std::vector<AccessProof> out;
  for (const TablePlan* tp : tables) {
    for (const AccessPattern& a : tp->mapping->access) {
      AccessProof proof = ProveAccess(*tp, a, schema);
      if (proof.kind == AccessKind::kNotServed && !tp->scan.table.empty()) {
        for (const TablePlan* other : tables) {
          if (other == tp || other->scan.table != tp->scan.table) continue;
          // The pattern in the other table's words: its joins of the same tables.
          AccessPattern translated = a;
          bool ok = true;
          auto translate = [&](AccessColumn& c) {
            if (c.column.alias.empty() || c.column.alias == tp->mapping->from) return;
            std::string joined;
            for (const JoinSpec& j : tp->mapping->joins) {
              if (j.alias == c.column.alias) joined = j.table;
            }
            std::string alias;
            for (const JoinSpec& j : other->mapping->joins) {
              if (j.table == joined && alias.empty()) alias = j.alias;
            }
            if (alias.empty()) ok = false;
            c.column.alias = alias;
          };
          for (AccessColumn& c : translated.by) translate(c);
          for (AccessColumn& c : translated.order) translate(c);
          if (!ok) continue;
          AccessProof there = ProveAccess(*other, translated, schema);
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
