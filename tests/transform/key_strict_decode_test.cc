// What the row key fuzz target (tests/fuzz/rowkey_fuzzer.cc) found, as a
// kind: a decoder that takes bytes no encoder writes. DecodeRow promises
// that encoding what it returns gives the key back, so every other
// spelling of a value is refused — a NaN other than the canonical one, a
// decimal with a leading or trailing zero digit, a non-digit or an
// exponent beyond the bound, fixed-width padding that is not all 00, a
// reversed timestamp with the top bit set (which overflowed), a text key
// whose last part holds the separator, parts of one column that disagree —
// and a stored key layout (KeyCodec::FromJson, read from a table's
// metadata by scan and get) that no mapping can give is DataLoss instead
// of indexes out of range. The bytes follow docs/format.md ("Binary key
// parts"), not the encoder.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "tests/transform/key_parts.h"
#include "transform/key_codec.h"
#include "transform/ordered_bytes.h"

namespace widen {
namespace {

using testing::Part;

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

// DecodeRow refuses `key` with InvalidArgument naming it, and `widen scan
// --decode` (Decode) shows it raw.
void Refused(const KeyCodec& codec, const std::string& key, const std::string& why) {
  SCOPED_TRACE(ToStringBinary(key));
  Result<Row> r = codec.DecodeRow(key);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message().rfind("row key '" + ToStringBinary(key) + "' does not decode", 0),
            0u)
      << r.status().message();
  EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  std::vector<std::pair<std::string, std::string>> parts;
  EXPECT_FALSE(codec.Decode(key, &parts));
}

// DecodeRow accepts `key`, and encoding the values gives it back.
Row Accepted(const KeyCodec& codec, const std::string& key) {
  SCOPED_TRACE(ToStringBinary(key));
  Result<Row> r = codec.DecodeRow(key);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return Row();
  std::string again;
  EXPECT_TRUE(codec.Encode(*r, &again).ok());
  EXPECT_EQ(ToStringBinary(again), ToStringBinary(key));
  return *r;
}

Row OneValue(Value v) {
  Row r;
  r.values.push_back(std::move(v));
  return r;
}

KeyCodec One(KeyType type, ValueType value_type, int width = 0) {
  return KeyCodec(KeyForm::kBinary, {Part("k", 0, type, value_type, width)}, "");
}

TEST(KeyStrictDecodeTest, OnlyTheCanonicalNaN) {
  // double: the canonical quiet NaN 7FF8000000000000, sign bit flipped.
  KeyCodec d = One(KeyType::kFloat64, ValueType::kFloat);
  Row r = Accepted(d, Bytes({0xFF, 0xF8, 0, 0, 0, 0, 0, 0}));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(std::isnan(r[0].as_double()));
  Refused(d, Bytes({0xFF, 0xF8, 0, 0, 0, 0, 0, 1}), "is no well-formed double");  // payload
  Refused(d, Bytes({0xFF, 0xF0, 0, 0, 0, 0, 0, 1}), "is no well-formed double");  // signalling
  // A negative NaN (FFF8...): negative values have every bit inverted.
  Refused(d, Bytes({0x00, 0x07, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}), "double");
  // +inf stays a value: 7FF0000000000000 with the sign bit flipped.
  r = Accepted(d, Bytes({0xFF, 0xF0, 0, 0, 0, 0, 0, 0}));
  EXPECT_TRUE(std::isinf(r[0].as_double()));

  KeyCodec f = One(KeyType::kFloat32, ValueType::kFloat);
  Accepted(f, Bytes({0xFF, 0xC0, 0, 0}));
  Refused(f, Bytes({0xFF, 0xC0, 0, 1}), "is no well-formed float");
  Refused(f, Bytes({0xFF, 0x80, 0, 1}), "is no well-formed float");
}

TEST(KeyStrictDecodeTest, DecimalsAreSignificantDigitsWithinTheExponentBound) {
  KeyCodec d = One(KeyType::kDecimal, ValueType::kDecimal);
  // 12.5 = 0.125 x 10^2: 03 | 80 00 00 02 | '1' '2' '5' | 00
  Row r = Accepted(d, Bytes({0x03, 0x80, 0, 0, 2, '1', '2', '5', 0}));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].as_bytes(), "12.5");
  Refused(d, Bytes({0x03, 0x80, 0, 0, 2, '1', '2', '5', '0', 0}), "no well-formed decimal");
  Refused(d, Bytes({0x03, 0x80, 0, 0, 3, '0', '1', '2', '5', 0}), "no well-formed decimal");
  Refused(d, Bytes({0x03, 0x80, 0, 0, 2, '1', 'x', '5', 0}), "no well-formed decimal");
  Refused(d, Bytes({0x03, 0x80, 0, 0, 2, 0}), "no well-formed decimal");  // no digits
  // -12.5: 01 | NOT(80 00 00 02) | NOT('1' '2' '5' 00); then a trailing '0'.
  Accepted(d, Bytes({0x01, 0x7F, 0xFF, 0xFF, 0xFD, 0xCE, 0xCD, 0xCA, 0xFF}));
  Refused(d, Bytes({0x01, 0x7F, 0xFF, 0xFF, 0xFD, 0xCE, 0xCD, 0xCA, 0xCF, 0xFF}), "decimal");

  // |E| <= 131072 (0x20000): 10^131071 = 0.1 x 10^131072 decodes to "1" and
  // 131071 zeros; one more is refused instead of a text of E digits (an
  // exponent of 2^31 decoded to 2 GiB of zeros).
  ASSERT_EQ(ordered::kMaxDecimalExponent, 131072);
  r = Accepted(d, Bytes({0x03, 0x80, 0x02, 0x00, 0x00, '1', 0}));
  EXPECT_EQ(r[0].as_bytes(), "1" + std::string(131071, '0'));
  Refused(d, Bytes({0x03, 0x80, 0x02, 0x00, 0x01, '1', 0}), "no well-formed decimal");
  Refused(d, Bytes({0x03, 0xFF, 0xFF, 0xFF, 0xFF, '1', 0}), "no well-formed decimal");
  // 0.1 x 10^-131072 is the smallest; 10^-131074 is beyond.
  r = Accepted(d, Bytes({0x03, 0x7F, 0xFE, 0x00, 0x00, '1', 0}));
  EXPECT_EQ(r[0].as_bytes(), "0." + std::string(131072, '0') + "1");
  Refused(d, Bytes({0x03, 0x7F, 0xFD, 0xFF, 0xFF, '1', 0}), "no well-formed decimal");

  // The encoder keeps the same bound: a value it could not decode again is
  // refused (its row is rejected), naming the bound.
  std::string key;
  Status s =
      d.Encode(OneValue(Value::Str(ValueType::kDecimal, "1" + std::string(131072, '0'))), &key);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("at most 131072 digits"), std::string::npos) << s.message();
  key.clear();
  ASSERT_TRUE(
      d.Encode(OneValue(Value::Str(ValueType::kDecimal, "1" + std::string(131071, '0'))), &key)
          .ok());
  EXPECT_EQ(ToStringBinary(key), ToStringBinary(Bytes({0x03, 0x80, 0x02, 0x00, 0x00, '1', 0})));
}

TEST(KeyStrictDecodeTest, FixedWidthPaddingIsAllZero) {
  KeyCodec c = One(KeyType::kString, ValueType::kText, 4);
  Row r = Accepted(c, Bytes({'a', 'b', 0, 0}));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].as_bytes(), "ab");
  Refused(c, Bytes({'a', 'b', 0, 'c'}), "is no well-formed string");
  Refused(c, Bytes({0, 0, 0, 1}), "is no well-formed string");
  Accepted(c, Bytes({0, 0, 0, 0}));
}

TEST(KeyStrictDecodeTest, ReversedTimestampsHaveTheTopBitClear) {
  // Long.MAX_VALUE - ms for ms >= 0 is 0 .. 7FFFFFFFFFFFFFFF: a key with the
  // top bit set held no time (decoding it overflowed a signed subtraction).
  KeyPartPlan p = Part("sent_at", 0, KeyType::kTimestamp, ValueType::kTimestamp);
  p.reverse = true;
  KeyCodec c(KeyForm::kBinary, {p}, "");
  Refused(c, Bytes({0x80, 0, 0, 0, 0, 0, 0, 0}), "is no well-formed timestamp");
  Refused(c, Bytes({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}), "timestamp");
  Row r = Accepted(c, Bytes({0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}));  // ms 0
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].as_int(), 0);
  std::vector<std::pair<std::string, std::string>> parts;
  ASSERT_TRUE(c.Decode(Bytes({0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}), &parts));
  EXPECT_EQ(parts[0].second, "1970-01-01 00:00:00");
}

TEST(KeyStrictDecodeTest, TextKeysLastPartHoldsNoSeparator) {
  KeyCodec c(KeyForm::kText,
             {Part("product_code", 0, KeyType::kString, ValueType::kText),
              Part("note", 1, KeyType::kString, ValueType::kText)},
             "|");
  Accepted(c, "A100|x");
  Refused(c, "A100|x|y", "part 'note' (string, byte 5): 'x|y' holds the separator '|'");
  KeyCodec two(KeyForm::kText,
               {Part("a", 0, KeyType::kString, ValueType::kText),
                Part("b", 1, KeyType::kString, ValueType::kText)},
               "::");
  Refused(two, "x::y::z", "holds the separator '::'");
}

TEST(KeyStrictDecodeTest, PartsOfOneColumnAgree) {
  // A key [id, {column: id, desc: true}] reads column 0 twice.
  KeyPartPlan up = Part("id", 0, KeyType::kInt32, ValueType::kInt);
  KeyPartPlan down = up;
  down.desc = true;
  KeyCodec c(KeyForm::kBinary, {up, down}, "");
  // int32 7 = 80 00 00 07; desc inverts it: 7F FF FF F8. 8 desc = 7F FF FF F7.
  Row r = Accepted(c, Bytes({0x80, 0, 0, 7, 0x7F, 0xFF, 0xFF, 0xF8}));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].as_int(), 7);
  Result<Row> bad = c.DecodeRow(Bytes({0x80, 0, 0, 7, 0x7F, 0xFF, 0xFF, 0xF7}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find(
                "part 'id' (int32, byte 4): it holds 8, but an earlier part of the same column "
                "holds 7"),
            std::string::npos)
      << bad.status().message();

  KeyCodec text(KeyForm::kText,
                {Part("id", 0, KeyType::kString, ValueType::kText),
                 Part("id", 0, KeyType::kString, ValueType::kText)},
                "|");
  Accepted(text, "a|a");
  EXPECT_FALSE(text.DecodeRow("a|b").ok());
}

// The layout a plan stores for a key with every kind of part, as JSON.
nlohmann::json GoodLayout() {
  KeyPartPlan lit;
  lit.name = "'o'";
  lit.is_literal = true;
  lit.literal = "o";
  KeyPartPlan sent = Part("sent_at", 1, KeyType::kTimestamp, ValueType::kTimestamp);
  sent.reverse = true;
  KeyHashPlan salt{16, {}}, hash{2, {1}};
  KeyCodec c(KeyForm::kBinary,
             {lit, Part("user_id", 0, KeyType::kInt32, ValueType::kInt), sent,
              Part("code", 2, KeyType::kString, ValueType::kText, 8)},
             "", salt, hash);
  return nlohmann::json::parse(c.ToJson());
}

TEST(KeyStrictDecodeTest, StoredLayoutsNoMappingCanGiveAreDataLoss) {
  const nlohmann::json good = GoodLayout();
  ASSERT_TRUE(KeyCodec::FromJson(good.dump()).ok());
  struct Damage {
    const char* what;
    std::function<void(nlohmann::json*)> apply;
  };
  const std::vector<Damage> damages = {
      // Indexes the codec used without a check: out of bounds, or huge.
      {"salt over part 9", [](nlohmann::json* j) { (*j)["salt"]["parts"] = {9}; }},
      {"hash over a literal", [](nlohmann::json* j) { (*j)["hash_prefix"]["parts"] = {0}; }},
      {"hash over part -1", [](nlohmann::json* j) { (*j)["hash_prefix"]["parts"] = {-1}; }},
      {"hash over part 1.5", [](nlohmann::json* j) { (*j)["hash_prefix"]["parts"] = {1.5}; }},
      {"index -1", [](nlohmann::json* j) { (*j)["parts"][1]["index"] = -1; }},
      {"index 65536", [](nlohmann::json* j) { (*j)["parts"][1]["index"] = 65536; }},
      {"index 1e30", [](nlohmann::json* j) { (*j)["parts"][1]["index"] = 1e30; }},
      {"index 2^64-1", [](nlohmann::json* j) { (*j)["parts"][1]["index"] = UINT64_MAX; }},
      // Ranges the mapping loader enforces.
      {"width -1", [](nlohmann::json* j) { (*j)["parts"][3]["width"] = -1; }},
      {"width 4097", [](nlohmann::json* j) { (*j)["parts"][3]["width"] = 4097; }},
      {"width 8.5", [](nlohmann::json* j) { (*j)["parts"][3]["width"] = 8.5; }},
      {"salt 1", [](nlohmann::json* j) { (*j)["salt"]["size"] = 1; }},
      {"salt 257", [](nlohmann::json* j) { (*j)["salt"]["size"] = 257; }},
      {"salt -16", [](nlohmann::json* j) { (*j)["salt"]["size"] = -16; }},
      {"hash 9", [](nlohmann::json* j) { (*j)["hash_prefix"]["size"] = 9; }},
      // Combinations the loader and planner never make.
      {"desc in text",
       [](nlohmann::json* j) {
         (*j)["form"] = "text";
         (*j)["separator"] = "|";
         (*j)["parts"][1]["desc"] = true;
       }},
      {"marker in text",
       [](nlohmann::json* j) {
         (*j)["form"] = "text";
         (*j)["separator"] = "|";
         (*j)["parts"][1]["null_marker"] = true;
       }},
      {"reverse int32", [](nlohmann::json* j) { (*j)["parts"][1]["reverse"] = true; }},
      {"width on int32", [](nlohmann::json* j) { (*j)["parts"][1]["width"] = 4; }},
      {"desc literal", [](nlohmann::json* j) { (*j)["parts"][0]["desc"] = true; }},
      {"missing width", [](nlohmann::json* j) { (*j)["parts"][1].erase("width"); }},
      {"desc a number", [](nlohmann::json* j) { (*j)["parts"][1]["desc"] = 1; }},
  };
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.what);
    nlohmann::json j = good;
    d.apply(&j);
    Result<KeyCodec> c = KeyCodec::FromJson(j.dump());
    ASSERT_FALSE(c.ok()) << j.dump();
    EXPECT_EQ(c.status().code(), StatusCode::kDataLoss);
    EXPECT_EQ(c.status().message().rfind("key layout: ", 0), 0u) << c.status().message();
  }
}

}  // namespace
}  // namespace widen
