// widen sync's store interface on the real HBase of scripts/with-servers.sh
// --hbase (store/hbase_store.h): ReplaceRow leaves exactly the new cells,
// every version, however the rounds fall; a cell removed and given again at
// its timestamp is seen; the sync index's scans of several prefixes (one
// scan of many ranges, or one per prefix) come as the interface says; a row
// left marked "being written" is listed with an empty digest and rewritten;
// a late request to the sync table masks nothing written after it; table
// locks exclude, renew and notice when taken. Expected cells come from the
// spec (HBase order, the family's VERSIONS), read back through HBase.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/cell_runs.h"
#include "store/hbase_store.h"
#include "store/row_sync.h"
#include "tests/integration/hbase_env.h"

namespace widen {
namespace {

using testing::HBaseUrl;
using testing::RawHBase;
namespace thrift2 = testing::thrift2;

class HBaseRowSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = HBaseUrl();
    if (url_.empty()) {
      if (std::getenv("CI") != nullptr && std::string(std::getenv("CI")) == "true") {
        FAIL() << "WIDEN_TEST_HBASE_URL is not set under CI";
      }
      GTEST_SKIP() << "WIDEN_TEST_HBASE_URL not set (run through scripts/with-servers.sh)";
    }
    table_ = fmt::format("wr{}:t{}", testing::UniqueTag(), ++count_);
    Open(HBaseOptions());
    TableDescriptor d;
    SplitTableName(table_, &d.name_space, &d.table);
    FamilyDescriptor f;
    f.name = "d";
    f.versions = 3;
    d.families.push_back(f);
    Status s = store_->CreateTable(d);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void TearDown() override {
    if (url_.empty()) return;
    RawHBase raw(url_);
    raw.DropTable(table_);
  }

  void Open(const HBaseOptions& o) {
    auto store = HBaseStore::Open(url_, StoreOptions(), o);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
  }

  // Replaces `row` with cells (qualifier, timestamp, value) of family d.
  void Replace(RowWriter* w, const std::string& row,
               const std::vector<std::tuple<std::string, int64_t, std::string>>& cells) {
    CellBatch b;
    for (const auto& [q, ts, v] : cells) b.Add(row, "d", q, ts, v);
    b.Sort();
    Status s = w->ReplaceRow(row, b, cells.empty() ? "" : RowDigest(b) + RowKeysDigest(b));
    EXPECT_TRUE(s.ok()) << s.ToString();
  }

  // The table's cells, every version, as "row d:q@ts=value", as HBase has them.
  std::vector<std::string> Cells() {
    RawHBase raw(url_);
    thrift2::TScan scan;
    scan.__set_maxVersions(100);
    std::vector<thrift2::TResult> rows;
    raw->getScannerResults(rows, table_, scan, 10000);
    std::vector<std::string> out;
    for (const auto& r : rows) {
      for (const auto& c : r.columnValues) {
        out.push_back(
            fmt::format("{} {}:{}@{}={}", r.row, c.family, c.qualifier, c.timestamp, c.value));
      }
    }
    return out;
  }

  // The sync table's row key of the table's entry `tag` `rest`.
  std::string SyncKey(char tag, const std::string& rest) const {
    return table_ + std::string(1, '\0') + std::string(1, tag) + rest;
  }

  static int count_;
  std::string url_, table_;
  std::unique_ptr<HBaseStore> store_;
};

int HBaseRowSyncTest::count_ = 0;

// Exactly the new cells, whatever the old ones were and however the rounds
// fall (a round per row, and all rows in one round); a row replaced again
// after its round loses what that round put. A column keeps only the
// versions given: one dropped among others, one added below the others.
TEST_F(HBaseRowSyncTest, ReplaceRowLeavesExactlyTheNewCellsEveryVersion) {
  for (size_t rows_per_round : {size_t{1}, size_t{1000}}) {
    SCOPED_TRACE(rows_per_round);
    HBaseOptions o;
    o.sync_batch_rows = rows_per_round;
    Open(o);
    {
      auto w = store_->NewRowWriter(table_);
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      Replace(w->get(), "a", {{"p", 5, "1"}, {"q", 5, "1"}, {"r", 5, "1"}});
      Replace(w->get(), "b", {{"q", 5, "1"}});
      Replace(w->get(), "c", {{"v", 9, "9"}, {"v", 7, "7"}, {"v", 5, "5"}});
      ASSERT_TRUE((*w)->Sync().ok());
    }
    auto w = store_->NewRowWriter(table_);
    ASSERT_TRUE(w.ok());
    // a: p goes, q changes, r stays, s comes; b: q goes, p comes; c: the
    // version 7 goes, 3 comes.
    Replace(w->get(), "a", {{"q", 5, "2"}, {"r", 5, "1"}, {"s", 5, "2"}});
    Replace(w->get(), "b", {{"p", 5, "2"}});
    Replace(w->get(), "c", {{"v", 9, "9"}, {"v", 5, "5"}, {"v", 3, "3"}});
    ASSERT_TRUE((*w)->Flush().ok());
    EXPECT_EQ(Cells(), (std::vector<std::string>{"a d:q@5=2", "a d:r@5=1", "a d:s@5=2", "b d:p@5=2",
                                                 "c d:v@9=9", "c d:v@5=5", "c d:v@3=3"}));
    // Again after the round: what it put is the old row now.
    Replace(w->get(), "a", {{"p", 5, "3"}});
    Replace(w->get(), "b", {});
    Replace(w->get(), "c", {{"v", 4, "4"}});
    ASSERT_TRUE((*w)->Sync().ok());
    EXPECT_EQ((*w)->stats().rows_written, 5u);
    EXPECT_EQ((*w)->stats().rows_deleted, 1u);
    EXPECT_EQ((*w)->stats().cells_put, 3u + 1u + 3u + 1u + 1u);
    EXPECT_EQ((*w)->stats().cells_deleted, 3u + 1u + 3u + 3u + 1u + 3u);
    EXPECT_EQ(Cells(), (std::vector<std::string>{"a d:p@5=3", "c d:v@4=4"}));
  }
}

// A cell removed (its row, or its column) and given again later at the same
// timestamp is seen: HBase's delete marker masks only what was written
// before it (NEW_VERSION_BEHAVIOR on the family).
TEST_F(HBaseRowSyncTest, ACellRemovedAndGivenAgainAtItsTimestampIsSeen) {
  auto w = store_->NewRowWriter(table_);
  ASSERT_TRUE(w.ok());
  Replace(w->get(), "a", {{"p", 5, "1"}, {"q", 5, "1"}});
  Replace(w->get(), "b", {{"p", 5, "1"}});
  ASSERT_TRUE((*w)->Sync().ok());
  Replace(w->get(), "a", {{"q", 5, "1"}});
  Replace(w->get(), "b", {});
  ASSERT_TRUE((*w)->Sync().ok());
  EXPECT_EQ(Cells(), (std::vector<std::string>{"a d:q@5=1"}));
  Replace(w->get(), "a", {{"p", 5, "again"}, {"q", 5, "1"}});
  Replace(w->get(), "b", {{"p", 5, "again"}});
  ASSERT_TRUE((*w)->Sync().ok());
  EXPECT_EQ(Cells(), (std::vector<std::string>{"a d:p@5=again", "a d:q@5=1", "b d:p@5=again"}));
}

// The empty qualifier in a family with NEW_VERSION_BEHAVIOR: HBase 2.6
// fails reads of a row whose empty-qualifier column has a delete marker
// below a newer cell, so such a column is put over or added, never given a
// marker: a row that would need one is refused, naming it, before anything
// of its round is written.
TEST_F(HBaseRowSyncTest, TheEmptyQualifierIsPutOverButNeverRemoved) {
  auto w = store_->NewRowWriter(table_);
  ASSERT_TRUE(w.ok());
  Replace(w->get(), "a", {{"", 5, "1"}, {"q", 5, "1"}});
  ASSERT_TRUE((*w)->Sync().ok());
  Replace(w->get(), "a", {{"", 5, "2"}, {"q", 5, "2"}, {"r", 5, "2"}});
  ASSERT_TRUE((*w)->Sync().ok());
  EXPECT_EQ(Cells(), (std::vector<std::string>{"a d:@5=2", "a d:q@5=2", "a d:r@5=2"}));
  for (const std::vector<std::tuple<std::string, int64_t, std::string>>& next :
       {std::vector<std::tuple<std::string, int64_t, std::string>>{{"q", 5, "3"}},
        std::vector<std::tuple<std::string, int64_t, std::string>>{{"", 6, "3"}, {"q", 5, "3"}},
        std::vector<std::tuple<std::string, int64_t, std::string>>{}}) {
    CellBatch b;
    for (const auto& [q, ts, v] : next) b.Add("a", "d", q, ts, v);
    b.Sort();
    Status s = (*w)->ReplaceRow("a", b, next.empty() ? "" : RowDigest(b) + RowKeysDigest(b));
    if (s.ok()) s = (*w)->Flush();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find(fmt::format(
                  "table '{}', row 'a': the cells of the empty qualifier 'd:' would have to be "
                  "removed",
                  table_)),
              std::string::npos)
        << s.ToString();
    EXPECT_EQ(Cells(), (std::vector<std::string>{"a d:@5=2", "a d:q@5=2", "a d:r@5=2"}));
  }
}

// The sync index: entries under several prefixes come prefix by prefix in
// the order given, in key order under each, once per prefix that holds them;
// false from the callback stops the scan. Sorted prefixes of which none
// starts with another go in scans of up to 1,000 ranges: 2,500 of them.
TEST_F(HBaseRowSyncTest, ScanIndexOfSeveralPrefixes) {
  auto w = store_->NewRowWriter(table_);
  ASSERT_TRUE(w.ok());
  for (const char* k : {"a2", "a1", "b1", "c1", "c2"}) ASSERT_TRUE((*w)->PutIndex(k, k).ok());
  for (int i = 0; i < 5000; ++i) {
    ASSERT_TRUE((*w)->PutIndex(fmt::format("m{:05}", i), std::string(1, '\0')).ok());
  }
  ASSERT_TRUE((*w)->Flush().ok());
  auto scan = [&](const std::vector<std::string>& prefixes, size_t stop_after) {
    std::vector<std::string> seen;
    Status s = store_->ScanIndex(
        table_, prefixes, [&](size_t i, std::string_view key, std::string_view value) {
          seen.push_back(std::to_string(i) + ":" + std::string(key) + "=" + std::string(value));
          return seen.size() < stop_after;
        });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return seen;
  };
  EXPECT_EQ(scan({"a", "c", "zz"}, 100),
            (std::vector<std::string>{"0:a1=a1", "0:a2=a2", "1:c1=c1", "1:c2=c2"}));
  EXPECT_EQ(scan({"c2", "a", "a1"}, 100),
            (std::vector<std::string>{"0:c2=c2", "1:a1=a1", "1:a2=a2", "2:a1=a1"}));
  EXPECT_EQ(scan({"a", "c"}, 3), (std::vector<std::string>{"0:a1=a1", "0:a2=a2", "1:c1=c1"}));
  EXPECT_TRUE(scan({}, 100).empty());
  std::vector<std::string> prefixes, want;
  for (int i = 0; i < 5000; i += 2) {
    prefixes.push_back(fmt::format("m{:05}", i));
    want.push_back(fmt::format("{}:m{:05}=", prefixes.size() - 1, i) + std::string(1, '\0'));
  }
  EXPECT_EQ(scan(prefixes, 100000), want);
  EXPECT_EQ(store_
                ->ScanIndex(table_ + "nope", {"a"},
                            [](size_t, std::string_view, std::string_view) { return true; })
                .code(),
            StatusCode::kNotFound);
  // Removed, then given again: seen (the sync table's timestamps only grow).
  ASSERT_TRUE((*w)->DeleteIndex("b1").ok());
  ASSERT_TRUE((*w)->Flush().ok());
  EXPECT_TRUE(scan({"b"}, 100).empty());
  ASSERT_TRUE((*w)->PutIndex("b1", "back").ok());
  ASSERT_TRUE((*w)->Flush().ok());
  EXPECT_EQ(scan({"b"}, 100), (std::vector<std::string>{"0:b1=back"}));
  ASSERT_TRUE((*w)->ClearIndex().ok());
  EXPECT_TRUE(scan({"a", "b", "c", "m"}, 100).empty());
}

// A row a crash left "being written" (its digest entry empty, as the first
// request of a round leaves it) is listed with an empty digest, so the next
// sync writes it again; digests of listed rows come for the rows that have
// an entry, in order.
TEST_F(HBaseRowSyncTest, ARowLeftBeingWrittenIsListedWithAnEmptyDigestAndRewritten) {
  auto sync = [&](bool from_cells) {
    CellBatch batch;
    for (const char* row : {"a", "b", "c"}) batch.Add(row, "d", "v", 5, row);
    CellRuns runs;
    EXPECT_TRUE(runs.Add(batch).ok());
    auto reader = store_->NewDigestReader(table_, from_cells);
    auto writer = store_->NewRowWriter(table_);
    EXPECT_TRUE(reader.ok() && writer.ok());
    RowSyncStats stats;
    Status s = SyncRows(&runs, reader->get(), writer->get(), nullptr, &stats);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE((*writer)->Sync().ok());
    return stats;
  };
  EXPECT_EQ(sync(true).rows_written, 3u);
  EXPECT_EQ(sync(false).rows_written, 0u);
  {
    // What the first request of a later round writes (at the next
    // timestamp), had the round stopped there.
    RawHBase raw(url_);
    thrift2::TGet get;
    get.row = SyncKey('d', "b");
    thrift2::TResult recorded;
    raw->get(recorded, "widen:sync", get);
    ASSERT_EQ(recorded.columnValues.size(), 1u);
    EXPECT_EQ(recorded.columnValues[0].value.size(), 33u);
    thrift2::TColumnValue cv;
    cv.__set_family("s");
    cv.__set_qualifier("v");
    cv.__set_value(std::string(1, '\x01'));
    cv.__set_timestamp(recorded.columnValues[0].timestamp + 1);
    thrift2::TPut put;
    put.__set_row(SyncKey('d', "b"));
    put.__set_columnValues({cv});
    raw->put("widen:sync", put);
  }
  auto listed = store_->NewDigestReaderOf(table_, {"a", "b", "x"});
  ASSERT_TRUE(listed.ok());
  std::vector<std::string> rows;
  for (; (*listed)->Valid(); (*listed)->Next()) {
    rows.push_back(std::string((*listed)->row()) + ":" +
                   std::to_string((*listed)->digest().size()));
  }
  EXPECT_TRUE((*listed)->status().ok());
  EXPECT_EQ(rows, (std::vector<std::string>{"a:32", "b:0"}));
  const RowSyncStats again = sync(false);
  EXPECT_EQ(again.rows_written, 1u);
  EXPECT_EQ(again.rows_unchanged, 2u);
  EXPECT_EQ(sync(false).rows_written, 0u) << "its digest is recorded again";
}

// Every write to the sync table carries a timestamp of the table's counter:
// a delete marker HBase applies late (a re-sent request's first copy, with
// the timestamp of its first sending) masks nothing written after it.
TEST_F(HBaseRowSyncTest, ALateDeleteInTheSyncTableMasksNothingWrittenAfterIt) {
  auto w = store_->NewRowWriter(table_);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->PutIndex("k", "first").ok());
  ASSERT_TRUE((*w)->Flush().ok());
  RawHBase raw(url_);
  thrift2::TGet get;
  get.row = SyncKey('i', "k");
  thrift2::TResult first;
  raw->get(first, "widen:sync", get);
  ASSERT_EQ(first.columnValues.size(), 1u);
  const int64_t ts = first.columnValues[0].timestamp;
  EXPECT_GT(ts, int64_t{1} << 32) << "a counter's range, not a clock";
  ASSERT_TRUE((*w)->PutIndex("k", "second").ok());
  ASSERT_TRUE((*w)->Flush().ok());
  // A delete of the first write, arriving after the second.
  thrift2::TDelete d;
  d.row = get.row;
  thrift2::TColumn column;
  column.family = "s";
  column.__set_qualifier("v");
  column.__set_timestamp(ts);
  d.__set_columns({column});
  d.__set_deleteType(thrift2::TDeleteType::DELETE_COLUMNS);
  raw->deleteSingle("widen:sync", d);
  std::vector<std::string> seen;
  ASSERT_TRUE(store_
                  ->ScanIndex(table_, "k",
                              [&](std::string_view, std::string_view v) {
                                seen.emplace_back(v);
                                return true;
                              })
                  .ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"second"}));
}

// Shard locks: the shards of one load hold theirs together; a second run
// of a shard, and the table's own lock, wait for it; a shard waits for the
// table's lock.
TEST_F(HBaseRowSyncTest, ShardLocksShareTheTableButExcludeTheTablesLock) {
  Open(HBaseOptions());
  auto states = store_->NewStateStore();
  ASSERT_TRUE(states.ok());
  auto one = (*states)->LockShard(table_, 1, 3);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  auto two = (*states)->LockShard(table_, 2, 3);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  auto again = (*states)->LockShard(table_, 2, 3);
  ASSERT_EQ(again.status().code(), StatusCode::kAborted);
  EXPECT_NE(again.status().message().find(fmt::format(
                "table '{}' (shard 2/3 of a sharded load) is being written by another", table_)),
            std::string::npos)
      << again.status().ToString();
  auto whole = (*states)->LockTable(table_);
  ASSERT_EQ(whole.status().code(), StatusCode::kAborted);
  EXPECT_NE(whole.status().message().find("(shard 1/3 of a sharded load)"), std::string::npos)
      << whole.status().ToString();
  one->reset();
  whole = (*states)->LockTable(table_);
  ASSERT_EQ(whole.status().code(), StatusCode::kAborted) << "shard 2/3 still holds its lock";
  two->reset();
  whole = (*states)->LockTable(table_);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  auto three = (*states)->LockShard(table_, 3, 3);
  ASSERT_EQ(three.status().code(), StatusCode::kAborted);
  EXPECT_NE(three.status().message().find(
                fmt::format("table '{}' is being written by another widen run", table_)),
            std::string::npos)
      << three.status().ToString();
  // The refused shard left no lease behind: once the table's lock is given
  // up, every shard may start.
  whole->reset();
  for (int i = 1; i <= 3; ++i) {
    auto shard = (*states)->LockShard(table_, i, 3);
    EXPECT_TRUE(shard.ok()) << i << ": " << shard.status().ToString();
  }
  // Lease rows are not table states.
  auto listed = (*states)->List();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  for (const auto& [name, state] : *listed) EXPECT_EQ(name.find('\0'), std::string::npos) << name;
}

// Table locks: one holder at a time (another, even of this process, is
// refused naming it); renewed while held (past its lease); given up when
// the holder goes; noticed lost when another run took it.
TEST_F(HBaseRowSyncTest, ATableLockHasOneHolderIsRenewedAndNoticesATakeOver) {
  HBaseOptions o;
  o.lock_lease_ms = 600;
  Open(o);
  auto states = store_->NewStateStore();
  ASSERT_TRUE(states.ok());
  auto first = (*states)->LockTable(table_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = (*states)->LockTable(table_);
  ASSERT_EQ(second.status().code(), StatusCode::kAborted);
  EXPECT_NE(second.status().message().find(
                fmt::format("table '{}' is being written by another widen run (process {} on host",
                            table_, static_cast<long>(getpid()))),
            std::string::npos)
      << second.status().ToString();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // 2.5 leases
  EXPECT_TRUE((*first)->status().ok()) << (*first)->status().ToString();
  first->reset();
  auto third = (*states)->LockTable(table_);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  {
    RawHBase raw(url_);
    thrift2::TColumnValue cv;
    cv.__set_family("s");
    cv.__set_qualifier("l");
    cv.__set_value("");
    thrift2::TPut put;
    put.__set_row(table_);
    put.__set_columnValues({cv});
    raw->put("widen:state", put);  // as a run that found it expired and took it
  }
  // The next renewal (a third of the lease on) notices; a loaded HBase may
  // answer it late, so up to 10 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((*third)->status().ok() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ((*third)->status().code(), StatusCode::kAborted);
  EXPECT_NE((*third)->status().message().find("another widen run took the lock"), std::string::npos)
      << (*third)->status().ToString();
}

}  // namespace
}  // namespace widen
