// A small shop source (customers, orders, order lines) in a FakeSource, and
// helpers to plan mappings over it, for the preview, lint and split tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "mapping/mapping.h"
#include "tests/transform/fake_source.h"
#include "transform/plan.h"

namespace widen::testing {

inline Value I(int64_t v) { return Value::Int(v); }
inline Value T(const std::string& s) { return Value::Str(ValueType::kText, s); }
inline Value D(const std::string& s) { return Value::Str(ValueType::kDecimal, s); }
inline Value Ts(int64_t ms) { return Value::Temporal(ValueType::kTimestamp, ms * 1000); }
inline Value Null(ValueType t) { return Value::Null(t); }

// customer(customer_id PK, name, region NULL), service_order(order_id PK,
// customer_id, product_code varchar(10), amount numeric(10,2), ordered_at),
// order_line(line_id PK, order_id, sku, qty).
inline std::unique_ptr<FakeSource> ShopSource() {
  auto s = std::make_unique<FakeSource>();
  SourceTable customer;
  customer.name = "customer";
  customer.columns = {Col("customer_id", ValueType::kInt, "integer"),
                      Col("name", ValueType::kText, "text"),
                      Col("region", ValueType::kText, "character varying(20)", true)};
  customer.primary_key = {"customer_id"};
  customer.estimated_rows = 3;
  s->AddTable(customer, {{I(1), T("Ana"), T("south")},
                         {I(2), T("Bo"), Null(ValueType::kText)},
                         {I(3), T("Cy"), T("north")}});
  SourceTable order;
  order.name = "service_order";
  order.columns = {Col("order_id", ValueType::kInt, "integer"),
                   Col("customer_id", ValueType::kInt, "integer"),
                   Col("product_code", ValueType::kText, "character varying(10)"),
                   Col("amount", ValueType::kDecimal, "numeric(10,2)"),
                   Col("ordered_at", ValueType::kTimestamp, "timestamp without time zone")};
  order.primary_key = {"order_id"};
  order.estimated_rows = 6;
  const int64_t day = 86400000;
  s->AddTable(order, {{I(1), I(1), T("A100"), D("10.00"), Ts(1000 * day)},
                      {I(2), I(1), T("B200"), D("20.50"), Ts(1001 * day)},
                      {I(3), I(2), T("A100"), D("5.00"), Ts(1002 * day)},
                      {I(4), I(3), T("A100"), D("7.25"), Ts(1003 * day)},
                      {I(5), I(1), T("A100"), D("12.00"), Ts(1004 * day)},
                      {I(6), I(3), T("C300"), D("1.00"), Ts(1005 * day)}});
  SourceTable line;
  line.name = "order_line";
  line.columns = {Col("line_id", ValueType::kInt, "integer"),
                  Col("order_id", ValueType::kInt, "integer"), Col("sku", ValueType::kText, "text"),
                  Col("qty", ValueType::kInt, "integer")};
  line.primary_key = {"line_id"};
  s->AddTable(line, {{I(1), I(1), T("x"), I(1)},
                     {I(2), I(1), T("y"), I(2)},
                     {I(3), I(2), T("x"), I(1)},
                     {I(4), I(5), T("z"), I(4)}});
  return s;
}

/// A mapping from YAML text (tables only; source and file name are fixed).
inline Mapping ParseTables(const std::string& tables_yaml) {
  auto m =
      ParseMapping("source: postgresql://t@127.0.0.1:1/shop\ntables:\n" + tables_yaml, "m.yaml");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).ValueOrDie();
}

/// A mapping and its plan; the plan points into the mapping.
struct Planned {
  Mapping mapping;
  Plan plan;
};

inline std::unique_ptr<Planned> PlanTables(const std::string& tables_yaml, FakeSource* source) {
  auto p = std::make_unique<Planned>();
  p->mapping = ParseTables(tables_yaml);
  auto schema = source->Introspect();
  auto plan = Plan::Make(p->mapping, *schema, source);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  p->plan = std::move(plan).ValueOrDie();
  return p;
}

}  // namespace widen::testing
