// KeyCodec::DecodeRow: a key decodes back to the typed values it was encoded
// from, for every key part type, form and modifier, and a key that does not
// decode names the part. Round trips on random values (negatives, 0x00 and
// 0xFF bytes, empty strings, extreme values, pre-1970 times) check
// decode(encode(row)) == row and encode(decode(key)) == key; byte layouts
// follow docs/format.md.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "tests/transform/key_parts.h"
#include "transform/key_codec.h"

namespace widen {
namespace {

using testing::Part;

KeyPartPlan Literal(std::string text) {
  KeyPartPlan p;
  p.name = "literal";
  p.is_literal = true;
  p.literal = std::move(text);
  return p;
}

Row MakeRow(std::vector<Value> v) {
  Row r;
  r.values = std::move(v);
  return r;
}

// Same type and the same value: exact text, decimals compared as numbers
// ("12.5" is 12.50), NULL as NULL.
::testing::AssertionResult SameValue(const Value& want, const Value& got) {
  if (want.is_null() || got.is_null()) {
    if (want.is_null() && got.is_null()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "want " << want.DebugString() << ", got " << got.DebugString();
  }
  const bool same = want.type() == got.type() &&
                    (want.type() == ValueType::kDecimal ? CompareValues(want, got) == 0
                                                        : want.ToText() == got.ToText());
  if (same) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "want " << ValueTypeName(want.type()) << " " << want.DebugString() << ", got "
         << ValueTypeName(got.type()) << " " << got.DebugString();
}

// Encodes `row`, decodes the key, and checks both round trips.
void RoundTrip(const KeyCodec& codec, const Row& row, const std::string& trace) {
  SCOPED_TRACE(trace);
  std::string key;
  Status s = codec.Encode(row, &key);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Result<Row> back = codec.DecodeRow(key);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  for (const KeyPartPlan& p : codec.parts()) {
    if (p.is_literal) continue;
    ASSERT_LT(p.index, back->size());
    EXPECT_TRUE(SameValue(row[p.index], (*back)[p.index])) << "part " << p.name;
  }
  std::string again;
  s = codec.Encode(*back, &again);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ToStringBinary(again), ToStringBinary(key));
}

// Random values of one source type, with the edges of its range.
struct Source {
  ValueType type;
  std::function<Value(std::mt19937_64&)> make;
};

std::string RandomBytes(std::mt19937_64& r) {
  static const char kAlpha[] = {'\0', '\x01', 'a', 'b', '|', '\xff', '-'};
  std::string s;
  for (int i = 0, n = int(r() % 5); i < n; ++i) s += kAlpha[r() % sizeof kAlpha];
  return s;
}

Source Ints() {
  return {ValueType::kInt, [](std::mt19937_64& r) {
            static const int64_t kEdges[] = {INT64_MIN, INT32_MIN, -1, 0, 1, INT32_MAX, INT64_MAX};
            return Value::Int(r() % 2 ? kEdges[r() % 7] : int64_t(r()));
          }};
}

// Binary form: (key type, the source type of its values) for every key type.
struct BinaryCase {
  KeyType key;
  Source source;
};

std::vector<BinaryCase> BinaryCases() {
  std::vector<BinaryCase> c;
  c.push_back({KeyType::kInt64, Ints()});
  c.push_back({KeyType::kInt32, {ValueType::kInt, [](std::mt19937_64& r) {
                                   static const int64_t kEdges[] = {INT32_MIN, -1, 0, INT32_MAX};
                                   return Value::Int(r() % 2 ? kEdges[r() % 4]
                                                             : int64_t(int32_t(r())));
                                 }}});
  c.push_back({KeyType::kInt16, {ValueType::kInt, [](std::mt19937_64& r) {
                                   return Value::Int(int64_t(int16_t(r())));
                                 }}});
  c.push_back({KeyType::kInt8, {ValueType::kInt, [](std::mt19937_64& r) {
                                  return Value::Int(int64_t(int8_t(r())));
                                }}});
  // MySQL BIGINT UNSIGNED, in uint64 and (when small enough) int64 parts.
  c.push_back({KeyType::kUInt64,
               {ValueType::kUInt, [](std::mt19937_64& r) {
                  static const uint64_t kEdges[] = {0, 1, UINT64_MAX, uint64_t(INT64_MAX) + 1};
                  return Value::UInt(r() % 2 ? kEdges[r() % 4] : r());
                }}});
  c.push_back({KeyType::kInt64,
               {ValueType::kUInt, [](std::mt19937_64& r) { return Value::UInt(r() >> 1); }}});
  c.push_back({KeyType::kFloat64,
               {ValueType::kFloat, [](std::mt19937_64& r) {
                  static const double kEdges[] = {-std::numeric_limits<double>::infinity(),
                                                  -1e308,
                                                  -0.0,
                                                  0.0,
                                                  std::numeric_limits<double>::denorm_min(),
                                                  std::numeric_limits<double>::infinity(),
                                                  std::numeric_limits<double>::quiet_NaN()};
                  return Value::Float(
                      r() % 2 ? kEdges[r() % 7]
                              : std::ldexp(double(int64_t(r())) / 9.2e18, int(r() % 200) - 100));
                }}});
  c.push_back({KeyType::kFloat32, {ValueType::kFloat, [](std::mt19937_64& r) {
                                     return Value::Float(double(float(int32_t(r())) / 1024.0f));
                                   }}});
  // Integers and decimals in a double part come back as themselves.
  c.push_back({KeyType::kFloat64, {ValueType::kInt, [](std::mt19937_64& r) {
                                     return Value::Int(int64_t(int32_t(r())));
                                   }}});
  c.push_back({KeyType::kDecimal, {ValueType::kDecimal, [](std::mt19937_64& r) {
                                     static const char* kEdges[] = {
                                         "0",       "-0",    "0.000",
                                         "-100.50", "0.001", "123456789012345678901234567890.5"};
                                     if (r() % 2) {
                                       return Value::Str(ValueType::kDecimal, kEdges[r() % 6]);
                                     }
                                     std::string s = r() % 2 ? "-" : "";
                                     s += std::to_string(r() % 100000);
                                     s += "." + std::to_string(r() % 1000);
                                     return Value::Str(ValueType::kDecimal, s);
                                   }}});
  c.push_back({KeyType::kDecimal, Ints()});
  c.push_back({KeyType::kBool,
               {ValueType::kBool, [](std::mt19937_64& r) { return Value::Bool(r() % 2); }}});
  c.push_back({KeyType::kDate, {ValueType::kDate, [](std::mt19937_64& r) {
                                  // 1696-03-17 .. 2243-10-16, pre-1970 included
                                  return Value::Temporal(ValueType::kDate,
                                                         int64_t(r() % 200000) - 100000);
                                }}});
  for (ValueType t : {ValueType::kTimestamp, ValueType::kTimestampTz}) {
    c.push_back({KeyType::kTimestamp, {t, [t](std::mt19937_64& r) {
                                         // whole ms (a key holds ms), before and after 1970
                                         return Value::Temporal(
                                             t,
                                             (int64_t(r() % 4000000000000) - 2000000000000) * 1000);
                                       }}});
  }
  c.push_back({KeyType::kTimestamp, {ValueType::kDate, [](std::mt19937_64& r) {
                                       return Value::Temporal(ValueType::kDate,
                                                              int64_t(r() % 40000) - 20000);
                                     }}});
  c.push_back({KeyType::kTimestamp, {ValueType::kInt, [](std::mt19937_64& r) {
                                       return Value::Int(int64_t(r() % 4000000000000) -
                                                         2000000000000);
                                     }}});
  c.push_back({KeyType::kTime, {ValueType::kTime, [](std::mt19937_64& r) {
                                  // MySQL TIME: -838:59:59 .. 838:59:59, microseconds
                                  return Value::Temporal(
                                      ValueType::kTime,
                                      int64_t(r() % 6040000000000) - 3020000000000);
                                }}});
  for (ValueType t : {ValueType::kText, ValueType::kBytes, ValueType::kJson, ValueType::kOther}) {
    c.push_back(
        {KeyType::kString, {t, [t](std::mt19937_64& r) { return Value::Str(t, RandomBytes(r)); }}});
  }
  c.push_back({KeyType::kBytes, {ValueType::kBytes, [](std::mt19937_64& r) {
                                   return Value::Str(ValueType::kBytes, RandomBytes(r));
                                 }}});
  // Other types in a string part are written as their text, and read back.
  c.push_back({KeyType::kString, Ints()});
  c.push_back({KeyType::kString, {ValueType::kTimestampTz, [](std::mt19937_64& r) {
                                    return Value::Temporal(
                                        ValueType::kTimestampTz,
                                        int64_t(r() % 4000000000000000) - 2000000000000000);
                                  }}});
  return c;
}

TEST(KeyDecodeTest, BinaryPartsDecodeToTheirValuesForEveryTypeAndModifier) {
  const std::vector<BinaryCase> cases = BinaryCases();
  std::mt19937_64 rng(7);
  for (size_t i = 0; i < cases.size(); ++i) {
    const BinaryCase& c = cases[i];
    for (int variant = 0; variant < 4; ++variant) {
      const bool desc = variant & 1, marker = variant & 2;
      // The part under test between two others, so that it must end where
      // its encoding ends.
      KeyPartPlan p = Part("p", 1, c.key, c.source.type);
      p.desc = desc;
      p.null_marker = marker;
      KeyCodec codec(KeyForm::kBinary,
                     {Part("a", 0, KeyType::kString, ValueType::kText), p,
                      Part("z", 2, KeyType::kInt32, ValueType::kInt)},
                     "");
      for (int n = 0; n < 50; ++n) {
        Value v = marker && n % 7 == 0 ? Value::Null(c.source.type) : c.source.make(rng);
        RoundTrip(codec,
                  MakeRow({Value::Str(ValueType::kText, RandomBytes(rng)), v,
                           Value::Int(int64_t(int32_t(rng())))}),
                  std::string(KeyTypeName(c.key)) + " of " +
                      std::string(ValueTypeName(c.source.type)) + (desc ? " desc" : "") +
                      (marker ? " marker" : "") + " value " + v.DebugString());
      }
    }
  }
}

TEST(KeyDecodeTest, FixedWidthStringsAndReversedTimestamps) {
  KeyPartPlan fixed = Part("code", 0, KeyType::kString, ValueType::kText, 6);
  KeyPartPlan sent = Part("sent_at", 1, KeyType::kTimestamp, ValueType::kTimestamp);
  sent.reverse = true;
  KeyCodec codec(KeyForm::kBinary, {fixed, sent}, "");
  RoundTrip(codec,
            MakeRow({Value::Str(ValueType::kText, "A1"),
                     Value::Temporal(ValueType::kTimestamp, 1700000000123000)}),
            "fixed A1");
  RoundTrip(codec,
            MakeRow({Value::Str(ValueType::kText, ""), Value::Temporal(ValueType::kTimestamp, 0)}),
            "fixed empty, epoch");
  RoundTrip(codec,
            MakeRow({Value::Str(ValueType::kText, "ABCDEF"),
                     Value::Temporal(ValueType::kTimestamp, INT64_MAX / 1000 * 1000)}),
            "full width, last ms");
  // Microseconds are floored to the ms the key holds.
  std::string key;
  ASSERT_TRUE(codec
                  .Encode(MakeRow({Value::Str(ValueType::kText, "x"),
                                   Value::Temporal(ValueType::kTimestamp, 1999)}),
                          &key)
                  .ok());
  Result<Row> back = codec.DecodeRow(key);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)[1].type(), ValueType::kTimestamp);
  EXPECT_EQ((*back)[1].as_int(), 1000);
}

// The text form: zero-padded integers, the separator, reversed timestamps,
// and each type's text (docs/format.md, "Text key parts").
TEST(KeyDecodeTest, TextPartsDecodeToTheirValues) {
  KeyPartPlan reversed = Part("sent_at", 6, KeyType::kTimestamp, ValueType::kTimestampTz);
  reversed.reverse = true;
  KeyCodec codec(KeyForm::kText,
                 {Literal("u"), Part("customer_id", 0, KeyType::kInt32, ValueType::kInt, 5),
                  Part("big", 1, KeyType::kUInt64, ValueType::kUInt, 20),
                  Part("delta", 2, KeyType::kInt64, ValueType::kInt),
                  Part("name", 3, KeyType::kString, ValueType::kText),
                  Part("at", 4, KeyType::kString, ValueType::kTimestamp),
                  Part("day", 5, KeyType::kString, ValueType::kDate), reversed,
                  Part("dur", 7, KeyType::kString, ValueType::kTime),
                  Part("ratio", 8, KeyType::kString, ValueType::kFloat),
                  Part("ok", 9, KeyType::kString, ValueType::kBool),
                  Part("price", 10, KeyType::kString, ValueType::kDecimal),
                  Part("when", 11, KeyType::kString, ValueType::kTimestampTz)},
                 "::");
  std::mt19937_64 rng(11);
  const std::vector<std::string> names = {"", "a", "A100", "é", "a:b", "-1"};
  for (int n = 0; n < 200; ++n) {
    const int64_t ms = int64_t(rng() % 4000000000000);
    Row row = MakeRow({
        Value::Int(int64_t(rng() % 100000)),
        Value::UInt(n % 3 == 0 ? UINT64_MAX : rng()),
        Value::Int(n % 5 == 0 ? INT64_MIN : int64_t(rng())),
        Value::Str(ValueType::kText, names[rng() % names.size()]),
        Value::Temporal(ValueType::kTimestamp,
                        (int64_t(rng() % 4000000000000000) - 2000000000000000)),  // microseconds
        Value::Temporal(ValueType::kDate, int64_t(rng() % 1000000) - 500000),     // 0601 .. 3338
        Value::Temporal(ValueType::kTimestampTz, ms * 1000),
        Value::Temporal(ValueType::kTime, int64_t(rng() % 6040000000000) - 3020000000000),
        Value::Float(n % 7 == 0 ? -0.0 : double(int64_t(rng())) / 1e9),
        Value::Bool(rng() % 2),
        Value::Str(ValueType::kDecimal, n % 2 ? "-12.50" : "0.000"),
        Value::Temporal(ValueType::kTimestampTz, int64_t(rng() % 100000000000000)),
    });
    RoundTrip(codec, row, "row " + std::to_string(n));
  }
  // The exact key: zero padding, the separator, Long.MAX_VALUE - ms.
  std::string key;
  Row row = MakeRow(
      {Value::Int(42), Value::UInt(7), Value::Int(-3), Value::Str(ValueType::kText, "Ana"),
       Value::Temporal(ValueType::kTimestamp, -1),  // 1969-12-31 23:59:59.999999
       Value::Temporal(ValueType::kDate, -1), Value::Temporal(ValueType::kTimestampTz, 0),
       Value::Temporal(ValueType::kTime, -1500000), Value::Float(0.5), Value::Bool(true),
       Value::Str(ValueType::kDecimal, "1.0"), Value::Temporal(ValueType::kTimestampTz, 1000000)});
  ASSERT_TRUE(codec.Encode(row, &key).ok());
  EXPECT_EQ(key,
            "u::00042::00000000000000000007::-3::Ana::1969-12-31 23:59:59.999999::1969-12-31::"
            "9223372036854775807::-00:00:01.5::0.5::true::1.0::1970-01-01T00:00:01Z");
  Result<Row> back = codec.DecodeRow(key);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)[0].type(), ValueType::kInt);
  EXPECT_EQ((*back)[0].as_int(), 42);
  EXPECT_EQ((*back)[4].as_int(), -1);
  EXPECT_EQ((*back)[5].as_int(), -1);
  EXPECT_EQ((*back)[6].type(), ValueType::kTimestampTz);
  EXPECT_EQ((*back)[6].as_int(), 0);
  EXPECT_EQ((*back)[7].as_int(), -1500000);
}

TEST(KeyDecodeTest, SaltAndHashPrefixAreCheckedNotReturned) {
  for (KeyForm form : {KeyForm::kText, KeyForm::kBinary}) {
    SCOPED_TRACE(form == KeyForm::kText ? "text" : "binary");
    KeyCodec codec(form,
                   {Part("user_id", 0, KeyType::kInt64, ValueType::kInt, 8),
                    Part("tag", 1, KeyType::kString, ValueType::kText)},
                   form == KeyForm::kText ? "|" : "", KeyHashPlan{16, {0}}, KeyHashPlan{2, {}});
    std::mt19937_64 rng(3);
    for (int n = 0; n < 100; ++n) {
      RoundTrip(
          codec,
          MakeRow({Value::Int(int64_t(rng() % 100000000)),
                   Value::Str(ValueType::kText, form == KeyForm::kText ? "t" : RandomBytes(rng))}),
          "row " + std::to_string(n));
    }
    std::string key;
    ASSERT_TRUE(
        codec.Encode(MakeRow({Value::Int(5), Value::Str(ValueType::kText, "t")}), &key).ok());
    // Another bucket: the salt no longer matches the parts.
    std::string wrong = key;
    if (form == KeyForm::kText) {
      wrong[1] = wrong[1] == '9' ? '8' : '9';
    } else {
      wrong[0] = static_cast<char>((wrong[0] + 1) % 16);
    }
    Result<Row> r = codec.DecodeRow(wrong);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("its salt"), std::string::npos) << r.status().message();
    // Another hash prefix.
    wrong = key;
    const size_t h = form == KeyForm::kText ? 3 : 1;
    wrong[h] = wrong[h] == 'a' ? 'b' : 'a';
    r = codec.DecodeRow(wrong);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("its hash prefix"), std::string::npos)
        << r.status().message();
  }
}

TEST(KeyDecodeTest, ErrorsNameThePartThatDidNotDecode) {
  KeyCodec text(KeyForm::kText,
                {Part("product_code", 0, KeyType::kString, ValueType::kText),
                 Part("customer_id", 1, KeyType::kInt32, ValueType::kInt, 5),
                 Part("ordered_at", 2, KeyType::kString, ValueType::kDate)},
                "|");
  auto message = [](const KeyCodec& codec, std::string_view key) {
    Result<Row> r = codec.DecodeRow(key);
    EXPECT_FALSE(r.ok()) << ToStringBinary(key);
    if (r.ok()) return std::string();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    return r.status().message();
  };
  EXPECT_EQ(message(text, "A100|0000x|2024-01-02"),
            "row key 'A100|0000x|2024-01-02' does not decode: part 'customer_id' (int32, byte 5): "
            "'0000x' is not 5 zero-padded digits of type int");
  EXPECT_EQ(message(text, "A100|00001|2024-02-30"),
            "row key 'A100|00001|2024-02-30' does not decode: part 'ordered_at' (string, byte 11): "
            "'2024-02-30' does not read as type date");
  EXPECT_EQ(message(text, "A100|00001"),
            "row key 'A100|00001' does not decode: part 'customer_id' (int32, byte 5): no "
            "separator '|' after it");

  KeyCodec binary(KeyForm::kBinary,
                  {Literal("o"), Part("order_id", 0, KeyType::kInt32, ValueType::kInt),
                   Part("note", 1, KeyType::kString, ValueType::kText)},
                  "");
  EXPECT_EQ(message(binary, std::string("o\x80\x00", 3)),
            "row key 'o\\x80\\x00' does not decode: part 'order_id' (int32, byte 1): needs 4 "
            "bytes, 2 left");
  EXPECT_EQ(message(binary, std::string("x\x80\x00\x00\x01", 5)),
            "row key 'x\\x80\\x00\\x00\\x01' does not decode: part 'literal' (literal, byte 0): "
            "'x\\x80\\x00\\x00\\x01' does not start with the literal 'o'");
  // An unterminated string.
  EXPECT_EQ(message(binary, std::string("o\x80\x00\x00\x01"
                                        "ab",
                                        7)),
            "row key 'o\\x80\\x00\\x00\\x01ab' does not decode: part 'note' (string, byte 5): no "
            "well-formed string at 'ab'");
  EXPECT_EQ(
      message(binary, std::string("o\x80\x00\x00\x01"
                                  "ab\x00\x01!",
                                  10)),
      "row key 'o\\x80\\x00\\x00\\x01ab\\x00\\x01!' does not decode: 1 byte(s) left after its "
      "last part: '!'");
}

// A codec read back from a table's metadata (FromJson) does not know the
// source types: binary parts give their key type's values, text parts text.
TEST(KeyDecodeTest, WithoutSourceTypesPartsGiveTheirKeyTypesValues) {
  KeyPartPlan sent = Part("sent_at", 1, KeyType::kTimestamp, ValueType::kTimestamp);
  sent.reverse = true;
  KeyCodec made(KeyForm::kBinary,
                {Part("user_id", 0, KeyType::kInt32, ValueType::kInt), sent,
                 Part("price", 2, KeyType::kDecimal, ValueType::kDecimal)},
                "");
  Result<KeyCodec> stored = KeyCodec::FromJson(made.ToJson());
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  std::string key;
  ASSERT_TRUE(
      made.Encode(MakeRow({Value::Int(-7), Value::Temporal(ValueType::kTimestamp, 1700000000000000),
                           Value::Str(ValueType::kDecimal, "-0.50")}),
                  &key)
          .ok());
  Result<Row> back = stored->DecodeRow(key);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(SameValue(Value::Int(-7), (*back)[0]));
  EXPECT_TRUE(SameValue(Value::Temporal(ValueType::kTimestamp, 1700000000000000), (*back)[1]));
  EXPECT_TRUE(SameValue(Value::Str(ValueType::kDecimal, "-0.5"), (*back)[2]));

  KeyCodec text(KeyForm::kText, {Part("customer_id", 0, KeyType::kInt32, ValueType::kInt, 5)}, "");
  stored = KeyCodec::FromJson(text.ToJson());
  ASSERT_TRUE(stored.ok());
  back = stored->DecodeRow("00042");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(SameValue(Value::Str(ValueType::kText, "00042"), (*back)[0]));
}

}  // namespace
}  // namespace widen
