// FakeSource: an in-memory Source for unit tests of the planner's consumers
// (preview, lint, split points). Tables are given as a schema and rows; Scan
// evaluates a ScanSpec the way a database would for the features the planner
// uses (LEFT JOINs on equality, NOT NULL filters, ORDER BY with CompareValues
// — the lead terms first, in their direction and NULL placement —
// merge keys: a database whose `=` is CompareValues, so the keys are the
// columns' own values); `where` and free-form queries are not supported.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "extract/source.h"
#include "extract/source_stats.h"

namespace widen::testing {

inline SourceColumn Col(std::string name, ValueType type, std::string source_type,
                        bool nullable = false) {
  SourceColumn c;
  c.name = std::move(name);
  c.type = type;
  c.source_type = std::move(source_type);
  c.nullable = nullable;
  return c;
}

class FakeSource : public Source, public SourceStats {
 public:
  void AddTable(SourceTable table, std::vector<std::vector<Value>> rows) {
    data_[table.name] = std::move(rows);
    schema_.tables.push_back(std::move(table));
  }
  SourceTable* table(const std::string& name) {
    for (auto& t : schema_.tables) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
  /// Makes stats() answer as a source without aggregate queries does
  /// (UnsupportedStats).
  bool unsupported_aggregates = false;
  int scans = 0;

  Result<SourceSchema> Introspect() override { return schema_; }
  std::string SelectSql(const ScanSpec& spec) const override {
    return "SELECT ... FROM " + (spec.table.empty() ? std::string("(query)") : spec.table);
  }
  std::string dialect() const override { return "fake"; }
  SourceStats& stats() override {
    if (unsupported_aggregates) return unsupported_;
    return *this;
  }

  Result<std::unique_ptr<RowStream>> Scan(const ScanSpec& spec) override {
    ++scans;
    WIDEN_ASSIGN_OR_RETURN(auto contexts, Rows(spec));
    // Sort by the lead terms, the merge keys and order_by, then project the
    // columns and append the merge keys.
    struct Order {
      bool desc = false;
      bool nulls_first = true;
    };
    std::vector<Order> order;
    std::vector<std::pair<std::vector<Value>, Row>> sorted;
    for (const auto& ctx : contexts) {
      std::pair<std::vector<Value>, Row> e;
      order.clear();
      for (const auto& c : spec.columns) e.second.values.push_back(Get(ctx, c));
      for (const auto& l : spec.lead) {
        e.first.push_back(Get(ctx, l.column));
        order.push_back(Order{l.desc, l.nulls_first});
      }
      for (const auto& link : spec.merge) {
        for (const auto& on : link.on) {
          e.first.push_back(Get(ctx, on.first));
          e.second.values.push_back(e.first.back());
          order.push_back(Order{});
        }
      }
      for (const auto& o : spec.order_by) {
        e.first.push_back(Get(ctx, o));
        order.push_back(Order{});
      }
      sorted.push_back(std::move(e));
    }
    std::stable_sort(sorted.begin(), sorted.end(), [&order](const auto& a, const auto& b) {
      for (size_t i = 0; i < a.first.size(); ++i) {
        const Value& x = a.first[i];
        const Value& y = b.first[i];
        if (x.is_null() || y.is_null()) {
          if (x.is_null() == y.is_null()) continue;
          return x.is_null() == order[i].nulls_first;
        }
        const int c = CompareValues(x, y);
        if (c != 0) return order[i].desc ? c > 0 : c < 0;
      }
      return false;
    });
    auto s = std::make_unique<Stream>();
    for (const auto& c : spec.columns) {
      s->schema_.push_back(ColumnInfo{c.column, ValueType::kText, "", true});
    }
    for (auto& e : sorted) s->rows_.push_back(std::move(e.second));
    return std::unique_ptr<RowStream>(std::move(s));
  }

  Result<std::vector<GroupCount>> LargestGroups(const ScanSpec& spec,
                                                const std::vector<ColumnExpr>& group_by,
                                                int limit) override {
    WIDEN_ASSIGN_OR_RETURN(auto contexts, Rows(spec));
    std::vector<GroupCount> groups;
    for (const auto& ctx : contexts) {
      Row key;
      for (const auto& g : group_by) key.values.push_back(Get(ctx, g));
      auto it = std::find_if(groups.begin(), groups.end(), [&](const GroupCount& gc) {
        for (size_t i = 0; i < key.size(); ++i) {
          if (CompareValues(gc.key[i], key[i]) != 0) return false;
        }
        return true;
      });
      if (it == groups.end()) {
        groups.push_back(GroupCount{key, 1});
      } else {
        ++it->rows;
      }
    }
    std::stable_sort(groups.begin(), groups.end(),
                     [](const GroupCount& a, const GroupCount& b) { return a.rows > b.rows; });
    if (groups.size() > static_cast<size_t>(limit)) groups.resize(limit);
    return groups;
  }

  Result<ColumnSummary> SummarizeColumn(const ScanSpec& spec, const ColumnExpr& column) override {
    WIDEN_ASSIGN_OR_RETURN(auto contexts, Rows(spec));
    ColumnSummary s;
    for (const auto& ctx : contexts) {
      ++s.rows;
      const Value v = Get(ctx, column);
      if (v.is_null()) continue;
      ++s.non_null;
      if (s.min.is_null() || CompareValues(v, s.min) < 0) s.min = v;
      if (s.max.is_null() || CompareValues(v, s.max) > 0) s.max = v;
    }
    return s;
  }

 private:
  // alias -> (table, row index or -1 for a LEFT JOIN without match)
  using Context = std::map<std::string, std::pair<const SourceTable*, long>>;

  class Stream : public RowStream {
   public:
    bool Valid() const override { return pos_ < rows_.size(); }
    void Next() override { ++pos_; }
    const Row& row() const override { return rows_[pos_]; }
    const RowSchema& schema() const override { return schema_; }
    Status status() const override { return Status::OK(); }
    RowSchema schema_;
    std::vector<Row> rows_;
    size_t pos_ = 0;
  };

  Value Get(const Context& ctx, const ColumnExpr& c) const {
    auto it = ctx.find(c.alias);
    if (it == ctx.end()) return Value();
    const SourceTable* t = it->second.first;
    size_t col = 0;
    while (col < t->columns.size() && t->columns[col].name != c.column) ++col;
    if (col == t->columns.size()) return Value();
    if (it->second.second < 0) return Value::Null(t->columns[col].type);
    return data_.at(t->name)[it->second.second][col];
  }

  Result<std::vector<Context>> Rows(const ScanSpec& spec) const {
    if (!spec.query.empty() || !spec.where.empty()) {
      return Status::InvalidArgument("FakeSource: no queries or where");
    }
    const SourceTable* driving = schema_.FindTable(spec.table);
    if (driving == nullptr) return Status::NotFound("FakeSource: no table " + spec.table);
    std::vector<Context> out;
    const auto& rows = data_.at(driving->name);
    for (size_t r = 0; r < rows.size(); ++r) {
      Context ctx;
      ctx[spec.alias] = {driving, static_cast<long>(r)};
      for (const auto& j : spec.joins) {
        const SourceTable* jt = schema_.FindTable(j.table);
        long match = -1;
        const auto& jrows = data_.at(jt->name);
        for (size_t k = 0; k < jrows.size() && match < 0; ++k) {
          Context probe = ctx;
          probe[j.alias] = {jt, static_cast<long>(k)};
          bool eq = true;
          for (const auto& [left, right] : j.on) {
            const Value a = Get(probe, left);
            const Value b = Get(probe, ColumnExpr{j.alias, right, false});
            eq = eq && !a.is_null() && !b.is_null() && CompareValues(a, b) == 0;
          }
          if (eq) match = static_cast<long>(k);
        }
        ctx[j.alias] = {jt, match};
      }
      bool keep = true;
      for (const auto& c : spec.not_null) keep = keep && !Get(ctx, c).is_null();
      if (keep) out.push_back(std::move(ctx));
    }
    return out;
  }

  SourceSchema schema_;
  std::map<std::string, std::vector<std::vector<Value>>> data_;
  UnsupportedStats unsupported_{"fake"};
};

}  // namespace widen::testing
