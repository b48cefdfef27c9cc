// Bad input through the widen binary: each gets a one-line reason naming the
// place, a documented exit code, and nothing written.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "store/store.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

// The mapping of kMapping below for `table` of `source` into dir/store.
std::string MakeMapping(const std::string& source, const std::string& dir, const std::string& table,
                        const std::string& key, const std::string& column);

class ErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // A migrated source: the database's URL and the mapping file's path.
  struct Migrated {
    std::string db;
    std::string mapping;
  };
  // A PostgreSQL database `db_name` with table item (two rows), migrated
  // into dir_/store as table t.
  Migrated MigrateTwoItems(const std::string& url, const std::string& db_name) {
    Migrated out;
    out.db = FreshPgDatabase(url, db_name);
    PgQuery(out.db, "CREATE TABLE item (id int PRIMARY KEY, label text)");
    PgQuery(out.db, "INSERT INTO item VALUES (1, 'a'), (2, 'b')");
    out.mapping = Write("m.yaml", MakeMapping(out.db, dir_, "item", "id", "label"));
    CommandResult r = RunCommand(WidenBinary() + " migrate -q -m " + out.mapping);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return out;
  }
  std::string dir_;
};

constexpr char kMapping[] = R"(source: {source}
target: leveldb:{dir}/store
tables:
  - name: t
    from: {table}
    families: [d]
    key:
      parts: [{key}]
    columns: [{column}]
)";

std::string MakeMapping(const std::string& source, const std::string& dir, const std::string& table,
                        const std::string& key, const std::string& column) {
  return fmt::format(kMapping, fmt::arg("source", source), fmt::arg("dir", dir),
                     fmt::arg("table", table), fmt::arg("key", key), fmt::arg("column", column));
}

TEST_F(ErrorsTest, MisspeltFieldGivesFileLineAndExit2) {
  std::string m = Write("m.yaml", "source: postgresql://x@127.0.0.1:1/db\ntabels: []\n");
  CommandResult r = RunCommand(WidenBinary() + " migrate -m " + m);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(m + ":2:1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("did you mean 'tables'"), std::string::npos) << r.output;
}

// A mapping that is not UTF-8 text (found by the fuzz target: a leading
// 0x00 made the YAML reader guess UTF-16 and name a place past the file's
// end) is refused by every command that reads one, naming the byte's place.
TEST_F(ErrorsTest, MappingThatIsNotUtf8GivesItsPlaceAndExit2) {
  std::string m = Write("m.yaml", "source: postgresql://x@127.0.0.1:1/db\ntables: [caf\xe9]\n");
  for (const char* cmd : {"migrate", "plan", "lint", "ddl", "sync", "verify", "scan t"}) {
    SCOPED_TRACE(cmd);
    CommandResult r = RunCommand(WidenBinary() + " " + cmd + " -m " + m);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(m + ":2:13: byte 0xE9 is not UTF-8"), std::string::npos) << r.output;
  }
}

TEST_F(ErrorsTest, UnreachableSourceExits3AndMasksPassword) {
  std::string m =
      Write("m.yaml", MakeMapping("postgresql://u:secret@127.0.0.1:1/db", dir_, "a", "id", "x"));
  CommandResult r = RunCommand(WidenBinary() + " migrate -m " + m);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_EQ(r.output.find("secret"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("u:***@127.0.0.1:1/db"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/store")) << "nothing is created on failure";
}

TEST_F(ErrorsTest, UnknownSourceColumnIsNamedBeforeAnyWrite) {
  WIDEN_REQUIRE_PG(url);
  std::string db = FreshPgDatabase(url, "widen_it_errors");
  PgQuery(db, "CREATE TABLE item (id int PRIMARY KEY, label text, note text)");
  PgQuery(db, "INSERT INTO item VALUES (1, 'a|b', NULL), (2, 'ok', 'n')");
  std::string m = Write("m.yaml", MakeMapping(db, dir_, "item", "id", "lable"));
  CommandResult r = RunCommand(WidenBinary() + " migrate -m " + m);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(m + ":9:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("has no column 'lable'; did you mean 'label'?"), std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/store"));

  std::string t = Write("t.yaml", MakeMapping(db, dir_, "itme", "id", "label"));
  r = RunCommand(WidenBinary() + " migrate -m " + t);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("source table 'itme' does not exist; did you mean 'item'?"),
            std::string::npos)
      << r.output;

  // A nest column is named at its own item, renamed or not.
  PgQuery(db, "CREATE TABLE sub (id int PRIMARY KEY, item_id int, note text)");
  std::string n = Write("n.yaml", "source: " + db +
                                      "\ntables:\n  - name: t\n    from: item\n"
                                      "    families: [d]\n    key: {parts: [id]}\n"
                                      "    nest:\n      - table: sub\n        on: {id: item_id}\n"
                                      "        family: d\n        id: [id]\n"
                                      "        columns: [note, {column: nots, as: x}]\n");
  r = RunCommand(WidenBinary() + " plan -m " + n);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(n + ":12:25:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no column 'nots'; did you mean 'note'?"), std::string::npos) << r.output;

  // A width on a text column is a type error naming the column.
  std::string w =
      Write("w.yaml", MakeMapping(db, dir_, "item", "{column: label, width: 4}", "note"));
  r = RunCommand(WidenBinary() + " migrate -m " + w);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("item.label is text"), std::string::npos) << r.output;
}

TEST_F(ErrorsTest, SeparatorInKeyFailsNamingTheRowOrGoesToRejects) {
  WIDEN_REQUIRE_PG(url);
  std::string db = FreshPgDatabase(url, "widen_it_rejects");
  PgQuery(db, "CREATE TABLE item (id int PRIMARY KEY, label text, note text)");
  PgQuery(db, "INSERT INTO item VALUES (1, 'a|b', NULL), (2, 'ok', 'n')");
  // A nullable key column needs an explicit rule.
  std::string n = Write("n.yaml", MakeMapping(db, dir_, "item", "label, id", "note"));
  CommandResult r = RunCommand(WidenBinary() + " migrate -m " + n);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(n + ":8:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("source column item.label can be NULL"), std::string::npos) << r.output;

  std::string m = Write(
      "m.yaml", MakeMapping(db, dir_, "item", "{column: label, on_null: reject}, id", "note"));
  r = RunCommand(WidenBinary() + " migrate -m " + m);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("source row id=1 of 'item'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("separator"), std::string::npos) << r.output;

  r = RunCommand(WidenBinary() + " migrate -m " + m + " --rejects " + dir_ + "/rejects.jsonl");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(dir_ + "/rejects.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_NE(line.find("\"row\":\"id=1\""), std::string::npos) << line;
  EXPECT_FALSE(std::getline(in, line)) << "one reject only";
  TableCells cells = ReadTable("leveldb:" + dir_ + "/store", "t");
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells.begin()->first, "ok|2");
  EXPECT_EQ(cells.begin()->second.at("d:note"), "n");
}

// Output that cannot be written fails the command (exit 10, named on
// stderr), for a scan and a plan; a reader that stops reading a pipe is
// normal: exit 0, no message.
TEST_F(ErrorsTest, OutputThatCannotBeWrittenFailsButAClosedPipeDoesNot) {
  WIDEN_REQUIRE_PG(url);
  std::string db = FreshPgDatabase(url, "widen_it_output");
  PgQuery(db, "CREATE TABLE item (id int PRIMARY KEY, label text, note text)");
  PgQuery(db,
          "INSERT INTO item SELECT i, 'label ' || i, repeat('n', 40) FROM generate_series(1, "
          "5000) AS g(i)");
  std::string m = Write("m.yaml", MakeMapping(db, dir_, "item", "id", "label"));
  CommandResult r = RunCommand(WidenBinary() + " migrate -q -m " + m);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string store = ShellQuote("leveldb:" + dir_ + "/store");
  for (const std::string& cmd : {WidenBinary() + " scan t --target " + store,
                                 WidenBinary() + " plan --limit 0 -m " + ShellQuote(m)}) {
    SCOPED_TRACE(cmd);
    r = RunCommand("bash -c " + ShellQuote(cmd + " > /dev/full"));  // stderr kept
    EXPECT_EQ(r.exit_code, 10) << r.output;
    EXPECT_NE(r.output.find("widen: writing the output failed: "), std::string::npos) << r.output;
  }
  // 5,000 rows are far more than a pipe holds: widen writes on after head
  // has gone. Its own exit code, through PIPESTATUS.
  r = RunCommand("bash -c " + ShellQuote(WidenBinary() + " scan t --target " + store +
                                         " | head -c 100 > /dev/null; exit ${PIPESTATUS[0]}"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("writing the output failed"), std::string::npos) << r.output;
}

TEST_F(ErrorsTest, DesignMistakesAreCaughtBeforeAnyWrite) {
  WIDEN_REQUIRE_PG(url);
  std::string db = FreshPgDatabase(url, "widen_it_design");
  PgQuery(db, R"SQL(
    CREATE TABLE parent (id int PRIMARY KEY, d date NOT NULL);
    CREATE TABLE child (cid int PRIMARY KEY, pid int NOT NULL, at timestamp NOT NULL, v text);
    INSERT INTO parent VALUES (1, '2024-01-01');
    INSERT INTO child VALUES (10, 1, '2024-01-01 00:00:00', 'x'), (11, 1, '2024-01-02', 'y');
  )SQL");
  auto run = [&](const std::string& tables) {
    std::string m = Write(
        "m.yaml", "source: " + db + "\ntarget: leveldb:" + dir_ + "/store\ntables:\n" + tables);
    return RunCommand(WidenBinary() + " migrate -m " + m);
  };
  // A join whose other side is not a key is one-to-many: refused.
  CommandResult r = run(R"(  - name: t
    from: parent
    families: [d]
    key: {parts: [id]}
    joins: [{table: child, on: {id: pid}}]
    columns: [child.v]
)");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("not the primary key or a unique key of child"), std::string::npos)
      << r.output;
  // A nest between a date and a timestamp would compare unlike the database.
  r = run(R"(  - name: t
    from: parent
    families: [d]
    key: {parts: [id]}
    nest: [{table: child, on: {d: at}, family: d, id: [cid]}]
)");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("comparable types"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/store")) << "nothing created";
}

TEST_F(ErrorsTest, RejectsFileMayNotOverwriteTheMapping) {
  WIDEN_REQUIRE_PG(url);
  std::string db = FreshPgDatabase(url, "widen_it_rejpath");
  PgQuery(db, "CREATE TABLE item (id int PRIMARY KEY, label text)");
  std::string m = Write("m.yaml", MakeMapping(db, dir_, "item", "id", "label"));
  CommandResult r = RunCommand(WidenBinary() + " migrate -m " + m + " --rejects " + m);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is the same file as -m " + m + ": widen would write over its input"),
            std::string::npos)
      << r.output;
  EXPECT_GT(std::filesystem::file_size(m), 0u) << "the mapping is intact";
}

TEST_F(ErrorsTest, ForeignDirectoryAsTargetIsRefusedUntouched) {
  WIDEN_REQUIRE_PG(url);
  std::string db = FreshPgDatabase(url, "widen_it_foreign");
  PgQuery(db, "CREATE TABLE item (id int PRIMARY KEY, label text)");
  std::filesystem::create_directories(dir_ + "/store");
  Write("store/000005.ldb", "not ours");
  std::string m = Write("m.yaml", MakeMapping(db, dir_, "item", "id", "label"));
  CommandResult r = RunCommand(WidenBinary() + " migrate -m " + m);
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find("not a widen store"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/store/000005.ldb"));
}

TEST_F(ErrorsTest, StoreHeldByAnotherProcessIsBusyExit7) {
  WIDEN_REQUIRE_PG(url);
  const auto [db, m] = MigrateTwoItems(url, "widen_it_busy");
  ASSERT_FALSE(HasFailure());
  CommandResult r;
  const std::string target = "leveldb:" + dir_ + "/store";
  {
    // This test process holds the store, as a running widen would.
    StoreOptions so;
    so.create_if_missing = false;
    auto held = Store::Open(target, so);
    ASSERT_TRUE(held.ok()) << held.status().ToString();
    PgQuery(db, "INSERT INTO item VALUES (3, 'c')");
    for (const std::string& cmd :
         {" migrate -m " + m, " scan t --target " + target, " get t 1 --target " + target}) {
      r = RunCommand(WidenBinary() + cmd);
      EXPECT_EQ(r.exit_code, 7) << cmd << ": " << r.output;
      // The holder named as the kernel lists it: this test's process.
      EXPECT_NE(r.output.find(fmt::format("in use by another widen process (process {}: ",
                                          static_cast<long>(getpid()))),
                std::string::npos)
          << r.output;
      EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one line: " << r.output;
    }
  }
  // Released: nothing was written by the refused run, and a retry works.
  EXPECT_EQ(ReadTable(target, "t").size(), 2u);
  r = RunCommand(WidenBinary() + " migrate -q -m " + m);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadTable(target, "t").size(), 3u);
}

// The row key layout scan and get --decode read from a table's metadata is
// stored bytes: when it is damaged into one no mapping can give (found by
// the fuzz target: indexes out of range, floats where integers belong),
// they say so (exit 6) instead of decoding keys with it. The cells are
// untouched: a scan without --decode still prints them.
TEST_F(ErrorsTest, DamagedKeyLayoutIsDataLossExit6) {
  WIDEN_REQUIRE_PG(url);
  MigrateTwoItems(url, "widen_it_layout");
  ASSERT_FALSE(HasFailure());
  CommandResult r;
  const std::string target = "leveldb:" + dir_ + "/store";
  std::string layout;
  {
    StoreOptions so;
    so.create_if_missing = false;
    auto store = Store::Open(target, so);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto d = (*store)->DescribeTable("t");
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    layout = d->metadata.at("widen.key");
  }
  ASSERT_NE(layout.find("\"index\":0"), std::string::npos) << layout;
  ASSERT_NE(layout.find("\"width\":0"), std::string::npos) << layout;
  ASSERT_NE(layout.find("\"size\":0"), std::string::npos) << layout;
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = layout;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  for (const std::string& damaged :
       {replace("\"index\":0", "\"index\":-1"), replace("\"width\":0", "\"width\":1e30"),
        replace("\"size\":0", "\"size\":300")}) {
    SCOPED_TRACE(damaged);
    {
      StoreOptions so;
      so.create_if_missing = false;
      auto store = Store::Open(target, so);
      ASSERT_TRUE(store.ok()) << store.status().ToString();
      ASSERT_TRUE((*store)->SetTableMetadata("t", "widen.key", damaged).ok());
    }
    for (const std::string& cmd :
         {" scan t --decode --target " + target, " get t 1 --decode --target " + target}) {
      r = RunCommand(WidenBinary() + cmd);
      EXPECT_EQ(r.exit_code, 6) << cmd << ": " << r.output;
      EXPECT_NE(r.output.find("widen: key layout: "), std::string::npos) << r.output;
    }
    r = RunCommand(WidenBinary() + " scan t --target " + target);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("value=a"), std::string::npos) << r.output;
  }
}

TEST_F(ErrorsTest, InterruptedRunLeavesTableMarkedIncomplete) {
  WIDEN_REQUIRE_PG(url);
  std::string db = FreshPgDatabase(url, "widen_it_sigint");
  PgQuery(db,
          "CREATE TABLE big (id int PRIMARY KEY, label text); INSERT INTO big SELECT g, "
          "repeat('x', 200) FROM generate_series(1, 3000000) g");
  std::string m = Write("m.yaml", MakeMapping(db, dir_, "big", "id", "label"));
  // Interrupt after the table is created and writing has begun (small
  // fetches make the run take longer than that, whatever the machine).
  CommandResult r = RunCommand("timeout --preserve-status -s INT 3 " + WidenBinary() +
                               " migrate --fetch-rows 20 -m " + m);
  ASSERT_EQ(r.exit_code, 130) << r.output;
  EXPECT_NE(r.output.find("interrupted"), std::string::npos) << r.output;
  CommandResult scan =
      RunCommand(WidenBinary() + " scan t --limit 1 --target leveldb:" + dir_ + "/store");
  EXPECT_EQ(scan.exit_code, 0) << scan.output;
  EXPECT_NE(scan.output.find("warning: table 't' is incomplete"), std::string::npos) << scan.output;
}

TEST_F(ErrorsTest, WhereTextCannotWriteToTheSource) {
  WIDEN_REQUIRE_PG(url);
  std::string db = FreshPgDatabase(url, "widen_it_inject");
  PgQuery(db, "CREATE TABLE item (id int PRIMARY KEY, label text); CREATE TABLE victim (x int)");
  std::string m =
      Write("m.yaml", "source: " + db + "\ntarget: leveldb:" + dir_ +
                          "/store\ntables:\n  - name: t\n    from: item\n"
                          "    where: \"true); COMMIT; DROP TABLE victim; SELECT (1\"\n"
                          "    families: [d]\n    key: {parts: [id]}\n    columns: [label]\n");
  CommandResult r = RunCommand(WidenBinary() + " migrate -m " + m);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(m + ":4:"), std::string::npos) << "names the table's place: " << r.output;
  auto still = PgQuery(db, "SELECT count(*) FROM pg_class WHERE relname = 'victim'");
  EXPECT_EQ(still[0][0], "1") << "the source was not written";
}

}  // namespace
}  // namespace widen::testing
