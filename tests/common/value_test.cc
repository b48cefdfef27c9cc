#include "common/value.h"
#include "common/temporal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace widen {
namespace {

TEST(ValueTest, NullIsDistinctFromEmptyAndZero) {
  Value null_text = Value::Null(ValueType::kText);
  Value empty = Value::Str(ValueType::kText, "");
  Value zero = Value::Int(0);
  EXPECT_TRUE(null_text.is_null());
  EXPECT_FALSE(empty.is_null());
  EXPECT_FALSE(zero.is_null());
  EXPECT_EQ(null_text.DebugString(), "NULL");
  EXPECT_EQ(empty.ToText(), "");
  EXPECT_LT(CompareValues(null_text, empty), 0);
  EXPECT_LT(CompareValues(Value::Null(ValueType::kInt), zero), 0);
}

TEST(ValueTest, TextForms) {
  EXPECT_EQ(Value::Int(-42).ToText(), "-42");
  EXPECT_EQ(Value::UInt(18446744073709551615ull).ToText(), "18446744073709551615");
  EXPECT_EQ(Value::Bool(true).ToText(), "true");
  EXPECT_EQ(Value::Float(0.1).ToText(), "0.1");
  EXPECT_EQ(Value::Float(std::numeric_limits<double>::quiet_NaN()).ToText(), "NaN");
  EXPECT_EQ(Value::Float(-std::numeric_limits<double>::infinity()).ToText(), "-Infinity");
  // 2021-03-04 is day 18690 since 1970-01-01.
  EXPECT_EQ(Value::Temporal(ValueType::kDate, 18690).ToText(), "2021-03-04");
  EXPECT_EQ(Value::Temporal(ValueType::kDate, -1).ToText(), "1969-12-31");
  const int64_t us = 18690LL * 86400000000LL + ((13 * 60 + 5) * 60 + 9) * 1000000LL + 120000;
  EXPECT_EQ(Value::Temporal(ValueType::kTimestamp, us).ToText(), "2021-03-04 13:05:09.12");
  EXPECT_EQ(Value::Temporal(ValueType::kTimestampTz, us).ToText(), "2021-03-04T13:05:09.12Z");
  EXPECT_EQ(Value::Temporal(ValueType::kTime, -((838LL * 3600 + 59 * 60 + 59) * 1000000)).ToText(),
            "-838:59:59");
}

TEST(ValueTest, CivilDaysRoundTrip) {
  for (int64_t d = -800000; d <= 800000; d += 997) {
    int64_t y;
    unsigned m, day;
    CivilFromDays(d, &y, &m, &day);
    EXPECT_EQ(DaysFromCivil(y, m, day), d);
  }
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);
}

TEST(ValueTest, CompareAcrossNumericTypes) {
  EXPECT_EQ(CompareValues(Value::Int(5), Value::UInt(5)), 0);
  EXPECT_LT(CompareValues(Value::Int(-1), Value::UInt(0)), 0);
  EXPECT_GT(CompareValues(Value::UInt(18446744073709551615ull), Value::Int(INT64_MAX)), 0);
  EXPECT_LT(CompareValues(Value::Str(ValueType::kDecimal, "-10.5"),
                          Value::Str(ValueType::kDecimal, "-2")),
            0);
  EXPECT_EQ(CompareValues(Value::Str(ValueType::kDecimal, "1.50"),
                          Value::Str(ValueType::kDecimal, "1.5")),
            0);
  EXPECT_GT(CompareValues(Value::Str(ValueType::kDecimal, "100"),
                          Value::Str(ValueType::kDecimal, "99.99")),
            0);
}

TEST(ValueTest, NanIsOrderedAfterNumbersAndEqualToItself) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(CompareValues(Value::Float(nan), Value::Float(nan)), 0);
  EXPECT_GT(CompareValues(Value::Float(nan), Value::Float(1e308)), 0);
  EXPECT_LT(CompareValues(Value::Float(std::numeric_limits<double>::infinity()), Value::Float(nan)),
            0);
}

TEST(ValueTest, TextComparesAsUnsignedBytes) {
  EXPECT_LT(CompareValues(Value::Str(ValueType::kText, "Z"), Value::Str(ValueType::kText, "a")), 0);
  EXPECT_LT(CompareValues(Value::Str(ValueType::kText, "ab"), Value::Str(ValueType::kText, "abc")),
            0);
  EXPECT_LT(
      CompareValues(Value::Str(ValueType::kText, "z"), Value::Str(ValueType::kText, "\xc3\xa9")),
      0);
}

}  // namespace
}  // namespace widen
