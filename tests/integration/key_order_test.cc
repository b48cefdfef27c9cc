// How a table's cells reach the store in row key order (transform/plan.h,
// KeyOrder), on both engines: `widen plan` says which way each key design
// takes and why (the rules of docs/plan.md, "key order"), and a design that
// the database orders (PostgreSQL: ORDER BY the key's columns, nested scans
// through their parent's table) writes, without any external sort, the
// very store the external sort writes from MariaDB, cell by cell — NULL and
// descending key parts, reverse timestamps, two nest levels, orphans, a
// nest `where` naming a column its parent table has too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

// The same rows on both engines. ord 6's customer is NULL (a NULL key part
// with a marker); line (9, 1) has no order (an orphan); ord 7 is left out by
// the driving `where`, so its line is an orphan too; lines with status
// 'gone' are left out by the nest's `where` (status is a column of ord as
// well).
constexpr char kSchema[] = R"(
CREATE TABLE cust (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
CREATE TABLE ord (id INT PRIMARY KEY, cust_id INT NULL, at TIMESTAMP NOT NULL,
                  status VARCHAR(10) NOT NULL, code VARCHAR(20) NOT NULL, grade CHAR(4) NOT NULL,
                  n INT NOT NULL, note VARCHAR(300) NULL);
CREATE TABLE line (ord_id INT NOT NULL, no INT NOT NULL, status VARCHAR(10) NOT NULL,
                   qty INT NOT NULL, PRIMARY KEY (ord_id, no));
CREATE TABLE part (ord_id INT NOT NULL, no INT NOT NULL, k INT NOT NULL, v VARCHAR(10) NULL,
                   PRIMARY KEY (ord_id, no, k));
INSERT INTO cust VALUES (1, 'Ana'), (2, 'Bo'), (3, 'Cy');
INSERT INTO ord VALUES
  (1, 2, '2024-01-02 10:00:00', 'new', 'b-7', 'A', 10, NULL),
  (2, 1, '2024-01-05 09:30:00', 'paid', 'a-10', 'B', 9, NULL),
  (3, 2, '2024-01-01 08:00:00', 'paid', 'a-9', 'A', 8, NULL),
  (4, 3, '2024-01-03 12:00:00', 'new', 'c-1', 'C', 7, NULL),
  (5, 1, '2024-01-04 11:00:00', 'sent', 'a-1', 'A', 6, NULL),
  (6, NULL, '2024-01-06 07:00:00', 'new', 'z-0', 'D', 5, NULL),
  (7, 3, '2024-01-07 07:00:00', 'void', 'q-3', 'E', 4, NULL),
  (8, 2, '2024-01-02 10:00:00', 'sent', 'b-70', 'A', 3, NULL);
INSERT INTO line VALUES (1, 1, 'ok', 3), (1, 2, 'gone', 1), (2, 1, 'ok', 5), (3, 1, 'ok', 2),
  (3, 2, 'ok', 7), (4, 1, 'ok', 1), (5, 1, 'gone', 4), (6, 1, 'ok', 9), (7, 1, 'ok', 2),
  (8, 1, 'ok', 1), (8, 2, 'ok', 2), (9, 1, 'ok', 6);
INSERT INTO part VALUES (1, 1, 1, 'x'), (1, 1, 2, NULL), (3, 2, 1, 'y'), (6, 1, 1, 'z'),
  (8, 2, 5, 'w'), (9, 1, 1, 'orphan');
)";

// More orders, so that the cells take several of a sink's batches (4 MiB):
// keys out of order would then be sorted through temporary runs. {series}
// is the engine's row source of ids 100..20099 as `s.i`.
constexpr char kBulk[] = R"(
INSERT INTO ord SELECT s.i, s.i * 7919 % 500, TIMESTAMP '2024-01-01 00:00:00' + {minutes},
  'paid', CONCAT(CHR(97 + s.i % 26), '-', s.i), 'A', s.i % 97, REPEAT('x', 250)
  FROM {series};
INSERT INTO line SELECT s.i, 1, 'ok', s.i % 9 FROM {series};
)";

// Target tables, one per design, all over ord (customer joined, lines and
// their parts nested).
constexpr char kTables[] = R"(
  - name: k:by_id
    from: ord
    where: "status <> 'void'"
    families: [d, l]
    key: {parts: [{column: id, width: 6}]}
    {body}
  - name: k:by_id_sorted
    from: ord
    where: "status <> 'void'"
    families: [d, l]
    key_order: sort
    key: {parts: [{column: id, width: 6}]}
    {body}
  - name: k:by_customer
    from: ord
    where: "status <> 'void'"
    families: [d, l]
    key_order: database
    key:
      form: binary
      parts:
        - {column: cust_id, on_null: marker}
        - {column: at, reverse: true}
        - {column: n, desc: true}
        - id
    {body}
  - name: k:by_code
    from: ord
    where: "status <> 'void'"
    families: [d, l]
    key_order: database
    key: {parts: [{column: cust_id, width: 6, on_null: reject}, code]}
    {body}
  - name: k:by_code_auto
    from: ord
    where: "status <> 'void'"
    families: [d, l]
    key: {parts: [{column: cust_id, width: 6, on_null: reject}, code]}
    {body}
  - name: k:salted
    from: ord
    where: "status <> 'void'"
    families: [d, l]
    key: {parts: [{column: id, width: 4}], salt: {buckets: 4}}
    {body}
  - name: k:hashed
    from: ord
    where: "status <> 'void'"
    families: [d, l]
    key: {parts: [{column: id, width: 4}], hash_prefix: {bytes: 2}}
    {body}
  - name: k:code_first
    from: ord
    where: "status <> 'void'"
    families: [d, l]
    key: {parts: [code, {column: id, width: 4}]}
    {body}
  - name: k:unpadded
    from: ord
    families: [d]
    key: {parts: [n, id]}
    columns: [status]
  - name: k:grade
    from: ord
    families: [d]
    key: {parts: [{column: id, width: 6}, grade]}
    columns: [status]
  - name: k:flat_code
    from: ord
    families: [d]
    key:
      form: binary
      parts: [code]
    columns: [status, note]
  - name: k:flat_sorted
    from: ord
    families: [d]
    key_order: sort
    key:
      form: binary
      parts: [code]
    columns: [status, note]
)";

constexpr char kBody[] = R"(joins: [{table: cust, on: {cust_id: id}}]
    columns: [status, code, note, {column: cust.name, to: "d:cust"}]
    nest:
      - table: line
        on: {id: ord_id}
        family: l
        prefix: l
        where: "status = 'ok'"
        id: [{column: no, width: 2}]
        columns: [qty]
        nest:
          - table: part
            on: {ord_id: ord_id, no: no}
            prefix: p
            id: [{column: k, width: 2}]
            columns: [v])";

class KeyOrderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
  }

  // The mapping for `source`, written into the test's directory.
  std::string WriteMapping(const std::string& source) {
    std::string tables = kTables;
    for (size_t at; (at = tables.find("{body}")) != std::string::npos;) {
      tables.replace(at, 6, kBody);
    }
    const std::string path = dir_ + "/m.yaml";
    std::ofstream(path) << "source: " << source
                        << "\ntimestamp_ms: 1700000000000\ntables:" << tables;
    return path;
  }

  // `bulk`: the orders of kBulk too.
  static std::string Bulk(const std::string& minutes, const std::string& series) {
    std::string s = kBulk;
    for (size_t at; (at = s.find("{minutes}")) != std::string::npos;) s.replace(at, 9, minutes);
    for (size_t at; (at = s.find("{series}")) != std::string::npos;) s.replace(at, 8, series);
    return s;
  }

  std::string PgDatabase(bool bulk = false) {
    const std::string db = FreshPgDatabase(PgUrl(), "widen_it_keyorder");
    PgQuery(db, kSchema);
    if (bulk) {
      PgQuery(db,
              Bulk("INTERVAL '1 minute' * (s.i % 1000)", "generate_series(100, 20099) AS s(i)"));
    }
    return db;
  }

  std::string MySqlDatabase(bool bulk = false) {
    const std::string db = FreshMySqlDatabase(MySqlUrl(), "widen_it_keyorder");
    std::vector<std::string> statements;
    // MariaDB's TIMESTAMP is an instant; PostgreSQL's is its DATETIME.
    std::string s = kSchema, one;
    for (size_t at; (at = s.find("TIMESTAMP")) != std::string::npos;) s.replace(at, 9, "DATETIME");
    if (bulk)
      s += Bulk("INTERVAL (s.i % 1000) MINUTE", "(SELECT seq AS i FROM seq_100_to_20099) AS s");
    for (char c : s) {
      one += c;
      if (c == ';') {
        statements.push_back(one);
        one.clear();
      }
    }
    MySqlQuery(db, statements);
    return db;
  }

  // table -> (how, why) of `widen plan --format json`.
  std::map<std::string, std::pair<std::string, std::string>> PlannedOrder(const std::string& m) {
    CommandResult r =
        RunCommand(WidenBinary() + " plan --format json --limit 0 --sample 10 -m " + m);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::map<std::string, std::pair<std::string, std::string>> out;
    auto j = nlohmann::json::parse(r.output, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      ADD_FAILURE() << r.output;
      return out;
    }
    for (const auto& t : j["tables"]) {
      out[t["name"]] = {t["key_order"]["how"], t["key_order"]["why"]};
    }
    return out;
  }

  // Rows that cannot be encoded (a NULL key part rejected) go to a file.
  CommandResult Migrate(const std::string& m, const std::string& table, const std::string& store) {
    return RunCommand(fmt::format("{} migrate -m {} --table {} --target leveldb:{} --rejects {}",
                                  WidenBinary(), m, table, store, store + ".rejects"));
  }

  std::string dir_;
};

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_F(KeyOrderTest, PlanSaysHowEachDesignReachesTheStore) {
  WIDEN_REQUIRE_PG(pg);
  WIDEN_REQUIRE_MYSQL(my);
  auto o = PlannedOrder(WriteMapping(PgDatabase()));
  // The nest link (ord.id) is the order the scans read in.
  EXPECT_EQ(o["k:by_id"].first, "read") << o["k:by_id"].second;
  EXPECT_TRUE(Has(o["k:by_id"].second, "ord.id")) << o["k:by_id"].second;
  // Asked to sort what is read in key order already: nothing to sort, said so.
  EXPECT_EQ(o["k:by_id_sorted"].first, "read") << o["k:by_id_sorted"].second;
  EXPECT_TRUE(Has(o["k:by_id_sorted"].second, "key_order: sort has nothing to sort"))
      << o["k:by_id_sorted"].second;
  // Binary parts, a NULL marker, desc and reverse parts: ORDER BY them.
  EXPECT_EQ(o["k:by_customer"].first, "database") << o["k:by_customer"].second;
  EXPECT_TRUE(Has(o["k:by_customer"].second, "ord.cust_id, ord.at DESC, ord.n DESC, ord.id"))
      << o["k:by_customer"].second;
  // Text form: a zero-padded integer, then text as the last part.
  EXPECT_EQ(o["k:by_code"].first, "database") << o["k:by_code"].second;
  // Without key_order: database, a table with nests is sorted by widen.
  EXPECT_EQ(o["k:by_code_auto"].first, "sort") << o["k:by_code_auto"].second;
  EXPECT_TRUE(Has(o["k:by_code_auto"].second, "join to its parent's table"))
      << o["k:by_code_auto"].second;
  EXPECT_TRUE(Has(o["k:by_code_auto"].second, "ord.cust_id, ord.code"))
      << o["k:by_code_auto"].second;
  EXPECT_EQ(o["k:salted"].first, "sort");
  EXPECT_TRUE(Has(o["k:salted"].second, "salt byte (4 buckets)")) << o["k:salted"].second;
  EXPECT_EQ(o["k:hashed"].first, "sort");
  EXPECT_TRUE(Has(o["k:hashed"].second, "2-byte hash prefix")) << o["k:hashed"].second;
  // Text before the separator: "a-1|" sorts after "a-10|" as bytes.
  EXPECT_EQ(o["k:code_first"].first, "sort");
  EXPECT_TRUE(Has(o["k:code_first"].second, "key part 'code'")) << o["k:code_first"].second;
  // An unpadded integer as text: "10" sorts before "9".
  EXPECT_EQ(o["k:unpadded"].first, "sort");
  EXPECT_TRUE(Has(o["k:unpadded"].second, "key part 'n'")) << o["k:unpadded"].second;
  // char(n): the database compares it without its trailing blanks.
  EXPECT_EQ(o["k:grade"].first, "sort");
  EXPECT_TRUE(Has(o["k:grade"].second, "does not order by its bytes")) << o["k:grade"].second;
  // A table without nests has no order of its own on PostgreSQL.
  EXPECT_EQ(o["k:flat_code"].first, "database") << o["k:flat_code"].second;
  // ... unless the mapping asks widen to sort.
  EXPECT_EQ(o["k:flat_sorted"].first, "sort") << o["k:flat_sorted"].second;
  EXPECT_TRUE(Has(o["k:flat_sorted"].second, "key_order: sort")) << o["k:flat_sorted"].second;

  // MariaDB pages by the primary key: what is not that order is sorted.
  o = PlannedOrder(WriteMapping(MySqlDatabase()));
  EXPECT_EQ(o["k:by_id"].first, "read") << o["k:by_id"].second;
  for (const char* t : {"k:by_customer", "k:by_code", "k:by_code_auto", "k:flat_code"}) {
    EXPECT_EQ(o[t].first, "sort") << t;
    EXPECT_TRUE(Has(o[t].second, "in pages")) << t << ": " << o[t].second;
  }
  // The two that ask for the database's order are told it cannot apply.
  EXPECT_TRUE(Has(o["k:by_customer"].second, "key_order: database cannot apply"))
      << o["k:by_customer"].second;
  EXPECT_FALSE(Has(o["k:by_code_auto"].second, "cannot apply")) << o["k:by_code_auto"].second;
  EXPECT_EQ(o["k:unpadded"].first, "sort");
}

// Each design the database orders gives, from PostgreSQL, no external sort
// and the very cells the external sort gives from MariaDB; verify then
// finds the PostgreSQL store equal to its source, reading it in key order.
TEST_F(KeyOrderTest, DatabaseOrderWritesWhatTheExternalSortWrites) {
  WIDEN_REQUIRE_PG(pg);
  WIDEN_REQUIRE_MYSQL(my);
  const std::string pg_map = WriteMapping(PgDatabase(/*bulk=*/true));
  const std::string my_dir = dir_ + "/my";
  std::filesystem::create_directories(my_dir);
  std::string my_map;
  {
    const std::string keep = dir_;
    dir_ = my_dir;
    my_map = WriteMapping(MySqlDatabase(/*bulk=*/true));
    dir_ = keep;
  }
  for (const char* table : {"k:by_customer", "k:by_code", "k:flat_code", "k:by_id"}) {
    SCOPED_TRACE(table);
    const std::string name(table + 2);
    const std::string pg_store = dir_ + "/pg." + name, my_store = dir_ + "/my." + name;
    CommandResult a = Migrate(pg_map, table, pg_store);
    ASSERT_EQ(a.exit_code, 0) << a.output;
    EXPECT_FALSE(Has(a.output, "temporary run")) << a.output;
    CommandResult b = Migrate(my_map, table, my_store);
    ASSERT_EQ(b.exit_code, 0) << b.output;
    if (std::string(table) != "k:by_id") {
      EXPECT_TRUE(Has(b.output, "temporary run")) << b.output;  // MariaDB: KeyOrder sort
    }
    const std::vector<CellRecord> x = ReadCells("leveldb:" + pg_store, table, 10);
    const std::vector<CellRecord> y = ReadCells("leveldb:" + my_store, table, 10);
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(x[i].row, y[i].row) << i;
      EXPECT_EQ(x[i].column, y[i].column) << i;
      EXPECT_EQ(x[i].value, y[i].value) << i;
      EXPECT_EQ(x[i].timestamp_ms, y[i].timestamp_ms) << i;
    }
    // The rows the source has: every order but the void one (k:flat_code
    // reads every one; k:by_code rejects the one without a customer).
    std::set<std::string> rows;
    for (const auto& c : x) rows.insert(c.row);
    const std::string t(table);
    EXPECT_EQ(rows.size(), 20000u + (t == "k:flat_code" ? 8u : t == "k:by_code" ? 6u : 7u));
    CommandResult v = RunCommand(fmt::format("{} verify -m {} --table {} --target leveldb:{}",
                                             WidenBinary(), pg_map, table, pg_store));
    EXPECT_EQ(v.exit_code, 0) << v.output;
  }
  // widen's sort (key_order auto) writes what the database's order writes.
  {
    const std::string store = dir_ + "/pg.by_code_auto";
    CommandResult a = Migrate(pg_map, "k:by_code_auto", store);
    ASSERT_EQ(a.exit_code, 0) << a.output;
    EXPECT_TRUE(Has(a.output, "temporary run")) << a.output;
    const std::vector<CellRecord> x = ReadCells("leveldb:" + store, "k:by_code_auto", 10);
    const std::vector<CellRecord> y = ReadCells("leveldb:" + dir_ + "/pg.by_code", "k:by_code", 10);
    ASSERT_EQ(x.size(), y.size());
    ASSERT_FALSE(x.empty());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(x[i].row, y[i].row) << i;
      EXPECT_EQ(x[i].column, y[i].column) << i;
      EXPECT_EQ(x[i].value, y[i].value) << i;
      EXPECT_EQ(x[i].timestamp_ms, y[i].timestamp_ms) << i;
    }
  }
  // The nested cells: line (1, 2) and (5, 1) are 'gone'; the parts of the
  // lines written; the orphans nowhere.
  const std::vector<CellRecord> c = ReadCells("leveldb:" + dir_ + "/pg.by_id", "k:by_id", 10);
  std::vector<std::string> nested;
  for (const auto& cell : c) {
    if (cell.column.rfind("l:", 0) == 0 && cell.row < "000100") {
      nested.push_back(cell.row + " " + cell.column);
    }
  }
  EXPECT_EQ(nested,
            (std::vector<std::string>{
                "000001 l:l01", "000001 l:l01p01", "000001 l:l01p02", "000002 l:l01",
                "000003 l:l01", "000003 l:l02", "000003 l:l02p01", "000004 l:l01", "000006 l:l01",
                "000006 l:l01p01", "000008 l:l01", "000008 l:l02", "000008 l:l02p05"}));
}

}  // namespace
}  // namespace widen::testing
