// examples/service_orders end to end: load the example into a fresh
// PostgreSQL database, run `widen migrate`, and compare every cell of both
// target tables with what SQL says about the source.
#include <gtest/gtest.h>

#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

// True when some line of `text` matches `pattern` (ECMAScript regex) entirely.
bool HasLine(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (std::regex_match(text.substr(start, end - start), re)) return true;
    start = end + 1;
  }
  return false;
}

// Escapes regex metacharacters of a literal.
std::string Escape(const std::string& s) {
  static const std::string kMeta = R"(\^$.|?*+()[]{})";
  std::string out;
  for (char c : s) {
    if (kMeta.find(c) != std::string::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

class ServiceOrdersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WIDEN_REQUIRE_PG(url);
    db_url_ = FreshPgDatabase(url, "widen_it_service_orders");
    const std::string ex = SourceDir() + "/examples/service_orders/";
    RunPsqlFile(db_url_, ex + "schema.pg.sql");
    RunPsqlFile(db_url_, ex + "data.pg.sql");
    dir_ = MakeTempDir();
    target_ = "leveldb:" + dir_ + "/store";
  }

  CommandResult Migrate(const std::string& extra = "") {
    return RunCommand(fmt::format(
        "WIDEN_SOURCE_URL={} {} migrate -m {} --target {} {}", ShellQuote(db_url_), WidenBinary(),
        SourceDir() + "/examples/service_orders/mapping.yaml", ShellQuote(target_), extra));
  }

  std::string db_url_, dir_, target_;
};

TEST_F(ServiceOrdersTest, OrdersTableHasEveryOrderWithCustomerDenormalized) {
  CommandResult r = Migrate("--timestamp-ms 1700000000000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("shop:orders"), std::string::npos) << r.output;

  auto expected = PgQuery(db_url_, R"SQL(
    SELECT o.product_code || '|' || lpad(o.customer_id::text, 5, '0') || '|' ||
             lpad(o.order_id::text, 6, '0'),
           to_char(o.ordered_at, 'YYYY-MM-DD HH24:MI:SS'), o.status, o.quantity::text,
           o.amount::text, o.notes, c.name, c.phone
    FROM service_order o JOIN customer c USING (customer_id))SQL");
  TableCells cells = ReadTable(target_, "shop:orders");
  ASSERT_EQ(cells.size(), expected.size());
  for (const auto& e : expected) {
    SCOPED_TRACE(e[0]);
    ASSERT_EQ(cells.count(e[0]), 1u);
    const auto& row = cells[e[0]];
    EXPECT_EQ(row.at("d:at"), e[1]);
    EXPECT_EQ(row.at("d:status"), e[2]);
    EXPECT_EQ(row.at("d:qty"), e[3]);
    EXPECT_EQ(row.at("d:amount"), e[4]);
    if (e[5] == "<NULL>") {
      EXPECT_EQ(row.count("d:notes"), 0u) << "a NULL is omitted, not written as ''";
    } else {
      EXPECT_EQ(row.at("d:notes"), e[5]);
    }
    EXPECT_EQ(row.at("d:cust_name"), e[6]);
    EXPECT_EQ(row.at("d:cust_phone"), e[7]);
    EXPECT_EQ(row.size(), e[5] == "<NULL>" ? 6u : 7u);
  }
}

TEST_F(ServiceOrdersTest, CustomersTableNestsOrders) {
  CommandResult r = Migrate();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TableCells cells = ReadTable(target_, "shop:customers");
  auto customers = PgQuery(db_url_,
                           "SELECT lpad(customer_id::text, 5, '0'), name, phone, email, city, "
                           "(SELECT count(*) FROM service_order o WHERE o.customer_id = "
                           "c.customer_id) FROM customer c");
  ASSERT_EQ(cells.size(), customers.size());
  for (const auto& c : customers) {
    SCOPED_TRACE(c[0]);
    const auto& row = cells[c[0]];
    EXPECT_EQ(row.at("c:name"), c[1]);
    EXPECT_EQ(row.at("c:phone"), c[2]);
    EXPECT_EQ(row.count("c:email"), c[3] == "<NULL>" ? 0u : 1u);
    EXPECT_EQ(row.count("c:city"), c[4] == "<NULL>" ? 0u : 1u);
    size_t nested = 0;
    for (const auto& [col, v] : row) nested += col.rfind("o:o", 0) == 0;
    EXPECT_EQ(std::to_string(nested), c[5]);
  }
  auto orders = PgQuery(db_url_,
                        "SELECT lpad(customer_id::text, 5, '0'), 'o:o' || lpad(order_id::text, 6, "
                        "'0'), product_code, to_char(ordered_at, 'YYYY-MM-DD HH24:MI:SS'), "
                        "status, quantity, amount::text FROM service_order");
  for (const auto& o : orders) {
    SCOPED_TRACE(o[1]);
    auto j = nlohmann::json::parse(cells[o[0]].at(o[1]));
    EXPECT_EQ(j.size(), 5u);
    EXPECT_EQ(j.at("product_code"), o[2]);
    EXPECT_EQ(j.at("ordered_at"), o[3]);
    EXPECT_EQ(j.at("status"), o[4]);
    EXPECT_EQ(j.at("quantity"), std::stoll(o[5]));
    EXPECT_EQ(j.at("amount"), o[6]) << "decimals stay exact text";
  }
}

TEST_F(ServiceOrdersTest, RerunIsIdempotentWithFixedTimestamp) {
  ASSERT_EQ(Migrate("--timestamp-ms 1700000000000").exit_code, 0);
  TableCells first = ReadTable(target_, "shop:customers");
  ASSERT_EQ(Migrate("--timestamp-ms 1700000000000").exit_code, 0);
  EXPECT_EQ(ReadTable(target_, "shop:customers"), first);
}

TEST_F(ServiceOrdersTest, ScanAndGetPrintLikeHBaseShell) {
  ASSERT_EQ(Migrate("--timestamp-ms 1700000000000").exit_code, 0);
  auto c = PgQuery(db_url_, "SELECT phone FROM customer WHERE customer_id = 2");
  CommandResult get = RunCommand(
      fmt::format("{} get shop:customers 00002 --target {}", WidenBinary(), ShellQuote(target_)));
  ASSERT_EQ(get.exit_code, 0) << get.output;
  EXPECT_TRUE(HasLine(get.output, " c:phone +timestamp=1700000000000, value=" + Escape(c[0][0])))
      << get.output;

  CommandResult scan = RunCommand(
      fmt::format("{} scan shop:orders --limit 2 --target {}", WidenBinary(), ShellQuote(target_)));
  ASSERT_EQ(scan.exit_code, 0) << scan.output;
  auto first = PgQuery(db_url_,
                       "SELECT product_code || '|' || lpad(customer_id::text, 5, '0') || '|' || "
                       "lpad(order_id::text, 6, '0') COLLATE \"C\" AS k, status FROM service_order "
                       "ORDER BY 1 LIMIT 1");
  EXPECT_TRUE(HasLine(
      scan.output, " " + Escape(first[0][0]) +
                       " +column=d:status, timestamp=1700000000000, value=" + Escape(first[0][1])))
      << scan.output;
  EXPECT_NE(scan.output.find("2 row(s)"), std::string::npos) << scan.output;
}

}  // namespace
}  // namespace widen::testing
