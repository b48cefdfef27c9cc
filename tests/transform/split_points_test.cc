#include "transform/split_points.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "tests/transform/shop_fixture.h"

namespace widen {
namespace {

using namespace widen::testing;

KeyPartPlan Part(std::string name, size_t index, KeyType type) {
  KeyPartPlan p;
  p.name = std::move(name);
  p.index = index;
  p.type = type;
  return p;
}

KeyCodec Salted(KeyForm form, int buckets) {
  return KeyCodec(form, {Part("id", 0, KeyType::kInt64)}, "|", KeyHashPlan{buckets, {}});
}

TEST(SplitPointsTest, OneRegionPerSaltBucket) {
  EXPECT_EQ(SaltSplitPoints(Salted(KeyForm::kBinary, 4), 0),
            (std::vector<std::string>{"\x01", "\x02", "\x03"}));
  // Text keys write the bucket as zero-padded decimal digits.
  auto text = SaltSplitPoints(Salted(KeyForm::kText, 12), 0);
  ASSERT_EQ(text.size(), 11u);
  EXPECT_EQ(text.front(), "01");
  EXPECT_EQ(text.back(), "11");
}

TEST(SplitPointsTest, FewerRegionsGroupSaltBuckets) {
  EXPECT_EQ(SaltSplitPoints(Salted(KeyForm::kBinary, 16), 4),
            (std::vector<std::string>{"\x04", "\x08", "\x0c"}));
  EXPECT_EQ(SaltSplitPoints(Salted(KeyForm::kText, 10), 3), (std::vector<std::string>{"3", "6"}));
}

TEST(SplitPointsTest, HashPrefixRangesAreEqual) {
  KeyCodec binary(KeyForm::kBinary, {Part("id", 0, KeyType::kInt64)}, "", {}, KeyHashPlan{2, {}});
  EXPECT_EQ(HashSplitPoints(binary, 4), (std::vector<std::string>{"\x40", "\x80", "\xc0"}));
  // More regions than one byte tells apart: two bytes.
  auto many = HashSplitPoints(binary, 512);
  ASSERT_EQ(many.size(), 511u);
  EXPECT_EQ(many[0], std::string("\x00\x80", 2));
  KeyCodec text(KeyForm::kText, {Part("id", 0, KeyType::kInt64)}, "|", {}, KeyHashPlan{2, {}});
  EXPECT_EQ(HashSplitPoints(text, 4), (std::vector<std::string>{"4", "8", "c"}));
  EXPECT_EQ(HashSplitPoints(text, 32).front(), "08");
}

TEST(SplitPointsTest, QuantilesAreShortestSeparatingPrefixes) {
  std::vector<std::string> sample;
  for (int i = 0; i < 100; ++i) sample.push_back(fmt::format("user{:03d}|x", i));
  auto points = QuantileSplitPoints(sample, 4);
  EXPECT_EQ(points, (std::vector<std::string>{"user025", "user05", "user075"}));
  // Each point splits its neighbours: prev < point <= next.
  EXPECT_LT(sample[49], points[1]);
  EXPECT_LE(points[1], sample[50]);
}

TEST(SplitPointsTest, QuantilesSkipDuplicatesAndTinySamples) {
  EXPECT_TRUE(QuantileSplitPoints({"a", "a", "a"}, 4).empty());
  EXPECT_TRUE(QuantileSplitPoints({}, 4).empty());
  EXPECT_EQ(QuantileSplitPoints({"a", "b"}, 4), (std::vector<std::string>{"b"}));
  auto p = QuantileSplitPoints({"a", "b", "c", "d", "e", "f", "g", "h"}, 3);
  for (size_t i = 1; i < p.size(); ++i) EXPECT_LT(p[i - 1], p[i]);
}

TEST(SplitPointsTest, ComputeReadsTheSourceOnlyForQuantiles) {
  auto src = ShopSource();
  auto salted = PlanTables(R"(
  - name: shop:orders
    from: service_order
    families: [d]
    key:
      form: binary
      parts: [order_id]
      salt: {buckets: 8}
    columns: [{column: amount, to: "d:widen_test"}]
)",
                           src.get());
  SplitOptions o;
  auto s = ComputeSplitPoints(salted->plan.tables[0], src.get(), o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->method, "salt");
  EXPECT_EQ(s->points.size(), 7u);
  EXPECT_EQ(src->scans, 0);

  auto plain = PlanTables(R"(
  - name: shop:orders
    from: service_order
    families: [d]
    key:
      parts: [product_code, {column: order_id, width: 6}]
    columns: [{column: amount, to: "d:widen_test"}]
)",
                          src.get());
  s = ComputeSplitPoints(plain->plan.tables[0], src.get(), o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->method, "none");
  EXPECT_TRUE(s->points.empty());

  o.regions = 3;
  s = ComputeSplitPoints(plain->plan.tables[0], src.get(), o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->method, "quantiles");
  EXPECT_EQ(s->rows_read, 6u);
  EXPECT_EQ(s->keys_sampled, 6u);
  // Keys: A100|000001 A100|000003 A100|000004 A100|000005 B200|000002 C300|000006
  EXPECT_EQ(s->points, (std::vector<std::string>{"A100|000004", "B"}));
  EXPECT_EQ(src->scans, 1);

  o.regions = -1;
  EXPECT_EQ(ComputeSplitPoints(plain->plan.tables[0], src.get(), o).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(SplitPointsTest, TheReservoirKeepsAtMostSampleKeys) {
  auto src = ShopSource();
  auto plain = PlanTables(R"(
  - name: shop:orders
    from: service_order
    families: [d]
    key:
      form: binary
      parts: [order_id]
    columns: [{column: amount, to: "d:widen_test"}]
)",
                          src.get());
  SplitOptions o;
  o.regions = 2;
  o.sample_keys = 3;
  auto s = ComputeSplitPoints(plain->plan.tables[0], src.get(), o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->rows_read, 6u);
  EXPECT_EQ(s->keys_sampled, 3u);
  EXPECT_EQ(s->points.size(), 1u);
  // The same seed gives the same split points.
  auto again = ComputeSplitPoints(plain->plan.tables[0], src.get(), o);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->points, s->points);
}

}  // namespace
}  // namespace widen
