#include "common/bytes.h"

#include <gtest/gtest.h>

namespace widen {
namespace {

TEST(BytesTest, BigEndianRoundTrip) {
  std::string s;
  PutFixed64BE(&s, 0x0102030405060708ull);
  PutFixed32BE(&s, 0xA0B0C0D0u);
  PutFixed16BE(&s, 0xBEEF);
  ASSERT_EQ(s.size(), 14u);
  EXPECT_EQ(s[0], 0x01);
  EXPECT_EQ(static_cast<unsigned char>(s[8]), 0xA0);
  EXPECT_EQ(DecodeFixed64BE(s.data()), 0x0102030405060708ull);
  EXPECT_EQ(DecodeFixed32BE(s.data() + 8), 0xA0B0C0D0u);
  EXPECT_EQ(DecodeFixed16BE(s.data() + 12), 0xBEEF);
}

// Expected strings follow HBase's Bytes.toStringBinary rules.
TEST(BytesTest, StringBinaryLikeHBase) {
  EXPECT_EQ(ToStringBinary("A100|00001"), "A100|00001");
  EXPECT_EQ(ToStringBinary(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(ToStringBinary("\xff\x7f"), "\\xFF\\x7F");
  EXPECT_EQ(ToStringBinary("back\\slash"), "back\\x5Cslash");
  EXPECT_EQ(ToStringBinary("tab\tnl\n"), "tab\\x09nl\\x0A");
  EXPECT_EQ(ToStringBinary("\xc3\xa9"), "\\xC3\\xA9");
}

TEST(BytesTest, FromStringBinaryInvertsToStringBinary) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  std::string back;
  ASSERT_TRUE(FromStringBinary(ToStringBinary(all), &back));
  EXPECT_EQ(back, all);
  EXPECT_FALSE(FromStringBinary("\\x4", &back));
  EXPECT_FALSE(FromStringBinary("\\xZZ", &back));
}

}  // namespace
}  // namespace widen
