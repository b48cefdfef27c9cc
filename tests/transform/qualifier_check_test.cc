// The qualifier check's model of the bytes a nest id can be written as
// (transform/qualifier_check_internal.h), and the designs it accepts and
// refuses (transform/qualifier_check.h).
//
// Sound: every id the key codec encodes from a value a reader can give (the
// edge values of docs/types.md, MySQL's zero dates and PostgreSQL's
// timestamps beyond 294247 AD as the server's text) is in the model.
// Precise: the structured text forms (uuid, dates, timestamps, numbers,
// booleans) are modelled as docs/types.md writes them, so designs whose
// qualifiers cannot collide are accepted.
#include "transform/qualifier_check.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/temporal.h"
#include "tests/transform/shop_fixture.h"
#include "transform/qualifier_check_internal.h"

namespace widen {
namespace {

using namespace widen::testing;
using qualifier_internal::IdCanWrite;

KeyPartPlan Part(ValueType value_type, std::string source_type, KeyType type = KeyType::kString) {
  KeyPartPlan p;
  p.name = "x";
  p.value_type = value_type;
  p.source_type = std::move(source_type);
  p.type = type;
  return p;
}

KeyCodec Text(const KeyPartPlan& p) { return KeyCodec(KeyForm::kText, {p}, "|"); }
KeyCodec Binary(const KeyPartPlan& p) { return KeyCodec(KeyForm::kBinary, {p}, ""); }

std::string Encode(const KeyCodec& codec, const Value& v) {
  Row r;
  r.values = {v};
  std::string key;
  const Status s = codec.Encode(r, &key);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return key;
}

Value Micros(ValueType t, int64_t year, unsigned month, unsigned day, int64_t clock_micros) {
  int64_t us = 0;
  EXPECT_TRUE(DayAndClockToMicros(DaysFromCivil(year, month, day), clock_micros, &us));
  return Value::Temporal(t, us);
}

Value Other(std::string_view s) { return Value::Str(ValueType::kOther, s); }

struct Case {
  ValueType type;
  const char* source_type;
  std::vector<Value> values;
};

// Values of every structured type, at their edges, as the readers give them.
std::vector<Case> Cases() {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Case> cases;
  cases.push_back({ValueType::kInt,
                   "integer",
                   {Value::Int(0), Value::Int(1), Value::Int(-1), Value::Int(INT32_MIN),
                    Value::Int(INT32_MAX), Value::Int(10), Value::Int(-100)}});
  cases.push_back({ValueType::kInt, "bigint", {Value::Int(INT64_MIN), Value::Int(INT64_MAX)}});
  cases.push_back({ValueType::kInt, "smallint", {Value::Int(-32768), Value::Int(32767)}});
  cases.push_back({ValueType::kInt, "smallint(5) unsigned", {Value::Int(0), Value::Int(65535)}});
  cases.push_back({ValueType::kInt, "tinyint(4)", {Value::Int(-128), Value::Int(127)}});
  cases.push_back(
      {ValueType::kInt, "year(4)", {Value::Int(0), Value::Int(1901), Value::Int(2155)}});
  cases.push_back({ValueType::kInt, "some_domain", {Value::Int(INT64_MIN), Value::Int(7)}});
  cases.push_back({ValueType::kUInt,
                   "bigint(20) unsigned",
                   {Value::UInt(0), Value::UInt(UINT64_MAX), Value::UInt(9223372036854775808u)}});
  cases.push_back({ValueType::kUInt, "bit(64)", {Value::UInt(UINT64_MAX), Value::UInt(1)}});
  cases.push_back({ValueType::kBool, "boolean", {Value::Bool(true), Value::Bool(false)}});
  cases.push_back({ValueType::kFloat,
                   "double precision",
                   {Value::Float(0.1), Value::Float(-0.0), Value::Float(0), Value::Float(1e20),
                    Value::Float(1.5e-7), Value::Float(5e-324), Value::Float(DBL_MAX),
                    Value::Float(-DBL_MAX), Value::Float(3.1415927410125732),
                    Value::Float(123456789012345680000.0), Value::Float(-2.2250738585072014e-308),
                    Value::Float(std::nan("")), Value::Float(inf), Value::Float(-inf)}});
  cases.push_back(
      {ValueType::kDecimal,
       "numeric",
       {Value::Str(ValueType::kDecimal, "-0.50"), Value::Str(ValueType::kDecimal, "0.000"),
        Value::Str(ValueType::kDecimal, "42"), Value::Str(ValueType::kDecimal, "NaN"),
        Value::Str(ValueType::kDecimal, "Infinity"), Value::Str(ValueType::kDecimal, "-Infinity"),
        Value::Str(ValueType::kDecimal, std::string(80, '9') + "." + std::string(30, '1'))}});
  cases.push_back({ValueType::kDate,
                   "date",
                   {Value::Temporal(ValueType::kDate, 0),
                    Value::Temporal(ValueType::kDate, DaysFromCivil(0, 1, 1)),
                    Value::Temporal(ValueType::kDate, DaysFromCivil(-4712, 1, 1)),
                    Value::Temporal(ValueType::kDate, DaysFromCivil(2024, 2, 29)),
                    Value::Temporal(ValueType::kDate, DaysFromCivil(5874897, 12, 31)),
                    Value::Temporal(ValueType::kDate, kTemporalInfinity),
                    Value::Temporal(ValueType::kDate, kTemporalMinusInfinity),
                    // MySQL zero, partial and invalid dates: the server's text.
                    Other("0000-00-00"), Other("2020-00-15"), Other("2020-02-31")}});
  cases.push_back(
      {ValueType::kTimestamp,
       "timestamp without time zone",
       {Micros(ValueType::kTimestamp, 2024, 2, 29, ClockMicros(12, 0, 0, 1)),
        Micros(ValueType::kTimestamp, 1970, 1, 1, 0), Micros(ValueType::kTimestamp, -4712, 1, 1, 0),
        Micros(ValueType::kTimestamp, 9999, 12, 31, ClockMicros(23, 59, 59, 999999)),
        Micros(ValueType::kTimestamp, 2000, 1, 1, ClockMicros(0, 0, 0, 500000)),
        Value::Temporal(ValueType::kTimestamp, kTemporalInfinity),
        Value::Temporal(ValueType::kTimestamp, kTemporalMinusInfinity),
        Other("294276-12-31 23:59:59.999999"), Other("0000-00-00 00:00:00.000000"),
        Other("0000-00-00 00:00:00")}});
  cases.push_back({ValueType::kTimestampTz,
                   "timestamp with time zone",
                   {Micros(ValueType::kTimestampTz, 2020, 1, 1, ClockMicros(0, 0, 0, 123000)),
                    Micros(ValueType::kTimestampTz, 1970, 1, 1, ClockMicros(0, 0, 1, 0)),
                    Micros(ValueType::kTimestampTz, 2038, 1, 19, ClockMicros(3, 14, 7, 0)),
                    Micros(ValueType::kTimestampTz, -4712, 1, 1, 0),
                    Value::Temporal(ValueType::kTimestampTz, kTemporalInfinity),
                    Value::Temporal(ValueType::kTimestampTz, kTemporalMinusInfinity),
                    Other("0000-00-00 00:00:00"), Other("294276-12-31 23:59:59.999999+00")}});
  cases.push_back({ValueType::kTime,
                   "time",
                   {Value::Temporal(ValueType::kTime, ClockMicros(-838, -59, -59, 0)),
                    Value::Temporal(ValueType::kTime, ClockMicros(838, 59, 59, 999999)),
                    Value::Temporal(ValueType::kTime, -1500000),
                    Value::Temporal(ValueType::kTime, ClockMicros(24, 0, 0, 0)),
                    Value::Temporal(ValueType::kTime, 1), Value::Temporal(ValueType::kTime, 0)}});
  cases.push_back({ValueType::kOther,
                   "uuid",
                   {Other("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
                    Other("00000000-0000-0000-0000-000000000000"),
                    Other("ffffffff-ffff-ffff-ffff-ffffffffffff")}});
  cases.push_back({ValueType::kText,
                   "text",
                   {Value::Str(ValueType::kText, "any|thing"), Value::Str(ValueType::kText, "")}});
  return cases;
}

TEST(QualifierModelTest, EveryEncodedIdIsInTheModel) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.source_type);
    for (const Value& v : c.values) {
      SCOPED_TRACE(v.DebugString());
      const KeyPartPlan p = Part(c.type, c.source_type);
      // Text ids: the separator only matters between parts.
      const KeyCodec text(KeyForm::kText, {p}, c.type == ValueType::kText ? "#" : "|");
      EXPECT_TRUE(IdCanWrite(text, Encode(text, v))) << ToStringBinary(Encode(text, v));
      // Binary string ids: the same text, escaped and terminated; desc too.
      const KeyCodec binary = Binary(p);
      EXPECT_TRUE(IdCanWrite(binary, Encode(binary, v))) << ToStringBinary(Encode(binary, v));
      KeyPartPlan d = p;
      d.desc = true;
      const KeyCodec desc = Binary(d);
      EXPECT_TRUE(IdCanWrite(desc, Encode(desc, v)));
      KeyPartPlan m = p;
      m.null_marker = true;
      EXPECT_TRUE(IdCanWrite(Binary(m), Encode(Binary(m), v)));
      EXPECT_TRUE(IdCanWrite(Binary(m), Encode(Binary(m), Value::Null(c.type))));
    }
  }
}

// The text forms of docs/types.md, as written there, are in the model;
// strings of another shape are not.
TEST(QualifierModelTest, StructuredTextFormsAreModelledAsDocumented) {
  struct Form {
    ValueType type;
    const char* source_type;
    std::vector<std::string> in, out;
  };
  const std::vector<Form> forms = {
      {ValueType::kOther,
       "uuid",
       {"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
       {"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "a0eebc999c0b4ef8bb6d6bb9bd380a11",
        "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "b1", ""}},
      {ValueType::kOther, "UUID", {"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}, {"12"}},
      {ValueType::kDate,
       "date",
       {"2024-02-29", "0000-01-01", "-4712-01-01", "294276-12-31", "infinity", "-infinity"},
       {"24-02-29", "2024-2-29", "2024-02-29 00:00:00", "20240229", "1", "-", ""}},
      {ValueType::kTimestamp,
       "timestamp without time zone",
       {"2024-02-29 12:00:00.000001", "-4712-01-01 00:00:00", "294276-12-31 23:59:59.999999",
        "infinity"},
       {"2024-02-29T12:00:00Z", "2024-02-29 12:00", "2024-02-29 12:00:00.1234567", "2024-02-29",
        "12"}},
      {ValueType::kTimestampTz,
       "timestamp with time zone",
       {"2020-01-01T00:00:00.123Z", "0000-00-00 00:00:00", "294276-12-31 23:59:59.999999+00",
        "-infinity"},
       {"2020-01-01T00:00:00", "2020-01-01", "2"}},
      {ValueType::kTime,
       "time",
       {"-838:59:59", "838:59:59.999999", "-00:00:01.5", "24:00:00", "00:00:00.000001"},
       {"1:00:00", "10:00", "10:00:00Z", "2024-01-01", "7"}},
      {ValueType::kInt,
       "integer",
       {"0", "-2147483648", "2147483647", "7"},
       {"007", "-0", "+1", "1.0", ""}},
      {ValueType::kInt, "smallint", {"-32768", "32767"}, {"123456"}},
      {ValueType::kInt, "int(10) unsigned", {"0", "4294967295"}, {"-1", "12345678901"}},
      {ValueType::kUInt, "bigint(20) unsigned", {"18446744073709551615"}, {"-1", "01"}},
      {ValueType::kBool, "boolean", {"true", "false"}, {"t", "1", "TRUE"}},
      {ValueType::kFloat,
       "double precision",
       {"0.1", "-0", "1e+20", "1.7976931348623157e+308", "5e-324", "NaN", "Infinity", "-Infinity"},
       {"1e20", ".5", "nan", "-NaN", "0x1p3", ""}},
      {ValueType::kDecimal,
       "numeric(10,2)",
       {"-0.50", "0.000", "NaN", "Infinity", "-Infinity", "42"},
       {"1e5", ".5", "5.", "+1", ""}},
  };
  for (const Form& f : forms) {
    SCOPED_TRACE(f.source_type);
    const KeyCodec codec = Text(Part(f.type, f.source_type));
    for (const auto& s : f.in) EXPECT_TRUE(IdCanWrite(codec, s)) << s;
    for (const auto& s : f.out) EXPECT_FALSE(IdCanWrite(codec, s)) << s;
  }
  // Free text and other types stay any bytes without the separator.
  const KeyCodec inet = Text(Part(ValueType::kOther, "inet"));
  EXPECT_TRUE(IdCanWrite(inet, "A0EEBC99"));
  EXPECT_TRUE(IdCanWrite(inet, ""));
  EXPECT_FALSE(IdCanWrite(inet, "a|b"));
  // Binary: a uuid is its 36 characters and the terminator, never shorter.
  const KeyCodec binary = Binary(Part(ValueType::kOther, "uuid"));
  EXPECT_TRUE(IdCanWrite(binary, std::string("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\0\1", 38)));
  EXPECT_FALSE(IdCanWrite(binary, std::string("b\0\1", 3)));
}

// A child with a uuid, dates and times, integers, text; nests of it under a
// parent in one family, planned as migrate plans them.
std::unique_ptr<FakeSource> ChildSource() {
  auto s = std::make_unique<FakeSource>();
  SourceTable p;
  p.name = "p";
  p.columns = {Col("id", ValueType::kInt, "integer")};
  p.primary_key = {"id"};
  s->AddTable(p, {});
  SourceTable c;
  c.name = "c";
  c.columns = {Col("id", ValueType::kInt, "integer"),
               Col("p_id", ValueType::kInt, "integer"),
               Col("u", ValueType::kOther, "uuid"),
               Col("d", ValueType::kDate, "date"),
               Col("ts", ValueType::kTimestamp, "timestamp without time zone"),
               Col("tz", ValueType::kTimestampTz, "timestamp with time zone"),
               Col("t", ValueType::kTime, "time without time zone"),
               Col("n", ValueType::kInt, "integer"),
               Col("un", ValueType::kInt, "integer unsigned"),
               Col("f", ValueType::kFloat, "double precision"),
               Col("b", ValueType::kBool, "boolean"),
               Col("code", ValueType::kText, "text"),
               Col("addr", ValueType::kOther, "inet")};
  c.primary_key = {"id"};
  s->AddTable(c, {});
  return s;
}

// Plans two nests of c in family d, each given as {prefix, id (YAML)}.
Status Design(const std::pair<std::string, std::string>& a,
              const std::pair<std::string, std::string>& b, const std::string& form = "text") {
  const Mapping m = ParseTables(fmt::format(R"(
  - name: t
    from: p
    families: [d]
    key: {{parts: [id]}}
    nest:
      - {{table: c, on: {{id: p_id}}, family: d, form: {4}, prefix: "{0}", id: {1}, columns: [code]}}
      - {{table: c, on: {{id: p_id}}, family: d, form: {4}, prefix: "{2}", id: {3}, columns: [code]}}
)",
                                            a.first, a.second, b.first, b.second, form));
  auto source = ChildSource();
  auto schema = source->Introspect();
  return Plan::Make(m, *schema, source.get()).status();
}

void ExpectAccepted(const Status& s) { EXPECT_TRUE(s.ok()) << s.ToString(); }
// `example`: how the qualifier the message gives starts.
void ExpectRefused(const Status& s, const std::string& example) {
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("the same qualifier, e.g. '" + example), std::string::npos)
      << s.ToString();
}

TEST(QualifierDesignTest, StructuredIdsAfterPrefixesThatCannotCollideAreAccepted) {
  // A uuid is 36 characters with dashes; an integer has no dash after its
  // first character; a date has one after 4 or more digits.
  ExpectAccepted(Design({"a", "[u]"}, {"ab", "[n]"}));
  ExpectAccepted(Design({"a", "[u]"}, {"ab", "[n]"}, "binary"));
  ExpectAccepted(Design({"d", "[d]"}, {"d1", "[n]"}));
  ExpectAccepted(Design({"d", "[d]"}, {"d", "[n]"}));
  ExpectAccepted(Design({"t", "[ts]"}, {"t2", "[n]"}));
  ExpectAccepted(Design({"t", "[ts]"}, {"t2", "[d]"}));
  ExpectAccepted(Design({"z", "[tz]"}, {"z2", "[n]"}));
  ExpectAccepted(Design({"h", "[t]"}, {"h1", "[n]"}));
  ExpectAccepted(Design({"u", "[u]"}, {"u", "[d]"}));
  ExpectAccepted(Design({"b", "[b]"}, {"bt", "[n]"}));
  // No leading zeros: "n0" + 5 is not "n" + an integer; no '-' unsigned.
  ExpectAccepted(Design({"n", "[n]"}, {"n0", "[n]"}));
  ExpectAccepted(Design({"n", "[un]"}, {"n-", "[n]"}));
  ExpectAccepted(Design({"x", "[u, n]"}, {"x", "[n]"}));
}

TEST(QualifierDesignTest, DesignsThatCanCollideAreStillRefused) {
  ExpectRefused(Design({"a", "[u]"}, {"ab", "[code]"}), "ab");
  ExpectRefused(Design({"a", "[u]"}, {"a0", "[addr]"}), "a0");
  ExpectRefused(Design({"d", "[d]"}, {"d2", "[code]"}), "d2");
  ExpectRefused(Design({"p", "[n]"}, {"p1", "[n]"}), "p1");
  ExpectRefused(Design({"n", "[n]"}, {"n-", "[n]"}), "n-1");
  ExpectRefused(Design({"f", "[f]"}, {"f", "[n]"}), "f");
  ExpectRefused(Design({"u", "[u]"}, {"u", "[u]"}), "u");
  // PostgreSQL's infinite dates and timestamps print alike.
  ExpectRefused(Design({"t", "[ts]"}, {"t", "[d]"}), "tinfinity");
  ExpectRefused(Design({"z", "[tz]"}, {"z", "[ts]"}), "zinfinity");
  ExpectRefused(Design({"a", "[u]"}, {"ab", "[code]"}, "binary"), "ab");
}

}  // namespace
}  // namespace widen
