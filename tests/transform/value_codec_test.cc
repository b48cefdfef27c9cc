#include "transform/value_codec.h"

#include <gtest/gtest.h>

#include <limits>

namespace widen {
namespace {

std::string Enc(HBaseType t, const Value& v) {
  ValueCodecPlan p;
  p.kind = ValueCodecKind::kHBase;
  p.hbase_type = t;
  std::string out;
  Status s = EncodeValue(p, v, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

// Expected bytes follow HBase's Bytes.toBytes(short|int|long|float|double|boolean|BigDecimal).
TEST(HBaseCodecTest, KnownBytes) {
  EXPECT_EQ(Enc(HBaseType::kShort, Value::Int(-2)), std::string("\xff\xfe", 2));
  EXPECT_EQ(Enc(HBaseType::kInt, Value::Int(1)), std::string("\x00\x00\x00\x01", 4));
  EXPECT_EQ(Enc(HBaseType::kLong, Value::Int(-1)), std::string(8, '\xff'));
  EXPECT_EQ(Enc(HBaseType::kDouble, Value::Float(1.0)),
            std::string("\x3f\xf0\x00\x00\x00\x00\x00\x00", 8));
  EXPECT_EQ(Enc(HBaseType::kFloat, Value::Float(-2.0)), std::string("\xc0\x00\x00\x00", 4));
  EXPECT_EQ(Enc(HBaseType::kBoolean, Value::Bool(true)), std::string("\xff", 1));
  EXPECT_EQ(Enc(HBaseType::kBoolean, Value::Bool(false)), std::string("\x00", 1));
  EXPECT_EQ(Enc(HBaseType::kString, Value::Str(ValueType::kText, "h\xc3\xa9")), "h\xc3\xa9");
}

// new BigDecimal("119.90"): scale 2, unscaled 11990 = 0x2ED6.
// new BigDecimal("-1.28"): scale 2, unscaled -128 = 0x80 (one byte, two's complement).
// new BigDecimal("128"): scale 0, unscaled 128 = 0x00 0x80 (sign byte needed).
// new BigDecimal("0.000"): scale 3, unscaled 0 = 0x00.
TEST(HBaseCodecTest, BigDecimalLikeJava) {
  auto dec = [](const char* s) { return Value::Str(ValueType::kDecimal, s); };
  EXPECT_EQ(Enc(HBaseType::kBigDecimal, dec("119.90")), std::string("\x00\x00\x00\x02\x2e\xd6", 6));
  EXPECT_EQ(Enc(HBaseType::kBigDecimal, dec("-1.28")), std::string("\x00\x00\x00\x02\x80", 5));
  EXPECT_EQ(Enc(HBaseType::kBigDecimal, dec("128")), std::string("\x00\x00\x00\x00\x00\x80", 6));
  EXPECT_EQ(Enc(HBaseType::kBigDecimal, dec("0.000")), std::string("\x00\x00\x00\x03\x00", 5));
  EXPECT_EQ(Enc(HBaseType::kBigDecimal, dec("-129")), std::string("\x00\x00\x00\x00\xff\x7f", 6));
  // 2^64 = 18446744073709551616 -> 01 00 00 00 00 00 00 00 00
  EXPECT_EQ(Enc(HBaseType::kBigDecimal, dec("18446744073709551616")),
            std::string("\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00", 13));
}

TEST(HBaseCodecTest, DoesNotFitIsAnError) {
  ValueCodecPlan p;
  p.kind = ValueCodecKind::kHBase;
  p.hbase_type = HBaseType::kShort;
  std::string out;
  Status s = EncodeValue(p, Value::Int(70000), &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  p.hbase_type = HBaseType::kBigDecimal;
  EXPECT_EQ(EncodeValue(p, Value::Str(ValueType::kDecimal, "NaN"), &out).code(),
            StatusCode::kInvalidArgument);
}

TEST(HBaseCodecTest, DefaultTypesFromSource) {
  EXPECT_EQ(DefaultHBaseType(ValueType::kInt, "smallint"), HBaseType::kShort);
  EXPECT_EQ(DefaultHBaseType(ValueType::kInt, "integer"), HBaseType::kInt);
  EXPECT_EQ(DefaultHBaseType(ValueType::kInt, "bigint"), HBaseType::kLong);
  EXPECT_EQ(DefaultHBaseType(ValueType::kInt, "smallint unsigned"), HBaseType::kInt);
  EXPECT_EQ(DefaultHBaseType(ValueType::kInt, "int unsigned"), HBaseType::kLong);
  EXPECT_EQ(DefaultHBaseType(ValueType::kFloat, "real"), HBaseType::kFloat);
  EXPECT_EQ(DefaultHBaseType(ValueType::kFloat, "double precision"), HBaseType::kDouble);
  EXPECT_EQ(DefaultHBaseType(ValueType::kDecimal, "numeric(10,2)"), HBaseType::kBigDecimal);
  EXPECT_EQ(DefaultHBaseType(ValueType::kTimestamp, "timestamp without time zone"),
            HBaseType::kLong);
}

TEST(JsonCodecTest, Literals) {
  auto json = [](const Value& v) {
    std::string s;
    AppendJson(v, &s);
    return s;
  };
  EXPECT_EQ(json(Value::Int(-5)), "-5");
  EXPECT_EQ(json(Value::Bool(true)), "true");
  EXPECT_EQ(json(Value::Null(ValueType::kText)), "null");
  EXPECT_EQ(json(Value::Str(ValueType::kDecimal, "1.50")), "\"1.50\"");
  EXPECT_EQ(json(Value::Str(ValueType::kText, "a\"b\\c\n\x01")), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(json(Value::Float(std::numeric_limits<double>::infinity())), "\"Infinity\"");
  EXPECT_EQ(json(Value::Str(ValueType::kBytes, std::string("\x00\xff", 2))), "\"\\\\x00ff\"");
  EXPECT_EQ(json(Value::Str(ValueType::kJson, "{\"a\":[1]}")), "{\"a\":[1]}");
}

TEST(RawCodecTest, BytesAsTheyAre) {
  ValueCodecPlan p;
  p.kind = ValueCodecKind::kRaw;
  std::string out;
  ASSERT_TRUE(EncodeValue(p, Value::Str(ValueType::kBytes, std::string("\x00\x01", 2)), &out).ok());
  EXPECT_EQ(out, std::string("\x00\x01", 2));
}

}  // namespace
}  // namespace widen
