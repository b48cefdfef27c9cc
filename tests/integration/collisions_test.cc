// Cells that would replace each other, and what a run must say about its
// rows, on the real servers: designs whose qualifiers can collide by
// construction are refused before anything is written; data that makes
// cells replace each other ends the run with exit code 8 naming the first
// case; rows without cells, nested rows without values and versions beyond
// a family's VERSIONS are counted. Expected counts come from SQL on the
// source.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

int64_t Count(const std::string& db, const std::string& sql) {
  return std::stoll(PgQuery(db, sql).at(0).at(0));
}

class CollisionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WIDEN_REQUIRE_PG(url);
    db_ = FreshPgDatabase(url, "widen_it_collide");
    PgQuery(db_, R"SQL(
      CREATE TABLE artist (artist_id int PRIMARY KEY, name text NOT NULL);
      CREATE TABLE album (album_id int PRIMARY KEY, artist_id int NOT NULL REFERENCES artist,
                          title text NOT NULL, code text NOT NULL);
      CREATE TABLE track (album_id int NOT NULL REFERENCES album, track_no int NOT NULL,
                          name text, disc int NOT NULL, code text NOT NULL,
                          seq int NOT NULL UNIQUE,
                          PRIMARY KEY (album_id, track_no));
      CREATE TABLE person (id int PRIMARY KEY, name text, email text);
      CREATE TABLE salary (emp_id int NOT NULL, from_date date NOT NULL, amount int NOT NULL,
                           PRIMARY KEY (emp_id, from_date));
      INSERT INTO artist VALUES (1, 'A'), (2, 'B');
      INSERT INTO album VALUES (1, 1, 'One', 'x'), (11, 1, 'Eleven', 'y'), (2, 2, 'Two', 'x');
      INSERT INTO track VALUES (1, 12, 'a', 1, 'p', 1), (11, 2, 'b', 1, 'q', 2),
                               (1, 1, 'c', 1, 'r', 3), (1, 2, 'd', 2, 's', 4),
                               (2, 5, NULL, 1, 't', 5);
      INSERT INTO person VALUES (1, 'Ann', 'a@x'), (2, NULL, NULL), (3, 'Bo', NULL),
                                (4, NULL, NULL), (5, NULL, NULL);
      INSERT INTO salary
        SELECT e, date '2000-01-01' + (y * 365), 1000 + y FROM generate_series(1, 3) e,
               generate_series(1, e * 4) y;
    )SQL");
    dir_ = MakeTempDir();
    target_ = "leveldb:" + dir_ + "/store";
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string Write(const std::string& tables) {
    std::string path = dir_ + "/m.yaml";
    std::ofstream(path) << "source: " << db_ << "\ntarget: " << target_ << "\ntables:\n" << tables;
    return path;
  }
  CommandResult Run(const std::string& command, const std::string& tables,
                    const std::string& extra = "") {
    const std::string path = Write(tables);
    return RunCommand(fmt::format("{} {} -m {} {}", WidenBinary(), command, path, extra));
  }
  bool StoreExists() const { return std::filesystem::exists(dir_ + "/store"); }

  std::string db_, dir_, target_;
};

// The issue's designs that collide by construction, and their fixed forms.
struct Design {
  const char* name;
  const char* tables;
  bool collides;
  const char* example;  // the qualifier named in the error
  int line;             // the mapping line named
};

const Design kDesigns[] = {
    {"second-level nest without prefix, text ids", R"(  - name: t
    from: artist
    families: [d]
    key: {parts: [artist_id]}
    nest:
      - table: album
        on: {artist_id: artist_id}
        family: d
        prefix: a
        id: [album_id]
        columns: [title]
        nest:
          - table: track
            on: {album_id: album_id}
            family: d
            id: [track_no]
            columns: [name]
)",
     true, "a", 16},
    {"second-level nest without prefix, ids of fixed width", R"(  - name: t
    from: artist
    families: [d]
    key: {parts: [artist_id]}
    nest:
      - table: album
        on: {artist_id: artist_id}
        family: d
        prefix: a
        id: [{column: album_id, width: 3}]
        columns: [title]
        nest:
          - table: track
            on: {album_id: album_id}
            family: d
            id: [{column: track_no, width: 3}]
            columns: [name]
)",
     false, "", 0},
    {"second-level nest with a prefix", R"(  - name: t
    from: artist
    families: [d]
    key: {parts: [artist_id]}
    nest:
      - table: album
        on: {artist_id: artist_id}
        family: d
        prefix: a
        id: [album_id]
        columns: [title]
        nest:
          - table: track
            on: {album_id: album_id}
            family: d
            prefix: t
            id: [track_no]
            columns: [name]
)",
     false, "", 0},
    {"two nests whose prefixes overlap (p, p1), integer ids", R"(  - name: t
    from: album
    families: [d]
    key: {parts: [album_id]}
    nest:
      - {table: track, on: {album_id: album_id}, family: d, prefix: p, id: [track_no], columns: [name]}
      - {table: track, on: {album_id: album_id}, family: d, prefix: p1, id: [seq], columns: [code]}
)",
     true, "p1", 10},
    {"prefixes p and q", R"(  - name: t
    from: album
    families: [d]
    key: {parts: [album_id]}
    nest:
      - {table: track, on: {album_id: album_id}, family: d, prefix: p, id: [track_no], columns: [name]}
      - {table: track, on: {album_id: album_id}, family: d, prefix: q, id: [seq], columns: [code]}
)",
     false, "", 0},
    {"prefixes p and p1 in two families", R"(  - name: t
    from: album
    families: [d, e]
    key: {parts: [album_id]}
    nest:
      - {table: track, on: {album_id: album_id}, family: d, prefix: p, id: [track_no], columns: [name]}
      - {table: track, on: {album_id: album_id}, family: e, prefix: p1, id: [seq], columns: [code]}
)",
     false, "", 0},
    {"a column d:e10 beside a nest with prefix e", R"(  - name: t
    from: album
    families: [d]
    key: {parts: [album_id]}
    columns: [{column: title, to: "d:e10"}]
    nest:
      - {table: track, on: {album_id: album_id}, family: d, prefix: e, id: [track_no], columns: [name]}
)",
     true, "e10", 10},
    {"a column d:ename beside a nest with prefix e and integer ids", R"(  - name: t
    from: album
    families: [d]
    key: {parts: [album_id]}
    columns: [{column: title, to: "d:ename"}]
    nest:
      - {table: track, on: {album_id: album_id}, family: d, prefix: e, id: [track_no], columns: [name]}
)",
     false, "", 0},
    {"a column d:ename beside a nest with prefix e and text ids", R"(  - name: t
    from: album
    families: [d]
    key: {parts: [album_id]}
    columns: [{column: title, to: "d:ename"}]
    nest:
      - {table: track, on: {album_id: album_id}, family: d, prefix: e, id: [code], columns: [name]}
)",
     true, "e", 10},
    {"two nests without prefix, different literal ids", R"(  - name: t
    from: album
    families: [d]
    key: {parts: [album_id]}
    nest:
      - {table: track, on: {album_id: album_id}, family: d, prefix: "", id: [{literal: x}, track_no], columns: [name]}
      - {table: track, on: {album_id: album_id}, family: d, prefix: "", id: [{literal: y}, seq], columns: [code]}
)",
     false, "", 0},
    {"two nests without prefix, the same literal id", R"(  - name: t
    from: album
    families: [d]
    key: {parts: [album_id]}
    nest:
      - {table: track, on: {album_id: album_id}, family: d, prefix: "", id: [{literal: x}, track_no], columns: [name]}
      - {table: track, on: {album_id: album_id}, family: d, prefix: "", id: [{literal: x}, seq], columns: [code]}
)",
     true, "x", 10},
    {"binary ids of fixed width cannot run into a longer prefix", R"(  - name: t
    from: album
    families: [d]
    key: {parts: [album_id]}
    nest:
      - {table: track, on: {album_id: album_id}, family: d, prefix: a, form: binary, id: [track_no], columns: [name]}
      - {table: track, on: {album_id: album_id}, family: d, prefix: ab, form: binary, id: [seq], columns: [code]}
)",
     false, "", 0},
    {"a binary string id can run into a longer prefix", R"(  - name: t
    from: album
    families: [d]
    key: {parts: [album_id]}
    nest:
      - {table: track, on: {album_id: album_id}, family: d, prefix: a, form: binary, id: [code], columns: [name]}
      - {table: track, on: {album_id: album_id}, family: d, prefix: ab, form: binary, id: [seq], columns: [code]}
)",
     true, "ab", 10},
    {"layout cells: an attribute spelt by a column", R"(  - name: t
    from: album
    families: [d]
    key: {parts: [album_id]}
    columns: [{column: title, to: "d:o1.name"}]
    nest:
      - {table: track, on: {album_id: album_id}, family: d, prefix: o, id: [track_no], layout: cells, columns: [name]}
)",
     true, "o1.name", 10},
};

void PrintTo(const Design& d, std::ostream* os) { *os << d.name; }

class QualifierDesignTest : public CollisionsTest, public ::testing::WithParamInterface<Design> {};

TEST_P(QualifierDesignTest, RefusedBeforeAnythingIsWrittenWhenQualifiersCanCollide) {
  const Design& d = GetParam();
  for (const char* command : {"migrate", "plan"}) {
    SCOPED_TRACE(command);
    CommandResult r = Run(command, d.tables);
    if (!d.collides) {
      EXPECT_EQ(r.exit_code, 0) << r.output;
      continue;
    }
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(fmt::format("m.yaml:{}:", d.line)), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("the same qualifier") == std::string::npos
                  ? r.output.find("one qualifier for two different ids")
                  : 0,
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find(fmt::format("e.g. '{}", d.example)), std::string::npos) << r.output;
    EXPECT_FALSE(StoreExists()) << "nothing may be created";
  }
  if (d.collides) {
    CommandResult lint = Run("lint", d.tables);
    EXPECT_EQ(lint.exit_code, 2) << lint.output;
  }
}

INSTANTIATE_TEST_SUITE_P(Designs, QualifierDesignTest, ::testing::ValuesIn(kDesigns),
                         [](const auto& info) { return "d" + std::to_string(info.index); });

// A nest id that repeats among one parent's children (data, not design):
// migrate writes the run, then exits 8 naming the first case; the summary
// counts every replaced cell; the store keeps the last of each.
TEST_F(CollisionsTest, RepeatedNestIdsEndTheRunWithExit8) {
  const std::string tables = R"(  - name: t
    from: album
    families: [d]
    key: {parts: [album_id]}
    nest:
      - {table: track, on: {album_id: album_id}, family: d, prefix: s, id: [disc], columns: [name]}
)";
  const int64_t expected =
      Count(db_, "SELECT count(*) - count(DISTINCT (album_id, disc)) FROM track");
  ASSERT_GT(expected, 0);
  for (const char* extra : {"", "-q"}) {
    CommandResult r = Run("migrate", tables, extra);
    EXPECT_EQ(r.exit_code, 8) << r.output;
    EXPECT_NE(r.output.find(fmt::format("{} cell(s) replaced another cell of this run", expected)),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("row '1', column d:s1"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("source row album_id=1 of 'album'"), std::string::npos) << r.output;
  }
  // lint sees it from the child's unique keys.
  CommandResult lint = Run("lint", tables);
  EXPECT_NE(lint.output.find(
                "warning W111: t: the nested id of track (prefix 's') does not contain track_no"),
            std::string::npos)
      << lint.output;
}

// Two driving rows with one row key: found whatever the read order, with
// one job or several, and the summary's rows are the row keys stored.
TEST_F(CollisionsTest, RowKeysSharedByTwoSourceRowsEndTheRunWithExit8) {
  const std::string tables = R"(  - name: t
    from: album
    families: [d]
    key: {parts: [code]}
    columns: [{column: title, to: "d:title"}]
)";
  const int64_t repeats = Count(db_, "SELECT count(*) - count(DISTINCT code) FROM album");
  const int64_t keys = Count(db_, "SELECT count(DISTINCT code) FROM album");
  for (const char* extra : {"", "--jobs 2"}) {
    SCOPED_TRACE(extra);
    std::filesystem::remove_all(dir_ + "/store");
    CommandResult r = Run("migrate", tables, extra);
    EXPECT_EQ(r.exit_code, 8) << r.output;
    EXPECT_NE(r.output.find(fmt::format("{} cell(s) replaced", repeats)), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("row 'x', column d:title"), std::string::npos) << r.output;
    EXPECT_EQ(ReadTable(target_, "t").size(), static_cast<size_t>(keys));
    // The summary's rows column counts the row keys written.
    EXPECT_NE(r.output.find(fmt::format("t {:>43} {:>10}", 3, keys)), std::string::npos)
        << r.output;
  }
}

// A source row whose every mapped value is NULL gives no row, and a nested
// row whose every value is NULL gives a cell of nulls (json) or none
// (cells, value): each is counted alike and the first is named.
TEST_F(CollisionsTest, EmptyRowsAndEmptyNestedRowsAreCountedForEveryLayout) {
  const int64_t empty_people = Count(db_,
                                     "SELECT count(*) FROM person WHERE name IS NULL AND "
                                     "email IS NULL");
  CommandResult r = Run("migrate", R"(  - name: p
    from: person
    families: [d]
    key: {parts: [id]}
    columns: [{column: name, to: "d:n"}, {column: email, to: "d:e"}]
)");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(
      r.output.find(fmt::format("p: {} source row(s) had every mapped value NULL", empty_people)),
      std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("(the first: id=2)"), std::string::npos) << r.output;

  const int64_t empty_tracks = Count(db_, "SELECT count(*) FROM track WHERE name IS NULL");
  for (const char* layout : {"json", "cells", "value"}) {
    SCOPED_TRACE(layout);
    std::filesystem::remove_all(dir_ + "/store");
    r = Run("migrate", fmt::format(R"(  - name: a
    from: album
    families: [d]
    key: {{parts: [album_id]}}
    nest:
      - {{table: track, on: {{album_id: album_id}}, family: d, prefix: s, id: [track_no], layout: {}, columns: [name]}}
)",
                                   layout));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(
        r.output.find(fmt::format("a: {} nested row(s) had every value column NULL", empty_tracks)),
        std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("track (album_id=2, track_no=5) in source row album_id=2"),
              std::string::npos)
        << r.output;
  }
}

// Versions beyond a family's VERSIONS: plan counts them, migrate reports
// them, lint warns from the data.
TEST_F(CollisionsTest, HistoryLongerThanTheFamilyKeepsIsReported) {
  const std::string tables = R"(  - name: e
    from: person
    families: [d, {name: s, versions: 5}]
    key: {parts: [id]}
    columns: [{column: name, to: "d:n", on_null: empty}]
    nest:
      - {table: salary, on: {id: emp_id}, family: s, prefix: "", id: [{literal: amount}], version: from_date, layout: value, columns: [amount]}
)";
  const int64_t beyond =
      Count(db_,
            "SELECT coalesce(sum(greatest(n - 5, 0)), 0) FROM (SELECT count(*) n FROM salary "
            "GROUP BY emp_id) g");
  ASSERT_GT(beyond, 0);
  CommandResult r = Run("migrate", tables);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(fmt::format("e: {} cell(s) are older versions beyond their family's "
                                      "VERSIONS",
                                      beyond)),
            std::string::npos)
      << r.output;
  CommandResult plan = Run("plan", tables, "--full");
  EXPECT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_NE(plan.output.find(fmt::format("versions        {} cell(s)", beyond)), std::string::npos)
      << plan.output;
  CommandResult lint = Run("lint", tables);
  EXPECT_NE(
      lint.output.find(fmt::format(
          "warning W107: e: nested rows of salary give one cell up to {} versions",
          Count(db_, "SELECT max(n) FROM (SELECT count(*) n FROM salary GROUP BY emp_id) g"))),
      std::string::npos)
      << lint.output;
}

// One parent with more nested cells than a row keeps in memory: the row is
// sorted through spilled runs, every cell arrives, and a repeated id among
// them is still found.
TEST_F(CollisionsTest, AHugeRowIsSortedThroughRunsAndKeepsEveryCell) {
  PgQuery(db_, R"SQL(
    INSERT INTO album VALUES (3, 1, 'Big', 'z');
    INSERT INTO track SELECT 3, n, repeat('n', 90) || n, n % 7, 'c' || n, 100 + n
      FROM generate_series(1, 120000) n;
  )SQL");
  const std::string tables = R"(  - name: t
    from: album
    families: [d]
    key: {parts: [album_id]}
    nest:
      - {table: track, on: {album_id: album_id}, family: d, prefix: s, id: [track_no], columns: [name]}
)";
  CommandResult r = Run("migrate", tables);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto cells = ReadTable(target_, "t");
  ASSERT_EQ(cells.count("3"), 1u);
  EXPECT_EQ(static_cast<int64_t>(cells.at("3").size()),
            Count(db_, "SELECT count(*) FROM track WHERE album_id = 3"));
  EXPECT_EQ(cells.at("3").at("d:s119999"), "{\"name\":\"" + std::string(90, 'n') + "119999\"}");

  // Ids that repeat across the spilled runs of the row.
  std::filesystem::remove_all(dir_ + "/store");
  const int64_t repeats =
      Count(db_, "SELECT count(*) - count(DISTINCT disc) FROM track WHERE album_id = 3");
  r = Run("migrate", R"(  - name: t
    from: album
    families: [d]
    key: {parts: [album_id]}
    where: "album_id = 3"
    nest:
      - {table: track, on: {album_id: album_id}, family: d, prefix: s, id: [disc], columns: [name]}
)");
  EXPECT_EQ(r.exit_code, 8) << r.output;
  EXPECT_NE(r.output.find(fmt::format("{} cell(s) replaced", repeats)), std::string::npos)
      << r.output;
}

// Keys that come in read order for a while (more than a batch or two), then
// do not: the run stays exact — re-running with a fixed timestamp after the
// source changed is no replacement, two source rows with one key (same value
// too) are, and rows are counted once.
TEST_F(CollisionsTest, KeysInOrderThenNotStayExact) {
  PgQuery(db_, R"SQL(
    CREATE TABLE r (id int PRIMARY KEY, k int NOT NULL, v text);
    INSERT INTO r SELECT g, CASE WHEN g <= 10000 THEN 2 * g ELSE 2 * (g - 10000) + 1 END,
                         repeat(md5(g::text), 32) FROM generate_series(1, 20000) g;
  )SQL");
  const std::string tables = R"(  - name: x:r
    from: r
    families: [d]
    key: {parts: [{column: k, width: 8}]}
    columns: [v]
)";
  CommandResult r = Run("migrate", tables, "--timestamp-ms 1000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(fmt::format("{:<32} {:>12} {:>10}", "x:r", 20000, 20000)),
            std::string::npos)
      << r.output;
  // The source changes; the same run again into the same store.
  PgQuery(db_, "UPDATE r SET v = 'changed' WHERE id = 10010");
  r = Run("migrate", tables, "--timestamp-ms 1000");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadTable(target_, "x:r").at("00000021").at("d:v"), "changed");
  // A row with another row's key and value, into a new store.
  std::filesystem::remove_all(dir_ + "/store");
  PgQuery(db_, "INSERT INTO r VALUES (20001, 100, repeat(md5('50'), 32))");
  r = Run("migrate", tables, "--timestamp-ms 1000");
  EXPECT_EQ(r.exit_code, 8) << r.output;
  EXPECT_NE(r.output.find("1 cell(s) replaced"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("row '00000100'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(fmt::format("{:<32} {:>12} {:>10}", "x:r", 20001, 20000)),
            std::string::npos)
      << r.output;
}

// Cells that replace each other keep, with any number of jobs, the value one
// job keeps (the later source row's), whatever the key's order.
TEST_F(CollisionsTest, JobsKeepTheValueOneJobKeeps) {
  PgQuery(db_, R"SQL(
    CREATE TABLE s (id int PRIMARY KEY, k int NOT NULL, v text NOT NULL);
    INSERT INTO s SELECT g, g, 'v' || g FROM generate_series(1, 30000) g;
    UPDATE s SET k = 5 WHERE id = 29000;
  )SQL");
  const std::string tables = R"(  - name: x:s
    from: s
    families: [d]
    key: {parts: [{column: k, width: 6}], salt: {buckets: 8}}
    columns: [v]
)";
  const std::string winner =
      PgQuery(db_, "SELECT v FROM s WHERE k = 5 ORDER BY id DESC LIMIT 1").at(0).at(0);
  for (const char* jobs : {"--jobs 1", "--jobs 2", "--jobs 3"}) {
    SCOPED_TRACE(jobs);
    std::filesystem::remove_all(dir_ + "/store");
    CommandResult r = Run("migrate", tables, jobs);
    EXPECT_EQ(r.exit_code, 8) << r.output;
    const auto cells = ReadTable(target_, "x:s");
    std::string value;
    for (const auto& [row, columns] : cells) {
      if (row.size() >= 6 && row.substr(row.size() - 6) == "000005") value = columns.at("d:v");
    }
    EXPECT_EQ(value, winner);
  }
}

}  // namespace
}  // namespace widen::testing
