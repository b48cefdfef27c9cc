// Tuple bounds (ScanSpec::bound) and keyset paging on both engines: the rows
// a bound selects are those the database's own ORDER BY places after (or
// before) the bound's row, ties and NULLs included (NULL first); every value
// type is bound as a typed parameter and compares as the server compares the
// column. Expected rows come from SQL on the source.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/integration/source_scan.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

enum class Engine { kPostgres, kMySql };

class KeyBoundTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    if (GetParam() == Engine::kPostgres) {
      WIDEN_REQUIRE_PG(url);
      db_ = FreshPgDatabase(url, "widen_it_bound");
    } else {
      WIDEN_REQUIRE_MYSQL(url);
      db_ = FreshMySqlDatabase(url, "widen_it_bound");
    }
  }
  bool pg() const { return GetParam() == Engine::kPostgres; }
  void Exec(const std::vector<std::string>& statements) {
    if (pg()) {
      for (const auto& s : statements) PgQuery(db_, s);
    } else {
      std::vector<std::string> all = statements;
      all.push_back("SELECT 1");
      MySqlQuery(db_, all);
    }
  }
  std::vector<std::string> Ids(const std::string& sql) {
    std::vector<std::string> out;
    for (const auto& r : pg() ? PgQuery(db_, sql) : MySqlQuery(db_, sql)) out.push_back(r.at(0));
    return out;
  }
  // The ids `spec` reads, in order.
  std::vector<std::string> Scan(Source* src, const ScanSpec& spec) {
    std::vector<std::string> out;
    auto s = src->Scan(spec);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return out;
    for (; (*s)->Valid(); (*s)->Next()) out.push_back((*s)->row()[0].ToText());
    EXPECT_TRUE((*s)->status().ok()) << (*s)->status().ToString();
    return out;
  }
  std::string db_;
};

INSTANTIATE_TEST_SUITE_P(Engines, KeyBoundTest,
                         ::testing::Values(Engine::kPostgres, Engine::kMySql),
                         [](const auto& info) {
                           return info.param == Engine::kPostgres ? "Postgres" : "MySql";
                         });

TEST_P(KeyBoundTest, TupleBoundsPlaceTiesAndNullsAsOrderByDoes) {
  Exec({"CREATE TABLE p (id INT PRIMARY KEY, a INT NULL, b VARCHAR(10) NULL)",
        "INSERT INTO p VALUES (1, NULL, NULL), (2, NULL, 'b'), (3, 1, NULL), (4, 1, 'a'), "
        "(5, 1, 'a'), (6, 1, 'B'), (7, 1, 'b'), (8, 2, NULL), (9, 2, NULL), (10, NULL, NULL), "
        "(11, 2, 'a'), (12, 0, 'z')"});
  // The database's order with NULLs first and text as bytes; ties by id.
  const std::vector<std::string> order =
      Ids(pg() ? "SELECT id FROM p ORDER BY a NULLS FIRST, b COLLATE \"C\" NULLS FIRST, id"
               : "SELECT id FROM p ORDER BY a, CAST(b AS BINARY), id");
  ASSERT_EQ(order.size(), 12u);
  // Typed values of each row, read through the source.
  auto src = OpenSource(db_, 2);
  ASSERT_NE(src, nullptr);
  std::map<std::string, std::vector<Value>> row;
  auto all = ScanTable(src.get(), "p", {"id", "a", "b"});
  for (const auto& r : all.rows) row[r[0].ToText()] = r;
  ASSERT_EQ(row.size(), 12u);
  auto same = [](const Value& x, const Value& y) { return CompareValues(x, y) == 0; };

  const ColumnExpr id{"p", "id"}, a{"p", "a"}, b{"p", "b", true};
  for (const bool with_id : {false, true}) {
    std::vector<ColumnExpr> cols = {a, b};
    if (with_id) cols.push_back(id);
    for (const auto& [pivot, values] : row) {
      // The pivot's group: the first and one past the last position of
      // the rows equal to it on `cols` in the database's order.
      size_t first = order.size(), end = 0;
      for (size_t i = 0; i < order.size(); ++i) {
        const auto& r = row[order[i]];
        bool eq = same(r[1], values[1]) && same(r[2], values[2]);
        if (with_id) eq = eq && same(r[0], values[0]);
        if (eq) {
          first = std::min(first, i);
          end = i + 1;
        }
      }
      for (BoundOp op : {BoundOp::kGreater, BoundOp::kGreaterOrEqual, BoundOp::kLess}) {
        SCOPED_TRACE(
            fmt::format("pivot {}, op {}, with id {}", pivot, static_cast<int>(op), with_id));
        ScanSpec spec = Spec("p", {id}, {a, b, id}, {id});
        std::vector<Value> bound = {values[1], values[2]};
        if (with_id) bound.push_back(values[0]);
        spec.bound = KeyBound{cols, bound, op};
        const size_t from = op == BoundOp::kGreater          ? end
                            : op == BoundOp::kGreaterOrEqual ? first
                                                             : 0;
        const size_t to = op == BoundOp::kLess ? first : order.size();
        const std::vector<std::string> want(order.begin() + from, order.begin() + to);
        EXPECT_EQ(Scan(src.get(), spec), want);
      }
    }
  }
  // Paging by the bound, one row at a time, reads every row once, in order
  // (the first page's empty bound orders as the others).
  ScanSpec spec = Spec("p", {id, a, b}, {a, b, id}, {id});
  spec.bound = KeyBound{};
  std::vector<std::string> paged;
  for (int guard = 0; guard < 20; ++guard) {
    auto s = src->Scan(spec);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    if (!(*s)->Valid()) break;
    const Row& r = (*s)->row();
    paged.push_back(r[0].ToText());
    spec.bound = KeyBound{{a, b, id}, {r[1], r[2], r[0]}, BoundOp::kGreater};
  }
  EXPECT_EQ(paged, order);
}

// Each type bound as a parameter compares as the server compares the column:
// the rows after each row's value are the rows SQL's `>` finds.
TEST_P(KeyBoundTest, EveryTypeIsBoundAsATypedParameter) {
  if (pg()) {
    Exec(
        {"CREATE TABLE v (id INT PRIMARY KEY, i BIGINT, f DOUBLE PRECISION, d NUMERIC(12,3), "
         "t TEXT, bi BYTEA, dt DATE, tm TIME, ts TIMESTAMP, tz TIMESTAMPTZ, bo BOOLEAN, "
         "uu UUID)",
         "INSERT INTO v VALUES "
         "(1, -9223372036854775808, -1.5, -12.345, 'Zebra', '\\x00ff', '0044-03-15 BC', "
         "'00:00:00', '1969-12-31 23:59:59.999999', '1970-01-01 00:00:00+00', false, "
         "'00000000-0000-0000-0000-000000000001'), "
         "(2, 0, 0.1, 0.001, 'apple', '\\x', '1970-01-01', '12:34:56.789', "
         "'2024-02-29 12:00:00', '2024-05-01 10:00:00.5+02', true, "
         "'ffffffff-0000-0000-0000-000000000000'), "
         "(3, 9223372036854775807, 1e300, 999999999.999, 'é', '\\x0001', '2024-02-29', "
         "'23:59:59.999999', '9999-12-31 23:59:59', '2038-01-19 03:14:08+00', true, "
         "'7fffffff-0000-0000-0000-000000000000'), "
         "(4, 5, 'Infinity', 0, '', '\\xff', '1999-01-01', '06:00', '2000-01-01', "
         "'1900-01-01 00:00:00+00', false, '00000000-0000-0000-0000-000000000000')"});
  } else {
    Exec(
        {"CREATE TABLE v (id INT PRIMARY KEY, i BIGINT, u BIGINT UNSIGNED, f DOUBLE, "
         "d DECIMAL(12,3), t VARCHAR(10), bi VARBINARY(4), dt DATE, tm TIME(6), "
         "ts DATETIME(6), tz TIMESTAMP(6) NULL, bo BOOLEAN)",
         "INSERT INTO v VALUES "
         "(1, -9223372036854775808, 0, -1.5, -12.345, 'Zebra', X'00FF', '1000-01-01', "
         "'-838:59:59', '1969-12-31 23:59:59.999999', '1970-01-01 00:00:01', false), "
         "(2, 0, 18446744073709551615, 0.1, 0.001, 'apple', X'', '1970-01-01', "
         "'12:34:56.789', '2024-02-29 12:00:00', '2024-05-01 08:00:00.5', true), "
         "(3, 9223372036854775807, 9223372036854775808, 1e300, 999999999.999, 'é', X'0001', "
         "'2024-02-29', '838:59:59', '9999-12-31 23:59:59', '2038-01-19 03:14:07', true), "
         "(4, 5, 7, -0.0, 0, '', X'FF', '1999-01-01', '06:00', '2000-01-01', "
         "'1990-01-01 00:00:00', false)"});
  }
  std::vector<std::string> cols = {"i", "f", "d", "t", "bi", "dt", "tm", "ts", "tz", "bo"};
  cols.push_back(pg() ? "uu" : "u");
  auto src = OpenSource(db_);
  ASSERT_NE(src, nullptr);
  std::vector<std::string> all = {"id"};
  all.insert(all.end(), cols.begin(), cols.end());
  auto rows = ScanTable(src.get(), "v", all);
  ASSERT_EQ(rows.rows.size(), 4u);
  for (size_t c = 0; c < cols.size(); ++c) {
    // Text compares as bytes (is_text), as the scan sorts it.
    const bool text = cols[c] == "t";
    const ColumnExpr col{"v", cols[c], text};
    const std::string q =
        pg() ? (text ? "t COLLATE \"C\"" : cols[c]) : (text ? "CAST(t AS BINARY)" : cols[c]);
    for (const auto& r : rows.rows) {
      SCOPED_TRACE(fmt::format("{} > {}", cols[c], r[c + 1].DebugString()));
      ScanSpec spec = Spec("v", {{"v", "id"}}, {{"v", "id"}}, {{"v", "id"}});
      spec.bound = KeyBound{{col}, {r[c + 1]}, BoundOp::kGreater};
      const std::string id = r[0].ToText();
      const auto want = Ids(fmt::format(
          "SELECT id FROM v WHERE {0} > (SELECT {0} FROM v WHERE id = {1}) ORDER BY id", q, id));
      EXPECT_EQ(Scan(src.get(), spec), want);
      // And as a job range: lo <= value < hi.
      spec.bound.reset();
      spec.range = ScanRange{col, r[c + 1], std::nullopt, false};
      const auto at_or_after = Ids(fmt::format(
          "SELECT id FROM v WHERE {0} >= (SELECT {0} FROM v WHERE id = {1}) ORDER BY id", q, id));
      EXPECT_EQ(Scan(src.get(), spec), at_or_after);
    }
  }
}

// MySQL reads a table in keyset pages; a paging key with NULLs and ties in
// its first columns still reads every row once, in the database's order.
TEST(MySqlPagingTest, PagesThroughNullsAndTiesOfTheKey) {
  WIDEN_REQUIRE_MYSQL(url);
  const std::string db = FreshMySqlDatabase(url, "widen_it_paging");
  MySqlQuery(db, std::vector<std::string>{
                     "CREATE TABLE n (a INT NULL, b VARCHAR(5) NULL, c INT NOT NULL)",
                     "INSERT INTO n VALUES (NULL, NULL, 1), (NULL, NULL, 2), (NULL, 'a', 1), "
                     "(1, NULL, 1), (1, NULL, 3), (1, 'A', 2), (1, 'a', 1), (1, 'b', 1), "
                     "(2, NULL, 1), (NULL, 'B', 4), (2, 'a', 2)",
                     "SELECT 1"});
  std::vector<std::string> want;
  for (const auto& r : MySqlQuery(db,
                                  "SELECT CONCAT_WS('/', IFNULL(a, '-'), IFNULL(b, '-'), c) "
                                  "FROM n ORDER BY a, CAST(b AS BINARY), c")) {
    want.push_back(r.at(0));
  }
  for (int fetch : {1, 2, 3}) {
    auto src = OpenSource(db, fetch);
    ASSERT_NE(src, nullptr);
    // No primary key: pages by the columns that place the cells (from the
    // mapping), text as its bytes ('a' and 'A' are equal in the column's
    // collation, which could not tell the rows apart).
    ScanSpec spec =
        Spec("n", {{"n", "a"}, {"n", "b"}, {"n", "c"}}, {}, {{"n", "a"}, {"n", "b"}, {"n", "c"}});
    spec.unique_key_from_mapping = true;
    auto s = src->Scan(spec);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    std::vector<std::string> got;
    for (; (*s)->Valid(); (*s)->Next()) {
      const Row& r = (*s)->row();
      got.push_back((r[0].is_null() ? "-" : r[0].ToText()) + "/" +
                    (r[1].is_null() ? "-" : r[1].ToText()) + "/" + r[2].ToText());
    }
    EXPECT_TRUE((*s)->status().ok()) << (*s)->status().ToString();
    EXPECT_EQ(got, want) << "fetch_rows " << fetch;
  }
}

}  // namespace
}  // namespace widen::testing
