#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/temporal.h"
#include "extract/pg_text_internal.h"
#include "extract/source.h"

namespace widen::pg_internal {
namespace {

// OIDs from PostgreSQL's pg_type.dat.
constexpr uint32_t kBool = 16, kBytea = 17, kInt8 = 20, kInt4 = 23, kText = 25, kFloat4 = 700,
                   kFloat8 = 701, kDate = 1082, kTime = 1083, kTimestamp = 1114,
                   kTimestampTz = 1184, kNumeric = 1700, kUuid = 2950;

TEST(PgTextTest, Scalars) {
  Value v;
  ASSERT_TRUE(ParseText(kBool, "t", &v));
  EXPECT_EQ(v.type(), ValueType::kBool);
  EXPECT_TRUE(v.as_bool());
  ASSERT_TRUE(ParseText(kInt8, "-9223372036854775808", &v));
  EXPECT_EQ(v.as_int(), INT64_MIN);
  EXPECT_FALSE(ParseText(kInt4, "12x", &v));
  ASSERT_TRUE(ParseText(kNumeric, "-0.000000000000000000000001", &v));
  EXPECT_EQ(v.type(), ValueType::kDecimal);
  EXPECT_EQ(v.as_bytes(), "-0.000000000000000000000001");
  ASSERT_TRUE(ParseText(kText, "", &v));
  EXPECT_FALSE(v.is_null());
  EXPECT_EQ(v.as_bytes(), "");
  ASSERT_TRUE(ParseText(kUuid, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", &v));
  EXPECT_EQ(v.type(), ValueType::kOther);
}

TEST(PgTextTest, Floats) {
  Value v;
  ASSERT_TRUE(ParseText(kFloat8, "NaN", &v));
  EXPECT_TRUE(std::isnan(v.as_double()));
  ASSERT_TRUE(ParseText(kFloat8, "-Infinity", &v));
  EXPECT_EQ(v.as_double(), -std::numeric_limits<double>::infinity());
  ASSERT_TRUE(ParseText(kFloat8, "0.30000000000000004", &v));
  EXPECT_EQ(v.as_double(), 0.1 + 0.2);
  ASSERT_TRUE(ParseText(kFloat4, "0.1", &v));
  EXPECT_EQ(v.as_double(), static_cast<double>(0.1f));
}

TEST(PgTextTest, Bytea) {
  Value v;
  ASSERT_TRUE(ParseText(kBytea, "\\x00ff41", &v));
  EXPECT_EQ(v.as_bytes(), std::string("\0\xff"
                                      "A",
                                      3));
  EXPECT_FALSE(ParseText(kBytea, "\\x0", &v));
  EXPECT_FALSE(ParseText(kBytea, "plain", &v));
}

TEST(PgTextTest, DatesAndTimes) {
  Value v;
  ASSERT_TRUE(ParseText(kDate, "2021-03-04", &v));
  EXPECT_EQ(v.as_int(), 18690);
  ASSERT_TRUE(ParseText(kDate, "0001-01-01 BC", &v));
  EXPECT_EQ(v.as_int(), DaysFromCivil(0, 1, 1));
  ASSERT_TRUE(ParseText(kDate, "infinity", &v));
  EXPECT_EQ(v.ToText(), "infinity");
  ASSERT_TRUE(ParseText(kTimestamp, "2021-03-04 13:05:09.12", &v));
  EXPECT_EQ(v.ToText(), "2021-03-04 13:05:09.12");
  ASSERT_TRUE(ParseText(kTimestampTz, "2021-03-04 13:05:09+00", &v));
  EXPECT_EQ(v.type(), ValueType::kTimestampTz);
  EXPECT_EQ(v.as_int(), (18690LL * 86400 + 13 * 3600 + 5 * 60 + 9) * 1000000);
  ASSERT_TRUE(ParseText(kTimestampTz, "2021-03-04 13:05:09+05:30", &v));
  EXPECT_EQ(v.ToText(), "2021-03-04T07:35:09Z");
  ASSERT_TRUE(ParseText(kTime, "23:59:59.999999", &v));
  EXPECT_EQ(v.as_int(), 86399999999);
  EXPECT_FALSE(ParseText(kTimestamp, "2021-13-04 00:00:00", &v));
  EXPECT_FALSE(ParseText(kDate, "yesterday", &v));
}

TEST(PgTextTest, TimestampsBeyondInt64MicrosecondsStayText) {
  Value v;
  // PostgreSQL's last timestamp does not fit in int64 microseconds since 1970.
  ASSERT_TRUE(ParseText(kTimestamp, "294276-12-31 23:59:59.999999", &v));
  EXPECT_EQ(v.type(), ValueType::kOther);
  EXPECT_EQ(v.as_bytes(), "294276-12-31 23:59:59.999999");
  int64_t us;
  EXPECT_FALSE(ParseTimestamp("294276-12-31 23:59:59.999999", &us));
  ASSERT_TRUE(ParseText(kTimestampTz, "294247-01-10 04:00:54.775806+00", &v));
  EXPECT_EQ(v.type(), ValueType::kTimestampTz);
  EXPECT_EQ(v.as_int(), INT64_MAX - 1);
  ASSERT_TRUE(ParseText(kTimestampTz, "294247-01-10 04:00:54.775808+00", &v));
  EXPECT_EQ(v.type(), ValueType::kOther);
}

TEST(PgTextTest, PasswordFromTheEnvironmentGoesIntoTheUrl) {
  EXPECT_EQ(WithPassword("postgresql://u@h:5432/db", "p@ss w&rd"),
            "postgresql://u@h:5432/db?password=p%40ss%20w%26rd");
  EXPECT_EQ(WithPassword("postgresql://u@h:5432/db?sslmode=disable", "x"),
            "postgresql://u@h:5432/db?sslmode=disable&password=x");
  EXPECT_EQ(WithPassword("postgresql://u@h", "x"), "postgresql://u@h/?password=x");
  // The URL's own password, or none in the environment: unchanged.
  EXPECT_EQ(WithPassword("postgresql://u:own@h/db", "x"), "postgresql://u:own@h/db");
  EXPECT_EQ(WithPassword("postgresql://u@h/db?password=own", "x"),
            "postgresql://u@h/db?password=own");
  EXPECT_EQ(WithPassword("postgresql://u@h/db", nullptr), "postgresql://u@h/db");
}

}  // namespace
}  // namespace widen::pg_internal

namespace widen::pg_internal {
namespace {

TEST(PgTextTest, TimestampsBeyondInt64MicrosKeepTheServersText) {
  Value v;
  // PostgreSQL accepts up to year 294276; int64 microseconds end in 294247:
  // such a value is carried as the server's text, never wrapped around.
  ASSERT_TRUE(ParseText(1114, "294276-12-31 23:59:59", &v));
  EXPECT_EQ(v.type(), ValueType::kOther);
  EXPECT_EQ(v.ToText(), "294276-12-31 23:59:59");
  ASSERT_TRUE(ParseText(1114, "294000-12-31 23:59:59", &v));
  EXPECT_EQ(v.type(), ValueType::kTimestamp);
  EXPECT_EQ(v.ToText(), "294000-12-31 23:59:59");
}

TEST(PgTextTest, ConnectTimeoutIsAddedOnce) {
  EXPECT_EQ(WithConnectTimeout("postgresql://u@h:1/db"),
            "postgresql://u@h:1/db?connect_timeout=10");
  EXPECT_EQ(WithConnectTimeout("postgresql://u@h:1/db?sslmode=disable"),
            "postgresql://u@h:1/db?sslmode=disable&connect_timeout=10");
  EXPECT_EQ(WithConnectTimeout("postgresql://h?connect_timeout=3"),
            "postgresql://h?connect_timeout=3");
}

}  // namespace
}  // namespace widen::pg_internal

namespace widen {
namespace {

TEST(MaskUrlTest, EveryPasswordFormIsMasked) {
  EXPECT_EQ(MaskUrl("postgresql://u:s3cr3t@h:5432/db"), "postgresql://u:***@h:5432/db");
  EXPECT_EQ(MaskUrl("postgresql://u:s3cr@tPW@h:5432/db"), "postgresql://u:***@h:5432/db");
  EXPECT_EQ(MaskUrl("postgresql://h:1/db?user=u&password=s3cr3t&sslmode=disable"),
            "postgresql://h:1/db?user=u&password=***&sslmode=disable");
  EXPECT_EQ(MaskUrl("host=h password=s3cr3t dbname=d"), "host=h password=*** dbname=d");
  EXPECT_EQ(MaskUrl("postgresql://u@h/db"), "postgresql://u@h/db");
}

TEST(MaskUrlTest, WithoutPasswordDropsEveryForm) {
  EXPECT_EQ(WithoutPassword("postgresql://u:s3cr@tPW@h:5432/db"), "postgresql://u@h:5432/db");
  EXPECT_EQ(WithoutPassword("mysql://u:pw@h:3306/db"), "mysql://u@h:3306/db");
  EXPECT_EQ(WithoutPassword("postgresql://u@h/db?password=S3cr3t%21"), "postgresql://u@h/db");
  EXPECT_EQ(WithoutPassword("postgresql://u@h/db?sslmode=disable&password=x"),
            "postgresql://u@h/db?sslmode=disable");
  EXPECT_EQ(WithoutPassword("postgresql://h/db?user=u&password=x&sslmode=disable"),
            "postgresql://h/db?user=u&sslmode=disable");
  // A parameter name percent-encoded is the same name to libpq.
  EXPECT_EQ(WithoutPassword("postgresql://h/db?pass%77ord=x&a=1&password=y"),
            "postgresql://h/db?a=1");
  // Names that only end in "password" are other parameters.
  EXPECT_EQ(WithoutPassword("postgresql://h/db?oldpassword=1"), "postgresql://h/db?oldpassword=1");
  EXPECT_EQ(WithoutPassword("host=h password='a b\\' c' dbname=d"), "host=h dbname=d");
  EXPECT_EQ(WithoutPassword("host=h password = x dbname=d"), "host=h dbname=d");
  EXPECT_EQ(WithoutPassword("postgresql://u@h/db"), "postgresql://u@h/db");
}

TEST(MaskUrlTest, ScrubRemovesEchoedSecrets) {
  const std::string url = "postgresql://widen:s3cr3tPW@[::1:5432/shop";
  std::string msg = ScrubSecrets("invalid URI \"" + url + "\" near s3cr3tPW", url);
  EXPECT_EQ(msg.find("s3cr3tPW"), std::string::npos) << msg;
}

}  // namespace
}  // namespace widen
