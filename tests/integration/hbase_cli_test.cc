// widen's commands on an hbase:// target (the real HBase of
// scripts/with-servers.sh --pg --hbase): `ddl --apply` creates the tables
// with the split points `widen ddl` prints, a salted key pre-splits at its
// buckets, a table with another row key layout is refused (exit 5), sync
// keeps an answer history exact (every version), sets NEW_VERSION_BEHAVIOR
// and keeps its digests in the sync table, a sync lock held elsewhere makes
// sync exit 7 until it expires, verify names what differs in an HBase
// table, an unreachable gateway exits 3, and a port where another kind of
// server answers (PostgreSQL, MariaDB, a listener that closes at once or
// sends other bytes) exits 5 naming what it found.
// Regions are read through HBase's own view (the raw Thrift client), not
// widen's.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "store/state_store.h"
#include "store/store.h"
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
    ns_ = "wc" + UniqueTag();
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
  EXPECT_NE(applied.output.find("target: " + hbase_ + " (--target)\n"), std::string::npos)
      << applied.output;
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

TEST_F(HBaseCliTest, MigrateSaysEveryCellIsSortedFirstNotThatTheKeysAreOutOfOrder) {
  // Row keys in the order PostgreSQL reads the rows (the primary key's).
  const std::string table = ns_ + ":sorted";
  made_.push_back(table);
  const std::string mapping =
      WriteMapping("s.yaml", OrdersMapping(table, "{parts: [{column: order_id, width: 6}]}"));
  CommandResult r = Widen(fmt::format("migrate -m {} --target {}", ShellQuote(mapping), hbase_));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(table + ": every cell was sorted through 1 temporary run(s)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("do not follow the order"), std::string::npos) << r.output;
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

// The cells of `table` in HBase, every version, as "row column@ts=value".
std::vector<std::string> AllVersions(const std::string& hbase, const std::string& table) {
  std::vector<std::string> out;
  for (const CellRecord& c : ReadCells(hbase, table, 1000)) {
    out.push_back(ToStringBinary(c.row) + " " + c.column + "@" + std::to_string(c.timestamp_ms) +
                  "=" + c.value);
  }
  return out;
}

// Answer history as versions (examples/applicants: each revision of an
// answer is a version of its cell, its timestamp the revision's time, the
// family keeping 3): after each change sequence the synced HBase table
// equals, every version, a fresh migrate into HBase. The sequences: a
// revision's text changed (the same coordinates), the newest revision
// removed while older ones stay, a fourth revision (beyond VERSIONS), a
// revision's time moved, a question's answers and an e-mail removed — and
// given again, with the same timestamps: HBase must show cells written
// after a delete marker that covered them.
TEST_F(HBaseCliTest, SyncIntoHBaseKeepsAnAnswerHistoryExactEveryVersion) {
  const std::string dir = SourceDir() + "/examples/applicants/";
  RunPsqlFile(db_url_, dir + "schema.pg.sql");
  RunPsqlFile(db_url_, dir + "data.pg.sql");
  std::ifstream in(dir + "mapping.yaml");
  const std::string design((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto named = [&](const std::string& ns) {
    std::string text = design;
    text.replace(text.find("name: hr:applicants"), 19, "name: " + ns + ":applicants");
    return text;
  };
  const std::string synced = ns_ + "h:applicants";
  made_.push_back(synced);
  const std::string mapping = WriteMapping("a.yaml", named(ns_ + "h"));
  CommandResult r =
      Widen(fmt::format("sync -m {} --target {} --format json", ShellQuote(mapping), hbase_));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const int64_t ts =
      nlohmann::json::parse(r.output.substr(r.output.find('{')))["tables"][0]["timestamp_ms"]
          .get<int64_t>();
  int round = 0;
  auto expect_fresh = [&]() {
    const std::string fresh_ns = fmt::format("{}h{}", ns_, ++round);
    const std::string fresh = fresh_ns + ":applicants";
    made_.push_back(fresh);
    const std::string m = WriteMapping(fresh_ns + ".yaml", named(fresh_ns));
    CommandResult f = Widen(
        fmt::format("migrate -q -m {} --target {} --timestamp-ms {}", ShellQuote(m), hbase_, ts));
    ASSERT_EQ(f.exit_code, 0) << f.output;
    const std::vector<std::string> want = AllVersions(hbase_, fresh);
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(AllVersions(hbase_, synced), want);
  };
  auto sync = [&]() {
    CommandResult s = Widen(fmt::format("sync -q -m {} --target {}", ShellQuote(mapping), hbase_));
    ASSERT_EQ(s.exit_code, 0) << s.output;
  };
  expect_fresh();
  PgQuery(db_url_,
          "UPDATE answer SET answer = 'changed' WHERE applicant_id = 1 AND question_id = 1 AND "
          "answered_at = '2024-03-02 18:40:10'");
  PgQuery(db_url_,
          "DELETE FROM answer WHERE applicant_id = 1 AND question_id = 3 AND answered_at = "
          "'2024-03-06 12:30:45'");
  PgQuery(db_url_, "INSERT INTO answer VALUES (3, 2, '2024-03-11 09:00:00', 'a fourth revision')");
  PgQuery(db_url_,
          "UPDATE answer SET answered_at = '2024-03-04 10:05:05' WHERE applicant_id = 2 AND "
          "question_id = 4 AND answered_at = '2024-03-05 10:05:05'");
  sync();
  expect_fresh();
  PgQuery(db_url_,
          "CREATE TABLE kept AS SELECT * FROM answer WHERE applicant_id = 1 AND "
          "question_id = 2");
  PgQuery(db_url_, "DELETE FROM answer WHERE applicant_id = 1 AND question_id = 2");
  PgQuery(db_url_, "UPDATE applicant SET email = NULL WHERE applicant_id = 1");
  sync();
  expect_fresh();
  // Applicant 1: its name and up to 3 revisions per question it answered.
  EXPECT_EQ(ReadCells(hbase_, synced, 1000, "0001").size(),
            std::stoull(PgQuery(db_url_,
                                "SELECT 1 + SUM(LEAST(3, n)) FROM (SELECT count(*) AS n FROM "
                                "answer WHERE applicant_id = 1 GROUP BY question_id) AS x")[0][0]));
  EXPECT_EQ(ReadTable(hbase_, synced)["0001"].count("a:2"), 0u);
  EXPECT_EQ(ReadTable(hbase_, synced)["0001"].count("p:email"), 0u);
  PgQuery(db_url_, "INSERT INTO answer SELECT * FROM kept");
  PgQuery(db_url_,
          "UPDATE applicant SET email = 'amelie.laurent@example.fr' WHERE applicant_id = 1");
  sync();
  expect_fresh();
  EXPECT_NE(ReadTable(hbase_, synced)["0001"].count("a:2"), 0u) << "given again, and seen";
}

// A table loaded by migrate (HBase's default delete behaviour): the first
// sync sets NEW_VERSION_BEHAVIOR on every family, also over a value set to
// false. Beside the rows, the sync table holds one digest per row (0x01 and
// 32 bytes), the state table the table's state and, after the run, a
// released lock.
TEST_F(HBaseCliTest, SyncSetsNewVersionBehaviorAndKeepsDigestsInTheSyncTable) {
  const std::string table = ns_ + ":nvb";
  made_.push_back(table);
  const std::string mapping =
      WriteMapping("n.yaml", OrdersMapping(table, "{parts: [{column: order_id, width: 6}]}"));
  CommandResult r = Widen(fmt::format("migrate -q -m {} --target {}", ShellQuote(mapping), hbase_));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto behaviour = [&]() {
    RawHBase raw(hbase_);
    thrift2::TTableDescriptor d = raw.Describe(table);
    EXPECT_EQ(d.columns.size(), 1u);
    auto it = d.columns[0].attributes.find("NEW_VERSION_BEHAVIOR");
    return it == d.columns[0].attributes.end() ? std::string("unset") : it->second;
  };
  EXPECT_EQ(behaviour(), "unset") << "migrate keeps HBase's default";
  r = Widen(fmt::format("sync -q -m {} --target {}", ShellQuote(mapping), hbase_));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(behaviour(), "true");
  {
    RawHBase raw(hbase_);
    thrift2::TTableDescriptor d = raw.Describe(table);
    d.columns[0].attributes["NEW_VERSION_BEHAVIOR"] = "false";
    raw->modifyTable(d);
  }
  ASSERT_EQ(behaviour(), "false");
  r = Widen(fmt::format("sync -q -m {} --target {}", ShellQuote(mapping), hbase_));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(behaviour(), "true");

  RawHBase raw(hbase_);
  const std::string prefix = table + std::string("\0d", 2);
  thrift2::TScan scan;
  scan.__set_startRow(prefix);
  scan.__set_stopRow(table + std::string("\0e", 2));
  std::vector<thrift2::TResult> rows;
  raw->getScannerResults(rows, "widen:sync", scan, 100000);
  const auto ids = PgQuery(db_url_, "SELECT order_id FROM service_order ORDER BY order_id");
  ASSERT_EQ(rows.size(), ids.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].row, prefix + fmt::format("{:06}", std::stoll(ids[i][0])));
    ASSERT_EQ(rows[i].columnValues.size(), 1u);
    EXPECT_EQ(rows[i].columnValues[0].qualifier, "v");
    EXPECT_EQ(rows[i].columnValues[0].value.size(), 33u);
    EXPECT_EQ(rows[i].columnValues[0].value[0], '\x01');
  }
  thrift2::TGet get;
  get.row = table;
  thrift2::TResult state;
  raw->get(state, "widen:state", get);
  std::map<std::string, std::string> cells;
  for (const auto& c : state.columnValues) cells[c.family + ":" + c.qualifier] = c.value;
  EXPECT_EQ(cells.count("s:v"), 1u);
  ASSERT_EQ(cells.count("s:l"), 1u);
  EXPECT_EQ(cells["s:l"], "") << "released";
}

// The lock a sync takes in HBase (docs/format.md, "HBase": the lease in
// the cell s:l of the table's row in widen:state), as another machine's
// run would leave it: while it lasts a sync exits 7 naming the holder and
// writes nothing; once it expired, or for a process of this machine that
// is gone, a sync takes it at once.
TEST_F(HBaseCliTest, ALockHeldElsewhereMakesSyncAndMigrateExitBusyUntilItExpires) {
  const std::string table = ns_ + ":locked";
  made_.push_back(table);
  const std::string mapping =
      WriteMapping("l.yaml", OrdersMapping(table, "{parts: [{column: order_id, width: 6}]}"));
  const std::string sync = fmt::format("sync -q -m {} --target {}", ShellQuote(mapping), hbase_);
  CommandResult r = Widen(sync);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The layout: 0x01, i64 expires_ms, i64 taken_ms, str host, str boot id,
  // str pid namespace, u64 pid, u64 start ticks (i64/u64 big-endian; str a
  // u32 big-endian length and the bytes).
  auto lease = [](int64_t expires_ms, const std::string& host, const std::string& boot,
                  const std::string& pid_ns, uint64_t pid, uint64_t start_ticks = 12345) {
    std::string v(1, '\x01');
    PutFixed64BE(&v, static_cast<uint64_t>(expires_ms));
    PutFixed64BE(&v, 1700000000000);
    for (const std::string* s : {&host, &boot, &pid_ns}) {
      PutFixed32BE(&v, static_cast<uint32_t>(s->size()));
      v += *s;
    }
    PutFixed64BE(&v, pid);
    PutFixed64BE(&v, start_ticks);
    return v;
  };
  auto put_lease = [&](const std::string& value) {
    RawHBase raw(hbase_);
    thrift2::TColumnValue cv;
    cv.__set_family("s");
    cv.__set_qualifier("l");
    cv.__set_value(value);
    thrift2::TPut put;
    put.__set_row(table);
    put.__set_columnValues({cv});
    raw->put("widen:state", put);
  };
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  const auto first = PgQuery(db_url_, "SELECT min(order_id) FROM service_order")[0][0];
  const std::string row = fmt::format("{:06}", std::stoll(first));
  PgQuery(db_url_, "UPDATE service_order SET amount = 1.11 WHERE order_id = " + first);

  put_lease(lease(now_ms + 600000, "elsewhere.example", "another-boot", "pid:[1]", 4242));
  r = Widen(sync);
  EXPECT_EQ(r.exit_code, 7) << r.output;
  EXPECT_NE(r.output.find("table '" + table +
                          "' is being written by another widen run (process 4242 on host "
                          "'elsewhere.example' since 2023-11-14 22:13:20 UTC)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(ReadTable(hbase_, table)[row]["d:amount"], "1.11") << "nothing was written";
  {
    // The state a run leaves while it writes (loading): a reader is told
    // who writes the table now, not that a run did not finish.
    auto store = Store::Open(hbase_, StoreOptions());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto states = (*store)->NewStateStore();
    ASSERT_TRUE(states.ok()) << states.status().ToString();
    auto before = (*states)->Get(table);
    ASSERT_TRUE(before.ok() && before->has_value());
    TableState loading = **before;
    loading.status = TableStatus::kLoading;
    auto v = (*states)->Put(table, (*before)->version, loading);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    CommandResult scan = Widen(fmt::format("scan {} --target {} --limit 1", table, hbase_));
    EXPECT_EQ(scan.exit_code, 0) << scan.output;
    EXPECT_NE(scan.output.find("table '" + table +
                               "' is incomplete: it is being written by another widen run "
                               "(process 4242 on host 'elsewhere.example' since 2023-11-14 "
                               "22:13:20 UTC) right now"),
              std::string::npos)
        << scan.output;
    ASSERT_TRUE((*states)->Put(table, *v, **before).ok());
  }
  // A migrate, whole or one shard of a sharded load, is refused the same way.
  const std::string migrate =
      fmt::format("migrate -q -m {} --target {}", ShellQuote(mapping), hbase_);
  for (const std::string& run : {migrate, migrate + " --shard 2/3"}) {
    r = Widen(run);
    EXPECT_EQ(r.exit_code, 7) << run << "\n" << r.output;
    EXPECT_NE(r.output.find("table '" + table +
                            "' is being written by another widen run (process "
                            "4242 on host 'elsewhere.example'"),
              std::string::npos)
        << r.output;
    EXPECT_NE(ReadTable(hbase_, table)[row]["d:amount"], "1.11") << "nothing was written";
  }
  // A shard's lease (its own row: the table, 0x00, "shard I/N") keeps sync
  // and a whole migrate out, and a second run of that shard, but not the
  // other shards of its load.
  put_lease("");
  {
    RawHBase raw(hbase_);
    thrift2::TColumnValue cv;
    cv.__set_family("s");
    cv.__set_qualifier("l");
    cv.__set_value(lease(now_ms + 600000, "elsewhere.example", "another-boot", "pid:[1]", 4242));
    thrift2::TPut put;
    put.__set_row(table + std::string(1, '\0') + "shard 2/3");
    put.__set_columnValues({cv});
    raw->put("widen:state", put);
  }
  for (const std::string& run : {sync, migrate, migrate + " --shard 2/3"}) {
    r = Widen(run);
    EXPECT_EQ(r.exit_code, 7) << run << "\n" << r.output;
    EXPECT_NE(r.output.find("table '" + table +
                            "' (shard 2/3 of a sharded load) is being written by another widen "
                            "run (process 4242 on host 'elsewhere.example'"),
              std::string::npos)
        << r.output;
    EXPECT_NE(ReadTable(hbase_, table)[row]["d:amount"], "1.11") << "nothing was written";
  }
  {
    RawHBase raw(hbase_);
    thrift2::TColumnValue cv;
    cv.__set_family("s");
    cv.__set_qualifier("l");
    cv.__set_value("");
    thrift2::TPut put;
    put.__set_row(table + std::string(1, '\0') + "shard 2/3");
    put.__set_columnValues({cv});
    raw->put("widen:state", put);
  }

  put_lease(lease(now_ms - 1000, "elsewhere.example", "another-boot", "pid:[1]", 4242));
  r = Widen(sync);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadTable(hbase_, table)[row]["d:amount"], "1.11");

  // A process of this machine (its host, boot and pid namespace) that has
  // ended, whose lease has ten minutes to run.
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::ifstream boot_file("/proc/sys/kernel/random/boot_id");
  std::string boot;
  std::getline(boot_file, boot);
  char ns[128] = {};
  ASSERT_GT(readlink("/proc/self/ns/pid", ns, sizeof ns - 1), 0);
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  put_lease(lease(now_ms + 600000, host, boot, ns, static_cast<uint64_t>(gone)));
  PgQuery(db_url_, "UPDATE service_order SET amount = 2.22 WHERE order_id = " + first);
  r = Widen(sync);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadTable(hbase_, table)[row]["d:amount"], "2.22");

  // A process of this machine with its real start time: while it runs the
  // lease is held; once it has ended — a zombie not yet reaped by its
  // parent (a kill -9 under an init that reaps nothing leaves one), then
  // reaped — it is not.
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  if (child == 0) {
    char c;
    (void)!read(pipe_fds[0], &c, 1);
    _exit(0);
  }
  auto stat_of = [](pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(in, line);
    return line;
  };
  const std::string stat = stat_of(child);
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22; ++i) fields >> field;  // field 22: the start time
  const uint64_t start_ticks = std::stoull(field);
  put_lease(lease(now_ms + 600000, host, boot, ns, static_cast<uint64_t>(child), start_ticks));
  PgQuery(db_url_, "UPDATE service_order SET amount = 3.33 WHERE order_id = " + first);
  r = Widen(sync);
  EXPECT_EQ(r.exit_code, 7) << "the holder runs\n" << r.output;
  EXPECT_EQ(ReadTable(hbase_, table)[row]["d:amount"], "2.22");
  ASSERT_EQ(write(pipe_fds[1], "x", 1), 1);
  for (int i = 0; i < 500; ++i) {
    const std::string now = stat_of(child);
    if (now.size() > now.rfind(')') + 2 && now[now.rfind(')') + 2] == 'Z') break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(stat_of(child)[stat_of(child).rfind(')') + 2], 'Z');
  r = Widen(sync);
  EXPECT_EQ(r.exit_code, 0) << "a zombie holds no lock\n" << r.output;
  EXPECT_EQ(ReadTable(hbase_, table)[row]["d:amount"], "3.33");
  waitpid(child, nullptr, 0);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
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

// The port of a URL such as postgresql://user@127.0.0.1:PORT/db.
std::string PortOf(const std::string& url) {
  std::smatch m;
  if (!std::regex_search(url, m, std::regex(R"(@[^/:]+:(\d+))"))) return "";
  return m[1];
}

// A TCP listener on a free loopback port whose thread answers each
// connection by sending `reply` (may be empty) and closing it at once.
class ClosingListener {
 public:
  explicit ClosingListener(std::string reply) : reply_(std::move(reply)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd_, 8) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      ADD_FAILURE() << "cannot listen on loopback";
      return;
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        const int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;  // the socket was shut down
        if (!reply_.empty()) (void)!write(c, reply_.data(), reply_.size());
        close(c);
      }
    });
  }
  ~ClosingListener() {
    shutdown(fd_, SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    close(fd_);
  }
  int port() const { return port_; }

 private:
  std::string reply_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(HBaseCliTest, AServerThatIsNoThrift2GatewayExits5NamingWhatItFound) {
  WIDEN_REQUIRE_MYSQL(mysql);
  // PostgreSQL reads the request as a startup packet of a bad length and
  // closes the connection; MariaDB sends its greeting first.
  const std::string pg_port = PortOf(PgUrl()), my_port = PortOf(mysql);
  ASSERT_FALSE(pg_port.empty() || my_port.empty()) << PgUrl() << " " << mysql;
  CommandResult r = Widen("scan t --target hbase://127.0.0.1:" + pg_port);
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find("closed it without answering"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("widen needs an HBase Thrift2 gateway"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("No more data to read"), std::string::npos) << r.output;

  const std::string version = MySqlQuery(mysql, "SELECT VERSION()").at(0).at(0);
  r = Widen("migrate -m " +
            WriteMapping("o.yaml", OrdersMapping(ns_ + ":o", "{parts: [{column: order_id}]}")) +
            " --target hbase://127.0.0.1:" + my_port);
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find("a MySQL or MariaDB server's greeting"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(version), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("MaxMessageSize"), std::string::npos) << r.output;

  {
    ClosingListener closing("");
    r = Widen("ddl -m " +
              WriteMapping("c.yaml", OrdersMapping(ns_ + ":c", "{parts: [{column: order_id}]}")) +
              " --apply --target hbase://127.0.0.1:" + std::to_string(closing.port()));
    EXPECT_EQ(r.exit_code, 5) << r.output;
    EXPECT_NE(r.output.find("closed it without answering"), std::string::npos) << r.output;
  }
  {
    // An HTTP server's answer: its first four bytes read as a length.
    ClosingListener http("HTTP/1.1 400 Bad Request\r\n\r\n");
    r = Widen("get t row --target hbase://127.0.0.1:" + std::to_string(http.port()));
    EXPECT_EQ(r.exit_code, 5) << r.output;
    EXPECT_NE(r.output.find("sent \"HTTP/1.1 400 Bad Request\\x0d\\x0a"), std::string::npos)
        << r.output;
  }
  {
    // A negative first word that is no Thrift version.
    ClosingListener garbage(std::string("\xff\xff\x00\x00garbage", 11));
    r = Widen("scan t --target hbase://127.0.0.1:" + std::to_string(garbage.port()));
    EXPECT_EQ(r.exit_code, 5) << r.output;
    EXPECT_NE(r.output.find("\\xff\\xff\\x00\\x00garbage"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace widen::testing
