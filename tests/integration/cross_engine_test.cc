// The same data in PostgreSQL and in MySQL/MariaDB, migrated with the same
// --timestamp-ms, must give the same stores, cell by cell: Chinook (the
// shared dataset's two versions, examples/chinook/mapping.yaml and
// mapping.mysql.yaml) and every other example (one mapping.yaml, the source
// URL from WIDEN_SOURCE_URL). Where the engines may differ is listed
// in docs/types.md ("Where the two engines differ"); these datasets use none
// of those types, so the stores must be identical. The one allowed
// difference is named below where it is normalized.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

constexpr const char* kTimestamp = "1600000000000";

CommandResult Migrate(const std::string& source_url, const std::string& mapping,
                      const std::string& store_dir) {
  return RunCommand(
      fmt::format("WIDEN_SOURCE_URL={} {} migrate -q -m {} --target {} "
                  "--timestamp-ms {} --fetch-rows 97",
                  ShellQuote(source_url), WidenBinary(), ShellQuote(mapping),
                  ShellQuote("leveldb:" + store_dir + "/store"), kTimestamp));
}

// A nested JSON value parsed and printed again (attribute order kept), so
// that only names and values count.
std::string Reprinted(const std::string& value) {
  auto j = nlohmann::ordered_json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return value;
  return j.dump();
}

// MySQL's value is PostgreSQL's plus trailing blanks: PostgreSQL's N'...'
// literals are char(n), whose trailing blanks are dropped when the value is
// stored in a varchar column (docs/types.md, "Where the two engines differ").
bool OnlyTrailingBlanks(const std::string& pg, const std::string& my) {
  return my.size() > pg.size() && my.compare(0, pg.size(), pg) == 0 &&
         my.find_first_not_of(' ', pg.size()) == std::string::npos;
}

// Compares two stores' table cell by cell; reports the first differences.
// Cells whose values differ only as OnlyTrailingBlanks allows are counted in
// *trailing_blanks instead (nullptr: not allowed).
void ExpectSameTable(const TableCells& pg, const TableCells& my, const std::string& table,
                     int* trailing_blanks = nullptr) {
  SCOPED_TRACE(table);
  EXPECT_EQ(pg.size(), my.size()) << "rows";
  int reported = 0;
  for (const auto& [row, cols] : pg) {
    auto it = my.find(row);
    if (it == my.end()) {
      ADD_FAILURE() << "row " << row << " only from PostgreSQL";
      if (++reported > 10) return;
      continue;
    }
    if (cols != it->second) {
      const int before = trailing_blanks != nullptr ? *trailing_blanks : 0;
      for (const auto& [col, v] : cols) {
        auto c = it->second.find(col);
        if (c == it->second.end()) {
          ADD_FAILURE() << row << " " << col << " only from PostgreSQL: " << v;
        } else if (trailing_blanks != nullptr && OnlyTrailingBlanks(v, c->second)) {
          ++*trailing_blanks;
        } else if (c->second != v) {
          ADD_FAILURE() << row << " " << col << ": PostgreSQL " << v << " / MySQL " << c->second;
        }
      }
      for (const auto& [col, v] : it->second) {
        if (cols.count(col) == 0) ADD_FAILURE() << row << " " << col << " only from MySQL: " << v;
      }
      const bool only_blanks = trailing_blanks != nullptr && *trailing_blanks > before &&
                               cols.size() == it->second.size();
      if (!only_blanks && ++reported > 10) return;
    }
  }
  for (const auto& [row, cols] : my) {
    if (pg.count(row) == 0) {
      ADD_FAILURE() << "row " << row << " only from MySQL";
      if (++reported > 10) return;
    }
  }
}

TEST(CrossEngineTest, ChinookGivesTheSameStoreFromBothEngines) {
  WIDEN_REQUIRE_PG(pg_server);
  WIDEN_REQUIRE_MYSQL(my_server);
  const std::string pg_sql = DatasetsDir() + "/chinook/postgresql/Chinook_PostgreSql.sql";
  const std::string my_sql = DatasetsDir() + "/chinook/mysql/Chinook_MySql.sql";
  ASSERT_TRUE(std::filesystem::exists(pg_sql) && std::filesystem::exists(my_sql))
      << "the Chinook dataset is missing under " << DatasetsDir()
      << ": set WIDEN_DATASETS to the shared datasets folder";
  const std::string pg = FreshPgDatabase(pg_server, "widen_it_x_chinook");
  RunPsqlScript(pg, pg_sql);
  const std::string my = FreshMySqlDatabase(my_server, "widen_it_x_chinook");
  RunMySqlFile(my, my_sql, /*strip_database_switch=*/true);

  const std::string pg_dir = MakeTempDir(), my_dir = MakeTempDir();
  CommandResult r = Migrate(pg, SourceDir() + "/examples/chinook/mapping.yaml", pg_dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Migrate(my, SourceDir() + "/examples/chinook/mapping.mysql.yaml", my_dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // Nested JSON attributes carry the PostgreSQL names on both sides
  // (mapping.mysql.yaml renames the PascalCase columns with `as`). Keys,
  // qualifiers and every value are compared as they are.
  int trailing_blanks = 0;
  for (const std::string table : {"music:artists", "sales:invoices"}) {
    TableCells a = ReadTable("leveldb:" + pg_dir + "/store", table);
    TableCells b = ReadTable("leveldb:" + my_dir + "/store", table);
    // Both sides are parsed and printed again, so only names and values count.
    for (auto* cells : {&a, &b}) {
      for (auto& [row, cols] : *cells) {
        for (auto& [col, v] : cols) {
          if (col.rfind("a:", 0) == 0 || col.rfind("l:", 0) == 0) v = Reprinted(v);
        }
      }
    }
    EXPECT_GT(a.size(), 200u);
    ExpectSameTable(a, b, table, &trailing_blanks);
  }
  // The dataset's values with trailing blanks, in the columns mapped to cells
  // (the MySQL source keeps them; see OnlyTrailingBlanks).
  auto blanks =
      MySqlQuery(my,
                 "SELECT (SELECT COUNT(*) FROM Artist WHERE Name LIKE '% ') + "
                 "(SELECT COUNT(*) FROM Invoice i JOIN Customer c USING (CustomerId) WHERE "
                 "c.FirstName LIKE '% ' OR c.LastName LIKE '% ' OR c.Email LIKE '% ') + "
                 "(SELECT COUNT(*) FROM Invoice WHERE BillingCity LIKE '% ') + "
                 "(SELECT COUNT(*) FROM Invoice WHERE BillingCountry LIKE '% ')");
  ASSERT_EQ(blanks.size(), 1u);
  EXPECT_EQ(std::to_string(trailing_blanks), blanks[0][0]);
  auto pg_blanks = PgQuery(pg, "SELECT count(*) FROM invoice WHERE billing_city LIKE '% '");
  EXPECT_EQ(pg_blanks[0][0], "0") << "PostgreSQL stored the N'...' literals without them";
  // Spot check against the MySQL source itself: invoice 98's key and total.
  auto inv = MySqlQuery(my,
                        "SELECT CONCAT(LPAD(CustomerId, 5, '0'), '|', DATE_FORMAT(InvoiceDate, "
                        "'%Y-%m-%d %H:%i:%s'), '|', LPAD(InvoiceId, 6, '0')), CAST(Total AS CHAR) "
                        "FROM Invoice WHERE InvoiceId = 98");
  TableCells b = ReadTable("leveldb:" + my_dir + "/store", "sales:invoices");
  ASSERT_EQ(inv.size(), 1u);
  EXPECT_EQ(b[inv[0][0]]["d:total"], inv[0][1]);
}

// PostgreSQL's boolean and MySQL's BOOLEAN (= TINYINT(1)) hold the same
// facts as true/false and 1/0 (docs/types.md, "Where the two engines
// differ"): as cell text, or as members of a nested JSON object.
bool SameUpToBooleans(const std::string& pg, const std::string& my) {
  if ((pg == "true" && my == "1") || (pg == "false" && my == "0")) return true;
  auto a = nlohmann::ordered_json::parse(pg, nullptr, /*allow_exceptions=*/false);
  auto b = nlohmann::ordered_json::parse(my, nullptr, /*allow_exceptions=*/false);
  if (a.is_discarded() || b.is_discarded() || !a.is_object() || !b.is_object()) return false;
  bool any = false;
  for (auto& [k, v] : a.items()) {
    if (v.is_boolean() && b.contains(k) && b[k].is_number_integer()) {
      v = v.get<bool>() ? 1 : 0;
      any = true;
    }
  }
  return any && a == b;
}

// The target tables a mapping file names ("  - name: ns:table" lines).
std::vector<std::string> MappingTables(const std::string& mapping) {
  std::ifstream in(mapping);
  std::vector<std::string> tables;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("  - name: ", 0) == 0) tables.push_back(line.substr(10));
  }
  return tables;
}

class CrossEngineExampleTest : public ::testing::TestWithParam<std::string> {};

// Each example's schema and data in both engines, its one mapping.yaml (only
// WIDEN_SOURCE_URL differs), every version of every cell compared. Booleans
// are the one difference allowed (SameUpToBooleans).
TEST_P(CrossEngineExampleTest, GivesTheSameStoreFromBothEngines) {
  WIDEN_REQUIRE_PG(pg_server);
  WIDEN_REQUIRE_MYSQL(my_server);
  const std::string name = GetParam();
  const std::string ex = SourceDir() + "/examples/" + name + "/";
  const std::string pg = FreshPgDatabase(pg_server, "widen_it_x_" + name);
  RunPsqlFile(pg, ex + "schema.pg.sql");
  RunPsqlFile(pg, ex + "data.pg.sql");
  const std::string my = FreshMySqlDatabase(my_server, "widen_it_x_" + name);
  RunMySqlFile(my, ex + "schema.mysql.sql");
  RunMySqlFile(my, ex + "data.mysql.sql");

  const std::string pg_dir = MakeTempDir(), my_dir = MakeTempDir();
  CommandResult r = Migrate(pg, ex + "mapping.yaml", pg_dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Migrate(my, ex + "mapping.yaml", my_dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<std::string> tables = MappingTables(ex + "mapping.yaml");
  ASSERT_FALSE(tables.empty());
  for (const std::string& table : tables) {
    SCOPED_TRACE(table);
    auto a = ReadCells("leveldb:" + pg_dir + "/store", table, 1000);
    auto b = ReadCells("leveldb:" + my_dir + "/store", table, 1000);
    EXPECT_FALSE(a.empty());
    ASSERT_EQ(a.size(), b.size()) << "cells (every version)";
    int differences = 0;
    for (size_t i = 0; i < a.size() && differences < 10; ++i) {
      const bool same = a[i].row == b[i].row && a[i].column == b[i].column &&
                        a[i].timestamp_ms == b[i].timestamp_ms &&
                        (a[i].value == b[i].value || SameUpToBooleans(a[i].value, b[i].value));
      if (!same) {
        ++differences;
        ADD_FAILURE() << "cell " << i << ": PostgreSQL " << a[i].row << " " << a[i].column << " @"
                      << a[i].timestamp_ms << " = " << a[i].value << " / MySQL " << b[i].row << " "
                      << b[i].column << " @" << b[i].timestamp_ms << " = " << b[i].value;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, CrossEngineExampleTest,
                         ::testing::Values("service_orders", "bands", "applicants", "inbox",
                                           "films"));

}  // namespace
}  // namespace widen::testing
