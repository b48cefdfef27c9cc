// common/temporal.h: conversions between microseconds, milliseconds, days
// and calendar dates, and their text forms. Expected values come from the
// Gregorian calendar's rules and published facts (1970-01-01 is day 0,
// 2000-03-01 day 11017, the limits of 64-bit microseconds are
// -290308-12-21 19:59:05.224192 and 294247-01-10 04:00:54.775807), never
// from the code under test.
#include "common/temporal.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

namespace widen {
namespace {

// The Gregorian rules: 31-day months, April/June/September/November 30,
// February 29 in years divisible by 4 but not 100, or by 400.
unsigned DaysInMonth(int64_t y, unsigned m) {
  if (m == 2) {
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return leap ? 29 : 28;
  }
  return (m == 4 || m == 6 || m == 9 || m == 11) ? 30 : 31;
}

std::string Date(int64_t days) {
  std::string s;
  AppendDate(&s, days);
  return s;
}

std::string Timestamp(int64_t micros, bool utc = false) {
  std::string s;
  AppendTimestamp(&s, micros, utc);
  return s;
}

std::string Time(int64_t micros) {
  std::string s;
  AppendTime(&s, micros);
  return s;
}

TEST(TemporalTest, KnownDays) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(1969, 12, 31), -1);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);
  EXPECT_EQ(DaysFromCivil(2000, 1, 1), 10957);
  // 0000-03-01 (1 BC) is 719468 days before 1970 (the Gregorian era start).
  EXPECT_EQ(DaysFromCivil(0, 3, 1), -719468);
  // PostgreSQL's first and last dates: Julian day 0 (4714-11-24 BC, year
  // -4713) and the day before Julian day 2147483494 (5874898-01-01, its
  // DATE_END_JULIAN); 1970-01-01 is Julian day 2440588.
  EXPECT_EQ(DaysFromCivil(-4713, 11, 24), -2440588);
  EXPECT_EQ(DaysFromCivil(5874898, 1, 1), 2147483494 - 2440588);
  EXPECT_EQ(Date(-2440588), "-4713-11-24");
  EXPECT_EQ(Date(2147483494 - 2440588 - 1), "5874897-12-31");
  // A day past the month's end counts on into the next month.
  EXPECT_EQ(DaysFromCivil(2023, 2, 29), DaysFromCivil(2023, 3, 1));
  EXPECT_EQ(DaysFromCivil(2024, 2, 31), DaysFromCivil(2024, 3, 2));
}

// Walking day by day, the calendar date advances as the Gregorian rules say:
// across 1970, year 0, the 400-year cycle boundaries, and far out (where
// std::chrono's own years end at +-32767).
TEST(TemporalTest, ConsecutiveDaysFollowTheCalendar) {
  for (int64_t start : {int64_t{-800000}, int64_t{-146097 * 3 - 10}, int64_t{-719468 - 400},
                        int64_t{-2440588 - 1000}, int64_t{11017 - 146097}, int64_t{4000000},
                        int64_t{2145042905 - 500000}, -int64_t{1} << 40}) {
    int64_t y;
    unsigned m, d;
    CivilFromDays(start, &y, &m, &d);
    ASSERT_EQ(DaysFromCivil(y, m, d), start);
    for (int64_t day = start + 1; day < start + 900000; ++day) {
      // The expected next date, by the calendar's rules.
      if (d < DaysInMonth(y, m)) {
        ++d;
      } else if (m < 12) {
        ++m;
        d = 1;
      } else {
        ++y;
        m = 1;
        d = 1;
      }
      int64_t gy;
      unsigned gm, gd;
      CivilFromDays(day, &gy, &gm, &gd);
      ASSERT_EQ(gy, y) << day;
      ASSERT_EQ(gm, m) << day;
      ASSERT_EQ(gd, d) << day;
      ASSERT_EQ(DaysFromCivil(y, m, d), day);
    }
  }
}

TEST(TemporalTest, IsCivilDate) {
  EXPECT_TRUE(IsCivilDate(2024, 2, 29));
  EXPECT_FALSE(IsCivilDate(2023, 2, 29));
  EXPECT_FALSE(IsCivilDate(1900, 2, 29));  // divisible by 100
  EXPECT_TRUE(IsCivilDate(2000, 2, 29));   // by 400
  EXPECT_TRUE(IsCivilDate(0, 2, 29));      // 1 BC was a leap year
  EXPECT_TRUE(IsCivilDate(-4, 2, 29));
  EXPECT_FALSE(IsCivilDate(-100, 2, 29));
  EXPECT_TRUE(IsCivilDate(1000000, 2, 29));
  EXPECT_FALSE(IsCivilDate(1000100, 2, 29));
  EXPECT_FALSE(IsCivilDate(2021, 4, 31));
  EXPECT_FALSE(IsCivilDate(2021, 0, 1));
  EXPECT_FALSE(IsCivilDate(2021, 13, 1));
  EXPECT_FALSE(IsCivilDate(2021, 1, 0));
  EXPECT_FALSE(IsCivilDate(2021, 1, 32));
  EXPECT_FALSE(IsCivilDate(2021, -1, 1));
}

// Microseconds become milliseconds by flooring, for negative values too.
TEST(TemporalTest, MicrosToMsFloors) {
  EXPECT_EQ(MicrosToMs(0), 0);
  EXPECT_EQ(MicrosToMs(999), 0);
  EXPECT_EQ(MicrosToMs(1000), 1);
  EXPECT_EQ(MicrosToMs(-1), -1);
  EXPECT_EQ(MicrosToMs(-999), -1);
  EXPECT_EQ(MicrosToMs(-1000), -1);
  EXPECT_EQ(MicrosToMs(-1001), -2);
  // The int64 limits (the infinities' bit patterns) do not overflow.
  EXPECT_EQ(MicrosToMs(INT64_MAX), 9223372036854775);
  EXPECT_EQ(MicrosToMs(INT64_MIN), -9223372036854776);
  EXPECT_EQ(MicrosToMs(INT64_MIN + 1), -9223372036854776);
}

TEST(TemporalTest, CheckedProducts) {
  int64_t out = 0;
  EXPECT_TRUE(DaysToMs(-1, &out));
  EXPECT_EQ(out, -86400000);
  EXPECT_TRUE(DaysToMs(2145042905, &out));  // 5874897-12-31
  EXPECT_EQ(out, int64_t{2145042905} * 86400000);
  EXPECT_FALSE(DaysToMs(INT64_MAX, &out));
  EXPECT_FALSE(DaysToMs(INT64_MIN, &out));
  EXPECT_FALSE(DaysToMs(INT64_MAX / 86400000 + 1, &out));
  EXPECT_TRUE(MsToMicros(-1, &out));
  EXPECT_EQ(out, -1000);
  EXPECT_FALSE(MsToMicros(INT64_MAX / 1000 + 1, &out));
  EXPECT_FALSE(MsToMicros(INT64_MIN / 1000 - 1, &out));
  EXPECT_TRUE(DayAndClockToMicros(-1, ClockMicros(23, 59, 59, 999999), &out));
  EXPECT_EQ(out, -1);
  // 294247-01-10 04:00:54.775807 is the last microsecond of int64.
  EXPECT_TRUE(
      DayAndClockToMicros(DaysFromCivil(294247, 1, 10), ClockMicros(4, 0, 54, 775807), &out));
  EXPECT_EQ(out, INT64_MAX);
  EXPECT_FALSE(
      DayAndClockToMicros(DaysFromCivil(294247, 1, 10), ClockMicros(4, 0, 54, 775808), &out));
  EXPECT_FALSE(DayAndClockToMicros(INT64_MAX / 86400000000 + 1, 0, &out));
}

TEST(TemporalTest, EpochMs) {
  int64_t ms = 0;
  // Timestamps and instants: floored.
  EXPECT_TRUE(EpochMs(Value::Temporal(ValueType::kTimestamp, -500), &ms));
  EXPECT_EQ(ms, -1);
  EXPECT_TRUE(EpochMs(Value::Temporal(ValueType::kTimestampTz, 1999), &ms));
  EXPECT_EQ(ms, 1);
  // Dates: midnight UTC.
  EXPECT_TRUE(EpochMs(Value::Temporal(ValueType::kDate, -1), &ms));
  EXPECT_EQ(ms, -86400000);
  // Integers: ms as they are, the limits included.
  EXPECT_TRUE(EpochMs(Value::Int(INT64_MIN), &ms));
  EXPECT_EQ(ms, INT64_MIN);
  // The infinities, NULL and other types have none.
  for (ValueType t : {ValueType::kDate, ValueType::kTimestamp, ValueType::kTimestampTz}) {
    EXPECT_FALSE(EpochMs(Value::Temporal(t, INT64_MAX), &ms)) << ValueTypeName(t);
    EXPECT_FALSE(EpochMs(Value::Temporal(t, INT64_MIN), &ms)) << ValueTypeName(t);
    EXPECT_FALSE(EpochMs(Value::Null(t), &ms)) << ValueTypeName(t);
  }
  EXPECT_FALSE(EpochMs(Value::Temporal(ValueType::kTime, 5), &ms));
  EXPECT_FALSE(EpochMs(Value::Str(ValueType::kText, "2024-01-01"), &ms));
  EXPECT_FALSE(EpochMs(Value::Float(1.0), &ms));
}

TEST(TemporalTest, TextForms) {
  EXPECT_EQ(Date(0), "1970-01-01");
  EXPECT_EQ(Date(-1), "1969-12-31");
  EXPECT_EQ(Date(DaysFromCivil(0, 1, 1)), "0000-01-01");
  EXPECT_EQ(Date(DaysFromCivil(-1, 12, 31)), "-0001-12-31");
  EXPECT_EQ(Date(DaysFromCivil(12345, 6, 7)), "12345-06-07");
  EXPECT_EQ(Date(INT64_MAX), "infinity");
  EXPECT_EQ(Date(INT64_MIN), "-infinity");

  EXPECT_EQ(Timestamp(0), "1970-01-01 00:00:00");
  EXPECT_EQ(Timestamp(-1), "1969-12-31 23:59:59.999999");
  EXPECT_EQ(Timestamp(-1, true), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(Timestamp(-500000), "1969-12-31 23:59:59.5");
  EXPECT_EQ(Timestamp(-86400000000), "1969-12-31 00:00:00");
  EXPECT_EQ(Timestamp(INT64_MAX), "infinity");
  EXPECT_EQ(Timestamp(INT64_MIN), "-infinity");
  // One microsecond inside the int64 limits (the limits are the infinities).
  EXPECT_EQ(Timestamp(INT64_MAX - 1), "294247-01-10 04:00:54.775806");
  EXPECT_EQ(Timestamp(INT64_MIN + 1), "-290308-12-21 19:59:05.224193");

  EXPECT_EQ(Time(0), "00:00:00");
  EXPECT_EQ(Time(-1), "-00:00:00.000001");
  EXPECT_EQ(Time(ClockMicros(838, 59, 59, 0)), "838:59:59");
  EXPECT_EQ(Time(-ClockMicros(838, 59, 59, 500000)), "-838:59:59.5");
  EXPECT_EQ(Time(INT64_MIN), "-2562047788:00:54.775808");

  EXPECT_EQ(MsText(0), "1970-01-01 00:00:00");
  EXPECT_EQ(MsText(-1), "1969-12-31 23:59:59.999");
  EXPECT_EQ(MsText(-515376000000), "1953-09-02 00:00:00");
  // Beyond microseconds: the number.
  EXPECT_EQ(MsText(INT64_MAX), "9223372036854775807");
  EXPECT_EQ(MsText(INT64_MIN), "-9223372036854775808");
  EXPECT_EQ(MsText(INT64_MAX / 1000), "294247-01-10 04:00:54.775");
}

// A random sample: splitting a timestamp into its date and clock and
// putting them back gives the timestamp; its text has the date's text.
TEST(TemporalTest, TimestampsSplitIntoDateAndClock) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> any(INT64_MIN + 1, INT64_MAX - 1);
  for (int i = 0; i < 100000; ++i) {
    const int64_t us = i < 50000 ? any(rng) : any(rng) % (int64_t{400} * 366 * 86400000000);
    int64_t day = us / 86400000000;
    if (us % 86400000000 < 0) --day;
    int64_t midnight;
    if (__builtin_mul_overflow(day, int64_t{86400000000}, &midnight)) continue;  // first hours
    const int64_t clock = us - midnight;
    ASSERT_GE(clock, 0);
    ASSERT_LT(clock, 86400000000);
    int64_t back;
    ASSERT_TRUE(DayAndClockToMicros(day, clock, &back));
    ASSERT_EQ(back, us);
    const std::string text = Timestamp(us);
    ASSERT_EQ(text.substr(0, text.find(' ')), Date(day)) << us;
    const int64_t secs = clock / 1000000;
    char hms[16];
    std::snprintf(hms, sizeof hms, "%02d:%02d:%02d", static_cast<int>(secs / 3600),
                  static_cast<int>(secs / 60 % 60), static_cast<int>(secs % 60));
    ASSERT_EQ(text.substr(text.find(' ') + 1, 8), hms) << us;
    // Floored: the millisecond the microsecond falls in.
    ASSERT_LE(MicrosToMs(us) * 1000, us);
    ASSERT_LT(us - MicrosToMs(us) * 1000, 1000);
  }
}

// The parsers read back exactly what the writers write (key decoding reads
// text key parts with them), and nothing else.
TEST(TemporalTest, TextFormsReadBack) {
  std::mt19937_64 rng(17);
  for (int n = 0; n < 2000; ++n) {
    // Days from about 25,000 BC to 25,000 AD; microseconds over the whole
    // int64 range (the extremes included); times up to about +-2.5e9 hours.
    const int64_t days = n == 0 ? -719528 : int64_t(rng() % 18000000) - 9000000;
    const int64_t micros = n == 1 ? INT64_MIN + 1 : n == 2 ? INT64_MAX - 1 : int64_t(rng());
    const int64_t time = n == 3 ? INT64_MIN : int64_t(rng()) >> (rng() % 40);
    std::string d, t, tz, c;
    AppendDate(&d, days);
    AppendTimestamp(&t, micros, false);
    AppendTimestamp(&tz, micros, true);
    AppendTime(&c, time);
    int64_t back = 0;
    ASSERT_TRUE(ParseDateText(d, &back)) << d;
    EXPECT_EQ(back, days) << d;
    ASSERT_TRUE(ParseTimestampText(t, false, &back)) << t;
    EXPECT_EQ(back, micros) << t;
    ASSERT_TRUE(ParseTimestampText(tz, true, &back)) << tz;
    EXPECT_EQ(back, micros) << tz;
    ASSERT_TRUE(ParseTimeText(c, &back)) << c;
    EXPECT_EQ(back, time) << c;
  }
  int64_t v = 0;
  EXPECT_TRUE(ParseDateText("-0044-03-15", &v));
  EXPECT_EQ(v, DaysFromCivil(-44, 3, 15));
  EXPECT_TRUE(ParseDateText("infinity", &v));
  EXPECT_EQ(v, kTemporalInfinity);
  EXPECT_TRUE(ParseTimestampText("-infinity", false, &v));
  EXPECT_EQ(v, kTemporalMinusInfinity);
  EXPECT_TRUE(ParseTimestampText("1969-12-31 23:59:59.999999", false, &v));
  EXPECT_EQ(v, -1);
  EXPECT_TRUE(ParseTimeText("-838:59:59", &v));
  EXPECT_EQ(v, -ClockMicros(838, 59, 59, 0));
  // Not what the writers write: refused.
  for (const char* s : {"2024-1-02", "+2024-01-02", "2023-02-29", "2024-13-01", "02024-01-01",
                        "2024-01-02 ", "", "-0000-01-01"}) {
    EXPECT_FALSE(ParseDateText(s, &v)) << s;
  }
  for (const char* s : {"2024-01-02 10:00:00.500", "2024-01-02T10:00:00", "2024-01-02 24:00:00",
                        "2024-01-02 10:60:00", "2024-01-02 10:00", "2024-01-02 10:00:00.1234567",
                        "2024-01-02 10:00:00Z"}) {
    EXPECT_FALSE(ParseTimestampText(s, false, &v)) << s;
  }
  EXPECT_FALSE(ParseTimestampText("2024-01-02 10:00:00", true, &v));
  for (const char* s : {"-00:00:00", "1:00:00", "10:00:00.", "10:00", "99999999999999:00:00"}) {
    EXPECT_FALSE(ParseTimeText(s, &v)) << s;
  }
}

}  // namespace
}  // namespace widen
