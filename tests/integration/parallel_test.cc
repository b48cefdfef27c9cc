// widen migrate --jobs N on real servers: the jobs read one snapshot
// (Source::OpenSiblings) and together write exactly the cells of a one-job
// run — the one-job run is the reference, itself checked against SQL by the
// other integration tests. The data has what splitting could get wrong:
// negative and NULL split values, orphans, rejected rows, children of
// rejected parents, a second level of nesting and a table without nests.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "extract/source.h"
#include "store/store.h"
#include "tests/integration/source_scan.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

// grp (the nest link and split column) runs from -2998 to 3000 with NULLs;
// some children and grandchildren have no parent; `must` NULL rejects a row.
constexpr const char* kSchema = R"SQL(
CREATE TABLE parent (id bigint PRIMARY KEY, grp int UNIQUE, name varchar(40), must int);
CREATE TABLE child (id int PRIMARY KEY, parent_grp int, qty int, note varchar(40));
CREATE TABLE grandchild (id int PRIMARY KEY, child_id int NOT NULL, val varchar(40));
)SQL";

constexpr const char* kPgData = R"SQL(
INSERT INTO parent SELECT i, CASE WHEN i % 50 = 0 THEN NULL ELSE (i - 1500) * 2 END, 'p' || i,
  CASE WHEN i % 333 = 0 THEN NULL ELSE i END FROM generate_series(1, 3000) AS i;
INSERT INTO child SELECT i, CASE WHEN i % 97 = 0 THEN NULL ELSE ((i % 3200) - 1500) * 2 END,
  i % 7, CASE WHEN i % 5 = 0 THEN NULL ELSE 'n' || i END FROM generate_series(1, 8000) AS i;
INSERT INTO grandchild SELECT i, (i % 8100) + 1, 'g' || i FROM generate_series(1, 12000) AS i;
ANALYZE;
)SQL";

// MariaDB's sequence engine stands for generate_series.
const std::vector<std::string> kMySqlData = {
    "INSERT INTO parent SELECT seq, CASE WHEN seq % 50 = 0 THEN NULL ELSE (CAST(seq AS SIGNED) - "
    "1500) * 2 END, "
    "CONCAT('p', seq), CASE WHEN seq % 333 = 0 THEN NULL ELSE seq END FROM seq_1_to_3000",
    "INSERT INTO child SELECT seq, CASE WHEN seq % 97 = 0 THEN NULL ELSE (CAST(seq % 3200 AS "
    "SIGNED) - 1500) * 2 "
    "END, seq % 7, CASE WHEN seq % 5 = 0 THEN NULL ELSE CONCAT('n', seq) END FROM seq_1_to_8000",
    "INSERT INTO grandchild SELECT seq, (seq % 8100) + 1, CONCAT('g', seq) FROM seq_1_to_12000",
};

constexpr const char* kMapping = R"YAML(
source: ${WIDEN_SOURCE_URL}
tables:
  - name: t:parents
    from: parent
    families: [d, c]
    key:
      parts: [{column: id, width: 6}]
    columns:
      - {column: name, to: "d:name"}
      - {column: grp, to: "d:grp"}
      - {column: must, to: "d:must", on_null: reject}
    nest:
      - table: child
        on: {grp: parent_grp}
        family: c
        prefix: c
        id: [{column: id, width: 6}]
        columns: [qty, note]
        nest:
          - table: grandchild
            on: {id: child_id}
            prefix: g
            id: [{column: id, width: 6}]
            columns: [val]
  - name: t:children
    from: child
    families: [d]
    key:
      parts: [{column: id, width: 6}]
    columns:
      - {column: qty, to: "d:qty"}
      - {column: note, to: "d:note"}
)YAML";

struct Run {
  CommandResult result;
  std::string store;
  std::vector<std::string> rejects;  // lines, sorted
};

Run Migrate(const std::string& url, const std::string& dir, int jobs, int fetch_rows) {
  Run r;
  const std::string mapping = dir + "/mapping.yaml";
  if (!std::filesystem::exists(mapping)) std::ofstream(mapping) << kMapping;
  r.store = fmt::format("leveldb:{}/store{}", dir, jobs);
  const std::string rejects = fmt::format("{}/rejects{}.jsonl", dir, jobs);
  r.result = RunCommand(
      fmt::format("{} migrate -m {} --source {} --target {} --timestamp-ms 1600000000000 --jobs {} "
                  "--fetch-rows {} --rejects {}",
                  WidenBinary(), ShellQuote(mapping), ShellQuote(url), ShellQuote(r.store), jobs,
                  fetch_rows, ShellQuote(rejects)));
  std::ifstream in(rejects);
  for (std::string line; std::getline(in, line);) r.rejects.push_back(line);
  std::sort(r.rejects.begin(), r.rejects.end());
  return r;
}

// The summary lines that must not depend on the number of jobs: orphans.
std::vector<std::string> OrphanLines(const std::string& output) {
  std::vector<std::string> out;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.find("had no parent") != std::string::npos) out.push_back(line);
  }
  return out;
}

void ExpectSameStores(const std::string& a, const std::string& b) {
  std::vector<std::string> names;
  {
    auto store = Store::Open(a, StoreOptions{});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto tables = (*store)->ListTables();
    ASSERT_TRUE(tables.ok()) << tables.status().ToString();
    for (const auto& t : *tables) names.push_back(t.FullName());
  }
  ASSERT_EQ(names.size(), 2u);
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const auto want = ReadCells(a, name, 10);
    const auto got = ReadCells(b, name, 10);
    ASSERT_FALSE(want.empty());
    ASSERT_EQ(want.size(), got.size()) << "cells";
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(want[i].row, got[i].row) << "cell " << i;
      ASSERT_EQ(want[i].column, got[i].column) << "row " << want[i].row;
      ASSERT_EQ(want[i].timestamp_ms, got[i].timestamp_ms) << "row " << want[i].row;
      ASSERT_EQ(want[i].value, got[i].value) << "row " << want[i].row << " " << want[i].column;
    }
  }
}

void ExpectJobsAgree(const std::string& url) {
  const std::string dir = MakeTempDir();
  const Run one = Migrate(url, dir, 1, 5000);
  ASSERT_EQ(one.result.exit_code, 0) << one.result.output;
  ASSERT_FALSE(one.rejects.empty()) << "the data has rows to reject";
  ASSERT_FALSE(OrphanLines(one.result.output).empty()) << one.result.output;
  for (int jobs : {2, 5}) {
    SCOPED_TRACE(fmt::format("--jobs {}", jobs));
    const Run many = Migrate(url, dir, jobs, 37);
    ASSERT_EQ(many.result.exit_code, 0) << many.result.output;
    EXPECT_NE(
        many.result.output.find(fmt::format("t:parents: {} jobs, by ranges of parent.grp\n", jobs)),
        std::string::npos)
        << many.result.output;
    EXPECT_NE(many.result.output.find(fmt::format(
                  "t:children: {} jobs, by ranges of child.id, written in key order", jobs)),
              std::string::npos)
        << many.result.output;
    ExpectSameStores(one.store, many.store);
    EXPECT_EQ(one.rejects, many.rejects);
    EXPECT_EQ(OrphanLines(one.result.output), OrphanLines(many.result.output));
  }
}

TEST(ParallelJobsTest, PostgresJobsWriteTheCellsOfOneJob) {
  WIDEN_REQUIRE_PG(server);
  const std::string db = FreshPgDatabase(server, "widen_it_jobs");
  PgQuery(db, kSchema);
  PgQuery(db, kPgData);
  ExpectJobsAgree(db);
}

TEST(ParallelJobsTest, MySqlJobsWriteTheCellsOfOneJob) {
  WIDEN_REQUIRE_MYSQL(server);
  const std::string db = FreshMySqlDatabase(server, "widen_it_jobs");
  std::vector<std::string> setup;
  std::istringstream in(kSchema);
  for (std::string stmt; std::getline(in, stmt, ';');) {
    if (stmt.find_first_not_of(" \n") != std::string::npos) setup.push_back(stmt);
  }
  setup.insert(setup.end(), kMySqlData.begin(), kMySqlData.end());
  MySqlQuery(db, setup);
  ExpectJobsAgree(db);
}

// Jobs the cores cannot run at once are not made: each job keeps about two
// cores busy, so with WIDEN_CORES=2 (this run may use 2 cores) --jobs 2
// runs one job and says why, with 6 cores --jobs 5 runs 3; the store is the
// same either way. A WIDEN_CORES that is not a count is refused.
TEST(ParallelJobsTest, JobsTheCoresCannotRunAreNotMade) {
  WIDEN_REQUIRE_PG(server);
  const std::string db = FreshPgDatabase(server, "widen_it_jobs_cores");
  PgQuery(db, kSchema);
  PgQuery(db, kPgData);
  const std::string dir = MakeTempDir();
  const widen::testing::Run one = Migrate(db, dir, 1, 5000);
  ASSERT_EQ(one.result.exit_code, 0) << one.result.output;
  std::ofstream(dir + "/fewer.sh")
      << "exec env WIDEN_CORES=$1 " << WidenBinary() << " migrate -m " << dir
      << "/mapping.yaml --source " << ShellQuote(db) << " --target leveldb:" << dir
      << "/store.$1 --timestamp-ms 1600000000000 --jobs $2 "
      << "--rejects " << dir << "/rejects.$1\n";
  CommandResult two = RunCommand("sh " + dir + "/fewer.sh 2 2");
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_NE(two.output.find("t:parents: one job: 2 cores for this run"), std::string::npos)
      << two.output;
  ExpectSameStores(one.store, "leveldb:" + dir + "/store.2");
  CommandResult six = RunCommand("sh " + dir + "/fewer.sh 6 5");
  ASSERT_EQ(six.exit_code, 0) << six.output;
  EXPECT_NE(six.output.find("t:parents: 3 jobs, by ranges of parent.grp (not 5: 6 cores"),
            std::string::npos)
      << six.output;
  ExpectSameStores(one.store, "leveldb:" + dir + "/store.6");
  // A WIDEN_CORES that is not a positive whole number stops the run before
  // the target is opened, naming it.
  for (const std::string bad : {"two", "0", "2x"}) {
    CommandResult run = RunCommand("sh " + dir + "/fewer.sh " + bad + " 2");
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("WIDEN_CORES: '" + bad + "' is not a positive whole number"),
              std::string::npos)
        << run.output;
    EXPECT_FALSE(std::filesystem::exists(dir + "/store." + bad)) << bad;
  }
}

// A child just below a range's end whose parent does not exist, next to a
// rejected parent: an orphan whether or not a job's range ends there.
TEST(ParallelJobsTest, OrphansBesideARejectedParentCountTheSameInEveryJobCount) {
  WIDEN_REQUIRE_PG(server);
  const std::string db = FreshPgDatabase(server, "widen_it_jobs_orphan");
  PgQuery(db,
          "CREATE TABLE par (id int PRIMARY KEY, must int);"
          "INSERT INTO par VALUES (2, 1), (4, 1), (48, 1), (52, NULL), (54, 1), (100, 1);"
          "CREATE TABLE kid (id int PRIMARY KEY, pid int, note varchar(10));"
          "INSERT INTO kid VALUES (1, 2, 'a'), (2, 49, 'b'), (3, 52, 'c'), (4, 100, 'd')");
  // From the data: kid 2 (pid 49) has no parent; kid 3's parent is rejected.
  ASSERT_EQ(
      PgQuery(db, "SELECT count(*) FROM kid WHERE pid NOT IN (SELECT id FROM par)").at(0).at(0),
      "1");
  const std::string dir = MakeTempDir();
  std::ofstream(dir + "/m.yaml") << "source: ${WIDEN_SOURCE_URL}\ntables:\n"
                                    "  - name: t\n    from: par\n    families: [d]\n"
                                    "    key: {parts: [{column: id, width: 4}]}\n"
                                    "    columns: [{column: must, to: \"d:m\", on_null: reject}]\n"
                                    "    nest:\n      - table: kid\n        on: {id: pid}\n"
                                    "        family: d\n        prefix: k\n"
                                    "        id: [{column: id, width: 2}]\n";
  for (int jobs : {1, 2, 3}) {
    SCOPED_TRACE(fmt::format("--jobs {}", jobs));
    CommandResult r = RunCommand(fmt::format(
        "{} migrate -m {} --source {} --target leveldb:{}/s{} --jobs {} --rejects {}/r{}",
        WidenBinary(), ShellQuote(dir + "/m.yaml"), ShellQuote(db), dir, jobs, jobs, dir, jobs));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("t: 1 nested row(s) had no parent row"), std::string::npos) << r.output;
  }
}

// `url` connecting as `user` (the test servers' URLs connect as "widen").
std::string AsUser(std::string url, const std::string& user) {
  const size_t at = url.find("widen@");
  EXPECT_NE(at, std::string::npos) << url;
  if (at != std::string::npos) url.replace(at, 5, user);
  return url;
}

// Writes DIR/FILE: one target table `t` from source table `t` (id, v), with
// an optional `where`; returns its path.
std::string WriteTableT(const std::string& dir, const std::string& file,
                        const std::string& where = "") {
  const std::string path = dir + "/" + file;
  std::ofstream(path) << "source: ${WIDEN_SOURCE_URL}\ntables:\n  - name: t\n    from: t\n"
                         "    families: [d]\n"
                      << (where.empty() ? "" : "    where: \"" + where + "\"\n")
                      << "    key: {parts: [{column: id, width: 4}]}\n"
                         "    columns: [{column: v, to: \"d:v\"}]\n";
  return path;
}

// The one value of `sql` (a query returning column `v`) read through the
// source's session, as text; "" (and a test failure) when it cannot be read.
std::string SessionValue(const std::string& url, const std::string& sql) {
  auto source = OpenSource(url);
  if (source == nullptr) return "";
  ScanSpec spec;
  spec.query = sql;
  spec.alias = "q";
  spec.columns.push_back(ColumnExpr{"q", "v", false});
  auto rows = source->Scan(spec);
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  if (!rows.ok() || !(*rows)->Valid()) return "";
  return (*rows)->row()[0].ToText();
}

// A role's idle timeout must not cut off a job's connection while it waits
// for its turn: the session turns it off.
TEST(ParallelJobsTest, IdleTimeoutsAreOffInTheSession) {
  {
    WIDEN_REQUIRE_PG(server);
    const std::string db = FreshPgDatabase(server, "widen_it_jobs_idle");
    PgQuery(db,
            "DROP ROLE IF EXISTS widen_idle; CREATE ROLE widen_idle LOGIN; "
            "ALTER ROLE widen_idle SET idle_in_transaction_session_timeout = '1500ms'");
    EXPECT_EQ(SessionValue(AsUser(db, "widen_idle"),
                           "SELECT current_setting('idle_in_transaction_session_timeout') "
                           "AS v"),
              "0");
  }
  {
    WIDEN_REQUIRE_MYSQL(server);
    EXPECT_EQ(SessionValue(server, "SELECT @@session.wait_timeout AS v"), "604800");
  }
}

// A fresh PostgreSQL database (FreshPgDatabase) whose sessions start with
// `setting` ("name = value", quotes doubled); its URL.
std::string PgDatabaseWithDefault(const std::string& server, const std::string& base,
                                  const std::string& setting) {
  const std::string db = FreshPgDatabase(server, base);
  PgQuery(db, "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET " + setting +
                  "', current_database()); END $$");
  return db;
}

// A database whose default turns the JIT compiler on still gives widen a
// session without it (docs/types.md): a fresh session would otherwise load
// the compiler for the first query the planner costs above the threshold.
TEST(ParallelJobsTest, JitIsOffInThePostgresSession) {
  WIDEN_REQUIRE_PG(server);
  const std::string db = PgDatabaseWithDefault(server, "widen_it_jit", "jit = on");
  EXPECT_EQ(SessionValue(db, "SELECT current_setting('jit') AS v"), "off");
  // Every connection of a run: the --jobs siblings too.
  auto source = OpenSource(db);
  ASSERT_NE(source, nullptr);
  auto siblings = source->OpenSiblings(1, SourceReads());
  ASSERT_TRUE(siblings.ok()) << siblings.status().ToString();
  ScanSpec spec;
  spec.query = "SELECT current_setting('jit') AS v";
  spec.alias = "q";
  spec.columns.push_back(ColumnExpr{"q", "v", false});
  auto rows = (*siblings)[0]->Scan(spec);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_TRUE((*rows)->Valid());
  EXPECT_EQ((*rows)->row()[0].ToText(), "off");
}

// A database's statement time limit would fail every long read of every
// run alike: the session turns it off (docs/types.md).
TEST(ParallelJobsTest, StatementTimeoutIsOffInThePostgresSession) {
  WIDEN_REQUIRE_PG(server);
  const std::string db =
      PgDatabaseWithDefault(server, "widen_it_stmt_timeout", "statement_timeout = ''1ms''");
  EXPECT_EQ(SessionValue(db, "SELECT current_setting('statement_timeout') AS v"), "0");
  // A statement longer than the database's limit runs to its end.
  EXPECT_EQ(SessionValue(db, "SELECT pg_sleep(0.05)::text || 'slept' AS v"), "slept");
}

// Counts the rows of `table` through `source`.
size_t CountRows(Source* source, const std::string& table) {
  return ScanTable(source, table, {"id"}).rows.size();
}

TEST(ParallelJobsTest, PostgresSiblingsReadTheFirstConnectionsSnapshot) {
  WIDEN_REQUIRE_PG(server);
  const std::string db = FreshPgDatabase(server, "widen_it_snap");
  PgQuery(db, "CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 10)");
  auto main = OpenSource(db);
  ASSERT_NE(main, nullptr);
  ASSERT_EQ(CountRows(main.get(), "t"), 10u);  // the snapshot is taken here
  PgQuery(db, "INSERT INTO t VALUES (11)");    // committed after it
  auto siblings = main->OpenSiblings(2, SourceReads{{"t"}, false});
  ASSERT_TRUE(siblings.ok()) << siblings.status().ToString();
  ASSERT_EQ(siblings->size(), 2u);
  PgQuery(db, "INSERT INTO t VALUES (12)");
  for (auto& s : *siblings) EXPECT_EQ(CountRows(s.get(), "t"), 10u);
  EXPECT_EQ(CountRows(main.get(), "t"), 10u);
  EXPECT_EQ(PgQuery(db, "SELECT count(*) FROM t").at(0).at(0), "12");
}

TEST(ParallelJobsTest, MySqlSiblingsAndTheFirstConnectionShareOneSnapshot) {
  WIDEN_REQUIRE_MYSQL(server);
  const std::string db = FreshMySqlDatabase(server, "widen_it_snap");
  MySqlQuery(db, std::vector<std::string>{"CREATE TABLE t (id int PRIMARY KEY)",
                                          "INSERT INTO t SELECT seq FROM seq_1_to_10"});
  auto main = OpenSource(db);
  ASSERT_NE(main, nullptr);
  ASSERT_EQ(CountRows(main.get(), "t"), 10u);
  // MySQL cannot hand a snapshot on: the first connection's is taken anew
  // together with the siblings', under a brief read lock.
  MySqlQuery(db, "INSERT INTO t VALUES (11)");
  auto siblings = main->OpenSiblings(2, SourceReads{{"t"}, false});
  ASSERT_TRUE(siblings.ok()) << siblings.status().ToString();
  MySqlQuery(db, "INSERT INTO t VALUES (12)");
  for (auto& s : *siblings) EXPECT_EQ(CountRows(s.get(), "t"), 11u);
  EXPECT_EQ(CountRows(main.get(), "t"), 11u);
  EXPECT_EQ(MySqlQuery(db, "SELECT count(*) FROM t").at(0).at(0), "12");
}

// A user without RELOAD falls back to LOCK TABLES on the tables read; without
// that either, --jobs fails before the target is touched, saying what to grant.
TEST(ParallelJobsTest, MySqlJobsNeedReloadOrLockTables) {
  WIDEN_REQUIRE_MYSQL(server);
  const std::string db = FreshMySqlDatabase(server, "widen_it_grant");
  const std::string name = db.substr(db.rfind('/') + 1);
  MySqlQuery(
      db, std::vector<std::string>{
              "CREATE TABLE t (id int PRIMARY KEY, v int)",
              "INSERT INTO t SELECT seq, seq FROM seq_1_to_100",
              "DROP USER IF EXISTS 'widen_lock'@'127.0.0.1'",
              "DROP USER IF EXISTS 'widen_read'@'127.0.0.1'",
              "CREATE USER 'widen_lock'@'127.0.0.1'", "CREATE USER 'widen_read'@'127.0.0.1'",
              fmt::format("GRANT SELECT, LOCK TABLES ON `{}`.* TO 'widen_lock'@'127.0.0.1'", name),
              fmt::format("GRANT SELECT ON `{}`.* TO 'widen_read'@'127.0.0.1'", name)});
  auto as = [&](const std::string& user) { return AsUser(db, user); };
  {
    auto main = OpenSource(as("widen_lock"));
    ASSERT_NE(main, nullptr);
    auto siblings = main->OpenSiblings(1, SourceReads{{"t"}, false});
    ASSERT_TRUE(siblings.ok()) << siblings.status().ToString();
    EXPECT_EQ(CountRows(siblings->front().get(), "t"), 100u);
    // A free-form query may read tables LOCK TABLES would not cover.
    auto with_query = main->OpenSiblings(1, SourceReads{{"t"}, true});
    EXPECT_EQ(with_query.status().code(), StatusCode::kPermissionDenied);
  }
  {
    auto main = OpenSource(as("widen_read"));
    ASSERT_NE(main, nullptr);
    auto siblings = main->OpenSiblings(1, SourceReads{{"t"}, false});
    ASSERT_EQ(siblings.status().code(), StatusCode::kPermissionDenied);
    EXPECT_NE(siblings.status().message().find("grant RELOAD or LOCK TABLES"), std::string::npos)
        << siblings.status().message();
  }
  // Through the command: exit 4, and no target was created.
  const std::string dir = MakeTempDir();
  WriteTableT(dir, "m.yaml");
  CommandResult r = RunCommand(
      fmt::format("{} migrate -m {} --source {} --target leveldb:{}/store --jobs 2", WidenBinary(),
                  ShellQuote(dir + "/m.yaml"), ShellQuote(as("widen_read")), dir));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("--jobs 1"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/store"));

  // LOCK TABLES covers the tables the mapping names, so it will do for a
  // plain mapping but not for a `where` whose subquery reads another table.
  r = RunCommand(fmt::format("{} migrate -m {} --source {} --target leveldb:{}/lock --jobs 2",
                             WidenBinary(), ShellQuote(dir + "/m.yaml"),
                             ShellQuote(as("widen_lock")), dir));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  WriteTableT(dir, "w.yaml", "v > (SELECT min(v) FROM t AS t2)");
  r = RunCommand(fmt::format("{} migrate -m {} --source {} --target leveldb:{}/sub --jobs 2",
                             WidenBinary(), ShellQuote(dir + "/w.yaml"),
                             ShellQuote(as("widen_lock")), dir));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("a where with a subquery"), std::string::npos) << r.output;
}

// BIGINT UNSIGNED ids split too, and ids above 2^63 - 1 land in the last,
// open range; a table with a text key runs as one job, and when no table
// splits no further connection (nor lock, nor privilege) is needed.
TEST(ParallelJobsTest, MySqlUnsignedKeysSplitAndUnsplittableTablesNeedNoLock) {
  WIDEN_REQUIRE_MYSQL(server);
  const std::string db = FreshMySqlDatabase(server, "widen_it_jobs_uint");
  const std::string name = db.substr(db.rfind('/') + 1);
  MySqlQuery(
      db, std::vector<std::string>{
              "CREATE TABLE bu (id bigint unsigned PRIMARY KEY, v int)",
              "INSERT INTO bu SELECT seq, seq FROM seq_1_to_1000",
              "INSERT INTO bu VALUES (9223372036854775808, 1), (18446744073709551615, 2)",
              "CREATE TABLE tk (code varchar(10) PRIMARY KEY, v int)",
              "INSERT INTO tk SELECT CONCAT('c', seq), seq FROM seq_1_to_50",
              "DROP USER IF EXISTS 'widen_sel'@'127.0.0.1'", "CREATE USER 'widen_sel'@'127.0.0.1'",
              fmt::format("GRANT SELECT ON `{}`.* TO 'widen_sel'@'127.0.0.1'", name)});
  const std::string dir = MakeTempDir();
  std::ofstream(dir + "/m.yaml") << "source: ${WIDEN_SOURCE_URL}\ntables:\n"
                                    "  - name: u\n    from: bu\n    families: [d]\n"
                                    "    key: {parts: [{column: id, width: 20}]}\n"
                                    "    columns: [{column: v, to: \"d:v\"}]\n"
                                    "  - name: k\n    from: tk\n    families: [d]\n"
                                    "    key: {parts: [code]}\n"
                                    "    columns: [{column: v, to: \"d:v\"}]\n";
  auto migrate = [&](const std::string& url, const std::string& table, int jobs,
                     const std::string& store) {
    return RunCommand(fmt::format(
        "{} migrate -m {} --source {} --target leveldb:{}/{} --jobs {} --timestamp-ms 1 {}",
        WidenBinary(), ShellQuote(dir + "/m.yaml"), ShellQuote(url), dir, store, jobs,
        table.empty() ? "" : "--table " + table));
  };
  CommandResult one = migrate(db, "", 1, "one");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  CommandResult three = migrate(db, "", 3, "three");
  ASSERT_EQ(three.exit_code, 0) << three.output;
  EXPECT_NE(three.output.find("u: 3 jobs, by ranges of bu.id, written in key order"),
            std::string::npos)
      << three.output;
  EXPECT_NE(three.output.find("k: one job: tk.code is not an integer column"), std::string::npos)
      << three.output;
  ExpectSameStores("leveldb:" + dir + "/one", "leveldb:" + dir + "/three");
  EXPECT_EQ(ReadTable("leveldb:" + dir + "/three", "u").count("18446744073709551615"), 1u);

  const std::string sel = AsUser(db, "widen_sel");
  CommandResult text_only = migrate(sel, "k", 4, "sel");
  EXPECT_EQ(text_only.exit_code, 0) << text_only.output;
}

// Another session's lock keeps the snapshot lock from being granted: widen
// gives up after 10 s as a retryable failure (exit 3), not a privilege error.
TEST(ParallelJobsTest, MySqlSnapshotLockWaitIsUnavailable) {
  WIDEN_REQUIRE_MYSQL(server);
  const std::string db = FreshMySqlDatabase(server, "widen_it_lockwait");
  MySqlQuery(db, std::vector<std::string>{"CREATE TABLE t (id int PRIMARY KEY, v int)",
                                          "INSERT INTO t SELECT seq, seq FROM seq_1_to_100",
                                          "CREATE TABLE other (id int PRIMARY KEY)"});
  const std::string dir = MakeTempDir();
  WriteTableT(dir, "m.yaml");
  std::thread holder([&] {
    MySqlQuery(
        db, std::vector<std::string>{"LOCK TABLES other WRITE", "DO SLEEP(12)", "UNLOCK TABLES"});
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  CommandResult r =
      RunCommand(fmt::format("{} migrate -m {} --source {} --target leveldb:{}/store --jobs 2",
                             WidenBinary(), ShellQuote(dir + "/m.yaml"), ShellQuote(db), dir));
  holder.join();
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("not granted within 10 s"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/store"));
}

}  // namespace
}  // namespace widen::testing
