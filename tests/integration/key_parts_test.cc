// Row key parts on both engines (docs/mapping.md "Row key", docs/types.md
// "Key parts"): a text part whose width is too narrow for a value rejects the
// row naming the width; types whose text does not sort like their values are
// refused as binary parts; messages say what is true of the value; text
// `reverse` parts are shown decoded. Expected values come from SQL on the
// source.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

enum class Engine { kPostgres, kMySql };

class KeyPartsTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    if (GetParam() == Engine::kPostgres) {
      WIDEN_REQUIRE_PG(url);
      db_ = FreshPgDatabase(url, "widen_it_keyparts");
    } else {
      WIDEN_REQUIRE_MYSQL(url);
      db_ = FreshMySqlDatabase(url, "widen_it_keyparts");
    }
    dir_ = MakeTempDir();
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
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
  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    return pg() ? PgQuery(db_, sql) : MySqlQuery(db_, sql);
  }

  // Writes the mapping (tables: ...) and runs `widen COMMAND -m it ARGS`.
  CommandResult Widen(const std::string& command, const std::string& tables,
                      const std::string& args = "") {
    std::ofstream(dir_ + "/m.yaml")
        << "source: " << db_ << "\ntarget: leveldb:" << dir_ << "/store\ntables:\n"
        << tables;
    return RunCommand(
        fmt::format("{} {} -m {} {}", WidenBinary(), command, ShellQuote(dir_ + "/m.yaml"), args));
  }

  // (row id -> reason) of a --rejects file.
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

INSTANTIATE_TEST_SUITE_P(Engines, KeyPartsTest,
                         ::testing::Values(Engine::kPostgres, Engine::kMySql),
                         [](const auto& info) {
                           return info.param == Engine::kPostgres ? "PostgreSQL" : "MySQL";
                         });

// {column: id, width: 3} with ids up to 123456 would order 005 < 1000 <
// 123456 < 999: every value wider than the width, and every negative value,
// rejects its row with a reason naming the width. `lint` warns beforehand
// from the column's range (W115), and `plan` counts the rejected rows.
TEST_P(KeyPartsTest, TextWidthTooNarrowRejectsTheRow) {
  Exec({"CREATE TABLE t (id INT PRIMARY KEY, v INT)",
        "INSERT INTO t VALUES (-5, 1), (5, 1), (999, 1), (1000, 1), (99999, 1), (123456, 1)"});
  const std::string tables = R"(  - name: t
    from: t
    families: [d]
    key: {parts: [{column: id, width: 3}]}
    columns: [v]
)";
  CommandResult r = Widen("migrate", tables);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("with width 3"), std::string::npos) << r.output;

  r = Widen("migrate", tables, "--rejects " + ShellQuote(dir_ + "/r.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rejects = Rejects(dir_ + "/r.jsonl");
  std::set<std::string> rejected, kept;
  for (const auto& row : Query("SELECT id FROM t WHERE id < 0 OR id > 999 ORDER BY id")) {
    rejected.insert("id=" + row[0]);
  }
  for (const auto& row : Query("SELECT id FROM t WHERE id BETWEEN 0 AND 999 ORDER BY id")) {
    kept.insert(fmt::format("{:03d}", std::stoi(row[0])));
  }
  ASSERT_EQ(rejects.size(), rejected.size());
  for (const auto& [row, reason] : rejects) {
    EXPECT_EQ(rejected.count(row), 1u) << row;
    EXPECT_NE(reason.find(row == "id=-5" ? "is negative: in a text key with width 3"
                                         : "more than the part's width 3"),
              std::string::npos)
        << reason;
  }
  std::set<std::string> stored;
  for (const auto& [key, cols] : ReadTable("leveldb:" + dir_ + "/store", "t")) stored.insert(key);
  EXPECT_EQ(stored, kept);

  r = Widen("lint", tables);
  EXPECT_NE(r.output.find("warning W115"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("width 3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("123456"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("-5"), std::string::npos) << r.output;

  r = Widen("plan", tables);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(fmt::format("{} rejected", rejected.size())), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("more than the part's width 3"), std::string::npos) << r.output;
}

// A type whose text does not sort like its values cannot be a binary key
// part (PostgreSQL interval; MariaDB INET6) unless the mapping says `type:
// string`; a uuid can, and its keys sort as the database sorts uuid.
TEST_P(KeyPartsTest, BinaryPartsSortLikeTheirValuesOrAreRefused) {
  if (pg()) {
    Exec({"CREATE TABLE t (id int PRIMARY KEY, d interval NOT NULL, u uuid NOT NULL)",
          "INSERT INTO t VALUES (1, '-1 day', 'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'),"
          "(2, '-2 days', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'),"
          "(3, '10 days', '00000000-0000-0000-0000-000000000001'),"
          "(4, '1 year', 'ffffffff-0000-0000-0000-000000000000'),"
          "(5, '2 days', '0a0eebc9-9c0b-4ef8-bb6d-6bb9bd380a11'), (6, '720:00:00', "
          "'f0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')"});
  } else {
    Exec({"CREATE TABLE t (id INT PRIMARY KEY, d INET6 NOT NULL, u UUID NOT NULL)",
          "INSERT INTO t VALUES (1, '::a', 'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'),"
          "(2, '::9', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'),"
          "(3, '::10', '00000000-0000-0000-0000-000000000001'),"
          "(4, '1::', 'ffffffff-0000-0000-0000-000000000000'),"
          "(5, '::2', '0a0eebc9-9c0b-4ef8-bb6d-6bb9bd380a11'),"
          "(6, '::ffff:1.2.3.4', 'f0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')"});
  }
  const std::string type = pg() ? "interval" : "inet6";
  const char* kTables = R"(  - name: t
    from: t
    families: [d]
    key: {{form: binary, parts: [{}]}}
    columns: [id]
)";
  CommandResult r = Widen("plan", fmt::format(fmt::runtime(kTables), "d"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(fmt::format("source column t.d is {}, whose text form does not sort "
                                      "like its values",
                                      type)),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("type: string"), std::string::npos) << r.output;
  r = Widen("lint", fmt::format(fmt::runtime(kTables), "d"));
  EXPECT_NE(r.output.find("error E100"), std::string::npos) << r.output;
  r = Widen("plan", fmt::format(fmt::runtime(kTables), "{column: d, type: string}"));
  EXPECT_EQ(r.exit_code, 0) << r.output;

  r = Widen("migrate", fmt::format(fmt::runtime(kTables), "u"), "-q --timestamp-ms 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::string> by_key;
  for (const auto& [key, cols] : ReadTable("leveldb:" + dir_ + "/store", "t")) {
    by_key.push_back(cols.at("d:id"));
  }
  // The uuid's 128-bit order: PostgreSQL's ORDER BY; for MariaDB, ORDER BY
  // its text (MariaDB's own ORDER BY sorts time-based UUIDs by their time).
  std::vector<std::string> by_sql;
  for (const auto& row :
       Query(pg() ? "SELECT id FROM t ORDER BY u" : "SELECT id FROM t ORDER BY CAST(u AS CHAR)")) {
    by_sql.push_back(row[0]);
  }
  EXPECT_EQ(by_key, by_sql);
}

// lint names the key parts whose bytes do not sort like their values: text
// parts over decimals, doubles and instants, and enum labels in any form
// (W116 in the row key, I117 in nested ids); padded integers, dates and
// text do sort.
TEST_P(KeyPartsTest, LintNamesPartsThatDoNotSortLikeTheirValues) {
  if (pg()) {
    Exec({"CREATE TYPE st AS ENUM ('new', 'done', 'archived')",
          "CREATE TABLE o (id int PRIMARY KEY, amount numeric(10,2) NOT NULL, "
          "at timestamptz NOT NULL, s st NOT NULL, day date NOT NULL, r real NOT NULL)",
          "CREATE TABLE l (id int PRIMARY KEY, o_id int NOT NULL, price numeric(6,2) NOT NULL)"});
  } else {
    Exec(
        {"CREATE TABLE o (id INT PRIMARY KEY, amount DECIMAL(10,2) NOT NULL, "
         "at TIMESTAMP NOT NULL, s ENUM('new', 'done', 'archived') NOT NULL, day DATE NOT NULL, "
         "r FLOAT NOT NULL)",
         "CREATE TABLE l (id INT PRIMARY KEY, o_id INT NOT NULL, price DECIMAL(6,2) NOT NULL)"});
  }
  CommandResult r = Widen("lint", R"(  - name: t
    from: o
    families: [d, l]
    key: {parts: [s, day, amount, at, r, {column: id, width: 9}]}
    columns: [day]
    nest:
      - {table: l, on: {id: o_id}, family: l, prefix: p, id: [price, {column: id, width: 9}]}
  - name: b
    from: o
    families: [d]
    key: {form: binary, parts: [s, amount, at, id]}
    columns: [day]
)");
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t p = r.output.find(what); p != std::string::npos; p = r.output.find(what, p + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("warning W116: t: row key part 's' does not sort like its values (s is an enum"),
            1u)
      << r.output;
  EXPECT_EQ(count("warning W116: t: row key part 'amount' does not sort like its values (amount "
                  "is decimal(10,2): numbers as text do not sort numerically") +
                count("warning W116: t: row key part 'amount' does not sort like its values "
                      "(amount is numeric(10,2): numbers as text do not sort numerically"),
            1u)
      << r.output;
  EXPECT_EQ(count("warning W116: t: row key part 'at' does not sort like its values (at is "), 1u)
      << r.output;
  EXPECT_EQ(count("warning W116: t: row key part 'r' does not sort like its values"), 1u)
      << r.output;
  EXPECT_EQ(count("info I117: t: nested id 'price' (prefix 'p') does not sort like its values"), 1u)
      << r.output;
  // Binary parts order numbers and instants; an enum still sorts by label.
  EXPECT_EQ(count("warning W116: b: row key part 's'"), 1u) << r.output;
  EXPECT_EQ(count("warning W116: b:"), 1u) << r.output;
  EXPECT_EQ(count("W116"), 5u) << r.output;
}

// What a rejected key value is, said truthfully: a timestamp forced to key
// type `date` is refused by the planner as a timestamp; PostgreSQL's numeric
// Infinity is not a finite number (not NaN); PostgreSQL's largest timestamp
// is kept as text, not infinite.
TEST_P(KeyPartsTest, MessagesSayWhatIsTrue) {
  if (pg()) {
    Exec({"CREATE TABLE t (id int PRIMARY KEY, n numeric NOT NULL, ts timestamp NOT NULL)",
          "INSERT INTO t VALUES (1, 'Infinity', '294276-12-31 23:59:59.999999'),"
          "(2, 'NaN', 'infinity'), (3, 1.5, '2024-01-01 00:00:00')"});
  } else {
    Exec({"CREATE TABLE t (id INT PRIMARY KEY, n DECIMAL(5,1) NOT NULL, ts DATETIME NOT NULL)",
          "INSERT INTO t VALUES (3, 1.5, '2024-01-01 00:00:00')"});
  }
  const char* kTables = R"(  - name: t_{}
    from: t
    families: [d]
    key: {{form: binary, parts: [{}]}}
    columns: [id]
)";
  CommandResult r =
      Widen("plan", fmt::format(fmt::runtime(kTables), "ts", "{column: ts, type: date}"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(fmt::format("type date cannot hold source column t.ts ({}, a timestamp "
                                      "value)",
                                      pg() ? "timestamp without time zone" : "datetime")),
            std::string::npos)
      << r.output;
  if (!pg()) return;
  r = Widen("migrate", fmt::format(fmt::runtime(kTables), "n", "n"),
            "-q --rejects " + ShellQuote(dir_ + "/n.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto rejects = Rejects(dir_ + "/n.jsonl");
  ASSERT_EQ(rejects.size(), 2u);
  EXPECT_NE(rejects["id=1"].find("value 'Infinity' is not a finite number"), std::string::npos)
      << rejects["id=1"];
  EXPECT_EQ(rejects["id=1"].find("NaN cannot"), std::string::npos) << rejects["id=1"];
  r = Widen("migrate", fmt::format(fmt::runtime(kTables), "ts", "ts"),
            "-q --rejects " + ShellQuote(dir_ + "/ts.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  rejects = Rejects(dir_ + "/ts.jsonl");
  ASSERT_EQ(rejects.size(), 2u);
  EXPECT_NE(rejects["id=1"].find("'294276-12-31 23:59:59.999999' is kept as the server's text, "
                                 "not as a timestamp"),
            std::string::npos)
      << rejects["id=1"];
  EXPECT_NE(rejects["id=2"].find("'infinity' is infinite"), std::string::npos) << rejects["id=2"];
}

// A text `reverse` part is shown by scan, get and plan as the time it holds,
// as a binary one is.
TEST_P(KeyPartsTest, ReverseTextPartsAreDecoded) {
  Exec({std::string("CREATE TABLE m (id INT PRIMARY KEY, sent_at ") +
            (pg() ? "timestamp" : "DATETIME(3)") + " NOT NULL, body VARCHAR(10))",
        "INSERT INTO m VALUES (1, '2024-01-02 03:04:05.250', 'a'), (2, '1999-12-31 23:59:59', "
        "'b')"});
  const std::string tables = R"(  - name: inbox
    from: m
    families: [d]
    key: {parts: [{column: id, width: 3}, {column: sent_at, reverse: true}]}
    columns: [body]
)";
  CommandResult r = Widen("migrate", tables, "-q --timestamp-ms 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // id, the time as text, and as ms since the epoch (what `reverse` subtracts from Long.MAX_VALUE).
  const auto rows =
      Query(pg() ? "SELECT id, to_char(sent_at, 'YYYY-MM-DD HH24:MI:SS.MS'), "
                   "floor(extract(epoch from sent_at) * 1000)::int8 FROM m ORDER BY id"
                 : "SELECT id, DATE_FORMAT(sent_at, '%Y-%m-%d %H:%i:%s.%f'), "
                   "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', sent_at) DIV 1000 FROM m "
                   "ORDER BY id");
  ASSERT_EQ(rows.size(), 2u);
  CommandResult scan = RunCommand(
      fmt::format("{} scan inbox --decode --target leveldb:{}/store", WidenBinary(), dir_));
  ASSERT_EQ(scan.exit_code, 0) << scan.output;
  CommandResult plan = Widen("plan", tables);
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  for (const auto& row : rows) {
    // widen's timestamp text: no trailing zeros in the fraction, none at all for whole seconds.
    std::string when = row[1];
    while (when.back() == '0') when.pop_back();
    if (when.back() == '.') when.pop_back();
    const std::string want = fmt::format("id={:03d} sent_at={}", std::stoi(row[0]), when);
    EXPECT_NE(scan.output.find(want), std::string::npos) << want << " in\n" << scan.output;
    EXPECT_NE(plan.output.find(want), std::string::npos) << want << " in\n" << plan.output;
    const std::string key =
        fmt::format("{:03d}|{:019d}", std::stoi(row[0]), INT64_MAX - std::stoll(row[2]));
    CommandResult get = RunCommand(fmt::format("{} get inbox {} --decode --target leveldb:{}/store",
                                               WidenBinary(), ShellQuote(key), dir_));
    ASSERT_EQ(get.exit_code, 0) << get.output;
    EXPECT_NE(get.output.find(want), std::string::npos) << want << " in\n" << get.output;
  }
}

}  // namespace
}  // namespace widen::testing
