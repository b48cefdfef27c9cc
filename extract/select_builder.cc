#include "extract/select_builder.h"

#include <fmt/format.h>

namespace widen {

namespace {

bool SameColumn(const ColumnExpr& a, const ColumnExpr& b) {
  return a.alias == b.alias && a.column == b.column;
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// Writes predicates, collecting the values of their placeholders.
class Predicates {
 public:
  Predicates(const SqlDialect& d, const ScanSpec& spec, std::vector<Value>* params)
      : d_(d), spec_(spec), params_(params) {}

  // `value` as a parameter compared with `term` ("{}" in term.param
  // replaced by the placeholder).
  std::string Param(const OrderTerm& term, const Value& value) {
    params_->push_back(value);
    std::string p = term.param;
    const std::string ph = d_.Placeholder(params_->size() - 1);
    const size_t at = p.find("{}");
    if (at != std::string::npos) p.replace(at, 2, ph);
    return p;
  }

  // ScanSpec::range: SQL comparisons (NULL is in no range) and with_null.
  std::string Range(const ScanRange& r) {
    const OrderTerm t = d_.OrderBy(spec_, r.column);
    std::vector<std::string> parts;
    if (r.lo) parts.push_back(t.expr + " >= " + Param(t, *r.lo));
    if (r.hi) parts.push_back(t.expr + " < " + Param(t, *r.hi));
    std::string p = parts.empty() ? std::string("TRUE") : Join(parts, " AND ");
    if (r.with_null) p = "(" + p + " OR " + d_.Column(r.column) + " IS NULL)";
    return "(" + p + ")";
  }

  // ScanSpec::any_of: the column IN the values, as the database's `=`
  // compares them (the column itself, in its collation).
  std::string AnyOf(const ScanValues& v) {
    std::vector<std::string> ph;
    ph.reserve(v.values.size());
    for (const Value& x : v.values) {
      params_->push_back(x);
      ph.push_back(d_.Placeholder(params_->size() - 1));
    }
    return d_.InValues(spec_, v.column, ph);
  }

  // The rows whose tuple of `terms` compares `op` with `values`, NULL
  // sorting before every value (see KeyBound).
  std::string Bound(const std::vector<OrderTerm>& terms, const std::vector<Value>& values,
                    BoundOp op) {
    const size_t n = terms.size();
    std::vector<std::string> ph(n);
    bool any_null = false, all_not_null = true;
    for (size_t i = 0; i < n; ++i) {
      if (values[i].is_null()) {
        any_null = true;
      } else {
        ph[i] = Param(terms[i], values[i]);
      }
      all_not_null = all_not_null && NotNull(terms[i]);
    }
    const char* cmp = op == BoundOp::kGreater ? " > " : op == BoundOp::kLess ? " < " : " >= ";
    // A row-value comparison is exact when no value is NULL: for > and >=
    // a NULL column makes the row compare NULL (left out) exactly where
    // NULL sorts first; for <, only when no column can be NULL.
    if (!any_null && (op != BoundOp::kLess || all_not_null)) {
      if (n == 1) return terms[0].expr + cmp + ph[0];
      if (d_.RowValueBounds()) {
        std::vector<std::string> l, r;
        for (size_t i = 0; i < n; ++i) {
          l.push_back(terms[i].expr);
          r.push_back(ph[i]);
        }
        return "(" + Join(l, ", ") + ")" + cmp + "(" + Join(r, ", ") + ")";
      }
    }
    // (t0 > v0) OR (t0 = v0 AND t1 > v1) OR ...; a NULL value turns "= v"
    // into IS NULL and "> v" into IS NOT NULL, and nothing is below NULL.
    std::vector<std::string> ors;
    for (size_t i = 0; i < n; ++i) {
      std::vector<std::string> and_terms;
      for (size_t j = 0; j < i; ++j) {
        and_terms.push_back(values[j].is_null() ? terms[j].expr + " IS NULL"
                                                : terms[j].expr + " = " + ph[j]);
      }
      const OrderTerm& t = terms[i];
      const bool last = i + 1 == n;
      if (op == BoundOp::kLess) {
        if (values[i].is_null()) continue;
        and_terms.push_back(NotNull(t)
                                ? t.expr + " < " + ph[i]
                                : "(" + t.expr + " < " + ph[i] + " OR " + t.expr + " IS NULL)");
      } else if (op == BoundOp::kGreater || !last) {
        and_terms.push_back(values[i].is_null() ? t.expr + " IS NOT NULL" : t.expr + " > " + ph[i]);
      } else if (!values[i].is_null()) {
        and_terms.push_back(t.expr + " >= " + ph[i]);
      }
      ors.push_back("(" + (and_terms.empty() ? std::string("TRUE") : Join(and_terms, " AND ")) +
                    ")");
    }
    if (ors.empty()) return "FALSE";
    std::string p = "(" + Join(ors, " OR ") + ")";
    if (op != BoundOp::kLess && !values[0].is_null()) {
      // Lets the server use an index range on the first term.
      p = terms[0].expr + " >= " + ph[0] + " AND " + p;
    }
    return p;
  }

  // ScanSpec::exclude: the rows of `e.alias` that count as absent left
  // out, NULL-safe, the value a parameter.
  std::string Exclusion(const ScanExclusion& e) {
    params_->push_back(e.value);
    return d_.NotHolding(spec_, ColumnExpr{e.alias, e.column, false},
                         d_.Placeholder(params_->size() - 1));
  }

  bool NotNull(const OrderTerm& t) const {
    if (t.column.alias.empty()) return false;
    for (const auto& c : spec_.not_null) {
      if (SameColumn(c, t.column)) return true;
    }
    return false;
  }

 private:
  const SqlDialect& d_;
  const ScanSpec& spec_;
  std::vector<Value>* params_;
};

}  // namespace

BuiltQuery SelectBuilder::Build(const ScanSpec& spec, const SelectOptions& options) const {
  const SqlDialect& d = dialect_;
  BuiltQuery q;
  const bool paged = !options.page_key.empty();
  const bool key_values = options.select_key_values || paged || options.after.has_value();
  for (const auto& c : spec.columns) {
    q.items.push_back(SelectItem{d.SelectColumn(spec, c), SelectItem::Role::kColumn, c});
  }
  std::vector<OrderTerm> order;
  auto add_term = [&](OrderTerm t) {
    for (const auto& e : order) {
      if (e.expr == t.expr && e.suffix == t.suffix) return;
    }
    order.push_back(std::move(t));
  };
  for (const LeadTerm& l : spec.lead) {
    OrderTerm t = d.OrderBy(spec, l.column);
    if (l.desc) t.suffix = " DESC";
    // Where the engine puts NULLs by itself (ascending: PostgreSQL last,
    // MySQL first; descending the other way), it is told otherwise.
    const bool engine_first = d.NullsFirst().empty() != l.desc;
    if (l.nullable && engine_first != l.nulls_first) {
      t.suffix += l.nulls_first ? " NULLS FIRST" : " NULLS LAST";
    }
    add_term(std::move(t));
  }
  std::vector<std::string> merge_joins;
  for (size_t l = 0; l < spec.merge.size(); ++l) {
    MergeKeys m = d.Merge(spec, l);
    if (!m.join.empty()) merge_joins.push_back(std::move(m.join));
    for (size_t i = 0; i < m.select.size(); ++i) {
      q.items.push_back(SelectItem{m.select[i], SelectItem::Role::kMergeKey, {}, l, i});
      add_term(std::move(m.order[i]));
    }
  }
  q.visible = q.items.size();
  for (const auto& c : spec.order_by) add_term(d.OrderBy(spec, c));
  for (const auto& c : options.page_key) add_term(d.KeyOrder(spec, c));

  Predicates preds(d, spec, &q.params);
  // With a bound or pages the order must put NULLs first, as bounds do
  // (leading terms say their own order).
  if (paged || options.after || spec.bound) {
    for (size_t i = spec.lead.size(); i < order.size(); ++i) {
      OrderTerm& t = order[i];
      if (t.suffix.empty() && !preds.NotNull(t)) t.suffix = d.NullsFirst();
    }
  }
  for (auto& t : order) {
    KeyTerm k{t, 0};
    if (key_values) {
      k.item = q.items.size();
      for (size_t i = 0; i < q.items.size(); ++i) {
        const SelectItem& it = q.items[i];
        if (it.role == SelectItem::Role::kMergeKey) continue;
        const bool same = t.column.alias.empty() ? it.column.alias.empty() && it.expr == t.value
                                                 : SameColumn(it.column, t.column);
        if (same) {
          k.item = i;
          break;
        }
      }
      if (k.item == q.items.size()) {
        // Hidden: read for paging only.
        q.items.push_back(
            SelectItem{t.column.alias.empty() ? t.value : d.SelectColumn(spec, t.column),
                       SelectItem::Role::kKeyValue, t.column});
      }
    }
    q.keys.push_back(std::move(k));
  }

  if (spec.query.empty()) {
    q.from = " FROM " + d.QuoteIdent(spec.table) + " AS " + d.QuoteIdent(spec.alias);
  } else {
    q.from = " FROM (" + spec.query + ") AS " + d.QuoteIdent(spec.alias);
  }
  for (const auto& j : spec.joins) {
    if (j.project.empty()) {
      q.from += " LEFT JOIN " + d.QuoteIdent(j.table) + " AS " + d.QuoteIdent(j.alias) + " ON ";
    } else {
      std::string inner;
      for (const auto& [column, name] : j.project) {
        inner += (inner.empty() ? "SELECT " : ", ") + d.QuoteIdent(j.alias) + "." +
                 d.QuoteIdent(column) + " AS " + d.QuoteIdent(name);
      }
      inner += " FROM " + d.QuoteIdent(j.table) + " AS " + d.QuoteIdent(j.alias);
      // A row that counts as absent is not there to be found.
      std::vector<std::string> absent;
      for (const auto& e : spec.exclude) {
        if (e.alias == j.alias) absent.push_back(preds.Exclusion(e));
      }
      if (!absent.empty()) inner += " WHERE " + Join(absent, " AND ");
      q.from += " LEFT JOIN (" + inner + ") AS " + d.QuoteIdent(j.alias) + " ON ";
    }
    for (size_t i = 0; i < j.on.size(); ++i) {
      if (i) q.from += " AND ";
      q.from += d.QuoteIdent(j.alias) + "." + d.QuoteIdent(j.on[i].second) + " = " +
                d.Column(j.on[i].first);
    }
    // A joined row that counts as absent is not found (its columns read NULL).
    if (j.project.empty()) {
      for (const auto& e : spec.exclude) {
        if (e.alias == j.alias) q.from += " AND " + preds.Exclusion(e);
      }
    }
  }
  for (const auto& j : merge_joins) q.from += j;

  std::vector<std::string> where;
  if (!spec.where.empty()) where.push_back("(" + spec.where + ")");
  for (const auto& c : spec.not_null) where.push_back(d.Column(c) + " IS NOT NULL");
  for (const auto& c : spec.is_null) where.push_back(d.Column(c) + " IS NULL");
  for (const auto& e : spec.exclude) {
    if (e.alias == spec.alias) where.push_back(preds.Exclusion(e));
  }
  if (spec.range) where.push_back(preds.Range(*spec.range));
  if (spec.any_of && !spec.any_of->values.empty()) where.push_back(preds.AnyOf(*spec.any_of));
  if (spec.bound && !spec.bound->columns.empty()) {
    std::vector<OrderTerm> terms;
    for (const auto& c : spec.bound->columns) terms.push_back(d.OrderBy(spec, c));
    where.push_back(preds.Bound(terms, spec.bound->values, spec.bound->op));
  }
  if (options.after && !q.keys.empty()) {
    std::vector<OrderTerm> terms;
    for (const auto& k : q.keys) terms.push_back(k.term);
    where.push_back(preds.Bound(terms, *options.after, BoundOp::kGreaterOrEqual));
  }
  if (!where.empty()) q.where = " WHERE " + Join(where, " AND ");

  q.sql = "SELECT ";
  for (size_t i = 0; i < q.items.size(); ++i) q.sql += (i ? ", " : "") + q.items[i].expr;
  q.sql += q.from + q.where;
  for (size_t i = 0; i < q.keys.size(); ++i) {
    q.sql += (i ? ", " : " ORDER BY ") + q.keys[i].term.expr + q.keys[i].term.suffix;
  }
  if (options.limit > 0) q.sql += fmt::format(" LIMIT {}", options.limit);
  return q;
}

}  // namespace widen
