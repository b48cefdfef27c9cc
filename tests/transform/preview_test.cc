#include "transform/preview.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "tests/transform/shop_fixture.h"
#include "transform/preview_internal.h"

namespace widen {
namespace {

using preview_internal::FingerprintSet;
using namespace widen::testing;

// Orders keyed customer|product: orders 1 and 5 (customer 1, A100) collide.
constexpr char kCollidingKey[] = R"(
  - name: shop:by_customer
    from: service_order
    families: [d]
    key:
      parts: [{column: customer_id, width: 5}, product_code]
    columns:
      - {column: amount, to: "d:amount"}
)";

constexpr char kOrdersWithLines[] = R"(
  - name: shop:orders
    from: service_order
    families: [d, l]
    key:
      parts: [{column: order_id, width: 6}]
    columns:
      - {column: product_code, to: "d:product"}
      - {column: amount, to: "d:amount"}
    nest:
      - table: order_line
        on: {order_id: order_id}
        family: l
        prefix: l
        id: [line_id]
        columns: [sku, qty]
)";

PreviewOptions Options(uint64_t sample = 1000) {
  PreviewOptions o;
  o.sample_rows = sample;
  o.timestamp_ms = 1700000000000;
  o.show_rows = 2;
  return o;
}

TEST(FingerprintSetTest, FindsDuplicatesInMemory) {
  FingerprintSet s(1 << 20);
  for (uint64_t v : {5, 1, 5, 9, 1, 5, 7}) ASSERT_TRUE(s.Add(v).ok());
  std::vector<uint64_t> dups;
  uint64_t repeats = 0;
  bool truncated = true;
  ASSERT_TRUE(s.Duplicates(10, &dups, &repeats, &truncated).ok());
  EXPECT_EQ(dups, (std::vector<uint64_t>{1, 5}));
  EXPECT_EQ(repeats, 3u);  // 1 once more, 5 twice more
  EXPECT_FALSE(truncated);
  EXPECT_EQ(s.spilled_runs(), 0u);
}

TEST(FingerprintSetTest, SpillsSortedRunsAndMergesThem) {
  // 64 bytes of memory: 8 fingerprints per run, so 1000 values make 125 runs.
  FingerprintSet s(64);
  std::mt19937_64 rng(7);
  std::multiset<uint64_t> all;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t v = rng() % 700;  // many repeats, across runs
    all.insert(v);
    ASSERT_TRUE(s.Add(v).ok());
  }
  EXPECT_GT(s.spilled_runs(), 100u);
  std::vector<uint64_t> expected;
  uint64_t expected_repeats = 0;
  for (auto it = all.begin(); it != all.end(); it = all.upper_bound(*it)) {
    const size_t n = all.count(*it);
    if (n > 1) expected.push_back(*it);
    expected_repeats += n - 1;
  }
  std::vector<uint64_t> dups;
  uint64_t repeats = 0;
  bool truncated = false;
  ASSERT_TRUE(s.Duplicates(100000, &dups, &repeats, &truncated).ok());
  EXPECT_EQ(dups, expected);
  EXPECT_EQ(repeats, expected_repeats);
  EXPECT_FALSE(truncated);
}

TEST(FingerprintSetTest, CapsTheDuplicatesReturned) {
  FingerprintSet s(64);
  for (uint64_t v = 0; v < 50; ++v) {
    ASSERT_TRUE(s.Add(v).ok());
    ASSERT_TRUE(s.Add(v).ok());
  }
  std::vector<uint64_t> dups;
  uint64_t repeats = 0;
  bool truncated = false;
  ASSERT_TRUE(s.Duplicates(10, &dups, &repeats, &truncated).ok());
  EXPECT_EQ(dups.size(), 10u);
  EXPECT_EQ(repeats, 50u);
  EXPECT_TRUE(truncated);
}

TEST(SizeStatsTest, HistogramBucketsArePowersOfTwo) {
  SizeStats s;
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{4}, uint64_t{7},
                     uint64_t{8}, uint64_t{1023}, uint64_t{1024}, ~uint64_t{0}}) {
    s.Add(v);
  }
  const std::array<std::pair<size_t, uint64_t>, 8> expected = {
      {{0, 1}, {1, 1}, {2, 2}, {3, 2}, {4, 1}, {10, 1}, {11, 1}, {64, 1}}};
  uint64_t total = 0;
  for (const auto& [bucket, n] : expected) {
    EXPECT_EQ(s.log2_buckets[bucket], n) << "bucket " << bucket;
    total += n;
  }
  uint64_t counted = 0;
  for (uint64_t n : s.log2_buckets) counted += n;
  EXPECT_EQ(counted, total);
  EXPECT_EQ(s.count, 10u);
}

TEST(PreviewTest, StatisticsOverEveryRow) {
  auto src = ShopSource();
  auto p = PlanTables(kOrdersWithLines, src.get());
  auto r = PreviewTable(p->plan.tables[0], src.get(), Options());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->complete);
  EXPECT_EQ(r->driving_rows, 6u);
  EXPECT_EQ(r->run.rows, 6u);
  // Orders have 2 plain cells; order 1 has 2 lines, orders 2 and 5 one each.
  EXPECT_EQ(r->run.cells, 6u * 2 + 4);
  EXPECT_EQ(r->cells_per_row.min, 2u);
  EXPECT_EQ(r->cells_per_row.max, 4u);
  EXPECT_DOUBLE_EQ(r->cells_per_row.avg(), 16.0 / 6);
  // The histogram: five rows of 2-3 cells (three of 2, two of 3), one of 4.
  EXPECT_EQ(r->cells_per_row.log2_buckets[2], 5u);
  EXPECT_EQ(r->cells_per_row.log2_buckets[3], 1u);
  uint64_t counted = 0;
  for (uint64_t n : r->cells_per_row.log2_buckets) counted += n;
  EXPECT_EQ(counted, 6u);
  EXPECT_EQ(r->key_bytes.min, 6u);
  EXPECT_EQ(r->key_bytes.max, 6u);
  ASSERT_EQ(r->families.size(), 2u);
  EXPECT_EQ(r->families[0].name, "d");
  EXPECT_EQ(r->families[0].cells, 12u);
  EXPECT_EQ(r->families[1].cells, 4u);
  EXPECT_EQ(r->families[0].bytes + r->families[1].bytes, r->run.bytes);
  EXPECT_EQ(r->estimated_total_bytes, static_cast<int64_t>(r->run.bytes));
  ASSERT_FALSE(r->widest.empty());
  EXPECT_EQ(r->widest[0].key, "000001");
  EXPECT_EQ(r->widest[0].source_id, "order_id=1");
  EXPECT_EQ(r->widest[0].cells, 4u);
  EXPECT_EQ(r->collisions, 0u);
  EXPECT_TRUE(r->collision_examples.empty());
  EXPECT_TRUE(r->salt_buckets.empty());
}

TEST(PreviewTest, KeepsTheFirstRowsSortedWithTheirSources) {
  auto src = ShopSource();
  auto p = PlanTables(kOrdersWithLines, src.get());
  auto r = PreviewTable(p->plan.tables[0], src.get(), Options());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->shown_rows.size(), 2u);
  EXPECT_EQ(r->shown_rows[0].key, "000001");
  EXPECT_EQ(r->shown_rows[0].source_id, "order_id=1");
  EXPECT_EQ(r->shown_rows[0].cells, 4u);
  EXPECT_EQ(r->shown_rows[1].key, "000002");
  ASSERT_EQ(r->shown.size(), 4u + 3u);
  for (size_t i = 1; i < r->shown.size(); ++i) {
    EXPECT_LE(CompareCells(r->shown.Get(i - 1), r->shown.Get(i)), 0);
  }
  EXPECT_EQ(r->shown.Get(0).family, "d");
  EXPECT_EQ(r->shown.Get(2).qualifier, "l1");
}

TEST(PreviewTest, ASampleStopsEarlyAndExtrapolatesBytes) {
  auto src = ShopSource();
  auto p = PlanTables(kOrdersWithLines, src.get());
  PreviewOptions o = Options(3);
  o.estimated_rows = 600;
  auto r = PreviewTable(p->plan.tables[0], src.get(), o);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->complete);
  EXPECT_EQ(r->driving_rows, 3u);
  EXPECT_EQ(r->run.rows, 3u);
  EXPECT_EQ(r->run.orphans, 0u);  // children past the sample are not read
  EXPECT_EQ(r->estimated_total_bytes, static_cast<int64_t>(r->run.bytes * 200));
}

TEST(PreviewTest, ACollisionNamesBothSourceRows) {
  for (uint64_t sample : {uint64_t{1000}, uint64_t{0}}) {
    SCOPED_TRACE(sample == 0 ? "full" : "sample");
    auto src = ShopSource();
    auto p = PlanTables(kCollidingKey, src.get());
    PreviewOptions o = Options(sample);
    o.fingerprint_memory_bytes = 16;  // full run: spill after two rows
    auto r = PreviewTable(p->plan.tables[0], src.get(), o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->run.rows, 6u);
    EXPECT_EQ(r->collisions, 1u);
    EXPECT_TRUE(r->collisions_exact);
    ASSERT_EQ(r->collision_examples.size(), 1u);
    const KeyCollision& c = r->collision_examples[0];
    EXPECT_EQ(c.row_key, "00001|A100");
    EXPECT_EQ(c.column, "d:amount");
    EXPECT_EQ(c.timestamp_ms, 1700000000000);
    EXPECT_EQ(c.first_source, "order_id=1");
    EXPECT_EQ(c.second_source, "order_id=5");
    EXPECT_FALSE(c.same_source_row);
  }
}

TEST(PreviewTest, VersionsAreNotCollisions) {
  // Keyed by customer with the order time as the version: each order of a
  // customer is a new version of the same cells, which is the point.
  auto src = ShopSource();
  auto p = PlanTables(R"(
  - name: shop:latest
    from: service_order
    version: ordered_at
    families: [{name: d, versions: 5}]
    key:
      parts: [{column: customer_id, width: 5}]
    columns:
      - {column: amount, to: "d:amount"}
)",
                      src.get());
  for (uint64_t sample : {uint64_t{1000}, uint64_t{0}}) {
    auto r = PreviewTable(p->plan.tables[0], src.get(), Options(sample));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->collisions, 0u);
    EXPECT_EQ(r->merged_rows, 0u);
  }
}

TEST(PreviewTest, ALiteralKeyPutsEveryRowInOneRow) {
  auto src = ShopSource();
  auto p = PlanTables(R"(
  - name: shop:one
    from: customer
    families: [d]
    key:
      parts: [{literal: "all"}]
    columns:
      - {column: region, to: "d:region"}
)",
                      src.get());
  auto r = PreviewTable(p->plan.tables[0], src.get(), Options());
  ASSERT_TRUE(r.ok());
  // Customers 1 and 3 both write d:region; customer 2 (region NULL) writes no cell.
  EXPECT_EQ(r->run.empty_rows, 1u);
  EXPECT_EQ(r->collisions, 1u);
  ASSERT_EQ(r->collision_examples.size(), 1u);
  EXPECT_EQ(r->collision_examples[0].first_source, "customer_id=1");
  EXPECT_EQ(r->collision_examples[0].second_source, "customer_id=3");
}

TEST(PreviewTest, RowsThatShareAKeyButNoColumnAreMerged) {
  auto src = ShopSource();
  SourceTable kv;
  kv.name = "kv";
  kv.columns = {Col("id", ValueType::kInt, "integer"), Col("a", ValueType::kText, "text", true),
                Col("b", ValueType::kText, "text", true)};
  kv.primary_key = {"id"};
  src->AddTable(kv,
                {{I(1), T("x"), Null(ValueType::kText)}, {I(2), Null(ValueType::kText), T("y")}});
  auto p = PlanTables(R"(
  - name: t
    from: kv
    families: [d]
    key:
      parts: [{literal: "k"}]
    columns:
      - {column: a, to: "d:a"}
      - {column: b, to: "d:b"}
)",
                      src.get());
  for (uint64_t sample : {uint64_t{1000}, uint64_t{0}}) {
    auto r = PreviewTable(p->plan.tables[0], src.get(), Options(sample));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->collisions, 0u);
    EXPECT_EQ(r->merged_rows, 1u);
  }
}

TEST(PreviewTest, NestedIdsThatRepeatCollideWithinARow) {
  // Lines nested under a constant id: order 1's two lines get one qualifier.
  auto src = ShopSource();
  auto p = PlanTables(R"(
  - name: shop:orders
    from: service_order
    families: [l]
    key:
      parts: [{column: order_id, width: 6}]
    nest:
      - table: order_line
        on: {order_id: order_id}
        family: l
        prefix: l
        id: [{literal: "x"}]
        columns: [sku]
)",
                      src.get());
  auto r = PreviewTable(p->plan.tables[0], src.get(), Options());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->collisions, 1u);  // order 1's two lines both write l:lx
  ASSERT_EQ(r->collision_examples.size(), 1u);
  EXPECT_TRUE(r->collision_examples[0].same_source_row);
  EXPECT_EQ(r->collision_examples[0].column, "l:lx");
  EXPECT_EQ(r->collision_examples[0].first_source, "order_id=1");
}

TEST(PreviewTest, SaltBucketsCountEveryRow) {
  auto src = ShopSource();
  auto p = PlanTables(R"(
  - name: shop:salted
    from: service_order
    families: [d]
    key:
      form: binary
      parts: [order_id]
      salt: {buckets: 4}
    columns:
      - {column: amount, to: "d:amount"}
)",
                      src.get());
  auto r = PreviewTable(p->plan.tables[0], src.get(), Options());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->salt_buckets.size(), 4u);
  uint64_t total = 0;
  for (uint64_t n : r->salt_buckets) total += n;
  EXPECT_EQ(total, 6u);
  EXPECT_EQ(r->key_bytes.min, 1u + 4u);
}

TEST(PreviewTest, RejectedRowsAreCountedWithExamples) {
  auto src = ShopSource();
  auto p = PlanTables(R"(
  - name: shop:by_region
    from: customer
    families: [d]
    key:
      parts: [{column: region, on_null: reject}]
    columns:
      - {column: name, to: "d:name"}
)",
                      src.get());
  auto r = PreviewTable(p->plan.tables[0], src.get(), Options());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->run.rejected, 1u);
  EXPECT_EQ(r->run.rows, 2u);
  ASSERT_EQ(r->reject_examples.size(), 1u);
  EXPECT_EQ(r->reject_examples[0].source_id, "customer_id=2");
  EXPECT_NE(r->reject_examples[0].reason.find("NULL"), std::string::npos);
}

}  // namespace
}  // namespace widen
