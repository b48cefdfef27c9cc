#include <gtest/gtest.h>
#include <cmath>

#include "extract/mysql_text_internal.h"

namespace widen::mysql_internal {
namespace {

TEST(MySqlTextTest, ParsesUrls) {
  auto u = ParseMySqlUrl("mysql://ana:p%40ss%3Aw@db.example:3307/shop%20x");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->user, "ana");
  EXPECT_TRUE(u->has_password);
  EXPECT_EQ(u->password, "p@ss:w");
  EXPECT_EQ(u->host, "db.example");
  EXPECT_EQ(u->port, 3307);
  EXPECT_EQ(u->database, "shop x");

  u = ParseMySqlUrl("mariadb://widen@[::1]/db");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 3306);
  EXPECT_FALSE(u->has_password);

  u = ParseMySqlUrl("mysql://u:@h:1/d");
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->has_password);
  EXPECT_EQ(u->password, "");

  for (const char* bad :
       {"mysql://u:secret@h:1", "mysql://u:secret@h:99999/d", "mysql://u:secret@:1/d",
        "mysql://u:secret@h:1/d?ssl=1", "mysql://u:sec%zzret@h/d"}) {
    SCOPED_TRACE(bad);
    auto r = ParseMySqlUrl(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().find("secret"), std::string::npos) << r.status().message();
  }
}

TEST(MySqlTextTest, QuotesIdentifiers) {
  EXPECT_EQ(QuoteIdent("select"), "`select`");
  EXPECT_EQ(QuoteIdent("a`b``c"), "`a``b````c`");
  EXPECT_EQ(QuoteIdent("it's \"x\""), "`it's \"x\"`");
}

TEST(MySqlTextTest, KindsFromInformationSchema) {
  EXPECT_EQ(KindForColumn("bigint", "bigint(20) unsigned", false), ColumnKind::kUInt);
  EXPECT_EQ(KindForColumn("BIGINT", "bigint(20)", false), ColumnKind::kInt);
  EXPECT_EQ(KindForColumn("int", "int(10) unsigned", false), ColumnKind::kInt);
  EXPECT_EQ(KindForColumn("tinyint", "tinyint(1)", false), ColumnKind::kInt);
  EXPECT_EQ(KindForColumn("bit", "bit(1)", false), ColumnKind::kUInt);
  EXPECT_EQ(KindForColumn("float", "float", false), ColumnKind::kFloat);
  EXPECT_EQ(KindForColumn("longtext", "longtext", true), ColumnKind::kJson);
  EXPECT_EQ(KindForColumn("longtext", "longtext", false), ColumnKind::kText);
  EXPECT_EQ(KindForColumn("enum", "enum('a','b')", false), ColumnKind::kText);
  EXPECT_EQ(KindForColumn("varbinary", "varbinary(4)", false), ColumnKind::kBytes);
  EXPECT_EQ(KindForColumn("point", "point", false), ColumnKind::kGeometry);
  EXPECT_EQ(KindForColumn("timestamp", "timestamp(3)", false), ColumnKind::kTimestamp);
  EXPECT_EQ(KindForColumn("uuid", "uuid", false), ColumnKind::kOther);
  EXPECT_EQ(TypeForKind(ColumnKind::kTimestamp), ValueType::kTimestampTz);
  EXPECT_EQ(TypeForKind(ColumnKind::kDateTime), ValueType::kTimestamp);
  EXPECT_EQ(TypeForKind(ColumnKind::kGeometry), ValueType::kBytes);
}

TEST(MySqlTextTest, DatesThatAreNotCalendarDatesStayText) {
  Value v;
  ASSERT_TRUE(ParseValue(ColumnKind::kDate, "2024-02-29", &v));
  EXPECT_EQ(v.type(), ValueType::kDate);
  EXPECT_EQ(v.ToText(), "2024-02-29");
  // Zero, partial and invalid (ALLOW_INVALID_DATES) dates: never shifted.
  for (const char* s : {"0000-00-00", "2020-00-15", "2020-02-00", "2021-02-29", "2021-04-31"}) {
    SCOPED_TRACE(s);
    ASSERT_TRUE(ParseValue(ColumnKind::kDate, s, &v));
    EXPECT_EQ(v.type(), ValueType::kOther);
    EXPECT_EQ(v.as_bytes(), s);
  }
  ASSERT_TRUE(ParseValue(ColumnKind::kDateTime, "2021-02-31 10:00:00.5", &v));
  EXPECT_EQ(v.type(), ValueType::kOther);
  ASSERT_TRUE(ParseValue(ColumnKind::kDateTime, "2021-02-28 10:00:00.5", &v));
  EXPECT_EQ(v.type(), ValueType::kTimestamp);
  EXPECT_EQ(v.ToText(), "2021-02-28 10:00:00.5");
  ASSERT_TRUE(ParseValue(ColumnKind::kTimestamp, "1969-12-31 23:59:59.999999", &v));
  EXPECT_EQ(v.type(), ValueType::kTimestampTz);
  EXPECT_EQ(v.as_int(), -1);
}

TEST(MySqlTextTest, NumbersAndTimes) {
  Value v;
  ASSERT_TRUE(ParseValue(ColumnKind::kUInt, "18446744073709551615", &v));
  EXPECT_EQ(v.as_uint(), UINT64_MAX);
  EXPECT_FALSE(ParseValue(ColumnKind::kUInt, "18446744073709551616", &v));
  EXPECT_FALSE(ParseValue(ColumnKind::kInt, "12x", &v));
  ASSERT_TRUE(ParseValue(ColumnKind::kInt, "0000", &v));  // YEAR 0
  EXPECT_EQ(v.as_int(), 0);
  ASSERT_TRUE(ParseValue(ColumnKind::kDouble, "-0", &v));
  EXPECT_TRUE(std::signbit(v.as_double()));
  ASSERT_TRUE(ParseValue(ColumnKind::kDouble, "4.9406564584124654e-324", &v));
  EXPECT_EQ(v.as_double(), 4.9406564584124654e-324);
  ASSERT_TRUE(ParseValue(ColumnKind::kTime, "-838:59:59.000000", &v));
  EXPECT_EQ(v.ToText(), "-838:59:59");
  ASSERT_TRUE(ParseValue(ColumnKind::kDecimal, "-0.50", &v));
  EXPECT_EQ(v.ToText(), "-0.50");
}

}  // namespace
}  // namespace widen::mysql_internal
