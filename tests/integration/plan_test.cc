// widen plan, lint and ddl against a real PostgreSQL: Chinook (loaded as in
// chinook_test.cc) and the service_orders example. Checks that plan writes
// nothing, its JSON shape, collision detection naming both source rows, the
// lint rules that query the source (W108's oldest version, W109's children
// per parent), and ddl's split points.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

namespace fs = std::filesystem;

std::string WriteFile(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

class PlanTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string url = PgUrl();
    if (url.empty()) return;
    const std::string sql = DatasetsDir() + "/chinook/postgresql/Chinook_PostgreSql.sql";
    if (fs::exists(sql)) {
      chinook_ = new std::string(FreshPgDatabase(url, "widen_it_plan_chinook"));
      RunPsqlScript(*chinook_, sql);
      PgQuery(*chinook_, "ANALYZE");
    }
    shop_ = new std::string(FreshPgDatabase(url, "widen_it_plan_shop"));
    const std::string ex = SourceDir() + "/examples/service_orders/";
    RunPsqlFile(*shop_, ex + "schema.pg.sql");
    RunPsqlFile(*shop_, ex + "data.pg.sql");
  }

  void SetUp() override {
    WIDEN_REQUIRE_PG(url);
    ASSERT_NE(shop_, nullptr);
    dir_ = MakeTempDir();
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  void RequireChinook() {
    ASSERT_NE(chinook_, nullptr) << DatasetsDir()
                                 << "/chinook is missing: set WIDEN_DATASETS to the shared "
                                    "datasets folder";
  }

  // Runs widen in dir_ with the source URL in WIDEN_SOURCE_URL.
  CommandResult Widen(const std::string& db, const std::string& args) {
    return RunCommand(fmt::format("cd {} && WIDEN_SOURCE_URL={} {} {}", ShellQuote(dir_),
                                  ShellQuote(db), WidenBinary(), args));
  }
  static std::string Chinook() { return SourceDir() + "/examples/chinook/mapping.yaml"; }

  static std::string* chinook_;
  static std::string* shop_;
  std::string dir_;
};

std::string* PlanTest::chinook_ = nullptr;
std::string* PlanTest::shop_ = nullptr;

TEST_F(PlanTest, PlanWritesNothing) {
  RequireChinook();
  // The mapping's target is leveldb:out/chinook, relative to the current
  // directory; and an explicit target URL must stay untouched as well.
  CommandResult r = Widen(*chinook_, "plan -m " + Chinook() + " --limit 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Widen(*chinook_, "plan -m " + Chinook() + " --full --limit 0 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::is_empty(dir_)) << fs::directory_iterator(dir_)->path();
  const std::string target = dir_ + "/store";
  r = RunCommand(fmt::format("cd {} && WIDEN_SOURCE_URL={} WIDEN_TARGET_URL={} {} plan -m {}",
                             ShellQuote(dir_), ShellQuote(*chinook_),
                             ShellQuote("leveldb:" + target), WidenBinary(), Chinook()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(target));
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(PlanTest, ChinookTextShowsAnatomyRowsAndStatistics) {
  RequireChinook();
  CommandResult r = Widen(*chinook_, "plan -m " + Chinook() + " --limit 1 --timestamp-ms 7");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string& out = r.output;
  for (const char* want : {
           "== music:artists",
           "families   d  VERSIONS 1, MIN_VERSIONS 0, TTL FOREVER",
           "row key    text, separator '|', 6-11 bytes: [artist_id int32 6 digits]",
           "artist.artist_id (integer)",
           "ROW  COLUMN+CELL",
           " 000001 column=d:name, timestamp=7, value=AC/DC",
           " 000001  =  artist_id=000001  <-  artist artist_id=1",
           "statistics (all 275 source rows)",
           "widest rows     000090 [artist_id=90]: 22 cells",
           "== sales:invoices",
           "[customer_id int32 5 digits][|][invoice_date timestamp][|][invoice_id int32 6 digits]",
           "collisions      none",
       }) {
    EXPECT_NE(out.find(want), std::string::npos) << "missing: " << want << "\n" << out;
  }
}

TEST_F(PlanTest, ChinookJsonShape) {
  RequireChinook();
  CommandResult r = Widen(
      *chinook_, "plan -m " + Chinook() + " --format json --limit 2 --sample 100 --timestamp-ms 7");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc.at("widen_plan"), 1);
  EXPECT_EQ(doc.at("mode"), "sample");
  EXPECT_EQ(doc.at("sample_rows"), 100);
  EXPECT_EQ(doc.at("timestamp_ms"), 7);
  EXPECT_EQ(doc.at("errors"), 0);
  ASSERT_EQ(doc.at("tables").size(), 2u);
  const auto& a = doc.at("tables")[0];
  EXPECT_EQ(a.at("name"), "music:artists");
  EXPECT_EQ(a.at("namespace"), "music");
  EXPECT_EQ(a.at("table"), "artists");
  EXPECT_EQ(a.at("source_table"), "artist");
  EXPECT_EQ(a.at("estimated_source_rows"), 275);
  ASSERT_EQ(a.at("families").size(), 2u);
  EXPECT_EQ(a.at("families")[0],
            nlohmann::json::parse(R"({"name":"d","versions":1,"min_versions":0,"ttl_seconds":0,
              "compression":"NONE","bloom_filter":"ROW","block_size_bytes":65536,
              "in_memory":false,"data_block_encoding":"NONE"})"));
  const auto& key = a.at("key");
  EXPECT_EQ(key.at("form"), "text");
  EXPECT_EQ(key.at("separator"), "|");
  EXPECT_EQ(key.at("min_bytes"), 6);
  EXPECT_EQ(key.at("max_bytes"), 11);
  ASSERT_EQ(key.at("parts").size(), 1u);
  EXPECT_EQ(key.at("parts")[0].at("name"), "artist_id");
  EXPECT_EQ(key.at("parts")[0].at("kind"), "column");
  EXPECT_EQ(key.at("parts")[0].at("column"), "artist.artist_id");
  EXPECT_EQ(key.at("parts")[0].at("offset"), 0);
  ASSERT_EQ(a.at("queries").size(), 2u);
  EXPECT_EQ(a.at("queries")[1].at("role"), "nest");
  EXPECT_EQ(a.at("queries")[1].at("prefix"), "a");
  EXPECT_EQ(a.at("queries")[1].at("table"), "album");
  ASSERT_EQ(a.at("rows").size(), 2u);
  const auto& row = a.at("rows")[0];
  EXPECT_EQ(row.at("key"), "000001");
  EXPECT_EQ(row.at("source"), "artist_id=1");
  EXPECT_EQ(row.at("decoded"), nlohmann::json::parse(R"([{"part":"artist_id","value":"000001"}])"));
  EXPECT_EQ(row.at("cells").back(),
            nlohmann::json::parse(R"({"column":"d:name","timestamp":7,"value":"AC/DC"})"));
  const auto& stats = a.at("stats");
  EXPECT_EQ(stats.at("complete"), false);
  EXPECT_EQ(stats.at("driving_rows"), 100);
  EXPECT_EQ(stats.at("rows"), 100);
  for (const char* k :
       {"cells_per_row", "row_key_bytes", "qualifier_bytes", "value_bytes", "row_bytes"}) {
    EXPECT_TRUE(stats.at(k).contains("min") && stats.at(k).contains("avg") &&
                stats.at(k).contains("max"))
        << k;
  }
  EXPECT_GT(stats.at("estimated_total_bytes").get<int64_t>(), stats.at("bytes").get<int64_t>());
  EXPECT_EQ(stats.at("salt_buckets"), nullptr);
  EXPECT_EQ(stats.at("widest_rows").size(), 5u);
  EXPECT_EQ(a.at("collisions"),
            nlohmann::json::parse(R"({"count":0,"exact":true,"merged_rows":0,"examples":[]})"));
  EXPECT_EQ(a.at("rejects"), nlohmann::json::parse(R"({"count":0,"examples":[]})"));
}

// Orders keyed by customer only: every customer with several orders collides.
constexpr char kCollidingMapping[] = R"(source: ${WIDEN_SOURCE_URL}
target: leveldb:out/never
tables:
  - name: shop:by_customer
    from: service_order
    families: [d]
    key:
      parts: [{column: customer_id, width: 5}]
    columns:
      - {column: status, to: "d:status"}
)";

TEST_F(PlanTest, ACollisionIsAnErrorNamingBothSourceRows) {
  const std::string m = WriteFile(dir_, "m.yaml", kCollidingMapping);
  // Orders of the customer with the most orders, oldest first.
  const auto expected = PgQuery(*shop_,
                                "SELECT customer_id, count(*) FROM service_order GROUP BY 1 "
                                "ORDER BY 1");
  uint64_t collisions = 0;
  for (const auto& e : expected) collisions += std::stoull(e[1]) - 1;
  ASSERT_GT(collisions, 0u);
  for (const char* mode : {"", " --full"}) {
    SCOPED_TRACE(mode);
    CommandResult r = Widen(*shop_, "plan -m " + m + " --format json --limit 0" + mode);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("key collision"), std::string::npos);
    const auto doc = nlohmann::json::parse(r.output.substr(0, r.output.rfind("widen:")));
    const auto& c = doc.at("tables")[0].at("collisions");
    EXPECT_EQ(c.at("count"), collisions);
    EXPECT_EQ(doc.at("errors"), collisions);
    ASSERT_FALSE(c.at("examples").empty());
    const auto& ex = c.at("examples")[0];
    EXPECT_EQ(ex.at("column"), "d:status");
    // Both named orders belong to the customer of the row key.
    const std::string first = ex.at("first_source"), second = ex.at("second_source");
    ASSERT_EQ(first.rfind("order_id=", 0), 0u) << first;
    ASSERT_EQ(second.rfind("order_id=", 0), 0u) << second;
    auto owner = PgQuery(*shop_, fmt::format("SELECT DISTINCT lpad(customer_id::text, 5, '0') "
                                             "FROM service_order WHERE order_id IN ({}, {})",
                                             first.substr(9), second.substr(9)));
    ASSERT_EQ(owner.size(), 1u);
    EXPECT_EQ(owner[0][0], ex.at("row_key"));
    EXPECT_NE(first, second);
  }
  // The text form says it too.
  CommandResult r = Widen(*shop_, "plan -m " + m + " --limit 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("collisions      ERROR: " + std::to_string(collisions)),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("give the same row key; the second replaces the first"),
            std::string::npos);
}

// Source tables whose names differ only in what a DOT id cannot hold
// ("a-b", "a_b") are two nodes of the diagram, each with its own edges.
TEST_F(PlanTest, DiagramKeepsSourceTablesWithSimilarNamesApart) {
  const std::string db = FreshPgDatabase(PgUrl(), "widen_it_plan_similar");
  PgQuery(db,
          "CREATE TABLE \"a-b\" (id int PRIMARY KEY, v text);"
          "CREATE TABLE \"a_b\" (id int PRIMARY KEY, v text);"
          "INSERT INTO \"a-b\" VALUES (1, 'x'); INSERT INTO \"a_b\" VALUES (1, 'y')");
  std::ofstream(dir_ + "/m.yaml")
      << "source: ${WIDEN_SOURCE_URL}\n"
         "tables:\n"
         "  - {name: 'ns:dash', from: 'a-b', families: [d],\n"
         "     key: {parts: [id]}, columns: [{column: v, to: 'd:v'}]}\n"
         "  - {name: 'ns:under', from: 'a_b', families: [d],\n"
         "     key: {parts: [id]}, columns: [{column: v, to: 'd:v'}]}\n";
  CommandResult r = Widen(db, "plan -m m.yaml --limit 0 --diagram design.dot");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream f(dir_ + "/design.dot");
  const std::string dot((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(dot, m, std::regex("\n  (\\w+) \\[shape=cylinder[^\n]*label=\"a-b\"")))
      << dot;
  const std::string dash = m[1].str();
  ASSERT_TRUE(
      std::regex_search(dot, m, std::regex("\n  (\\w+) \\[shape=cylinder[^\n]*label=\"a_b\"")))
      << dot;
  const std::string under = m[1].str();
  EXPECT_NE(dash, under);
  EXPECT_NE(dot.find("  " + dash + " -> target0 "), std::string::npos) << dot;
  EXPECT_NE(dot.find("  " + under + " -> target1 "), std::string::npos) << dot;
  EXPECT_EQ(dot.find("  " + dash + " -> target1 "), std::string::npos) << dot;
}

TEST_F(PlanTest, DiagramAsDotAndSvg) {
  RequireChinook();
  CommandResult r = Widen(*chinook_, "plan -m " + Chinook() + " --limit 0 --diagram design.dot");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream f(dir_ + "/design.dot");
  const std::string dot((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(dot.rfind("digraph widen {", 0), 0u);
  EXPECT_NE(dot.find("music:artists"), std::string::npos);
  EXPECT_NE(dot.find("source_album -> target0:f_a"), std::string::npos);
  if (RunCommand("command -v dot").exit_code != 0) {
    if (InCi()) FAIL() << "Graphviz's dot is not installed (scripts/deps.sh installs it)";
    GTEST_SKIP() << "Graphviz's dot is not installed";
  }
  r = Widen(*chinook_, "plan -m " + Chinook() + " --limit 0 --diagram design.svg");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream svg(dir_ + "/design.svg");
  const std::string s((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(s.find("<svg"), std::string::npos);
  EXPECT_NE(s.find("music:artists"), std::string::npos);
}

TEST_F(PlanTest, LintChinook) {
  RequireChinook();
  CommandResult r = Widen(*chinook_, "lint -m " + Chinook());
  EXPECT_EQ(r.exit_code, 0) << r.output;  // warnings only
  EXPECT_NE(r.output.find("mapping.yaml:12:15: warning W105: music:artists: the row key starts "
                          "with 'artist_id'"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("info I113: sales:invoices: nested id 'invoice_line_id'"),
            std::string::npos);
  // The width suggested fits every value of the type (an int: 10 digits).
  EXPECT_NE(r.output.find("fix: give it a width (e.g. {column: album_id, width: 10})"),
            std::string::npos)
      << r.output;
  // invoice_date is a timestamp(6) followed by invoice_id in a text key: a
  // fraction of a second would sort a shorter value after a longer one.
  EXPECT_NE(r.output.find("mapping.yaml:32:11: warning W116: sales:invoices: row key part "
                          "'invoice_date' does not keep the key in its order"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("0 error(s), 2 warning(s), 2 info"), std::string::npos) << r.output;
  r = Widen(*chinook_, "lint -m " + Chinook() + " --format json --disable W105,I113");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc.at("widen_lint"), 1);
  ASSERT_EQ(doc.at("findings").size(), 1u) << doc.dump(2);
  EXPECT_EQ(doc.at("findings")[0].at("rule"), "W116");
  EXPECT_EQ(doc.at("errors"), 0);
}

TEST_F(PlanTest, LintRulesThatQueryTheSource) {
  RequireChinook();
  // Invoices versioned by their date into a family that keeps them a day,
  // lines nested: W108 from min(invoice_date), W109 from count(*) per invoice.
  const std::string m = WriteFile(dir_, "m.yaml", R"(source: ${WIDEN_SOURCE_URL}
tables:
  - name: sales:invoices
    from: invoice
    version: invoice_date
    families: [{name: d, versions: 3, ttl: 86400}, {name: l, versions: 3}]
    key:
      parts: [{column: customer_id, width: 5}, {column: invoice_id, width: 6}]
    columns:
      - {column: total, to: "d:total"}
    nest:
      - table: invoice_line
        on: {invoice_id: invoice_id}
        family: l
        prefix: l
        id: [{column: invoice_line_id, width: 6}]
        columns: [track_id]
)");
  CommandResult r = Widen(*chinook_, "lint -m " + m + " --max-row-cells 10");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto oldest = PgQuery(*chinook_, "SELECT min(invoice_date)::date::text FROM invoice");
  EXPECT_NE(r.output.find("warning W108: sales:invoices: family 'd' has TTL 86400 s"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("goes back to " + oldest[0][0]), std::string::npos) << r.output;
  const auto widest = PgQuery(*chinook_,
                              "SELECT invoice_id, count(*) FROM invoice_line GROUP BY 1 "
                              "ORDER BY 2 DESC, 1 LIMIT 1");
  EXPECT_NE(r.output.find(fmt::format("warning W109: sales:invoices: the widest row can reach "
                                      "about {} cells",
                                      std::stoi(widest[0][1]) + 1)),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(widest[0][1] + " invoice_line (invoice_id=" + widest[0][0]),
            std::string::npos)
      << r.output;
  // Without those limits crossed: no W108 (TTL forever), no W109.
  r = Widen(*chinook_, "lint -m " + Chinook());
  EXPECT_EQ(r.output.find("W108"), std::string::npos);
  EXPECT_EQ(r.output.find("W109"), std::string::npos);
}

TEST_F(PlanTest, LintErrorsExitTwo) {
  const std::string m = WriteFile(dir_, "m.yaml", R"(source: ${WIDEN_SOURCE_URL}
tables:
  - name: shop:customers
    from: customer
    families: [d]
    key:
      parts: [city, {column: customer_id, width: 5}]
    columns:
      - {column: name, to: "d:name"}
)");
  CommandResult r = Widen(*shop_, "lint -m " + m);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("m.yaml:7:15: error E110: shop:customers: row key part 'city' can be "
                          "NULL (customer.city is nullable)"),
            std::string::npos)
      << r.output;
}

TEST_F(PlanTest, DdlSplitsFromSaltAndFromQuantiles) {
  const std::string m = WriteFile(dir_, "m.yaml", R"(source: ${WIDEN_SOURCE_URL}
tables:
  - name: shop:salted
    from: service_order
    families: [{name: d, versions: 2, compression: SNAPPY, data_block_encoding: FAST_DIFF}]
    key:
      form: binary
      parts: [order_id]
      salt: {buckets: 4}
    columns: [{column: status, to: "d:s"}]
  - name: shop:orders
    from: service_order
    families: [d]
    key:
      parts: [product_code, {column: order_id, width: 6}]
    columns: [{column: status, to: "d:s"}]
)");
  CommandResult r = Widen(*shop_, "ddl -m " + m + " --no-metadata");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("create_namespace 'shop'\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("create 'shop:salted',\n  {NAME => 'd', VERSIONS => 2, MIN_VERSIONS "
                          "=> 0, TTL => 2147483647, COMPRESSION => 'SNAPPY', BLOOMFILTER => "
                          "'ROW', BLOCKSIZE => 65536, IN_MEMORY => 'false', DATA_BLOCK_ENCODING "
                          "=> 'FAST_DIFF'},\n  {SPLITS => ['\\x01', '\\x02', '\\x03']}\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("create 'shop:orders',\n  {NAME => 'd', VERSIONS => 1, MIN_VERSIONS => "
                          "0, TTL => 2147483647, COMPRESSION => 'NONE', BLOOMFILTER => 'ROW', "
                          "BLOCKSIZE => 65536, IN_MEMORY => 'false', DATA_BLOCK_ENCODING => "
                          "'NONE'}\n"),
            std::string::npos)
      << r.output;

  // Four regions from quantiles: each holds about a quarter of the orders.
  r = Widen(*shop_, "ddl -m " + m + " --table shop:orders --regions 4 --no-metadata");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("4 region(s) from key quantiles (40 keys sampled from 40 source rows)"),
            std::string::npos)
      << r.output;
  const size_t at = r.output.find("{SPLITS => [");
  ASSERT_NE(at, std::string::npos) << r.output;
  // The quoted strings between [ and ] (printable keys here: no escapes).
  const std::string list = r.output.substr(at, r.output.find(']', at) - at);
  std::vector<std::string> points;
  for (size_t open = list.find('\''); open != std::string::npos;
       open = list.find('\'', list.find('\'', open + 1) + 1)) {
    points.push_back(list.substr(open + 1, list.find('\'', open + 1) - open - 1));
  }
  ASSERT_EQ(points.size(), 3u) << r.output;
  auto keys = PgQuery(*shop_,
                      "SELECT product_code || '|' || lpad(order_id::text, 6, '0') AS k FROM "
                      "service_order ORDER BY 1");
  std::vector<size_t> per_region(4, 0);
  for (const auto& k : keys) {
    size_t region = 0;
    while (region < points.size() && k[0] >= points[region]) ++region;
    ++per_region[region];
  }
  for (size_t n : per_region) EXPECT_EQ(n, 10u) << r.output;

  // With the key layout as table METADATA by default.
  r = Widen(*shop_, "ddl -m " + m + " --table shop:salted");
  EXPECT_NE(r.output.find("METADATA => {'widen.key' => '{\"form\":\"binary\""), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace widen::testing
