// The sharded load's protocol (cmd/shard_load.h) on a real state store (the
// embedded store's StateStore, in-process; the HBase one keeps the same
// bytes by checkAndMutate, tests/integration/hbase_shard_test.cc): --shard
// parsing, the layout as docs/format.md draws it, the shards' ranges by the
// documented formula, joining and refusing loads, and when a table is
// complete.
#include "cmd/shard_load.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "store/leveldb_store.h"
#include "store/state_store.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

constexpr char kTable[] = "shop:orders";
constexpr char kSource[] = "orders";

// A layout of 3 shards over orders.order_id in [1, 100].
ShardLayout Layout(const std::string& load = "run-a") {
  ShardLayout l;
  l.load = load;
  l.shards = 3;
  l.column = "orders.order_id";
  l.min = 1;
  l.max = 100;
  l.timestamp_ms = 1700000000000;
  return l;
}

TEST(ShardSpecTest, ParsesIOfNAndNamesWhatIsWrong) {
  auto s = ParseShardSpec("2/3");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 3);
  EXPECT_TRUE(ParseShardSpec("1/1").ok());
  EXPECT_TRUE(ParseShardSpec("1024/1024").ok());
  for (const char* bad : {"0/3", "4/3", "1/0", "1/1025", "3", "a/3", "1/3x", "/3", "1/", "-1/3"}) {
    auto r = ParseShardSpec(bad);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(r.status().message().rfind(std::string("--shard ") + bad + ": ", 0), 0u)
        << r.status().message();
  }
}

TEST(ShardLayoutTest, RoundTripsAndRefusesWhatItDidNotWrite) {
  const std::string text = EncodeShardLayout(Layout());
  EXPECT_EQ(text, R"({"column":"orders.order_id","load":"run-a","max":100,"min":1,"shards":3,)"
                  R"("timestamp_ms":1700000000000})");
  auto back = DecodeShardLayout(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->load, "run-a");
  EXPECT_EQ(back->shards, 3);
  EXPECT_EQ(back->column, "orders.order_id");
  EXPECT_EQ(back->min, 1);
  EXPECT_EQ(back->max, 100);
  EXPECT_EQ(back->timestamp_ms, 1700000000000);
  for (const char* bad :
       {"", "[]", "{", R"({"load":"a","shards":3,"column":"c","min":1,"max":9})",
        R"({"load":"a","shards":"3","column":"c","min":1,"max":9,"timestamp_ms":0})",
        R"({"load":"a","shards":0,"column":"c","min":1,"max":9,"timestamp_ms":0})",
        R"({"load":"a","shards":3,"column":"c","min":1,"max":2,"timestamp_ms":0})"}) {
    EXPECT_EQ(DecodeShardLayout(bad).status().code(), StatusCode::kDataLoss) << bad;
  }
}

TEST(ShardLayoutTest, ShardRangesFollowTheFormulaAndCoverEveryRow) {
  // lo(j) = min + (max - min + 1) * j / N: 1 + 100 * 1 / 3 = 34, 1 + 200 / 3 = 67.
  const ShardLayout l = Layout();
  const FinishedRange one = ShardRange(l, kSource, 1);
  const FinishedRange two = ShardRange(l, kSource, 2);
  const FinishedRange three = ShardRange(l, kSource, 3);
  EXPECT_EQ(one.source_table, kSource);
  EXPECT_EQ(one.columns, std::vector<std::string>{"orders.order_id"});
  EXPECT_FALSE(one.has_lo);
  ASSERT_TRUE(one.has_hi);
  EXPECT_EQ(one.hi[0].as_int(), 34);
  EXPECT_FALSE(one.with_null);
  ASSERT_TRUE(two.has_lo && two.has_hi);
  EXPECT_EQ(two.lo[0].as_int(), 34);
  EXPECT_EQ(two.hi[0].as_int(), 67);
  ASSERT_TRUE(three.has_lo);
  EXPECT_EQ(three.lo[0].as_int(), 67);
  EXPECT_FALSE(three.has_hi);
  EXPECT_TRUE(three.with_null);
  // A table not split: shard 1 has all of it, with the NULLs.
  ShardLayout whole = l;
  whole.column.clear();
  const FinishedRange all = ShardRange(whole, kSource, 1);
  EXPECT_FALSE(all.has_lo || all.has_hi);
  EXPECT_TRUE(all.with_null);
  EXPECT_TRUE(all.columns.empty());
}

class ShardProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = LevelDbStore::Open(MakeTempDir() + "/store", StoreOptions());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    auto states = store_->NewStateStore();
    ASSERT_TRUE(states.ok()) << states.status().ToString();
    states_ = std::move(*states);
  }

  // What a run without --shard, or a new load, records.
  static TableState Fresh(const std::string& run, const std::string& fingerprint = "fp") {
    TableState s;
    s.status = TableStatus::kLoading;
    s.run_id = run;
    s.started_ms = 1;
    s.mapping_fingerprint = fingerprint;
    return s;
  }

  Result<ShardJoin> Join(int index, const std::string& run, int count = 3,
                         std::optional<int64_t> ts = std::nullopt,
                         const std::string& fingerprint = "fp") {
    ShardSpec spec{index, count};
    return JoinShardLoad(
        states_.get(), kTable, kSource, spec, Fresh(run, fingerprint), ts,
        [&]() -> Result<ShardLayout> {
          ShardLayout l = Layout(run);
          l.shards = count;
          ++laid_out_;
          return l;
        },
        [](const ShardLayout&) { return true; });
  }

  Result<ShardJoin> Finish(int index, const ShardJoin& join, bool ok = true) {
    return FinishShard(states_.get(), kTable, kSource, ShardSpec{index, join.layout.shards}, join,
                       ok, 99);
  }

  TableState Stored() {
    auto s = states_->Get(kTable);
    EXPECT_TRUE(s.ok() && s->has_value());
    return s.ok() && s->has_value() ? **s : TableState();
  }

  std::unique_ptr<LevelDbStore> store_;
  std::unique_ptr<StateStore> states_;
  int laid_out_ = 0;
};

TEST_F(ShardProtocolTest, TheFirstShardLaysTheLoadOutTheOthersJoinItCompleteOnceAllFinished) {
  auto a = Join(2, "run-a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->created);
  EXPECT_EQ(Stored().extensions.at(kShardsExtension), EncodeShardLayout(Layout("run-a")));
  EXPECT_EQ(Stored().extensions.at(kLoadTimestampExtension), "1700000000000");
  auto b = Join(3, "run-b");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_FALSE(b->created);
  EXPECT_EQ(b->layout.load, "run-a");  // adopted, with its bounds and timestamp
  EXPECT_EQ(laid_out_, 1);
  auto c = Join(1, "run-c");
  ASSERT_TRUE(c.ok()) << c.status().ToString();

  auto done = Finish(3, *b);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->finished, std::vector<int>{3});
  EXPECT_EQ(Stored().status, TableStatus::kLoading);
  ASSERT_TRUE(Finish(1, *c).ok());
  EXPECT_EQ(Stored().status, TableStatus::kLoading);
  // A shard that ran before finishes again: recorded once.
  ASSERT_TRUE(Finish(1, *c).ok());
  EXPECT_EQ(Stored().finished_ranges.size(), 2u);
  done = Finish(2, *a);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->finished, (std::vector<int>{1, 2, 3}));
  const TableState s = Stored();
  EXPECT_EQ(s.status, TableStatus::kComplete);
  EXPECT_EQ(s.finished_ms, 99);
  EXPECT_EQ(s.finished_ranges.size(), 3u);

  // The next --shard run starts a new load.
  auto next = Join(1, "run-d");
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_TRUE(next->created);
  EXPECT_EQ(Stored().status, TableStatus::kLoading);
  EXPECT_TRUE(Stored().finished_ranges.empty());
}

TEST_F(ShardProtocolTest, AnUnfinishedLoadThatDiffersIsRefusedUnchanged) {
  auto a = Join(1, "run-a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(Finish(1, *a).ok());
  const uint64_t version = Stored().version;
  auto other_count = Join(1, "run-b", 2);
  EXPECT_EQ(other_count.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(other_count.status().message().find(
                "is in the middle of a load in 3 shards (laid out by run run-a, cell timestamp "
                "1700000000000; shards finished: 1), and this run is shard 1/2"),
            std::string::npos)
      << other_count.status().message();
  auto other_ts = Join(2, "run-b", 3, 5);
  EXPECT_EQ(other_ts.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(other_ts.status().message().find("this run's cell timestamp is 5"), std::string::npos);
  auto other_design = Join(2, "run-b", 3, std::nullopt, "another");
  EXPECT_EQ(other_design.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Stored().version, version);
  // The same timestamp given explicitly joins.
  EXPECT_TRUE(Join(2, "run-b", 3, 1700000000000).ok());
}

TEST_F(ShardProtocolTest, AFailedShardRunsAgainAndAReplacedLoadIsNotRecordedAsFinished) {
  auto a = Join(1, "run-a");
  ASSERT_TRUE(a.ok());
  auto b = Join(2, "run-b");
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(Finish(2, *b, /*ok=*/false).ok());
  EXPECT_EQ(Stored().status, TableStatus::kFailed);
  auto again = Join(2, "run-c");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(Stored().status, TableStatus::kLoading);

  // A run without --shard replaces the state: the old load's shards cannot
  // finish into it.
  auto put = states_->Put(kTable, Stored().version, Fresh("plain"));
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  auto late = Finish(1, *a);
  EXPECT_EQ(late.status().code(), StatusCode::kAborted);
  EXPECT_NE(late.status().message().find("no longer records its load (run run-a)"),
            std::string::npos)
      << late.status().message();
  EXPECT_TRUE(Stored().finished_ranges.empty());
}

}  // namespace
}  // namespace widen::testing
