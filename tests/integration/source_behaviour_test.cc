// How the source readers behave beyond single values, on real servers:
// keyset paging and several streams at once on one MySQL connection, the text
// order matching CompareValues, the one-snapshot rule, introspection, hostile
// identifiers on both engines, and connection errors with their Status codes.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "extract/source_stats.h"
#include "tests/integration/source_scan.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value == nullptr) {
      unsetenv(name);
    } else {
      setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// url with user (and password) replaced.
std::string WithUser(const std::string& url, const std::string& userinfo) {
  size_t scheme = url.find("://") + 3;
  size_t at = url.find('@', scheme);
  return url.substr(0, scheme) + userinfo + url.substr(at);
}

class MySqlSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WIDEN_REQUIRE_MYSQL(url);
    server_ = url;
    db_ = FreshMySqlDatabase(url, "widen_it_mysrc");
  }
  std::string server_, db_;
};

TEST_F(MySqlSourceTest, PagesThroughAParentAndTwoChildStreamsOnOneConnection) {
  // 1000 parents with 0..3 children each in two child tables; pages of 7 rows.
  MySqlQuery(db_,
             std::vector<std::string>{
                 "CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(20))",
                 "CREATE TABLE c1 (id INT PRIMARY KEY, pid INT, v INT)",
                 "CREATE TABLE c2 (code VARCHAR(10), seq INT, pid INT, PRIMARY KEY (code, seq))",
                 "INSERT INTO p SELECT seq, CONCAT('p', seq) FROM seq_1_to_1000",
                 "INSERT INTO c1 SELECT seq, seq % 1000 + 1, seq FROM seq_1_to_1500",
                 "INSERT INTO c2 SELECT CHAR(65 + seq % 3), seq, (seq * 7) % 1000 + 1 FROM "
                 "seq_1_to_2000",
                 "SELECT 1"});
  auto src = OpenSource(db_, /*fetch_rows=*/7);
  ASSERT_NE(src, nullptr);
  ScanSpec ps = Spec("p", {{"p", "id"}, {"p", "name"}}, {{"p", "id"}}, {{"p", "id"}});
  ScanSpec c1 =
      Spec("c1", {{"c1", "pid"}, {"c1", "v"}}, {{"c1", "pid"}}, {{"c1", "id"}}, {{"c1", "pid"}});
  ScanSpec c2 = Spec("c2", {{"c2", "pid"}}, {{"c2", "pid"}}, {{"c2", "code", true}, {"c2", "seq"}},
                     {{"c2", "pid"}});
  auto parents = src->Scan(ps);
  ASSERT_TRUE(parents.ok()) << parents.status().ToString();
  auto k1 = src->Scan(c1);
  ASSERT_TRUE(k1.ok()) << k1.status().ToString();
  auto k2 = src->Scan(c2);
  ASSERT_TRUE(k2.ok()) << k2.status().ToString();
  int64_t n = 0, n1 = 0, n2 = 0;
  for (; (*parents)->Valid(); (*parents)->Next()) {
    const int64_t id = (*parents)->row()[0].as_int();
    EXPECT_EQ(id, ++n);
    for (; (*k1)->Valid() && (*k1)->row()[0].as_int() == id; (*k1)->Next()) ++n1;
    for (; (*k2)->Valid() && (*k2)->row()[0].as_int() == id; (*k2)->Next()) ++n2;
  }
  EXPECT_TRUE((*parents)->status().ok()) << (*parents)->status().ToString();
  EXPECT_TRUE((*k1)->status().ok()) << (*k1)->status().ToString();
  EXPECT_TRUE((*k2)->status().ok()) << (*k2)->status().ToString();
  EXPECT_FALSE((*k1)->Valid());
  EXPECT_FALSE((*k2)->Valid());
  EXPECT_EQ(n, 1000);
  EXPECT_EQ(n1, 1500);
  EXPECT_EQ(n2, 2000);
}

// The next page is queried while the current one is read: a page whose query
// fails reports its error after every row before it, and in its turn.
TEST_F(MySqlSourceTest, AFailingLaterPageReportsItsErrorAfterTheRowsBeforeIt) {
  // Row 20's `where` reads a subquery that returns two rows: MySQL error 1242
  // when the server reaches that row, i.e. in the third page of 7 (14..20).
  MySqlQuery(db_, std::vector<std::string>{"CREATE TABLE t (id INT PRIMARY KEY, v INT)",
                                           "CREATE TABLE dup (k INT, x INT)",
                                           "INSERT INTO t SELECT seq, seq * 10 FROM seq_1_to_100",
                                           "INSERT INTO dup VALUES (20, 1), (20, 2), (30, 1)",
                                           "SELECT 1"});
  auto src = OpenSource(db_, /*fetch_rows=*/7);
  ASSERT_NE(src, nullptr);
  ScanSpec spec = Spec("t", {{"t", "id"}, {"t", "v"}}, {{"t", "id"}}, {{"t", "id"}});
  spec.where = "COALESCE((SELECT x FROM dup WHERE dup.k = t.id), 1) > 0";
  {
    auto s = src->Scan(spec);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    std::vector<int64_t> ids;
    for (; (*s)->Valid(); (*s)->Next()) ids.push_back((*s)->row()[0].as_int());
    std::vector<int64_t> want;
    for (int64_t i = 1; i <= 14; ++i) want.push_back(i);
    EXPECT_EQ(ids, want);
    const Status st = (*s)->status();
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("table t: query failed"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("1242"), std::string::npos) << st.ToString();
  }
  // The connection is usable after the failed page: the same table without
  // the failing row reads every row.
  spec.where = "t.id <> 20";
  auto s = src->Scan(spec);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  int64_t n = 0;
  for (; (*s)->Valid(); (*s)->Next()) ++n;
  EXPECT_TRUE((*s)->status().ok()) << (*s)->status().ToString();
  EXPECT_EQ(n, 99);
}

// A stream dropped while its next page is being queried leaves the
// connection to the next statement: scans, the scan check and the source's
// own end.
TEST_F(MySqlSourceTest, AStreamDroppedMidPageLeavesTheConnectionUsable) {
  MySqlQuery(db_, std::vector<std::string>{"CREATE TABLE t (id INT PRIMARY KEY, v INT)",
                                           "INSERT INTO t SELECT seq, seq FROM seq_1_to_5000",
                                           "SELECT 1"});
  auto src = OpenSource(db_, /*fetch_rows=*/100);
  ASSERT_NE(src, nullptr);
  ScanSpec spec = Spec("t", {{"t", "id"}, {"t", "v"}}, {{"t", "id"}}, {{"t", "id"}});
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE(round);
    auto s = src->Scan(spec);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    // Read into the second page, so that the third is in flight.
    for (int i = 0; i < 150 && (*s)->Valid(); ++i) (*s)->Next();
    ASSERT_TRUE((*s)->Valid()) << (*s)->status().ToString();
    EXPECT_EQ((*s)->row()[0].as_int(), 151);
    if (round % 2 == 0) {
      ASSERT_TRUE(src->CheckScan(spec).ok());  // runs while the page is in flight
    }
  }
  {
    auto s = src->Scan(spec);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    int64_t sum = 0;
    for (; (*s)->Valid(); (*s)->Next()) sum += (*s)->row()[1].as_int();
    EXPECT_TRUE((*s)->status().ok()) << (*s)->status().ToString();
    EXPECT_EQ(sum, int64_t{5000} * 5001 / 2);
  }
  // The source closes right after a stream dropped in the middle of its
  // pages (a stream borrows its source: it goes first).
  {
    auto last = src->Scan(spec);
    ASSERT_TRUE(last.ok());
    (*last)->Next();
  }
  src.reset();
}

TEST_F(MySqlSourceTest, TextKeysSortAsUnsignedBytesLikeCompareValues) {
  // Case, accents, 4-byte characters, trailing spaces and a latin1 column:
  // every collation on the way would order these differently.
  MySqlQuery(db_, std::vector<std::string>{
                      "CREATE TABLE k (id INT PRIMARY KEY, name VARCHAR(20) CHARACTER SET "
                      "utf8mb4 COLLATE utf8mb4_general_ci, l VARCHAR(10) CHARACTER SET latin1)",
                      "INSERT INTO k VALUES (1, 'b', 'é'), (2, 'B', 'e'), (3, 'a ', 'E'), "
                      "(4, 'a', '€'), (5, 'á', 'z'), (6, '😀', 'Z'), (7, 'z', NULL), "
                      "(8, 'Ä', 'ÿ'), (9, 'a\t', 'é'), (10, '', 'x'), (11, 'b', 'é'), "
                      "(12, NULL, 'é')",
                      "SELECT 1"});
  for (int fetch : {1, 2, 100}) {
    SCOPED_TRACE(fetch);
    auto src = OpenSource(db_, fetch);
    ASSERT_NE(src, nullptr);
    // Ordered by the latin1 column, then the utf8mb4 one (a nest's parent
    // key), then the primary key.
    ScanSpec spec = Spec("k", {{"k", "id"}, {"k", "name"}, {"k", "l"}},
                         {{"k", "l", true}, {"k", "name", true}}, {{"k", "id"}});
    auto s = src->Scan(spec);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    std::vector<std::vector<Value>> rows;
    for (; (*s)->Valid(); (*s)->Next()) rows.push_back((*s)->row().values);
    ASSERT_TRUE((*s)->status().ok()) << (*s)->status().ToString();
    ASSERT_EQ(rows.size(), 12u);
    for (size_t i = 1; i < rows.size(); ++i) {
      int c = CompareValues(rows[i - 1][2], rows[i][2]);
      if (c == 0) c = CompareValues(rows[i - 1][1], rows[i][1]);
      if (c == 0) c = CompareValues(rows[i - 1][0], rows[i][0]);
      EXPECT_LT(c, 0) << rows[i - 1][2].DebugString() << "/" << rows[i - 1][1].DebugString()
                      << " before " << rows[i][2].DebugString() << "/" << rows[i][1].DebugString();
    }
    EXPECT_TRUE(rows[0][2].is_null()) << "NULL sorts first";
  }
}

TEST_F(MySqlSourceTest, LongTextKeysOrderByTheirWholeValue) {
  // Keys sharing a 2000-byte prefix: beyond the server's default
  // max_sort_length (1024), so only a pinned session orders them.
  MySqlQuery(db_, std::vector<std::string>{
                      "CREATE TABLE lk (id INT PRIMARY KEY, k TEXT, n INT)",
                      "INSERT INTO lk SELECT seq, CONCAT(REPEAT('x', 2000), CHAR(122 - seq)), seq "
                      "FROM seq_1_to_20",
                      "SELECT 1"});
  auto src = OpenSource(db_, 3);
  ASSERT_NE(src, nullptr);
  // Ordered by k (a nest's parent key), then the primary key: were k cut to
  // its prefix, the rows would come in id order.
  auto s = src->Scan(Spec("lk", {{"lk", "n"}}, {{"lk", "k", true}}, {{"lk", "id"}}));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<int64_t> seen;
  for (; (*s)->Valid(); (*s)->Next()) seen.push_back((*s)->row()[0].as_int());
  ASSERT_TRUE((*s)->status().ok()) << (*s)->status().ToString();
  std::vector<int64_t> expected;
  for (int64_t n = 20; n >= 1; --n) expected.push_back(n);
  EXPECT_EQ(seen, expected);
}

TEST_F(MySqlSourceTest, ReadsOneSnapshot) {
  MySqlQuery(db_,
             std::vector<std::string>{"CREATE TABLE s (id INT PRIMARY KEY, v INT)",
                                      "INSERT INTO s VALUES (1, 1), (2, 2), (3, 3)", "SELECT 1"});
  auto src = OpenSource(db_, 1);
  ASSERT_NE(src, nullptr);
  ScanSpec spec = Spec("s", {{"s", "id"}, {"s", "v"}}, {}, {{"s", "id"}});
  auto stream = src->Scan(spec);
  ASSERT_TRUE(stream.ok());
  // Another connection changes the table between two pages.
  MySqlQuery(db_, std::vector<std::string>{"UPDATE s SET v = 100", "INSERT INTO s VALUES (4, 4)",
                                           "DELETE FROM s WHERE id = 2", "SELECT 1"});
  std::vector<std::string> seen;
  for (; (*stream)->Valid(); (*stream)->Next()) seen.push_back(Typed((*stream)->row()[1]));
  EXPECT_TRUE((*stream)->status().ok()) << (*stream)->status().ToString();
  EXPECT_EQ(seen, (std::vector<std::string>{"int:1", "int:2", "int:3"}));
  // A scan started later in the same run sees the same snapshot.
  ScannedTable again = ScanTable(src.get(), "s", {"id", "v"});
  EXPECT_EQ(Column(again, 1), (std::vector<std::string>{"int:1", "int:2", "int:3"}));
}

TEST_F(MySqlSourceTest, TableWithoutPrimaryKeyIsOneUnbufferedStreamAtATime) {
  MySqlQuery(db_, std::vector<std::string>{"CREATE TABLE nokey (a INT, b VARCHAR(5))",
                                           "CREATE TABLE other (id INT PRIMARY KEY)",
                                           "INSERT INTO nokey VALUES (2, 'x'), (1, 'y'), (2, 'x')",
                                           "INSERT INTO other VALUES (1)", "SELECT 1"});
  auto src = OpenSource(db_, 1);
  ASSERT_NE(src, nullptr);
  ScanSpec nk = Spec("nokey", {{"nokey", "a"}, {"nokey", "b"}}, {{"nokey", "a"}}, {});
  auto s = src->Scan(nk);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE((*s)->Valid());
  EXPECT_EQ((*s)->row()[0].as_int(), 1);
  // widen refuses such a scan up front where it would be read beside others
  // (ScanSpec::shared), so a query meanwhile is a bug.
  auto second = src->Scan(Spec("other", {{"other", "id"}}, {}, {{"other", "id"}}));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kInternal);
  EXPECT_NE(second.status().message().find("'nokey'"), std::string::npos)
      << second.status().message();
  int rows = 0;
  for (; (*s)->Valid(); (*s)->Next()) ++rows;
  EXPECT_TRUE((*s)->status().ok());
  EXPECT_EQ(rows, 3) << "duplicates are all read";
  // Once read to its end the connection is free again.
  auto third = src->Scan(Spec("other", {{"other", "id"}}, {}, {{"other", "id"}}));
  EXPECT_TRUE(third.ok()) << third.status().ToString();
}

TEST_F(MySqlSourceTest, SharedScanThatCannotBePagedIsRefusedUpFront) {
  MySqlQuery(db_,
             std::vector<std::string>{"CREATE TABLE nokey (a INT, b VARCHAR(5))",
                                      "INSERT INTO nokey VALUES (2, 'x'), (1, 'y')", "SELECT 1"});
  auto src = OpenSource(db_, 1);
  ASSERT_NE(src, nullptr);
  ScanSpec nk = Spec("nokey", {{"nokey", "a"}, {"nokey", "b"}}, {{"nokey", "a"}}, {});
  nk.shared = true;
  Status check = src->CheckScan(nk);
  EXPECT_EQ(check.code(), StatusCode::kInvalidArgument) << check.ToString();
  EXPECT_NE(check.message().find("table nokey cannot be read in pages (it has no primary key"),
            std::string::npos)
      << check.message();
  auto s = src->Scan(nk);
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << s.status().ToString();
  // Paged by a key the mapping gives, it is read beside another scan.
  nk.unique_key = {{"nokey", "a"}, {"nokey", "b"}};
  nk.unique_key_from_mapping = true;
  EXPECT_TRUE(src->CheckScan(nk).ok());
  auto paged = src->Scan(nk);
  ASSERT_TRUE(paged.ok()) << paged.status().ToString();
  auto other = src->Scan(nk);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
}

TEST_F(MySqlSourceTest, TableWithoutPrimaryKeyPagesByAUniqueNotNullIndex) {
  MySqlQuery(db_, std::vector<std::string>{
                      "CREATE TABLE par (id INT PRIMARY KEY)",
                      // No primary key; a unique index of NOT NULL columns,
                      // another one with a nullable column (not a total order).
                      "CREATE TABLE kid (code VARCHAR(5) NOT NULL, seq INT NOT NULL, pid INT, "
                      "alt INT NULL, UNIQUE KEY (alt), UNIQUE KEY code_seq (code, seq))",
                      "INSERT INTO par SELECT seq FROM seq_1_to_50",
                      "INSERT INTO kid SELECT CHAR(65 + seq % 3), seq, seq % 50 + 1, NULL FROM "
                      "seq_1_to_200",
                      "SELECT 1"});
  auto src = OpenSource(db_, 4);
  ASSERT_NE(src, nullptr);
  auto schema = src->Introspect();
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ(schema->FindTable("kid")->unique_keys,
            (std::vector<std::vector<std::string>>{{"alt"}, {"code", "seq"}}));
  auto parents = src->Scan(Spec("par", {{"par", "id"}}, {{"par", "id"}}, {{"par", "id"}}));
  ASSERT_TRUE(parents.ok()) << parents.status().ToString();
  // The planner gives no unique key for a table without a primary key.
  auto kids = src->Scan(Spec("kid", {{"kid", "pid"}}, {{"kid", "pid"}}, {}, {{"kid", "pid"}}));
  ASSERT_TRUE(kids.ok()) << kids.status().ToString();
  int n = 0, k = 0;
  for (; (*parents)->Valid(); (*parents)->Next()) {
    ++n;
    const int64_t id = (*parents)->row()[0].as_int();
    for (; (*kids)->Valid() && (*kids)->row()[0].as_int() == id; (*kids)->Next()) ++k;
  }
  EXPECT_TRUE((*parents)->status().ok()) << (*parents)->status().ToString();
  EXPECT_TRUE((*kids)->status().ok()) << (*kids)->status().ToString();
  EXPECT_EQ(n, 50);
  EXPECT_EQ(k, 200) << "both streams paged on the one connection";
}

TEST_F(MySqlSourceTest, JoinThatRepeatsRowsFailsInsteadOfLosingThem) {
  MySqlQuery(db_, std::vector<std::string>{
                      "CREATE TABLE o (id INT PRIMARY KEY, cust INT)",
                      "CREATE TABLE cst (cust INT, name VARCHAR(5))",  // no key: cust repeats
                      "INSERT INTO o VALUES (1, 1), (2, 2)",
                      "INSERT INTO cst VALUES (1, 'a'), (1, 'b'), (2, 'c')", "SELECT 1"});
  auto src = OpenSource(db_, 1);
  ASSERT_NE(src, nullptr);
  ScanSpec spec = Spec("o", {{"o", "id"}, {"c", "name"}}, {}, {{"o", "id"}}, {},
                       {ScanJoin{"cst", "c", {{ColumnExpr{"o", "cust"}, "cust"}}}});
  auto s = src->Scan(spec);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  while ((*s)->Valid()) (*s)->Next();
  EXPECT_EQ((*s)->status().code(), StatusCode::kInvalidArgument) << (*s)->status().ToString();
  EXPECT_NE((*s)->status().message().find("same ordering key"), std::string::npos);
}

TEST_F(MySqlSourceTest, IntrospectsTablesColumnsKeysAndEstimates) {
  const std::string ex = SourceDir() + "/examples/service_orders/";
  RunMySqlFile(db_, ex + "schema.mysql.sql");
  RunMySqlFile(db_, ex + "data.mysql.sql");
  MySqlQuery(
      db_,
      std::vector<std::string>{
          "ANALYZE TABLE service_order",
          "CREATE VIEW open_orders AS SELECT order_id FROM service_order WHERE status = 'open'"});
  auto src = OpenSource(db_);
  ASSERT_NE(src, nullptr);
  auto schema = src->Introspect();
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  std::vector<std::string> names;
  for (const auto& t : schema->tables) names.push_back(t.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"customer", "open_orders", "product", "service_order"}));
  const SourceTable* so = schema->FindTable("service_order");
  ASSERT_NE(so, nullptr);
  EXPECT_EQ(so->primary_key, std::vector<std::string>{"order_id"});
  ASSERT_EQ(so->foreign_keys.size(), 2u);
  std::map<std::string, std::string> fks;
  for (const auto& fk : so->foreign_keys) {
    ASSERT_EQ(fk.columns.size(), 1u);
    fks[fk.columns[0]] = fk.ref_table + "." + fk.ref_columns[0];
  }
  EXPECT_EQ(fks["customer_id"], "customer.customer_id");
  EXPECT_EQ(fks["product_code"], "product.product_code");
  ASSERT_EQ(so->columns.size(), 8u);
  EXPECT_EQ(so->columns[0].name, "order_id");
  EXPECT_FALSE(so->columns[0].nullable);
  EXPECT_EQ(so->FindColumn("notes")->nullable, true);
  EXPECT_EQ(so->FindColumn("ordered_at")->type, ValueType::kTimestamp);
  EXPECT_EQ(so->FindColumn("amount")->source_type, "decimal(10,2)");
  EXPECT_EQ(so->estimated_rows, 40) << "InnoDB's estimate after ANALYZE";
  EXPECT_TRUE(so->unique_keys.empty());
  EXPECT_EQ(schema->FindTable("open_orders")->estimated_rows, -1);
}

TEST_F(MySqlSourceTest, FreeFormQueriesAndChecksWithoutReading) {
  MySqlQuery(db_, std::vector<std::string>{
                      "CREATE TABLE q (id INT PRIMARY KEY, f FLOAT, bu BIGINT UNSIGNED, "
                      "d DATETIME(3), t VARCHAR(10))",
                      "CREATE TABLE nokey (a INT)",
                      "INSERT INTO q VALUES (1, 3.1415927, 18446744073709551615, "
                      "'2020-01-02 03:04:05.5', 'x'), (2, NULL, 0, NULL, NULL)",
                      "INSERT INTO nokey VALUES (1), (2)", "SELECT 1"});
  auto src = OpenSource(db_);
  ASSERT_NE(src, nullptr);
  const std::string query = "SELECT id, f, bu, d, CONCAT(t, '!') AS te FROM q WHERE id < 10";
  auto d = src->DescribeQuery(query);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  std::vector<std::string> types;
  for (const auto& c : d->columns)
    types.push_back(c.name + ":" + std::string(ValueTypeName(c.type)));
  EXPECT_EQ(types,
            (std::vector<std::string>{"id:int", "f:double", "bu:uint", "d:timestamp", "te:text"}));
  ScanSpec spec;
  spec.query = query;
  spec.alias = "qq";
  for (const char* c : {"id", "f", "bu", "d", "te"}) spec.columns.push_back({"qq", c});
  spec.order_by.push_back({"qq", "id"});
  auto s = src->Scan(spec);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE((*s)->Valid());
  EXPECT_EQ((*s)->row()[1].as_double(), static_cast<double>(3.1415927f));
  EXPECT_EQ(Typed((*s)->row()[2]), "uint:18446744073709551615");
  EXPECT_EQ(Typed((*s)->row()[3]), "timestamp:2020-01-02 03:04:05.5");
  EXPECT_EQ(Typed((*s)->row()[4]), "text:x!");
  while ((*s)->Valid()) (*s)->Next();
  EXPECT_TRUE((*s)->status().ok()) << (*s)->status().ToString();

  // CheckScan: a bad `where` is InvalidArgument; a good one reads nothing, so
  // even a table without a key leaves the connection free.
  ScanSpec bad = Spec("q", {{"q", "id"}}, {}, {{"q", "id"}});
  bad.where = "no_such_column = 1";
  Status st = src->CheckScan(bad);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("no_such_column"), std::string::npos) << st.message();
  EXPECT_TRUE(src->CheckScan(Spec("nokey", {{"nokey", "a"}}, {}, {})).ok());
  EXPECT_TRUE(src->Scan(Spec("q", {{"q", "id"}}, {}, {{"q", "id"}})).ok());
  auto bad_query = src->DescribeQuery("SELECT nope FROM q");
  EXPECT_EQ(bad_query.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(MySqlSourceTest, LargestGroupsAndColumnSummaryRunOnTheServer) {
  MySqlQuery(db_, std::vector<std::string>{
                      "CREATE TABLE g (id INT PRIMARY KEY, k VARCHAR(5) COLLATE "
                      "utf8mb4_general_ci, n INT, at DATETIME, f FLOAT)",
                      "INSERT INTO g VALUES (1, 'a', 1, '2020-01-01 00:00:00', 0.1), "
                      "(2, 'A', 1, '2019-05-06 07:08:09', NULL), (3, 'A', 2, NULL, 2.5), "
                      "(4, 'A', 2, '2021-01-01 00:00:00', NULL), (5, NULL, 3, NULL, NULL), "
                      "(6, 'b', 3, NULL, NULL), (7, 'b', 3, NULL, NULL)",
                      "SELECT 1"});
  auto src = OpenSource(db_);
  ASSERT_NE(src, nullptr);
  ScanSpec spec = Spec("g", {{"g", "id"}}, {}, {{"g", "id"}});
  // 'a' and 'A' are one value in the column's collation, two for widen.
  auto groups = src->stats().LargestGroups(spec, {{"g", "k", true}}, 10);
  ASSERT_TRUE(groups.ok()) << groups.status().ToString();
  std::vector<std::string> got;
  for (const auto& gc : *groups) got.push_back(Typed(gc.key[0]) + "=" + std::to_string(gc.rows));
  auto expected = MySqlQuery(db_,
                             "SELECT CONCAT('text:', IFNULL(k, 'NULL'), '=', COUNT(*)) FROM g "
                             "GROUP BY BINARY k ORDER BY COUNT(*) DESC, BINARY k");
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], expected[i][0]);
  EXPECT_EQ(got.front(), "text:A=3");
  auto two = src->stats().LargestGroups(spec, {{"g", "k", true}, {"g", "n"}}, 1);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  ASSERT_EQ(two->size(), 1u);
  EXPECT_EQ(Typed((*two)[0].key[0]) + "|" + Typed((*two)[0].key[1]), "text:A|int:2")
      << "ties: the smaller key first";
  EXPECT_EQ((*two)[0].rows, 2);

  auto at = src->stats().SummarizeColumn(spec, {"g", "at"});
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  EXPECT_EQ(Typed(at->min), "timestamp:2019-05-06 07:08:09");
  EXPECT_EQ(Typed(at->max), "timestamp:2021-01-01 00:00:00");
  EXPECT_EQ(at->rows, 7);
  EXPECT_EQ(at->non_null, 3);
  auto k = src->stats().SummarizeColumn(spec, {"g", "k", true});
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_EQ(Typed(k->min), "text:A") << "bytewise: 'A' < 'a'";
  EXPECT_EQ(Typed(k->max), "text:b");
  auto f = src->stats().SummarizeColumn(spec, {"g", "f"});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->min.as_double(), static_cast<double>(0.1f));
  spec.where = "id > 100";
  auto none = src->stats().SummarizeColumn(spec, {"g", "at"});
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->min.is_null());
  EXPECT_EQ(none->rows, 0);
}

TEST_F(MySqlSourceTest, ServerGoneMidRunIsUnavailable) {
  MySqlQuery(db_,
             std::vector<std::string>{"CREATE TABLE g (id INT PRIMARY KEY)",
                                      "INSERT INTO g SELECT seq FROM seq_1_to_100", "SELECT 1"});
  auto src = OpenSource(db_, 10);
  ASSERT_NE(src, nullptr);
  auto s = src->Scan(Spec("g", {{"g", "id"}}, {}, {{"g", "id"}}));
  ASSERT_TRUE(s.ok());
  // Kill the reader's connection from another session.
  const std::string dbname = db_.substr(db_.rfind('/') + 1);
  MySqlQuery(server_, std::vector<std::string>{
                          "SELECT @victim := ID FROM information_schema.PROCESSLIST WHERE DB = '" +
                              dbname + "' AND ID <> CONNECTION_ID() LIMIT 1",
                          "KILL CONNECTION @victim"});
  while ((*s)->Valid()) (*s)->Next();
  EXPECT_EQ((*s)->status().code(), StatusCode::kUnavailable) << (*s)->status().ToString();
  EXPECT_NE((*s)->status().message().find("connection to the source was lost"), std::string::npos);
}

TEST_F(MySqlSourceTest, ConnectionErrorsHaveDistinctCodesAndNeverShowThePassword) {
  SourceOptions o;
  auto refused = Source::Open("mysql://u:secret@127.0.0.1:1/db", o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable) << refused.status().ToString();
  EXPECT_EQ(refused.status().message().find("secret"), std::string::npos);
  EXPECT_NE(refused.status().message().find("mysql://u:***@127.0.0.1:1/db"), std::string::npos);

  auto nodb = Source::Open(WithDatabase(server_, "no_such_db_here"), o);
  ASSERT_FALSE(nodb.ok());
  EXPECT_EQ(nodb.status().code(), StatusCode::kNotFound) << nodb.status().ToString();

  MySqlQuery(server_,
             std::vector<std::string>{"DROP USER IF EXISTS 'widen_pw'@'127.0.0.1'",
                                      "CREATE USER 'widen_pw'@'127.0.0.1' IDENTIFIED BY 's3cr:t@x'",
                                      "GRANT SELECT ON *.* TO 'widen_pw'@'127.0.0.1'", "SELECT 1"});
  const std::string url = WithDatabase(server_, db_.substr(db_.rfind('/') + 1));
  auto wrong = Source::Open(WithUser(url, "widen_pw:wrong-pass"), o);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kUnauthenticated) << wrong.status().ToString();
  EXPECT_EQ(wrong.status().message().find("wrong-pass"), std::string::npos);
  EXPECT_EQ(wrong.status().message().find('\n'), std::string::npos) << "one line";

  // Percent-escaped password in the URL; then from the environment.
  EXPECT_TRUE(Source::Open(WithUser(url, "widen_pw:s3cr%3At%40x"), o).ok());
  {
    ScopedEnv a("WIDEN_SOURCE_PASSWORD", "s3cr:t@x"), b("MYSQL_PWD", "wrong");
    auto s = Source::Open(WithUser(url, "widen_pw"), o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
  }
  {
    ScopedEnv a("WIDEN_SOURCE_PASSWORD", nullptr), b("MYSQL_PWD", "s3cr:t@x");
    auto s = Source::Open(WithUser(url, "widen_pw"), o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
  }
  const std::string home = MakeTempDir();
  {
    ScopedEnv a("WIDEN_SOURCE_PASSWORD", nullptr), b("MYSQL_PWD", nullptr), c("HOME", home.c_str());
    auto s = Source::Open(WithUser(url, "widen_pw"), o);
    EXPECT_EQ(s.status().code(), StatusCode::kUnauthenticated) << s.status().ToString();
    // A MySQL option file's [widen] (or [client]) group.
    std::ofstream(home + "/.my.cnf") << "[widen]\npassword=s3cr:t@x\n";
    s = Source::Open(WithUser(url, "widen_pw"), o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
  }
  MySqlQuery(server_, std::vector<std::string>{"DROP USER 'widen_pw'@'127.0.0.1'", "SELECT 1"});
}

// The same hostile identifiers on both engines, end to end through
// `widen migrate`: reserved words, mixed case, spaces, quotes, backticks.
constexpr char kHostileMapping[] = R"(source: {source}
target: leveldb:{dir}/store
tables:
  - name: t
    from: "Order Items \"q\" `b`"
    families: [d, n]
    key:
      parts: [{{column: "select", width: 3}}]
    joins:
      - table: "group"
        as: g
        on: {{"Group`Id": "Id"}}
    columns:
      - {{column: "Mixed Case", to: "d:mixed"}}
      - {{column: "it's", to: "d:quote"}}
      - {{column: "g.Name \"x\"", to: "d:group"}}
    nest:
      - table: "Line`s"
        on: {{"select": "from"}}
        family: n
        prefix: l
        id: ["where"]
        columns: ["Value"]
)";

void CheckHostileStore(const std::string& dir) {
  TableCells cells = ReadTable("leveldb:" + dir + "/store", "t");
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells["001"]["d:mixed"], "Upper Lower");
  EXPECT_EQ(cells["001"]["d:quote"], "a'b\"c`d");
  EXPECT_EQ(cells["001"]["d:group"], "G1");
  EXPECT_EQ(cells["001"]["n:l1"], "{\"Value\":\"x\"}");
  EXPECT_EQ(cells["001"]["n:l2"], "{\"Value\":\"y\"}");
  EXPECT_EQ(cells["002"].count("d:group"), 0u);
  EXPECT_EQ(cells["002"]["n:l3"], "{\"Value\":\"z\"}");
}

TEST(HostileNamesTest, MySqlQuotesEveryIdentifier) {
  WIDEN_REQUIRE_MYSQL(url);
  std::string db = FreshMySqlDatabase(url, "widen_it_hostile");
  MySqlQuery(db,
             std::vector<std::string>{
                 "CREATE TABLE `group` (`Id` INT PRIMARY KEY, `Name \"x\"` VARCHAR(5))",
                 "CREATE TABLE `Order Items \"q\" ``b``` (`select` INT PRIMARY KEY, "
                 "`Mixed Case` VARCHAR(20), `it's` VARCHAR(20), `Group``Id` INT)",
                 "CREATE TABLE `Line``s` (`where` INT PRIMARY KEY, `from` INT, `Value` "
                 "VARCHAR(5))",
                 "INSERT INTO `group` VALUES (1, 'G1')",
                 "INSERT INTO `Order Items \"q\" ``b``` VALUES (1, 'Upper Lower', "
                 "'a''b\"c`d', 1), (2, NULL, NULL, 9)",
                 "INSERT INTO `Line``s` VALUES (1, 1, 'x'), (2, 1, 'y'), (3, 2, 'z')", "SELECT 1"});
  std::string dir = MakeTempDir();
  std::string m = dir + "/m.yaml";
  std::ofstream(m) << fmt::format(kHostileMapping, fmt::arg("source", db), fmt::arg("dir", dir));
  CommandResult r = RunCommand(WidenBinary() + " migrate -q --fetch-rows 1 -m " + m);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  CheckHostileStore(dir);
}

TEST(HostileNamesTest, PostgresQuotesEveryIdentifier) {
  WIDEN_REQUIRE_PG(url);
  std::string db = FreshPgDatabase(url, "widen_it_hostile");
  PgQuery(db,
          "CREATE TABLE \"group\" (\"Id\" INT PRIMARY KEY, \"Name \"\"x\"\"\" VARCHAR(5));"
          "CREATE TABLE \"Order Items \"\"q\"\" `b`\" (\"select\" INT PRIMARY KEY, "
          "\"Mixed Case\" VARCHAR(20), \"it's\" VARCHAR(20), \"Group`Id\" INT);"
          "CREATE TABLE \"Line`s\" (\"where\" INT PRIMARY KEY, \"from\" INT, \"Value\" VARCHAR(5));"
          "INSERT INTO \"group\" VALUES (1, 'G1');"
          "INSERT INTO \"Order Items \"\"q\"\" `b`\" VALUES (1, 'Upper Lower', 'a''b\"c`d', 1), "
          "(2, NULL, NULL, 9);"
          "INSERT INTO \"Line`s\" VALUES (1, 1, 'x'), (2, 1, 'y'), (3, 2, 'z')");
  std::string dir = MakeTempDir();
  std::string m = dir + "/m.yaml";
  std::ofstream(m) << fmt::format(kHostileMapping, fmt::arg("source", db), fmt::arg("dir", dir));
  CommandResult r = RunCommand(WidenBinary() + " migrate -q -m " + m);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  CheckHostileStore(dir);
}

TEST(SourceErrorsTest, WidenExitCodesForMySqlConnections) {
  WIDEN_REQUIRE_MYSQL(url);
  std::string dir = MakeTempDir();
  std::string m = dir + "/m.yaml";
  auto write = [&](const std::string& source) {
    std::ofstream(m) << "source: " << source << "\ntarget: leveldb:" << dir
                     << "/store\ntables:\n  - name: t\n    from: a\n    families: [d]\n"
                        "    key:\n      parts: [id]\n";
  };
  write("mysql://u:secret@127.0.0.1:1/db");
  CommandResult r = RunCommand(WidenBinary() + " migrate -m " + m);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_EQ(r.output.find("secret"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("u:***@127.0.0.1:1/db"), std::string::npos) << r.output;

  write(WithUser(url, "nobody_here:secret"));
  r = RunCommand(WidenBinary() + " migrate -m " + m);
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_EQ(r.output.find("secret"), std::string::npos) << r.output;

  write(WithDatabase(url, "no_such_db_here"));
  r = RunCommand(WidenBinary() + " migrate -m " + m);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no_such_db_here"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/store")) << "nothing written on failure";
}

// A MySQL user without SELECT on a table the mapping reads (driving,
// joined or nested): MySQL's information_schema hides the table from that
// user, and widen says it is hidden, not missing (exit 4, a grant to give).
// MySQL refuses a missing table alike to a user with table grants only, so
// the message names both causes; to a user who may read the whole database
// a missing table is named missing (exit 2).
TEST(SourceErrorsTest, MySqlTableWithoutAGrantIsPermissionDeniedNotMissing) {
  WIDEN_REQUIRE_MYSQL(url);
  const std::string db = FreshMySqlDatabase(url, "widen_it_mygrant");
  const std::string name = db.substr(db.rfind('/') + 1);
  MySqlQuery(db, std::vector<std::string>{
                     "CREATE TABLE p (id INT PRIMARY KEY, kid INT)",
                     "CREATE TABLE k (id INT PRIMARY KEY, v INT)",
                     "CREATE TABLE c (id INT PRIMARY KEY, p_id INT)",
                     "DROP USER IF EXISTS 'widen_nogrant'@'127.0.0.1'",
                     "CREATE USER 'widen_nogrant'@'127.0.0.1'",
                     fmt::format("GRANT SELECT ON `{}`.p TO 'widen_nogrant'@'127.0.0.1'", name),
                     "SELECT 1"});
  const std::string dir = MakeTempDir();
  const std::string m = dir + "/m.yaml";
  const std::string nogrant = WithUser(db, "widen_nogrant");
  // A mapping reading driving table `from` from `source`; `rest` follows.
  auto mapping = [&](const std::string& source, const std::string& from, const std::string& rest) {
    return "source: " + source + "\ntarget: leveldb:" + dir + "/store\ntables:\n  - name: t\n" +
           "    from: " + from + "\n    families: [d, c]\n    key:\n      parts: [id]\n" + rest;
  };
  const std::pair<const char*, std::string> cases[] = {
      {"k", mapping(nogrant, "k", "    columns: [v]\n")},
      {"k", mapping(nogrant, "p",
                    "    joins:\n      - {table: k, on: {kid: id}}\n    columns:\n"
                    "      - {column: k.v, to: \"d:v\"}\n")},
      {"c",
       mapping(nogrant, "p",
               "    nest:\n      - {table: c, on: {id: p_id}, family: c, prefix: c, id: [id]}\n")},
      // MySQL refuses a missing table alike to a user with table grants only.
      {"no_such_table", mapping(nogrant, "no_such_table", "    columns: [v]\n")},
  };
  for (const auto& [hidden, text] : cases) {
    SCOPED_TRACE(text);
    std::ofstream(m) << text;
    CommandResult r = RunCommand(WidenBinary() + " migrate -m " + m);
    EXPECT_EQ(r.exit_code, 4) << r.output;
    EXPECT_NE(r.output.find(fmt::format("source table '{}' is hidden from this user: it does not "
                                        "exist, or the user may not read it",
                                        hidden)),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("(MySQL error 1142)"), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir + "/store")) << "nothing written on failure";
  }
  std::ofstream(m) << mapping(db, "no_such_table", "    columns: [v]\n");
  CommandResult r = RunCommand(WidenBinary() + " migrate -m " + m);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("source table 'no_such_table' does not exist"), std::string::npos)
      << r.output;
  MySqlQuery(url, std::vector<std::string>{"DROP USER 'widen_nogrant'@'127.0.0.1'", "SELECT 1"});
}

// The backend ends while rows stream: the stream fails as Unavailable, for
// both ways PostgreSQL scans are read: COPY on a reader connection (a scan
// without bound values; the table is larger than what the socket and the
// reader's queue hold, so the COPY cannot have ended) and a cursor (a scan
// with a range, whose values are bound: 10 rows a FETCH).
TEST(SourceErrorsTest, PostgresServerGoneMidRunIsUnavailable) {
  WIDEN_REQUIRE_PG(url);
  std::string db = FreshPgDatabase(url, "widen_it_pggone");
  PgQuery(db,
          "CREATE TABLE g (id INT PRIMARY KEY, pad text); INSERT INTO g SELECT i, repeat('x', "
          "200) FROM generate_series(1, 200000) i");
  const std::string dbname = db.substr(db.rfind('/') + 1);
  for (const bool bound : {false, true}) {
    SCOPED_TRACE(bound ? "cursor" : "copy");
    auto src = OpenSource(db, 10);
    ASSERT_NE(src, nullptr);
    ScanSpec spec = Spec("g", {{"g", "id"}, {"g", "pad"}}, {{"g", "id"}}, {{"g", "id"}});
    if (bound) spec.range = ScanRange{{"g", "id"}, Value::Int(0), Value::Int(1000000), false};
    auto s = src->Scan(spec);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->Valid());
    PgQuery(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" +
                     dbname + "' AND pid <> pg_backend_pid()");
    while ((*s)->Valid()) (*s)->Next();
    EXPECT_EQ((*s)->status().code(), StatusCode::kUnavailable) << (*s)->status().ToString();
  }
}

// Every call on `src` after its connection ended: the name of the call and
// its Status (a scan's stream's, when the scan itself started).
std::vector<std::pair<std::string, Status>> CallsAfterTheEnd(Source* src, const ScanSpec& spec) {
  std::vector<std::pair<std::string, Status>> out;
  auto scan = src->Scan(spec);
  if (scan.ok()) {
    while ((*scan)->Valid()) (*scan)->Next();
    out.emplace_back("Scan", (*scan)->status());
  } else {
    out.emplace_back("Scan", scan.status());
  }
  out.emplace_back("CheckScan", src->CheckScan(spec));
  out.emplace_back("Introspect", src->Introspect().status());
  out.emplace_back("SummarizeColumn",
                   src->stats().SummarizeColumn(spec, spec.unique_key.front()).status());
  out.emplace_back("OpenSiblings", src->OpenSiblings(1, SourceReads{{spec.table}, false}).status());
  return out;
}

// The connection ends while idle between two queries, after a scan that read
// every row (through a cursor on PostgreSQL, whose CLOSE, sent as the stream
// goes, is the first to fail and fails in silence): every later call fails as
// Unavailable and says the connection was lost, with the server's reason
// where it sent one. libpqxx closes a transaction whose query failed, so
// without that the next call said only "transaction ... already closed".
void ExpectEveryCallAfterAnIdleEndUnavailable(const std::string& url, bool pg) {
  std::string db;
  if (pg) {
    db = FreshPgDatabase(url, "widen_it_pgidle");
    PgQuery(db,
            "CREATE TABLE g (id INT PRIMARY KEY, pad text); INSERT INTO g SELECT i, 'x' "
            "FROM generate_series(1, 100) i");
  } else {
    db = FreshMySqlDatabase(url, "widen_it_myidle");
    MySqlQuery(db, std::vector<std::string>{"CREATE TABLE g (id INT PRIMARY KEY, pad text)",
                                            "INSERT INTO g SELECT seq, 'x' FROM seq_1_to_100"});
  }
  const std::string dbname = db.substr(db.rfind('/') + 1);
  auto src = OpenSource(db, 10);
  ASSERT_NE(src, nullptr);
  ScanSpec spec = Spec("g", {{"g", "id"}, {"g", "pad"}}, {{"g", "id"}}, {{"g", "id"}});
  spec.range = ScanRange{{"g", "id"}, Value::Int(0), Value::Int(1000), false};
  {
    auto s = src->Scan(spec);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    int rows = 0;
    for (; (*s)->Valid(); (*s)->Next()) ++rows;
    ASSERT_TRUE((*s)->status().ok()) << (*s)->status().ToString();
    ASSERT_EQ(rows, 100);
    if (pg) {
      PgQuery(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" +
                       dbname + "' AND pid <> pg_backend_pid()");
    } else {
      MySqlQuery(url, std::vector<std::string>{
                          "SELECT @victim := ID FROM information_schema.PROCESSLIST WHERE DB = '" +
                              dbname + "' AND ID <> CONNECTION_ID() LIMIT 1",
                          "KILL CONNECTION @victim"});
    }
  }  // the stream goes: PostgreSQL's CLOSE of its cursor fails here
  for (const auto& [call, status] : CallsAfterTheEnd(src.get(), spec)) {
    SCOPED_TRACE(call);
    EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
    EXPECT_NE(status.message().find("the connection to the source was lost"), std::string::npos)
        << status.ToString();
    if (pg) {
      EXPECT_NE(status.message().find("terminating connection due to administrator command"),
                std::string::npos)
          << status.ToString();
    }
  }
}

TEST(SourceErrorsTest, PostgresConnectionEndedBetweenQueriesIsUnavailableForEveryLaterCall) {
  WIDEN_REQUIRE_PG(url);
  ExpectEveryCallAfterAnIdleEndUnavailable(url, true);
}

TEST(SourceErrorsTest, MySqlConnectionEndedBetweenQueriesIsUnavailableForEveryLaterCall) {
  WIDEN_REQUIRE_MYSQL(url);
  ExpectEveryCallAfterAnIdleEndUnavailable(url, false);
}

// PostgreSQL errors are coded by the SQLSTATE the server sends (also while
// connecting), not by their text.
TEST(SourceErrorsTest, PostgresErrorsAreCodedBySqlState) {
  WIDEN_REQUIRE_PG(url);
  std::string db = FreshPgDatabase(url, "widen_it_pgstate");
  PgQuery(db,
          "DROP ROLE IF EXISTS widen_noperm; CREATE ROLE widen_noperm LOGIN; "
          "DROP ROLE IF EXISTS widen_nologin; CREATE ROLE widen_nologin NOLOGIN; "
          "CREATE TABLE secret (id INT PRIMARY KEY); INSERT INTO secret VALUES (1)");
  SourceOptions o;
  // 28000: no such role, a role that may not log in.
  for (const char* user : {"widen_no_such_role", "widen_nologin"}) {
    auto s = Source::Open(WithUser(db, user), o);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), StatusCode::kUnauthenticated) << s.status().ToString();
    EXPECT_NE(s.status().message().find(user), std::string::npos) << s.status().ToString();
    // The message as libpq words it by default: no SQLSTATE, no LOCATION.
    EXPECT_EQ(s.status().message().find("28000"), std::string::npos) << s.status().ToString();
    EXPECT_EQ(s.status().message().find("LOCATION"), std::string::npos) << s.status().ToString();
  }
  // 3D000: no such database.
  auto nodb = Source::Open(WithDatabase(url, "widen_no_such_db"), o);
  ASSERT_FALSE(nodb.ok());
  EXPECT_EQ(nodb.status().code(), StatusCode::kNotFound) << nodb.status().ToString();
  EXPECT_NE(nodb.status().message().find("\"widen_no_such_db\" does not exist"), std::string::npos)
      << nodb.status().ToString();
  // No server answers: Unavailable; a URL libpq refuses: InvalidArgument.
  auto refused = Source::Open("postgresql://u:secret@127.0.0.1:1/db", o);
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable) << refused.status().ToString();
  EXPECT_EQ(refused.status().message().find("secret"), std::string::npos);
  for (const char* bad : {"postgresql://u@127.0.0.1:1/db?sslmode=sometimes",
                          "postgresql://u@127.0.0.1:1/db?no_such_option=1"}) {
    auto s = Source::Open(bad, o);
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << s.status().ToString();
  }
  // 42501: a table the user may not read.
  auto src = OpenSource(WithUser(db, "widen_noperm"));
  ASSERT_NE(src, nullptr);
  const ScanSpec spec = Spec("secret", {{"secret", "id"}}, {}, {{"secret", "id"}});
  Status check = src->CheckScan(spec);
  EXPECT_EQ(check.code(), StatusCode::kPermissionDenied) << check.ToString();
  EXPECT_NE(check.message().find("permission denied for table secret"), std::string::npos)
      << check.ToString();
  // Every way a table can be unreadable is found before a row is read: a
  // joined table the user may not read, a view whose owner may not read its
  // table, a column without a column-level grant; and a column-level grant
  // that does let the user read passes.
  // widen_viewer may own views in databases of earlier runs: kept, not dropped.
  PgQuery(db,
          "DO $$ BEGIN CREATE ROLE widen_viewer NOLOGIN; EXCEPTION WHEN duplicate_object THEN "
          "NULL; END $$");
  PgQuery(db,
          "CREATE TABLE open_t (id INT PRIMARY KEY, secret_id INT); GRANT SELECT ON open_t TO "
          "widen_noperm; CREATE TABLE cols (id INT PRIMARY KEY, hidden INT); GRANT SELECT (id) "
          "ON cols TO widen_noperm; CREATE VIEW secret_v AS "
          "SELECT id FROM secret; ALTER VIEW secret_v OWNER TO widen_viewer; GRANT SELECT ON "
          "secret_v TO widen_noperm");
  ScanJoin to_secret;
  to_secret.table = "secret";
  to_secret.alias = "secret";
  to_secret.on = {{ColumnExpr{"open_t", "secret_id"}, "id"}};
  const ScanSpec joined =
      Spec("open_t", {{"open_t", "id"}, {"secret", "id"}}, {}, {{"open_t", "id"}}, {}, {to_secret});
  Status via_join = src->CheckScan(joined);
  EXPECT_EQ(via_join.code(), StatusCode::kPermissionDenied) << via_join.ToString();
  EXPECT_NE(via_join.message().find("permission denied for table secret"), std::string::npos)
      << via_join.ToString();
  Status via_view =
      src->CheckScan(Spec("secret_v", {{"secret_v", "id"}}, {}, {{"secret_v", "id"}}));
  EXPECT_EQ(via_view.code(), StatusCode::kPermissionDenied) << via_view.ToString();
  Status granted = src->CheckScan(Spec("cols", {{"cols", "id"}}, {}, {{"cols", "id"}}));
  EXPECT_TRUE(granted.ok()) << granted.ToString();
  Status not_granted =
      src->CheckScan(Spec("cols", {{"cols", "id"}, {"cols", "hidden"}}, {}, {{"cols", "id"}}));
  EXPECT_EQ(not_granted.code(), StatusCode::kPermissionDenied) << not_granted.ToString();
  // 42703: a `where` naming no column is the mapping's to fix.
  auto owner = OpenSource(db);
  ASSERT_NE(owner, nullptr);
  ScanSpec bad = spec;
  bad.where = "nope > 1";
  EXPECT_EQ(owner->CheckScan(bad).code(), StatusCode::kInvalidArgument);
  auto scan = owner->Scan(bad);
  EXPECT_EQ(scan.status().code(), StatusCode::kInvalidArgument) << scan.status().ToString();
  // 57014: a statement cancelled on the server (pg_cancel_backend, an
  // operator's cancel) may pass on retry. widen's sessions run with
  // statement_timeout = 0, so the statement cancels itself.
  PgQuery(db, "GRANT SELECT ON secret TO widen_noperm");
  src = OpenSource(WithUser(db, "widen_noperm"));
  ASSERT_NE(src, nullptr);
  ScanSpec slow = spec;
  slow.where =
      "CASE WHEN pg_cancel_backend(pg_backend_pid()) THEN (SELECT count(*) FROM pg_sleep(1)) = 1 "
      "END";
  {
    // A stream borrows its source: it goes first.
    auto cut = src->Scan(slow);
    Status st = cut.ok() ? (*cut)->status() : cut.status();
    EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
    EXPECT_NE(st.message().find("canceling statement"), std::string::npos) << st.ToString();
  }
  src.reset();
  PgQuery(db, "DROP OWNED BY widen_noperm; DROP ROLE widen_noperm; DROP ROLE widen_nologin");
}

// A server that accepts the connection and never answers: the connection
// gives up after connect_timeout (widen polls libpq's connection itself).
TEST(SourceErrorsTest, PostgresServerThatNeverAnswersTimesOut) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const auto start = std::chrono::steady_clock::now();
  auto s = Source::Open(
      fmt::format("postgresql://u@127.0.0.1:{}/db?connect_timeout=2", ntohs(addr.sin_port)),
      SourceOptions());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  close(fd);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable) << s.status().ToString();
  EXPECT_NE(s.status().message().find("timeout expired"), std::string::npos)
      << s.status().ToString();
  // libpq's start of the sentence is not said twice.
  const std::string& m = s.status().message();
  const std::string attempt =
      fmt::format("connection to server at \"127.0.0.1\", port {} failed:", ntohs(addr.sin_port));
  EXPECT_NE(m.find(attempt + " timeout expired"), std::string::npos) << m;
  EXPECT_EQ(m.find(attempt), m.rfind(attempt)) << m;
  EXPECT_GE(seconds, 1.5);
  EXPECT_LT(seconds, 8.0);
}

}  // namespace
}  // namespace widen::testing
