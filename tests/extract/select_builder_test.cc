// SelectBuilder with the PostgreSQL dialect, no server: the SQL text and the
// bound parameters expected here are written from the dialect's rules
// (extract/postgres_dialect_internal.h) and PostgreSQL's syntax, not taken
// from the builder's output. The MySQL dialect: mysql_select_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "extract/postgres_dialect_internal.h"
#include "extract/select_builder.h"

namespace widen {
namespace {

using pg_internal::PgParamText;
using pg_internal::PostgresDialect;

ScanSpec Spec(const std::string& table, const std::vector<std::string>& columns) {
  ScanSpec s;
  s.table = table;
  s.alias = table;
  for (const auto& c : columns) s.columns.push_back(ColumnExpr{table, c, false});
  return s;
}

// Values compared with their type, NULL-ness and payload.
void ExpectParams(const std::vector<Value>& got, const std::vector<Value>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].type(), want[i].type()) << "param " << i;
    EXPECT_EQ(CompareValues(got[i], want[i]), 0)
        << "param " << i << ": " << got[i].DebugString() << " vs " << want[i].DebugString();
  }
}

TEST(PostgresSelectTest, QuotesHostileNamesAndWritesJoins) {
  PostgresDialect d;
  ScanSpec s;
  s.table = "Order Items \"q\" `b`";
  s.alias = "o";
  s.columns = {{"o", "select"}, {"g", "Name \"x\""}};
  s.joins.push_back(ScanJoin{"group", "g", {{ColumnExpr{"o", "Group`Id"}, "Id"}}});
  s.where = "o.\"select\" > 0";
  s.not_null = {{"o", "select"}};
  s.order_by = {{"o", "select"}, {"g", "Name \"x\"", true}};
  const BuiltQuery q = SelectBuilder(d).Build(s);
  EXPECT_EQ(q.sql,
            "SELECT \"o\".\"select\", \"g\".\"Name \"\"x\"\"\" FROM \"Order Items \"\"q\"\" `b`\" "
            "AS \"o\" LEFT JOIN \"group\" AS \"g\" ON \"g\".\"Id\" = \"o\".\"Group`Id\" WHERE "
            "(o.\"select\" > 0) AND \"o\".\"select\" IS NOT NULL ORDER BY \"o\".\"select\", "
            "\"g\".\"Name \"\"x\"\"\" COLLATE \"C\"");
  EXPECT_TRUE(q.params.empty());
  EXPECT_EQ(q.visible, 2u);
  EXPECT_EQ(q.from,
            " FROM \"Order Items \"\"q\"\" `b`\" AS \"o\" LEFT JOIN \"group\" AS \"g\" ON "
            "\"g\".\"Id\" = \"o\".\"Group`Id\"");
}

TEST(PostgresSelectTest, FreeFormQueryIsADerivedTable) {
  PostgresDialect d;
  ScanSpec s;
  s.query = "SELECT 1 AS a";
  s.alias = "q";
  s.columns = {{"q", "a"}};
  EXPECT_EQ(SelectBuilder(d).Build(s).sql, "SELECT \"q\".\"a\" FROM (SELECT 1 AS a) AS \"q\"");
}

TEST(PostgresSelectTest, ChildRowsCarryTheirParentsValuesAsMergeKeys) {
  // Not bytes_equal: the child is read joined to its parents on the link.
  PostgresDialect d([](const ScanSpec&, const MergeLink&) { return false; });
  ScanSpec s = Spec("kc", {"id", "code"});
  MergeLink m;
  m.peer_table = "k";
  m.on = {{ColumnExpr{"kc", "code", true}, "code"}, {ColumnExpr{"kc", "n"}, "n"}};
  m.child = true;
  s.merge.push_back(m);
  s.order_by = {{"kc", "id"}};
  const BuiltQuery q = SelectBuilder(d).Build(s);
  EXPECT_EQ(q.sql,
            "SELECT \"kc\".\"id\", \"kc\".\"code\", (\"widen_m0\".\"widen_k0_0\")::text, "
            "\"widen_m0\".\"widen_k0_1\" FROM \"kc\" AS \"kc\" LEFT JOIN (SELECT \"code\" AS "
            "\"widen_k0_0\", \"n\" AS \"widen_k0_1\" FROM \"k\") AS \"widen_m0\" ON "
            "\"widen_m0\".\"widen_k0_0\" = \"kc\".\"code\" AND \"widen_m0\".\"widen_k0_1\" = "
            "\"kc\".\"n\" ORDER BY (\"widen_m0\".\"widen_k0_0\")::text COLLATE \"C\" NULLS FIRST, "
            "\"widen_m0\".\"widen_k0_1\" NULLS FIRST, \"kc\".\"id\"");
  EXPECT_EQ(q.visible, 4u);
  ASSERT_EQ(q.items.size(), 4u);
  EXPECT_EQ(q.items[2].role, SelectItem::Role::kMergeKey);
  EXPECT_EQ(q.items[3].pair, 1u);

  // The parent side, and a link whose values compare alike (by_value):
  // their own values, no join.
  ScanSpec p = Spec("k", {"code"});
  MergeLink pm;
  pm.peer_table = "kc";
  pm.on = {{ColumnExpr{"k", "code", true}, "code"}};
  p.merge.push_back(pm);
  MergeLink bv = m;
  bv.by_value = true;
  bv.on = {{ColumnExpr{"k", "n"}, "n"}};
  p.merge.push_back(bv);
  EXPECT_EQ(SelectBuilder(d).Build(p).sql,
            "SELECT \"k\".\"code\", (\"k\".\"code\")::text, \"k\".\"n\" FROM \"k\" AS \"k\" "
            "ORDER BY (\"k\".\"code\")::text COLLATE \"C\", \"k\".\"n\"");
  // A link of byte-comparing text: the child's own values.
  PostgresDialect plain([](const ScanSpec&, const MergeLink&) { return true; });
  ScanSpec c = Spec("kc", {"id"});
  MergeLink cm = m;
  cm.on.resize(1);
  c.merge.push_back(cm);
  EXPECT_EQ(SelectBuilder(plain).Build(c).sql,
            "SELECT \"kc\".\"id\", (\"kc\".\"code\")::text FROM \"kc\" AS \"kc\" ORDER BY "
            "(\"kc\".\"code\")::text COLLATE \"C\"");
}

TEST(PostgresSelectTest, RangesAreBoundParameters) {
  PostgresDialect d;
  ScanSpec s = Spec("t", {"id"});
  s.range = ScanRange{ColumnExpr{"t", "id"}, Value::Int(-5), Value::Int(9000000000), false};
  BuiltQuery q = SelectBuilder(d).Build(s);
  EXPECT_EQ(q.sql,
            "SELECT \"t\".\"id\" FROM \"t\" AS \"t\" WHERE (\"t\".\"id\" >= $1 AND "
            "\"t\".\"id\" < $2)");
  ExpectParams(q.params, {Value::Int(-5), Value::Int(9000000000)});

  // The last job's range: open above, with the NULLs.
  s.range = ScanRange{ColumnExpr{"t", "id"}, Value::Int(7), std::nullopt, true};
  q = SelectBuilder(d).Build(s);
  EXPECT_EQ(q.sql,
            "SELECT \"t\".\"id\" FROM \"t\" AS \"t\" WHERE ((\"t\".\"id\" >= $1 OR "
            "\"t\".\"id\" IS NULL))");
  ExpectParams(q.params, {Value::Int(7)});

  s.range = ScanRange{ColumnExpr{"t", "id"}, std::nullopt, std::nullopt, true};
  q = SelectBuilder(d).Build(s);
  EXPECT_EQ(q.sql,
            "SELECT \"t\".\"id\" FROM \"t\" AS \"t\" WHERE ((TRUE OR \"t\".\"id\" IS "
            "NULL))");
  EXPECT_TRUE(q.params.empty());

  // A text range compares as the scan sorts text: bytes.
  s.range = ScanRange{ColumnExpr{"t", "code", true}, Value::Str(ValueType::kText, "a"),
                      Value::Str(ValueType::kText, "m"), false};
  q = SelectBuilder(d).Build(s);
  EXPECT_EQ(q.sql,
            "SELECT \"t\".\"id\" FROM \"t\" AS \"t\" WHERE (\"t\".\"code\" COLLATE \"C\" >= $1 "
            "AND \"t\".\"code\" COLLATE \"C\" < $2)");
}

TEST(PostgresSelectTest, TupleBoundsAreRowValuesWithoutNulls) {
  PostgresDialect d;
  ScanSpec s = Spec("t", {"id"});
  s.order_by = {{"t", "updated_at"}, {"t", "id"}};
  s.not_null = {{"t", "id"}};
  s.bound = KeyBound{{{"t", "updated_at"}, {"t", "id"}},
                     {Value::Temporal(ValueType::kTimestamp, 1714557600000000), Value::Int(42)},
                     BoundOp::kGreater};
  BuiltQuery q = SelectBuilder(d).Build(s);
  // NULLs first, as the bound orders them; id is NOT NULL (not_null).
  EXPECT_EQ(q.sql,
            "SELECT \"t\".\"id\" FROM \"t\" AS \"t\" WHERE \"t\".\"id\" IS NOT NULL AND "
            "(\"t\".\"updated_at\", \"t\".\"id\") > ($1, $2) ORDER BY \"t\".\"updated_at\" "
            "NULLS FIRST, \"t\".\"id\"");
  ExpectParams(q.params,
               {Value::Temporal(ValueType::kTimestamp, 1714557600000000), Value::Int(42)});

  // An empty bound: every row, in the order bounds need (a first page).
  ScanSpec first = s;
  first.bound = KeyBound{};
  q = SelectBuilder(d).Build(first);
  EXPECT_EQ(q.sql,
            "SELECT \"t\".\"id\" FROM \"t\" AS \"t\" WHERE \"t\".\"id\" IS NOT NULL "
            "ORDER BY \"t\".\"updated_at\" NULLS FIRST, \"t\".\"id\"");
  EXPECT_TRUE(q.params.empty());

  // A NULL value: IS NULL / IS NOT NULL terms, no parameter for it.
  s.bound->values[0] = Value::Null(ValueType::kTimestamp);
  q = SelectBuilder(d).Build(s);
  EXPECT_EQ(q.sql,
            "SELECT \"t\".\"id\" FROM \"t\" AS \"t\" WHERE \"t\".\"id\" IS NOT NULL AND "
            "((\"t\".\"updated_at\" IS NOT NULL) OR (\"t\".\"updated_at\" IS NULL AND "
            "\"t\".\"id\" > $1)) ORDER BY \"t\".\"updated_at\" NULLS FIRST, \"t\".\"id\"");
  ExpectParams(q.params, {Value::Int(42)});

  // >= with the NULL last: all of the NULL group after the prefix.
  s.bound->values = {Value::Int(3), Value::Null(ValueType::kInt)};
  s.bound->columns = {{"t", "a"}, {"t", "b"}};
  s.bound->op = BoundOp::kGreaterOrEqual;
  s.order_by.clear();
  s.not_null.clear();
  q = SelectBuilder(d).Build(s);
  EXPECT_EQ(q.sql,
            "SELECT \"t\".\"id\" FROM \"t\" AS \"t\" WHERE \"t\".\"a\" >= $1 AND "
            "((\"t\".\"a\" > $1) OR (\"t\".\"a\" = $1))");
  ExpectParams(q.params, {Value::Int(3)});

  // <: rows with NULLs come before every value, so they are in.
  s.bound = KeyBound{{{"t", "a"}, {"t", "b"}}, {Value::Int(3), Value::Int(8)}, BoundOp::kLess};
  q = SelectBuilder(d).Build(s);
  EXPECT_EQ(q.sql,
            "SELECT \"t\".\"id\" FROM \"t\" AS \"t\" WHERE (((\"t\".\"a\" < $1 OR "
            "\"t\".\"a\" IS NULL)) OR (\"t\".\"a\" = $1 AND (\"t\".\"b\" < $2 OR "
            "\"t\".\"b\" IS NULL)))");
  // ... unless the columns cannot be NULL: then a row value.
  s.not_null = {{"t", "a"}, {"t", "b"}};
  q = SelectBuilder(d).Build(s);
  EXPECT_EQ(q.sql,
            "SELECT \"t\".\"id\" FROM \"t\" AS \"t\" WHERE \"t\".\"a\" IS NOT NULL AND "
            "\"t\".\"b\" IS NOT NULL AND (\"t\".\"a\", \"t\".\"b\") < ($1, $2)");
  // Nothing is below NULL.
  s.bound->values[0] = Value::Null(ValueType::kInt);
  s.bound->values[1] = Value::Null(ValueType::kInt);
  q = SelectBuilder(d).Build(s);
  EXPECT_NE(q.sql.find("AND FALSE"), std::string::npos) << q.sql;
  EXPECT_TRUE(q.params.empty());

  // Text bound: compared as the scan sorts it.
  ScanSpec t = Spec("t", {"id"});
  t.bound = KeyBound{{{"t", "code", true}}, {Value::Str(ValueType::kText, "x")}, BoundOp::kGreater};
  EXPECT_EQ(SelectBuilder(d).Build(t).sql,
            "SELECT \"t\".\"id\" FROM \"t\" AS \"t\" WHERE \"t\".\"code\" COLLATE \"C\" > $1");
}

TEST(PostgresSelectTest, PagingAndRangeTogether) {
  PostgresDialect d;
  ScanSpec s = Spec("t", {"name"});
  s.order_by = {{"t", "name", true}};
  s.range = ScanRange{ColumnExpr{"t", "g"}, Value::Int(10), Value::Int(20), false};
  SelectOptions o;
  o.page_key = {{"t", "id"}};
  o.limit = 100;
  BuiltQuery first = SelectBuilder(d).Build(s, o);
  // The page key is selected (hidden) for the next page's bound.
  EXPECT_EQ(first.sql,
            "SELECT \"t\".\"name\", \"t\".\"id\" FROM \"t\" AS \"t\" WHERE (\"t\".\"g\" >= $1 AND "
            "\"t\".\"g\" < $2) ORDER BY \"t\".\"name\" COLLATE \"C\" NULLS FIRST, \"t\".\"id\" "
            "NULLS FIRST LIMIT 100");
  ASSERT_EQ(first.keys.size(), 2u);
  EXPECT_EQ(first.keys[0].item, 0u);
  EXPECT_EQ(first.keys[1].item, 1u);
  EXPECT_EQ(first.visible, 1u);
  EXPECT_EQ(first.items[1].role, SelectItem::Role::kKeyValue);
  o.after = std::vector<Value>{Value::Str(ValueType::kText, "it's"), Value::Int(77)};
  BuiltQuery next = SelectBuilder(d).Build(s, o);
  EXPECT_EQ(next.sql,
            "SELECT \"t\".\"name\", \"t\".\"id\" FROM \"t\" AS \"t\" WHERE (\"t\".\"g\" >= $1 AND "
            "\"t\".\"g\" < $2) AND (\"t\".\"name\" COLLATE \"C\", \"t\".\"id\") >= ($3, $4) ORDER "
            "BY \"t\".\"name\" COLLATE \"C\" NULLS FIRST, \"t\".\"id\" NULLS FIRST LIMIT 100");
  ExpectParams(next.params, {Value::Int(10), Value::Int(20), Value::Str(ValueType::kText, "it's"),
                             Value::Int(77)});
}

TEST(PostgresSelectTest, ExclusionsLeaveRowsOutAndJoinsFindNothing) {
  // A soft-deleted row of the scan's table: a WHERE term, NULL-safe; of a
  // joined table: a term of that join's ON (a LEFT JOIN then finds no row).
  PostgresDialect d;
  ScanSpec s = Spec("o", {"id"});
  s.columns.push_back(ColumnExpr{"c", "name"});
  s.joins.push_back(ScanJoin{"customer", "c", {{ColumnExpr{"o", "customer_id"}, "id"}}});
  s.joins.push_back(ScanJoin{"shop", "s", {{ColumnExpr{"o", "shop_id"}, "id"}}});
  s.exclude = {ScanExclusion{"c", "state", Value::Str(ValueType::kText, "gone")},
               ScanExclusion{"o", "deleted", Value::Bool(true)}};
  s.range = ScanRange{ColumnExpr{"o", "id"}, Value::Int(10), Value::Int(20), false};
  SelectOptions o;
  o.page_key = {{"o", "id"}};
  o.after = std::vector<Value>{Value::Int(12)};
  const BuiltQuery q = SelectBuilder(d).Build(s, o);
  EXPECT_EQ(q.sql,
            "SELECT \"o\".\"id\", \"c\".\"name\" FROM \"o\" AS \"o\" LEFT JOIN \"customer\" "
            "AS \"c\" ON \"c\".\"id\" = \"o\".\"customer_id\" AND \"c\".\"state\" IS DISTINCT "
            "FROM $1 LEFT JOIN \"shop\" AS \"s\" ON \"s\".\"id\" = \"o\".\"shop_id\" WHERE "
            "\"o\".\"deleted\" IS DISTINCT FROM $2 AND (\"o\".\"id\" >= $3 AND \"o\".\"id\" < "
            "$4) AND \"o\".\"id\" >= $5 ORDER BY \"o\".\"id\" NULLS FIRST");
  ExpectParams(q.params, {Value::Str(ValueType::kText, "gone"), Value::Bool(true), Value::Int(10),
                          Value::Int(20), Value::Int(12)});
  // Aggregates built around the scan keep both terms.
  EXPECT_NE(q.from.find("IS DISTINCT FROM $1"), std::string::npos) << q.from;
  EXPECT_EQ(q.where.rfind(" WHERE \"o\".\"deleted\" IS DISTINCT FROM $2 AND ", 0), 0u) << q.where;
}

// widen sync's reads: the rows of some split values (IN, as the database's
// `=` compares them, the values bound) and the rows whose join found none.
TEST(PostgresSelectTest, AnyOfIsAnInListOfParametersAndIsNullFindsMissingJoins) {
  PostgresDialect d;
  ScanSpec s = Spec("orders", {"id"});
  s.joins.push_back(ScanJoin{"customer", "c", {{ColumnExpr{"orders", "customer_id"}, "id"}}});
  s.any_of = ScanValues{ColumnExpr{"orders", "code", true},
                        {Value::Str(ValueType::kText, "a'b"), Value::Str(ValueType::kText, "c")}};
  s.not_null = {{"orders", "customer_id"}};
  s.is_null = {{"c", "id"}};
  const BuiltQuery q = SelectBuilder(d).Build(s);
  EXPECT_EQ(q.sql,
            "SELECT \"orders\".\"id\" FROM \"orders\" AS \"orders\" LEFT JOIN \"customer\" AS "
            "\"c\" ON \"c\".\"id\" = \"orders\".\"customer_id\" WHERE "
            "\"orders\".\"customer_id\" IS NOT NULL AND \"c\".\"id\" IS NULL AND "
            "\"orders\".\"code\" IN ($1, $2)");
  ExpectParams(q.params, {Value::Str(ValueType::kText, "a'b"), Value::Str(ValueType::kText, "c")});
}

TEST(PostgresSelectTest, ParametersInTheServersInputSyntax) {
  EXPECT_EQ(PgParamText(Value::Bool(true)), "true");
  EXPECT_EQ(PgParamText(Value::Bool(false)), "false");
  EXPECT_EQ(PgParamText(Value::Int(INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(PgParamText(Value::UInt(UINT64_MAX)), "18446744073709551615");
  EXPECT_EQ(PgParamText(Value::Float(0.1)), "0.1");
  EXPECT_EQ(PgParamText(Value::Float(-1e300)), "-1e+300");
  EXPECT_EQ(PgParamText(Value::Float(std::nan(""))), "NaN");
  EXPECT_EQ(PgParamText(Value::Float(-std::numeric_limits<double>::infinity())), "-Infinity");
  EXPECT_EQ(PgParamText(Value::Str(ValueType::kDecimal, "-12.50")), "-12.50");
  EXPECT_EQ(PgParamText(Value::Str(ValueType::kText, "O'Brien \"x\" \\")), "O'Brien \"x\" \\");
  EXPECT_EQ(PgParamText(Value::Str(ValueType::kBytes, std::string("\x00\xff"
                                                                  "A",
                                                                  3))),
            "\\x00ff41");
  EXPECT_EQ(PgParamText(Value::Str(ValueType::kBytes, "")), "\\x");
  EXPECT_EQ(PgParamText(Value::Str(ValueType::kJson, "{\"a\": 1}")), "{\"a\": 1}");
  EXPECT_EQ(PgParamText(Value::Str(ValueType::kOther, "1 day")), "1 day");
  // 2024-02-29 is day 19782; 1 BC (year 0) is day -719528 at its Jan 1.
  EXPECT_EQ(PgParamText(Value::Temporal(ValueType::kDate, 19782)), "2024-02-29");
  EXPECT_EQ(PgParamText(Value::Temporal(ValueType::kDate, -719528)), "0001-01-01 BC");
  EXPECT_EQ(PgParamText(Value::Temporal(ValueType::kDate, INT64_MAX)), "infinity");
  EXPECT_EQ(PgParamText(Value::Temporal(ValueType::kDate, INT64_MIN)), "-infinity");
  EXPECT_EQ(PgParamText(Value::Temporal(ValueType::kTime, 45296789000)), "12:34:56.789000");
  EXPECT_EQ(PgParamText(Value::Temporal(ValueType::kTime, 0)), "00:00:00");
  // 1969-12-31 23:59:59.999999 and an instant at 2024-05-01 10:00:00 UTC.
  EXPECT_EQ(PgParamText(Value::Temporal(ValueType::kTimestamp, -1)), "1969-12-31 23:59:59.999999");
  EXPECT_EQ(PgParamText(Value::Temporal(ValueType::kTimestampTz, 1714557600000000)),
            "2024-05-01 10:00:00+00");
  EXPECT_EQ(PgParamText(Value::Temporal(ValueType::kTimestamp, -62135596800000000 - 86400000000)),
            "0001-12-31 00:00:00 BC");
}

}  // namespace
}  // namespace widen
