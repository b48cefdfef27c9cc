// The run layer (cmd/run.h) on a real PostgreSQL: Migrate's figures against
// SQL counts, the table state it records (complete only after the cells,
// failed after an error, loading after a cancel), the fingerprint, and how
// LayOutJobs lays out --jobs from the plan (ranges, key order, lock scope).
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>

#include <fmt/format.h>

#include "cmd/run.h"
#include "store/state_store.h"
#include "store/store.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

constexpr const char* kSchema = R"SQL(
CREATE TABLE parent (id int PRIMARY KEY, name text, small int);
CREATE TABLE child (id int PRIMARY KEY, parent_id int, qty int);
INSERT INTO parent SELECT i, CASE WHEN i % 7 = 0 THEN NULL ELSE 'p' || i END, i % 100
  FROM generate_series(1, 500) AS i;
INSERT INTO child SELECT i, (i % 520) + 1, i % 9 FROM generate_series(1, 1500) AS i;
ANALYZE;
)SQL";

// `{key}`: the key's parts line; `{where}`: a where line or nothing; `{q}`:
// the qualifier of name.
constexpr const char* kMapping = R"YAML(
source: ${{WIDEN_SOURCE_URL}}
tables:
  - name: r:parents
    from: parent
{where}    families: [d, c]
    key:
{key}
    columns:
      - {{column: name, to: "d:{q}"}}
      - {{column: small, to: "d:small", codec: hbase, type: {type}}}
    nest:
      - table: child
        on: {{id: parent_id}}
        family: c
        prefix: c
        id: [{{column: id, width: 6}}]
        columns: [qty]
)YAML";

struct MappingText {
  std::string key = "      parts: [{column: id, width: 6}]";
  std::string where;
  std::string qualifier = "name";
  std::string type = "short";
};

std::string WriteMapping(const std::string& dir, const std::string& file, const MappingText& t) {
  const std::string path = dir + "/" + file;
  std::ofstream(path) << fmt::format(kMapping, fmt::arg("key", t.key), fmt::arg("where", t.where),
                                     fmt::arg("q", t.qualifier), fmt::arg("type", t.type));
  return path;
}

class RunLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = PgUrl();
    if (url_.empty()) {
      if (InCi()) FAIL() << "WIDEN_TEST_PG_URL is not set under CI";
      GTEST_SKIP() << "WIDEN_TEST_PG_URL not set (run through scripts/with-servers.sh)";
    }
    db_ = FreshPgDatabase(url_, "widen_it_run");
    PgQuery(db_, kSchema);
    dir_ = MakeTempDir();
  }

  MigrateRequest Request(const std::string& mapping, const std::string& store) const {
    MigrateRequest r;
    r.design.mapping_path = mapping;
    r.design.source_url = db_;
    r.target_url = store;
    r.timestamp_ms = 1600000000000;
    return r;
  }

  // The recorded state of r:parents in `store`.
  static std::optional<TableState> StateOf(const std::string& store) {
    auto s = Store::Open(store, StoreOptions());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return std::nullopt;
    auto states = (*s)->NewStateStore();
    EXPECT_TRUE(states.ok()) << states.status().ToString();
    if (!states.ok()) return std::nullopt;
    auto got = (*states)->Get("r:parents");
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? *got : std::nullopt;
  }

  uint64_t Count(const std::string& sql) const { return std::stoull(PgQuery(db_, sql)[0][0]); }

  std::string url_, db_, dir_;
};

TEST_F(RunLayerTest, MigrateReturnsTheSourceFiguresAndRecordsTheTableCompleteAfterItsCells) {
  const std::string mapping = WriteMapping(dir_, "m.yaml", MappingText());
  const std::string store = "leveldb:" + dir_ + "/store";
  const MigrateRequest r = Request(mapping, store);
  auto got = Migrate(r);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->tables.size(), 1u);
  const TableStats& t = got->tables[0];
  EXPECT_EQ(t.table, "r:parents");
  EXPECT_EQ(t.source_rows,  // driving and nested rows read
            Count("SELECT (SELECT count(*) FROM parent) + (SELECT count(*) FROM child)"));
  EXPECT_EQ(t.rows, Count("SELECT count(*) FROM parent"));
  // name (NULLs omitted) + small + one nested cell per child with a parent.
  EXPECT_EQ(t.cells, Count("SELECT (SELECT count(name) FROM parent) + (SELECT count(*) FROM "
                           "parent) + (SELECT count(*) FROM child c JOIN parent p ON p.id = "
                           "c.parent_id)"));
  EXPECT_EQ(t.overwritten, 0u);
  EXPECT_EQ(got->rejected, 0u);
  // Cells are there, as counted.
  EXPECT_EQ(ReadCells(store, "r:parents", 1).size(), t.cells);

  std::optional<TableState> state = StateOf(store);
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->status, TableStatus::kComplete);
  EXPECT_EQ(state->run_id, got->run_id);
  EXPECT_FALSE(got->run_id.empty());
  EXPECT_EQ(state->mapping_fingerprint.size(), 16u);
  EXPECT_GT(state->started_ms, 0);
  EXPECT_GE(state->finished_ms, state->started_ms);
  EXPECT_EQ(state->version, 2u);  // loading, then complete

  // The same design again: the same fingerprint; the state moves on.
  auto again = Migrate(r);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  std::optional<TableState> second = StateOf(store);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->mapping_fingerprint, state->mapping_fingerprint);
  EXPECT_EQ(second->version, 4u);

  // Another qualifier is another design: another fingerprint.
  MappingText other;
  other.qualifier = "label";
  auto changed = Migrate(Request(WriteMapping(dir_, "other.yaml", other), store));
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  std::optional<TableState> third = StateOf(store);
  ASSERT_TRUE(third.has_value());
  EXPECT_NE(third->mapping_fingerprint, state->mapping_fingerprint);
}

TEST_F(RunLayerTest, AFailedRunIsRecordedFailedAndACancelledOneStaysLoading) {
  // 70000 does not fit a Java short: the row is rejected, and without a
  // rejects file the reject stops the run after the table was created.
  MappingText bad;
  PgQuery(db_, "UPDATE parent SET small = 70000 WHERE id = 250");
  const std::string store = "leveldb:" + dir_ + "/failed";
  auto failed = Migrate(Request(WriteMapping(dir_, "bad.yaml", bad), store));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kInvalidArgument) << failed.status().ToString();
  std::optional<TableState> state = StateOf(store);
  ASSERT_TRUE(state.has_value()) << failed.status().ToString();
  EXPECT_EQ(state->status, TableStatus::kFailed);
  EXPECT_GT(state->finished_ms, 0);

  // Cancelled before the first row: Cancelled, and the table stays loading.
  std::atomic<bool> cancel{true};
  const std::string cancelled = "leveldb:" + dir_ + "/cancelled";
  MigrateRequest r = Request(WriteMapping(dir_, "m.yaml", MappingText()), cancelled);
  r.cancel = &cancel;
  auto got = Migrate(r);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kCancelled) << got.status().ToString();
  EXPECT_NE(got.status().message().find("r:parents"), std::string::npos);
  state = StateOf(cancelled);
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->status, TableStatus::kLoading);
  EXPECT_EQ(state->finished_ms, 0);
}

TEST_F(RunLayerTest, JobsAreLaidOutFromThePlan) {
  DesignRequest dr;
  dr.source_url = db_;
  dr.mapping_path = WriteMapping(dir_, "m.yaml", MappingText());
  auto design = LoadDesign(dr);
  ASSERT_TRUE(design.ok()) << design.status().ToString();
  auto layout = LayOutJobs(**design, 3, nullptr);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  ASSERT_EQ(layout->splits.size(), 1u);
  EXPECT_EQ(layout->splits[0].ranges.size(), 3u);
  EXPECT_EQ(layout->splits[0].column, "parent.id");
  EXPECT_TRUE(layout->splits[0].in_key_order);  // the key is the split column
  EXPECT_EQ(layout->sources.size(), 3u);
  // The lock's scope: the tables the scans read, once each; no SQL text.
  EXPECT_EQ(layout->reads.tables, (std::vector<std::string>{"parent", "child"}));
  EXPECT_FALSE(layout->reads.sql_text);

  // A `where` is SQL text that may read any table; a salted key does not
  // follow the ranges, so its jobs sort instead of spooling.
  MappingText salted;
  salted.key = "      salt: {buckets: 4}\n      parts: [{column: id, width: 6}]";
  salted.where = "    where: \"small < 90\"\n";
  dr.mapping_path = WriteMapping(dir_, "salted.yaml", salted);
  design = LoadDesign(dr);
  ASSERT_TRUE(design.ok()) << design.status().ToString();
  layout = LayOutJobs(**design, 2, nullptr);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->splits[0].ranges.size(), 2u);
  EXPECT_FALSE(layout->splits[0].in_key_order);
  EXPECT_TRUE(layout->reads.sql_text);

  // One job: no sibling, no lock.
  layout = LayOutJobs(**design, 1, nullptr);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->sources.size(), 1u);
  EXPECT_TRUE(layout->reads.tables.empty());
}

TEST_F(RunLayerTest, TheTargetIsCheckedBeforeTheSourceIsOpened) {
  MigrateRequest r = Request(WriteMapping(dir_, "m.yaml", MappingText()), "");
  r.design.source_url = "postgresql://nobody@127.0.0.1:1/none";
  auto got = Migrate(r);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << got.status().ToString();
  EXPECT_NE(got.status().message().find("no target"), std::string::npos);
}

}  // namespace
}  // namespace widen::testing
