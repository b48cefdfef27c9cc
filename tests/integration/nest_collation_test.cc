// Nested children are matched to their parents as the database's `=` matches
// them, under every collation and padding rule of both engines: the cells a
// nest writes are the pairs a SQL join of the two tables gives, and the
// orphans are the child rows the join leaves out (docs/types.md, "Reading
// order and paging"). Also: MySQL pages a text-keyed table by its index.
//
// Each case runs the assembler in-process over a real server (pages of a few
// rows, so that page edges fall between equal keys) and compares with SQL.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "common/cell_sink.h"
#include "extract/source.h"
#include "mapping/mapping.h"
#include "tests/integration/source_scan.h"
#include "tests/integration/test_env.h"
#include "transform/assembler.h"
#include "transform/parallel.h"
#include "transform/plan.h"

namespace widen::testing {
namespace {

// Keeps the (row key, qualifier) pairs of the nest family's cells.
class PairSink : public CellSink {
 public:
  explicit PairSink(std::set<std::string>* pairs, std::mutex* mu) : pairs_(pairs), mu_(mu) {}
  Status Put(const CellView& c) override {
    if (c.family == "n") {
      std::lock_guard<std::mutex> lock(*mu_);
      pairs_->insert(std::string(c.row) + "|" + std::string(c.qualifier));
    }
    ++stats_.cells;
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }
  const SinkStats& stats() const override { return stats_; }

 private:
  std::set<std::string>* pairs_;
  std::mutex* mu_;
  SinkStats stats_;
};

struct NestRun {
  Status status;
  TableStats stats;
  std::set<std::string> pairs;  // "row key|qualifier" of the nest cells
};

// Plans `yaml` (one target table) on `url` and assembles it with `jobs`
// parallel jobs, reading `fetch_rows` rows per page.
NestRun RunNest(const std::string& url, const std::string& yaml, int fetch_rows = 3, int jobs = 1) {
  NestRun out;
  auto mapping = ParseMapping("source: " + url + "\n" + yaml, "nest.yaml");
  if (!mapping.ok()) {
    out.status = mapping.status();
    return out;
  }
  SourceOptions so;
  so.fetch_rows = fetch_rows;
  auto source = Source::Open(url, so);
  if (!source.ok()) {
    out.status = source.status();
    return out;
  }
  auto schema = (*source)->Introspect();
  if (!schema.ok()) {
    out.status = schema.status();
    return out;
  }
  auto plan = Plan::Make(*mapping, *schema, source->get());
  if (!plan.ok()) {
    out.status = plan.status();
    return out;
  }
  const TablePlan& tp = plan->tables.front();
  for (const ScanSpec* scan : {&tp.scan}) {
    out.status = (*source)->CheckScan(*scan);
    if (!out.status.ok()) return out;
  }
  for (const auto& n : tp.nests) {
    out.status = (*source)->CheckScan(n.scan);
    if (!out.status.ok()) return out;
  }
  std::mutex mu;
  auto split = SplitRows(tp, source->get(), jobs);
  if (!split.ok()) {
    out.status = split.status();
    return out;
  }
  std::vector<std::unique_ptr<Source>> siblings;
  std::vector<Source*> sources{source->get()};
  if (split->ranges.size() > 1) {
    auto s =
        (*source)->OpenSiblings(static_cast<int>(split->ranges.size()) - 1, SourceReads{{}, true});
    if (!s.ok()) {
      out.status = s.status();
      return out;
    }
    siblings = std::move(*s);
    for (auto& x : siblings) sources.push_back(x.get());
  }
  AssembleOptions ao;
  ao.timestamp_ms = 1;
  out.status = RunJobs(
      tp, *split, sources,
      [&]() -> Result<std::unique_ptr<CellSink>> {
        return std::unique_ptr<CellSink>(new PairSink(&out.pairs, &mu));
      },
      ao, &out.stats);
  return out;
}

// The mapping: parent p keyed by "p|" + `key` (text form), its children c nested
// under it on `on` with qualifier "c" + id, in family n.
std::string Mapping(const std::string& on, const std::string& key = "code") {
  return fmt::format(R"YAML(
tables:
  - name: t:p
    from: p
    families: [{{name: d}}, {{name: n}}]
    key:
      parts: [{{literal: "p"}}, {{column: {}, on_null: reject}}]
    columns:
      - {{column: {}, to: "d:k"}}
    nest:
      - table: c
        on: {}
        family: n
        prefix: c
        id: [id]
)YAML",
                     key, key, on);
}

// Parents and children with case, accents, trailing spaces and blanks, tabs
// (which sort below a space), an expansion (ß / ss), empty strings, NULLs and
// children without a parent. The parents are distinct in every collation
// below.
const std::vector<std::string> kParents = {"abc", "x", "é", "ss", "a", "a\t", "", "zz", "Ω"};
const std::vector<std::string> kChildren = {
    "abc", "ABC", "abc ", "Abc  ",   "x",  "X",   "e",   "é",    "É",  "ss",
    "ß",   "SS",  "a",    "A",       "a ", "a\t", "A\t", "a\t ", "",   "  ",
    "zz",  "ZZ",  "zzz",  "nomatch", "Ω",  "ω",   "ÁBC", "x ",   "\tx"};

std::string MyLiteral(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'' || ch == '\\') out.push_back('\\');
    if (ch == '\t') {
      out += "\\t";
      continue;
    }
    out.push_back(ch);
  }
  return out + "'";
}

std::string PgLiteral(const std::string& s) {
  std::string out = "E'";
  for (char ch : s) {
    if (ch == '\'' || ch == '\\') out.push_back(ch);
    if (ch == '\t') {
      out += "\\t";
      continue;
    }
    out.push_back(ch);
  }
  return out + "'";
}

// "row key|qualifier" pairs of Mapping() from SQL rows (parent key, child id).
std::set<std::string> Pairs(const std::vector<std::vector<std::string>>& rows) {
  std::set<std::string> out;
  for (const auto& r : rows) out.insert("p|" + r[0] + "|c" + r[1]);
  return out;
}

std::string Show(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += "[" + x + "] ";
  return out;
}

class MySqlNestCollationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WIDEN_REQUIRE_MYSQL(url);
    db_ = FreshMySqlDatabase(url, "widen_it_nestcoll");
  }

  // Creates p (code PRIMARY KEY) and c (id, code) with the given column
  // types, loads kParents and kChildren (those the type can hold) and a NULL
  // child, and checks the nest against SQL.
  void CheckNest(const std::string& parent_type, const std::string& child_type,
                 bool latin1 = false) {
    SCOPED_TRACE(parent_type + " / " + child_type);
    std::vector<std::string> sql = {
        "DROP TABLE IF EXISTS c", "DROP TABLE IF EXISTS p",
        "CREATE TABLE p (code " + parent_type + " PRIMARY KEY)",
        "CREATE TABLE c (id INT PRIMARY KEY, code " + child_type + ", KEY (code))"};
    auto fits = [&](const std::string& v) {
      return !latin1 || (v.find("Ω") == std::string::npos && v.find("ω") == std::string::npos);
    };
    std::string values;
    for (const auto& v : kParents) {
      if (fits(v)) values += (values.empty() ? "(" : ", (") + MyLiteral(v) + ")";
    }
    // Parents equal under the collation (ignorable characters) are left out.
    sql.push_back("INSERT IGNORE INTO p VALUES " + values);
    values.clear();
    int id = 0;
    for (const auto& v : kChildren) {
      ++id;
      if (fits(v))
        values += fmt::format("{}({}, {})", values.empty() ? "" : ", ", id, MyLiteral(v));
    }
    values += fmt::format(", ({}, NULL)", ++id);
    sql.push_back("INSERT INTO c VALUES " + values);
    sql.push_back("SELECT 1");
    MySqlQuery(db_, sql);
    const auto expected =
        Pairs(MySqlQuery(db_, "SELECT p.code, c.id FROM p JOIN c ON c.code = p.code"));
    // A LEFT JOIN: MariaDB's NOT EXISTS (a unique_subquery on the primary
    // key) disagrees with its own join when the collations differ.
    const auto orphans = MySqlQuery(db_,
                                    "SELECT COUNT(*) FROM c LEFT JOIN p ON p.code = c.code WHERE "
                                    "p.code IS NULL AND c.code IS NOT NULL");
    for (int fetch : {1, 3, 1000}) {
      SCOPED_TRACE(fetch);
      NestRun r = RunNest(db_, Mapping("{code: code}"), fetch);
      ASSERT_TRUE(r.status.ok()) << r.status.ToString();
      EXPECT_EQ(r.pairs, expected) << "widen: " << Show(r.pairs) << "\nSQL: " << Show(expected);
      EXPECT_EQ(std::to_string(r.stats.orphans), orphans[0][0]);
    }
  }

  std::string db_;
};

TEST_F(MySqlNestCollationTest, ChildrenEqualUnderTheDefaultCollationAreNested) {
  // The reported case: utf8mb4_general_ci, the children 'abc', 'ABC', 'abc '
  // and 'X' of the parents 'abc' and 'x', with a foreign key.
  MySqlQuery(db_,
             std::vector<std::string>{
                 "CREATE TABLE p (code VARCHAR(10) COLLATE utf8mb4_general_ci PRIMARY KEY)",
                 "CREATE TABLE c (id INT PRIMARY KEY, code VARCHAR(10) COLLATE "
                 "utf8mb4_general_ci, FOREIGN KEY (code) REFERENCES p(code))",
                 "INSERT INTO p VALUES ('abc'), ('x')",
                 "INSERT INTO c VALUES (1,'abc'), (2,'ABC'), (3,'abc '), (4,'X')", "SELECT 1"});
  const auto expected =
      Pairs(MySqlQuery(db_, "SELECT p.code, c.id FROM p JOIN c ON c.code = p.code"));
  ASSERT_EQ(expected.size(), 4u);
  NestRun r = RunNest(db_, Mapping("{code: code}"));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.pairs, expected) << Show(r.pairs);
  EXPECT_EQ(r.stats.orphans, 0u);
}

TEST_F(MySqlNestCollationTest, EveryCollationAndPaddingRule) {
  // PAD SPACE and NO PAD, case- and accent-insensitive, binary, UCA 14
  // (MariaDB's counterpart of MySQL's utf8mb4_0900), latin1.
  for (const std::string coll :
       {"utf8mb4_general_ci", "utf8mb4_bin", "utf8mb4_nopad_bin", "utf8mb4_general_nopad_ci",
        "utf8mb4_unicode_ci", "utf8mb4_unicode_520_nopad_ci", "utf8mb4_uca1400_ai_ci",
        "utf8mb4_uca1400_as_cs"}) {
    const std::string t = "VARCHAR(10) CHARACTER SET utf8mb4 COLLATE " + coll;
    CheckNest(t, t);
  }
  CheckNest("VARCHAR(10) CHARACTER SET latin1", "VARCHAR(10) CHARACTER SET latin1", true);
  // CHAR(n) (PAD SPACE, blanks dropped on read) with VARCHAR, and TEXT
  // children (no declared length to pad to).
  CheckNest("CHAR(8) COLLATE utf8mb4_general_ci", "VARCHAR(10) COLLATE utf8mb4_general_ci");
  CheckNest("VARCHAR(10) COLLATE utf8mb4_general_ci", "TEXT COLLATE utf8mb4_general_ci");
  // Bytes compare as bytes.
  CheckNest("VARBINARY(10)", "VARBINARY(12)");
}

TEST_F(MySqlNestCollationTest, MixedCollationsCompareAsTheServerDerives) {
  // latin1 with utf8mb4: compared in utf8mb4; a _ci with a _bin: in _bin.
  CheckNest("VARCHAR(10) COLLATE utf8mb4_general_ci", "VARCHAR(10) CHARACTER SET latin1", true);
  CheckNest("VARCHAR(10) COLLATE utf8mb4_general_ci", "VARCHAR(10) COLLATE utf8mb4_bin");
  CheckNest("VARCHAR(10) COLLATE utf8mb4_bin", "VARCHAR(10) COLLATE utf8mb4_unicode_ci");
}

TEST_F(MySqlNestCollationTest, ColumnsTheServerCannotCompareAreRefusedBeforeReading) {
  MySqlQuery(db_,
             std::vector<std::string>{
                 "CREATE TABLE p (code VARCHAR(10) COLLATE utf8mb4_general_ci PRIMARY KEY)",
                 "CREATE TABLE c (id INT PRIMARY KEY, code VARCHAR(10) COLLATE "
                 "utf8mb4_unicode_ci)",
                 "INSERT INTO p VALUES ('abc')", "INSERT INTO c VALUES (1, 'abc')", "SELECT 1"});
  NestRun r = RunNest(db_, Mapping("{code: code}"));
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument) << r.status.ToString();
  EXPECT_NE(r.status.message().find("p.code = c.code"), std::string::npos) << r.status.ToString();
  EXPECT_NE(r.status.message().find("Illegal mix of collations"), std::string::npos)
      << r.status.ToString();
  EXPECT_TRUE(r.pairs.empty());
  // The commands: lint reports it (E100), plan and migrate stop on it before
  // the target is created (exit 2, a mapping error).
  const std::string dir = MakeTempDir();
  {
    std::ofstream f(dir + "/m.yaml");
    f << "source: " << db_ << "\n" << Mapping("{code: code}");
  }
  for (const std::string cmd : {"lint", "plan", "migrate"}) {
    SCOPED_TRACE(cmd);
    CommandResult c = RunCommand(
        fmt::format("{} {} -m {}{}", WidenBinary(), cmd, ShellQuote(dir + "/m.yaml"),
                    cmd == "migrate" ? " --target leveldb:" + dir + "/s" : std::string()));
    EXPECT_EQ(c.exit_code, 2) << c.output;
    EXPECT_NE(c.output.find("Illegal mix of collations"), std::string::npos) << c.output;
    if (cmd == "lint") {
      EXPECT_NE(c.output.find("E100"), std::string::npos) << c.output;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/s"));
}

TEST_F(MySqlNestCollationTest, ParentsEqualUnderTheCollationAreOneKey) {
  // Not a unique column: 'abc' and 'ABC' are two parent rows with one key.
  MySqlQuery(
      db_, std::vector<std::string>{"CREATE TABLE p0 (id INT PRIMARY KEY, code VARCHAR(10) COLLATE "
                                    "utf8mb4_general_ci)",
                                    "CREATE TABLE c (id INT PRIMARY KEY, code VARCHAR(10) COLLATE "
                                    "utf8mb4_general_ci)",
                                    "INSERT INTO p0 VALUES (1, 'abc'), (2, 'ABC')",
                                    "INSERT INTO c VALUES (1, 'abc')",
                                    "CREATE TABLE p AS SELECT * FROM p0", "SELECT 1"});
  // A table says from its schema that the column is no key: refused when planned.
  NestRun r = RunNest(db_, Mapping("{code: code}", "id"));
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument) << r.status.ToString();
  EXPECT_NE(r.status.message().find("not the primary key or a unique key"), std::string::npos)
      << r.status.ToString();
  // A view declares no key: the run finds the two rows equal as the
  // database compares them, and stops.
  MySqlQuery(db_, std::vector<std::string>{"DROP TABLE p", "CREATE VIEW p AS SELECT * FROM p0",
                                           "SELECT 1"});
  r = RunNest(db_, Mapping("{code: code}", "id"));
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument) << r.status.ToString();
  EXPECT_NE(r.status.message().find("repeat"), std::string::npos) << r.status.ToString();
  EXPECT_NE(r.status.message().find("as the database compares them"), std::string::npos)
      << r.status.ToString();
  // lint finds the repeat beforehand, equal as the nest compares them.
  const std::string dir = MakeTempDir();
  {
    std::ofstream f(dir + "/m.yaml");
    f << "source: " << db_ << "\n" << Mapping("{code: code}", "id");
  }
  CommandResult lint =
      RunCommand(fmt::format("{} lint -m {}", WidenBinary(), ShellQuote(dir + "/m.yaml")));
  EXPECT_EQ(lint.exit_code, 2) << lint.output;
  EXPECT_NE(lint.output.find("error E120: t:p: 2 rows of p have the same nest link value"),
            std::string::npos)
      << lint.output;
}

class PgNestCollationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WIDEN_REQUIRE_PG(url);
    db_ = FreshPgDatabase(url, "widen_it_nestcoll");
    PgQuery(db_,
            "CREATE COLLATION widen_ci (provider = icu, locale = 'und-u-ks-level2', "
            "deterministic = false)");
    PgQuery(db_,
            "CREATE COLLATION widen_ai_ci (provider = icu, locale = 'und-u-ks-level1', "
            "deterministic = false)");
    PgQuery(db_, "CREATE EXTENSION IF NOT EXISTS citext");
  }

  void CheckNest(const std::string& parent_type, const std::string& child_type) {
    SCOPED_TRACE(parent_type + " / " + child_type);
    PgQuery(db_, "DROP TABLE IF EXISTS c, p");
    PgQuery(db_, "CREATE TABLE p (code " + parent_type + " PRIMARY KEY)");
    PgQuery(db_, "CREATE TABLE c (id int PRIMARY KEY, code " + child_type + ")");
    std::string values;
    for (const auto& v : kParents) values += (values.empty() ? "(" : ", (") + PgLiteral(v) + ")";
    PgQuery(db_, "INSERT INTO p VALUES " + values + " ON CONFLICT DO NOTHING");
    values.clear();
    int id = 0;
    for (const auto& v : kChildren) {
      values += fmt::format("{}({}, {})", values.empty() ? "" : ", ", ++id, PgLiteral(v));
    }
    values += fmt::format(", ({}, NULL)", ++id);
    PgQuery(db_, "INSERT INTO c VALUES " + values);
    // The parent key as the row key holds it: char(n) with its padding.
    const auto expected =
        Pairs(PgQuery(db_, "SELECT p.code, c.id FROM p JOIN c ON c.code = p.code"));
    const auto orphans = PgQuery(db_,
                                 "SELECT count(*) FROM c LEFT JOIN p ON p.code = c.code WHERE "
                                 "p.code IS NULL AND c.code IS NOT NULL");
    NestRun r = RunNest(db_, Mapping("{code: code}"), 2);
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    EXPECT_EQ(r.pairs, expected) << "widen: " << Show(r.pairs) << "\nSQL: " << Show(expected);
    EXPECT_EQ(std::to_string(r.stats.orphans), orphans[0][0]);
  }

  std::string db_;
};

TEST_F(PgNestCollationTest, EveryCollationAndPaddingRule) {
  // Deterministic (bytes) and ICU collations, nondeterministic ones that
  // ignore case or case and accents, citext, char(n) padding against
  // varchar and against another char(n).
  CheckNest("text", "text");
  CheckNest("text COLLATE \"und-x-icu\"", "varchar(10) COLLATE \"und-x-icu\"");
  CheckNest("text COLLATE widen_ci", "text COLLATE widen_ci");
  CheckNest("varchar(10) COLLATE widen_ai_ci", "text COLLATE widen_ai_ci");
  CheckNest("citext", "citext");
  CheckNest("char(8)", "varchar(10)");
  CheckNest("char(5)", "char(9)");
}

// PostgreSQL cannot compare text of two different collations unless one is
// the database default (it fails when it first hashes or compares a value,
// after rows were used). A nest linking such columns — a nondeterministic
// ICU collation against "C", char(n) in "C" against "POSIX", at either
// nesting level — or a join on them is refused by lint, plan and migrate
// before anything is written, naming both columns and their collations. A
// default-collation column against "C" or "POSIX" is compared (in the
// other's collation) and nests as SQL pairs it.
TEST_F(PgNestCollationTest, LinksOfTwoCollationsAreRefusedBeforeAnythingIsWritten) {
  PgQuery(db_, R"SQL(
    CREATE TABLE p (code text COLLATE widen_ci PRIMARY KEY, k char(4) COLLATE "C" UNIQUE);
    CREATE TABLE pd (code text PRIMARY KEY);
    CREATE TABLE c (id int PRIMARY KEY, code text COLLATE "C", k char(4) COLLATE "POSIX",
                    pk char(4) COLLATE "C", ref char(4) COLLATE "C" UNIQUE);
    CREATE TABLE g (id int PRIMARY KEY, ref char(4) COLLATE "POSIX");
    INSERT INTO p VALUES ('abc', 'a'), ('x', 'b');
    INSERT INTO pd VALUES ('a'), ('b'), ('abc');
    INSERT INTO c VALUES (1, 'ABC', 'a', 'a', 'r1'), (2, 'abc', 'b', 'b', 'r2'),
                         (3, 'x', 'a', 'c', 'r3');
    INSERT INTO g VALUES (1, 'r1'), (2, 'r2');
  )SQL");
  // Table t:p from `from` keyed by its `code`, c nested in it on `on` with
  // `more` nest lines (joins, grandchildren).
  auto mapping = [&](const std::string& from, const std::string& on, const std::string& more) {
    return fmt::format(R"YAML(source: {}
tables:
  - name: t:p
    from: {}
    families: [{{name: n}}]
    key:
      parts: [code]
    nest:
      - table: c
        on: {}
        family: n
        prefix: c
        id: [id]
{})YAML",
                       db_, from, on, more);
  };
  const std::string dir = MakeTempDir();
  const std::string store = dir + "/s";
  auto run = [&](const std::string& cmd, const std::string& yaml) {
    std::ofstream(dir + "/m.yaml") << yaml;
    return RunCommand(fmt::format("{} {} -m {}{}", WidenBinary(), cmd, ShellQuote(dir + "/m.yaml"),
                                  cmd == "migrate" ? " --target leveldb:" + store : ""));
  };
  const std::string g =
      "        nest:\n          - {table: g, on: {ref: ref}, prefix: g, id: [id]}\n";
  const std::string join =
      "        joins: [{table: p, as: pp, on: {code: code}}]\n        columns: [pp.k]\n";
  struct Case {
    std::string yaml, names;
  };
  for (const Case& c : std::vector<Case>{
           {mapping("p", "{code: code}", ""),
            "nest on p.code (collation widen_ci) = c.code (collation C)"},
           {mapping("p", "{k: k}", ""), "nest on p.k (collation C) = c.k (collation POSIX)"},
           {mapping("p", "{k: pk}", g), "nest on c.ref (collation C) = g.ref (collation POSIX)"},
           {mapping("pd", "{code: code}", join),
            "join on c.code (collation C) = p.code (collation widen_ci)"}}) {
    SCOPED_TRACE(c.names);
    for (const std::string cmd : {"lint", "plan", "migrate"}) {
      SCOPED_TRACE(cmd);
      CommandResult r = run(cmd, c.yaml);
      EXPECT_EQ(r.exit_code, 2) << r.output;
      EXPECT_NE(r.output.find(c.names + ": PostgreSQL cannot compare text of two different "
                                        "collations"),
                std::string::npos)
          << r.output;
      EXPECT_FALSE(std::filesystem::exists(store)) << "nothing may be created";
    }
  }
  // Links within one collation, or with the default collation on one side,
  // nest as SQL pairs them.
  for (const auto& [from, on, sql] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"p", "{k: pk}", "SELECT count(*) FROM p JOIN c ON c.pk = p.k"},
           {"pd", "{code: k}", "SELECT count(*) FROM pd JOIN c ON c.k = pd.code"},
           {"pd", "{code: pk}", "SELECT count(*) FROM pd JOIN c ON c.pk = pd.code"}}) {
    SCOPED_TRACE(from + " " + on);
    std::filesystem::remove_all(store);
    CommandResult ok = run("migrate", mapping(from, on, ""));
    ASSERT_EQ(ok.exit_code, 0) << ok.output;
    const auto pairs = PgQuery(db_, sql);
    size_t cells = 0;
    for (const auto& [row, columns] : ReadTable("leveldb:" + store, "t:p")) cells += columns.size();
    EXPECT_EQ(std::to_string(cells), pairs[0][0]);
    EXPECT_NE(cells, 0u);
  }
  std::filesystem::remove_all(dir);
}

// PostgreSQL: parent rows equal under the link's collation but with other
// bytes ('abc', 'ABC' in a case-insensitive collation, in a view, which
// declares no key) are two parents, and a child is nested under every parent
// its `=` matches, as a SQL join pairs them; lint does not count them as
// repeats (E120), and only rows with the same bytes are (the run stops on them).
TEST_F(PgNestCollationTest, ParentsEqualUnderTheCollationEachGetTheChildrenTheyMatch) {
  PgQuery(db_, R"SQL(
    CREATE TABLE p0 (id int PRIMARY KEY, code text COLLATE widen_ci);
    CREATE VIEW pv AS SELECT * FROM p0;
    CREATE TABLE c (id int PRIMARY KEY, code text COLLATE widen_ci);
    INSERT INTO p0 VALUES (1, 'abc'), (2, 'ABC'), (3, 'x'), (4, 'y');
    INSERT INTO c VALUES (1, 'abc'), (2, 'Abc'), (3, 'X'), (4, 'z');
  )SQL");
  const std::string dir = MakeTempDir();
  const std::string m = dir + "/m.yaml";
  std::ofstream(m) << "source: " << db_ << "\ntarget: leveldb:" << dir << "/s"
                   << R"YAML(
tables:
  - name: t:p
    from: pv
    families: [{name: n}]
    key:
      parts: [{column: id, on_null: reject}]
    nest:
      - {table: c, on: {code: code}, family: n, prefix: c, id: [id]}
)YAML";
  CommandResult lint = RunCommand(fmt::format("{} lint -m {}", WidenBinary(), ShellQuote(m)));
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
  EXPECT_EQ(lint.output.find("E120"), std::string::npos) << lint.output;
  CommandResult run = RunCommand(fmt::format("{} migrate -q -m {}", WidenBinary(), ShellQuote(m)));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::set<std::string> got, expected;
  for (const auto& [row, columns] : ReadTable("leveldb:" + dir + "/s", "t:p")) {
    for (const auto& [column, value] : columns) got.insert(row + "|" + column);
  }
  for (const auto& r : PgQuery(db_, "SELECT p.id, c.id FROM pv p JOIN c ON c.code = p.code")) {
    expected.insert(r[0] + "|n:c" + r[1]);
  }
  EXPECT_EQ(got, expected) << "widen: " << Show(got) << "\nSQL: " << Show(expected);
  EXPECT_EQ(expected.size(), 5u);
  // The same bytes twice: E120, and the run stops (exit 2).
  PgQuery(db_, "INSERT INTO p0 VALUES (5, 'ABC')");
  lint = RunCommand(fmt::format("{} lint -m {}", WidenBinary(), ShellQuote(m)));
  EXPECT_EQ(lint.exit_code, 2) << lint.output;
  EXPECT_NE(lint.output.find("error E120: t:p: 2 rows of pv have the same nest link value "
                             "(code=ABC)"),
            std::string::npos)
      << lint.output;
  std::filesystem::remove_all(dir + "/s");
  run = RunCommand(fmt::format("{} migrate -q -m {}", WidenBinary(), ShellQuote(m)));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("repeat the nest link value (ABC)"), std::string::npos) << run.output;
  std::filesystem::remove_all(dir);
}

// Beyond text: a decimal linked to a float compares as a float in both
// engines; PostgreSQL's interval `=` is not equality of the text
// ('1 day' = '24:00:00'); a MariaDB ENUM is ordered by its members' numbers,
// not their text. A nest `where` names a column the parent table also has.
TEST(NestCompareTest, OtherTypesAndFiltersAsTheDatabaseMatchesThem) {
  auto mapping = [](const std::string& on) {
    return Mapping(on) + "        where: status = 'ok'\n";
  };
  const std::string join_ok = " AND c.status = 'ok'";
  {
    const std::string my = MySqlUrl();
    if (my.empty() && InCi()) FAIL() << "WIDEN_TEST_MYSQL_URL is not set under CI";
    if (!my.empty()) {
      SCOPED_TRACE("MariaDB");
      const std::string db = FreshMySqlDatabase(my, "widen_it_nestcmp");
      MySqlQuery(db,
                 std::vector<std::string>{
                     "CREATE TABLE p (code ENUM('zz', 'x', 'abc', 'é') NOT NULL PRIMARY KEY, "
                     "d DECIMAL(40,34) NOT NULL UNIQUE, status VARCHAR(5))",
                     "CREATE TABLE c (id INT PRIMARY KEY, f DOUBLE, code VARCHAR(10), status "
                     "VARCHAR(5))",
                     "INSERT INTO p VALUES ('abc', 0.1000000000000000055511151231257827, 'no'), "
                     "('x', 0.5, 'no'), ('é', 2, 'no'), ('zz', 3, 'no')",
                     "INSERT INTO c VALUES (1, 0.1, 'ABC', 'ok'), (2, 0.5, 'x ', 'ok'), (3, 2, "
                     "'E', 'no'), (4, 3.0000001, 'ZZ', 'ok'), (5, 0.1, 'é', 'ok'), (6, 0.5, "
                     "'zz', 'ok')",
                     "SELECT 1"});
      for (const auto& [on, sql] : std::vector<std::pair<std::string, std::string>>{
               {"{d: f}", "c.f = p.d"}, {"{code: code}", "c.code = p.code"}}) {
        SCOPED_TRACE(on);
        const auto expected =
            Pairs(MySqlQuery(db, "SELECT p.code, c.id FROM p JOIN c ON " + sql + join_ok));
        NestRun r = RunNest(db, mapping(on), 2);
        ASSERT_TRUE(r.status.ok()) << r.status.ToString();
        EXPECT_EQ(r.pairs, expected) << "widen: " << Show(r.pairs) << "\nSQL: " << Show(expected);
      }
    }
  }
  const std::string pg = PgUrl();
  if (pg.empty() && InCi()) FAIL() << "WIDEN_TEST_PG_URL is not set under CI";
  if (!pg.empty()) {
    SCOPED_TRACE("PostgreSQL");
    const std::string db = FreshPgDatabase(pg, "widen_it_nestcmp");
    PgQuery(db,
            "CREATE TABLE p (code text PRIMARY KEY, d numeric(40,34) NOT NULL UNIQUE, iv interval "
            "UNIQUE, status text)");
    PgQuery(db, "CREATE TABLE c (id int PRIMARY KEY, f float8, iv interval, status varchar(5))");
    PgQuery(db,
            "INSERT INTO p VALUES ('abc', 0.1000000000000000055511151231257827, '1 day', 'no'), "
            "('x', 0.5, '2 hours', 'no'), ('é', 2, '1 mon', 'no')");
    PgQuery(db,
            "INSERT INTO c VALUES (1, 0.1, '24:00:00', 'ok'), (2, 0.5, '120 minutes', 'ok'), (3, "
            "2, '30 days', 'no'), (4, 3.0000001, '1 day', 'ok'), (5, 0.1, '1 day', 'ok')");
    for (const auto& [on, sql] : std::vector<std::pair<std::string, std::string>>{
             {"{d: f}", "c.f = p.d"}, {"{iv: iv}", "c.iv = p.iv"}}) {
      SCOPED_TRACE(on);
      const auto expected =
          Pairs(PgQuery(db, "SELECT p.code, c.id FROM p JOIN c ON " + sql + join_ok));
      NestRun r = RunNest(db, mapping(on), 2);
      ASSERT_TRUE(r.status.ok()) << r.status.ToString();
      EXPECT_EQ(r.pairs, expected) << "widen: " << Show(r.pairs) << "\nSQL: " << Show(expected);
    }
  }
}

// Two levels: both links case-insensitive; the grandchildren belong to every
// child row their link equals, under its parent.
TEST(NestCollationTwoLevelTest, BothEnginesMatchBothLinksAsSql) {
  const std::string mapping = R"YAML(
tables:
  - name: t:p
    from: p
    families: [{name: d}, {name: n}]
    key:
      parts: [{column: code, on_null: reject}]
    columns:
      - {column: code, to: "d:k"}
    nest:
      - table: c
        on: {code: code}
        family: n
        prefix: c
        id: [id]
        nest:
          - table: g
            on: {ref: ref}
            prefix: g
            id: [id]
)YAML";
  const std::string expected_sql =
      "SELECT p.code, CONCAT('c', c.id), CONCAT('c', c.id, 'g', g.id) FROM p JOIN c ON c.code = "
      "p.code LEFT JOIN g ON g.ref = c.ref";
  auto check = [&](const std::string& url, const std::vector<std::vector<std::string>>& rows) {
    std::set<std::string> expected;
    for (const auto& r : rows) {
      expected.insert(r[0] + "|" + r[1]);
      if (r[2] != "<NULL>" && !r[2].empty()) expected.insert(r[0] + "|" + r[2]);
    }
    NestRun n = RunNest(url, mapping, 2);
    ASSERT_TRUE(n.status.ok()) << n.status.ToString();
    EXPECT_EQ(n.pairs, expected) << "widen: " << Show(n.pairs) << "\nSQL: " << Show(expected);
  };
  {
    const std::string my = MySqlUrl();
    if (my.empty() && InCi()) FAIL() << "WIDEN_TEST_MYSQL_URL is not set under CI";
    if (!my.empty()) {
      SCOPED_TRACE("MariaDB");
      const std::string db = FreshMySqlDatabase(my, "widen_it_nest2");
      MySqlQuery(db, std::vector<std::string>{
                         "CREATE TABLE p (code VARCHAR(10) COLLATE utf8mb4_general_ci PRIMARY "
                         "KEY)",
                         "CREATE TABLE c (id INT PRIMARY KEY, code VARCHAR(10) COLLATE "
                         "utf8mb4_general_ci, ref VARCHAR(10) COLLATE utf8mb4_general_ci UNIQUE)",
                         "CREATE TABLE g (id INT PRIMARY KEY, ref VARCHAR(10) COLLATE "
                         "utf8mb4_general_ci)",
                         "INSERT INTO p VALUES ('abc'), ('x'), ('b')",
                         "INSERT INTO c VALUES (1, 'ABC', 'r1'), (2, 'abc ', 'R2'), (3, 'X', "
                         "'r3 '), (4, 'B', NULL), (5, 'nope', 'r5')",
                         "INSERT INTO g VALUES (1, 'R1'), (2, 'r2  '), (3, 'r1'), (4, 'R3'), (5, "
                         "'r5'), (6, 'none'), (7, NULL)",
                         "SELECT 1"});
      check(db, MySqlQuery(db, expected_sql));
    }
  }
  {
    const std::string pg = PgUrl();
    if (pg.empty() && InCi()) FAIL() << "WIDEN_TEST_PG_URL is not set under CI";
    if (!pg.empty()) {
      SCOPED_TRACE("PostgreSQL");
      const std::string db = FreshPgDatabase(pg, "widen_it_nest2");
      PgQuery(db,
              "CREATE COLLATION widen_ci (provider = icu, locale = 'und-u-ks-level2', "
              "deterministic = false)");
      PgQuery(db, "CREATE TABLE p (code text COLLATE widen_ci PRIMARY KEY)");
      PgQuery(
          db,
          "CREATE TABLE c (id int PRIMARY KEY, code text COLLATE widen_ci, ref char(4) UNIQUE)");
      PgQuery(db, "CREATE TABLE g (id int PRIMARY KEY, ref varchar(6))");
      PgQuery(db, "INSERT INTO p VALUES ('abc'), ('x'), ('b')");
      PgQuery(db,
              "INSERT INTO c VALUES (1, 'ABC', 'r1'), (2, 'Abc', 'R2'), (3, 'X', 'r3'), (4, 'B', "
              "NULL), (5, 'nope', 'r5')");
      PgQuery(db,
              "INSERT INTO g VALUES (1, 'r1'), (2, 'R2  '), (3, 'r1 '), (4, 'r3'), (5, 'r5'), "
              "(6, 'none'), (7, NULL)");
      check(db, PgQuery(db,
                        "SELECT p.code, 'c' || c.id, 'c' || c.id || 'g' || g.id FROM p JOIN "
                        "c ON c.code = p.code LEFT JOIN g ON g.ref = c.ref"));
    }
  }
}

// Parallel jobs split on an integer column of a link whose other column is
// text: each job reads the children of its parents, and the children
// without a parent are counted once.
TEST(NestCollationJobsTest, JobsMatchAndCountOrphansAsOneJob) {
  const std::string mapping = R"YAML(
tables:
  - name: t:p
    from: p
    families: [{name: d}, {name: n}]
    key:
      parts: [{column: id}]
    columns:
      - {column: code, to: "d:k"}
    nest:
      - table: c
        on: {grp: grp, code: code}
        family: n
        prefix: c
        id: [id]
)YAML";
  auto check = [&](const std::string& url, const std::vector<std::vector<std::string>>& pairs,
                   const std::string& orphans) {
    std::set<std::string> expected;
    for (const auto& r : pairs) expected.insert(r[0] + "|c" + r[1]);
    for (int jobs : {1, 3}) {
      SCOPED_TRACE(jobs);
      NestRun n = RunNest(url, mapping, 7, jobs);
      ASSERT_TRUE(n.status.ok()) << n.status.ToString();
      EXPECT_EQ(n.pairs, expected) << "widen: " << Show(n.pairs);
      EXPECT_EQ(std::to_string(n.stats.orphans), orphans);
    }
  };
  const std::string my = MySqlUrl();
  if (my.empty() && InCi()) FAIL() << "WIDEN_TEST_MYSQL_URL is not set under CI";
  if (!my.empty()) {
    SCOPED_TRACE("MariaDB");
    const std::string db = FreshMySqlDatabase(my, "widen_it_nestjobs");
    MySqlQuery(db, std::vector<std::string>{
                       "CREATE TABLE p (id INT PRIMARY KEY, grp INT, code VARCHAR(10) COLLATE "
                       "utf8mb4_general_ci, UNIQUE (grp, code))",
                       "CREATE TABLE c (id INT PRIMARY KEY, grp INT, code VARCHAR(10) COLLATE "
                       "utf8mb4_general_ci)",
                       "INSERT INTO p SELECT seq, seq DIV 3, ELT(seq % 3 + 1, 'a', 'b', 'c') FROM "
                       "seq_1_to_300",
                       "INSERT INTO c SELECT seq, seq % 110, ELT(seq % 7 + 1, 'A', 'b ', 'C', "
                       "'d', 'a', 'B', 'c  ') FROM seq_1_to_1000",
                       "SELECT 1"});
    check(db,
          MySqlQuery(db, "SELECT p.id, c.id FROM p JOIN c ON c.grp = p.grp AND c.code = p.code"),
          MySqlQuery(db,
                     "SELECT COUNT(*) FROM c LEFT JOIN p ON p.grp = c.grp AND p.code = c.code "
                     "WHERE p.id IS NULL")[0][0]);
  }
  const std::string pg = PgUrl();
  if (pg.empty() && InCi()) FAIL() << "WIDEN_TEST_PG_URL is not set under CI";
  if (!pg.empty()) {
    SCOPED_TRACE("PostgreSQL");
    const std::string db = FreshPgDatabase(pg, "widen_it_nestjobs");
    PgQuery(db,
            "CREATE COLLATION widen_ci (provider = icu, locale = 'und-u-ks-level2', "
            "deterministic = false)");
    PgQuery(db,
            "CREATE TABLE p (id int PRIMARY KEY, grp int, code text COLLATE widen_ci, UNIQUE "
            "(grp, code))");
    PgQuery(db, "CREATE TABLE c (id int PRIMARY KEY, grp int, code text COLLATE widen_ci)");
    PgQuery(db,
            "INSERT INTO p SELECT i, i / 3, (ARRAY['a', 'b', 'c'])[i % 3 + 1] FROM "
            "generate_series(1, 300) i");
    PgQuery(db,
            "INSERT INTO c SELECT i, i % 110, (ARRAY['A', 'b', 'C', 'd', 'a', 'B', 'c'])[i % 7 + "
            "1] FROM generate_series(1, 1000) i");
    check(db, PgQuery(db, "SELECT p.id, c.id FROM p JOIN c ON c.grp = p.grp AND c.code = p.code"),
          PgQuery(db,
                  "SELECT count(*) FROM c LEFT JOIN p ON p.grp = c.grp AND p.code = c.code WHERE "
                  "p.id IS NULL")[0][0]);
  }
}

// MySQL pages a table keyed by text in the key's own collation, which its
// index serves: no page sorts the rest of the table.
TEST_F(MySqlNestCollationTest, TextKeysArePagedByTheirIndex) {
  MySqlQuery(db_, std::vector<std::string>{
                      "CREATE TABLE k (code VARCHAR(20) COLLATE utf8mb4_general_ci PRIMARY KEY, "
                      "n INT)",
                      "CREATE TABLE kc (id INT PRIMARY KEY, code VARCHAR(20) COLLATE "
                      "utf8mb4_general_ci, KEY (code))",
                      "INSERT INTO k SELECT CONCAT('k', seq), seq FROM seq_1_to_20000",
                      "INSERT INTO kc SELECT seq, CONCAT('K', seq % 20000) FROM seq_1_to_40000",
                      "ANALYZE TABLE k, kc", "SELECT 1"});
  auto src = OpenSource(db_, 100);
  ASSERT_NE(src, nullptr);
  // A driving table alone (paged by its primary key), and a nest child
  // (ordered by its link, then paged by its primary key).
  const std::string yaml = R"YAML(
tables:
  - name: t:k
    from: k
    families: [{name: d}, {name: n}]
    key:
      parts: [code]
    columns:
      - {column: n, to: "d:n"}
    nest:
      - table: kc
        on: {code: code}
        family: n
        prefix: c
        id: [id]
)YAML";
  auto mapping = ParseMapping("source: " + db_ + "\n" + yaml, "k.yaml");
  ASSERT_TRUE(mapping.ok()) << mapping.status().ToString();
  auto schema = src->Introspect();
  ASSERT_TRUE(schema.ok());
  auto plan = Plan::Make(*mapping, *schema, src.get());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ScanSpec alone = plan->tables[0].scan;
  alone.merge.clear();
  for (const ScanSpec* scan : {&alone, &plan->tables[0].scan, &plan->tables[0].nests[0].scan}) {
    const std::string sql = src->SelectSql(*scan);
    SCOPED_TRACE(sql);
    auto explain = MySqlQuery(db_, "EXPLAIN " + sql);
    ASSERT_FALSE(explain.empty());
    for (const auto& row : explain) {
      for (const auto& field : row) {
        EXPECT_EQ(field.find("filesort"), std::string::npos) << "the page sorts the table";
      }
    }
  }
  // And the rows all come, in the collation's order, page after page.
  auto t = ScanTable(src.get(), "k", {"code", "n"}, "code");
  EXPECT_EQ(t.rows.size(), 20000u);
}

}  // namespace
}  // namespace widen::testing
