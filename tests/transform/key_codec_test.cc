#include "transform/key_codec.h"

#include <gtest/gtest.h>

#include <random>

namespace widen {
namespace {

KeyCodec ProductCustomerOrder() {
  std::vector<KeyPartPlan> parts(3);
  parts[0].name = "product_code";
  parts[0].index = 0;
  parts[0].type = ValueType::kText;
  parts[1].name = "customer_id";
  parts[1].index = 1;
  parts[1].type = ValueType::kInt;
  parts[1].width = 5;
  parts[2].name = "order_id";
  parts[2].index = 2;
  parts[2].type = ValueType::kInt;
  parts[2].width = 6;
  return KeyCodec(parts, "|");
}

Row MakeRow(std::string product, int64_t customer, int64_t order) {
  Row r;
  r.values = {Value::Str(ValueType::kText, product), Value::Int(customer), Value::Int(order)};
  return r;
}

TEST(KeyCodecTest, TextKeyIsZeroPaddedAndSeparated) {
  KeyCodec codec = ProductCustomerOrder();
  std::string key;
  ASSERT_TRUE(codec.Encode(MakeRow("A100", 1, 1042), &key).ok());
  EXPECT_EQ(key, "A100|00001|001042");
  std::vector<std::pair<std::string, std::string>> parts;
  ASSERT_TRUE(codec.Decode(key, &parts));
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], (std::pair<std::string, std::string>("product_code", "A100")));
  EXPECT_EQ(parts[1].second, "00001");
  EXPECT_EQ(parts[2].second, "001042");
}

TEST(KeyCodecTest, WiderValuesAreNotTruncated) {
  KeyCodec codec = ProductCustomerOrder();
  std::string key;
  ASSERT_TRUE(codec.Encode(MakeRow("B", 1234567, 5), &key).ok());
  EXPECT_EQ(key, "B|1234567|000005");
}

TEST(KeyCodecTest, SeparatorInsideValueIsRefused) {
  KeyCodec codec = ProductCustomerOrder();
  std::string key;
  Status s = codec.Encode(MakeRow("A|100", 1, 2), &key);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("product_code"), std::string::npos);
  EXPECT_NE(s.message().find("separator"), std::string::npos);
}

TEST(KeyCodecTest, NullPartIsRefused) {
  KeyCodec codec = ProductCustomerOrder();
  Row r = MakeRow("A", 1, 2);
  r.values[1] = Value::Null(ValueType::kInt);
  std::string key;
  Status s = codec.Encode(r, &key);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("customer_id"), std::string::npos);
}

TEST(KeyCodecTest, NegativeAndExtremeIntegers) {
  std::vector<KeyPartPlan> parts(1);
  parts[0].name = "n";
  parts[0].type = ValueType::kInt;
  parts[0].width = 4;
  KeyCodec codec(parts, "|");
  Row r;
  r.values = {Value::Int(-7)};
  std::string key;
  ASSERT_TRUE(codec.Encode(r, &key).ok());
  EXPECT_EQ(key, "-0007");
  r.values = {Value::Int(INT64_MIN)};
  key.clear();
  ASSERT_TRUE(codec.Encode(r, &key).ok());
  EXPECT_EQ(key, "-9223372036854775808");
}

// Zero-padded non-negative integers within the width sort like numbers.
TEST(KeyCodecTest, PaddedIntegersSortNumerically) {
  KeyCodec codec = ProductCustomerOrder();
  std::mt19937_64 rng(7);
  std::vector<std::pair<int64_t, std::string>> keys;
  for (int i = 0; i < 2000; ++i) {
    int64_t c = static_cast<int64_t>(rng() % 100000), o = static_cast<int64_t>(rng() % 1000000);
    std::string key;
    ASSERT_TRUE(codec.Encode(MakeRow("A100", c, o), &key).ok());
    keys.emplace_back(c * 1000000 + o, key);
  }
  for (size_t i = 1; i < keys.size(); ++i) {
    EXPECT_EQ(keys[i - 1].first < keys[i].first, keys[i - 1].second < keys[i].second);
  }
}

}  // namespace
}  // namespace widen
