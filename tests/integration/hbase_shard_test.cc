// migrate --shard I/N into the real HBase (scripts/with-servers.sh --pg
// --mysql --hbase), on both source engines: three widen processes load
// Chinook together, two of them at the same moment, the third in two jobs;
// the tables are recorded complete only once all three shards finished; and
// the union is, cell by cell (every version), what one migrate writes into
// the embedded store.
// An unfinished load refuses a shard of another count; --shard is refused
// for the embedded store and for sync. The tables are written under
// namespaces of this test's own (PrefixedMapping).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <random>
#include <string>
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
constexpr int kAllVersions = 1 << 20;

bool operator==(const CellRecord& a, const CellRecord& b) {
  return a.row == b.row && a.column == b.column && a.timestamp_ms == b.timestamp_ms &&
         a.value == b.value;
}

std::string Show(const CellRecord& c) {
  return fmt::format("{} {} @{} = {}", ToStringBinary(c.row), ToStringBinary(c.column),
                     c.timestamp_ms, ToStringBinary(c.value.substr(0, 60)));
}

class HBaseShardTest : public ::testing::TestWithParam<bool> {
 protected:
  bool mysql() const { return GetParam(); }

  void SetUp() override {
    WIDEN_REQUIRE_HBASE(hbase);
    hbase_ = hbase;
    const std::string sql =
        DatasetsDir() + (mysql() ? "/chinook/mysql/Chinook_MySql.sql"
                                 : "/chinook/postgresql/Chinook_PostgreSql.sql");
    ASSERT_TRUE(std::filesystem::exists(sql))
        << sql << " is missing: set WIDEN_DATASETS to the shared datasets folder";
    std::string mapping = SourceDir() + "/examples/chinook/mapping.yaml";
    if (mysql()) {
      WIDEN_REQUIRE_MYSQL(my);
      db_url_ = FreshMySqlDatabase(my, "widen_it_shard");
      RunMySqlFile(db_url_, sql, /*strip_database_switch=*/true);
      mapping = SourceDir() + "/examples/chinook/mapping.mysql.yaml";
    } else {
      WIDEN_REQUIRE_PG(pg);
      db_url_ = FreshPgDatabase(pg, "widen_it_shard");
      RunPsqlScript(db_url_, sql);
    }
    const std::string prefix = fmt::format("sh{}{}", mysql() ? "my" : "pg", UniqueTag());
    mapping_ = PrefixedMapping(mapping, prefix, MakeTempDir(), &tables_);
    ASSERT_EQ(tables_.size(), 2u);
    leveldb_ = "leveldb:" + MakeTempDir() + "/store";
  }

  void TearDown() override {
    if (hbase_.empty()) return;
    RawHBase raw(hbase_);
    for (const auto& t : tables_) raw.DropTable(t);
  }

  // widen migrate into `target`, run under `wrapper` (e.g. "timeout ...").
  std::string Migrate(const std::string& target, const std::string& args = "",
                      const std::string& wrapper = "") {
    return fmt::format("WIDEN_SOURCE_URL={} {} {} migrate -m {} --target {} --timestamp-ms {} {}",
                       ShellQuote(db_url_), wrapper, WidenBinary(), ShellQuote(mapping_),
                       ShellQuote(target), kRunTimestampMs, args);
  }

  std::string Shard(int i, int n, const std::string& more = "", const std::string& wrapper = "") {
    return Migrate(hbase_, fmt::format("--shard {}/{} {}", i, n, more), wrapper);
  }

  // The table's state as the HBase state table holds it.
  std::optional<TableState> State(const std::string& table) {
    auto store = Store::Open(hbase_, StoreOptions());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return std::nullopt;
    auto states = (*store)->NewStateStore();
    EXPECT_TRUE(states.ok()) << states.status().ToString();
    auto state = (*states)->Get(table);
    EXPECT_TRUE(state.ok()) << state.status().ToString();
    return state.ok() ? *state : std::nullopt;
  }

  std::string hbase_, db_url_, mapping_, leveldb_;
  std::vector<std::string> tables_;
};

TEST_P(HBaseShardTest, ThreeProcessesLoadWhatOneRunLoads) {
  CommandResult r = RunCommand(Migrate(leveldb_, "-q"));
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // Shards 1 and 3 start at the same moment: one lays the load out, the
  // other joins it.
  auto first = std::async(std::launch::async, [&] { return RunCommand(Shard(1, 3)); });
  auto third = std::async(std::launch::async, [&] { return RunCommand(Shard(3, 3)); });
  const CommandResult one = first.get(), three = third.get();
  ASSERT_EQ(one.exit_code, 0) << one.output;
  ASSERT_EQ(three.exit_code, 0) << three.output;
  EXPECT_NE(one.output.find("shard 1/3 of load"), std::string::npos) << one.output;
  uint64_t versions_before = 0;
  for (const std::string& table : tables_) {
    SCOPED_TRACE(table);
    std::optional<TableState> s = State(table);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->status, TableStatus::kLoading);
    EXPECT_EQ(s->finished_ranges.size(), 2u);
    // The layout as docs/format.md draws it: 3 shards, cut on an integer
    // column, the run's timestamp.
    const auto layout = nlohmann::json::parse(s->extensions.at("widen.shards"));
    EXPECT_EQ(layout.at("shards"), 3);
    EXPECT_FALSE(layout.at("column").get<std::string>().empty());
    EXPECT_EQ(layout.at("timestamp_ms"), kRunTimestampMs);
    EXPECT_EQ(s->extensions.at("widen.timestamp_ms"), std::to_string(kRunTimestampMs));
    versions_before += s->version;
    // Readers are told the table is not whole yet.
    r = RunCommand(
        fmt::format("{} scan {} --target {} --limit 1", WidenBinary(), table, ShellQuote(hbase_)));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("is incomplete"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(fmt::format("is incomplete: shard 2/3 of sharded load {} has not "
                                        "finished (2 of 3 shard(s) finished)",
                                        layout.at("load").get<std::string>())),
              std::string::npos)
        << r.output;
  }

  // A shard of another count does not mix into the unfinished load.
  r = RunCommand(Shard(1, 2));
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find("in the middle of a load in 3 shards"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("shards finished: 1, 3"), std::string::npos) << r.output;
  uint64_t versions_after = 0;
  for (const std::string& table : tables_) versions_after += State(table)->version;
  EXPECT_EQ(versions_after, versions_before) << "the refused run changed a state";

  // The last shard splits its ranges further into two jobs.
  const CommandResult two = RunCommand(Shard(2, 3, "--jobs 2"));
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_NE(two.output.find("2 jobs, by ranges of"), std::string::npos) << two.output;
  EXPECT_NE(two.output.find("every shard finished: the table is complete"), std::string::npos)
      << two.output;

  for (const std::string& table : tables_) {
    SCOPED_TRACE(table);
    std::optional<TableState> s = State(table);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->status, TableStatus::kComplete);
    EXPECT_EQ(s->finished_ranges.size(), 3u);
    const std::vector<CellRecord> single = ReadCells(leveldb_, table, kAllVersions);
    const std::vector<CellRecord> sharded = ReadCells(hbase_, table, kAllVersions);
    ASSERT_GT(single.size(), 400u);
    EXPECT_EQ(sharded.size(), single.size());
    for (size_t i = 0; i < std::min(single.size(), sharded.size()); ++i) {
      if (!(sharded[i] == single[i])) {
        ADD_FAILURE() << "cell " << i << ": sharded " << Show(sharded[i]) << "; one run "
                      << Show(single[i]);
        break;
      }
    }
  }
}

// kill -9 of a shard at seeded moments of its run, three times; run again,
// it joins the unfinished load, and the other shard completes it: the
// tables equal one run.
TEST_P(HBaseShardTest, AShardKilledAnywhereRunsAgainAndTheLoadCompletes) {
  CommandResult r = RunCommand(Migrate(leveldb_, "-q"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // A whole run without --shard, for the length of a run (its state is no
  // sharded load's: the shards below start a new one).
  const auto t0 = std::chrono::steady_clock::now();
  r = RunCommand(Migrate(hbase_, "-q"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  {
    RawHBase raw(hbase_);
    for (const auto& t : tables_) raw.DropTable(t);
  }
  std::mt19937 rng(1402);
  for (int kill = 0; kill < 3; ++kill) {
    const double at = run_s * std::uniform_real_distribution<double>(0.1, 0.9)(rng);
    r = RunCommand(Shard(1, 2, "-q", fmt::format("timeout -s KILL {:.2f}", at)));
    EXPECT_TRUE(r.exit_code == 137 || r.exit_code == 0) << r.output;
  }
  // Run again after the kills, it joins the unfinished load; the other
  // shard completes it.
  r = RunCommand(Shard(1, 2));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 of 2 shard(s) finished"), std::string::npos) << r.output;
  r = RunCommand(Shard(2, 2));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("every shard finished: the table is complete"), std::string::npos)
      << r.output;
  for (const std::string& table : tables_) {
    SCOPED_TRACE(table);
    std::optional<TableState> s = State(table);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->status, TableStatus::kComplete);
    const std::vector<CellRecord> single = ReadCells(leveldb_, table, kAllVersions);
    const std::vector<CellRecord> sharded = ReadCells(hbase_, table, kAllVersions);
    EXPECT_EQ(sharded.size(), single.size());
    for (size_t i = 0; i < std::min(single.size(), sharded.size()); ++i) {
      if (!(sharded[i] == single[i])) {
        ADD_FAILURE() << "cell " << i << ": sharded " << Show(sharded[i]) << "; one run "
                      << Show(single[i]);
        break;
      }
    }
  }
}

TEST_P(HBaseShardTest, ShardsAreRefusedWhereTheyCannotWork) {
  // The embedded store is one process's.
  CommandResult r = RunCommand(Migrate(leveldb_, "--shard 1/2"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("written by one process at a time"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(leveldb_.substr(8))) << "the store was created";
  // A sync is never sharded.
  r = RunCommand(fmt::format("WIDEN_SOURCE_URL={} {} sync -m {} --target {} --shard 1/2",
                             ShellQuote(db_url_), WidenBinary(), ShellQuote(mapping_),
                             ShellQuote(hbase_)));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("widen sync cannot be sharded"), std::string::npos) << r.output;
  for (const char* bad : {"0/2", "3/2", "2", "1/0", "a/b"}) {
    r = RunCommand(Migrate(hbase_, std::string("--shard ") + bad));
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find(std::string("--shard ") + bad + ":"), std::string::npos) << r.output;
  }
  RawHBase raw(hbase_);
  for (const std::string& t : tables_) EXPECT_FALSE(raw.TableExists(t)) << t;
}

INSTANTIATE_TEST_SUITE_P(Engines, HBaseShardTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "MariaDB" : "PostgreSQL";
                         });

}  // namespace
}  // namespace widen::testing
