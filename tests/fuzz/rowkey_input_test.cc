// The row key fuzz target's input format (tests/fuzz/rowkey_input.h): the
// layout's JSON, a line of source types by part, then the key bytes. The
// seeds widen_fuzz_seeds writes and the inputs libFuzzer mutates are read
// by ParseRowKeyInput, so what FormatRowKeyInput writes must read back.
#include "tests/fuzz/rowkey_input.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace widen::fuzz {
namespace {

TEST(RowKeyInputTest, WhatIsFormattedReadsBackWithEveryTypeAndAnyKeyBytes) {
  const std::string key = std::string("a\n|\0\xff", 5) + "\n";  // newlines belong to the key
  const std::vector<std::optional<ValueType>> types = {
      ValueType::kInt, std::nullopt, ValueType::kTimestampTz, ValueType::kText, ValueType::kBytes};
  const std::string text = FormatRowKeyInput("{\"form\":\"text\"}", types, key);
  // The layout's line, the types' line (an empty name: none given), the key.
  auto name = [](ValueType t) { return std::string(ValueTypeName(t)); };
  EXPECT_EQ(text, "{\"form\":\"text\"}\n" + name(ValueType::kInt) + ",," +
                      name(ValueType::kTimestampTz) + "," + name(ValueType::kText) + "," +
                      name(ValueType::kBytes) + "\n" + key);
  RowKeyInput in;
  ASSERT_TRUE(ParseRowKeyInput(text, &in));
  EXPECT_EQ(in.layout_json, "{\"form\":\"text\"}");
  EXPECT_EQ(in.types, types);
  EXPECT_EQ(in.key, key);
}

TEST(RowKeyInputTest, FewerThanTwoLinesAreNoInputAndUnknownTypeNamesAreNone) {
  RowKeyInput in;
  EXPECT_FALSE(ParseRowKeyInput("", &in));
  EXPECT_FALSE(ParseRowKeyInput("{}", &in));
  EXPECT_FALSE(ParseRowKeyInput("{}\nint", &in));
  ASSERT_TRUE(ParseRowKeyInput("{}\nno such type,\n", &in));
  EXPECT_EQ(in.types, (std::vector<std::optional<ValueType>>{std::nullopt}));
  EXPECT_EQ(in.key, "");
  ASSERT_TRUE(ParseRowKeyInput("{}\n\nk", &in));
  EXPECT_TRUE(in.types.empty());
  EXPECT_EQ(in.key, "k");
}

}  // namespace
}  // namespace widen::fuzz
