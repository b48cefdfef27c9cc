// widen verify on real servers, both engines: a migrated store verifies
// equal (exit 0); the store damaged through the store API in each way — a
// row removed, a cell changed, a row added, a nested cell removed — in a
// table whose row keys follow the read order (compared streamed) and in one
// whose keys do not (compared through the external sort), and verify names
// each row with its source primary key and counts them (exit 9); the same
// with --jobs 2 and with --sample (the rows whose key hash falls in it);
// the source changed after a migrate differs until a sync; the cells'
// timestamp comes from the table's state; a table the target lacks has
// every row missing; rows that cannot be encoded are counted, not compared.
// Expected rows and counts come from SQL queries on the source.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <fstream>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "store/leveldb_store.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

enum class Engine { kPostgres, kMySql };

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

// `n` customers, 4n orders, 3 lines each.
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

// The row keys the mapping gives, by the key layout (docs/mapping.md: text
// form, integers zero-padded to their width, parts joined by '|').
std::string OrderKey(int64_t customer_id, int64_t id) {
  return fmt::format("{:06}|{:08}", customer_id, id);
}
std::string CustomerKey(int64_t id) { return fmt::format("{:06}", id); }

class VerifyTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    if (GetParam() == Engine::kPostgres) {
      const std::string url = PgUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_PG_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_PG_URL not set (run through scripts/with-servers.sh)";
      }
      db_ = FreshPgDatabase(url, "widen_it_verify");
    } else {
      const std::string url = MySqlUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_MYSQL_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_MYSQL_URL not set (run through scripts/with-servers.sh)";
      }
      db_ = FreshMySqlDatabase(url, "widen_it_verify");
    }
    dir_ = MakeTempDir();
    mapping_ = dir_ + "/mapping.yaml";
    std::ofstream(mapping_) << kMapping;
    path_ = dir_ + "/store";
    store_ = "leveldb:" + path_;
  }

  void Sql(const std::vector<std::string>& statements) {
    if (GetParam() == Engine::kPostgres) {
      for (const auto& s : statements) PgQuery(db_, s);
    } else {
      MySqlQuery(db_, statements);
    }
  }
  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    return GetParam() == Engine::kPostgres ? PgQuery(db_, sql) : MySqlQuery(db_, sql);
  }
  int64_t Number(const std::string& sql) {
    const auto rows = Query(sql);
    return rows.empty() || rows[0].empty() ? -1 : std::stoll(rows[0][0]);
  }

  std::string Widen(const std::string& args) const {
    return fmt::format("WIDEN_SOURCE_URL={} {} {}", ShellQuote(db_), WidenBinary(), args);
  }

  void Migrate(const std::string& more = "") {
    CommandResult r = RunCommand(Widen(fmt::format(
        "migrate -q -m {} --target {} {}", ShellQuote(mapping_), ShellQuote(store_), more)));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  // widen verify --format json with `more`: its exit code and document.
  std::pair<int, nlohmann::json> VerifyJson(const std::string& more = "") {
    CommandResult r =
        RunCommand(Widen(fmt::format("verify -m {} --target {} --format json {}",
                                     ShellQuote(mapping_), ShellQuote(store_), more)));
    const size_t brace = r.output.find('{');
    if (brace == std::string::npos) {
      ADD_FAILURE() << "no JSON: " << r.output;
      return {r.exit_code, nlohmann::json()};
    }
    nlohmann::json j = nlohmann::json::parse(r.output.substr(brace), nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.output;
    return {r.exit_code, j};
  }

  static const nlohmann::json& Table(const nlohmann::json& doc, const std::string& name) {
    static const nlohmann::json none;
    if (!doc.contains("tables")) return none;
    for (const auto& t : doc["tables"]) {
      if (t["table"] == name) return t;
    }
    return none;
  }

  // Rewrites row `row` of `table` through the store API (a RowWriter, as
  // sync writes): `edit` gets its cells (every version) and returns the
  // cells to keep; an empty result removes the row.
  void EditRow(const std::string& table, const std::string& row,
               const std::function<CellBatch(const CellBatch&)>& edit) {
    auto opened = LevelDbStore::Open(path_, StoreOptions());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<LevelDbStore> store = std::move(opened).value();
    ReadOptions ro;
    ro.start_row = row;
    ro.limit_rows = 1;
    ro.max_versions = std::numeric_limits<int>::max();
    auto reader = store->NewReader(table, ro);
    ASSERT_TRUE(reader.ok());
    CellBatch cells;
    for (; (*reader)->Valid() && (*reader)->cell().row == row; (*reader)->Next()) {
      cells.Add((*reader)->cell());
    }
    ASSERT_TRUE((*reader)->status().ok());
    CellBatch kept = edit(cells);
    kept.Sort();
    auto writer = store->NewRowWriter(table);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->ReplaceRow(row, kept, "").ok());
    ASSERT_TRUE((*writer)->Sync().ok());
  }

  void RemoveRow(const std::string& table, const std::string& row) {
    EditRow(table, row, [](const CellBatch&) { return CellBatch(); });
  }
  // Sets column `column` ("family:qualifier") of `row` to `value`, or
  // removes it when `value` is null.
  void SetCell(const std::string& table, const std::string& row, const std::string& column,
               const char* value) {
    EditRow(table, row, [&](const CellBatch& cells) {
      CellBatch out;
      bool found = false;
      for (size_t i = 0; i < cells.size(); ++i) {
        CellView c = cells.Get(i);
        if (std::string(c.family) + ":" + std::string(c.qualifier) == column) {
          found = true;
          if (value == nullptr) continue;
          c.value = value;
        }
        out.Add(c);
      }
      EXPECT_TRUE(found) << row << " " << column;
      return out;
    });
  }
  // Adds row `row` with one cell `column` at `timestamp_ms`.
  void AddRow(const std::string& table, const std::string& row, const std::string& family,
              const std::string& qualifier, int64_t timestamp_ms) {
    EditRow(table, row, [&](const CellBatch&) {
      CellBatch out;
      out.Add(row, family, qualifier, timestamp_ms, "added");
      return out;
    });
  }

  std::string db_, dir_, mapping_, path_, store_;
};

TEST_P(VerifyTest, AMigratedStoreIsEqual) {
  Sql(Schema(GetParam(), 10));
  Migrate();
  auto [code, doc] = VerifyJson();
  EXPECT_EQ(code, 0) << doc.dump();
  EXPECT_EQ(doc["widen_verify"], 1);
  EXPECT_EQ(doc["equal"], true);
  const int64_t orders = Number("SELECT count(*) FROM orders");
  const int64_t customers = Number("SELECT count(*) FROM customer");
  const int64_t lines = Number("SELECT count(*) FROM line");
  const nlohmann::json& o = Table(doc, "s:orders");
  EXPECT_EQ(o["rows"], orders);
  EXPECT_EQ(o["target_rows"], orders);
  EXPECT_EQ(o["rows_equal"], orders);
  // Each order: customer name, status and total (none NULL), and its lines.
  EXPECT_EQ(o["cells"], 3 * orders + lines);
  EXPECT_EQ(o["target_cells"], 3 * orders + lines);
  EXPECT_EQ(o["state"], "complete");
  EXPECT_EQ(o["timestamp_from"], "table state");
  const nlohmann::json& c = Table(doc, "s:by_customer");
  EXPECT_EQ(c["rows_equal"], customers);
  EXPECT_EQ(c["cells"], 2 * customers + orders);
  EXPECT_EQ(doc["rows_missing"], 0);
  EXPECT_EQ(doc["rows_extra"], 0);
  EXPECT_EQ(doc["rows_different"], 0);

  // The text report says so, and --full and --jobs 2 agree.
  for (const char* more : {"", "--full", "--jobs 2"}) {
    SCOPED_TRACE(more);
    CommandResult r = RunCommand(Widen(fmt::format(
        "verify -m {} --target {} {}", ShellQuote(mapping_), ShellQuote(store_), more)));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(
        r.output.find(fmt::format("2 table(s) equal to the source ({} rows)", orders + customers)),
        std::string::npos)
        << r.output;
  }
  // The cells' timestamp matters: with another one, every row differs.
  auto [other, odoc] = VerifyJson("--timestamp-ms 5");
  EXPECT_EQ(other, 9);
  EXPECT_EQ(Table(odoc, "s:orders")["rows_different"], orders);
  EXPECT_EQ(Table(odoc, "s:orders")["timestamp_from"], "--timestamp-ms");
  // --sample and --full together are refused.
  CommandResult both = RunCommand(Widen(fmt::format("verify -m {} --target {} --sample 3 --full",
                                                    ShellQuote(mapping_), ShellQuote(store_))));
  EXPECT_EQ(both.exit_code, 2) << both.output;
}

// Each kind of damage, in a table compared through the external sort
// (s:orders: keys customer|order, read by order) and one compared streamed
// (s:by_customer: keys follow the customer ids it is read by).
TEST_P(VerifyTest, EachDamageIsNamedWithItsSourceKeyAndCounted) {
  Sql(Schema(GetParam(), 10));
  Migrate();
  const int64_t orders = Number("SELECT count(*) FROM orders");
  const int64_t customers = Number("SELECT count(*) FROM customer");
  const int64_t ts = Table(VerifyJson().second, "s:orders")["timestamp_ms"].get<int64_t>();

  // s:orders: order 7's row removed, order 8's status changed, one of
  // order 9's lines removed, a row no order gives added.
  const std::string removed = OrderKey(Number("SELECT customer_id FROM orders WHERE id = 7"), 7);
  const std::string changed = OrderKey(Number("SELECT customer_id FROM orders WHERE id = 8"), 8);
  const std::string nested = OrderKey(Number("SELECT customer_id FROM orders WHERE id = 9"), 9);
  const int64_t line = Number("SELECT min(id) FROM line WHERE order_id = 9");
  const std::string added = OrderKey(99, 999);
  const int64_t removed_cells = 3 + Number("SELECT count(*) FROM line WHERE order_id = 7");
  RemoveRow("s:orders", removed);
  SetCell("s:orders", changed, "d:status", "damaged");
  SetCell("s:orders", nested, fmt::format("l:l{:08}", line), nullptr);
  AddRow("s:orders", added, "d", "status", ts);
  // s:by_customer: customer 2 removed, customer 3's city changed, one of
  // customer 4's nested orders removed, a customer 777 added.
  const int64_t order_of_4 = Number("SELECT min(id) FROM orders WHERE customer_id = 4");
  const int64_t removed_customer_cells =
      2 + Number("SELECT count(*) FROM orders WHERE customer_id = 2");
  RemoveRow("s:by_customer", CustomerKey(2));
  SetCell("s:by_customer", CustomerKey(3), "d:city", "damaged");
  SetCell("s:by_customer", CustomerKey(4), fmt::format("o:o{:08}", order_of_4), nullptr);
  AddRow("s:by_customer", CustomerKey(777), "d", "name", ts);

  for (const char* more : {"", "--jobs 2"}) {
    SCOPED_TRACE(more);
    auto [code, doc] = VerifyJson(more);
    EXPECT_EQ(code, 9) << doc.dump();
    EXPECT_EQ(doc["equal"], false);
    const nlohmann::json& o = Table(doc, "s:orders");
    EXPECT_EQ(o["equal"], false);
    EXPECT_EQ(o["rows"], orders);
    EXPECT_EQ(o["target_rows"], orders);  // one removed, one added
    EXPECT_EQ(o["rows_equal"], orders - 3);
    EXPECT_EQ(o["rows_missing"], 1);
    EXPECT_EQ(o["rows_extra"], 1);
    EXPECT_EQ(o["rows_different"], 2);
    EXPECT_EQ(o["cells_missing"], removed_cells + 1);
    EXPECT_EQ(o["cells_extra"], 1);
    EXPECT_EQ(o["cells_changed"], 1);
    ASSERT_EQ(o["missing"].size(), 1u);
    EXPECT_EQ(o["missing"][0]["row"], removed);
    EXPECT_EQ(o["missing"][0]["source"], nlohmann::json({{"id", "7"}}));
    EXPECT_EQ(o["missing"][0]["cells"], removed_cells);
    ASSERT_EQ(o["extra"].size(), 1u);
    EXPECT_EQ(o["extra"][0]["row"], added);
    EXPECT_EQ(o["extra"][0]["source"], nlohmann::json({{"id", "999"}}));
    ASSERT_EQ(o["different"].size(), 2u);
    // In row key order.
    const bool changed_first = changed < nested;
    const nlohmann::json& ch = o["different"][changed_first ? 0 : 1];
    const nlohmann::json& ne = o["different"][changed_first ? 1 : 0];
    EXPECT_EQ(ch["row"], changed);
    EXPECT_EQ(ch["source"], nlohmann::json({{"id", "8"}}));
    EXPECT_EQ(
        ch["differences"][0],
        fmt::format("d:status @{}: value 'damaged' in the target, 'new' from the source", ts));
    EXPECT_EQ(ne["row"], nested);
    EXPECT_EQ(ne["source"], nlohmann::json({{"id", "9"}}));
    EXPECT_EQ(ne["cells"], 1);
    EXPECT_NE(ne["differences"][0].get<std::string>().find(
                  fmt::format("l:l{:08} @{}: missing in the target", line, ts)),
              std::string::npos)
        << ne.dump();

    const nlohmann::json& c = Table(doc, "s:by_customer");
    EXPECT_EQ(c["rows"], customers);
    EXPECT_EQ(c["rows_missing"], 1);
    EXPECT_EQ(c["rows_extra"], 1);
    EXPECT_EQ(c["rows_different"], 2);
    EXPECT_EQ(c["rows_equal"], customers - 3);
    EXPECT_EQ(c["cells_missing"], removed_customer_cells + 1);
    EXPECT_EQ(c["missing"][0]["row"], CustomerKey(2));
    EXPECT_EQ(c["missing"][0]["source"], nlohmann::json({{"id", "2"}}));
    EXPECT_EQ(c["extra"][0]["row"], CustomerKey(777));
    EXPECT_EQ(c["different"][0]["row"], CustomerKey(3));
    EXPECT_EQ(c["different"][0]["differences"][0],
              fmt::format("d:city @{}: value 'damaged' in the target, 'city' from the source", ts));
    EXPECT_EQ(c["different"][1]["row"], CustomerKey(4));
    EXPECT_NE(c["different"][1]["differences"][0].get<std::string>().find(
                  fmt::format("o:o{:08} @{}: missing in the target", order_of_4, ts)),
              std::string::npos);
    EXPECT_EQ(doc["rows_missing"], 2);
    EXPECT_EQ(doc["rows_extra"], 2);
    EXPECT_EQ(doc["rows_different"], 4);
  }

  // The text report names the rows with their source keys.
  CommandResult r = RunCommand(
      Widen(fmt::format("verify -m {} --target {}", ShellQuote(mapping_), ShellQuote(store_))));
  EXPECT_EQ(r.exit_code, 9) << r.output;
  for (const std::string& want :
       {removed + "  =  customer_id=" + removed.substr(0, 6) + " id=00000007  <-  id=7",
        added + "  =  customer_id=000099 id=00000999  <-  id=999", changed, nested,
        std::string("s:orders: 1 row(s) missing from the target"),
        std::string("s:by_customer: 2 row(s) different"),
        std::string("s:orders: 1 row(s) only in the target (the source does not give them):"),
        std::string("(a source row deleted, or its primary key changed, since the last load: "
                    "widen sync removes such rows, in watermark mode only with --reconcile)"),
        std::string("2 of 2 table(s) differ from the source: 2 row(s) missing, 2 extra, 4 "
                    "different")}) {
    EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
  }

  // --sample 3: the rows whose key hash (XXH3-64) is a multiple of 3, on
  // both sides.
  auto in = [](const std::string& key) { return XXH3_64bits(key.data(), key.size()) % 3 == 0; };
  int64_t sampled = 0;
  for (const auto& row : Query("SELECT customer_id, id FROM orders")) {
    sampled += in(OrderKey(std::stoll(row[0]), std::stoll(row[1])));
  }
  auto [code, doc] = VerifyJson("--sample 3");
  EXPECT_EQ(doc["sample"], 3);
  const nlohmann::json& o = Table(doc, "s:orders");
  EXPECT_EQ(o["rows"], sampled);
  EXPECT_EQ(o["rows_missing"], in(removed) ? 1 : 0);
  EXPECT_EQ(o["rows_extra"], in(added) ? 1 : 0);
  EXPECT_EQ(o["rows_different"], (in(changed) ? 1 : 0) + (in(nested) ? 1 : 0));
  const bool any = in(removed) || in(added) || in(changed) || in(nested) || in(CustomerKey(2)) ||
                   in(CustomerKey(3)) || in(CustomerKey(4)) || in(CustomerKey(777));
  EXPECT_EQ(code, any ? 9 : 0);
}

// After a migrate the source changes: verify names what differs; a sync
// brings the store to what verify then finds equal.
TEST_P(VerifyTest, ASyncedStoreIsEqual) {
  Sql(Schema(GetParam(), 10));
  Migrate();
  const int64_t c7 = Number("SELECT customer_id FROM orders WHERE id = 7");
  const int64_t c9 = Number("SELECT customer_id FROM orders WHERE id = 9");
  Sql({"INSERT INTO orders VALUES (1000, 3, 'new', 5)",
       "INSERT INTO line VALUES (5000, 1000, 'px', 1)",
       "UPDATE orders SET status = 'paid' WHERE id = 7", "DELETE FROM line WHERE order_id = 9",
       "DELETE FROM orders WHERE id = 9"});
  auto [code, doc] = VerifyJson();
  EXPECT_EQ(code, 9);
  const nlohmann::json& o = Table(doc, "s:orders");
  EXPECT_EQ(o["rows_missing"], 1);
  EXPECT_EQ(o["missing"][0]["row"], OrderKey(3, 1000));
  EXPECT_EQ(o["rows_extra"], 1);
  EXPECT_EQ(o["extra"][0]["row"], OrderKey(c9, 9));
  EXPECT_EQ(o["rows_different"], 1);
  EXPECT_EQ(o["different"][0]["row"], OrderKey(c7, 7));
  // The customers holding orders 1000, 7 and 9 as nested cells.
  const size_t holders = std::set<int64_t>{3, c7, c9}.size();
  EXPECT_EQ(Table(doc, "s:by_customer")["rows_different"], holders);

  CommandResult r = RunCommand(
      Widen(fmt::format("sync -q -m {} --target {}", ShellQuote(mapping_), ShellQuote(store_))));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto [after, adoc] = VerifyJson();
  EXPECT_EQ(after, 0) << adoc.dump();
  EXPECT_EQ(Table(adoc, "s:orders")["rows_equal"], Number("SELECT count(*) FROM orders"));
  EXPECT_EQ(Table(adoc, "s:by_customer")["rows_equal"], Number("SELECT count(*) FROM customer"));
}

// A table the target lacks has every row missing; rows that cannot be
// encoded are counted and named, not compared.
TEST_P(VerifyTest, AMissingTableAndRowsThatCannotBeEncoded) {
  Sql(Schema(GetParam(), 5));
  // Order 5 moves to a customer id wider than the key part's 6 digits.
  Sql({"UPDATE orders SET customer_id = 1234567 WHERE id = 5"});
  Migrate(fmt::format("--table s:orders --rejects {}", ShellQuote(dir_ + "/rejects.jsonl")));
  auto [code, doc] = VerifyJson();
  EXPECT_EQ(code, 9);
  const nlohmann::json& o = Table(doc, "s:orders");
  EXPECT_EQ(o["equal"], true);
  EXPECT_EQ(o["rejected"], 1);
  EXPECT_NE(o["first_rejected"][0].get<std::string>().find("id=5"), std::string::npos);
  EXPECT_EQ(o["rows"], Number("SELECT count(*) FROM orders") - 1);
  const nlohmann::json& c = Table(doc, "s:by_customer");
  EXPECT_EQ(c["exists"], false);
  EXPECT_EQ(c["rows_missing"], Number("SELECT count(*) FROM customer"));
  EXPECT_EQ(c["target_rows"], 0);
  // Only the table that is there: equal.
  auto [one, odoc] = VerifyJson("--table s:orders");
  EXPECT_EQ(one, 0) << odoc.dump();
  EXPECT_EQ(odoc["tables"].size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Engines, VerifyTest, ::testing::Values(Engine::kPostgres, Engine::kMySql),
                         [](const ::testing::TestParamInfo<Engine>& i) {
                           return i.param == Engine::kPostgres ? "Postgres" : "MySql";
                         });

}  // namespace
}  // namespace widen::testing
