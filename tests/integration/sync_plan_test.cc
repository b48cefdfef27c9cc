// The mapping's `sync:` section checked against a real source schema, on
// both engines, through the widen binary: valid watermark entries are shown
// by `widen plan` per source table each target table reads (text and JSON),
// `widen sync` still runs digest mode for them, and every mistake — a
// missing column, a type that is no watermark (domains resolved), a nullable
// watermark or tiebreak, a tiebreak that is no key with the watermark, a
// table without a key or a view, a lookback in the wrong unit, a soft-delete
// column or value that does not fit — stops plan, lint, migrate and sync
// with exit 2 and a message naming the mapping's file:line:col, the source
// table and column. Declared types and keys in the expected messages are
// read from the database.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

enum class Engine { kPostgres, kMySql };

// Lines 1-37; the sync section's entries start on line 38.
constexpr const char* kTables = R"YAML(source: ${WIDEN_SOURCE_URL}
tables:
  - name: s:orders
    from: orders
    families: [d]
    key: {parts: [{column: id, width: 8}]}
    joins: [{table: customer, on: {customer_id: id}}]
    columns: [status, customer.name]
    nest:
      - table: line
        on: {id: order_id}
        family: d
        prefix: l
        id: [{column: no, width: 4}]
        columns: [product]
  - name: s:events
    from: event
    families: [d]
    key: {parts: [source, {column: seq, width: 8}]}
    columns: [note]
  - name: s:nokey
    from: nokey
    families: [d]
    key: {parts: [{column: a, width: 8}]}
    columns: [b]
  - name: s:customers
    from: customer_v
    families: [d]
    key: {parts: [{column: id, width: 8, on_null: reject}]}
    columns: [name]
  - name: s:names
    from: names
    query: SELECT id, name FROM customer
    families: [d]
    key: {parts: [{column: id, width: 8, on_null: reject}]}
    columns: [name]
sync:
)YAML";

constexpr int kFirstEntryLine = 38;

std::vector<std::string> Schema(Engine e) {
  if (e == Engine::kPostgres) {
    return {
        "CREATE DOMAIN stamp AS timestamptz",
        "CREATE DOMAIN label AS text",
        "CREATE TABLE customer (id int PRIMARY KEY, name text, version bigint NOT NULL, "
        "local_at timestamp NOT NULL, born date NOT NULL, code varchar(10) NOT NULL UNIQUE, "
        "ratio float8 NOT NULL, nick text)",
        "CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, status label NOT "
        "NULL, changed stamp NOT NULL, maybe_at timestamptz, deleted boolean NOT NULL DEFAULT "
        "false, flag smallint NOT NULL DEFAULT 0, born date)",
        "CREATE TABLE line (order_id int NOT NULL, no int NOT NULL, product text, touched "
        "timestamp NOT NULL, PRIMARY KEY (order_id, no))",
        "CREATE TABLE event (source text NOT NULL, at timestamptz NOT NULL, seq int NOT NULL, "
        "note text, PRIMARY KEY (source, at))",
        "CREATE TABLE nokey (a int NOT NULL, b text, w timestamptz NOT NULL)",
        "CREATE VIEW customer_v AS SELECT id, name, local_at FROM customer",
        "INSERT INTO customer VALUES (1, 'Ann', 1, '2024-01-01 10:00', '1990-01-01', 'A', 0.5, "
        "NULL)",
        "INSERT INTO orders VALUES (1, 1, 'new', '2024-01-01 10:00Z', NULL, false, 0, NULL)",
        "INSERT INTO line VALUES (1, 1, 'pen', '2024-01-01 10:00')",
        "INSERT INTO event VALUES ('web', '2024-01-01 10:00Z', 1, 'x')",
        "INSERT INTO nokey VALUES (1, 'b', '2024-01-01 10:00Z')",
    };
  }
  return {
      "CREATE TABLE customer (id int PRIMARY KEY, name varchar(40), version bigint NOT NULL, "
      "local_at datetime(6) NOT NULL, born date NOT NULL, code varchar(10) NOT NULL UNIQUE, "
      "ratio double NOT NULL, nick varchar(20), yr year NOT NULL DEFAULT 2000)",
      "CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, status varchar(20) NOT "
      "NULL, changed timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), maybe_at timestamp(6) "
      "NULL, deleted boolean NOT NULL DEFAULT 0, flag smallint NOT NULL DEFAULT 0, born date)",
      "CREATE TABLE line (order_id int NOT NULL, no int NOT NULL, product varchar(20), touched "
      "datetime(6) NOT NULL, PRIMARY KEY (order_id, no))",
      "CREATE TABLE event (source varchar(20) NOT NULL, at timestamp(6) NOT NULL DEFAULT "
      "CURRENT_TIMESTAMP(6), seq int NOT NULL, note varchar(20), PRIMARY KEY (source, at))",
      "CREATE TABLE nokey (a int NOT NULL, b varchar(20), w timestamp(6) NOT NULL DEFAULT "
      "CURRENT_TIMESTAMP(6))",
      "CREATE VIEW customer_v AS SELECT id, name, local_at FROM customer",
      "INSERT INTO customer VALUES (1, 'Ann', 1, '2024-01-01 10:00', '1990-01-01', 'A', 0.5, "
      "NULL, 2000)",
      "INSERT INTO orders VALUES (1, 1, 'new', '2024-01-01 10:00', NULL, 0, 0, NULL)",
      "INSERT INTO line VALUES (1, 1, 'pen', '2024-01-01 10:00')",
      "INSERT INTO event VALUES ('web', '2024-01-01 10:00', 1, 'x')",
      "INSERT INTO nokey VALUES (1, 'b', '2024-01-01 10:00')",
  };
}

// Entries that all hold, one per line from line 38.
constexpr const char* kValidSync =
    "  - {table: orders, mode: watermark, watermark: changed, deletes: {soft: {column: deleted, "
    "value: true}, reconcile: true}}\n"
    "  - {table: customer, mode: watermark, watermark: version, lookback: 500}\n"
    "  - {table: line, mode: watermark, watermark: touched, lookback: 90s}\n"
    "  - {table: event, mode: watermark, watermark: at}\n"
    "  - {table: customer_v, mode: digest}\n";

class SyncPlanTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    if (pg()) {
      const std::string url = PgUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_PG_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_PG_URL not set (run through scripts/with-servers.sh)";
      }
      db_ = FreshPgDatabase(url, "widen_it_sync_plan");
    } else {
      const std::string url = MySqlUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_MYSQL_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_MYSQL_URL not set (run through scripts/with-servers.sh)";
      }
      db_ = FreshMySqlDatabase(url, "widen_it_sync_plan");
    }
    Sql(Schema(GetParam()));
    dir_ = MakeTempDir();
  }

  bool pg() const { return GetParam() == Engine::kPostgres; }

  std::vector<std::vector<std::string>> Sql(const std::vector<std::string>& statements) {
    if (!pg()) return MySqlQuery(db_, statements);
    std::vector<std::vector<std::string>> rows;
    for (const auto& s : statements) rows = PgQuery(db_, s);
    return rows;
  }
  std::string One(const std::string& sql) {
    auto rows = Sql({sql});
    EXPECT_EQ(rows.size(), 1u) << sql;
    return rows.empty() || rows[0].empty() ? "" : rows[0][0];
  }

  // The column's declared type as the database shows it.
  std::string Declared(const std::string& table, const std::string& column) {
    if (pg()) {
      return One(
          fmt::format("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
                      "'{}'::regclass AND attname = '{}'",
                      table, column));
    }
    return One(fmt::format(
        "SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
        "TABLE_NAME = '{}' AND COLUMN_NAME = '{}'",
        table, column));
  }

  // The columns of the table's primary key, in key order.
  std::vector<std::string> PrimaryKey(const std::string& table) {
    const std::string schema = pg() ? "current_schema()" : "DATABASE()";
    std::vector<std::string> cols;
    for (const auto& r : Sql({fmt::format(
             "SELECT k.column_name FROM information_schema.table_constraints c JOIN "
             "information_schema.key_column_usage k ON k.constraint_name = c.constraint_name AND "
             "k.table_schema = c.table_schema AND k.table_name = c.table_name WHERE "
             "c.constraint_type = 'PRIMARY KEY' AND c.table_schema = {} AND c.table_name = '{}' "
             "ORDER BY k.ordinal_position",
             schema, table)})) {
      cols.push_back(r[0]);
    }
    return cols;
  }

  // Writes the mapping (the tables, then `sync`) and runs `widen ARGS -m m.yaml` in dir_.
  CommandResult Widen(const std::string& args, const std::string& sync) {
    std::ofstream(dir_ + "/m.yaml") << kTables << sync;
    return RunCommand(fmt::format("cd {} && WIDEN_SOURCE_URL={} {} {} -m m.yaml", ShellQuote(dir_),
                                  ShellQuote(db_), WidenBinary(), args));
  }

  std::string db_;
  std::string dir_;
};

// "m.yaml:38:C" where C is the 1-based column of `token` in the entry.
std::string At(const std::string& entry, const std::string& token) {
  return fmt::format("m.yaml:{}:{}", kFirstEntryLine, entry.find(token) + 1);
}

TEST_P(SyncPlanTest, PlanShowsEachSourceTableItsModeAndWhy) {
  CommandResult r = Widen("plan --format json --limit 0 --sample 10", kValidSync);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  const auto& orders = doc["tables"][0];
  ASSERT_EQ(orders["name"], "s:orders");
  // Every table s:orders reads has a watermark: sync runs it in watermark mode.
  EXPECT_EQ(orders["sync"]["mode"], "watermark");
  const auto& sources = orders["sync"]["sources"];
  ASSERT_EQ(sources.size(), 3u) << sources.dump(2);

  // The driving table: an instant (PostgreSQL: a domain over timestamptz).
  const auto& o = sources[0];
  EXPECT_EQ(o["table"], "orders");
  EXPECT_EQ(o["uses"], nlohmann::json::array({"driving"}));
  EXPECT_EQ(o["mode"], "watermark");
  EXPECT_EQ(o["runs_as"], "watermark");
  EXPECT_EQ(o["entry"], fmt::format("m.yaml:{}:5", kFirstEntryLine));
  EXPECT_EQ(o["watermark"]["column"], "changed");
  EXPECT_EQ(o["watermark"]["type"], Declared("orders", "changed"));
  EXPECT_EQ(o["watermark"]["kind"], "instant");
  EXPECT_EQ(o["tiebreak"], nlohmann::json(PrimaryKey("orders")));
  EXPECT_EQ(o["tiebreak_is_primary_key"], true);
  // The default lookback: 10 minutes (docs/mapping.md).
  EXPECT_EQ(o["lookback"], nlohmann::json({{"ms", 600000}, {"default", true}}));
  // MySQL's BOOLEAN is TINYINT(1): its TRUE is 1 (docs/types.md).
  EXPECT_EQ(o["soft_delete"],
            nlohmann::json({{"column", "deleted"}, {"value", pg() ? "true" : "1"}}));
  EXPECT_EQ(o["reconcile"], true);
  EXPECT_EQ(o["why"].get<std::string>().find("Not run yet"), std::string::npos) << o["why"];

  // The joined table: an integer watermark with a count lookback.
  const auto& c = sources[1];
  EXPECT_EQ(c["table"], "customer");
  EXPECT_EQ(c["uses"], nlohmann::json::array({"joined"}));
  EXPECT_EQ(c["watermark"]["kind"], "integer");
  EXPECT_EQ(c["lookback"], nlohmann::json({{"values", 500}, {"default", false}}));
  EXPECT_EQ(c["soft_delete"], nullptr);
  EXPECT_EQ(c["reconcile"], false);

  // The nested table: a timestamp without time zone (MySQL DATETIME).
  const auto& l = sources[2];
  EXPECT_EQ(l["table"], "line");
  EXPECT_EQ(l["uses"], nlohmann::json::array({"nested"}));
  EXPECT_EQ(l["watermark"]["kind"], "timestamp");
  EXPECT_EQ(l["watermark"]["type"], Declared("line", "touched"));
  EXPECT_EQ(l["tiebreak"], nlohmann::json(PrimaryKey("line")));
  EXPECT_EQ(l["lookback"], nlohmann::json({{"ms", 90000}, {"default", false}}));

  // A primary key that holds the watermark: the tiebreak is the rest of it.
  const auto& events = doc["tables"][1]["sync"]["sources"];
  ASSERT_EQ(events.size(), 1u);
  std::vector<std::string> rest;
  for (const auto& k : PrimaryKey("event")) {
    if (k != "at") rest.push_back(k);
  }
  EXPECT_EQ(events[0]["tiebreak"], nlohmann::json(rest));
  EXPECT_EQ(events[0]["watermark"]["kind"], "instant");

  // No entry, and an explicit digest entry on a view.
  const auto& nokey = doc["tables"][2]["sync"]["sources"][0];
  EXPECT_EQ(nokey["mode"], "digest");
  EXPECT_EQ(nokey["entry"], nullptr);
  EXPECT_EQ(nokey["why"], "no sync entry: digest is the default");
  EXPECT_EQ(nokey.count("watermark"), 0u);
  const auto& view = doc["tables"][3]["sync"]["sources"][0];
  EXPECT_EQ(view["mode"], "digest");
  EXPECT_EQ(view["entry"], fmt::format("m.yaml:{}:5", kFirstEntryLine + 4));
  const auto& query = doc["tables"][4]["sync"]["sources"];
  ASSERT_EQ(query.size(), 1u);
  EXPECT_EQ(query[0]["table"], nullptr);
  EXPECT_EQ(query[0]["uses"], nlohmann::json::array({"driving"}));
  EXPECT_EQ(query[0]["mode"], "digest");
  EXPECT_EQ(query[0]["why"], "a free-form query has no watermark: every run reads it whole");

  // The text form: one line per source table under the table's sync line.
  r = Widen("plan --limit 0 --sample 10", kValidSync);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const std::string& want : {
           std::string("sync       watermark: every source table it reads has a watermark"),
           std::string("sync       digest: each run reads every source row and rewrites the rows "
                       "whose digest changed (exact for joins, nests and deletes); not watermark "
                       "mode because it reads 'nokey' in digest mode"),
           fmt::format("           orders    driving  watermark: the mapping's sync entry "
                       "(m.yaml:{}:5): watermark changed ({}, instant), tiebreak (id) (the "
                       "primary key), lookback 10m (the default); soft delete where deleted = "
                       "{} (every command leaves such rows out), reconcile",
                       kFirstEntryLine, Declared("orders", "changed"), pg() ? "true" : "1"),
           fmt::format("           customer  joined   watermark: the mapping's sync entry "
                       "(m.yaml:{}:5): watermark version ({}, integer), tiebreak (id) (the "
                       "primary key), lookback 500 values; hard deletes and key changes not "
                       "detected (no soft delete, no reconcile)\n",
                       kFirstEntryLine + 1, Declared("customer", "version")),
           fmt::format("           line      nested   watermark: the mapping's sync entry "
                       "(m.yaml:{}:5):",
                       kFirstEntryLine + 2),
           std::string("           nokey  driving  digest: no sync entry: digest is the default"),
           fmt::format("           customer_v  driving  digest: the mapping's sync entry "
                       "(m.yaml:{}:5) says so",
                       kFirstEntryLine + 4),
           std::string("           query 'names'  driving  digest: a free-form query has no "
                       "watermark: every run reads it whole"),
       }) {
    EXPECT_NE(r.output.find(want), std::string::npos) << "missing: " << want << "\n" << r.output;
  }
}

TEST_P(SyncPlanTest, SyncRunsWatermarkModeWhereEverySourceTableHasAWatermark) {
  const std::string target = ShellQuote("leveldb:" + dir_ + "/store");
  auto modes = [&](const char* want_orders, const char* want_events) {
    CommandResult r = Widen(fmt::format("sync --target {} --format json", target), kValidSync);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto doc = nlohmann::json::parse(r.output.substr(r.output.find('{')));
    ASSERT_EQ(doc["tables"].size(), 5u) << doc.dump(2);
    // s:orders and s:events read only tables with a watermark entry.
    EXPECT_EQ(doc["tables"][0]["mode"], want_orders) << doc["tables"][0].dump();
    EXPECT_EQ(doc["tables"][1]["mode"], want_events) << doc["tables"][1].dump();
    EXPECT_EQ(doc["tables"][0].count("digest_because"), 0u);
    // The others: no entry, a view in digest mode, a free-form query.
    for (size_t i = 2; i < 5; ++i) {
      EXPECT_EQ(doc["tables"][i]["mode"], "digest") << doc["tables"][i].dump();
      EXPECT_FALSE(doc["tables"][i]["digest_because"].get<std::string>().empty());
    }
    EXPECT_EQ(doc["tables"][4]["digest_because"],
              "its driving rows come from a free-form query, which has no watermark");
  };
  // The first run is a full pass; the next read the changes since.
  modes("full", "full");
  modes("watermark", "watermark");
}

TEST_P(SyncPlanTest, SummariesNameTheTargetAndTheTablesWhoseHardDeletesGoUnseen) {
  // s:orders reads orders, customer and line, all reconciled; s:events
  // reads event, which is not.
  const char* sync =
      "  - {table: orders, mode: watermark, watermark: changed, deletes: {reconcile: true}}\n"
      "  - {table: customer, mode: watermark, watermark: version, deletes: {reconcile: true}}\n"
      "  - {table: line, mode: watermark, watermark: touched, deletes: {reconcile: true}}\n"
      "  - {table: event, mode: watermark, watermark: at}\n";
  const std::string store = "leveldb:" + dir_ + "/store";
  CommandResult r = Widen("migrate --target " + ShellQuote(store), sync);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("target: " + store + " (--target)\n"), std::string::npos) << r.output;
  r = Widen("sync --target " + ShellQuote(store), sync);  // the first: a full pass
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("widen sync into " + store + " (--target): 5 table(s)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("not detected"), std::string::npos) << r.output;
  r = Widen("sync --target " + ShellQuote(store), sync);  // watermark mode
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("; hard deletes and key changes not detected in s:events (watermark "
                          "mode without "
                          "--reconcile or deletes: reconcile: true)\n"),
            std::string::npos)
      << r.output;
  r = Widen("sync --reconcile --target " + ShellQuote(store), sync);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("not detected"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("; hard deletes reconciled in s:orders, s:events\n"), std::string::npos)
      << r.output;
  // A hard delete: the reconcile says what it found.
  Sql({"DELETE FROM orders WHERE id = 1"});
  r = Widen("sync --reconcile --target " + ShellQuote(store), sync);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(" 1 deleted; "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("; hard deletes reconciled in s:orders, s:events\n"), std::string::npos)
      << r.output;
}

TEST_P(SyncPlanTest, AMistakeStopsEveryCommandWithExitTwo) {
  const std::string entry = "  - {table: orders, mode: watermark, watermark: chaned}\n";
  const std::string want = At(entry, "chaned") +
                           ": sync of 'orders': source table 'orders' has no column 'chaned'; did "
                           "you mean 'changed'?";
  for (const std::string cmd :
       {"plan", "lint", "migrate --target leveldb:store", "sync --target leveldb:store"}) {
    CommandResult r = Widen(cmd, entry);
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.output;
    if (cmd == "lint") {
      // A finding E100 at the place the message names.
      EXPECT_NE(r.output.find("E100"), std::string::npos) << r.output;
      EXPECT_NE(r.output.find(want.substr(want.find(": ") + 2)), std::string::npos) << r.output;
      EXPECT_NE(r.output.find(At(entry, "chaned")), std::string::npos) << r.output;
    } else {
      EXPECT_NE(r.output.find(want), std::string::npos) << cmd << "\n" << r.output;
    }
  }
  // Nothing was written.
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/store"));
}

// One entry (on line 38) and the message `widen plan` stops with (exit 2).
struct Mistake {
  std::string entry;
  std::string message;
};

TEST_P(SyncPlanTest, EachMistakeNamesThePlaceTableAndColumn) {
  const std::string watermark_rule =
      "; a watermark must be a timestamp (timestamp, timestamptz, MySQL DATETIME or TIMESTAMP) "
      "or an integer that every insert and update raises";
  std::vector<Mistake> cases;
  auto add = [&](const std::string& entry, const std::string& token, const std::string& message) {
    cases.push_back(Mistake{"  - " + entry + "\n", At("  - " + entry, token) + ": " + message});
  };

  add("{table: customer, mode: watermark, watermark: born}", "born",
      fmt::format("sync of 'customer': watermark column customer.born is {}, a date, which "
                  "cannot order the changes made on one day{}",
                  Declared("customer", "born"), watermark_rule));
  add("{table: customer, mode: watermark, watermark: ratio}", "ratio",
      fmt::format("sync of 'customer': watermark column customer.ratio is {}, a double value{}",
                  Declared("customer", "ratio"), watermark_rule));
  // A domain is checked as its base type.
  const std::string status_type =
      pg() ? fmt::format("{} (a domain over {})", Declared("orders", "status"),
                         One("SELECT format_type(typbasetype, typtypmod) FROM pg_type WHERE "
                             "typname = 'label'"))
           : Declared("orders", "status");
  add("{table: orders, mode: watermark, watermark: status}", "status",
      fmt::format("sync of 'orders': watermark column orders.status is {}, a text value{}",
                  status_type, watermark_rule));
  if (!pg()) {
    add("{table: customer, mode: watermark, watermark: yr}", "yr",
        fmt::format("sync of 'customer': watermark column customer.yr is {}, a bit string or a "
                    "year, not a counter that every write raises{}",
                    Declared("customer", "yr"), watermark_rule));
  }
  // A boolean: MySQL's BOOLEAN is tinyint(1), an integer to the server.
  add("{table: orders, mode: watermark, watermark: deleted}", "deleted",
      pg() ? fmt::format("sync of 'orders': watermark column orders.deleted is {}, a bool value{}",
                         Declared("orders", "deleted"), watermark_rule)
           : fmt::format("sync of 'orders': watermark column orders.deleted is {}, a tinyint or "
                         "boolean (MySQL's BOOLEAN is tinyint(1)), too small to be a counter that "
                         "every write raises{}",
                         Declared("orders", "deleted"), watermark_rule));
  add("{table: orders, mode: watermark, watermark: maybe_at}", "maybe_at",
      "sync of 'orders': watermark column orders.maybe_at can be NULL, and a row whose watermark "
      "is NULL has no place among the changes: its writes would never be found; declare it NOT "
      "NULL (with a default), or sync the table in digest mode");

  // Tiebreaks.
  add("{table: orders, mode: watermark, watermark: changed, tiebreak: [customer_id]}", "[",
      fmt::format("sync of 'orders': (watermark changed, tiebreak (customer_id)) is not, nor "
                  "contains, the primary key or a unique key of orders: rows sharing a watermark "
                  "value could not be told apart, and a run that ended among them would skip or "
                  "repeat some; name the columns of a key (primary key ({}))",
                  PrimaryKey("orders")[0]));
  add("{table: customer, mode: watermark, watermark: version, tiebreak: [nick]}", "nick",
      "sync of 'customer': tiebreak column customer.nick can be NULL; a tiebreak must be NOT "
      "NULL, so that every row has one place in the order of changes");
  add("{table: customer, mode: watermark, watermark: version, tiebreak: [ratio]}", "ratio",
      fmt::format("sync of 'customer': tiebreak column customer.ratio is {}, which the database "
                  "does not order as widen compares its values (floats, JSON, enums and types "
                  "kept as text are not); name columns of another type in 'tiebreak'",
                  Declared("customer", "ratio")));
  add("{table: customer, mode: watermark, watermark: version, tiebreak: [nme]}", "nme",
      "sync of 'customer': source table 'customer' has no column 'nme'; did you mean 'name'?");
  add("{table: nokey, mode: watermark, watermark: w}", "{",
      "sync of 'nokey': 'nokey' has no primary key to order the rows of one watermark value; "
      "give 'tiebreak': columns that, with the watermark, are a unique key of the table");
  add("{table: nokey, mode: watermark, watermark: w, tiebreak: a}", "a}",
      "sync of 'nokey': (watermark w, tiebreak (a)) is not, nor contains, the primary key or a "
      "unique key of nokey: rows sharing a watermark value could not be told apart, and a run "
      "that ended among them would skip or repeat some; name the columns of a key (it declares "
      "none)");
  add("{table: customer_v, mode: watermark, watermark: local_at}", "{",
      "sync of 'customer_v': 'customer_v' is a view, which declares no primary or unique key, "
      "so no tiebreak can be shown to tell its rows apart; sync it in digest mode, or map the "
      "table it reads");

  // Lookbacks in the watermark's unit.
  add("{table: customer, mode: watermark, watermark: version, lookback: 5m}", "5m",
      fmt::format("sync of 'customer': 'lookback' 5m is a duration, but watermark "
                  "customer.version is an integer ({}): give how many watermark values to read "
                  "again, such as 10000",
                  Declared("customer", "version")));
  add("{table: line, mode: watermark, watermark: touched, lookback: 500}", "500",
      fmt::format("sync of 'line': 'lookback' 500 is a count of values, for an integer "
                  "watermark, but watermark line.touched is {}: give a duration such as 10m",
                  Declared("line", "touched")));

  // Soft deletes.
  const std::string soft = "{table: orders, mode: watermark, watermark: changed, deletes: {soft: ";
  add(soft + "{column: deletd, value: true}}}", "deletd",
      "sync of 'orders': source table 'orders' has no column 'deletd'; did you mean 'deleted'?");
  add(soft + "{column: deleted, value: maybe}}}", "maybe",
      fmt::format(
          "sync of 'orders': soft-delete value 'maybe' is no value of orders.deleted "
          "({}): expected {}",
          Declared("orders", "deleted"),
          pg() ? "true or false" : "a whole number from -128 to 127 (true and false are 1 and 0)"));
  add(soft + "{column: flag, value: 70000}}}", "70000",
      fmt::format("sync of 'orders': soft-delete value '70000' is no value of orders.flag ({}): "
                  "expected a whole number from -32768 to 32767 (true and false are 1 and 0)",
                  Declared("orders", "flag")));
  add(soft + "{column: born, value: 2020-01-01}}}", "born",
      fmt::format("sync of 'orders': soft-delete column orders.born is {}; a soft delete is "
                  "marked by a boolean, integer, decimal or text column holding one value",
                  Declared("orders", "born")));

  for (const Mistake& m : cases) {
    CommandResult r = Widen("plan --limit 0", m.entry);
    EXPECT_EQ(r.exit_code, 2) << m.entry << r.output;
    EXPECT_NE(r.output.find(m.message), std::string::npos)
        << m.entry << "want: " << m.message << "\ngot:  " << r.output;
  }

  // What holds: a unique key alone as the tiebreak; a soft delete on text.
  for (const std::string entry : {
           "  - {table: customer, mode: watermark, watermark: version, tiebreak: [code]}\n",
           "  - {table: orders, mode: watermark, watermark: changed, lookback: 0, deletes: {soft: "
           "{column: status, value: gone}}}\n",
       }) {
    CommandResult r = Widen("plan --limit 0", entry);
    EXPECT_EQ(r.exit_code, 0) << entry << r.output;
  }
}

TEST_P(SyncPlanTest, LintSuggestsWatermarkModeForALargeTableWithALastChangeColumn) {
  Sql({pg() ? "ANALYZE" : "ANALYZE TABLE customer, orders, line, event, nokey"});
  const std::string estimate =
      pg() ? One("SELECT reltuples::bigint FROM pg_class WHERE relname = 'orders'")
           : One("SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = "
                 "DATABASE() AND TABLE_NAME = 'orders'");
  ASSERT_NE(estimate, "0");
  CommandResult r = Widen("lint --format json --large-sync-rows 0", "");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto doc = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  std::vector<nlohmann::json> found;
  for (const auto& f : doc["findings"]) {
    if (f["rule"] == "I121") found.push_back(f);
  }
  // orders.changed is the only NOT NULL timestamp named like a last change
  // (customer.local_at and line.touched are not; nokey has no key).
  ASSERT_EQ(found.size(), 1u) << doc.dump(2);
  EXPECT_EQ(found[0]["severity"], "info");
  EXPECT_EQ(found[0]["table"], "s:orders");
  EXPECT_EQ(found[0]["line"], 3);  // the target table driven by orders
  EXPECT_EQ(found[0]["message"],
            fmt::format("source table orders (about {} rows) has no sync entry, so widen sync "
                        "reads every row of it on every run (digest mode); its column changed "
                        "({}, NOT NULL) looks like a last-change time, from which watermark mode "
                        "would read only the rows changed since the last run",
                        estimate, Declared("orders", "changed")));

  // An entry is the mapping's choice; the default threshold is 1,000,000 rows.
  for (const auto& [args, sync] : std::vector<std::pair<std::string, std::string>>{
           {"lint --format json --large-sync-rows 0", "  - {table: orders, mode: digest}\n"},
           {"lint --format json", ""}}) {
    r = Widen(args, sync);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("I121"), std::string::npos) << args << "\n" << r.output;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, SyncPlanTest,
                         ::testing::Values(Engine::kPostgres, Engine::kMySql),
                         [](const auto& info) {
                           return info.param == Engine::kPostgres ? "Postgres" : "MySql";
                         });

}  // namespace
}  // namespace widen::testing
