// SelectBuilder with the MySQL dialect, no server: the SQL text and the
// bound parameters expected here are written from the dialect's rules
// (extract/mysql_dialect_internal.h) and MySQL's syntax, not taken from the
// builder's output.
#include <gtest/gtest.h>

#include <cstdint>

#include "extract/mysql_dialect_internal.h"
#include "extract/select_builder.h"

namespace widen {
namespace {

using mysql_internal::ColumnKind;
using mysql_internal::ColumnMeta;
using mysql_internal::MySqlBinding;
using mysql_internal::MySqlBindingFor;
using mysql_internal::MySqlCatalog;
using mysql_internal::MySqlDialect;

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

ColumnMeta Meta(ColumnKind kind, std::string source_type, bool nullable = false) {
  ColumnMeta m;
  m.kind = kind;
  m.source_type = std::move(source_type);
  m.nullable = nullable;
  return m;
}

ColumnMeta TextMeta(std::string collation, int64_t max_chars = 20) {
  ColumnMeta m = Meta(ColumnKind::kText, "varchar(20)");
  m.charset = "utf8mb4";
  m.collation = std::move(collation);
  m.max_chars = max_chars;
  return m;
}

class MySqlSelectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto& t = catalog_.tables["t"];
    t["id"] = Meta(ColumnKind::kInt, "int(11)");
    t["f"] = Meta(ColumnKind::kFloat, "float", true);
    t["price"] = Meta(ColumnKind::kDecimal, "decimal(10,2)", true);
    t["price"].precision = 10;
    t["price"].scale = 2;
    t["at"] = Meta(ColumnKind::kDateTime, "datetime(6)", true);
    t["name"] = TextMeta("utf8mb4_general_ci");
    t["u"] = Meta(ColumnKind::kOther, "uuid");
    auto& c = catalog_.tables["c"];
    c["id"] = Meta(ColumnKind::kInt, "int(11)");
    c["name"] = TextMeta("utf8mb4_bin", 50);
  }
  MySqlCatalog catalog_;
};

TEST_F(MySqlSelectTest, QuotesHostileNamesAndCastsFloats) {
  catalog_.tables["Order `q`"]["select"] = Meta(ColumnKind::kFloat, "float");
  MySqlDialect d(catalog_);
  ScanSpec s;
  s.table = "Order `q`";
  s.alias = "a`b";
  s.columns = {{"a`b", "select"}};
  s.joins.push_back(ScanJoin{"t", "it's", {{ColumnExpr{"a`b", "select"}, "id"}}});
  s.columns.push_back({"it's", "f"});
  EXPECT_EQ(SelectBuilder(d).Build(s).sql,
            "SELECT CAST(`a``b`.`select` AS DOUBLE), CAST(`it's`.`f` AS DOUBLE) FROM `Order "
            "``q``` AS `a``b` LEFT JOIN `t` AS `it's` ON `it's`.`id` = `a``b`.`select`");
}

TEST_F(MySqlSelectTest, MergeKeysAreWeightStringsInTheLinksCollation) {
  // c.name (utf8mb4_bin) = t.name (utf8mb4_general_ci): the server derives
  // utf8mb4_bin; pad to the longer declared length.
  mysql_internal::TextCompare tc;
  tc.charset = "utf8mb4";
  tc.collation = "utf8mb4_bin";
  tc.pad_chars = 50;
  catalog_.text_compare[std::string("t:t\x1fname") + '\x1e' + "t:c\x1fname"] = tc;
  MySqlDialect d(catalog_);
  ScanSpec s = Spec("c", {"id"});
  MergeLink m;
  m.peer_table = "t";
  m.on = {{ColumnExpr{"c", "name", true}, "name"}};
  m.child = true;
  s.merge.push_back(m);
  s.order_by = {{"c", "id"}};
  SelectOptions o;
  o.select_key_values = true;
  const BuiltQuery q = SelectBuilder(d).Build(s, o);
  EXPECT_EQ(q.sql,
            "SELECT `c`.`id`, WEIGHT_STRING(`c`.`name` AS CHAR(50)), `c`.`name` FROM `c` AS `c` "
            "ORDER BY `c`.`name`, `c`.`id`");
  ASSERT_EQ(q.keys.size(), 2u);
  EXPECT_EQ(q.keys[0].item, 2u);  // the column's value, hidden
  EXPECT_EQ(q.keys[1].item, 0u);
  EXPECT_EQ(d.MergeKey(s, 0, 0).kind, ColumnKind::kBytes);

  // The parent's side converts to the link's collation.
  ScanSpec p = Spec("t", {"id"});
  MergeLink pm;
  pm.peer_table = "c";
  pm.on = {{ColumnExpr{"t", "name", true}, "name"}};
  p.merge.push_back(pm);
  EXPECT_EQ(SelectBuilder(d).Build(p).sql,
            "SELECT `t`.`id`, WEIGHT_STRING(CONVERT(`t`.`name` USING utf8mb4) COLLATE "
            "utf8mb4_bin AS CHAR(50)) FROM `t` AS `t` ORDER BY CONVERT(`t`.`name` USING "
            "utf8mb4) COLLATE utf8mb4_bin");
  // A link the server cannot compare is an error of the pair.
  catalog_.text_compare.clear();
  EXPECT_NE(d.MergeKey(p, 0, 0).error, "");
}

TEST_F(MySqlSelectTest, KeysetPagesThroughNullsWithTypedParameters) {
  MySqlDialect d(catalog_);
  ScanSpec s = Spec("t", {"id", "price"});
  s.order_by = {{"t", "name", true}};
  s.range = ScanRange{ColumnExpr{"t", "id"}, Value::Int(1), Value::Int(1000), false};
  SelectOptions o;
  o.page_key = {{"t", "at"}, {"t", "price"}};
  o.limit = 5001;
  o.after =
      std::vector<Value>{Value::Str(ValueType::kText, "b"), Value::Null(ValueType::kTimestamp),
                         Value::Str(ValueType::kDecimal, "9.50")};
  const BuiltQuery q = SelectBuilder(d).Build(s, o);
  // Text by bytes; NULL `at`: IS NULL, and every row after it in its
  // group; the decimal cast to its column's type.
  EXPECT_EQ(q.sql,
            "SELECT `t`.`id`, `t`.`price`, `t`.`name`, `t`.`at` FROM `t` AS `t` WHERE (`t`.`id` "
            ">= @widen_p1 AND `t`.`id` < @widen_p2) AND CAST(CONVERT(`t`.`name` USING utf8mb4) "
            "AS BINARY) >= CAST(@widen_p3 AS BINARY) AND ((CAST(CONVERT(`t`.`name` USING "
            "utf8mb4) AS BINARY) > CAST(@widen_p3 AS BINARY)) OR (CAST(CONVERT(`t`.`name` USING "
            "utf8mb4) AS BINARY) = CAST(@widen_p3 AS BINARY) AND `t`.`at` IS NOT NULL) OR "
            "(CAST(CONVERT(`t`.`name` USING utf8mb4) AS BINARY) = CAST(@widen_p3 AS BINARY) AND "
            "`t`.`at` IS NULL AND `t`.`price` >= CAST(@widen_p4 AS DECIMAL(10, 2)))) ORDER BY "
            "CAST(CONVERT(`t`.`name` USING utf8mb4) AS BINARY), `t`.`at`, `t`.`price` LIMIT 5001");
  ExpectParams(q.params, {Value::Int(1), Value::Int(1000), Value::Str(ValueType::kText, "b"),
                          Value::Str(ValueType::kDecimal, "9.50")});
}

TEST_F(MySqlSelectTest, UniqueKeysOrderInTheirOwnCollationAndBoundsTypeTheirParameters) {
  MySqlDialect d(catalog_);
  ScanSpec s = Spec("t", {"id"});
  SelectOptions o;
  o.page_key = {{"t", "name"}, {"t", "u"}};
  o.after =
      std::vector<Value>{Value::Str(ValueType::kText, "x"), Value::Str(ValueType::kOther, "u1")};
  EXPECT_EQ(SelectBuilder(d).Build(s, o).sql,
            "SELECT `t`.`id`, `t`.`name`, `t`.`u` FROM `t` AS `t` WHERE `t`.`name` >= "
            "CONVERT(@widen_p1 USING utf8mb4) COLLATE utf8mb4_general_ci AND ((`t`.`name` > "
            "CONVERT(@widen_p1 USING utf8mb4) COLLATE utf8mb4_general_ci) OR (`t`.`name` = "
            "CONVERT(@widen_p1 USING utf8mb4) COLLATE utf8mb4_general_ci AND `t`.`u` >= "
            "@widen_p2)) ORDER BY `t`.`name`, `t`.`u`");
  ScanSpec b = Spec("t", {"id"});
  b.bound = KeyBound{{{"t", "at"}, {"t", "id"}},
                     {Value::Temporal(ValueType::kTimestamp, 0), Value::Int(42)},
                     BoundOp::kGreater};
  const BuiltQuery q = SelectBuilder(d).Build(b);
  EXPECT_EQ(q.sql,
            "SELECT `t`.`id` FROM `t` AS `t` WHERE `t`.`at` >= CAST(@widen_p1 AS DATETIME(6)) "
            "AND ((`t`.`at` > CAST(@widen_p1 AS DATETIME(6))) OR (`t`.`at` = CAST(@widen_p1 AS "
            "DATETIME(6)) AND `t`.`id` > @widen_p2))");
}

TEST_F(MySqlSelectTest, ExclusionsAreNullSafeAndTypedForTheirColumn) {
  // Text in the column's own collation, decimals as decimals, others as
  // they are; on a joined table in the join's ON, on the scan's in WHERE.
  MySqlDialect d(catalog_);
  ScanSpec s = Spec("t", {"id"});
  s.joins.push_back(ScanJoin{"c", "c", {{ColumnExpr{"t", "id"}, "id"}}});
  s.exclude = {ScanExclusion{"t", "price", Value::Str(ValueType::kDecimal, "1.5")},
               ScanExclusion{"c", "name", Value::Str(ValueType::kText, "gone")},
               ScanExclusion{"t", "id", Value::Int(-1)}};
  const BuiltQuery q = SelectBuilder(d).Build(s);
  EXPECT_EQ(q.sql,
            "SELECT `t`.`id` FROM `t` AS `t` LEFT JOIN `c` AS `c` ON `c`.`id` = `t`.`id` AND "
            "NOT (`c`.`name` <=> CONVERT(@widen_p1 USING utf8mb4) COLLATE utf8mb4_bin) WHERE "
            "NOT (`t`.`price` <=> CAST(@widen_p2 AS DECIMAL(65, 30))) AND NOT (`t`.`id` <=> "
            "@widen_p3)");
  ExpectParams(q.params, {Value::Str(ValueType::kText, "gone"),
                          Value::Str(ValueType::kDecimal, "1.5"), Value::Int(-1)});
}

// widen sync's rows of some split values: the server's `=` on each value,
// text in the column's collation (a case-insensitive key finds its rows in
// any case), decimals as decimals.
TEST_F(MySqlSelectTest, AnyOfComparesEachValueAsTheColumnsEquals) {
  MySqlDialect d(catalog_);
  ScanSpec s = Spec("c", {"id"});
  s.any_of = ScanValues{ColumnExpr{"c", "name", true},
                        {Value::Str(ValueType::kText, "a"), Value::Str(ValueType::kText, "B")}};
  BuiltQuery q = SelectBuilder(d).Build(s);
  EXPECT_EQ(q.sql,
            "SELECT `c`.`id` FROM `c` AS `c` WHERE `c`.`name` IN (CONVERT(@widen_p1 USING "
            "utf8mb4) COLLATE utf8mb4_bin, CONVERT(@widen_p2 USING utf8mb4) COLLATE "
            "utf8mb4_bin)");
  ExpectParams(q.params, {Value::Str(ValueType::kText, "a"), Value::Str(ValueType::kText, "B")});
  ScanSpec t = Spec("t", {"id"});
  t.any_of = ScanValues{ColumnExpr{"t", "price"}, {Value::Str(ValueType::kDecimal, "1.50")}};
  q = SelectBuilder(d).Build(t);
  EXPECT_EQ(q.sql,
            "SELECT `t`.`id` FROM `t` AS `t` WHERE `t`.`price` IN (CAST(@widen_p1 AS "
            "DECIMAL(65, 30)))");
}

TEST(MySqlBindingTest, EveryValueTypeHasASetter) {
  using Setter = MySqlBinding::Setter;
  auto b = MySqlBindingFor(Value::Int(-7));
  EXPECT_EQ(b.setter, Setter::kInt64);
  EXPECT_EQ(b.i, -7);
  b = MySqlBindingFor(Value::Bool(true));
  EXPECT_EQ(b.setter, Setter::kInt64);
  EXPECT_EQ(b.i, 1);
  b = MySqlBindingFor(Value::UInt(UINT64_MAX));
  EXPECT_EQ(b.setter, Setter::kUInt64);
  EXPECT_EQ(b.u, UINT64_MAX);
  b = MySqlBindingFor(Value::Float(0.1));
  EXPECT_EQ(b.setter, Setter::kDouble);
  EXPECT_EQ(b.d, 0.1);
  // Text forms the server reads: DATE, TIME, DATETIME (UTC for instants).
  EXPECT_EQ(MySqlBindingFor(Value::Temporal(ValueType::kDate, 19782)).s, "2024-02-29");
  EXPECT_EQ(MySqlBindingFor(Value::Temporal(ValueType::kTime, -3020399000000)).s, "-838:59:59");
  EXPECT_EQ(MySqlBindingFor(Value::Temporal(ValueType::kTimestamp, 1500000)).s,
            "1970-01-01 00:00:01.5");
  EXPECT_EQ(MySqlBindingFor(Value::Temporal(ValueType::kTimestampTz, 1714557600000000)).s,
            "2024-05-01 10:00:00");
  for (ValueType t : {ValueType::kDecimal, ValueType::kText, ValueType::kBytes, ValueType::kJson,
                      ValueType::kOther}) {
    b = MySqlBindingFor(Value::Str(t, std::string("a\0\xff", 3)));
    EXPECT_EQ(b.setter, Setter::kString);
    EXPECT_EQ(b.s, std::string("a\0\xff", 3));
  }
}

}  // namespace
}  // namespace widen
