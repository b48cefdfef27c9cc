#include "transform/plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/suggest.h"

namespace widen {

namespace {

// Collects the columns one query selects, without duplicates.
class ColumnSet {
 public:
  size_t Add(const std::string& alias, const std::string& column) {
    for (size_t i = 0; i < cols_.size(); ++i) {
      if (cols_[i].alias == alias && cols_[i].column == column) return i;
    }
    cols_.push_back(ColumnExpr{alias, column, false});
    return cols_.size() - 1;
  }
  std::vector<ColumnExpr> Take() { return std::move(cols_); }

 private:
  std::vector<ColumnExpr> cols_;
};

class Planner {
 public:
  Planner(const Mapping& m, const SourceSchema& s) : mapping_(m), schema_(s) {}

  Result<Plan> Make() {
    Plan plan;
    for (const auto& t : mapping_.tables) {
      TablePlan tp;
      WIDEN_RETURN_IF_ERROR(PlanTable(t, &tp));
      plan.tables.push_back(std::move(tp));
    }
    return plan;
  }

 private:
  Result<const SourceTable*> FindTable(const SourceLocation& loc, const std::string& target,
                                       const std::string& name) {
    if (const SourceTable* t = schema_.FindTable(name)) return t;
    std::vector<std::string> names;
    for (const auto& t : schema_.tables) names.push_back(t.name);
    return Status::NotFound(fmt::format("{}: table '{}': source table '{}' does not exist{}",
                                        loc.ToString(), target, name, DidYouMean(name, names)));
  }

  Result<const SourceColumn*> FindColumn(const SourceLocation& loc, const std::string& target,
                                         const SourceTable& table, const std::string& column) {
    if (const SourceColumn* c = table.FindColumn(column)) return c;
    std::vector<std::string> names;
    for (const auto& c : table.columns) names.push_back(c.name);
    return Status::NotFound(fmt::format("{}: table '{}': source table '{}' has no column '{}'{}",
                                        loc.ToString(), target, table.name, column,
                                        DidYouMean(column, names)));
  }

  // The source table behind an alias of target table `t`.
  const SourceTable* TableOfAlias(const std::string& alias) {
    auto it = std::find_if(aliases_.begin(), aliases_.end(),
                           [&](const auto& p) { return p.first == alias; });
    return it == aliases_.end() ? nullptr : it->second;
  }

  Result<KeyPartPlan> PlanKeyPart(const KeyPart& kp, const TableMapping& t,
                                  const std::string& alias, const SourceTable& table,
                                  ColumnSet* cols) {
    KeyPartPlan p;
    p.width = kp.width;
    if (kp.is_literal) {
      p.is_literal = true;
      p.literal = kp.literal;
      p.name = "'" + kp.literal + "'";
      return p;
    }
    const SourceTable* st = &table;
    std::string a = alias;
    if (!kp.column.alias.empty() && kp.column.alias != alias) {
      st = TableOfAlias(kp.column.alias);
      a = kp.column.alias;
    }
    WIDEN_ASSIGN_OR_RETURN(const SourceColumn* c,
                           FindColumn(kp.loc, t.name, *st, kp.column.column));
    if (kp.width > 0 && !IsIntegerType(c->type)) {
      return Status::InvalidArgument(fmt::format(
          "{}: table '{}': key part '{}' has a width, which pads integers, but source column "
          "{}.{} is {} ({})",
          kp.loc.ToString(), t.name, kp.column.ToString(), st->name, c->name,
          ValueTypeName(c->type), c->source_type));
    }
    p.name = kp.column.column;
    p.type = c->type;
    p.index = cols->Add(a, c->name);
    return p;
  }

  Status PlanTable(const TableMapping& t, TablePlan* tp) {
    tp->mapping = &t;
    aliases_.clear();
    SplitTableName(t.name, &tp->descriptor.name_space, &tp->descriptor.table);
    for (const auto& f : t.families) {
      FamilyDescriptor fd;
      fd.name = f.name;
      fd.versions = f.versions;
      tp->descriptor.families.push_back(fd);
    }
    if (Status s = tp->descriptor.Validate(); !s.ok()) {
      return Status::InvalidArgument(fmt::format("{}: {}", t.loc.ToString(), s.message()));
    }
    WIDEN_ASSIGN_OR_RETURN(const SourceTable* driving, FindTable(t.loc, t.name, t.from));
    aliases_.emplace_back(t.from, driving);
    ColumnSet cols;
    tp->scan.table = driving->name;
    tp->scan.alias = t.from;
    tp->scan.where = t.where;

    for (const auto& j : t.joins) {
      WIDEN_ASSIGN_OR_RETURN(const SourceTable* jt, FindTable(j.loc, t.name, j.table));
      ScanJoin sj;
      sj.table = jt->name;
      sj.alias = j.alias;
      for (const auto& [left, right] : j.on) {
        const std::string la = left.alias.empty() ? t.from : left.alias;
        const SourceTable* lt = TableOfAlias(la);
        if (lt == nullptr) {
          return Status::InvalidArgument(
              fmt::format("{}: table '{}': join '{}' refers to '{}' before it is joined",
                          j.loc.ToString(), t.name, j.alias, la));
        }
        WIDEN_ASSIGN_OR_RETURN(const SourceColumn* lc, FindColumn(j.loc, t.name, *lt, left.column));
        WIDEN_ASSIGN_OR_RETURN(const SourceColumn* rc, FindColumn(j.loc, t.name, *jt, right));
        (void)lc;
        (void)rc;
        sj.on.emplace_back(ColumnExpr{la, left.column, false}, right);
      }
      aliases_.emplace_back(j.alias, jt);
      tp->scan.joins.push_back(std::move(sj));
    }

    // Row identity for messages, and a total order for paging sources: the
    // driving table's primary key.
    for (const auto& pk : driving->primary_key) {
      tp->identity.emplace_back(pk, cols.Add(t.from, pk));
      const SourceColumn* pc = driving->FindColumn(pk);
      tp->scan.unique_key.push_back(ColumnExpr{t.from, pk, pc != nullptr && IsTextual(pc->type)});
    }

    std::vector<KeyPartPlan> parts;
    for (const auto& kp : t.key.parts) {
      WIDEN_ASSIGN_OR_RETURN(KeyPartPlan p, PlanKeyPart(kp, t, t.from, *driving, &cols));
      parts.push_back(std::move(p));
    }
    tp->key = KeyCodec(std::move(parts), t.key.separator);

    for (const auto& c : t.columns) {
      const std::string alias = c.column.alias.empty() ? t.from : c.column.alias;
      const SourceTable* st = TableOfAlias(alias);
      WIDEN_ASSIGN_OR_RETURN(const SourceColumn* sc,
                             FindColumn(c.loc, t.name, *st, c.column.column));
      CellPlan cp;
      cp.index = cols.Add(alias, sc->name);
      cp.family = c.family;
      cp.qualifier = c.qualifier;
      cp.on_null = c.on_null;
      cp.column = alias + "." + sc->name;
      tp->cells.push_back(std::move(cp));
    }

    // Nests: every nest merges on the same parent columns, which order the driving rows.
    const NestSpec* first = nullptr;
    for (const auto& n : t.nests) {
      NestPlan np;
      WIDEN_RETURN_IF_ERROR(PlanNest(n, t, *driving, &cols, &np));
      if (first == nullptr) {
        first = &n;
        for (size_t i = 0; i < n.on.size(); ++i) {
          const SourceColumn* pc = driving->FindColumn(n.on[i].first);
          tp->scan.order_by.push_back(ColumnExpr{t.from, pc->name, IsTextual(pc->type)});
        }
      } else {
        bool same = first->on.size() == n.on.size();
        for (size_t i = 0; same && i < n.on.size(); ++i) same = first->on[i].first == n.on[i].first;
        if (!same) {
          return Status::InvalidArgument(fmt::format(
              "{}: table '{}': every nest of a table must join on the same parent columns as the "
              "first nest ({}); this one differs",
              n.loc.ToString(), t.name, first->loc.ToString()));
        }
      }
      tp->nests.push_back(std::move(np));
    }
    tp->scan.columns = cols.Take();
    return Status::OK();
  }

  static bool IsTextual(ValueType t) {
    return t == ValueType::kText || t == ValueType::kBytes || t == ValueType::kJson ||
           t == ValueType::kOther;
  }

  Status PlanNest(const NestSpec& n, const TableMapping& t, const SourceTable& driving,
                  ColumnSet* parent_cols, NestPlan* np) {
    np->spec = &n;
    np->family = n.family;
    np->prefix = n.prefix;
    WIDEN_ASSIGN_OR_RETURN(const SourceTable* child, FindTable(n.loc, t.name, n.table));
    ColumnSet cols;
    np->scan.table = child->name;
    np->scan.alias = child->name;
    np->scan.where = n.where;
    std::vector<std::string> used;
    for (const auto& [pcol, ccol] : n.on) {
      WIDEN_ASSIGN_OR_RETURN(const SourceColumn* pc, FindColumn(n.loc, t.name, driving, pcol));
      WIDEN_ASSIGN_OR_RETURN(const SourceColumn* cc, FindColumn(n.loc, t.name, *child, ccol));
      if (IsTextual(pc->type) != IsTextual(cc->type)) {
        return Status::InvalidArgument(fmt::format(
            "{}: table '{}': nest on {}.{} ({}) = {}.{} ({}) compares text with a non-text type",
            n.loc.ToString(), t.name, driving.name, pc->name, pc->source_type, child->name,
            cc->name, cc->source_type));
      }
      np->parent_key.push_back(parent_cols->Add(t.from, pc->name));
      np->child_key.push_back(cols.Add(child->name, cc->name));
      np->scan.not_null.push_back(ColumnExpr{child->name, cc->name, false});
      np->scan.order_by.push_back(ColumnExpr{child->name, cc->name, IsTextual(cc->type)});
      used.push_back(cc->name);
    }
    std::vector<KeyPartPlan> parts;
    for (const auto& kp : n.id) {
      WIDEN_ASSIGN_OR_RETURN(KeyPartPlan p, PlanKeyPart(kp, t, child->name, *child, &cols));
      if (!p.is_literal) used.push_back(p.name);
      parts.push_back(std::move(p));
    }
    np->qualifier = KeyCodec(std::move(parts), n.id_separator);
    for (const auto& pk : child->primary_key) {
      const SourceColumn* pc = child->FindColumn(pk);
      np->scan.unique_key.push_back(
          ColumnExpr{child->name, pk, pc != nullptr && IsTextual(pc->type)});
    }
    if (n.value_columns.empty()) {
      for (const auto& c : child->columns) {
        if (std::find(used.begin(), used.end(), c.name) != used.end()) continue;
        np->value_columns.emplace_back(c.name, cols.Add(child->name, c.name));
      }
    } else {
      for (const auto& name : n.value_columns) {
        WIDEN_ASSIGN_OR_RETURN(const SourceColumn* c, FindColumn(n.loc, t.name, *child, name));
        np->value_columns.emplace_back(c->name, cols.Add(child->name, c->name));
      }
    }
    np->scan.columns = cols.Take();
    return Status::OK();
  }

  const Mapping& mapping_;
  const SourceSchema& schema_;
  std::vector<std::pair<std::string, const SourceTable*>> aliases_;
};

}  // namespace

Result<Plan> Plan::Make(const Mapping& mapping, const SourceSchema& schema) {
  return Planner(mapping, schema).Make();
}

}  // namespace widen
