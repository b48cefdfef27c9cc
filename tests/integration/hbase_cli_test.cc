// widen's commands on an hbase:// target (the real HBase of
// scripts/with-servers.sh --pg --hbase): `ddl --apply` creates the tables
// with the split points `widen ddl` prints, a salted key pre-splits at its
// buckets, a table with another row key layout is refused (exit 5), verify
// names what differs in an HBase table, and an unreachable gateway exits 3.
// Regions are read through HBase's own view (the raw Thrift client), not
// widen's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "tests/integration/hbase_env.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

constexpr int64_t kRunTimestampMs = 1700000000000;

// service_orders' orders table under another name, with key `key_yaml`.
std::string OrdersMapping(const std::string& table, const std::string& key_yaml) {
  return fmt::format(R"(source: ${{WIDEN_SOURCE_URL}}
tables:
  - name: {}
    from: service_order
    families: [{{name: d, versions: 2, ttl: 864000000, compression: GZ, bloom_filter: ROWCOL}}]
    key: {}
    columns:
      - {{column: status, to: "d:status"}}
      - {{column: amount, to: "d:amount"}}
)",
                     table, key_yaml);
}

class HBaseCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WIDEN_REQUIRE_PG(pg);
    WIDEN_REQUIRE_HBASE(hbase);
    hbase_ = hbase;
    db_url_ = FreshPgDatabase(pg, "widen_it_hbase_cli");
    const std::string dir = SourceDir() + "/examples/service_orders/";
    RunPsqlFile(db_url_, dir + "schema.pg.sql");
    RunPsqlFile(db_url_, dir + "data.pg.sql");
    dir_ = MakeTempDir();
    ns_ = "wc" + std::to_string(getpid());
  }

  void TearDown() override {
    if (hbase_.empty()) return;
    RawHBase raw(hbase_);
    for (const auto& t : made_) raw.DropTable(t);
  }

  std::string WriteMapping(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  CommandResult Widen(const std::string& args) {
    return RunCommand(
        fmt::format("WIDEN_SOURCE_URL={} {} {}", ShellQuote(db_url_), WidenBinary(), args));
  }

  std::string hbase_, db_url_, dir_, ns_;
  std::vector<std::string> made_;
};

TEST_F(HBaseCliTest, DdlApplyCreatesTheTablesWidenDdlPrints) {
  const std::string table = ns_ + ":orders";
  made_.push_back(table);
  const std::string mapping =
      WriteMapping("m.yaml", OrdersMapping(table, "{parts: [{column: order_id, width: 6}]}"));
  // The split points `widen ddl` prints (quantiles of the real keys).
  CommandResult printed = Widen(fmt::format("ddl -m {} --regions 4", ShellQuote(mapping)));
  ASSERT_EQ(printed.exit_code, 0) << printed.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(printed.output, m, std::regex(R"(SPLITS => \[([^\]]*)\])")))
      << printed.output;
  std::vector<std::string> splits;
  const std::string list = m[1].str();
  const std::regex quoted("'([^']*)'");
  for (std::sregex_iterator it(list.begin(), list.end(), quoted), end; it != end; ++it) {
    std::string bytes;
    ASSERT_TRUE(FromStringBinary((*it)[1].str(), &bytes));
    splits.push_back(bytes);
  }
  ASSERT_EQ(splits.size(), 3u) << printed.output;

  CommandResult applied =
      Widen(fmt::format("ddl -m {} --regions 4 --apply --target {}", ShellQuote(mapping), hbase_));
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_NE(applied.output.find(table + ": created, 4 region(s)"), std::string::npos)
      << applied.output;
  RawHBase raw(hbase_);
  EXPECT_EQ(raw.RegionStartKeys(table), splits);
  const thrift2::TTableDescriptor d = raw.Describe(table);
  ASSERT_EQ(d.columns.size(), 1u);
  EXPECT_EQ(d.columns[0].maxVersions, 2);
  EXPECT_EQ(d.columns[0].timeToLive, 864000000);
  EXPECT_EQ(d.columns[0].compressionType, thrift2::TCompressionAlgorithm::GZ);
  EXPECT_EQ(d.columns[0].bloomnFilterType, thrift2::TBloomFilterType::ROWCOL);
  EXPECT_EQ(d.attributes.count("widen.key"), 1u);

  // Again: the table is there as designed; migrate then fills it as it is.
  applied =
      Widen(fmt::format("ddl -m {} --regions 4 --apply --target {}", ShellQuote(mapping), hbase_));
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_NE(applied.output.find(table + ": exists"), std::string::npos) << applied.output;
  CommandResult migrated = Widen(fmt::format("migrate -q -m {} --target {} --timestamp-ms {}",
                                             ShellQuote(mapping), hbase_, kRunTimestampMs));
  ASSERT_EQ(migrated.exit_code, 0) << migrated.output;
  EXPECT_EQ(raw.RegionStartKeys(table), splits);
  const auto orders = PgQuery(db_url_, "SELECT count(*) FROM service_order");
  EXPECT_EQ(std::to_string(ReadTable(hbase_, table).size()), orders[0][0]);

  // The embedded store takes --apply too.
  const std::string lev = "leveldb:" + dir_ + "/store";
  applied =
      Widen(fmt::format("ddl -m {} --regions 4 --apply --target {}", ShellQuote(mapping), lev));
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_NE(applied.output.find(table + ": created, 4 region(s)"), std::string::npos);
}

TEST_F(HBaseCliTest, SaltedKeyPreSplitsAtItsBuckets) {
  const std::string table = ns_ + ":salted";
  made_.push_back(table);
  {
    RawHBase raw(hbase_);
    raw.DropTable(table);
  }
  const std::string mapping = WriteMapping(
      "salted.yaml",
      OrdersMapping(table, "{form: binary, salt: {buckets: 4}, parts: [{column: order_id}]}"));
  CommandResult r = Widen(fmt::format("migrate -q -m {} --target {} --timestamp-ms {}",
                                      ShellQuote(mapping), hbase_, kRunTimestampMs));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Binary form: the salt is the first byte, bucket 0 to 3 (docs/format.md).
  RawHBase raw(hbase_);
  EXPECT_EQ(raw.RegionStartKeys(table), (std::vector<std::string>{"\x01", "\x02", "\x03"}));
  const auto orders = PgQuery(db_url_, "SELECT count(*) FROM service_order");
  EXPECT_EQ(std::to_string(ReadTable(hbase_, table).size()), orders[0][0]);
}

TEST_F(HBaseCliTest, TableWithAnotherRowKeyLayoutIsRefusedWithExit5) {
  const std::string table = ns_ + ":layout";
  made_.push_back(table);
  {
    RawHBase raw(hbase_);
    raw.DropTable(table);
  }
  const std::string first =
      WriteMapping("a.yaml", OrdersMapping(table, "{parts: [{column: order_id, width: 6}]}"));
  const std::string second =
      WriteMapping("b.yaml", OrdersMapping(table, "{parts: [{column: order_id, width: 8}]}"));
  CommandResult r = Widen(fmt::format("migrate -q -m {} --target {} --timestamp-ms {}",
                                      ShellQuote(first), hbase_, kRunTimestampMs));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Widen(fmt::format("migrate -q -m {} --target {} --timestamp-ms {}", ShellQuote(second),
                        hbase_, kRunTimestampMs));
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find("other metadata 'widen.key'"), std::string::npos) << r.output;
  r = Widen(fmt::format("ddl -m {} --apply --target {}", ShellQuote(second), hbase_));
  EXPECT_EQ(r.exit_code, 5) << r.output;
}

// A source value that makes a cell bigger than HBase takes (10 MiB as the
// region server counts it) is a rejected row with its reason, like any row
// that cannot be encoded: with --rejects the run goes on without it; without,
// it stops naming it (exit 2). The embedded store, which has no such limit,
// takes it.
TEST_F(HBaseCliTest, CellOverHBasesLimitIsARejectedRowWithItsReason) {
  const std::string table = ns_ + ":blobs";
  made_.push_back(table);
  {
    RawHBase raw(hbase_);
    raw.DropTable(table);
  }
  // Row key "2" (1 byte), d:body: 1 + 1 + 4 + 10485760 + 24 bytes.
  PgQuery(db_url_,
          "CREATE TABLE blob (id int PRIMARY KEY, body text); INSERT INTO blob VALUES (1, 'one'), "
          "(2, repeat('x', 10485760)), (3, 'three')");
  const std::string mapping = WriteMapping("blob.yaml", fmt::format(R"(source: ${{WIDEN_SOURCE_URL}}
tables:
  - name: {}
    from: blob
    families: [d]
    key: {{parts: [id]}}
    columns:
      - {{column: body, to: "d:body"}}
)",
                                                                    table));
  const std::string rejects = dir_ + "/rejects.jsonl";
  CommandResult r = Widen(fmt::format("migrate -q -m {} --target {} --rejects {}",
                                      ShellQuote(mapping), hbase_, ShellQuote(rejects)));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(rejects);
  std::string line;
  std::vector<nlohmann::json> lines;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["table"], table);
  EXPECT_EQ(lines[0]["row"], "id=2");
  EXPECT_EQ(lines[0]["reason"],
            "column blob.body: the cell d:body is 10485790 bytes as HBase counts it (row + family "
            "+ qualifier + value + 24), over the target's largest, 10485760 "
            "(hbase.server.keyvalue.maxsize)");
  const TableCells cells = ReadTable(hbase_, table);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells.at("1").at("d:body"), "one");
  EXPECT_EQ(cells.at("3").at("d:body"), "three");

  r = Widen(fmt::format("migrate -q -m {} --target {}", ShellQuote(mapping), hbase_));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("id=2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("over the target's largest, 10485760"), std::string::npos) << r.output;

  const std::string store = "leveldb:" + dir_ + "/store";
  r = Widen(fmt::format("migrate -q -m {} --target {}", ShellQuote(mapping), store));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadTable(store, table).at("2").at("d:body").size(), 10485760u);
}

// widen sync does not write to HBase yet: it says so (exit 5) before it
// creates or writes anything.
TEST_F(HBaseCliTest, SyncIntoHBaseIsRefusedBeforeAnythingIsCreated) {
  const std::string table = ns_ + ":synced";
  made_.push_back(table);
  {
    RawHBase raw(hbase_);
    raw.DropTable(table);
  }
  const std::string mapping =
      WriteMapping("s.yaml", OrdersMapping(table, "{parts: [{column: order_id, width: 6}]}"));
  CommandResult r = Widen(fmt::format("sync -m {} --target {}", ShellQuote(mapping), hbase_));
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find("widen sync does not write to this kind of store yet"), std::string::npos)
      << r.output;
  RawHBase raw(hbase_);
  EXPECT_FALSE(raw->tableExists(RawHBase::Name(table)));
}

// widen verify reads an HBase target through the store's reader: equal
// after a migrate (the load timestamp from the table's state in HBase);
// a row deleted, a cell changed and a row added through HBase's own API are
// each named with the source's primary key (exit 9).
TEST_F(HBaseCliTest, VerifyNamesWhatDiffersInAnHBaseTable) {
  const std::string table = ns_ + ":verified";
  made_.push_back(table);
  {
    RawHBase raw(hbase_);
    raw.DropTable(table);
  }
  const std::string mapping =
      WriteMapping("v.yaml", OrdersMapping(table, "{parts: [{column: order_id, width: 6}]}"));
  CommandResult r = Widen(fmt::format("migrate -q -m {} --target {}", ShellQuote(mapping), hbase_));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string verify =
      fmt::format("verify -m {} --target {} --format json", ShellQuote(mapping), hbase_);
  r = Widen(verify);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto doc = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  const auto& t = doc["tables"][0];
  const std::string orders = PgQuery(db_url_, "SELECT count(*) FROM service_order")[0][0];
  EXPECT_EQ(t["rows_equal"].get<int64_t>(), std::stoll(orders));
  EXPECT_EQ(t["timestamp_from"], "table state");
  const int64_t ts = t["timestamp_ms"].get<int64_t>();

  // The lowest order's row deleted, the next one's status changed, a row
  // that no order gives added: with HBase's client, not widen's.
  const auto ids = PgQuery(db_url_, "SELECT order_id FROM service_order ORDER BY order_id LIMIT 2");
  const std::string removed = fmt::format("{:06}", std::stoll(ids[0][0]));
  const std::string changed = fmt::format("{:06}", std::stoll(ids[1][0]));
  {
    RawHBase raw(hbase_);
    thrift2::TDelete del;
    del.__set_row(removed);
    raw->deleteSingle(table, del);
    thrift2::TColumnValue cv;
    cv.__set_family("d");
    cv.__set_qualifier("status");
    cv.__set_value("damaged");
    cv.__set_timestamp(ts);
    thrift2::TPut put;
    put.__set_row(changed);
    put.__set_columnValues({cv});
    raw->put(table, put);
    put.__set_row("999999");
    raw->put(table, put);
  }
  r = Widen(verify);
  EXPECT_EQ(r.exit_code, 9) << r.output;
  doc = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  const auto& d = doc["tables"][0];
  EXPECT_EQ(d["rows_missing"], 1);
  EXPECT_EQ(d["missing"][0]["row"], removed);
  EXPECT_EQ(d["missing"][0]["source"]["order_id"], ids[0][0]);
  EXPECT_EQ(d["rows_different"], 1);
  EXPECT_EQ(d["different"][0]["row"], changed);
  EXPECT_NE(d["different"][0]["differences"][0].get<std::string>().find(
                "d:status @" + std::to_string(ts) + ": value 'damaged' in the target"),
            std::string::npos)
      << d.dump();
  EXPECT_EQ(d["rows_extra"], 1);
  EXPECT_EQ(d["extra"][0]["row"], "999999");
}

TEST_F(HBaseCliTest, UnreachableGatewayExits3) {
  // Nothing listens on port 1.
  CommandResult r = Widen("scan t --target hbase://127.0.0.1:1");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("127.0.0.1:1"), std::string::npos) << r.output;
  r = Widen("get t row --target hbase://127.0.0.1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

}  // namespace
}  // namespace widen::testing
