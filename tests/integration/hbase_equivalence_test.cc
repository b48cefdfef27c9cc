// The same mapping migrated from PostgreSQL, and from MariaDB, into the
// embedded store and into the real HBase (scripts/with-servers.sh --pg
// --mysql --hbase) gives the same tables: for every example in examples/
// and for Chinook, on each engine, the same cells (every version, read
// through the Store API of each), the same families and metadata, and
// `widen scan` / `widen get` print the same text. The MariaDB runs write
// their HBase tables under namespaces prefixed "my" (PrefixedMapping), so
// that both engines' tests can run at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/bytes.h"
#include "store/state_store.h"
#include "store/store.h"
#include "tests/integration/hbase_env.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

constexpr int64_t kRunTimestampMs = 1700000000000;
constexpr int kAllVersions = 1 << 20;

// Every example folder with a mapping.yaml, by name.
std::vector<std::string> Examples() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(SourceDir() + "/examples")) {
    if (std::filesystem::exists(e.path() / "mapping.yaml")) {
      names.push_back(e.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool operator==(const CellRecord& a, const CellRecord& b) {
  return a.row == b.row && a.column == b.column && a.timestamp_ms == b.timestamp_ms &&
         a.value == b.value;
}

std::string Show(const CellRecord& c) {
  return fmt::format("{} {} @{} = {}", ToStringBinary(c.row), ToStringBinary(c.column),
                     c.timestamp_ms, ToStringBinary(c.value.substr(0, 60)));
}

// An example (or Chinook) on one source engine.
struct Case {
  std::string example;
  bool mysql = false;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.example << (c.mysql ? " from MariaDB" : " from PostgreSQL");
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const std::string& e : Examples()) {
    cases.push_back({e, false});
    cases.push_back({e, true});
  }
  return cases;
}

class HBaseEquivalenceTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    WIDEN_REQUIRE_HBASE(hbase);
    hbase_ = hbase;
    const std::string example = GetParam().example;
    const std::string dir = SourceDir() + "/examples/" + example + "/";
    const bool chinook = !std::filesystem::exists(dir + "schema.pg.sql");
    if (chinook) {
      const std::string sql =
          DatasetsDir() + "/" + example +
          (GetParam().mysql ? "/mysql/Chinook_MySql.sql" : "/postgresql/Chinook_PostgreSql.sql");
      ASSERT_TRUE(std::filesystem::exists(sql))
          << sql << " is missing: set WIDEN_DATASETS to the shared datasets folder";
    }
    if (GetParam().mysql) {
      WIDEN_REQUIRE_MYSQL(my);
      db_url_ = FreshMySqlDatabase(my, "widen_it_hbase_" + example);
      if (chinook) {
        RunMySqlFile(db_url_, DatasetsDir() + "/" + example + "/mysql/Chinook_MySql.sql",
                     /*strip_database_switch=*/true);
      } else {
        RunMySqlFile(db_url_, dir + "schema.mysql.sql");
        RunMySqlFile(db_url_, dir + "data.mysql.sql");
      }
      const std::string mapping = dir + (chinook ? "mapping.mysql.yaml" : "mapping.yaml");
      mapping_ = PrefixedMapping(mapping, "my", MakeTempDir());
    } else {
      WIDEN_REQUIRE_PG(pg);
      db_url_ = FreshPgDatabase(pg, "widen_it_hbase_" + example);
      if (chinook) {
        RunPsqlScript(db_url_,
                      DatasetsDir() + "/" + example + "/postgresql/Chinook_PostgreSql.sql");
      } else {
        RunPsqlFile(db_url_, dir + "schema.pg.sql");
        RunPsqlFile(db_url_, dir + "data.pg.sql");
      }
      mapping_ = dir + "mapping.yaml";
    }
    leveldb_ = "leveldb:" + MakeTempDir() + "/store";
  }

  CommandResult Migrate(const std::string& target) {
    return RunCommand(
        fmt::format("WIDEN_SOURCE_URL={} {} migrate -q -m {} --target {} "
                    "--timestamp-ms {}",
                    ShellQuote(db_url_), WidenBinary(), ShellQuote(mapping_), ShellQuote(target),
                    kRunTimestampMs));
  }

  CommandResult Widen(const std::string& args, const std::string& target) {
    return RunCommand(fmt::format("{} {} --target {}", WidenBinary(), args, ShellQuote(target)));
  }

  std::string hbase_, db_url_, mapping_, leveldb_;
};

TEST_P(HBaseEquivalenceTest, SameCellsAndOutputAsTheEmbeddedStore) {
  CommandResult r = Migrate(leveldb_);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<TableDescriptor> tables;
  {
    auto store = Store::Open(leveldb_, StoreOptions());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto listed = (*store)->ListTables();
    ASSERT_TRUE(listed.ok()) << listed.status().ToString();
    tables = *listed;
  }
  ASSERT_FALSE(tables.empty());
  {
    RawHBase raw(hbase_);  // tables of an earlier run against the same HBase
    for (const auto& t : tables) raw.DropTable(t.FullName());
  }
  r = Migrate(hbase_);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  auto hbase = Store::Open(hbase_, StoreOptions());
  ASSERT_TRUE(hbase.ok()) << hbase.status().ToString();
  for (const TableDescriptor& want : tables) {
    const std::string name = want.FullName();
    SCOPED_TRACE(name);
    auto got = (*hbase)->DescribeTable(name);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(CheckSameTable(*got, want, "HBase").ok());
    EXPECT_TRUE(CheckSameTable(want, *got, "the embedded store").ok());
    EXPECT_EQ(got->metadata.at("widen.key"), want.metadata.at("widen.key"));
    // Both stores record the table complete in their table state.
    for (const std::string& url : {leveldb_, hbase_}) {
      StoreOptions so;
      so.create_if_missing = false;
      auto store = Store::Open(url, so);
      ASSERT_TRUE(store.ok()) << store.status().ToString();
      auto states = (*store)->NewStateStore();
      ASSERT_TRUE(states.ok()) << states.status().ToString();
      auto state = (*states)->Get(name);
      ASSERT_TRUE(state.ok()) << state.status().ToString();
      ASSERT_TRUE(state->has_value()) << url;
      EXPECT_EQ((*state)->status, TableStatus::kComplete) << url;
    }

    const std::vector<CellRecord> from_leveldb = ReadCells(leveldb_, name, kAllVersions);
    const std::vector<CellRecord> from_hbase = ReadCells(hbase_, name, kAllVersions);
    ASSERT_FALSE(from_leveldb.empty());
    EXPECT_EQ(from_hbase.size(), from_leveldb.size());
    for (size_t i = 0; i < std::min(from_hbase.size(), from_leveldb.size()); ++i) {
      if (!(from_hbase[i] == from_leveldb[i])) {
        ADD_FAILURE() << "cell " << i << ": HBase " << Show(from_hbase[i]) << "; embedded store "
                      << Show(from_leveldb[i]);
        break;
      }
    }

    // What a user sees: scan (every version, keys decoded) and get.
    const std::string scan = fmt::format("scan {} --versions 1000 --decode", name);
    const CommandResult scan_leveldb = Widen(scan, leveldb_);
    const CommandResult scan_hbase = Widen(scan, hbase_);
    ASSERT_EQ(scan_leveldb.exit_code, 0) << scan_leveldb.output;
    EXPECT_EQ(scan_hbase.exit_code, 0);
    EXPECT_EQ(scan_hbase.output, scan_leveldb.output);
    const std::string get = fmt::format("get {} {} --versions 1000 --decode", name,
                                        ShellQuote(ToStringBinary(from_leveldb.back().row)));
    const CommandResult get_leveldb = Widen(get, leveldb_);
    ASSERT_EQ(get_leveldb.exit_code, 0) << get_leveldb.output;
    EXPECT_EQ(Widen(get, hbase_).output, get_leveldb.output);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, HBaseEquivalenceTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           return p.param.example + (p.param.mysql ? "_MariaDB" : "_PostgreSQL");
                         });

}  // namespace
}  // namespace widen::testing
