// Nesting over tables whose keys the schema cannot vouch for — views, free-form
// queries, tables without a primary key, link columns that are no key, link
// types widen cannot merge — on both engines. Each design either runs and
// writes exactly the cells SQL says, or `lint`, `plan` and `migrate` all
// refuse it with exit 2 and the real cause before the target is touched;
// what only the data shows stops the run with exit 2 naming it, never with
// exit 5 ("target in a bad state") or advice that does not apply.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

// Both engines take these statements as written.
const std::vector<std::string> kSchema = {
    "CREATE TABLE parent (id int PRIMARY KEY, code varchar(10), name varchar(20))",
    "CREATE TABLE child (id int PRIMARY KEY, parent_id int, note varchar(20))",
    "CREATE TABLE loose (parent_id int NOT NULL, n int NOT NULL, note varchar(20))",
    "CREATE TABLE grandchild (id int PRIMARY KEY, child_id int, val varchar(20))",
    "CREATE VIEW child_v AS SELECT id, parent_id, note FROM child",
    "CREATE VIEW parent_v AS SELECT id, code, name FROM parent",
    // (10, 1) twice: a view whose rows repeat.
    "CREATE VIEW child_dup AS SELECT id, parent_id, note FROM child UNION ALL "
    "SELECT id, parent_id, note FROM child WHERE id = 10",
    "INSERT INTO parent VALUES (1, 'a', 'one'), (2, 'b', 'two'), (3, 'b', 'three'), "
    "(4, NULL, 'four')",
    "INSERT INTO child VALUES (10, 1, 'x'), (11, 1, 'y'), (12, 2, 'z'), (13, 3, NULL), "
    "(14, 9, 'orphan'), (15, NULL, 'none'), (16, 4, 'w')",
    "INSERT INTO loose VALUES (1, 1, 'l1'), (1, 2, 'l2'), (2, 1, 'l3'), (3, 7, NULL), "
    "(8, 1, 'orphan')",
    "INSERT INTO grandchild VALUES (100, 10, 'g1'), (101, 10, 'g2'), (102, 12, 'g3'), "
    "(103, 99, 'orphan')",
};

class NestChecksTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    if (GetParam() == "pg") {
      std::string url = PgUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_PG_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_PG_URL not set";
      }
      db_ = FreshPgDatabase(url, "widen_it_nestchk");
      for (const auto& s : kSchema) PgQuery(db_, s);
    } else {
      std::string url = MySqlUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_MYSQL_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_MYSQL_URL not set";
      }
      db_ = FreshMySqlDatabase(url, "widen_it_nestchk");
      MySqlQuery(db_, kSchema);
    }
  }

  bool pg() const { return GetParam() == "pg"; }
  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    return pg() ? PgQuery(db_, sql) : MySqlQuery(db_, sql);
  }
  void Exec(const std::string& sql) { Query(sql); }

  // Writes a mapping of `tables` (YAML under `tables:`) reading this engine's database.
  std::string Mapping(const std::string& tables) {
    const std::string path = dir_ + "/m.yaml";
    std::ofstream(path) << "source: " << db_ << "\ntarget: leveldb:" << store() << "\ntables:\n"
                        << tables;
    return path;
  }
  std::string store() const { return dir_ + "/store"; }
  CommandResult Widen(const std::string& args) { return RunCommand(WidenBinary() + " " + args); }

  // lint, plan and migrate all refuse `tables` with exit 2 and `cause`, and
  // the target is not created.
  void ExpectRefusedUpFront(const std::string& tables, const std::string& cause) {
    const std::string m = Mapping(tables);
    CommandResult lint = Widen("lint -m " + m);
    EXPECT_EQ(lint.exit_code, 2) << lint.output;
    EXPECT_NE(lint.output.find("error E100"), std::string::npos) << lint.output;
    EXPECT_NE(lint.output.find(cause), std::string::npos) << lint.output;
    CommandResult plan = Widen("plan -m " + m);
    EXPECT_EQ(plan.exit_code, 2) << plan.output;
    EXPECT_NE(plan.output.find(cause), std::string::npos) << plan.output;
    CommandResult run = Widen("migrate -m " + m);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find(cause), std::string::npos) << run.output;
    EXPECT_NE(run.output.find(m + ":"), std::string::npos) << "names the place: " << run.output;
    EXPECT_FALSE(std::filesystem::exists(store())) << "the target was touched";
  }

  std::string dir_, db_;
};

std::string Pad3(const std::string& id) {
  return std::string(3 - std::min<size_t>(3, id.size()), '0') + id;
}

// {"name": value}; a SQL NULL attribute is left out (docs/types.md, "JSON").
std::string JsonOf(const std::string& name, const std::string& value) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (value != "<NULL>") j[name] = value;
  return j.dump();
}

TEST_P(NestChecksTest, ViewsQueriesAndKeylessTablesNestOnBothEngines) {
  const std::string m = Mapping(R"(  - name: view_child
    from: parent
    families: [d]
    key: {parts: [{column: id, width: 3}]}
    nest:
      - {table: child_v, on: {id: parent_id}, family: d, prefix: c, id: [{column: id, on_null: reject}], columns: [note]}
  - name: view_driving
    from: parent_v
    families: [d]
    key: {parts: [{column: id, width: 3, on_null: reject}]}
    columns: [name]
    nest:
      - {table: child, on: {id: parent_id}, family: d, prefix: c, id: [id], columns: [note]}
  - name: query_driving
    from: q
    query: SELECT id, name FROM parent
    families: [d]
    key: {parts: [{column: id, width: 3, on_null: reject}]}
    columns: [name]
    nest:
      - {table: child_v, on: {id: parent_id}, family: d, prefix: c, id: [{column: id, on_null: reject}], columns: [note]}
  - name: keyless_child
    from: parent
    families: [d]
    key: {parts: [{column: id, width: 3}]}
    nest:
      - {table: loose, on: {id: parent_id}, family: d, prefix: l, id: [n], columns: [note]}
  - name: view_with_grandchildren
    from: parent
    families: [d]
    key: {parts: [{column: id, width: 3}]}
    nest:
      - table: child_v
        on: {id: parent_id}
        family: d
        prefix: c
        id: [{column: id, on_null: reject}]
        columns: [note]
        nest:
          - {table: grandchild, on: {id: child_id}, prefix: g, id: [id], columns: [val]}
)");
  CommandResult lint = Widen("lint -m " + m);
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
  EXPECT_NE(lint.output.find("0 error(s)"), std::string::npos) << lint.output;
  CommandResult plan = Widen("plan -m " + m + " --full");
  EXPECT_EQ(plan.exit_code, 0) << plan.output;
  // One row per page: every scan is paged beside the others (MySQL).
  CommandResult run = Widen("migrate -q --fetch-rows 1 -m " + m);
  ASSERT_EQ(run.exit_code, 0) << run.output;

  TableCells children, names, loose, grandchildren;
  for (const auto& r : Query("SELECT c.parent_id, c.id, c.note FROM child c JOIN parent p ON "
                             "p.id = c.parent_id")) {
    children[Pad3(r[0])]["d:c" + r[1]] = JsonOf("note", r[2]);
  }
  for (const auto& r : Query("SELECT id, name FROM parent")) names[Pad3(r[0])]["d:name"] = r[1];
  for (const auto& r : Query("SELECT l.parent_id, l.n, l.note FROM loose l JOIN parent p ON "
                             "p.id = l.parent_id")) {
    loose[Pad3(r[0])]["d:l" + r[1]] = JsonOf("note", r[2]);
  }
  for (const auto& r : Query("SELECT c.parent_id, c.id, g.id, g.val FROM grandchild g JOIN child "
                             "c ON c.id = g.child_id JOIN parent p ON p.id = c.parent_id")) {
    grandchildren[Pad3(r[0])]["d:c" + r[1] + "g" + r[2]] = JsonOf("val", r[3]);
  }
  ASSERT_EQ(children.size(), 4u);
  const std::string target = "leveldb:" + store();
  EXPECT_EQ(ReadTable(target, "view_child"), children);
  TableCells driving = names;
  for (const auto& [row, cells] : children) driving[row].insert(cells.begin(), cells.end());
  EXPECT_EQ(ReadTable(target, "view_driving"), driving);
  EXPECT_EQ(ReadTable(target, "query_driving"), driving);
  EXPECT_EQ(ReadTable(target, "keyless_child"), loose);
  TableCells deep = children;
  for (const auto& [row, cells] : grandchildren) deep[row].insert(cells.begin(), cells.end());
  EXPECT_EQ(ReadTable(target, "view_with_grandchildren"), deep);
}

TEST_P(NestChecksTest, DesignsTheSchemaRulesOutAreRefusedBeforeTheTargetIsTouched) {
  // A join must be many-to-one: a view declares no key that says so.
  ExpectRefusedUpFront(R"(  - name: t
    from: child
    families: [d]
    key: {parts: [id]}
    joins: [{table: parent_v, on: {parent_id: id}}]
    columns: [parent_v.name]
)",
                       "parent_v is a view, which declares no primary or unique key");
  // Nest parent columns that are no key of the parent table.
  ExpectRefusedUpFront(R"(  - name: t
    from: parent
    families: [d]
    key: {parts: [id]}
    nest: [{table: child, on: {code: note}, family: d, id: [id]}]
)",
                       "nests join on parent.(code), which is not the primary key or a unique "
                       "key of parent");
  // The same one level down: (parent_id, note) names no one child row.
  ExpectRefusedUpFront(R"(  - name: t
    from: parent
    families: [d]
    key: {parts: [id]}
    nest:
      - table: child
        on: {id: parent_id}
        family: d
        id: [id]
        nest: [{table: grandchild, on: {note: val}, prefix: g, id: [id]}]
)",
                       "nests join on child.(parent_id, note), which is not the primary key");
  // Link values widen reads as text but the database sorts otherwise:
  // PostgreSQL matches them by its own `=` (the child read joined to the
  // parent); MariaDB cannot page the parent by such a key, refused up front.
  const std::string by_ip = R"(  - name: t
    from: host
    families: [d]
    key: {parts: [{column: name, on_null: reject}]}
    nest: [{table: login, on: {ip: ip}, family: d, id: [id]}]
)";
  if (pg()) {
    Exec("CREATE TABLE host (ip inet PRIMARY KEY, name text)");
    Exec("CREATE TABLE login (id int PRIMARY KEY, ip inet)");
    Exec("INSERT INTO host VALUES ('10.0.0.2', 'b'), ('10.0.0.10', 'a'), ('::1', 'c')");
    Exec(
        "INSERT INTO login VALUES (1, '10.0.0.10'), (2, '10.0.0.2'), (3, '10.0.0.2'), "
        "(4, '::1'), (5, '192.168.0.1')");
    const std::string m = Mapping(by_ip);
    CommandResult run = Widen("migrate -q -m " + m);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    TableCells want;
    for (const auto& r : Query("SELECT h.name, l.id FROM login l JOIN host h ON h.ip = l.ip")) {
      want[r[0]]["d:" + r[1]] = "{}";
    }
    EXPECT_EQ(ReadTable("leveldb:" + store(), "t"), want);
    std::filesystem::remove_all(store());
  } else {
    Exec("CREATE TABLE host (ip inet6 PRIMARY KEY, name text)");
    Exec("CREATE TABLE login (id int PRIMARY KEY, ip inet6)");
    ExpectRefusedUpFront(by_ip, "table host cannot be read in pages (column host.ip (inet6)");
  }
}

TEST_P(NestChecksTest, UuidKeyedChildNestsOnPostgresAndIsRefusedUpFrontOnMariaDb) {
  const std::string tables = R"(  - name: t
    from: parent
    families: [d]
    key: {parts: [{column: id, width: 3}]}
    nest: [{table: tagged, on: {id: parent_id}, family: d, prefix: u, id: [u], columns: [note]}]
)";
  if (!pg()) {
    // MariaDB's UUID sorts by rules of its own: the child cannot be read in
    // pages, and it would hold the connection the parent is read on.
    Exec("CREATE TABLE tagged (u uuid PRIMARY KEY, parent_id int, note varchar(20))");
    Exec(
        "INSERT INTO tagged VALUES ('00000000-0000-0000-0000-000000000002', 1, 'a'), "
        "('00000000-0000-0000-0000-000000000001', 1, 'b'), (UUID(), 2, 'c')");
    ExpectRefusedUpFront(tables, "table tagged cannot be read in pages (column tagged.u (uuid)");
    return;
  }
  Exec("CREATE TABLE tagged (u uuid PRIMARY KEY, parent_id int, note varchar(20))");
  Exec(
      "INSERT INTO tagged VALUES ('00000000-0000-0000-0000-000000000002', 1, 'a'), "
      "('00000000-0000-0000-0000-000000000001', 1, 'b'), (gen_random_uuid(), 2, 'c')");
  CommandResult run = Widen("migrate -q --fetch-rows 1 -m " + Mapping(tables));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  TableCells want;
  for (const auto& r : Query("SELECT parent_id, u::text, note FROM tagged")) {
    want[Pad3(r[0])]["d:u" + r[1]] = JsonOf("note", r[2]);
  }
  EXPECT_EQ(ReadTable("leveldb:" + store(), "t"), want);
}

TEST_P(NestChecksTest, RepeatsOnlyTheDataShowsAreLintedAndStopTheRunWithExit2) {
  const std::string m = Mapping(R"(  - name: repeated_parent
    from: parent_v
    families: [d]
    key: {parts: [{column: id, width: 3, on_null: reject}]}
    columns: [name]
    nest: [{table: child, on: {code: note}, family: d, prefix: c, id: [id]}]
  - name: repeated_child
    from: parent
    families: [d]
    key: {parts: [{column: id, width: 3}]}
    nest:
      - table: child_dup
        on: {id: parent_id}
        family: d
        prefix: c
        id: [{column: id, on_null: reject}]
        nest: [{table: grandchild, on: {id: child_id}, prefix: g, id: [id]}]
)");
  CommandResult lint = Widen("lint -m " + m);
  EXPECT_EQ(lint.exit_code, 2) << lint.output;
  EXPECT_NE(lint.output.find("error E120: repeated_parent: 2 rows of parent_v have the same nest "
                             "link value (code=b)"),
            std::string::npos)
      << lint.output;
  EXPECT_NE(lint.output.find("error E120: repeated_child: 2 rows of child_dup have the same nest "
                             "link value (parent_id=1, id=10)"),
            std::string::npos)
      << lint.output;
  for (const char* table : {"repeated_parent", "repeated_child"}) {
    CommandResult run = Widen(fmt::format("migrate -q --fetch-rows 1 -m {} --table {}", m, table));
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_EQ(run.output.find("give '"), std::string::npos) << "no advice that does not apply";
    const bool named =
        run.output.find("repeat the nest link value") != std::string::npos ||
        run.output.find("a join (to child_dup) matches more than one row") != std::string::npos;
    EXPECT_TRUE(named) << run.output;
  }
}

// A keyless child whose ids differ only in case or a trailing blank (equal
// under a case-insensitive or PAD SPACE collation, not as bytes) is read in
// pages by its id's bytes: every row once, at any page size, in any
// collation.
TEST_P(NestChecksTest, KeylessChildrenWhoseIdsDifferOnlyByCollationAreEachReadOnce) {
  const char* collations[] = {"utf8mb4_general_ci", "utf8mb4_bin"};
  for (const char* collation : collations) {
    SCOPED_TRACE(collation);
    if (pg()) {
      Exec("DROP TABLE IF EXISTS kc");
      Exec("CREATE TABLE kc (parent_id int, cid varchar(10), v varchar(10))");
    } else {
      Exec("DROP TABLE IF EXISTS kc");
      Exec(fmt::format("CREATE TABLE kc (parent_id int, cid varchar(10), v varchar(10)) COLLATE {}",
                       collation));
    }
    Exec(
        "INSERT INTO kc VALUES (1, 'k', '1'), (1, 'k ', '2'), (1, 'K', '3'), (1, 'm', '4'), "
        "(2, 'k', '5'), (2, 'k  ', '6')");
    const std::string m = Mapping(R"(  - name: t
    from: parent
    families: [d]
    key: {parts: [{column: id, width: 3}]}
    nest: [{table: kc, on: {id: parent_id}, family: d, prefix: c, id: [{column: cid, on_null: reject}], columns: [v]}]
)");
    TableCells want;
    for (const auto& r : Query("SELECT parent_id, cid, v FROM kc")) {
      want[Pad3(r[0])]["d:c" + r[1]] = JsonOf("v", r[2]);
    }
    for (const char* fetch : {"1", "2", "5000"}) {
      SCOPED_TRACE(fetch);
      std::filesystem::remove_all(store());
      CommandResult run = Widen(fmt::format("migrate -q --fetch-rows {} -m {}", fetch, m));
      ASSERT_EQ(run.exit_code, 0) << run.output;
      EXPECT_EQ(ReadTable("leveldb:" + store(), "t"), want);
    }
    if (pg()) break;  // one collation is enough where varchar compares as bytes
  }
}

// W118: MySQL pages a nested table in its link's order, which an index led
// by the link columns serves; lint warns about a link without one and gives
// the CREATE INDEX, after which it is quiet. PostgreSQL sorts each scan
// once: no warning. Views have no indexes to check.
TEST_P(NestChecksTest, LintWarnsAboutANestLinkWithoutAnIndexOnMySql) {
  const std::string m = Mapping(R"(  - name: t
    from: parent
    families: [d]
    key: {parts: [{column: id, width: 3}]}
    nest:
      - {table: child, on: {id: parent_id}, family: d, prefix: c, id: [id], columns: [note]}
      - {table: loose, on: {id: parent_id}, family: d, prefix: l, id: [n], columns: [note]}
      - {table: child_v, on: {id: parent_id}, family: d, prefix: v, id: [{column: id, on_null: reject}], columns: [note]}
)");
  CommandResult lint = Widen("lint -m " + m);
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
  const std::string warning =
      "warning W118: t: the nest of {0} links on {0}.(parent_id), which no index of {0} starts "
      "with";
  const std::string fix = "fix: CREATE INDEX {0}_parent_id ON {0} (parent_id);";
  for (const std::string table : {"child", "loose"}) {
    SCOPED_TRACE(table);
    EXPECT_EQ(lint.output.find(fmt::format(fmt::runtime(warning), table)) != std::string::npos,
              !pg())
        << lint.output;
    EXPECT_EQ(lint.output.find(fmt::format(fmt::runtime(fix), table)) != std::string::npos, !pg())
        << lint.output;
  }
  EXPECT_EQ(lint.output.find("the nest of child_v links on"), std::string::npos) << lint.output;
  if (pg()) return;
  // The fix as given; an index led by the link with more columns serves too.
  Exec("CREATE INDEX child_parent_id ON child (parent_id)");
  Exec("CREATE INDEX loose_parent_n ON loose (parent_id, n)");
  lint = Widen("lint -m " + m);
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
  EXPECT_EQ(lint.output.find("W118"), std::string::npos) << lint.output;
}

INSTANTIATE_TEST_SUITE_P(Engines, NestChecksTest, ::testing::Values("pg", "mysql"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace widen::testing
