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
#include <fmt/ranges.h>
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

// Every use of a time agrees with the source database on the same
// millisecond (common/temporal.h), before 1970 and far from it: the hbase
// codec's long, a binary `timestamp` key part (of a timestamp and of a date),
// a text `reverse` part, the cell timestamp of a version column and the
// text form. Microseconds are floored (1969-12-31 23:59:59.999999 is -1 ms,
// not 0); infinite dates and timestamps are no time for any of them.
TEST_P(CellTimestampsTest, EveryUseOfATimeAgreesWithTheSource) {
  std::vector<std::string> rows = {"(1, '1900-01-01 00:00:00.000001', '1900-01-01')",
                                   "(2, '1969-12-31 23:59:59.9995', '1969-12-31')",
                                   "(3, '1969-12-31 23:59:59.999999', '1969-12-31')",
                                   "(4, '1970-01-01 00:00:00', '1970-01-01')",
                                   "(5, '1970-01-01 00:00:00.000999', '1970-01-02')",
                                   "(6, '2024-02-29 12:34:56.789012', '2024-02-29')",
                                   "(7, '9999-12-31 23:59:59.999999', '9999-12-31')"};
  if (pg()) {
    rows.push_back("(8, '0001-01-01 00:00:00.5 BC', '4713-11-24 BC')");
    rows.push_back("(9, '200000-01-01 00:00:00.001', '5874897-12-31')");
    rows.push_back("(10, 'infinity', '-infinity')");
    rows.push_back("(11, '-infinity', 'infinity')");
    PgQuery(db_, "CREATE TABLE tm (id int PRIMARY KEY, ts timestamp(6) NOT NULL, d date NOT NULL)");
    PgQuery(db_, "INSERT INTO tm VALUES " + fmt::format("{}", fmt::join(rows, ", ")));
  } else {
    MySqlQuery(db_,
               {"CREATE TABLE tm (id INT PRIMARY KEY, ts DATETIME(6) NOT NULL, d DATE NOT "
                "NULL)",
                "INSERT INTO tm VALUES " + fmt::format("{}", fmt::join(rows, ", ")), "SELECT 1"});
  }
  const std::string yaml = R"(tables:
  - name: a
    from: tm
    families: [d]
    key: {form: binary, parts: [ts, {column: id, type: int32}]}
    columns:
      - {column: ts, to: "d:ms", codec: hbase, type: long}
      - {column: d, to: "d:dms", codec: hbase, type: long}
      - {column: ts, to: "d:t"}
  - name: b
    from: tm
    families: [d]
    key: {form: binary, parts: [{column: d, type: timestamp}, {column: id, type: int32}]}
    columns: [id]
  - name: c
    from: tm
    families: [d]
    key: {parts: [{column: ts, reverse: true}, id]}
    columns: [id]
  - name: v
    from: tm
    families: [d]
    key: {parts: [{column: id, width: 3}]}
    version: ts
    columns: [id]
)";
  CommandResult r = Widen("migrate", yaml, "-q --rejects " + ShellQuote(dir_ + "/r.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::map<std::string, std::map<std::string, std::string>> rejects;  // table -> row -> reason
  {
    std::ifstream in(dir_ + "/r.jsonl");
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      rejects[j.at("table").get<std::string>()][j.at("row").get<std::string>()] = j.at("reason");
    }
  }
  // (id, ms of ts floored, ms of d, text of ts) by SQL, for the finite rows.
  const auto expected = Query(
      pg() ? "SELECT id, floor(extract(epoch FROM ts) * 1000)::int8, " + Ms("d") +
                 ", CASE WHEN ts >= '0001-01-01' THEN rtrim(rtrim(to_char(ts, "
                 "'YYYY-MM-DD HH24:MI:SS.US'), '0'), '.') ELSE '' END "
                 "FROM tm WHERE isfinite(ts) AND isfinite(d) ORDER BY id"
           : "SELECT id, FLOOR(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', ts) / 1000), " +
                 Ms("d") +
                 ", TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM DATE_FORMAT(ts, "
                 "'%Y-%m-%d %H:%i:%s.%f'))) FROM tm ORDER BY id");
  ASSERT_EQ(expected.size(), 7u + (pg() ? 2 : 0));
  const std::string store = "leveldb:" + dir_ + "/store";
  const TableCells a = ReadTable(store, "a"), b = ReadTable(store, "b"), c = ReadTable(store, "c");
  // Bytes.toBytes(long) and a binary timestamp part: 8 bytes big-endian, the
  // part with its sign bit flipped (docs/format.md).
  auto be64 = [](uint64_t v) {
    std::string s(8, '\0');
    for (int i = 7; i >= 0; --i, v >>= 8) s[i] = static_cast<char>(v & 0xff);
    return s;
  };
  auto part = [&](int64_t v) { return be64(static_cast<uint64_t>(v) ^ (uint64_t{1} << 63)); };
  auto id_part = [](int id) {
    const uint32_t u = static_cast<uint32_t>(id) ^ 0x80000000u;
    return std::string{static_cast<char>(u >> 24), static_cast<char>(u >> 16),
                       static_cast<char>(u >> 8), static_cast<char>(u)};
  };
  size_t later = 0;
  for (const auto& row : expected) {
    const int id = std::stoi(row[0]);
    const int64_t ms = std::stoll(row[1]), dms = std::stoll(row[2]);
    SCOPED_TRACE(fmt::format("id {}: {} ms, date {} ms", id, ms, dms));
    const auto ra = a.find(part(ms) + id_part(id));
    ASSERT_NE(ra, a.end());
    EXPECT_EQ(ra->second.at("d:ms"), be64(static_cast<uint64_t>(ms)));
    EXPECT_EQ(ra->second.at("d:dms"), be64(static_cast<uint64_t>(dms)));
    if (!row[3].empty()) {
      EXPECT_EQ(ra->second.at("d:t"), row[3]);
    }
    EXPECT_EQ(b.count(part(dms) + id_part(id)), 1u);
    const std::string reversed = fmt::format("{:019d}|{}", INT64_MAX - ms, id);
    const auto cells = ReadCells(store, "v", 1, fmt::format("{:03d}", id));
    if (ms < 0) {
      EXPECT_EQ(c.count(reversed), 0u);
      EXPECT_NE(rejects["c"]["id=" + row[0]].find("is before 1970 and cannot be reversed"),
                std::string::npos)
          << rejects["c"]["id=" + row[0]];
      EXPECT_TRUE(cells.empty());
      EXPECT_NE(rejects["v"]["id=" + row[0]].find(fmt::format("({} ms), before 1970", ms)),
                std::string::npos)
          << rejects["v"]["id=" + row[0]];
      continue;
    }
    ++later;
    EXPECT_EQ(c.count(reversed), 1u);
    ASSERT_EQ(cells.size(), 1u);
    EXPECT_EQ(cells[0].timestamp_ms, ms);
  }
  EXPECT_EQ(a.size(), expected.size());
  EXPECT_EQ(b.size(), expected.size());
  EXPECT_EQ(c.size(), later);
  EXPECT_EQ(ReadCells(store, "v").size(), later);
  // The infinities: no millisecond, in a timestamp's key part or a date's.
  if (pg()) {
    for (const char* id : {"id=10", "id=11"}) {
      EXPECT_NE(rejects["a"][id].find("is infinite"), std::string::npos) << rejects["a"][id];
      EXPECT_NE(rejects["b"][id].find("is infinite"), std::string::npos) << rejects["b"][id];
    }
  }
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
