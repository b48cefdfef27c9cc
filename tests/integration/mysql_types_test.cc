// Type fidelity on MySQL/MariaDB (docs/types.md, "MySQL / MariaDB"): each row
// of the type table puts its edge values into a real server and checks the
// Values that come out of Source::Scan — widen type and the text the `string`
// value codec writes. Expected values are the spec's (docs/types.md) or what
// the source database itself says (HEX(), CAST(... AS CHAR)).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "common/temporal.h"
#include "tests/integration/source_scan.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

using Strings = std::vector<std::string>;

class MySqlTypesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WIDEN_REQUIRE_MYSQL(url);
    db_ = FreshMySqlDatabase(url, "widen_it_mytypes");
  }

  // Runs statements with a permissive sql_mode (zero dates, out-of-range ENUM).
  void Exec(std::vector<std::string> statements) {
    statements.insert(statements.begin(), "SET SESSION sql_mode = ''");
    statements.push_back("SELECT 1");
    MySqlQuery(db_, statements);
  }

  ScannedTable Read(const std::string& table, const Strings& columns) {
    source_ = OpenSource(db_);
    if (source_ == nullptr) return {};
    return ScanTable(source_.get(), table, columns);
  }

  // The introspected widen type and declared type of table.column.
  std::string Introspected(const std::string& table, const std::string& column) {
    auto schema = source_->Introspect();
    EXPECT_TRUE(schema.ok()) << schema.status().ToString();
    if (!schema.ok()) return "";
    const SourceTable* t = schema->FindTable(table);
    const SourceColumn* c = t == nullptr ? nullptr : t->FindColumn(column);
    if (c == nullptr) return "missing";
    return std::string(ValueTypeName(c->type)) + " " + c->source_type;
  }

  std::string db_;
  std::unique_ptr<Source> source_;
};

TEST_F(MySqlTypesTest, IntegersOfEveryWidthSignedAndUnsigned) {
  Exec(
      {"CREATE TABLE i (id INT PRIMARY KEY, t TINYINT, tu TINYINT UNSIGNED, s SMALLINT, "
       "su SMALLINT UNSIGNED, m MEDIUMINT, mu MEDIUMINT UNSIGNED, n INT, nu INT UNSIGNED, "
       "b BIGINT, bu BIGINT UNSIGNED, z INT(5) ZEROFILL)",
       "INSERT INTO i VALUES (1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, "
       "-9223372036854775808, 0, 42), (2, 127, 255, 32767, 65535, 8388607, 16777215, "
       "2147483647, 4294967295, 9223372036854775807, 18446744073709551615, 0), "
       "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"});
  ScannedTable t = Read("i", {"id", "t", "tu", "s", "su", "m", "mu", "n", "nu", "b", "bu", "z"});
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(Column(t, 1), (Strings{"int:-128", "int:127", "int:NULL"}));
  EXPECT_EQ(Column(t, 2), (Strings{"int:0", "int:255", "int:NULL"}));
  EXPECT_EQ(Column(t, 3), (Strings{"int:-32768", "int:32767", "int:NULL"}));
  EXPECT_EQ(Column(t, 4), (Strings{"int:0", "int:65535", "int:NULL"}));
  EXPECT_EQ(Column(t, 5), (Strings{"int:-8388608", "int:8388607", "int:NULL"}));
  EXPECT_EQ(Column(t, 6), (Strings{"int:0", "int:16777215", "int:NULL"}));
  EXPECT_EQ(Column(t, 7), (Strings{"int:-2147483648", "int:2147483647", "int:NULL"}));
  EXPECT_EQ(Column(t, 8), (Strings{"int:0", "int:4294967295", "int:NULL"}));
  EXPECT_EQ(Column(t, 9),
            (Strings{"int:-9223372036854775808", "int:9223372036854775807", "int:NULL"}));
  EXPECT_EQ(Column(t, 10), (Strings{"uint:0", "uint:18446744073709551615", "uint:NULL"}));
  // ZEROFILL is display only: the value is the number.
  EXPECT_EQ(Column(t, 11), (Strings{"int:42", "int:0", "int:NULL"}));
  EXPECT_EQ(Introspected("i", "bu"), "uint bigint(20) unsigned");
  EXPECT_EQ(Introspected("i", "nu"), "int int(10) unsigned");
}

TEST_F(MySqlTypesTest, DecimalIsExactText) {
  Exec(
      {"CREATE TABLE d (id INT PRIMARY KEY, big DECIMAL(65,30), money NUMERIC(10,2), "
       "whole DECIMAL(5,0))",
       "INSERT INTO d VALUES (1, "
       "'-12345678901234567890123456789012345.123456789012345678901234567891',"
       " '-0.50', 99999), (2, '0.000000000000000000000000000001', '12345678.90', -99999), "
       "(3, NULL, '0', 0)"});
  ScannedTable t = Read("d", {"id", "big", "money", "whole"});
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(Column(t, 1),
            (Strings{"decimal:-12345678901234567890123456789012345.123456789012345678901234567891",
                     "decimal:0.000000000000000000000000000001", "decimal:NULL"}));
  EXPECT_EQ(Column(t, 2), (Strings{"decimal:-0.50", "decimal:12345678.90", "decimal:0.00"}));
  EXPECT_EQ(Column(t, 3), (Strings{"decimal:99999", "decimal:-99999", "decimal:0"}));
  EXPECT_EQ(Introspected("d", "money"), "decimal decimal(10,2)");
}

TEST_F(MySqlTypesTest, FloatIsWidenedExactlyAndDoubleRoundTrips) {
  Exec({"CREATE TABLE f (id INT PRIMARY KEY, f FLOAT, d DOUBLE)",
        "INSERT INTO f VALUES (1, 3.1415927, 0.1), (2, 1e38, 1.7976931348623157e308), "
        "(3, -1.17549435e-38, 4.9406564584124654e-324), (4, 0.1, -2.2250738585072014e-308), "
        "(5, NULL, NULL)"});
  ScannedTable t = Read("f", {"id", "f", "d"});
  ASSERT_EQ(t.rows.size(), 5u);
  // A FLOAT value is the float the server stores, widened to a double exactly.
  const float fs[] = {3.1415927f, 1e38f, -1.17549435e-38f, 0.1f};
  const double ds[] = {0.1, 1.7976931348623157e308, 4.9406564584124654e-324,
                       -2.2250738585072014e-308};
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(t.rows[i][1].type(), ValueType::kFloat);
    EXPECT_EQ(t.rows[i][1].as_double(), static_cast<double>(fs[i]));
    ASSERT_EQ(t.rows[i][2].type(), ValueType::kFloat);
    EXPECT_EQ(t.rows[i][2].as_double(), ds[i]);
  }
  EXPECT_EQ(Typed(t.rows[0][1]), "double:3.1415927410125732");
  EXPECT_EQ(Typed(t.rows[3][1]), "double:0.10000000149011612");
  EXPECT_EQ(Typed(t.rows[0][2]), "double:0.1");
  EXPECT_TRUE(t.rows[4][1].is_null());
  EXPECT_EQ(Introspected("f", "f"), "double float");
}

TEST_F(MySqlTypesTest, BooleanAndTinyint1KeepEveryValue) {
  Exec({"CREATE TABLE b (id INT PRIMARY KEY, flag BOOLEAN, t1 TINYINT(1))",
        "INSERT INTO b VALUES (1, TRUE, 0), (2, FALSE, 1), (3, 2, -1), (4, -128, 127), "
        "(5, NULL, NULL)"});
  ScannedTable t = Read("b", {"id", "flag", "t1"});
  EXPECT_EQ(Column(t, 1), (Strings{"int:1", "int:0", "int:2", "int:-128", "int:NULL"}));
  EXPECT_EQ(Column(t, 2), (Strings{"int:0", "int:1", "int:-1", "int:127", "int:NULL"}));
  EXPECT_EQ(Introspected("b", "flag"), "int tinyint(1)");
}

TEST_F(MySqlTypesTest, BitIsAnUnsignedInteger) {
  Exec({"CREATE TABLE bits (id INT PRIMARY KEY, b1 BIT(1), b5 BIT(5), b64 BIT(64))",
        "INSERT INTO bits VALUES (1, b'1', b'10101', "
        "b'1111111111111111111111111111111111111111111111111111111111111111'), "
        "(2, b'0', b'00000', b'0'), (3, NULL, NULL, "
        "b'1000000000000000000000000000000000000000000000000000000000000000')"});
  ScannedTable t = Read("bits", {"id", "b1", "b5", "b64"});
  EXPECT_EQ(Column(t, 1), (Strings{"uint:1", "uint:0", "uint:NULL"}));
  EXPECT_EQ(Column(t, 2), (Strings{"uint:21", "uint:0", "uint:NULL"}));
  EXPECT_EQ(Column(t, 3),
            (Strings{"uint:18446744073709551615", "uint:0", "uint:9223372036854775808"}));
}

TEST_F(MySqlTypesTest, TextInUtf8mb4AndLatin1ComesOutAsUtf8) {
  Exec(
      {"CREATE TABLE s (id INT PRIMARY KEY, c CHAR(5) CHARACTER SET utf8mb4, "
       "v VARCHAR(20) CHARACTER SET utf8mb4, tx TEXT CHARACTER SET utf8mb4, "
       "l VARCHAR(20) CHARACTER SET latin1, lc CHAR(3) CHARACTER SET latin1)",
       "INSERT INTO s VALUES (1, 'ab  ', '😀é', CONCAT('a', CHAR(0 USING utf8mb4), 'b'), "
       "'é€ÿ', 'Ü'), (2, '', 'trail ', '𝄞 clef', '', ''), (3, NULL, NULL, NULL, NULL, NULL)"});
  ScannedTable t = Read("s", {"id", "c", "v", "tx", "l", "lc"});
  ASSERT_EQ(t.rows.size(), 3u);
  // CHAR drops trailing spaces on read (MySQL semantics; PostgreSQL keeps the padding).
  EXPECT_EQ(Column(t, 1), (Strings{"text:ab", "text:", "text:NULL"}));
  EXPECT_EQ(Column(t, 2), (Strings{"text:\xF0\x9F\x98\x80\xC3\xA9", "text:trail ", "text:NULL"}));
  EXPECT_EQ(t.rows[0][3].as_bytes(), std::string("a\0b", 3));
  EXPECT_EQ(Typed(t.rows[1][3]), "text:\xF0\x9D\x84\x9E clef");
  // latin1 (cp1252): é, € (0x80) and ÿ arrive converted to UTF-8.
  EXPECT_EQ(Column(t, 4), (Strings{"text:\xC3\xA9\xE2\x82\xAC\xC3\xBF", "text:", "text:NULL"}));
  EXPECT_EQ(Column(t, 5), (Strings{"text:\xC3\x9C", "text:", "text:NULL"}));
  auto hex = MySqlQuery(db_, "SELECT HEX(CONVERT(l USING utf8mb4)) FROM s WHERE id = 1");
  EXPECT_EQ(Hex(t.rows[0][4].as_bytes()), hex.at(0).at(0)) << "the server's own conversion";
}

TEST_F(MySqlTypesTest, BinaryStringsKeepEveryByte) {
  Exec(
      {"CREATE TABLE bin (id INT PRIMARY KEY, b BINARY(4), vb VARBINARY(10), bl BLOB, "
       "lb LONGBLOB)",
       "INSERT INTO bin VALUES (1, 0x0001, 0x00FF0041, 0x000000, 0xFF), "
       "(2, '', '', '', REPEAT(0x00, 70000)), (3, NULL, NULL, NULL, NULL)"});
  ScannedTable t = Read("bin", {"id", "b", "vb", "bl", "lb"});
  ASSERT_EQ(t.rows.size(), 3u);
  auto expected = MySqlQuery(db_, "SELECT HEX(b), HEX(vb), HEX(bl), HEX(lb) FROM bin ORDER BY id");
  for (size_t r = 0; r < 2; ++r) {
    for (size_t c = 1; c <= 4; ++c) {
      SCOPED_TRACE(::testing::Message() << "row " << r << " column " << c);
      ASSERT_EQ(t.rows[r][c].type(), ValueType::kBytes);
      EXPECT_EQ(Hex(t.rows[r][c].as_bytes()), expected[r][c - 1]);
    }
  }
  // BINARY(n) is zero-padded by the server.
  EXPECT_EQ(t.rows[0][1].as_bytes(), std::string("\0\1\0\0", 4));
  EXPECT_EQ(t.rows[1][4].as_bytes().size(), 70000u);
  EXPECT_TRUE(t.rows[2][2].is_null());
}

TEST_F(MySqlTypesTest, DatesZeroDatesAndPartialDatesAreNeverShifted) {
  Exec({"CREATE TABLE dt (id INT PRIMARY KEY, d DATE, dtm DATETIME(6), dt0 DATETIME)",
        "INSERT INTO dt VALUES (1, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00'), "
        "(2, '2020-00-15', '2020-00-15 10:11:12.5', '2020-02-00 01:02:03'), "
        "(3, '1000-01-01', '1000-01-01 00:00:00', '1000-01-01 00:00:00'), "
        "(4, '9999-12-31', '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59'), "
        "(5, '2024-02-29', '2024-02-29 12:00:00.000001', '1970-01-01 00:00:00'), "
        "(6, '0000-01-01', NULL, NULL)"});
  ScannedTable t = Read("dt", {"id", "d", "dtm", "dt0"});
  ASSERT_EQ(t.rows.size(), 6u);
  // Zero and partial dates stay text (kOther) exactly as the server prints them.
  EXPECT_EQ(Column(t, 1), (Strings{"other:0000-00-00", "other:2020-00-15", "date:1000-01-01",
                                   "date:9999-12-31", "date:2024-02-29", "date:0000-01-01"}));
  EXPECT_EQ(Column(t, 2),
            (Strings{"other:0000-00-00 00:00:00.000000", "other:2020-00-15 10:11:12.500000",
                     "timestamp:1000-01-01 00:00:00", "timestamp:9999-12-31 23:59:59.999999",
                     "timestamp:2024-02-29 12:00:00.000001", "timestamp:NULL"}));
  EXPECT_EQ(Column(t, 3), (Strings{"other:0000-00-00 00:00:00", "other:2020-02-00 01:02:03",
                                   "timestamp:1000-01-01 00:00:00", "timestamp:9999-12-31 23:59:59",
                                   "timestamp:1970-01-01 00:00:00", "timestamp:NULL"}));
  auto server = MySqlQuery(db_, "SELECT CAST(d AS CHAR), CAST(dtm AS CHAR) FROM dt WHERE id <= 2");
  EXPECT_EQ("other:" + server[0][0], Typed(t.rows[0][1]));
  EXPECT_EQ("other:" + server[1][1], Typed(t.rows[1][2]));
  EXPECT_EQ(t.rows[2][1].as_int(), DaysFromCivil(1000, 1, 1));
}

TEST_F(MySqlTypesTest, TimestampIsAnUtcInstantWhateverTheSessionZone) {
  Exec({"CREATE TABLE ts (id INT PRIMARY KEY, t TIMESTAMP(3) NULL, t0 TIMESTAMP NULL)",
        "SET time_zone = '+05:00'",
        "INSERT INTO ts VALUES (1, '2020-01-01 05:00:00.123', '2020-06-30 23:30:00')",
        "SET time_zone = '+00:00'",
        "INSERT INTO ts VALUES (2, '1970-01-01 00:00:01', '2038-01-19 03:14:07'), "
        "(3, NULL, '0000-00-00 00:00:00')"});
  ScannedTable t = Read("ts", {"id", "t", "t0"});
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(Column(t, 1), (Strings{"timestamptz:2020-01-01T00:00:00.123Z",
                                   "timestamptz:1970-01-01T00:00:01Z", "timestamptz:NULL"}));
  EXPECT_EQ(Column(t, 2),
            (Strings{"timestamptz:2020-06-30T18:30:00Z", "timestamptz:2038-01-19T03:14:07Z",
                     "other:0000-00-00 00:00:00"}));
  EXPECT_EQ(t.rows[1][2].as_int(), 2147483647LL * 1000000);
}

TEST_F(MySqlTypesTest, TimeBeyondADayAndNegative) {
  Exec({"CREATE TABLE tm (id INT PRIMARY KEY, t TIME(6), t0 TIME)",
        "INSERT INTO tm VALUES (1, '-838:59:59', '838:59:59'), (2, '838:59:59.999999', "
        "'-00:00:01'), (3, '-00:00:01.5', '25:00:00'), (4, '00:00:00', NULL)"});
  ScannedTable t = Read("tm", {"id", "t", "t0"});
  EXPECT_EQ(Column(t, 1), (Strings{"time:-838:59:59", "time:838:59:59.999999", "time:-00:00:01.5",
                                   "time:00:00:00"}));
  EXPECT_EQ(Column(t, 2),
            (Strings{"time:838:59:59", "time:-00:00:01", "time:25:00:00", "time:NULL"}));
  EXPECT_EQ(t.rows[0][1].as_int(), -(838LL * 3600 + 59 * 60 + 59) * 1000000);
}

TEST_F(MySqlTypesTest, YearIsAnInteger) {
  Exec({"CREATE TABLE y (id INT PRIMARY KEY, y YEAR)",
        "INSERT INTO y VALUES (1, 0), (2, 1901), (3, 2155), (4, NULL)"});
  ScannedTable t = Read("y", {"id", "y"});
  // The server prints YEAR 0 as 0000; widen's text is the integer.
  EXPECT_EQ(Column(t, 1), (Strings{"int:0", "int:1901", "int:2155", "int:NULL"}));
}

TEST_F(MySqlTypesTest, EnumAndSetAreTheirLabels) {
  Exec({"CREATE TABLE es (id INT PRIMARY KEY, e ENUM('b', 'a', 'ü'), s SET('x', 'y', 'z'))",
        "INSERT INTO es VALUES (1, 'a', 'x,z'), (2, 'ü', ''), (3, 'nope', 'y'), (4, NULL, NULL)"});
  ScannedTable t = Read("es", {"id", "e", "s"});
  // 'nope' under a permissive sql_mode is stored as the empty error value.
  EXPECT_EQ(Column(t, 1), (Strings{"text:a", "text:\xC3\xBC", "text:", "text:NULL"}));
  EXPECT_EQ(Column(t, 2), (Strings{"text:x,z", "text:", "text:y", "text:NULL"}));
  EXPECT_EQ(Introspected("es", "e"), "text enum('b','a','\xC3\xBC')");
}

TEST_F(MySqlTypesTest, JsonIsTheDocumentText) {
  Exec({"CREATE TABLE j (id INT PRIMARY KEY, doc JSON)",
        "INSERT INTO j VALUES (1, '{\"b\": 1, \"a\": [1, 2.50, \"\xF0\x9F\x98\x80\"]}'), "
        "(2, 'null'), (3, NULL), (4, '12345678901234567890123')"});
  ScannedTable t = Read("j", {"id", "doc"});
  auto server = MySqlQuery(db_, "SELECT CAST(doc AS CHAR) FROM j ORDER BY id");
  ASSERT_EQ(t.rows.size(), 4u);
  for (size_t i : {0, 1, 3}) {
    ASSERT_EQ(t.rows[i][1].type(), ValueType::kJson);
    EXPECT_EQ(std::string(t.rows[i][1].as_bytes()), server[i][0]);
  }
  EXPECT_TRUE(t.rows[2][1].is_null());
  EXPECT_EQ(Introspected("j", "doc"), "json json");
}

TEST_F(MySqlTypesTest, GeometryIsSridPlusWkb) {
  Exec({"CREATE TABLE g (id INT PRIMARY KEY, g GEOMETRY NULL, p POINT NULL)",
        "INSERT INTO g VALUES (1, ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))', 4326), "
        "ST_GeomFromText('POINT(1.5 -2)')), (2, NULL, NULL)"});
  ScannedTable t = Read("g", {"id", "g", "p"});
  auto server = MySqlQuery(
      db_,
      "SELECT HEX(g), HEX(ST_AsBinary(g)), ST_SRID(g), HEX(p), HEX(ST_AsBinary(p)) FROM g "
      "WHERE id = 1");
  ASSERT_EQ(t.rows.size(), 2u);
  ASSERT_EQ(t.rows[0][1].type(), ValueType::kBytes);
  const std::string g(t.rows[0][1].as_bytes());
  EXPECT_EQ(Hex(g), server[0][0]);
  EXPECT_EQ(Hex(g.substr(4)), server[0][1]) << "after the SRID: WKB";
  uint32_t srid = 0;
  for (int i = 3; i >= 0; --i) srid = srid * 256 + static_cast<unsigned char>(g[i]);
  EXPECT_EQ(std::to_string(srid), server[0][2]);
  EXPECT_EQ(Hex(t.rows[0][2].as_bytes()), server[0][3]);
  EXPECT_EQ(Hex(std::string(t.rows[0][2].as_bytes()).substr(4)), server[0][4]);
  EXPECT_TRUE(t.rows[1][1].is_null());
}

TEST_F(MySqlTypesTest, GeneratedColumnsAreRead) {
  Exec(
      {"CREATE TABLE gen (id INT PRIMARY KEY, a INT, v INT AS (a * 2) VIRTUAL, "
       "s VARCHAR(20) AS (CONCAT('x', a)) STORED)",
       "INSERT INTO gen (id, a) VALUES (1, 21), (2, NULL)"});
  ScannedTable t = Read("gen", {"id", "v", "s"});
  EXPECT_EQ(Column(t, 1), (Strings{"int:42", "int:NULL"}));
  EXPECT_EQ(Column(t, 2), (Strings{"text:x21", "text:NULL"}));
}

TEST_F(MySqlTypesTest, OtherTypesAreTheServersText) {
  // MariaDB's UUID and INET6 types (10.7+); MySQL has neither.
  auto v = MySqlQuery(db_, "SELECT VERSION()");
  if (v.empty() || v[0][0].find("MariaDB") == std::string::npos) {
    GTEST_SKIP() << "UUID/INET6 column types are MariaDB's";
  }
  Exec({"CREATE TABLE o (id INT PRIMARY KEY, u UUID, ip INET6)",
        "INSERT INTO o VALUES (1, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '::ffff:1.2.3.4'), "
        "(2, NULL, NULL)"});
  ScannedTable t = Read("o", {"id", "u", "ip"});
  auto server = MySqlQuery(db_, "SELECT CAST(u AS CHAR), CAST(ip AS CHAR) FROM o WHERE id = 1");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(Typed(t.rows[0][1]), "other:" + server[0][0]);
  EXPECT_EQ(Typed(t.rows[0][1]), "other:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
  EXPECT_EQ(Typed(t.rows[0][2]), "other:" + server[0][1]);
  EXPECT_TRUE(t.rows[1][1].is_null());
}

}  // namespace
}  // namespace widen::testing

namespace widen::testing {
namespace {

// End to end through `widen migrate`: the edge values as cells (the `string`
// codec) and inside a nested child's JSON value, as docs/types.md gives them.
TEST(MySqlTypesEndToEndTest, EdgeValuesAsCellsAndNestedJson) {
  WIDEN_REQUIRE_MYSQL(url);
  const std::string db = FreshMySqlDatabase(url, "widen_it_myedge");
  const std::string cols =
      "bu BIGINT UNSIGNED, d DATE, tm TIME(6), b VARBINARY(8), j JSON, l VARCHAR(8) CHARACTER SET "
      "latin1, f FLOAT, x DECIMAL(65,30), ts TIMESTAMP NULL, t1 TINYINT(1), bits BIT(8)";
  const std::string vals =
      "18446744073709551615, '0000-00-00', '-838:59:59', 0x00FF00, '{\"a\": [1, 2.50]}', '€ÿ', "
      "0.1, '-1.000000000000000000000000000001', '2020-01-01 00:00:00', 2, b'10000001'";
  MySqlQuery(db,
             std::vector<std::string>{"SET SESSION sql_mode = ''", "SET time_zone = '+00:00'",
                                      "CREATE TABLE p (id INT PRIMARY KEY, " + cols + ")",
                                      "CREATE TABLE c (cid INT PRIMARY KEY, pid INT, " + cols + ")",
                                      "INSERT INTO p VALUES (1, " + vals + ")",
                                      "INSERT INTO c VALUES (7, 1, " + vals + ")", "SELECT 1"});
  const std::string dir = MakeTempDir();
  const std::string m = dir + "/m.yaml";
  std::ofstream(m) << "source: " << db << "\ntarget: leveldb:" << dir << "/store\n"
                   << R"(tables:
  - name: t
    from: p
    families: [d, n]
    key:
      parts: [{column: id, width: 3}]
    columns: [bu, d, tm, b, j, l, f, x, ts, t1, bits]
    nest:
      - table: c
        on: {id: pid}
        family: n
        prefix: c
        id: [cid]
        columns: [bu, d, tm, b, j, l, f, x, ts, t1, bits]
)";
  CommandResult r = RunCommand(WidenBinary() + " migrate -q -m " + m);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TableCells cells = ReadTable("leveldb:" + dir + "/store", "t");
  ASSERT_EQ(cells.size(), 1u);
  const auto& row = cells["001"];
  EXPECT_EQ(row.at("d:bu"), "18446744073709551615");
  EXPECT_EQ(row.at("d:d"), "0000-00-00");
  EXPECT_EQ(row.at("d:tm"), "-838:59:59");
  EXPECT_EQ(row.at("d:b"), std::string("\0\xff\0", 3));
  EXPECT_EQ(row.at("d:j"), "{\"a\": [1, 2.50]}");
  EXPECT_EQ(row.at("d:l"), "\xE2\x82\xAC\xC3\xBF");
  EXPECT_EQ(row.at("d:f"), "0.10000000149011612");
  EXPECT_EQ(row.at("d:x"), "-1.000000000000000000000000000001");
  EXPECT_EQ(row.at("d:ts"), "2020-01-01T00:00:00Z");
  EXPECT_EQ(row.at("d:t1"), "2");
  EXPECT_EQ(row.at("d:bits"), "129");
  EXPECT_EQ(row.at("n:c7"),
            "{\"bu\":18446744073709551615,\"d\":\"0000-00-00\",\"tm\":\"-838:59:59\","
            "\"b\":\"\\\\x00ff00\",\"j\":{\"a\": [1, 2.50]},\"l\":\"\xE2\x82\xAC\xC3\xBF\","
            "\"f\":0.10000000149011612,\"x\":\"-1.000000000000000000000000000001\","
            "\"ts\":\"2020-01-01T00:00:00Z\",\"t1\":2,\"bits\":129}");
}

}  // namespace
}  // namespace widen::testing
