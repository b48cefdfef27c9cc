#include "transform/value_codec.h"

#include "transform/plan.h"

#include <gtest/gtest.h>

#include <cmath>
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

// The default Java type is the narrowest that holds every value of the
// column's storage type (a domain's base type; MySQL's unsigned widths and
// single-precision FLOAT in every form).
TEST(HBaseCodecTest, DefaultTypesFromTheStorageType) {
  auto type_of = [](ValueType type, const char* source_type, const char* base_type = "") {
    SourceColumn c;
    c.type = type;
    c.source_type = source_type;
    c.base_type = base_type;
    return DefaultHBaseType(c);
  };
  EXPECT_EQ(type_of(ValueType::kInt, "smallint"), HBaseType::kShort);
  EXPECT_EQ(type_of(ValueType::kInt, "integer"), HBaseType::kInt);
  EXPECT_EQ(type_of(ValueType::kInt, "bigint"), HBaseType::kLong);
  EXPECT_EQ(type_of(ValueType::kInt, "small_d", "smallint"), HBaseType::kShort);
  EXPECT_EQ(type_of(ValueType::kInt, "big_d", "bigint"), HBaseType::kLong);
  EXPECT_EQ(type_of(ValueType::kInt, "oid"), HBaseType::kLong);
  EXPECT_EQ(type_of(ValueType::kInt, "tinyint(3) unsigned"), HBaseType::kShort);
  EXPECT_EQ(type_of(ValueType::kInt, "smallint(5) unsigned"), HBaseType::kInt);
  EXPECT_EQ(type_of(ValueType::kInt, "mediumint(8) unsigned"), HBaseType::kInt);
  EXPECT_EQ(type_of(ValueType::kInt, "int(10) unsigned"), HBaseType::kLong);
  EXPECT_EQ(type_of(ValueType::kInt, "year(4)"), HBaseType::kShort);
  EXPECT_EQ(type_of(ValueType::kUInt, "bigint(20) unsigned"), HBaseType::kLong);
  EXPECT_EQ(type_of(ValueType::kUInt, "bit(64)"), HBaseType::kLong);
  EXPECT_EQ(type_of(ValueType::kUInt, "bit(20)"), HBaseType::kInt);
  EXPECT_EQ(type_of(ValueType::kFloat, "real"), HBaseType::kFloat);
  EXPECT_EQ(type_of(ValueType::kFloat, "float"), HBaseType::kFloat);
  EXPECT_EQ(type_of(ValueType::kFloat, "float(5,2)"), HBaseType::kFloat);
  EXPECT_EQ(type_of(ValueType::kFloat, "float unsigned"), HBaseType::kFloat);
  EXPECT_EQ(type_of(ValueType::kFloat, "double precision"), HBaseType::kDouble);
  EXPECT_EQ(type_of(ValueType::kFloat, "double(10,2)"), HBaseType::kDouble);
  EXPECT_EQ(type_of(ValueType::kDecimal, "numeric(10,2)"), HBaseType::kBigDecimal);
  EXPECT_EQ(type_of(ValueType::kTimestamp, "timestamp without time zone"), HBaseType::kLong);
}

// What each value becomes, or why it is refused; expected bytes are those of
// Java's Bytes.toBytes (IEEE 754 bits: Double.doubleToRawLongBits(0.1) =
// 0x3FB999999999999A, Float.floatToRawIntBits(0.1f) = 0x3DCCCCCD, the
// canonical NaNs 0x7FF8000000000000 and 0x7FC00000).
TEST(HBaseCodecTest, ExactOrRefused) {
  auto enc = [](HBaseType t, const Value& v, std::string* out) {
    ValueCodecPlan p;
    p.kind = ValueCodecKind::kHBase;
    p.hbase_type = t;
    out->clear();
    return EncodeValue(p, v, out);
  };
  auto dec = [](const char* s) { return Value::Str(ValueType::kDecimal, s); };
  std::string out;
  // Unsigned values above Long.MAX_VALUE do not wrap.
  Status s = enc(HBaseType::kLong, Value::UInt(uint64_t{1} << 63), &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("value '9223372036854775808' does not fit the hbase codec's Java "
                             "long (it holds -9223372036854775808 to 9223372036854775807; type: "
                             "bigdecimal holds this value)"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(enc(HBaseType::kLong, Value::UInt(UINT64_MAX), &out).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(enc(HBaseType::kLong, Value::UInt(INT64_MAX), &out).ok());
  EXPECT_EQ(out, "\x7f\xff\xff\xff\xff\xff\xff\xff");
  ASSERT_TRUE(enc(HBaseType::kBigDecimal, Value::UInt(UINT64_MAX), &out).ok());
  EXPECT_EQ(out, std::string("\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff", 13));
  // Integral decimals are integers: numeric(20,0) = 42.
  for (HBaseType t : {HBaseType::kShort, HBaseType::kInt, HBaseType::kLong}) {
    ASSERT_TRUE(enc(t, dec("42"), &out).ok());
    EXPECT_EQ(out.back(), '\x2a');
    EXPECT_EQ(out.size(), t == HBaseType::kShort ? 2u : t == HBaseType::kInt ? 4u : 8u);
    ASSERT_TRUE(enc(t, dec("-42.00"), &out).ok());
    EXPECT_EQ(out.back(), '\xd6');
  }
  s = enc(HBaseType::kLong, dec("42.5"), &out);
  EXPECT_NE(s.message().find("(it has a fraction)"), std::string::npos) << s.message();
  EXPECT_EQ(enc(HBaseType::kLong, dec("NaN"), &out).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(enc(HBaseType::kShort, dec("32768"), &out).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(enc(HBaseType::kLong, Value::Float(-3.0), &out).ok());
  EXPECT_EQ(out, "\xff\xff\xff\xff\xff\xff\xff\xfd");
  // Decimals as double/float when the nearest one prints back the same.
  ASSERT_TRUE(enc(HBaseType::kDouble, dec("42"), &out).ok());
  EXPECT_EQ(out, std::string("\x40\x45\x00\x00\x00\x00\x00\x00", 8));
  ASSERT_TRUE(enc(HBaseType::kDouble, dec("0.1"), &out).ok());
  EXPECT_EQ(out, "\x3f\xb9\x99\x99\x99\x99\x99\x9a");
  ASSERT_TRUE(enc(HBaseType::kFloat, dec("0.1"), &out).ok());
  EXPECT_EQ(out, "\x3d\xcc\xcc\xcd");
  s = enc(HBaseType::kDouble, dec("0.12345678901234567890"), &out);
  EXPECT_NE(s.message().find("more digits than a double holds"), std::string::npos) << s.message();
  EXPECT_EQ(enc(HBaseType::kFloat, dec("0.123456789"), &out).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(enc(HBaseType::kDouble, dec("NaN"), &out).ok());
  EXPECT_EQ(out, std::string("\x7f\xf8\x00\x00\x00\x00\x00\x00", 8));
  ASSERT_TRUE(enc(HBaseType::kFloat, dec("-Infinity"), &out).ok());
  EXPECT_EQ(out, std::string("\xff\x80\x00\x00", 4));
  // Integers as double only when exact: 2^53 + 1 is not a double.
  ASSERT_TRUE(enc(HBaseType::kDouble, Value::Int(int64_t{1} << 53), &out).ok());
  EXPECT_EQ(enc(HBaseType::kDouble, Value::Int((int64_t{1} << 53) + 1), &out).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(enc(HBaseType::kDouble, Value::Int(INT64_MAX), &out).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(enc(HBaseType::kFloat, Value::Int(16777217), &out).code(),
            StatusCode::kInvalidArgument);
  // Infinite dates have no milliseconds.
  EXPECT_EQ(enc(HBaseType::kLong, Value::Temporal(ValueType::kTimestamp, INT64_MAX), &out).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(enc(HBaseType::kLong, Value::Temporal(ValueType::kDate, INT64_MIN), &out).code(),
            StatusCode::kInvalidArgument);
  // Booleans from 0/1 only.
  ASSERT_TRUE(enc(HBaseType::kBoolean, Value::UInt(1), &out).ok());
  EXPECT_EQ(out, "\xff");
  EXPECT_EQ(enc(HBaseType::kBoolean, Value::Int(2), &out).code(), StatusCode::kInvalidArgument);
  // The shortest decimal of the double, trailing zeros stripped (Java:
  // BigDecimal.valueOf(d).stripTrailingZeros()): 0.1 is unscaled 1, scale 1;
  // 1e38 unscaled 1, scale -38; 100.0 unscaled 1, scale -2.
  ASSERT_TRUE(enc(HBaseType::kBigDecimal, Value::Float(0.1), &out).ok());
  EXPECT_EQ(out, std::string("\x00\x00\x00\x01\x01", 5));
  ASSERT_TRUE(enc(HBaseType::kBigDecimal, Value::Float(1e38), &out).ok());
  EXPECT_EQ(out, std::string("\xff\xff\xff\xda\x01", 5));
  ASSERT_TRUE(enc(HBaseType::kBigDecimal, Value::Float(-100.0), &out).ok());
  EXPECT_EQ(out, std::string("\xff\xff\xff\xfe\xff", 5));
  EXPECT_EQ(enc(HBaseType::kBigDecimal, Value::Float(std::nan("")), &out).code(),
            StatusCode::kInvalidArgument);
}

TEST(HBaseCodecTest, TypesThatCannotHoldAColumnAreKnown) {
  EXPECT_FALSE(HBaseTypeAccepts(HBaseType::kLong, ValueType::kText));
  EXPECT_FALSE(HBaseTypeAccepts(HBaseType::kDouble, ValueType::kDate));
  EXPECT_FALSE(HBaseTypeAccepts(HBaseType::kBoolean, ValueType::kFloat));
  EXPECT_TRUE(HBaseTypeAccepts(HBaseType::kLong, ValueType::kDecimal));
  EXPECT_TRUE(HBaseTypeAccepts(HBaseType::kDouble, ValueType::kDecimal));
  EXPECT_TRUE(HBaseTypeAccepts(HBaseType::kString, ValueType::kOther));
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

// Arrays and SETs as JSON arrays (docs/types.md): elements by their type,
// unquoted NULL as null, quoted text unescaped; a text that is not an array
// literal stays a string.
TEST(JsonCodecTest, ListsAreArrays) {
  auto json = [](const char* text, ListForm form, ValueType element) {
    Value v = Value::Str(form == ListForm::kSet ? ValueType::kText : ValueType::kOther, text);
    v.SetList(form, element);
    std::string s;
    AppendJson(v, &s);
    return s;
  };
  EXPECT_EQ(json("x,z", ListForm::kSet, ValueType::kText), "[\"x\",\"z\"]");
  EXPECT_EQ(json("", ListForm::kSet, ValueType::kText), "[]");
  EXPECT_EQ(json("{1,NULL,-3}", ListForm::kPgArray, ValueType::kInt), "[1,null,-3]");
  EXPECT_EQ(json("{}", ListForm::kPgArray, ValueType::kInt), "[]");
  EXPECT_EQ(json("{{1,2},{3,4}}", ListForm::kPgArray, ValueType::kInt), "[[1,2],[3,4]]");
  EXPECT_EQ(json("[-1:0]={5,6}", ListForm::kPgArray, ValueType::kInt), "[5,6]");
  EXPECT_EQ(json("{\"a,b\",\"c\\\"d\",NULL,\"NULL\",\"\"}", ListForm::kPgArray, ValueType::kText),
            "[\"a,b\",\"c\\\"d\",null,\"NULL\",\"\"]");
  EXPECT_EQ(json("{t,f}", ListForm::kPgArray, ValueType::kBool), "[true,false]");
  EXPECT_EQ(json("{1.5,NaN}", ListForm::kPgArray, ValueType::kFloat), "[1.5,\"NaN\"]");
  EXPECT_EQ(json("{1.50}", ListForm::kPgArray, ValueType::kDecimal), "[\"1.50\"]");
  EXPECT_EQ(json("{\"2020-01-01 00:00:00.5+00\"}", ListForm::kPgArray, ValueType::kTimestampTz),
            "[\"2020-01-01T00:00:00.5Z\"]");
  EXPECT_EQ(json("{\"{\\\"k\\\": 1}\",null}", ListForm::kPgArray, ValueType::kJson),
            "[{\"k\": 1},null]");
  EXPECT_EQ(json("{1,2", ListForm::kPgArray, ValueType::kInt), "\"{1,2\"");
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
