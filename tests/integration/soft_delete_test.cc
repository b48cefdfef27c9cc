// Soft deletes (docs/mapping.md, "Soft deletes") on both engines, through
// the widen binary: a row whose soft-delete column holds the entry's value
// is absent from every read — a driving row gives no target row, a nested
// child (first and second level) no nested cell, a joined row (a table's
// join and a nest's) is not found, so the attributes it gave are missing —
// and a row whose column is NULL is kept. Soft deletes on boolean, integer
// and text columns. migrate (in pages and in parallel ranges), plan and
// verify agree, a sync after more rows are marked equals a fresh migrate,
// and a changed soft-delete entry is a changed design. Expected cells come
// from SQL queries over the source.
#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

using Json = nlohmann::ordered_json;

enum class Engine { kPostgres, kMySql };

std::vector<std::string> Schema(Engine e) {
  const bool pg = e == Engine::kPostgres;
  const std::string text = pg ? "text" : "varchar(40)";
  const std::string flag = "boolean";  // MySQL: TINYINT(1)
  return {
      fmt::format("CREATE TABLE customer (id int PRIMARY KEY, name {} NOT NULL, gone {}, ver "
                  "bigint NOT NULL DEFAULT 0)",
                  text, flag),
      fmt::format("CREATE TABLE orders (id int PRIMARY KEY, customer_id int, status {}, removed "
                  "smallint, ver bigint NOT NULL DEFAULT 0)",
                  text),
      fmt::format("CREATE TABLE product (id int PRIMARY KEY, name {} NOT NULL, retired "
                  "varchar(10), ver bigint NOT NULL DEFAULT 0)",
                  text),
      "CREATE TABLE line (order_id int NOT NULL, no int NOT NULL, product_id int, qty int, state "
      "varchar(10), ver bigint NOT NULL DEFAULT 0, PRIMARY KEY (order_id, no))",
      fmt::format("CREATE TABLE note (order_id int NOT NULL, line_no int NOT NULL, n int NOT "
                  "NULL, body {}, hidden {}, ver bigint NOT NULL DEFAULT 0, PRIMARY KEY "
                  "(order_id, line_no, n))",
                  text, flag),
      // Ann kept, Bob soft-deleted (true), Cyd kept (NULL).
      "INSERT INTO customer (id, name, gone) VALUES (1, 'Ann', false), (2, 'Bob', true), (3, "
      "'Cyd', NULL)",
      // removed = 1 marks a deleted order; 0, 2 and NULL do not.
      "INSERT INTO orders (id, customer_id, status, removed) VALUES (1, 1, 'new', NULL), (2, 2, "
      "'paid', 0), (3, 3, 'sent', 1), (4, 1, 'held', 2), (5, NULL, 'lost', 1), (6, 3, 'open', "
      "NULL)",
      // retired = 'yes' marks a deleted product.
      "INSERT INTO product (id, name, retired) VALUES (1, 'pen', NULL), (2, 'ink', 'yes'), (3, "
      "'cap', 'no')",
      // state = 'void' marks a deleted line; 'VOID' is one where the
      // column's collation says so (MySQL's case-insensitive default).
      "INSERT INTO line (order_id, no, product_id, qty, state) VALUES (1, 1, 1, 2, NULL), (1, 2, "
      "2, 1, 'ok'), (1, 3, 3, 5, 'void'), (2, 1, 3, 1, 'void'), (2, 2, 1, 3, 'VOID'), (2, 3, 2, "
      "4, NULL), (3, 1, 1, 1, NULL), (6, 1, 3, 7, 'ok')",
      "INSERT INTO note (order_id, line_no, n, body, hidden) VALUES (1, 1, 1, 'a', false), (1, "
      "1, 2, 'b', true), (1, 2, 1, 'c', NULL), (1, 3, 1, 'd', false), (3, 1, 1, 'e', false), (2, "
      "3, 1, 'f', false), (6, 1, 1, 'g', true)",
  };
}

constexpr const char* kTables = R"YAML(tables:
  - name: s:orders
    from: orders
    families: [d]
    key: {parts: [{column: id, width: 4}]}
    joins: [{table: customer, on: {customer_id: id}}]
    columns:
      - {column: status, to: "d:status"}
      - {column: customer.name, to: "d:customer"}
    nest:
      - table: line
        on: {id: order_id}
        family: d
        prefix: l
        id: [{column: no, width: 2}]
        joins: [{table: product, on: {product_id: id}}]
        columns: [qty, {column: product.name, as: product}]
        nest:
          - table: note
            on: {order_id: order_id, no: line_no}
            prefix: n
            id: [{column: n, width: 2}]
            layout: value
            columns: [body]
sync:
)YAML";

// The soft-delete entries: boolean, integer and text columns.
std::string SyncSection(const std::string& removed_value = "1") {
  return "  - {table: orders, mode: watermark, watermark: ver, deletes: {soft: {column: removed, "
         "value: " +
         removed_value +
         "}}}\n"
         "  - {table: customer, mode: watermark, watermark: ver, deletes: {soft: {column: gone, "
         "value: true}}}\n"
         "  - {table: product, mode: watermark, watermark: ver, deletes: {soft: {column: retired, "
         "value: 'yes'}}}\n"
         "  - {table: line, mode: watermark, watermark: ver, deletes: {soft: {column: state, "
         "value: void}}}\n"
         "  - {table: note, mode: watermark, watermark: ver, deletes: {soft: {column: hidden, "
         "value: true}}}\n";
}

std::string Pad(const std::string& id, size_t width) {
  return std::string(width - std::min(width, id.size()), '0') + id;
}

class SoftDeleteTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    if (pg()) {
      const std::string url = PgUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_PG_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_PG_URL not set (run through scripts/with-servers.sh)";
      }
      db_ = FreshPgDatabase(url, "widen_it_soft");
    } else {
      const std::string url = MySqlUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_MYSQL_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_MYSQL_URL not set (run through scripts/with-servers.sh)";
      }
      db_ = FreshMySqlDatabase(url, "widen_it_soft");
    }
    Sql(Schema(GetParam()));
    dir_ = MakeTempDir();
    WriteMapping(SyncSection());
  }

  bool pg() const { return GetParam() == Engine::kPostgres; }

  std::vector<std::vector<std::string>> Sql(const std::vector<std::string>& statements) {
    if (!pg()) return MySqlQuery(db_, statements);
    std::vector<std::vector<std::string>> rows;
    for (const auto& s : statements) rows = PgQuery(db_, s);
    return rows;
  }

  void WriteMapping(const std::string& sync) {
    std::ofstream(dir_ + "/m.yaml") << "source: ${WIDEN_SOURCE_URL}\n" << kTables << sync;
  }

  // Runs `widen ARGS -m m.yaml` in dir_.
  CommandResult Widen(const std::string& args) {
    return RunCommand(fmt::format("cd {} && WIDEN_SOURCE_URL={} {} {} -m m.yaml", ShellQuote(dir_),
                                  ShellQuote(db_), WidenBinary(), args));
  }

  std::string Target(const std::string& name) { return "leveldb:" + dir_ + "/" + name; }

  // The cells a migrate must write, from SQL over the source: each
  // soft-delete rule written as its own filter (`C IS NULL OR C <> V`, the
  // database's `=`), a soft-deleted joined row as a join that finds nothing.
  TableCells Expected() {
    TableCells want;
    const std::string order_kept = "(o.removed IS NULL OR o.removed <> 1)";
    for (const auto& r : Sql({"SELECT o.id, o.status FROM orders o WHERE " + order_kept})) {
      want[Pad(r[0], 4)]["d:status"] = r[1];
    }
    for (const auto& r :
         Sql({"SELECT o.id, c.name FROM orders o JOIN customer c ON c.id = o.customer_id WHERE " +
              order_kept + " AND (c.gone IS NULL OR c.gone = false)"})) {
      want[Pad(r[0], 4)]["d:customer"] = r[1];
    }
    const std::string line_kept = "(l.state IS NULL OR l.state <> 'void')";
    for (const auto& r : Sql({"SELECT l.order_id, l.no, l.qty, CASE WHEN p.retired = 'yes' THEN "
                              "NULL ELSE p.name END FROM line l JOIN orders o ON o.id = "
                              "l.order_id LEFT JOIN product p ON p.id = l.product_id WHERE " +
                              order_kept + " AND " + line_kept})) {
      Json v = Json::object();
      if (r[2] != "<NULL>") v["qty"] = std::stoll(r[2]);
      if (r[3] != "<NULL>") v["product"] = r[3];
      want[Pad(r[0], 4)]["d:l" + Pad(r[1], 2)] = v.dump();
    }
    for (const auto& r :
         Sql({"SELECT n.order_id, n.line_no, n.n, n.body FROM note n JOIN line l "
              "ON l.order_id = n.order_id AND l.no = n.line_no JOIN orders o ON "
              "o.id = n.order_id WHERE " +
              order_kept + " AND " + line_kept + " AND (n.hidden IS NULL OR n.hidden = false)"})) {
      want[Pad(r[0], 4)]["d:l" + Pad(r[1], 2) + "n" + Pad(r[2], 2)] = r[3];
    }
    return want;
  }

  std::string db_;
  std::string dir_;
};

// migrate writes exactly the expected cells: one job reading a row per
// page, and parallel jobs by ranges of the key; verify then finds the store
// equal; plan shows the same rows and says which rows are left out.
TEST_P(SoftDeleteTest, MigrateVerifyAndPlanLeaveSoftDeletedRowsOut) {
  const TableCells want = Expected();
  // The fixture has rows of every kind of soft delete, and rows that only
  // look like one (0, 2, NULL, 'no', 'ok', false).
  ASSERT_EQ(want.count("0003") + want.count("0005"), 0u);  // removed = 1
  ASSERT_EQ(want.count("0002"), 1u);                       // removed = 0
  ASSERT_EQ(want.at("0002").count("d:customer"), 0u);      // Bob is gone
  ASSERT_EQ(want.count("0006"), 1u);                       // removed NULL
  ASSERT_EQ(want.at("0006").at("d:customer"), "Cyd");      // gone NULL: kept
  ASSERT_EQ(want.at("0004").at("d:customer"), "Ann");      // removed = 2
  ASSERT_EQ(want.at("0001").count("d:l03"), 0u);           // state = 'void'
  ASSERT_EQ(want.at("0001").at("d:l02"), "{\"qty\":1}");   // ink is retired
  ASSERT_EQ(want.at("0001").count("d:l01n02"), 0u);        // a hidden note
  ASSERT_EQ(want.at("0001").at("d:l02n01"), "c");          // hidden NULL: kept
  ASSERT_EQ(want.at("0001").count("d:l03n01"), 0u);        // its line is void
  for (const char* how : {"--fetch-rows 1", "--jobs 3 --fetch-rows 2"}) {
    SCOPED_TRACE(how);
    const std::string target = Target(how[2] == 'f' ? "paged" : "jobs");
    CommandResult run = Widen(fmt::format("migrate -q {} --target {}", how, target));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(ReadTable(target, "s:orders"), want);
    CommandResult verify = Widen("verify -q --target " + target);
    EXPECT_EQ(verify.exit_code, 0) << verify.output;
  }

  CommandResult plan = Widen("plan --full --limit 100 --format json");
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  const Json doc = Json::parse(plan.output);
  const Json& t = doc["tables"][0];
  TableCells shown;
  for (const Json& row : t["rows"]) {
    for (const Json& c : row["cells"]) {
      shown[row["key"].get<std::string>()][c["column"].get<std::string>()] =
          c["value"].get<std::string>();
    }
  }
  EXPECT_EQ(shown, want);
  EXPECT_EQ(t["stats"]["rows"].get<uint64_t>(), want.size());
  // Each source table with a soft delete says that its rows are left out.
  for (const Json& s : t["sync"]["sources"]) {
    EXPECT_NE(s["why"].get<std::string>().find("(every command leaves such rows out)"),
              std::string::npos)
        << s.dump();
  }
  CommandResult text = Widen("plan --limit 0");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  for (const std::string& want_text :
       {std::string("soft delete where removed = 1 (every command leaves such rows out)"),
        std::string("soft delete where gone = ") + (pg() ? "true" : "1") +
            " (every command leaves such rows out)",
        std::string("soft delete where state = 'void' (every command leaves such rows out)")}) {
    EXPECT_NE(text.output.find(want_text), std::string::npos) << want_text << "\n" << text.output;
  }
  CommandResult lint = Widen("lint");
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
}

// Rows marked deleted after a migrate: a sync removes what they gave (a
// driving row, a nested cell, a joined attribute in every row that copied
// it), and the store equals a fresh migrate and what SQL says; a row
// unmarked comes back.
TEST_P(SoftDeleteTest, SyncAfterMoreMarksEqualsAFreshMigrate) {
  const std::string synced = Target("synced");
  CommandResult run = Widen("migrate -q --timestamp-ms 1000 --target " + synced);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // Each write raises its row's watermark.
  Sql({"UPDATE orders SET removed = 1, ver = ver + 1 WHERE id = 4",
       "UPDATE orders SET removed = NULL, ver = ver + 1 WHERE id = 5",
       "UPDATE customer SET gone = true, ver = ver + 1 WHERE id = 3",
       "UPDATE line SET state = 'void', ver = ver + 1 WHERE order_id = 1 AND no = 1",
       "UPDATE product SET retired = 'yes', ver = ver + 1 WHERE id = 3",
       "UPDATE note SET hidden = true, ver = ver + 1 WHERE order_id = 1 AND line_no = 2"});
  const TableCells want = Expected();
  ASSERT_EQ(want.count("0004"), 0u);
  ASSERT_EQ(want.count("0005"), 1u);
  CommandResult sync = Widen("sync -q --target " + synced);
  ASSERT_EQ(sync.exit_code, 0) << sync.output;
  EXPECT_EQ(ReadTable(synced, "s:orders"), want);

  const std::string fresh = Target("fresh");
  run = Widen("migrate -q --timestamp-ms 1000 --target " + fresh);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto a = ReadCells(synced, "s:orders", 10);
  const auto b = ReadCells(fresh, "s:orders", 10);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].row, b[i].row);
    EXPECT_EQ(a[i].column, b[i].column);
    EXPECT_EQ(a[i].timestamp_ms, b[i].timestamp_ms);
    EXPECT_EQ(a[i].value, b[i].value);
  }
  CommandResult verify = Widen("verify -q --target " + synced);
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
}

// The soft-delete rule decides the cells: another value is another design,
// which sync refuses (exit 5) until told to accept it, and then applies.
TEST_P(SoftDeleteTest, AChangedRuleIsAChangedDesign) {
  const std::string target = Target("t");
  CommandResult run = Widen("migrate -q --target " + target);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  WriteMapping(SyncSection("2"));
  CommandResult sync = Widen("sync -q --target " + target);
  EXPECT_EQ(sync.exit_code, 5) << sync.output;
  EXPECT_NE(sync.output.find("another design"), std::string::npos) << sync.output;
  sync = Widen("sync -q --accept-mapping-change --target " + target);
  ASSERT_EQ(sync.exit_code, 0) << sync.output;
  const TableCells got = ReadTable(target, "s:orders");
  // Now removed = 2 marks a deletion: order 4 is gone, orders 3 and 5 are back.
  const auto ids = Sql({"SELECT id FROM orders WHERE removed IS NULL OR removed <> 2 ORDER BY id"});
  std::vector<std::string> want, have;
  for (const auto& r : ids) want.push_back(Pad(r[0], 4));
  for (const auto& [row, cells] : got) have.push_back(row);
  EXPECT_EQ(have, want);
}

INSTANTIATE_TEST_SUITE_P(Engines, SoftDeleteTest,
                         ::testing::Values(Engine::kPostgres, Engine::kMySql),
                         [](const auto& info) {
                           return info.param == Engine::kPostgres ? "Postgres" : "MySql";
                         });

}  // namespace
}  // namespace widen::testing
