// widen sync on real servers, both engines: after each scripted change
// sequence the synced store equals, cell by cell with every version, a fresh
// migrate of the final source state into an empty store with the same cell
// timestamp — the reference, itself checked against SQL by the migrate
// tests. The design has what sync could get wrong: a composite key not in
// read order (customer|order) that changes when an order moves to another
// customer, a denormalized customer name (fan-out), nested lines (moved,
// removed, added), a duplicated table keyed by customer with the orders
// nested, and a column set to NULL and back. Also: a sync with nothing to do
// writes nothing; a sync killed (SIGKILL) at random points converges on the
// next run; a second sync while one runs exits 7 and writes nothing. Into
// the embedded store and into HBase (sync_target.h; in HBase the second
// sync is refused by the table's lock).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/sync_target.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

enum class Engine { kPostgres, kMySql };

struct Case {
  Engine engine;
  Target target = Target::kEmbedded;
};

constexpr const char* kMapping = R"YAML(
source: ${WIDEN_SOURCE_URL}
tables:
  - name: s:orders
    from: orders
    families: [d, l]
    key:
      parts: [{column: customer_id, width: 6}, {column: id, width: 8}]
    joins:
      - {table: customer, on: {customer_id: id}}
    columns:
      - {column: customer.name, to: "d:customer"}
      - {column: status, to: "d:status"}
      - {column: total, to: "d:total"}
    nest:
      - table: line
        on: {id: order_id}
        family: l
        prefix: l
        id: [{column: id, width: 8}]
        columns: [product, qty]
  - name: s:by_customer
    from: customer
    families: [d, o]
    key:
      parts: [{column: id, width: 6}]
    columns:
      - {column: name, to: "d:name"}
      - {column: city, to: "d:city"}
    nest:
      - table: orders
        on: {id: customer_id}
        family: o
        prefix: o
        id: [{column: id, width: 8}]
        columns: [status]
)YAML";

// Both engines: `n` customers, 4n orders, 3 lines each.
std::vector<std::string> Schema(Engine e, int n) {
  const bool pg = e == Engine::kPostgres;
  auto series = [&](int count) {
    return pg ? fmt::format("generate_series(1, {}) AS g(i)", count)
              : fmt::format("(SELECT seq AS i FROM seq_1_to_{}) AS g", count);
  };
  const std::string concat_c = pg ? "'c' || i" : "CONCAT('c', i)";
  const std::string concat_p = pg ? "'p' || (i % 17)" : "CONCAT('p', i % 17)";
  return {
      "CREATE TABLE customer (id int PRIMARY KEY, name varchar(40), city varchar(40))",
      "CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, status varchar(20), "
      "total int)",
      "CREATE TABLE line (id int PRIMARY KEY, order_id int NOT NULL, product varchar(20), qty "
      "int)",
      fmt::format("INSERT INTO customer SELECT i, {}, 'city' FROM {}", concat_c, series(n)),
      fmt::format("INSERT INTO orders SELECT i, (i % {}) + 1, 'new', i * 10 FROM {}", n,
                  series(4 * n)),
      fmt::format("INSERT INTO line SELECT i, (i % {}) + 1, {}, i % 5 FROM {}", 4 * n, concat_p,
                  series(12 * n)),
  };
}

// Whether a sync or migrate holds table `table` of the target (below).
bool Held(const SyncTarget& target, const std::string& dir, const std::string& table);

class SyncTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (engine() == Engine::kPostgres) {
      const std::string url = PgUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_PG_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_PG_URL not set (run through scripts/with-servers.sh)";
      }
      db_ = FreshPgDatabase(url, "widen_it_sync");
    } else {
      const std::string url = MySqlUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_MYSQL_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_MYSQL_URL not set (run through scripts/with-servers.sh)";
      }
      db_ = FreshMySqlDatabase(url, "widen_it_sync");
    }
    dir_ = MakeTempDir();
    mapping_ = dir_ + "/mapping.yaml";
    target_ = std::make_unique<SyncTarget>(GetParam().target, dir_);
    if (target_->skipped()) GTEST_SKIP() << "WIDEN_TEST_HBASE_URL not set";
    std::ofstream(mapping_) << target_->Mapping(kMapping);
    store_ = target_->url();
    orders_ = target_->Table("s:orders");
  }

  Engine engine() const { return GetParam().engine; }

  // Starts `widen COMMAND -q -m MAPPING --target STORE` in a child process,
  // the source in WIDEN_SOURCE_URL: its pid (-1 when fork failed), which the
  // caller waits for.
  pid_t StartWiden(const std::string& command) const {
    const pid_t pid = fork();
    if (pid == 0) {
      setenv("WIDEN_SOURCE_URL", db_.c_str(), 1);
      const std::string bin = WidenBinary();
      execl(bin.c_str(), bin.c_str(), command.c_str(), "-q", "-m", mapping_.c_str(), "--target",
            store_.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    return pid;
  }

  // Whether a run holds the store (or, in HBase, table orders) within
  // `polls` looks 5 ms apart.
  bool WaitUntilHeld(int polls) const {
    for (int i = 0; i < polls; ++i) {
      if (Held(*target_, dir_, orders_)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  // Runs widen `first` (sync or migrate, into the existing target) while
  // the source's table orders is locked by another session, then each of
  // `others` once the first holds the target: each must exit busy (7) at
  // once while the first still waits. Then the first goes on and ends well.
  void RunBusyWhileWaiting(const std::string& first, const std::vector<std::string>& others) {
    std::unique_ptr<SqlSession> locker = SqlSession::Open(db_);
    ASSERT_NE(locker, nullptr);
    if (engine() == Engine::kPostgres) {
      locker->Exec("BEGIN");
      locker->Exec("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE");
    } else {
      locker->Exec("LOCK TABLES orders WRITE");
    }
    ASSERT_FALSE(HasFailure());
    const pid_t pid = StartWiden(first);
    ASSERT_GE(pid, 0);
    EXPECT_TRUE(WaitUntilHeld(2000))
        << "the first " << first << " did not take the target before reading the source";
    for (const std::string& other : others) {
      // Bounded: one that queued at the source would wait as long as the lock.
      CommandResult second = RunCommand(
          "timeout 60 env " + Widen(fmt::format("{} -m {} --target {}", other, ShellQuote(mapping_),
                                                ShellQuote(store_))));
      EXPECT_EQ(second.exit_code, 7)
          << other << " while a " << first << " waits: " << second.output;
    }
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, WNOHANG), 0)
        << "the first " << first << " did not wait for the source";
    locker->Exec(engine() == Engine::kPostgres ? "COMMIT" : "UNLOCK TABLES");
    locker.reset();
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }

  void Sql(const std::vector<std::string>& statements) {
    if (engine() == Engine::kPostgres) {
      for (const auto& s : statements) PgQuery(db_, s);
    } else {
      MySqlQuery(db_, statements);
    }
  }

  std::string Widen(const std::string& args) const {
    return fmt::format("WIDEN_SOURCE_URL={} {} {}", ShellQuote(db_), WidenBinary(), args);
  }

  // widen sync --format json into the synced store; its document.
  nlohmann::json SyncJson() {
    CommandResult r = RunCommand(Widen(fmt::format("sync -m {} --target {} --format json",
                                                   ShellQuote(mapping_), ShellQuote(store_))));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const size_t brace = r.output.find('{');
    if (r.exit_code != 0 || brace == std::string::npos) return nlohmann::json();
    return nlohmann::json::parse(r.output.substr(brace), nullptr, false);
  }

  // The synced store equals a fresh migrate of the source as it is now,
  // with the timestamp the sync used, cell by cell, every version (into
  // HBase the last such check also against a fresh migrate into HBase, at
  // the end of the test: sync_target.h). `extra` are more migrate arguments.
  void ExpectSameAsAFreshMigrate(int64_t timestamp_ms, const std::string& extra = "",
                                 const std::string& design = kMapping) {
    target_->ExpectSameAsAFreshMigrate(
        [this](const std::string& args) { return RunCommand(Widen(args)); }, design,
        {"s:orders", "s:by_customer"}, timestamp_ms, extra);
  }

  void TearDown() override {
    if (target_ != nullptr && !HasFailure()) target_->ExpectLastInTheTarget();
  }

  static uint64_t Total(const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) ? j[key].get<uint64_t>() : ~0ull;
  }

  std::string db_, dir_, mapping_, store_;
  std::unique_ptr<SyncTarget> target_;
  std::string orders_;  // the target's name of s:orders
};

TEST_P(SyncTest, EveryChangeReachesEveryRowThatHoldsIt) {
  Sql(Schema(engine(), 30));
  // First run: no state, a full load; records the timestamp it used.
  nlohmann::json first = SyncJson();
  ASSERT_TRUE(first.is_object());
  const int64_t ts = first["tables"][0]["timestamp_ms"].get<int64_t>();
  EXPECT_EQ(first["tables"][1]["timestamp_ms"].get<int64_t>(), ts);
  EXPECT_EQ(Total(first, "rows_written"), 120u + 30u);  // 4n orders + n customers
  ExpectSameAsAFreshMigrate(ts);

  // Nothing changed: nothing written.
  nlohmann::json idle = SyncJson();
  EXPECT_EQ(Total(idle, "rows_written"), 0u);
  EXPECT_EQ(Total(idle, "rows_deleted"), 0u);
  EXPECT_EQ(Total(idle, "cells_put"), 0u);

  // Inserts, an update, a hard delete of an order and its lines.
  Sql({"INSERT INTO orders VALUES (1000, 3, 'new', 5)",
       "INSERT INTO line VALUES (5000, 1000, 'px', 1), (5001, 1000, 'py', 2)",
       "UPDATE orders SET status = 'paid' WHERE id = 7", "DELETE FROM line WHERE order_id = 9",
       "DELETE FROM orders WHERE id = 9"});
  nlohmann::json s1 = SyncJson();
  // orders: 1000 added, 7 changed, 9 removed; by_customer: the customers of
  // 1000, 7 and 9 (nested order statuses) rewritten.
  EXPECT_EQ(Total(s1, "rows_deleted"), 1u);
  EXPECT_EQ(s1["tables"][0]["rows_written"].get<uint64_t>(), 2u);
  EXPECT_EQ(s1["tables"][1]["rows_written"].get<uint64_t>(), 3u);
  ExpectSameAsAFreshMigrate(ts);

  // A line moved to another order; a customer renamed (fan-out to each of
  // its orders and its by_customer row); a status set to NULL; an order
  // moved to another customer (its row key changes).
  Sql({"UPDATE line SET order_id = 12 WHERE id = 11",
       "UPDATE customer SET name = 'renamed' WHERE id = 5",
       "UPDATE orders SET status = NULL WHERE id = 20",
       "UPDATE orders SET customer_id = 1 WHERE id = 33"});
  nlohmann::json s2 = SyncJson();
  EXPECT_GE(Total(s2, "rows_written"), 4u);
  ExpectSameAsAFreshMigrate(ts);

  // NULL and back; a customer deleted with its orders and lines.
  Sql({"UPDATE orders SET status = 'back' WHERE id = 20",
       "DELETE FROM line WHERE order_id IN (SELECT id FROM orders WHERE customer_id = 2)"});
  Sql({"DELETE FROM orders WHERE customer_id = 2", "DELETE FROM customer WHERE id = 2"});
  nlohmann::json s3 = SyncJson();
  EXPECT_GE(Total(s3, "rows_deleted"), 2u);
  ExpectSameAsAFreshMigrate(ts);
}

// A store loaded by migrate: the first sync rewrites its rows once (no
// digests yet) and removes the rows the source no longer gives.
TEST_P(SyncTest, SyncAfterMigrateRemovesRowsDeletedMeanwhile) {
  Sql(Schema(engine(), 10));
  CommandResult r = RunCommand(
      Widen(fmt::format("migrate -q -m {} --target {}", ShellQuote(mapping_), ShellQuote(store_))));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  Sql({"DELETE FROM line WHERE order_id = 4", "DELETE FROM orders WHERE id = 4"});
  nlohmann::json s = SyncJson();
  ASSERT_TRUE(s.is_object());
  EXPECT_EQ(s["tables"][0]["rows_deleted"].get<uint64_t>(), 1u);
  ExpectSameAsAFreshMigrate(s["tables"][0]["timestamp_ms"].get<int64_t>());
  // Now with digests: nothing to do.
  EXPECT_EQ(Total(SyncJson(), "rows_written"), 0u);
}

// A row that cannot be encoded stops a sync (exit 2, naming it) as it stops
// a migrate, or with --rejects goes to the file and out of the target: its
// old row is removed, as a migrate with --rejects leaves it out.
TEST_P(SyncTest, ARowThatCannotBeEncodedStopsTheSyncOrGoesToTheRejects) {
  Sql(Schema(engine(), 10));
  nlohmann::json first = SyncJson();
  ASSERT_TRUE(first.is_object());
  const int64_t ts = first["tables"][0]["timestamp_ms"].get<int64_t>();
  // Order 7 moves to a customer id wider than the key part's 6 digits.
  Sql({"UPDATE orders SET customer_id = 1234567 WHERE id = 7"});
  CommandResult r = RunCommand(
      Widen(fmt::format("sync -m {} --target {}", ShellQuote(mapping_), ShellQuote(store_))));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("id=7"), std::string::npos) << r.output;
  const std::string rejects = dir_ + "/rejects.jsonl";
  r = RunCommand(Widen(fmt::format("sync -m {} --target {} --rejects {} --format json",
                                   ShellQuote(mapping_), ShellQuote(store_), ShellQuote(rejects))));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(rejects);
  std::string line, all;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    all += line;
  }
  EXPECT_EQ(lines, 1) << all;
  EXPECT_NE(all.find("id=7"), std::string::npos) << all;
  // The store equals a migrate that rejects the same row.
  ExpectSameAsAFreshMigrate(ts, "--rejects " + ShellQuote(dir_ + "/fresh-rejects.jsonl"));
}

// A table last written with another design: sync says so (exit 5) and writes
// nothing, unless told to accept it once.
TEST_P(SyncTest, AChangedMappingIsRefusedUntilAccepted) {
  Sql(Schema(engine(), 5));
  ASSERT_TRUE(SyncJson().is_object());
  const std::vector<CellRecord> before = ReadCells(store_, orders_, 1000);
  std::string text = kMapping;
  text.replace(text.find("d:total"), 7, "d:amount");
  std::ofstream(mapping_) << target_->Mapping(text);
  CommandResult r = RunCommand(
      Widen(fmt::format("sync -m {} --target {}", ShellQuote(mapping_), ShellQuote(store_))));
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find("'" + orders_ + "' was last written with another design"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--accept-mapping-change"), std::string::npos) << r.output;
  const std::vector<CellRecord> after = ReadCells(store_, orders_, 1000);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after[i].column, before[i].column);
  r = RunCommand(Widen(fmt::format("sync -m {} --target {} --accept-mapping-change --format json",
                                   ShellQuote(mapping_), ShellQuote(store_))));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  ExpectSameAsAFreshMigrate(j["tables"][0]["timestamp_ms"].get<int64_t>(), "", text);
  // Accepted once: the next sync runs as usual and has nothing to do.
  EXPECT_EQ(Total(SyncJson(), "rows_written"), 0u);
}

// SIGKILL at random moments of a sync that rewrites many rows: the next
// sync converges to the fresh migrate.
using SyncKillDigestTest = SyncTest;

TEST_P(SyncKillDigestTest, ASyncKilledAnywhereConvergesOnTheNextRun) {
  // Into HBase fewer rows: each trial rewrites every one (the kills land
  // within the run's time all the same).
  Sql(Schema(engine(), target_->hbase() ? 500 : 2000));
  nlohmann::json first = SyncJson();
  ASSERT_TRUE(first.is_object());
  const int64_t ts = first["tables"][0]["timestamp_ms"].get<int64_t>();
  // How long a sync that rewrites every row takes here: the kills land
  // at random moments within it.
  Sql({"UPDATE orders SET total = total + 1"});
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(SyncJson().is_object());
  const auto full_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  std::mt19937 rng(20261201);
  int killed = 0;  // trials where the kill landed before the run ended
  for (int trial = 0; trial < 10; ++trial) {
    SCOPED_TRACE(trial);
    // Every order changes: every row of both tables is rewritten.
    Sql({fmt::format("UPDATE orders SET total = total + 1, status = 's{}'", trial)});
    const pid_t pid = StartWiden("sync");
    ASSERT_GE(pid, 0);
    std::this_thread::sleep_for(
        std::chrono::milliseconds(rng() % std::max<int64_t>(1, full_ms * 8 / 10)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) ++killed;
    nlohmann::json after = SyncJson();
    ASSERT_TRUE(after.is_object());
    ExpectSameAsAFreshMigrate(ts);
    if (HasFailure()) break;
  }
  EXPECT_GE(killed, 5) << "most kills should land while the sync runs";
}

// Whether a sync holds the store: the embedded store's LevelDB lock on its
// LOCK file (a POSIX record lock another process can see), or in HBase the
// lock of table `table`: a lease in the cell s:l of its row in widen:state.
bool Held(const SyncTarget& target, const std::string& dir, const std::string& table) {
  if (!target.hbase()) {
    const int fd = open((dir + "/synced/LOCK").c_str(), O_RDWR);
    if (fd < 0) return false;
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    const bool held = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    close(fd);
    return held;
  }
#ifdef WIDEN_WITH_HBASE
  RawHBase hbase(target.url());
  if (!hbase->tableExists(RawHBase::Name("widen:state"))) return false;
  thrift2::TGet get;
  get.row = table;
  thrift2::TColumn column;
  column.family = "s";
  column.__set_qualifier("l");
  get.__set_columns({column});
  thrift2::TResult result;
  hbase->get(result, "widen:state", get);
  return !result.columnValues.empty() && !result.columnValues[0].value.empty();
#else
  (void)table;
  return false;
#endif
}

TEST_P(SyncTest, ASecondSyncWhileOneRunsExitsBusyAndWritesNothing) {
  Sql(Schema(engine(), 3000));
  const pid_t pid = StartWiden("sync");
  ASSERT_GE(pid, 0);
  ASSERT_TRUE(WaitUntilHeld(1000)) << "the first sync never opened the store";
  CommandResult second = RunCommand(
      Widen(fmt::format("sync -m {} --target {}", ShellQuote(mapping_), ShellQuote(store_))));
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(second.exit_code, 7) << second.output;
  if (target_->hbase()) {
    // The first of the mapping's tables in name order: every run takes them
    // in that order.
    EXPECT_NE(second.output.find("table '" + target_->Table("s:by_customer") +
                                 "' is being written by another widen run (process " +
                                 std::to_string(pid) + " on host"),
              std::string::npos)
        << second.output;
    EXPECT_FALSE(Held(*target_, dir_, orders_)) << "the first sync gives its lock up";
  } else {
    EXPECT_NE(second.output.find("in use"), std::string::npos) << second.output;
  }
}

// A sync whose source makes it wait (a table locked there by another
// session) already holds its tables: a second sync exits busy while the
// first still waits, instead of queueing behind it at the source, so runs
// from cron do not pile up. Then the first goes on and finishes.
// Runs `first` (a widen command with its arguments, into the existing
// target) while the source's table orders is locked by another session,
// then each of `others` once the first holds the target: each must exit
// busy (7) while the first still waits. Then the first goes on and ends
// well.
TEST_P(SyncTest, ASecondSyncExitsBusyWhileTheFirstWaitsForTheSource) {
  Sql(Schema(engine(), 300));
  SyncJson();  // the target exists
  ASSERT_FALSE(HasFailure());
  RunBusyWhileWaiting("sync", {"sync"});
}

// The same for a migrate: it holds its tables before it opens the source,
// so neither a second migrate nor a sync (nor, in the embedded store, a
// verify) queues behind it at the source.
TEST_P(SyncTest, AMigrateWaitingForTheSourceAlreadyHoldsItsTables) {
  Sql(Schema(engine(), 300));
  CommandResult made = RunCommand(
      Widen(fmt::format("migrate -q -m {} --target {}", ShellQuote(mapping_), ShellQuote(store_))));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  // A verify, which locks no table, finds the embedded store open (HBase
  // has no such lock for it: it reads beside the writer).
  std::vector<std::string> others = {"migrate", "sync"};
  if (!target_->hbase()) others.push_back("verify");
  RunBusyWhileWaiting("migrate", others);
}

std::string CaseName(const ::testing::TestParamInfo<Case>& i) {
  return std::string(i.param.engine == Engine::kPostgres ? "Postgres" : "MySql") +
         TargetName(i.param.target);
}

INSTANTIATE_TEST_SUITE_P(Engines, SyncTest,
                         ::testing::Values(Case{Engine::kPostgres}, Case{Engine::kMySql}),
                         CaseName);
#ifdef WIDEN_WITH_HBASE
// Into HBase, compared with fresh migrates into HBase.
INSTANTIATE_TEST_SUITE_P(EnginesIntoHBase, SyncTest,
                         ::testing::Values(Case{Engine::kPostgres, Target::kHBase},
                                           Case{Engine::kMySql, Target::kHBase}),
                         CaseName);
#endif
INSTANTIATE_TEST_SUITE_P(Engines, SyncKillDigestTest,
                         ::testing::Values(Case{Engine::kPostgres}, Case{Engine::kMySql}),
                         CaseName);
#ifdef WIDEN_WITH_HBASE
// The kill test into HBase from one engine: the store sees the same
// requests from either (the watermark-mode kill test runs from both).
INSTANTIATE_TEST_SUITE_P(IntoHBase, SyncKillDigestTest,
                         ::testing::Values(Case{Engine::kPostgres, Target::kHBase}), CaseName);
#endif

}  // namespace
}  // namespace widen::testing
