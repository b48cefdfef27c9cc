// Type fidelity on PostgreSQL (docs/types.md, "PostgreSQL"): each row of the
// type table puts its edge values into a real server and checks the Values
// that come out of Source::Scan — widen type and the text the `string` value
// codec writes. Expected values are the spec's (docs/types.md) or what the
// source database itself says (::text, encode(..., 'hex')). Every table is
// read both ways PostgreSQL scans are read — COPY (no bound values) and a
// cursor (a range over the id) — and the two must give the same Values.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "tests/integration/source_scan.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

using Strings = std::vector<std::string>;

class PgTypesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WIDEN_REQUIRE_PG(url);
    db_ = FreshPgDatabase(url, "widen_it_pgtypes");
  }

  ScannedTable Read(const std::string& table, const Strings& columns) {
    source_ = OpenSource(db_);
    if (source_ == nullptr) return {};
    ScannedTable copied = ScanTable(source_.get(), table, columns);
    ScannedTable fetched = ScanTable(source_.get(), table, columns, "id", /*bounded=*/true);
    EXPECT_EQ(copied.rows.size(), fetched.rows.size()) << table;
    EXPECT_EQ(copied.schema.size(), fetched.schema.size()) << table;
    for (size_t i = 0; i < copied.schema.size() && i < fetched.schema.size(); ++i) {
      EXPECT_EQ(copied.schema[i].type, fetched.schema[i].type) << table << " column " << i;
    }
    for (size_t r = 0; r < copied.rows.size() && r < fetched.rows.size(); ++r) {
      for (size_t i = 0; i < copied.rows[r].size(); ++i) {
        const Value& a = copied.rows[r][i];
        const Value& b = fetched.rows[r][i];
        EXPECT_EQ(Typed(a), Typed(b)) << table << " row " << r << " column " << i;
        EXPECT_EQ(a.list_form(), b.list_form()) << table << " row " << r << " column " << i;
        EXPECT_EQ(a.element_type(), b.element_type()) << table << " row " << r << " column " << i;
      }
    }
    return copied;
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

TEST_F(PgTypesTest, IntegersWithTheirExtremes) {
  PgQuery(db_,
          "CREATE TABLE i (id int PRIMARY KEY, s smallint, n integer, b bigint, o oid);"
          "INSERT INTO i VALUES (1, -32768, -2147483648, -9223372036854775808, 0),"
          "(2, 32767, 2147483647, 9223372036854775807, 4294967295), (3, NULL, NULL, NULL, NULL)");
  ScannedTable t = Read("i", {"id", "s", "n", "b", "o"});
  EXPECT_EQ(Column(t, 1), (Strings{"int:-32768", "int:32767", "int:NULL"}));
  EXPECT_EQ(Column(t, 2), (Strings{"int:-2147483648", "int:2147483647", "int:NULL"}));
  EXPECT_EQ(Column(t, 3),
            (Strings{"int:-9223372036854775808", "int:9223372036854775807", "int:NULL"}));
  EXPECT_EQ(Column(t, 4), (Strings{"int:0", "int:4294967295", "int:NULL"}));
}

TEST_F(PgTypesTest, NumericIsExactTextIncludingNaNAndInfinity) {
  PgQuery(db_,
          "CREATE TABLE d (id int PRIMARY KEY, x numeric, m numeric(10,2));"
          "INSERT INTO d VALUES (1, '-12345678901234567890123456789012345678901234567890."
          "000000000000000000000000000001', '-0.50'), (2, 'NaN', 0), (3, 'Infinity', 12345678.9),"
          "(4, '-Infinity', NULL), (5, 0.000, NULL)");
  ScannedTable t = Read("d", {"id", "x", "m"});
  EXPECT_EQ(Column(t, 1),
            (Strings{"decimal:-12345678901234567890123456789012345678901234567890."
                     "000000000000000000000000000001",
                     "decimal:NaN", "decimal:Infinity", "decimal:-Infinity", "decimal:0.000"}));
  EXPECT_EQ(Column(t, 2), (Strings{"decimal:-0.50", "decimal:0.00", "decimal:12345678.90",
                                   "decimal:NULL", "decimal:NULL"}));
}

TEST_F(PgTypesTest, FloatsRoundTripWithNaNAndInfinities) {
  PgQuery(db_,
          "CREATE TABLE f (id int PRIMARY KEY, r real, d double precision);"
          "INSERT INTO f VALUES (1, 3.1415927, 0.1), (2, 'NaN', 'NaN'), (3, 'Infinity', "
          "'-Infinity'), (4, 1e38, 1.7976931348623157e308), (5, 1.4e-45, 4.9406564584124654e-324),"
          "(6, '-0', '-0'), (7, NULL, NULL)");
  ScannedTable t = Read("f", {"id", "r", "d"});
  ASSERT_EQ(t.rows.size(), 7u);
  EXPECT_EQ(t.rows[0][1].as_double(), static_cast<double>(3.1415927f));
  EXPECT_EQ(Typed(t.rows[0][1]), "double:3.1415927410125732");
  EXPECT_EQ(Typed(t.rows[0][2]), "double:0.1");
  EXPECT_EQ(Typed(t.rows[1][1]), "double:NaN");
  EXPECT_EQ(Typed(t.rows[1][2]), "double:NaN");
  EXPECT_EQ(Typed(t.rows[2][1]), "double:Infinity");
  EXPECT_EQ(Typed(t.rows[2][2]), "double:-Infinity");
  EXPECT_EQ(t.rows[3][1].as_double(), static_cast<double>(1e38f));
  EXPECT_EQ(t.rows[3][2].as_double(), 1.7976931348623157e308);
  EXPECT_EQ(t.rows[4][1].as_double(),
            static_cast<double>(std::numeric_limits<float>::denorm_min()));
  EXPECT_EQ(t.rows[4][2].as_double(), 4.9406564584124654e-324);
  EXPECT_TRUE(std::signbit(t.rows[5][1].as_double()));
  EXPECT_EQ(Typed(t.rows[5][2]), "double:-0");
  EXPECT_TRUE(t.rows[6][1].is_null());
}

TEST_F(PgTypesTest, BooleanIsTrueOrFalse) {
  PgQuery(db_,
          "CREATE TABLE b (id int PRIMARY KEY, f boolean);"
          "INSERT INTO b VALUES (1, true), (2, false), (3, NULL)");
  ScannedTable t = Read("b", {"id", "f"});
  EXPECT_EQ(Column(t, 1), (Strings{"bool:true", "bool:false", "bool:NULL"}));
}

TEST_F(PgTypesTest, TextKeepsFourByteCharactersAndCharPadding) {
  PgQuery(db_,
          "CREATE TABLE s (id int PRIMARY KEY, c char(5), v varchar(20), t text, q \"char\");"
          "INSERT INTO s VALUES (1, 'ab', '😀é', '𝄞 clef', 'x'), (2, '', 'trail ', '', NULL),"
          "(3, NULL, NULL, NULL, NULL),"
          // What COPY's text format escapes: tabs, line ends, backslashes, a
          // text that reads \N, control characters.
          "(4, 'a\tb', E'\\\\N', E'1\t2\n3\r4\\\\5\b6\f7\v8\x01"
          "9', E'\\\\')");
  ScannedTable t = Read("s", {"id", "c", "v", "t", "q"});
  // char(n) keeps its blank padding (MySQL's CHAR strips it).
  EXPECT_EQ(Column(t, 1), (Strings{"text:ab   ", "text:     ", "text:NULL", "text:a\tb  "}));
  EXPECT_EQ(Column(t, 2),
            (Strings{"text:\xF0\x9F\x98\x80\xC3\xA9", "text:trail ", "text:NULL", "text:\\N"}));
  EXPECT_EQ(Column(t, 3), (Strings{"text:\xF0\x9D\x84\x9E clef", "text:", "text:NULL",
                                   "text:1\t2\n3\r4\\5\b6\f7\v8\x01"
                                   "9"}));
  EXPECT_EQ(Column(t, 4), (Strings{"text:x", "text:NULL", "text:NULL", "text:\\"}));
}

TEST_F(PgTypesTest, ByteaKeepsEveryByte) {
  PgQuery(db_,
          "CREATE TABLE bin (id int PRIMARY KEY, b bytea);"
          "INSERT INTO bin VALUES (1, '\\x00ff0041'), (2, ''), (3, NULL),"
          "(4, decode(repeat('00', 70000), 'hex'))");
  ScannedTable t = Read("bin", {"id", "b"});
  auto hex = PgQuery(db_, "SELECT upper(encode(b, 'hex')) FROM bin ORDER BY id");
  ASSERT_EQ(t.rows.size(), 4u);
  for (size_t i : {0, 1, 3}) {
    ASSERT_EQ(t.rows[i][1].type(), ValueType::kBytes);
    EXPECT_EQ(Hex(t.rows[i][1].as_bytes()), hex[i][0]);
  }
  EXPECT_EQ(t.rows[0][1].as_bytes(), std::string("\0\xff\0A", 4));
  EXPECT_TRUE(t.rows[2][1].is_null());
}

TEST_F(PgTypesTest, DatesTimestampsAndInstants) {
  PgQuery(db_,
          "CREATE TABLE dt (id int PRIMARY KEY, d date, ts timestamp, tz timestamptz);"
          "SET TimeZone = 'Asia/Kolkata';"
          "INSERT INTO dt VALUES (1, '2024-02-29', '2024-02-29 12:00:00.000001', "
          "'2020-01-01 05:30:00.123'), (2, 'infinity', '-infinity', 'infinity'),"
          "(3, '0001-01-01 BC', '4713-01-01 00:00:00 BC', '1970-01-01 00:00:00+00'),"
          "(4, '294276-12-31', '294276-12-31 23:59:59.999999', NULL)");
  ScannedTable t = Read("dt", {"id", "d", "ts", "tz"});
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(Column(t, 1),
            (Strings{"date:2024-02-29", "date:infinity", "date:0000-01-01", "date:294276-12-31"}));
  EXPECT_EQ(Column(t, 2),
            (Strings{"timestamp:2024-02-29 12:00:00.000001", "timestamp:-infinity",
                     "timestamp:-4712-01-01 00:00:00", "other:294276-12-31 23:59:59.999999"}));
  // timestamptz is an instant: the session zone it was written in is gone.
  EXPECT_EQ(Column(t, 3), (Strings{"timestamptz:2020-01-01T00:00:00.123Z", "timestamptz:infinity",
                                   "timestamptz:1970-01-01T00:00:00Z", "timestamptz:NULL"}));
}

TEST_F(PgTypesTest, TimeAndTimeWithZoneAndInterval) {
  PgQuery(db_,
          "CREATE TABLE tm (id int PRIMARY KEY, t time, z timetz, iv interval);"
          "INSERT INTO tm VALUES (1, '24:00:00', '12:00:00+05:30', '1 year 2 mons -3 days "
          "04:05:06.5'), (2, '00:00:00.000001', '00:00:00-12', '-1 year -2 mons +3 days "
          "-04:05:06'), (3, NULL, NULL, '0'), (4, '23:59:59', NULL, '1000000 hours')");
  ScannedTable t = Read("tm", {"id", "t", "z", "iv"});
  EXPECT_EQ(Column(t, 1),
            (Strings{"time:24:00:00", "time:00:00:00.000001", "time:NULL", "time:23:59:59"}));
  EXPECT_EQ(Column(t, 2),
            (Strings{"other:12:00:00+05:30", "other:00:00:00-12", "other:NULL", "other:NULL"}));
  // interval: ISO 8601 (IntervalStyle iso_8601, pinned), every field kept.
  EXPECT_EQ(Column(t, 3), (Strings{"other:P1Y2M-3DT4H5M6.5S", "other:P-1Y-2M3DT-4H-5M-6S",
                                   "other:PT0S", "other:PT1000000H"}));
  auto back =
      PgQuery(db_, "SELECT ('P1Y2M-3DT4H5M6.5S'::interval = iv)::text FROM tm WHERE id = 1");
  EXPECT_EQ(back[0][0], "true") << "the text reads back as the same interval";
}

TEST_F(PgTypesTest, EnumTypesAndDomainsReadAsTheirBase) {
  PgQuery(db_,
          "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');"
          "CREATE DOMAIN posint AS integer CHECK (VALUE > 0);"
          "CREATE DOMAIN moody AS mood;"
          "CREATE DOMAIN money_text AS varchar(10);"
          "CREATE TABLE e (id int PRIMARY KEY, m mood, p posint, mm moody, mt money_text);"
          "INSERT INTO e VALUES (1, 'happy', 5, 'sad', 'x'), (2, NULL, NULL, NULL, NULL)");
  ScannedTable t = Read("e", {"id", "m", "p", "mm", "mt"});
  EXPECT_EQ(Column(t, 1), (Strings{"text:happy", "text:NULL"}));
  EXPECT_EQ(Column(t, 2), (Strings{"int:5", "int:NULL"}));
  EXPECT_EQ(Column(t, 3), (Strings{"text:sad", "text:NULL"}));
  EXPECT_EQ(Column(t, 4), (Strings{"text:x", "text:NULL"}));
  // Introspection agrees with the stream (the planner checks types with it).
  EXPECT_EQ(Introspected("e", "m"), "text mood");
  EXPECT_EQ(Introspected("e", "p"), "int posint");
  EXPECT_EQ(Introspected("e", "mm"), "text moody");
  for (size_t i = 1; i < t.schema.size(); ++i) {
    const std::string in = Introspected("e", t.schema[i].name);
    EXPECT_EQ(ValueTypeName(t.schema[i].type), in.substr(0, in.find(' '))) << t.schema[i].name;
  }
}

// A domain over a domain reads as the innermost base type, and every place
// that chooses by type takes the base: the width of a text key part, the
// default binary key type and Java type, and the nest join's comparison
// (a uuid domain against uuid).
TEST_F(PgTypesTest, DomainsOverDomainsTakeTheBaseTypeEverywhere) {
  PgQuery(db_,
          "CREATE DOMAIN small_d AS smallint; CREATE DOMAIN small_dd AS small_d;"
          "CREATE DOMAIN big_d AS bigint; CREATE DOMAIN uid AS uuid; CREATE DOMAIN uidd AS uid;"
          "CREATE TABLE p (id small_dd PRIMARY KEY, u uidd NOT NULL UNIQUE, b big_d NOT NULL);"
          "CREATE TABLE c (cid int PRIMARY KEY, pu uuid REFERENCES p(u), v text);"
          "INSERT INTO p VALUES (7, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 5000000000),"
          "(-3, 'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1);"
          "INSERT INTO c VALUES (1, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'x')");
  ScannedTable t = Read("p", {"id", "u", "b"});
  EXPECT_EQ(Column(t, 0), (Strings{"int:7", "int:-3"}));
  EXPECT_EQ(Introspected("p", "id"), "int small_dd");
  EXPECT_EQ(Introspected("p", "b"), "int big_d");
  auto schema = source_->Introspect();
  ASSERT_TRUE(schema.ok());
  EXPECT_EQ(schema->FindTable("p")->FindColumn("id")->storage_type(), "smallint");
  EXPECT_EQ(schema->FindTable("p")->FindColumn("u")->storage_type(), "uuid");
  const std::string dir = MakeTempDir();
  std::ofstream(dir + "/m.yaml") << "source: " << db_ << "\ntarget: leveldb:" << dir << "/store\n"
                                 << R"(tables:
  - name: t
    from: p
    families: [d, n]
    key: {parts: [{column: b, width: 10}]}
    columns: [{column: id, codec: hbase}, {column: b, codec: hbase}]
    nest:
      - {table: c, on: {u: pu}, family: n, prefix: c, id: [cid], columns: [v]}
  - name: k
    from: p
    families: [d]
    key: {form: binary, parts: [id]}
    columns: [u]
)";
  CommandResult r =
      RunCommand(WidenBinary() + " migrate -q --timestamp-ms 1 -m " + dir + "/m.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TableCells cells = ReadTable("leveldb:" + dir + "/store", "t");
  ASSERT_EQ(cells.size(), 2u);
  // Bytes.toBytes((short) 7), Bytes.toBytes(5000000000L): the base types' widths.
  EXPECT_EQ(Hex(cells["5000000000"].at("d:id")), "0007");
  EXPECT_EQ(Hex(cells["5000000000"].at("d:b")), "000000012A05F200");
  EXPECT_EQ(cells["5000000000"].at("n:c1"), "{\"v\":\"x\"}");
  EXPECT_EQ(Hex(cells["0000000001"].at("d:id")), "FFFD");
  // The binary key part is an int16: 2 bytes, sign bit flipped (docs/format.md).
  TableCells keys = ReadTable("leveldb:" + dir + "/store", "k");
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(Hex(keys.begin()->first), "7FFD");
  EXPECT_EQ(Hex(keys.rbegin()->first), "8007");
}

TEST_F(PgTypesTest, JsonAndJsonbAreTheDocumentText) {
  PgQuery(
      db_,
      "CREATE TABLE j (id int PRIMARY KEY, j json, b jsonb);"
      "INSERT INTO j VALUES (1, '{\"b\": 1, \"a\": [1, 2.50]}', '{\"b\": 1, \"a\": [1, 2.50]}'),"
      "(2, 'null', 'null'), (3, NULL, NULL)");
  ScannedTable t = Read("j", {"id", "j", "b"});
  auto server = PgQuery(db_, "SELECT j::text, b::text FROM j ORDER BY id");
  ASSERT_EQ(t.rows.size(), 3u);
  for (size_t i : {0, 1}) {
    EXPECT_EQ(Typed(t.rows[i][1]), "json:" + server[i][0]);
    EXPECT_EQ(Typed(t.rows[i][2]), "json:" + server[i][1]);
  }
  // json keeps the text as written; jsonb is the server's normalized form.
  EXPECT_EQ(Typed(t.rows[0][1]), "json:{\"b\": 1, \"a\": [1, 2.50]}");
  EXPECT_EQ(Typed(t.rows[0][2]), "json:{\"a\": [1, 2.50], \"b\": 1}");
  EXPECT_TRUE(t.rows[2][1].is_null());
}

TEST_F(PgTypesTest, UuidArraysGeometryAndOthersAreTheServersText) {
  PgQuery(db_,
          "CREATE TABLE o (id int PRIMARY KEY, u uuid, ai int[], at text[], pt point, "
          "mo money, bi bit(5), ip inet);"
          "INSERT INTO o VALUES (1, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{1,NULL,-3}', "
          "'{\"a,b\",\"c\\\"d\",NULL,\"\"}', '(1.5,-2)', 1234.56, B'10101', '::ffff:1.2.3.4/128'),"
          "(2, NULL, '{}', '{{x,y},{z,w}}', NULL, NULL, NULL, NULL)");
  ScannedTable t = Read("o", {"id", "u", "ai", "at", "pt", "mo", "bi", "ip"});
  // format('%s', x) prints with each type's output function, as the reader gets it.
  auto server =
      PgQuery(db_,
              "SELECT format('%s', u), format('%s', ai), format('%s', at), format('%s', "
              "pt), format('%s', mo), format('%s', bi), format('%s', ip) FROM o ORDER BY id");
  ASSERT_EQ(t.rows.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    for (size_t c = 1; c <= 7; ++c) {
      SCOPED_TRACE(::testing::Message() << "row " << r << " column " << c);
      if (server[r][c - 1].empty() && t.rows[r][c].is_null()) {
        EXPECT_TRUE(t.rows[r][c].is_null());
      } else {
        EXPECT_EQ(Typed(t.rows[r][c]), "other:" + server[r][c - 1]);
      }
    }
  }
  EXPECT_EQ(Typed(t.rows[0][1]), "other:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
  EXPECT_EQ(Typed(t.rows[0][2]), "other:{1,NULL,-3}");
  EXPECT_EQ(Typed(t.rows[0][3]), "other:{\"a,b\",\"c\\\"d\",NULL,\"\"}");
  EXPECT_EQ(Typed(t.rows[0][5]), "other:$1,234.56") << "lc_monetary is pinned to C";
  // Each array text reads back as the same array.
  auto same = PgQuery(db_,
                      "SELECT ('{1,NULL,-3}'::int[] IS NOT DISTINCT FROM ai)::text, "
                      "('{\"a,b\",\"c\\\"d\",NULL,\"\"}'::text[] IS NOT DISTINCT FROM at)::text "
                      "FROM o WHERE id = 1");
  EXPECT_EQ(same[0], (Strings{"true", "true"}));
}

TEST_F(PgTypesTest, GeneratedColumnsAreRead) {
  PgQuery(db_,
          "CREATE TABLE gen (id int PRIMARY KEY, a int, g int GENERATED ALWAYS AS (a * 2) STORED);"
          "INSERT INTO gen (id, a) VALUES (1, 21), (2, NULL)");
  ScannedTable t = Read("gen", {"id", "g"});
  EXPECT_EQ(Column(t, 1), (Strings{"int:42", "int:NULL"}));
}

}  // namespace
}  // namespace widen::testing

namespace widen::testing {
namespace {

// End to end through `widen migrate`: the edge values as cells (the `string`
// codec) and inside a nested child's JSON value, as docs/types.md gives them.
TEST(PgTypesEndToEndTest, EdgeValuesAsCellsAndNestedJson) {
  WIDEN_REQUIRE_PG(url);
  const std::string db = FreshPgDatabase(url, "widen_it_pgedge");
  const std::string cols =
      "f float8, n numeric, iv interval, a int[], m mood, b bytea, j jsonb, tz timestamptz, "
      "ok boolean, c char(4), big timestamp";
  const std::string vals =
      "'NaN', 'Infinity', '1 day -01:00:00', '{1,NULL}', 'happy', '\\x00ff00', "
      "'{\"b\": 2.50, \"a\": 1}', 'infinity', true, 'ab', '294276-01-01 00:00:00'";
  PgQuery(db,
          "CREATE TYPE mood AS ENUM ('sad', 'happy');"
          "CREATE TABLE p (id int PRIMARY KEY, " +
              cols +
              ");"
              "CREATE TABLE c (cid int PRIMARY KEY, pid int, " +
              cols +
              ");"
              "INSERT INTO p VALUES (1, " +
              vals +
              ");"
              "INSERT INTO c VALUES (7, 1, " +
              vals + ")");
  const std::string dir = MakeTempDir();
  const std::string m = dir + "/m.yaml";
  std::ofstream(m) << "source: " << db << "\ntarget: leveldb:" << dir << "/store\n"
                   << R"(tables:
  - name: t
    from: p
    families: [d, n]
    key:
      parts: [{column: id, width: 3}]
    columns: [f, n, iv, a, m, b, j, tz, ok, c, big]
    nest:
      - table: c
        on: {id: pid}
        family: n
        prefix: c
        id: [cid]
        columns: [f, n, iv, a, m, b, j, tz, ok, c, big]
)";
  CommandResult r = RunCommand(WidenBinary() + " migrate -q -m " + m);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TableCells cells = ReadTable("leveldb:" + dir + "/store", "t");
  ASSERT_EQ(cells.size(), 1u);
  const auto& row = cells["001"];
  EXPECT_EQ(row.at("d:f"), "NaN");
  EXPECT_EQ(row.at("d:n"), "Infinity");
  EXPECT_EQ(row.at("d:iv"), "P1DT-1H");
  EXPECT_EQ(row.at("d:a"), "{1,NULL}");
  EXPECT_EQ(row.at("d:m"), "happy");
  EXPECT_EQ(row.at("d:b"), std::string("\0\xff\0", 3));
  EXPECT_EQ(row.at("d:j"), "{\"a\": 1, \"b\": 2.50}");
  EXPECT_EQ(row.at("d:tz"), "infinity");
  EXPECT_EQ(row.at("d:ok"), "true");
  EXPECT_EQ(row.at("d:c"), "ab  ");
  EXPECT_EQ(row.at("d:big"), "294276-01-01 00:00:00");
  EXPECT_EQ(row.at("n:c7"),
            "{\"f\":\"NaN\",\"n\":\"Infinity\",\"iv\":\"P1DT-1H\",\"a\":[1,null],"
            "\"m\":\"happy\",\"b\":\"\\\\x00ff00\",\"j\":{\"a\": 1, \"b\": 2.50},"
            "\"tz\":\"infinity\",\"ok\":true,\"c\":\"ab  \",\"big\":\"294276-01-01 00:00:00\"}");
}

}  // namespace
}  // namespace widen::testing
