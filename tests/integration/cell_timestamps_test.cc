// Cell timestamps taken from source values on both engines
// (transform/cell_timestamp.h, docs/mapping.md "Timestamps"): HBase refuses
// negative timestamps and reads Long.MAX_VALUE as "now", so a version value
// before 1970 or at Long.MAX_VALUE rejects its row — for a table's, a
// column's and a nest's version column alike — naming the column and the
// value; `lint` warns from the column's range (W114); the run's own
// timestamp (--timestamp-ms, timestamp_ms) is refused outside the range.
// Expected values come from SQL on the source.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

enum class Engine { kPostgres, kMySql };

class CellTimestampsTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    const std::vector<std::string> schema = {
        "CREATE TABLE emp (id INT PRIMARY KEY, birth DATE NOT NULL, v BIGINT NOT NULL, "
        "name VARCHAR(10))",
        "CREATE TABLE sal (id INT PRIMARY KEY, emp_id INT NOT NULL, from_date DATE NOT NULL, "
        "amount INT)",
        "INSERT INTO emp VALUES (1, '1953-09-02', 5, 'a'), (2, '1990-01-01', "
        "-9223372036854775808, 'b'), (3, '1991-01-01', 9223372036854775807, 'c'), "
        "(4, '1992-01-01', 1000, 'd'), (5, '1970-01-01', 0, 'e')",
        "INSERT INTO sal VALUES (1, 4, '1969-12-31', 100), (2, 4, '1970-01-01', 200), "
        "(3, 5, '2000-02-29', 300)"};
    if (GetParam() == Engine::kPostgres) {
      WIDEN_REQUIRE_PG(url);
      db_ = FreshPgDatabase(url, "widen_it_cell_ts");
      for (const auto& s : schema) PgQuery(db_, s);
    } else {
      WIDEN_REQUIRE_MYSQL(url);
      db_ = FreshMySqlDatabase(url, "widen_it_cell_ts");
      std::vector<std::string> all = schema;
      all.push_back("SELECT 1");
      MySqlQuery(db_, all);
    }
    dir_ = MakeTempDir();
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  bool pg() const { return GetParam() == Engine::kPostgres; }
  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    return pg() ? PgQuery(db_, sql) : MySqlQuery(db_, sql);
  }
  // ms since the epoch of a DATE column, by SQL.
  std::string Ms(const std::string& column) {
    return pg() ? fmt::format("(({} - date '1970-01-01')::int8 * 86400000)", column)
                : fmt::format("(DATEDIFF({}, '1970-01-01') * 86400000)", column);
  }

  CommandResult Widen(const std::string& command, const std::string& yaml,
                      const std::string& args = "") {
    std::ofstream(dir_ + "/m.yaml")
        << "source: " << db_ << "\ntarget: leveldb:" << dir_ << "/store\n"
        << yaml;
    return RunCommand(
        fmt::format("{} {} -m {} {}", WidenBinary(), command, ShellQuote(dir_ + "/m.yaml"), args));
  }

  // row id ("id=2") -> reason, of a --rejects file.
  std::map<std::string, std::string> Rejects(const std::string& file) {
    std::map<std::string, std::string> out;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      out[j.at("row").get<std::string>()] = j.at("reason").get<std::string>();
    }
    return out;
  }

  std::string db_, dir_;
};

INSTANTIATE_TEST_SUITE_P(Engines, CellTimestampsTest,
                         ::testing::Values(Engine::kPostgres, Engine::kMySql),
                         [](const auto& info) {
                           return info.param == Engine::kPostgres ? "PostgreSQL" : "MySQL";
                         });

TEST_P(CellTimestampsTest, VersionsBefore1970OrAtLongMaxRejectTheRow) {
  const std::string yaml = R"(tables:
  - name: by_birth
    from: emp
    families: [{name: d, versions: 5}]
    key: {parts: [{column: id, width: 3}]}
    version: birth
    columns: [name]
  - name: by_v
    from: emp
    families: [{name: d, versions: 5}]
    key: {parts: [{column: id, width: 3}]}
    columns: [{column: name, version: v}]
  - name: pay
    from: emp
    families: [{name: d, versions: 5}, {name: s, versions: 5}]
    key: {parts: [{column: id, width: 3}]}
    columns: [name]
    nest:
      - {table: sal, on: {id: emp_id}, family: s, prefix: p, id: [id], version: from_date,
         columns: [amount]}
)";
  // Without --rejects the first such row stops the run, naming column and value.
  CommandResult r = Widen("migrate", yaml, "--timestamp-ms 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("version column birth is 1953-09-02"), std::string::npos) << r.output;

  r = Widen("migrate", yaml, "-q --timestamp-ms 1 --rejects " + ShellQuote(dir_ + "/r.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::map<std::string, std::map<std::string, std::string>> rejects;  // table -> row -> reason
  {
    std::ifstream in(dir_ + "/r.jsonl");
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      rejects[j.at("table").get<std::string>()][j.at("row").get<std::string>()] = j.at("reason");
    }
  }
  // by_birth: the rows born before 1970, by SQL.
  const auto before = Query("SELECT id, birth, " + Ms("birth") +
                            " FROM emp WHERE birth < '1970-01-01' ORDER BY id");
  ASSERT_EQ(rejects["by_birth"].size(), before.size());
  for (const auto& row : before) {
    const std::string& reason = rejects["by_birth"]["id=" + row[0]];
    EXPECT_NE(
        reason.find(fmt::format("version column birth is {} ({} ms), before 1970", row[1], row[2])),
        std::string::npos)
        << reason;
  }
  // by_v: the integer versions below 0 or at Long.MAX_VALUE.
  const auto out_of_range =
      Query("SELECT id, v FROM emp WHERE v < 0 OR v = 9223372036854775807 ORDER BY id");
  ASSERT_EQ(rejects["by_v"].size(), out_of_range.size());
  for (const auto& row : out_of_range) {
    const std::string& reason = rejects["by_v"]["id=" + row[0]];
    EXPECT_NE(reason.find(fmt::format("version column v of emp.name is {}", row[1])),
              std::string::npos)
        << reason;
    EXPECT_NE(reason.find(row[1][0] == '-' ? "before 1970" : "LATEST_TIMESTAMP"), std::string::npos)
        << reason;
  }
  // pay: each salary dated before 1970 is rejected alone (its parent row
  // keeps its other cells).
  const auto salaries =
      Query("SELECT id, emp_id, from_date FROM sal WHERE from_date < '1970-01-01' ORDER BY id");
  ASSERT_EQ(rejects["pay"].size(), salaries.size());
  for (const auto& row : salaries) {
    const std::string& reason =
        rejects["pay"][fmt::format("sal (id={}) in source row id={} of 'emp'", row[0], row[1])];
    EXPECT_NE(reason.find(fmt::format("version column from_date is {}", row[2])), std::string::npos)
        << reason;
  }
  // Written cells carry the version's ms, by SQL.
  for (const auto& row :
       Query("SELECT id, " + Ms("birth") + " FROM emp WHERE birth >= '1970-01-01' ORDER BY id")) {
    const auto cells = ReadCells("leveldb:" + dir_ + "/store", "by_birth", 1,
                                 fmt::format("{:03d}", std::stoi(row[0])));
    ASSERT_EQ(cells.size(), 1u) << row[0];
    EXPECT_EQ(cells[0].timestamp_ms, std::stoll(row[1]));
  }

  // lint warns from the columns' ranges, before any row moves.
  r = Widen("lint", yaml);
  EXPECT_NE(
      r.output.find("warning W114: by_birth: version column emp.birth goes back to 1953-09-02"),
      std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("warning W114: by_v: version column emp.v goes back to "
                          "-9223372036854775808, before 1970: HBase refuses negative cell "
                          "timestamps and reaches 9223372036854775807"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("warning W114: pay: version column sal.from_date goes back to "
                          "1969-12-31"),
            std::string::npos)
      << r.output;
}

TEST_P(CellTimestampsTest, TheRunsTimestampIsRefusedOutsideTheRange) {
  const std::string yaml = R"(tables:
  - name: t
    from: emp
    families: [d]
    key: {parts: [{column: id, width: 3}]}
    columns: [name]
)";
  CommandResult r = Widen("migrate", yaml, "--timestamp-ms -1000");
  EXPECT_NE(r.exit_code, 0) << r.output;
  r = Widen("migrate", yaml, "--timestamp-ms 9223372036854775807");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--timestamp-ms"), std::string::npos) << r.output;
  r = Widen("plan", yaml, "--timestamp-ms 9223372036854775807");
  EXPECT_NE(r.exit_code, 0) << r.output;
  r = Widen("migrate", "timestamp_ms: 9223372036854775807\n" + yaml);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("m.yaml:3:15: 'timestamp_ms'"), std::string::npos) << r.output;
  r = Widen("migrate", "timestamp_ms: 9223372036854775806\n" + yaml, "-q");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto cells = ReadCells("leveldb:" + dir_ + "/store", "t");
  ASSERT_FALSE(cells.empty());
  EXPECT_EQ(cells[0].timestamp_ms, INT64_MAX - 1);
}

}  // namespace
}  // namespace widen::testing
