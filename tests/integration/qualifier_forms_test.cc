// Nest ids of structured types after prefixes, on both engines: the
// qualifier check models a uuid, a date, a timestamp and an integer as
// docs/types.md writes them, so nests whose qualifiers cannot collide
// (prefix `a` + a uuid beside prefix `ab` + an integer, `d` + a date beside
// `d1` + an integer) migrate with every cell, and a design that can collide
// (`d` + a date beside `d2` + free text) is still refused before the target
// is touched. Expected qualifiers and counts come from SQL on the source.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

class QualifierFormsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    if (pg()) {
      const std::string url = PgUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_PG_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_PG_URL not set";
      }
      db_ = FreshPgDatabase(url, "widen_it_qforms");
      PgQuery(db_, R"SQL(
        CREATE TABLE p (id int PRIMARY KEY);
        CREATE TABLE c (id int PRIMARY KEY, p_id int NOT NULL REFERENCES p, u uuid NOT NULL,
                        d date NOT NULL, ts timestamp NOT NULL, tz timestamptz NOT NULL,
                        n int NOT NULL, code varchar(10) NOT NULL);
        CREATE INDEX ON c (p_id);
      )SQL");
    } else {
      const std::string url = MySqlUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_MYSQL_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_MYSQL_URL not set";
      }
      db_ = FreshMySqlDatabase(url, "widen_it_qforms");
      MySqlQuery(db_, std::vector<std::string>{
                          "CREATE TABLE p (id INT PRIMARY KEY)",
                          "CREATE TABLE c (id INT PRIMARY KEY, p_id INT NOT NULL, u UUID NOT NULL, "
                          "d DATE NOT NULL, ts DATETIME NOT NULL, tz TIMESTAMP NOT NULL, n INT NOT "
                          "NULL, code VARCHAR(10) NOT NULL, KEY (p_id))",
                          "SELECT 1"});
    }
    // Upper-case uuid input (stored as the uuid; printed lower case), ids
    // that share leading characters with the other nests' prefixes.
    Exec("INSERT INTO p VALUES (1), (2), (3)");
    Exec(
        "INSERT INTO c VALUES "
        "(1, 1, 'B0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '1999-12-31', '2020-01-01 10:00:00', "
        "'2020-01-01 10:00:00', 1, 'x'), "
        "(2, 1, 'b1eebc99-9c0b-4ef8-bb6d-6bb9bd380a12', '2000-02-29', '2021-06-30 23:59:59', "
        "'2038-01-19 03:14:07', -5, 'y'), "
        "(3, 1, '11111111-1111-1111-1111-111111111111', '1111-11-11', '1999-01-01 00:00:00', "
        "'1999-01-01 00:00:00', 11, 'z'), "
        "(4, 2, 'ab000000-0000-0000-0000-000000000000', '2024-01-01', '2024-01-01 00:00:00', "
        "'1970-01-01 00:00:01', 1999, 'w'), "
        "(5, 2, 'deadbeef-0000-4000-8000-000000000001', '2024-01-02', '2024-01-02 00:00:00', "
        "'2024-01-02 00:00:00', 2, 'v')");
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  bool pg() const { return GetParam() == "pg"; }
  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    return pg() ? PgQuery(db_, sql) : MySqlQuery(db_, sql);
  }
  void Exec(const std::string& sql) { Query(sql); }

  std::string Mapping(const std::string& nests) {
    const std::string path = dir_ + "/m.yaml";
    std::ofstream(path) << "source: " << db_ << "\ntarget: leveldb:" << store() << R"(
tables:
  - name: t
    from: p
    families: [d]
    key: {parts: [id]}
    nest:
)" << nests;
    return path;
  }
  std::string store() const { return dir_ + "/store"; }
  CommandResult Widen(const std::string& args) { return RunCommand(WidenBinary() + " " + args); }

  std::string dir_, db_;
};

// prefix, id column, and the SQL text of the qualifier (the id as
// docs/types.md writes it: uuid lower case, dates YYYY-MM-DD, DATETIME /
// timestamp "YYYY-MM-DD HH:MM:SS", instants in UTC "YYYY-MM-DDTHH:MM:SSZ").
struct Nest {
  const char* prefix;
  const char* column;
  const char* pg_text;
  const char* my_text;
};
const Nest kNests[] = {
    {"a", "u", "u::text", "u"},
    {"ab", "n", "n::text", "n"},
    {"d", "d", "d::text", "d"},
    {"d1", "n", "n::text", "n"},
    {"t", "ts", "ts::text", "ts"},
    {"t2", "n", "n::text", "n"},
    {"z", "tz", "to_char(tz AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')",
     "DATE_FORMAT(tz, '%Y-%m-%dT%H:%i:%sZ')"},
    {"z2", "n", "n::text", "n"},
};

TEST_P(QualifierFormsTest, StructuredIdsThatCannotCollideMigrateWithEveryCell) {
  std::string nests;
  for (const Nest& n : kNests) {
    nests += fmt::format(
        "      - {{table: c, on: {{id: p_id}}, family: d, prefix: {}, id: [{}], columns: "
        "[code]}}\n",
        n.prefix, n.column);
  }
  const std::string m = Mapping(nests);
  CommandResult plan = Widen("plan -m " + m);
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  CommandResult run = Widen("migrate -q -m " + m);
  ASSERT_EQ(run.exit_code, 0) << run.output;

  // The cells SQL says: per child and nest, row key p_id, qualifier prefix +
  // the id's text, value {"code": code}.
  std::map<std::string, std::string> expected;
  for (const Nest& n : kNests) {
    const std::string sql =
        pg() ? fmt::format("SELECT p_id::text, '{}' || {}, code FROM c", n.prefix, n.pg_text)
             : fmt::format("SELECT p_id, CONCAT('{}', {}), code FROM c", n.prefix, n.my_text);
    for (const auto& r : Query(sql)) {
      nlohmann::ordered_json j;
      j["code"] = r[2];
      expected[r[0] + "|d:" + r[1]] = j.dump();
    }
  }
  const int64_t children = std::stoll(Query("SELECT count(*) FROM c").at(0).at(0));
  ASSERT_EQ(expected.size(), static_cast<size_t>(children) * std::size(kNests))
      << "the design's qualifiers are distinct in SQL";
  std::map<std::string, std::string> got;
  for (const auto& [row, cols] : ReadTable("leveldb:" + store(), "t")) {
    for (const auto& [col, value] : cols) got[row + "|" + col] = value;
  }
  EXPECT_EQ(got, expected);
}

TEST_P(QualifierFormsTest, ADesignThatCanCollideIsStillRefused) {
  // `d` + a date and `d2` + free text: 'd2000-02-29' is both the date
  // 2000-02-29 and the code '000-02-29'.
  const std::string m = Mapping(
      "      - {table: c, on: {id: p_id}, family: d, prefix: d, id: [d], columns: [code]}\n"
      "      - {table: c, on: {id: p_id}, family: d, prefix: d2, id: [code], columns: [n]}\n");
  for (const std::string cmd : {"lint", "plan", "migrate"}) {
    SCOPED_TRACE(cmd);
    CommandResult r = Widen(cmd + " -m " + m);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(m + ":10:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("can write the same qualifier, e.g. 'd2"), std::string::npos)
        << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(store())) << "nothing may be created";
}

INSTANTIATE_TEST_SUITE_P(Engines, QualifierFormsTest, ::testing::Values("pg", "mysql"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace widen::testing
