// Replace mode end to end (transform/row_builder.h, docs/format.md "Rows
// written in replace mode"): a table loaded once, the source changed (a value
// set to NULL, a nested row deleted, one added, a row left with no value at
// all), then the rows written again in replace mode at a later timestamp. The
// target must then hold exactly the cells the changed source gives — as SQL
// on the source says — in the embedded store and in HBase, which apply the
// delete markers themselves; without replace mode the stale cells stay.
// Both engines; the assembler runs in-process.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "common/table_descriptor.h"
#include "extract/source.h"
#include "mapping/mapping.h"
#include "store/store.h"
#include "tests/integration/test_env.h"
#include "transform/assembler.h"
#include "transform/plan.h"
#ifdef WIDEN_WITH_HBASE
#include "tests/integration/hbase_env.h"
#endif

namespace widen::testing {
namespace {

enum class Engine { kPostgres, kMySql };
enum class Target { kLevelDb, kHBase };

class ReplaceModeTest : public ::testing::TestWithParam<std::tuple<Engine, Target>> {
 protected:
  void SetUp() override {
    const std::vector<std::string> schema = {
        "CREATE TABLE cust (id INT PRIMARY KEY, name VARCHAR(20), region VARCHAR(20))",
        "CREATE TABLE ord (id INT PRIMARY KEY, cust_id INT NOT NULL, amount INT NOT NULL)",
        "INSERT INTO cust VALUES (1, 'Ana', 'south'), (2, 'Bo', 'north'), (3, 'Cy', NULL)",
        "INSERT INTO ord VALUES (10, 1, 5), (11, 1, 7), (12, 2, 9)"};
    if (pg()) {
      WIDEN_REQUIRE_PG(url);
      db_ = FreshPgDatabase(url, "widen_it_replace");
      for (const auto& s : schema) PgQuery(db_, s);
    } else {
      WIDEN_REQUIRE_MYSQL(url);
      db_ = FreshMySqlDatabase(url, "widen_it_replace");
      std::vector<std::string> all = schema;
      all.push_back("SELECT 1");
      MySqlQuery(db_, all);
    }
    dir_ = MakeTempDir();
    if (std::get<1>(GetParam()) == Target::kHBase) {
      const char* hbase = std::getenv("WIDEN_TEST_HBASE_URL");
      if (hbase == nullptr || *hbase == '\0') {
        if (InCi()) FAIL() << "WIDEN_TEST_HBASE_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_HBASE_URL not set (run through scripts/with-servers.sh)";
      }
      target_ = hbase;
      // A table of its own per engine and process in the shared HBase.
      table_ = fmt::format("widen_it:replace_{}_{}", pg() ? "pg" : "my", UniqueTag());
      DropHBaseTable();
    } else {
      target_ = "leveldb:" + dir_ + "/store";
      table_ = "t:cust";
    }
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    if (!target_.empty() && target_.rfind("hbase:", 0) == 0) DropHBaseTable();
  }

  void DropHBaseTable() {
#ifdef WIDEN_WITH_HBASE
    RawHBase(target_).DropTable(table_);
#endif
  }

  bool pg() const { return std::get<0>(GetParam()) == Engine::kPostgres; }
  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    return pg() ? PgQuery(db_, sql) : MySqlQuery(db_, sql);
  }
  void Exec(const std::string& sql) {
    if (pg()) {
      PgQuery(db_, sql);
    } else {
      MySqlQuery(db_, std::vector<std::string>{sql, "SELECT 1"});
    }
  }

  // Loads the table from the source at `timestamp_ms`, in replace mode or not.
  Status Load(bool replace, int64_t timestamp_ms, TableStats* stats) {
    const std::string yaml = fmt::format(R"YAML(
source: {}
tables:
  - name: {}
    from: cust
    families: [c, o]
    key:
      parts: [{{column: id, width: 5}}]
    columns:
      - {{column: name, to: "c:name"}}
      - {{column: region, to: "c:region"}}
    nest:
      - table: ord
        on: {{id: cust_id}}
        family: o
        prefix: o
        id: [id]
        columns: [amount]
)YAML",
                                         db_, table_);
    WIDEN_ASSIGN_OR_RETURN(Mapping mapping, ParseMapping(yaml, "m.yaml"));
    WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<Source> source, Source::Open(db_, SourceOptions()));
    WIDEN_ASSIGN_OR_RETURN(SourceSchema schema, source->Introspect());
    WIDEN_ASSIGN_OR_RETURN(Plan plan, Plan::Make(mapping, schema, source.get()));
    const TablePlan& tp = plan.tables.front();
    StoreOptions so;
    so.create_if_missing = true;
    WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open(target_, so));
    WIDEN_RETURN_IF_ERROR(store->CreateTable(tp.descriptor));
    WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<CellSink> sink, store->NewSink(table_));
    AssembleOptions ao;
    ao.timestamp_ms = timestamp_ms;
    ao.replace = replace;
    WIDEN_RETURN_IF_ERROR(Assemble(tp, source.get(), sink.get(), ao, stats));
    return sink->Close();
  }

  // What the source gives now, by SQL: row key -> column -> value.
  TableCells Expected() {
    TableCells want;
    for (const auto& r : Query("SELECT id, name, region FROM cust")) {
      const std::string key = fmt::format("{:05d}", std::stoi(r[0]));
      if (r[1] != "<NULL>" && !r[1].empty()) want[key]["c:name"] = r[1];
      if (r[2] != "<NULL>" && !r[2].empty()) want[key]["c:region"] = r[2];
    }
    for (const auto& r : Query("SELECT cust_id, id, amount FROM ord")) {
      want[fmt::format("{:05d}", std::stoi(r[0]))]["o:o" + r[1]] = "{\"amount\":" + r[2] + "}";
    }
    return want;
  }

  // The source changes between the two loads.
  void ChangeSource() {
    Exec("UPDATE cust SET region = NULL WHERE id = 1");
    Exec("UPDATE cust SET name = 'Bob' WHERE id = 2");
    Exec("UPDATE cust SET name = NULL WHERE id = 3");  // no value, no order: no row
    Exec("DELETE FROM ord WHERE id = 11");
    Exec("INSERT INTO ord VALUES (13, 2, 1)");
  }

  std::string db_, dir_, target_, table_;
};

INSTANTIATE_TEST_SUITE_P(
    Engines, ReplaceModeTest,
    ::testing::Combine(::testing::Values(Engine::kPostgres, Engine::kMySql),
                       ::testing::Values(Target::kLevelDb, Target::kHBase)),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == Engine::kPostgres ? "PostgreSQL" : "MySQL") +
             (std::get<1>(info.param) == Target::kLevelDb ? "LevelDb" : "HBase");
    });

TEST_P(ReplaceModeTest, TheTargetHoldsExactlyTheChangedSourceRows) {
  TableStats first;
  Status s = Load(false, 1000, &first);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(ReadTable(target_, table_), Expected());

  ChangeSource();
  TableStats second;
  s = Load(true, 2000, &second);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ReadTable(target_, table_), Expected());
  // Every live cell is one of the new run's, whose puts the markers at 1999
  // did not mask.
  for (const CellRecord& c : ReadCells(target_, table_, 5)) {
    EXPECT_EQ(c.timestamp_ms, 2000) << c.row << " " << c.column;
  }
  // Rows with no value and no nested row, by SQL: written as markers only.
  const auto empty = Query(
      "SELECT COUNT(*) FROM cust WHERE name IS NULL AND region IS NULL AND NOT EXISTS "
      "(SELECT 1 FROM ord WHERE ord.cust_id = cust.id)");
  EXPECT_EQ(std::to_string(second.empty_rows), empty.at(0).at(0));
  EXPECT_EQ(second.rejected, 0u);
  // Two markers per source row (families c and o) besides the puts.
  const auto rows = Query("SELECT COUNT(*) FROM cust");
  uint64_t puts = 0;
  for (const auto& [row, columns] : Expected()) puts += columns.size();
  EXPECT_EQ(second.cells, puts + 2 * std::stoull(rows.at(0).at(0)));
}

// The control: written again without replace mode, what the source lost
// stays in the target (migrate never deletes).
TEST_P(ReplaceModeTest, WithoutReplaceModeStaleCellsStay) {
  TableStats stats;
  Status s = Load(false, 1000, &stats);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ChangeSource();
  s = Load(false, 2000, &stats);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const TableCells got = ReadTable(target_, table_);
  EXPECT_NE(got, Expected());
  ASSERT_TRUE(got.count("00001"));
  EXPECT_EQ(got.at("00001").count("c:region"), 1u);
  EXPECT_EQ(got.at("00001").count("o:o11"), 1u);
  EXPECT_EQ(got.count("00003"), 1u);
}

}  // namespace
}  // namespace widen::testing
