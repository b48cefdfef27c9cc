// widen sync through scripted change sequences, on both engines and in both
// ways of finding changes: digest mode (no sync section) and watermark mode
// (customer by an integer row_version that a sequence hands out; orders by a
// timestamptz / MySQL TIMESTAMP(6) updated_at with a soft-delete column; line
// by a timestamp / MySQL DATETIME(6) updated_at). Every change statement
// raises the watermark of the rows it writes, as an application would.
//
// After each sequence the synced store must equal, cell by cell with every
// version, a fresh migrate of the source as it is then, with the load
// timestamp the first sync recorded (README, "Keeping the copy current":
// re-written cells get the table's load timestamp). Counts of rows written
// are checked against what SQL says changed, so a sync that rewrites rows
// it did not need to, or misses rows it needed to, fails either way. Each
// sequence runs into the embedded store and into HBase (sync_target.h), the
// reference migrate going to the same kind of target.
//
// The initial rows carry old watermarks (2024 for the timestamps, small
// row_version values), far behind the lookbacks, so a watermark-mode run
// after the first one reads only what changed since; the sequences then
// attack what such a run can get wrong: a late commit (a transaction that
// wrote an older watermark commits after a run that saw a newer one), rows
// that share one watermark value split across runs, a watermark that goes
// backwards, fan-out through a join, a child moved to another parent, a row
// key that changes, hard deletes (seen only by --reconcile), and kill -9.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/sync_target.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

enum class Engine { kPostgres, kMySql };
enum class Mode { kDigest, kWatermark };

struct Case {
  Engine engine;
  Mode mode;
  Target target = Target::kEmbedded;
};

// The design of sync_test.cc: a composite row key that changes when an
// order moves to another customer, a denormalized customer name, nested
// lines, and a duplicated table keyed by customer with the orders nested.
constexpr const char* kTables = R"YAML(
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

// Watermark mode for every source table: both target tables then sync
// incrementally. {count} and {time} are the lookbacks.
constexpr const char* kWatermarkSync = R"YAML(sync:
  - {table: customer, mode: watermark, watermark: row_version, lookback: {count}}
  - {table: orders, mode: watermark, watermark: updated_at, lookback: {time},
     deletes: {soft: {column: deleted, value: true}}}
  - {table: line, mode: watermark, watermark: updated_at, lookback: {time}}
)YAML";

// The source tables the watermark section names, with their watermarks.
const std::set<std::string> kSourceTables = {"customer", "orders", "line"};

// `n` customers, 4n orders (order i belongs to customer i % n + 1), 3n...12n
// lines (line i to order i % 4n + 1). Initial watermarks are old: 2024 for
// the timestamps, row_version = id (the sequence starts after them).
std::vector<std::string> Schema(Engine e, int n) {
  const bool pg = e == Engine::kPostgres;
  auto series = [&](int count) {
    return pg ? fmt::format("generate_series(1, {}) AS g(i)", count)
              : fmt::format("(SELECT seq AS i FROM seq_1_to_{}) AS g", count);
  };
  const std::string concat_c = pg ? "'c' || i" : "CONCAT('c', i)";
  const std::string concat_p = pg ? "'p' || (i % 17)" : "CONCAT('p', i % 17)";
  const std::string old_instant = pg ? "timestamptz '2024-01-01 00:00:00+00' + i * interval '1 s'"
                                     : "DATE_ADD('2024-01-01 00:00:00', INTERVAL i SECOND)";
  const std::string old_local = pg ? "timestamp '2024-01-01 00:00:00' + i * interval '1 s'"
                                   : "DATE_ADD('2024-01-01 00:00:00', INTERVAL i SECOND)";
  std::vector<std::string> s;
  s.push_back(fmt::format("CREATE SEQUENCE rv START WITH {}", 100000));
  s.push_back(
      "CREATE TABLE customer (id int PRIMARY KEY, name varchar(40), city varchar(40), "
      "row_version bigint NOT NULL)");
  s.push_back(pg ? "CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, status "
                   "varchar(20), total int, deleted boolean NOT NULL DEFAULT false, updated_at "
                   "timestamptz NOT NULL)"
                 : "CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, status "
                   "varchar(20), total int, deleted boolean NOT NULL DEFAULT false, updated_at "
                   "timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))");
  s.push_back(pg ? "CREATE TABLE line (id int PRIMARY KEY, order_id int NOT NULL, product "
                   "varchar(20), qty int, updated_at timestamp NOT NULL)"
                 : "CREATE TABLE line (id int PRIMARY KEY, order_id int NOT NULL, product "
                   "varchar(20), qty int, updated_at datetime(6) NOT NULL)");
  s.push_back(
      fmt::format("INSERT INTO customer SELECT i, {}, 'city', i FROM {}", concat_c, series(n)));
  s.push_back(
      fmt::format("INSERT INTO orders SELECT i, (i % {}) + 1, 'new', i * 10, false, {} FROM {}", n,
                  old_instant, series(4 * n)));
  s.push_back(fmt::format("INSERT INTO line SELECT i, (i % {}) + 1, {}, i % 5, {} FROM {}", 4 * n,
                          concat_p, old_local, series(12 * n)));
  return s;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& i) {
  return std::string(i.param.engine == Engine::kPostgres ? "Postgres" : "MySql") +
         (i.param.mode == Mode::kDigest ? "Digest" : "Watermark") + TargetName(i.param.target);
}

// A JSON scalar as text: a number as printed, a string as it is.
std::string AsText(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

class SyncSequenceTest : public ::testing::TestWithParam<Case> {
 protected:
  // Into HBase, the last comparison again against a fresh migrate into
  // HBase (sync_target.h).
  void TearDown() override {
    if (target_ != nullptr && !HasFailure()) target_->ExpectLastInTheTarget();
  }

  void SetUp() override {
    if (pg()) {
      const std::string url = PgUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_PG_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_PG_URL not set (run through scripts/with-servers.sh)";
      }
      db_ = FreshPgDatabase(url, "widen_it_syncseq");
    } else {
      const std::string url = MySqlUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_MYSQL_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_MYSQL_URL not set (run through scripts/with-servers.sh)";
      }
      db_ = FreshMySqlDatabase(url, "widen_it_syncseq");
    }
    dir_ = MakeTempDir();
    mapping_ = dir_ + "/mapping.yaml";
    target_ = std::make_unique<SyncTarget>(GetParam().target, dir_);
    if (target_->skipped()) GTEST_SKIP() << "WIDEN_TEST_HBASE_URL not set";
    store_ = target_->url();
    orders_ = target_->Table("s:orders");
    by_customer_ = target_->Table("s:by_customer");
    WriteMapping("1000", "10m");
  }

  bool pg() const { return GetParam().engine == Engine::kPostgres; }
  bool watermark() const { return GetParam().mode == Mode::kWatermark; }

  // The mapping, with the watermark section in watermark mode; lookbacks:
  // `count` values of row_version, `time` for the timestamps. With
  // `line_in_digest`, line is in digest mode instead.
  void WriteMapping(const std::string& count, const std::string& time,
                    bool line_in_digest = false) {
    std::string text = kTables;
    if (watermark()) {
      std::string sync = kWatermarkSync;
      sync.replace(sync.find("{count}"), 7, count);
      for (size_t at; (at = sync.find("{time}")) != std::string::npos;) sync.replace(at, 6, time);
      if (line_in_digest) {
        const size_t at = sync.find("  - {table: line");
        sync.replace(at, std::string::npos, "  - {table: line, mode: digest}\n");
      }
      text += sync;
    }
    design_ = text;
    std::ofstream(mapping_) << target_->Mapping(text);
  }

  // The statement with its watermark placeholders filled in for this
  // engine: {wo} now for orders.updated_at (the transaction's or the
  // statement's time, as applications write it), {wl} now in UTC for
  // line.updated_at (a local timestamp), {rv} the next row_version.
  std::string Fill(std::string s) const {
    const std::pair<const char*, const char*> subst[] = {
        {"{wo}", pg() ? "now()" : "NOW(6)"},
        {"{wl}", pg() ? "(clock_timestamp() AT TIME ZONE 'UTC')" : "UTC_TIMESTAMP(6)"},
        {"{rv}", pg() ? "nextval('rv')" : "NEXTVAL(rv)"},
    };
    for (const auto& [from, to] : subst) {
      for (size_t at; (at = s.find(from)) != std::string::npos;) s.replace(at, 4, to);
    }
    return s;
  }

  // Each statement in its own transaction, committed.
  void Sql(const std::vector<std::string>& statements) {
    std::vector<std::string> filled;
    for (const auto& s : statements) filled.push_back(Fill(s));
    if (pg()) {
      for (const auto& s : filled) PgQuery(db_, s);
    } else {
      for (const auto& s : filled) MySqlQuery(db_, s);
    }
  }

  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    return pg() ? PgQuery(db_, sql) : MySqlQuery(db_, sql);
  }
  uint64_t Count(const std::string& sql) {
    auto rows = Query(sql);
    return rows.empty() ? ~0ull : std::stoull(rows[0][0]);
  }

  std::string Widen(const std::string& args) const {
    return fmt::format("WIDEN_SOURCE_URL={} {} {}", ShellQuote(db_), WidenBinary(), args);
  }

  // Whether this widen has `sync --reconcile` (hard deletes in watermark
  // mode). Until it has, watermark mode is not run either (every table syncs
  // in digest mode, which sees hard deletes by itself).
  bool HasReconcile() const {
    static const bool has =
        RunCommand(Widen("sync --help")).output.find("--reconcile") != std::string::npos;
    return has;
  }

  // widen sync --format json into the synced store; its document.
  nlohmann::json SyncJson(const std::string& extra = "") {
    CommandResult r =
        RunCommand(sync_env_ + Widen(fmt::format("sync -m {} --target {} --format json {}",
                                                 ShellQuote(mapping_), ShellQuote(store_), extra)));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const size_t brace = r.output.find('{');
    if (r.exit_code != 0 || brace == std::string::npos) return nlohmann::json();
    nlohmann::json j = nlohmann::json::parse(r.output.substr(brace), nullptr, false);
    EXPECT_TRUE(j.is_object()) << r.output;
    return j;
  }

  // A sync after the first: in watermark mode with --reconcile when asked
  // (and when this widen has it).
  nlohmann::json Sync(bool reconcile = false) {
    nlohmann::json j = SyncJson(reconcile && watermark() && HasReconcile() ? "--reconcile" : "");
    ExpectModes(j, /*first=*/false);
    return j;
  }

  // The first sync: a full pass; returns the load timestamp it recorded
  // (the same for both tables).
  int64_t FirstSync() {
    nlohmann::json j = SyncJson();
    if (!j.is_object()) {
      ADD_FAILURE() << "the first sync failed";
      return 0;
    }
    ExpectModes(j, /*first=*/true);
    const int64_t ts = j["tables"][0]["timestamp_ms"].get<int64_t>();
    EXPECT_EQ(j["tables"][1]["timestamp_ms"].get<int64_t>(), ts);
    EXPECT_EQ(Total(j, "rows_written"), Count("SELECT COUNT(*) FROM orders WHERE NOT deleted") +
                                            Count("SELECT COUNT(*) FROM customer"));
    if (watermark() && !digest_targets_.count(orders_)) {
      // The rows were loaded with one old watermark value each table, which
      // every run reads again (rows at the last watermark are): raise one
      // row's per table, values unchanged, so that the next runs read only
      // the rows the sequence changes. Nothing is written for them.
      Sql({"UPDATE customer SET row_version = {rv} WHERE id = 1",
           "UPDATE orders SET updated_at = {wo} WHERE id = 1",
           "UPDATE line SET updated_at = {wl} WHERE id = 1"});
      nlohmann::json warm = Sync();
      EXPECT_EQ(Total(warm, "rows_written"), 0u) << warm.dump(2);
    }
    return ts;
  }

  // The per-table "mode" and "watermarks" of a sync's JSON. Digest mode:
  // "digest". Watermark mode, once sync reports watermarks: "full" on the
  // first run, then "watermark" (or "full" again after a killed run, if
  // that is how it recovers); each source table's watermark is there,
  // and row_version's "after" is the source's max at the run.
  void ExpectModes(const nlohmann::json& j, bool first) {
    if (!j.is_object() || !j.contains("tables")) return;
    for (const auto& t : j["tables"]) {
      SCOPED_TRACE(AsText(t["table"]));
      if (!watermark() || digest_targets_.count(AsText(t["table"]))) {
        EXPECT_EQ(AsText(t["mode"]), "digest");
        continue;
      }
      if (!t.contains("watermarks")) continue;  // watermark mode not run by this widen
      const std::string mode = AsText(t["mode"]);
      if (!(after_kill_ && mode == "full")) {
        EXPECT_EQ(mode, first ? "full" : "watermark");
      }
      std::set<std::string> seen;
      for (const auto& w : t["watermarks"]) {
        const std::string table = AsText(w["table"]);
        seen.insert(table);
        EXPECT_TRUE(kSourceTables.count(table)) << w.dump();
        EXPECT_EQ(AsText(w["column"]), table == "customer" ? "row_version" : "updated_at");
        if (first) {
          EXPECT_TRUE(!w.contains("before") || w["before"].is_null()) << w.dump();
        }
        EXPECT_FALSE(w["after"].is_null()) << w.dump();
        if (table == "customer" && (w["after"].is_number() || w["after"].is_string())) {
          EXPECT_EQ(AsText(w["after"]), Query("SELECT MAX(row_version) FROM customer")[0][0]);
        }
      }
      const std::set<std::string> reads = AsText(t["table"]) == orders_
                                              ? kSourceTables
                                              : std::set<std::string>{"customer", "orders"};
      EXPECT_EQ(seen, reads);
    }
  }

  // The synced store equals a fresh migrate of the source as it is now,
  // with timestamp `timestamp_ms`, cell by cell, every version (into HBase
  // the last such check also against a fresh migrate into HBase, at the
  // end of the test: sync_target.h).
  void ExpectSameAsAFreshMigrate(int64_t timestamp_ms) {
    target_->ExpectSameAsAFreshMigrate(
        [this](const std::string& args) { return RunCommand(Widen(args)); }, design_,
        {"s:orders", "s:by_customer"}, timestamp_ms);
  }

  // Rows of a target table in the synced store.
  size_t StoredRows(const std::string& table) { return ReadTable(store_, table).size(); }

  static uint64_t Total(const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) ? j[key].get<uint64_t>() : ~0ull;
  }
  // A sync's JSON says it wrote nothing: no row, no cell put or deleted.
  static void ExpectNothingWritten(const nlohmann::json& j) {
    EXPECT_EQ(Total(j, "rows_written"), 0u) << j.dump();
    EXPECT_EQ(Total(j, "cells_put"), 0u) << j.dump();
    EXPECT_EQ(Total(j, "cells_deleted"), 0u) << j.dump();
  }
  static uint64_t Written(const nlohmann::json& j, int table) {
    return j.is_object() ? j["tables"][table]["rows_written"].get<uint64_t>() : ~0ull;
  }

  std::string db_, dir_, mapping_, store_;
  std::unique_ptr<SyncTarget> target_;
  std::string orders_, by_customer_;      // the target tables' names
  std::string design_;                    // the mapping's text, tables in namespace s
  std::string sync_env_;                  // environment settings before each widen sync
  bool after_kill_ = false;               // a run after a killed one may make a full pass
  std::set<std::string> digest_targets_;  // target tables that read a digest-mode table
};

constexpr int kOrders = 0, kByCustomer = 1;  // index in the JSON's "tables"

// New customers, orders (for new and old customers, with and without
// lines) and lines (under new and old orders).
TEST_P(SyncSequenceTest, Inserts) {
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  Sql({"INSERT INTO customer VALUES (11, 'c11', 'new town', {rv})",
       "INSERT INTO orders VALUES (100, 11, 'new', 5, false, {wo})",
       "INSERT INTO orders VALUES (101, 3, 'new', 6, false, {wo})",
       "INSERT INTO orders VALUES (102, 3, 'empty', 7, false, {wo})",
       "INSERT INTO line VALUES (500, 100, 'px', 1, {wl})",
       "INSERT INTO line VALUES (501, 101, 'py', 2, {wl})",
       "INSERT INTO line VALUES (502, 7, 'pz', 3, {wl})"});
  nlohmann::json s = Sync();
  // s:orders: 100, 101, 102 new, 7 has a new line; s:by_customer: 11 new,
  // 3 has two new orders.
  EXPECT_EQ(Written(s, kOrders), 4u);
  EXPECT_EQ(Written(s, kByCustomer), 2u);
  EXPECT_EQ(Total(s, "rows_deleted"), 0u);
  EXPECT_EQ(StoredRows(orders_), Count("SELECT COUNT(*) FROM orders"));
  EXPECT_EQ(StoredRows(by_customer_), Count("SELECT COUNT(*) FROM customer"));
  ExpectSameAsAFreshMigrate(ts);
}

// Updates of driving, nested and joined rows; a row updated twice between
// runs; a row whose watermark is raised with no value changed (read again
// in watermark mode, but its target rows are not written).
TEST_P(SyncSequenceTest, Updates) {
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  Sql({"UPDATE orders SET status = 'paid', updated_at = {wo} WHERE id IN (7, 8)",
       "UPDATE orders SET total = 1, updated_at = {wo} WHERE id = 7",
       "UPDATE line SET qty = 99, updated_at = {wl} WHERE id = 30",
       "UPDATE customer SET city = 'moved', row_version = {rv} WHERE id = 4",
       "UPDATE orders SET updated_at = {wo} WHERE id = 15",
       "UPDATE line SET updated_at = {wl} WHERE id = 16",
       "UPDATE customer SET row_version = {rv} WHERE id = 9"});
  nlohmann::json s = Sync();
  // s:orders: 7, 8 (status), the order of line 30; s:by_customer: the
  // customers of 7 and 8 (nested status) and customer 4 (city).
  EXPECT_EQ(Written(s, kOrders),
            Count("SELECT COUNT(*) FROM orders WHERE id IN (7, 8) OR id = (SELECT order_id FROM "
                  "line WHERE id = 30)"));
  EXPECT_EQ(Written(s, kByCustomer),
            Count("SELECT COUNT(*) FROM customer WHERE id = 4 OR id IN (SELECT customer_id FROM "
                  "orders WHERE id IN (7, 8))"));
  EXPECT_EQ(Total(s, "rows_deleted"), 0u);
  ExpectSameAsAFreshMigrate(ts);
  // Nothing changed since: nothing written.
  ExpectNothingWritten(Sync());
}

// Orders marked deleted (the mapping's soft delete in watermark mode: the
// rows are left out of every read, so their target rows go; in digest mode
// the column is only a column no target reads), and one brought back.
TEST_P(SyncSequenceTest, SoftDeletes) {
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  Sql({"UPDATE orders SET deleted = true, updated_at = {wo} WHERE id IN (5, 6, 25)"});
  Sync();
  ExpectSameAsAFreshMigrate(ts);
  Sql({"UPDATE orders SET deleted = false, updated_at = {wo} WHERE id = 6",
       "UPDATE orders SET deleted = true, status = 'gone', updated_at = {wo} WHERE id = 26"});
  Sync();
  ExpectSameAsAFreshMigrate(ts);
}

// Hard deletes: an order with its lines, a line alone, a customer with its
// orders and lines, and a customer whose orders stay (their denormalized
// name goes). Digest mode sees them on every run; watermark mode only with
// --reconcile, and says so without it.
TEST_P(SyncSequenceTest, HardDeletes) {
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  Sql({"DELETE FROM line WHERE order_id = 9", "DELETE FROM orders WHERE id = 9",
       "DELETE FROM line WHERE id = 14",
       "DELETE FROM line WHERE order_id IN (SELECT id FROM orders WHERE customer_id = 2)"});
  Sql({"DELETE FROM orders WHERE customer_id = 2", "DELETE FROM customer WHERE id = 2",
       "DELETE FROM customer WHERE id = 3"});
  if (watermark()) {
    nlohmann::json plain = Sync();
    ASSERT_TRUE(plain.is_object());
    if (plain["tables"][0].contains("watermarks")) {  // watermark mode runs
      EXPECT_EQ(AsText(plain["hard_deletes"]), "not detected");
    }
    nlohmann::json s = Sync(/*reconcile=*/true);
    ASSERT_TRUE(s.is_object());
    if (s["tables"][0].contains("watermarks")) {
      EXPECT_EQ(AsText(s["hard_deletes"]), "reconciled");
    }
    // What the reconcile removed left no key behind it: the next one has
    // nothing to find (and writes nothing).
    nlohmann::json again = Sync(/*reconcile=*/true);
    ASSERT_TRUE(again.is_object());
    for (const auto& t : again["tables"]) {
      if (t.contains("reconciled")) {
        EXPECT_EQ(t["reconciled"].get<uint64_t>(), 0u) << t.dump();
      }
    }
    ExpectNothingWritten(again);
  } else {
    nlohmann::json s = Sync();
    ASSERT_TRUE(s.is_object());
    EXPECT_EQ(AsText(s["hard_deletes"]), "detected");
    // s:orders: 9 and customer 2's orders removed; s:by_customer: 2 and 3.
    EXPECT_EQ(s["tables"][kOrders]["rows_deleted"].get<uint64_t>(), 5u);
    EXPECT_EQ(s["tables"][kByCustomer]["rows_deleted"].get<uint64_t>(), 2u);
  }
  EXPECT_EQ(StoredRows(orders_), Count("SELECT COUNT(*) FROM orders"));
  EXPECT_EQ(StoredRows(by_customer_), Count("SELECT COUNT(*) FROM customer"));
  ExpectSameAsAFreshMigrate(ts);
}

// A line moved to an order of the same customer, one to an order of
// another customer, and two lines swapped between two orders: each old
// parent loses it, each new one gains it.
TEST_P(SyncSequenceTest, AChildMovedToAnotherParent) {
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  Sql({"UPDATE line SET order_id = 21, updated_at = {wl} WHERE id = 10",
       "UPDATE line SET order_id = 32, updated_at = {wl} WHERE id = 11",
       "UPDATE line SET order_id = 3, updated_at = {wl} WHERE id = 41",
       "UPDATE line SET order_id = 2, updated_at = {wl} WHERE id = 42"});
  nlohmann::json s = Sync();
  // Old parents 11, 12, 2, 3 and new parents 21, 32, 3, 2.
  EXPECT_EQ(Written(s, kOrders), 6u);
  if (watermark()) {
    // 11 and 12 only through the sync index (2 and 3 are new parents too).
    EXPECT_EQ(s["tables"][kOrders]["old_parents"].get<uint64_t>(), 2u) << s.dump(2);
  }
  EXPECT_EQ(Written(s, kByCustomer), 0u);
  ExpectSameAsAFreshMigrate(ts);
}

// A customer renamed: every order that copied the name (many) and its row
// in the duplicated table keyed by customer.
TEST_P(SyncSequenceTest, AJoinedAttributeFansOut) {
  Sql(Schema(GetParam().engine, 10));
  Sql({"UPDATE orders SET customer_id = 5 WHERE id <= 20"});  // still an old watermark
  const int64_t ts = FirstSync();
  Sql({"UPDATE customer SET name = 'renamed', row_version = {rv} WHERE id = 5"});
  nlohmann::json s = Sync();
  EXPECT_EQ(Written(s, kOrders), Count("SELECT COUNT(*) FROM orders WHERE customer_id = 5"));
  EXPECT_GE(Written(s, kOrders), 20u);
  EXPECT_EQ(Written(s, kByCustomer), 1u);
  ExpectSameAsAFreshMigrate(ts);
}

// Values set to NULL (a driving column, a joined attribute copied into many
// rows, a nested child's column) remove their cells; set back, they return.
TEST_P(SyncSequenceTest, AValueSetToNullAndBack) {
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  Sql({"UPDATE orders SET status = NULL, updated_at = {wo} WHERE id = 20",
       "UPDATE customer SET name = NULL, row_version = {rv} WHERE id = 6",
       "UPDATE line SET qty = NULL, product = NULL, updated_at = {wl} WHERE id = 33"});
  nlohmann::json s = Sync();
  EXPECT_GT(Total(s, "cells_deleted"), 0u);
  ExpectSameAsAFreshMigrate(ts);
  Sql({"UPDATE orders SET status = 'back', updated_at = {wo} WHERE id = 20",
       "UPDATE customer SET name = 'c6', row_version = {rv} WHERE id = 6",
       "UPDATE line SET qty = 3, product = 'p16', updated_at = {wl} WHERE id = 33"});
  Sync();
  ExpectSameAsAFreshMigrate(ts);
}

// An order moved to another customer: its row key (customer|order)
// changes, so the old row goes; both customers' by_customer rows change.
TEST_P(SyncSequenceTest, ARowKeyColumnChanged) {
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  Sql({"UPDATE orders SET customer_id = 1, updated_at = {wo} WHERE id = 33",
       "UPDATE orders SET customer_id = 10, updated_at = {wo} WHERE id = 34"});
  nlohmann::json s = Sync();
  EXPECT_EQ(s["tables"][kOrders]["rows_deleted"].get<uint64_t>(), 2u);
  EXPECT_EQ(Written(s, kOrders), 2u);
  // Old customers of 33 and 34 (4 and 5 with 10 customers) and 1, 10.
  EXPECT_EQ(Written(s, kByCustomer), 4u);
  EXPECT_EQ(StoredRows(orders_), Count("SELECT COUNT(*) FROM orders"));
  ExpectSameAsAFreshMigrate(ts);
}

// A late commit: transaction A writes (watermarks: its now(), a row_version
// from the sequence) and stays open; transaction B starts later, writes
// newer watermarks and commits; a sync runs (it sees B, not A) and records
// B's watermarks; A commits with its older ones; the next sync must see A.
TEST_P(SyncSequenceTest, ALateCommitIsSeenByTheNextRun) {
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  std::unique_ptr<SqlSession> a = SqlSession::Open(db_);
  ASSERT_NE(a, nullptr);
  a->Exec("START TRANSACTION");
  a->Exec(Fill("INSERT INTO orders VALUES (900, 2, 'late', 1, false, {wo})"));
  a->Exec(Fill("INSERT INTO line VALUES (9000, 900, 'pl', 1, {wl})"));
  a->Exec(Fill("UPDATE line SET qty = 77, updated_at = {wl} WHERE id = 50"));
  a->Exec(Fill("UPDATE customer SET city = 'late', row_version = {rv} WHERE id = 4"));
  ASSERT_FALSE(HasFailure());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Sql({"INSERT INTO orders VALUES (901, 3, 'b', 1, false, {wo})",
       "INSERT INTO line VALUES (9001, 901, 'pb', 1, {wl})",
       "UPDATE customer SET city = 'b', row_version = {rv} WHERE id = 6"});
  nlohmann::json s1 = Sync();
  EXPECT_EQ(Count("SELECT COUNT(*) FROM orders WHERE id = 900"), 0u);  // not committed yet
  ExpectSameAsAFreshMigrate(ts);
  a->Exec("COMMIT");
  a.reset();
  // A's rows have older watermarks than B's.
  ASSERT_EQ(Count("SELECT COUNT(*) FROM orders WHERE id = 900 AND updated_at < (SELECT "
                  "updated_at FROM orders WHERE id = 901)"),
            1u);
  ASSERT_EQ(Count("SELECT COUNT(*) FROM customer WHERE id = 4 AND row_version < (SELECT "
                  "row_version FROM customer WHERE id = 6)"),
            1u);
  nlohmann::json s2 = Sync();
  // Order 900 (new) and the order of line 50; customer 2 (a new nested
  // order) and 4 (city).
  EXPECT_EQ(Written(s2, kOrders), 2u);
  EXPECT_EQ(Written(s2, kByCustomer), 2u);
  EXPECT_EQ(StoredRows(orders_), Count("SELECT COUNT(*) FROM orders"));
  ExpectSameAsAFreshMigrate(ts);
}

// A watermark far in the future (a placeholder date, a writer's wrong
// clock) is not recorded: it would hide every later change of its table.
// The run names it, and the table's next change is still seen (in digest
// mode the same sequence simply converges).
TEST_P(SyncSequenceTest, AWatermarkFarInTheFutureHidesNoLaterChange) {
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  // orders.updated_at: timestamptz / TIMESTAMP(6) (which ends in 2038);
  // line.updated_at: timestamp / DATETIME(6).
  Sql({"UPDATE orders SET status = 'future', updated_at = '2037-12-31 00:00:00' WHERE id = 3",
       "UPDATE line SET qty = 99, updated_at = '9999-12-31 00:00:00' WHERE id = 30"});
  CommandResult r =
      RunCommand(sync_env_ + Widen(fmt::format("sync -m {} --target {}", ShellQuote(mapping_),
                                               ShellQuote(store_))));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (watermark()) {
    for (const char* table : {"orders", "line"}) {
      EXPECT_NE(r.output.find(fmt::format(
                    "source table '{}': rows whose updated_at is in the future", table)),
                std::string::npos)
          << r.output;
    }
    EXPECT_NE(r.output.find("2037-12-31"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("9999-12-31"), std::string::npos) << r.output;
  }
  ExpectSameAsAFreshMigrate(ts);
  Sql({"UPDATE orders SET status = 'later', updated_at = {wo} WHERE id = 5",
       "UPDATE line SET qty = 7, updated_at = {wl} WHERE id = 40"});
  nlohmann::json s = Sync();
  EXPECT_GE(Written(s, kOrders), 2u);  // orders 5 and line 40's (3 and 30's are read again)
  ExpectSameAsAFreshMigrate(ts);
}

// Rows sharing one watermark value, committed in two transactions with a
// sync between, with lookbacks of 0 (a run reads from the last watermark
// on, inclusive): the second transaction's rows sort before the first's by
// primary key, so a run that resumed after (watermark, key) of the last row
// it read would skip them.
TEST_P(SyncSequenceTest, RowsSharingOneWatermarkSplitAcrossRuns) {
  WriteMapping("0", "0");
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  const std::string t_o =
      pg() ? "timestamptz '2030-01-01 00:00:00.123456+00'" : "'2030-01-01 00:00:00.123456'";
  const std::string t_l = "'2030-01-01 00:00:00.654321'";
  Sql({"UPDATE orders SET status = 'first', updated_at = " + t_o + " WHERE id IN (30, 31)",
       "UPDATE line SET qty = 11, updated_at = " + t_l + " WHERE id IN (60, 61)",
       "UPDATE customer SET city = 'first', row_version = 500000 WHERE id IN (8, 9)"});
  Sync();
  ExpectSameAsAFreshMigrate(ts);
  Sql({"UPDATE orders SET status = 'second', updated_at = " + t_o + " WHERE id IN (12, 13)",
       "UPDATE line SET qty = 22, updated_at = " + t_l + " WHERE id IN (20, 21)",
       "UPDATE customer SET city = 'second', row_version = 500000 WHERE id IN (2, 3)"});
  nlohmann::json s = Sync();
  // Orders 12, 13 and the orders of lines 20, 21; customers 2, 3 and the
  // customers of orders 12, 13. The first transaction's rows, read again,
  // are not written.
  EXPECT_EQ(Written(s, kOrders),
            Count("SELECT COUNT(*) FROM orders WHERE id IN (12, 13) OR id IN (SELECT order_id "
                  "FROM line WHERE id IN (20, 21))"));
  EXPECT_EQ(Written(s, kByCustomer),
            Count("SELECT COUNT(*) FROM customer WHERE id IN (2, 3) OR id IN (SELECT "
                  "customer_id FROM orders WHERE id IN (12, 13))"));
  ExpectSameAsAFreshMigrate(ts);
}

// A watermark written lower than the last one recorded (a clock stepped
// back, a sequence reset), but within the lookback, is still seen.
TEST_P(SyncSequenceTest, AWatermarkThatGoesBackWithinTheLookbackIsSeen) {
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  // Newer watermarks first, recorded by a run.
  Sql({"UPDATE orders SET status = 'a', updated_at = {wo} WHERE id = 3",
       "UPDATE line SET qty = 1, updated_at = {wl} WHERE id = 3",
       "UPDATE customer SET city = 'a', row_version = {rv} WHERE id = 3"});
  Sync();
  // Then writes a little behind them: 1 minute (lookback 10m), 5 values
  // (lookback 1000).
  Sql({pg() ? "UPDATE orders SET status = 'back', updated_at = (SELECT MAX(updated_at) FROM "
              "orders) - interval '1 minute' WHERE id = 17"
            : "UPDATE orders SET status = 'back', updated_at = (SELECT m FROM (SELECT "
              "MAX(updated_at) - INTERVAL 1 MINUTE AS m FROM orders) AS x) WHERE id = 17",
       pg() ? "UPDATE line SET qty = 4, updated_at = (SELECT MAX(updated_at) FROM line) - "
              "interval '1 minute' WHERE id = 18"
            : "UPDATE line SET qty = 4, updated_at = (SELECT m FROM (SELECT MAX(updated_at) - "
              "INTERVAL 1 MINUTE AS m FROM line) AS x) WHERE id = 18",
       pg() ? "UPDATE customer SET city = 'back', row_version = (SELECT MAX(row_version) FROM "
              "customer) - 5 WHERE id = 7"
            : "UPDATE customer SET city = 'back', row_version = (SELECT m FROM (SELECT "
              "MAX(row_version) - 5 AS m FROM customer) AS x) WHERE id = 7"});
  nlohmann::json s = Sync();
  // Order 17 and the order of line 18; customer 7 and the customer of 17.
  EXPECT_EQ(Written(s, kOrders),
            Count("SELECT COUNT(*) FROM orders WHERE id = 17 OR id = (SELECT order_id FROM line "
                  "WHERE id = 18)"));
  EXPECT_EQ(Written(s, kByCustomer),
            Count("SELECT COUNT(*) FROM customer WHERE id = 7 OR id = (SELECT customer_id FROM "
                  "orders WHERE id = 17)"));
  ExpectSameAsAFreshMigrate(ts);
}

// line in digest mode, customer and orders in watermark mode: s:orders
// reads line, so it syncs in digest mode; s:by_customer reads only
// watermark tables and syncs incrementally. Changes to all three reach
// both tables.
TEST_P(SyncSequenceTest, ATableThatReadsADigestTableSyncsInDigestMode) {
  WriteMapping("1000", "10m", /*line_in_digest=*/true);
  if (watermark()) digest_targets_ = {orders_};
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  Sql({"UPDATE line SET qty = 42 WHERE id = 5", "DELETE FROM line WHERE id = 6",
       "UPDATE orders SET status = 'mixed', updated_at = {wo} WHERE id = 8",
       "UPDATE customer SET name = 'mixed', row_version = {rv} WHERE id = 9"});
  nlohmann::json s = Sync();
  // Orders 6 and 7 (lines 5, 6), 8, and customer 9's orders.
  EXPECT_EQ(Written(s, kOrders),
            Count("SELECT COUNT(*) FROM orders WHERE id IN (6, 7, 8) OR customer_id = 9"));
  // Customers of order 8 (nested status) and 9 (name).
  EXPECT_EQ(Written(s, kByCustomer),
            Count("SELECT COUNT(*) FROM customer WHERE id = 9 OR id = (SELECT customer_id FROM "
                  "orders WHERE id = 8)"));
  ExpectSameAsAFreshMigrate(ts);
}

// Syncs run with the process's (TZ) and PostgreSQL session's (PGTZ) time
// zone far east of UTC, then far west: a watermark read or recorded in the
// local time of either would move by hours (beyond the 10 minute lookback)
// and the run after would skip, or read again, the changes.
TEST_P(SyncSequenceTest, WatermarksDoNotMoveWithTheTimeZone) {
  Sql(Schema(GetParam().engine, 10));
  sync_env_ = "TZ=UTC PGTZ=UTC ";
  const int64_t ts = FirstSync();
  int round = 0;
  for (const char* zone : {"Pacific/Kiritimati", "America/Los_Angeles", "Pacific/Kiritimati"}) {
    SCOPED_TRACE(zone);
    ++round;
    Sql({fmt::format("UPDATE orders SET status = 'tz{}', updated_at = {{wo}} WHERE id = {}", round,
                     20 + round),
         fmt::format("UPDATE line SET qty = {}, updated_at = {{wl}} WHERE id = {}", 100 + round,
                     60 + round),
         fmt::format("UPDATE customer SET city = 'tz{}', row_version = {{rv}} WHERE id = {}", round,
                     round)});
    sync_env_ = fmt::format("TZ={} PGTZ={} ", zone, zone);
    nlohmann::json s = Sync();
    EXPECT_EQ(Written(s, kOrders),
              Count(fmt::format("SELECT COUNT(*) FROM orders WHERE id = {} OR id = (SELECT "
                                "order_id FROM line WHERE id = {})",
                                20 + round, 60 + round)));
    EXPECT_EQ(Written(s, kByCustomer),
              Count(fmt::format("SELECT COUNT(*) FROM customer WHERE id = {} OR id = (SELECT "
                                "customer_id FROM orders WHERE id = {})",
                                round, 20 + round)));
    ExpectSameAsAFreshMigrate(ts);
  }
}

// The mapping changes (a column renamed, one more column, a `where` that
// leaves rows out) and the change is accepted: rows no source change
// touched hold the old design, so the run is a full pass in watermark mode
// too, and the store then equals a fresh migrate with the new design.
TEST_P(SyncSequenceTest, AnAcceptedMappingChangeRewritesEveryRowItChanges) {
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  design_.replace(design_.find("d:total"), 7, "d:amount");
  design_.replace(design_.find("      - {column: status, to: \"d:status\"}"), 0,
                  "      - {column: customer.city, to: \"d:city\"}\n");
  design_.replace(design_.find("    from: customer\n"), 19,
                  "    from: customer\n    where: \"id <> 3\"\n");
  std::ofstream(mapping_) << target_->Mapping(design_);
  const nlohmann::json j = SyncJson("--accept-mapping-change");
  ASSERT_TRUE(j.is_object());
  for (const auto& t : j["tables"]) {
    EXPECT_EQ(AsText(t["mode"]), watermark() ? "full" : "digest") << t.dump();
  }
  EXPECT_EQ(Written(j, kOrders), Count("SELECT COUNT(*) FROM orders WHERE NOT deleted"));
  EXPECT_EQ(Total(j, "rows_deleted"), 1u);  // customer 3's row of s:by_customer
  ExpectSameAsAFreshMigrate(ts);
  // Accepted once: the next run reads changes as before and has none.
  ExpectNothingWritten(Sync());
}

// A run with another cell timestamp (--timestamp-ms) than the last one's:
// every row is written anew with it (a full pass in watermark mode), so the
// store equals a fresh migrate with that timestamp, not a mix of both; the
// runs after it keep it.
TEST_P(SyncSequenceTest, ANewCellTimestampRewritesEveryRow) {
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  Sql({"UPDATE orders SET status = 'paid', updated_at = {wo} WHERE id = 7"});
  const int64_t later = ts + 1000;
  const nlohmann::json j = SyncJson(fmt::format("--timestamp-ms {}", later));
  ASSERT_TRUE(j.is_object());
  for (const auto& t : j["tables"]) {
    EXPECT_EQ(AsText(t["mode"]), watermark() ? "full" : "digest") << t.dump();
    EXPECT_EQ(t["timestamp_ms"].get<int64_t>(), later) << t.dump();
  }
  EXPECT_EQ(Total(j, "rows_written"), Count("SELECT COUNT(*) FROM orders WHERE NOT deleted") +
                                          Count("SELECT COUNT(*) FROM customer"));
  ExpectSameAsAFreshMigrate(later);
  Sql({"UPDATE orders SET status = 'sent', updated_at = {wo} WHERE id = 8"});
  const nlohmann::json next = Sync();
  ASSERT_TRUE(next.is_object());
  EXPECT_EQ(next["tables"][0]["timestamp_ms"].get<int64_t>(), later);
  ExpectSameAsAFreshMigrate(later);
}

// A design whose nest id does not identify the children (a line's order,
// not its id): one source row gives a cell more than once, and sync exits 8
// naming the first such cell, as migrate does — on the first run and on a
// later one that rebuilds a changed row; verify counts them.
TEST_P(SyncSequenceTest, CellsOneSourceRowGivesTwiceExitEight) {
  Sql(Schema(GetParam().engine, 10));
  design_.replace(design_.find("id: [{column: id, width: 8}]\n        columns: [product, qty]"), 28,
                  "id: [{column: order_id, width: 8}]");
  std::ofstream(mapping_) << target_->Mapping(design_);
  const std::string sync = sync_env_ + Widen(fmt::format("sync -m {} --target {} --format json",
                                                         ShellQuote(mapping_), ShellQuote(store_)));
  CommandResult r = RunCommand(sync);
  EXPECT_EQ(r.exit_code, 8) << r.output;
  EXPECT_NE(r.output.find("'" + orders_ + "': "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cell(s) replaced another cell of this run"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("gives this cell more than once"), std::string::npos) << r.output;
  const size_t open = r.output.find('{'), close = r.output.rfind('}');
  ASSERT_TRUE(open != std::string::npos && close != std::string::npos) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output.substr(open, close - open + 1), nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.output;
  // Every order with n > 1 lines gives n - 1 replaced cells.
  EXPECT_EQ(Total(j, "cells_replaced"),
            Count("SELECT COUNT(*) - COUNT(DISTINCT order_id) FROM line"));
  Sql({"UPDATE line SET qty = 7, updated_at = {wl} WHERE id = 30"});
  r = RunCommand(sync);
  EXPECT_EQ(r.exit_code, 8) << r.output;
  CommandResult v = RunCommand(
      Widen(fmt::format("verify -m {} --target {}", ShellQuote(mapping_), ShellQuote(store_))));
  EXPECT_NE(v.output.find("cell(s) of the source replace another"), std::string::npos) << v.output;
}

INSTANTIATE_TEST_SUITE_P(EnginesAndModes, SyncSequenceTest,
                         ::testing::Values(Case{Engine::kPostgres, Mode::kDigest},
                                           Case{Engine::kPostgres, Mode::kWatermark},
                                           Case{Engine::kMySql, Mode::kDigest},
                                           Case{Engine::kMySql, Mode::kWatermark}),
                         CaseName);
#ifdef WIDEN_WITH_HBASE
// The same sequences into HBase, each compared with a fresh migrate into
// HBase: in both modes from PostgreSQL, in watermark mode from MariaDB (in
// digest mode the store sees the same requests from either engine; a table
// created and dropped in HBase costs about a second, so the cases are few).
INSTANTIATE_TEST_SUITE_P(EnginesAndModesIntoHBase, SyncSequenceTest,
                         ::testing::Values(Case{Engine::kPostgres, Mode::kDigest, Target::kHBase},
                                           Case{Engine::kPostgres, Mode::kWatermark,
                                                Target::kHBase},
                                           Case{Engine::kMySql, Mode::kWatermark, Target::kHBase}),
                         CaseName);
#endif

// Watermark mode only: what the watermark values themselves can do.
using SyncWatermarkTest = SyncSequenceTest;

// Every row's watermark set back (a reload): the highest watermark went
// back more than the lookback, and the rows written below it are not read;
// the run says so, and a --full run brings them.
TEST_P(SyncWatermarkTest, AWatermarkSetBackBeyondTheLookbackIsNamedAndFullBringsIt) {
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  Sql({"UPDATE orders SET status = 'newest', updated_at = {wo} WHERE id = 3"});
  Sync();
  Sql({"UPDATE orders SET updated_at = '2020-01-01 00:00:00'",
       "UPDATE orders SET status = 'reloaded', updated_at = '2020-01-01 00:00:00' WHERE id = 7"});
  CommandResult r =
      RunCommand(sync_env_ + Widen(fmt::format("sync -m {} --target {} --format json",
                                               ShellQuote(mapping_), ShellQuote(store_))));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("its highest updated_at went back from"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("run widen sync --full once"), std::string::npos) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  EXPECT_EQ(AsText(j["tables"][kOrders]["mode"]), "watermark") << j.dump(2);
  EXPECT_EQ(Written(j, kOrders), 0u) << j.dump(2);  // order 7 is not read
  nlohmann::json full = SyncJson("--full");
  EXPECT_EQ(AsText(full["tables"][kOrders]["mode"]), "full") << full.dump(2);
  EXPECT_EQ(Written(full, kOrders), 1u) << full.dump(2);
  ExpectSameAsAFreshMigrate(ts);
}

// A value that is no point in time is no watermark — PostgreSQL's
// infinity (the highest finite value is recorded; rows at infinity are
// read by every run), a MySQL zero date (every row's: the table is read
// whole) — and later changes are still read.
TEST_P(SyncWatermarkTest, AWatermarkThatIsNoPointInTimeDoesNotHideLaterChanges) {
  Sql(Schema(GetParam().engine, 10));
  const int64_t ts = FirstSync();
  Sql({pg() ? "UPDATE orders SET status = 'forever', updated_at = 'infinity' WHERE id = 4"
            : "SET STATEMENT sql_mode = '' FOR UPDATE orders SET updated_at = '0000-00-00 "
              "00:00:00'"});
  CommandResult r =
      RunCommand(sync_env_ + Widen(fmt::format("sync -m {} --target {} --format json",
                                               ShellQuote(mapping_), ShellQuote(store_))));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(pg() ? "is infinity are read again by every run"
                               : "is not a value of its type (a zero date?)"),
            std::string::npos)
      << r.output;
  Sql({"UPDATE orders SET status = 'later', updated_at = {wo} WHERE id = 5"});
  nlohmann::json s = Sync();
  EXPECT_GE(Written(s, kOrders), 1u);
  ExpectSameAsAFreshMigrate(ts);
}

INSTANTIATE_TEST_SUITE_P(Engines, SyncWatermarkTest,
                         ::testing::Values(Case{Engine::kPostgres, Mode::kWatermark},
                                           Case{Engine::kMySql, Mode::kWatermark}),
                         CaseName);

// kill -9 at random moments of watermark-mode syncs (the digest-mode
// variant is SyncTest.ASyncKilledAnywhereConvergesOnTheNextRun): each
// trial changes driving, nested and joined rows, kills a sync, and the next
// sync must converge to the fresh migrate. A run that recorded its
// watermarks before its cells were durable would skip the changes next time.
using SyncKillTest = SyncSequenceTest;

TEST_P(SyncKillTest, AWatermarkSyncKilledAnywhereConvergesOnTheNextRun) {
  // Into HBase fewer rows, which take as long to write (the kills land
  // within the run's time all the same).
  Sql(Schema(GetParam().engine, target_->hbase() ? 200 : 600));
  const int64_t ts = FirstSync();
  // One trial's changes: a third of the orders, a fifth of the lines, a
  // seventh of the customers (fan-out to their orders), an order moved.
  auto change = [&](int trial) {
    Sql({fmt::format("UPDATE orders SET total = total + 1, status = 's{}', updated_at = {{wo}} "
                     "WHERE id % 3 = {}",
                     trial, trial % 3),
         fmt::format("UPDATE line SET qty = qty + 1, updated_at = {{wl}} WHERE id % 5 = {}",
                     trial % 5),
         fmt::format("UPDATE customer SET name = 'n{}', row_version = {{rv}} WHERE id % 7 = {}",
                     trial, trial % 7),
         fmt::format("UPDATE orders SET customer_id = {}, updated_at = {{wo}} WHERE id = {}",
                     trial + 1, 100 + trial)});
  };
  change(100);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(Sync().is_object());
  auto run_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  ExpectSameAsAFreshMigrate(ts);
  std::mt19937 rng(20261212);
  // Ten kills that land while the sync runs; a trial whose sync ended
  // before its kill narrows the window for the next.
  int killed = 0;
  for (int trial = 0; killed < 10 && trial < 30; ++trial) {
    SCOPED_TRACE(trial);
    change(trial);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      setenv("WIDEN_SOURCE_URL", db_.c_str(), 1);
      const std::string bin = WidenBinary();
      execl(bin.c_str(), bin.c_str(), "sync", "-q", "-m", mapping_.c_str(), "--target",
            store_.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    std::this_thread::sleep_for(
        std::chrono::milliseconds(rng() % std::max<int64_t>(1, run_ms * 9 / 10)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
      ++killed;
    } else {
      run_ms = run_ms * 3 / 4;
    }
    after_kill_ = true;
    ASSERT_TRUE(Sync().is_object());
    ExpectSameAsAFreshMigrate(ts);
    if (HasFailure()) break;
  }
  EXPECT_EQ(killed, 10) << "the kills should land while the sync runs";
}

INSTANTIATE_TEST_SUITE_P(Engines, SyncKillTest,
                         ::testing::Values(Case{Engine::kPostgres, Mode::kWatermark},
                                           Case{Engine::kMySql, Mode::kWatermark},
                                           Case{Engine::kPostgres, Mode::kWatermark,
                                                Target::kHBase},
                                           Case{Engine::kMySql, Mode::kWatermark, Target::kHBase}),
                         CaseName);

}  // namespace
}  // namespace widen::testing
