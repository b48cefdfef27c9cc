#include "mapping/mapping.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <cstdlib>

namespace widen {
namespace {

const char kGood[] = R"(source: postgresql://u@127.0.0.1:5432/db
target: leveldb:out
tables:
  - name: shop:orders
    from: service_order
    families: [{name: d, versions: 3}]
    key:
      separator: "#"
      parts:
        - product_code
        - {column: customer_id, width: 5}
        - {literal: X}
    joins:
      - table: customer
        as: c
        on: {customer_id: id}
    columns:
      - status
      - {column: c.name, to: "d:cn", on_null: empty}
    nest:
      - table: line
        on: {order_id: order_id}
        family: d
        prefix: l
        id: [line_no]
)";

TEST(MappingTest, ParsesEveryField) {
  auto m = ParseMapping(kGood, "m.yaml");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->source_url, "postgresql://u@127.0.0.1:5432/db");
  EXPECT_EQ(m->target_url, "leveldb:out");
  ASSERT_EQ(m->tables.size(), 1u);
  const TableMapping& t = m->tables[0];
  EXPECT_EQ(t.name, "shop:orders");
  EXPECT_EQ(t.families[0].versions, 3);
  EXPECT_EQ(t.key.separator, "#");
  ASSERT_EQ(t.key.parts.size(), 3u);
  EXPECT_EQ(t.key.parts[0].column.column, "product_code");
  EXPECT_EQ(t.key.parts[1].width, 5);
  EXPECT_TRUE(t.key.parts[2].is_literal);
  EXPECT_EQ(t.key.parts[2].literal, "X");
  EXPECT_EQ(t.key.parts[1].loc.ToString(), "m.yaml:11:11");
  ASSERT_EQ(t.joins.size(), 1u);
  EXPECT_EQ(t.joins[0].alias, "c");
  EXPECT_EQ(t.joins[0].on[0].second, "id");
  ASSERT_EQ(t.columns.size(), 2u);
  EXPECT_EQ(t.columns[0].family, "d");  // defaults to the first family
  EXPECT_EQ(t.columns[0].qualifier, "status");
  EXPECT_EQ(t.columns[1].column.alias, "c");
  EXPECT_EQ(t.columns[1].qualifier, "cn");
  EXPECT_EQ(t.columns[1].on_null, NullPolicy::kEmpty);
  ASSERT_EQ(t.nests.size(), 1u);
  EXPECT_EQ(t.nests[0].prefix, "l");
  EXPECT_EQ(t.nests[0].id[0].column.column, "line_no");
}

Status ErrorOf(const std::string& yaml) {
  auto m = ParseMapping(yaml, "bad.yaml");
  return m.ok() ? Status::OK() : m.status();
}

TEST(MappingTest, UnknownFieldNamesLineColumnAndSuggests) {
  std::string y = kGood;
  y.replace(y.find("separator"), 9, "separater");
  Status s = ErrorOf(y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bad.yaml:8:7"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("did you mean 'separator'"), std::string::npos) << s.message();
}

TEST(MappingTest, UnknownFamilySuggests) {
  std::string y = kGood;
  y.replace(y.find("\"d:cn\""), 6, "\"e:cn\"");
  Status s = ErrorOf(y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bad.yaml:19:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("no column family 'e'"), std::string::npos) << s.message();
}

TEST(MappingTest, WrongTypeNamesPlace) {
  std::string y = kGood;
  y.replace(y.find("width: 5"), 8, "width: five");
  Status s = ErrorOf(y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bad.yaml:11:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("whole number"), std::string::npos) << s.message();
}

TEST(MappingTest, UnknownAliasIsAnError) {
  std::string y = kGood;
  y.replace(y.find("c.name"), 6, "cc.name");
  Status s = ErrorOf(y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'cc' is neither"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("did you mean 'c'"), std::string::npos) << s.message();
}

TEST(MappingTest, DuplicateQualifierIsAnError) {
  std::string y = kGood;
  y.replace(y.find("\"d:cn\""), 6, "\"d:status\"");
  Status s = ErrorOf(y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("written twice"), std::string::npos) << s.message();
}

// Key types, codecs and their Java types, layouts and family options are
// parsed by the loader into enums; each name docs/mapping.md lists is one.
TEST(MappingTest, ChoicesAreParsedIntoEnums) {
  const char kTyped[] = R"(source: s
tables:
  - name: t
    from: a
    families: [{name: d, compression: snappy, bloom_filter: ROWCOL,
                data_block_encoding: fast_diff}]
    key: {form: binary, parts: [{column: id, type: int32, on_null: marker}, {column: b}]}
    columns:
      - {column: x, codec: hbase, type: long}
      - {column: y, codec: json, on_null: reject}
      - z
    nest:
      - {table: c, on: {id: a_id}, family: d, id: [n], layout: cells, version: c.at,
         columns: [v]}
)";
  auto m = ParseMapping(kTyped, "m.yaml");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const TableMapping& t = m->tables[0];
  EXPECT_EQ(t.families[0].compression, Compression::kSnappy);
  EXPECT_EQ(t.families[0].bloom_filter, BloomFilter::kRowCol);
  EXPECT_EQ(t.families[0].data_block_encoding, DataBlockEncoding::kFastDiff);
  EXPECT_EQ(t.key.form, KeyForm::kBinary);
  EXPECT_EQ(t.key.parts[0].type, KeyType::kInt32);
  EXPECT_EQ(t.key.parts[0].on_null, KeyNullRule::kMarker);
  EXPECT_FALSE(t.key.parts[1].type.has_value());  // from the source column
  EXPECT_EQ(t.columns[0].codec, ValueCodecKind::kHBase);
  EXPECT_EQ(t.columns[0].type, HBaseType::kLong);
  EXPECT_EQ(t.columns[1].codec, ValueCodecKind::kJson);
  EXPECT_EQ(t.columns[1].on_null, NullPolicy::kReject);
  EXPECT_EQ(t.columns[2].codec, ValueCodecKind::kString);
  EXPECT_EQ(t.columns[2].type, HBaseType::kAuto);
  EXPECT_EQ(t.nests[0].layout, NestLayout::kCells);
  EXPECT_EQ(t.nests[0].version.alias, "c");
  EXPECT_EQ(t.nests[0].version.column, "at");
  EXPECT_EQ(t.nests[0].values[0].loc.ToString(), "m.yaml:14:20");
  // Defaults.
  auto d = ParseMapping(kGood, "m.yaml");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->tables[0].families[0].compression, Compression::kNone);
  EXPECT_EQ(d->tables[0].families[0].bloom_filter, BloomFilter::kRow);
  EXPECT_EQ(d->tables[0].families[0].data_block_encoding, DataBlockEncoding::kNone);
  EXPECT_EQ(d->tables[0].key.form, KeyForm::kText);
  EXPECT_EQ(d->tables[0].nests[0].layout, NestLayout::kJson);
  EXPECT_TRUE(d->tables[0].nests[0].version.column.empty());
}

// Every name docs/mapping.md lists parses, and prints back the same.
TEST(MappingTest, EveryDocumentedNameRoundTrips) {
  for (const char* name : {"string", "bytes", "int8", "int16", "int32", "int64", "uint64", "float",
                           "double", "decimal", "bool", "date", "timestamp", "time"}) {
    KeyType t;
    ASSERT_TRUE(ParseKeyType(name, &t)) << name;
    EXPECT_EQ(KeyTypeName(t), name);
  }
  for (const char* name :
       {"short", "int", "long", "float", "double", "boolean", "bigdecimal", "string", "bytes"}) {
    HBaseType t;
    ASSERT_TRUE(ParseHBaseType(name, &t)) << name;
    EXPECT_EQ(HBaseTypeName(t), name);
  }
  HBaseType auto_type;
  EXPECT_FALSE(ParseHBaseType("auto", &auto_type));
  EXPECT_EQ(HBaseTypeName(HBaseType::kAuto), "auto");
  for (const char* name : {"string", "hbase", "json", "raw"}) {
    ValueCodecKind k;
    ASSERT_TRUE(ParseValueCodec(name, &k)) << name;
    EXPECT_EQ(ValueCodecName(k), name);
  }
  EXPECT_EQ(KeyTypeNames().List(", "),
            "string, bytes, int8, int16, int32, int64, uint64, float, double, decimal, bool, "
            "date, timestamp, time");
  EXPECT_EQ(NestLayoutNames().List(" or "), "json, cells or value");
  EXPECT_EQ(kCompressionNames.List(", "), "NONE, SNAPPY, GZ, LZ4, ZSTD, LZO, BZIP2");
  EXPECT_EQ(kBloomFilterNames.List(", "), "NONE, ROW, ROWCOL");
  EXPECT_EQ(kDataBlockEncodingNames.List(", "), "NONE, PREFIX, DIFF, FAST_DIFF, ROW_INDEX_V1");
}

// One target table of one key part, to add a field to.
const std::string kOneTable = R"(source: s
tables:
  - name: t
    from: a
    families: [d]
    key: {form: binary, parts: [id]}
)";

TEST(MappingTest, KeyOrderIsAutoUnlessGiven) {
  const std::string& head = kOneTable;
  auto m = ParseMapping(head, "m.yaml");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->tables[0].key_order, KeyOrderChoice::kAuto);
  for (const auto& [name, want] :
       {std::pair<std::string, KeyOrderChoice>{"auto", KeyOrderChoice::kAuto},
        {"database", KeyOrderChoice::kDatabase},
        {"sort", KeyOrderChoice::kSort}}) {
    m = ParseMapping(head + "    key_order: " + name + "\n", "m.yaml");
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(m->tables[0].key_order, want) << name;
  }
  Status s = ErrorOf(head + "    key_order: databse\n");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "bad.yaml:7:16: 'key_order' must be auto, database or sort, got 'databse'; did you "
            "mean 'database'?");
  s = ErrorOf(head + "    key_order: [sort]\n");
  EXPECT_NE(s.message().find("bad.yaml:7:16"), std::string::npos) << s.message();
}

// A wrong word is refused at load time, naming file:line:col, the target
// table and the part, with the choices (and the closest one where there is).
TEST(MappingTest, WrongChoicesNamePlaceAndChoices) {
  const std::string& head = kOneTable;
  Status s = ErrorOf(R"(source: s
tables:
  - name: t
    from: a
    families: [d]
    key: {form: binary, parts: [id, {column: b, type: int33}]}
)");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "bad.yaml:6:37: table 't': key part 'b': unknown type 'int33' (expected string, "
            "bytes, int8, int16, int32, int64, uint64, float, double, decimal, bool, date, "
            "timestamp, time)");
  s = ErrorOf(head + "    columns: [{column: x, codec: hbase, type: integer}]\n");
  EXPECT_EQ(s.message(),
            "bad.yaml:7:15: table 't': unknown hbase type 'integer' (expected short, int, long, "
            "float, double, boolean, bigdecimal, string, bytes)");
  s = ErrorOf(head + "    columns: [{column: x, type: long}]\n");
  EXPECT_EQ(s.message(), "bad.yaml:7:15: table 't': 'type' applies to the hbase codec only");
  s = ErrorOf(head + "    columns: [{column: x, codec: hbse}]\n");
  EXPECT_EQ(s.message(),
            "bad.yaml:7:34: 'codec' must be string, hbase, json or raw, got 'hbse'; did you mean "
            "'hbase'?");
  s = ErrorOf(head + "    nest: [{table: c, on: {id: a_id}, family: d, id: [n], layout: cell}]\n");
  EXPECT_EQ(s.message(), "bad.yaml:7:67: 'layout' must be json, cells or value, got 'cell'");
  s = ErrorOf(R"(source: s
tables:
  - name: t
    from: a
    families: [{name: d, compression: snapy}]
    key: {parts: [id]}
)");
  EXPECT_EQ(s.message(),
            "bad.yaml:5:39: 'compression' must be one of NONE, SNAPPY, GZ, LZ4, ZSTD, LZO, "
            "BZIP2, got 'snapy'; did you mean 'SNAPPY'?");
}

TEST(MappingTest, NestColumnsMayBeRenamed) {
  std::string y = kGood;
  y += "        columns: [qty, {column: UnitPrice, as: unit_price}]\n";
  auto m = ParseMapping(y, "m.yaml");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const NestSpec& n = m->tables[0].nests[0];
  ASSERT_EQ(n.values.size(), 2u);
  EXPECT_EQ(n.values[0].column.ToString(), "qty");
  EXPECT_EQ(n.values[0].name, "");
  EXPECT_EQ(n.values[1].column.ToString(), "UnitPrice");
  EXPECT_EQ(n.values[1].name, "unit_price");
}

TEST(MappingTest, NestColumnRenamesAreChecked) {
  // Two columns with one attribute name: the second is named, with its line.
  Status s = ErrorOf(std::string(kGood) + "        columns: [qty, {column: amount, as: qty}]\n");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bad.yaml:26:24:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("attribute 'qty' appears twice"), std::string::npos) << s.message();
  s = ErrorOf(std::string(kGood) + "        columns: [{column: qty, as: \"\"}]\n");
  EXPECT_NE(s.message().find("'as' needs a name"), std::string::npos) << s.message();
  s = ErrorOf(std::string(kGood) + "        columns: [{column: qty, name: q}]\n");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("name"), std::string::npos) << s.message();
  s = ErrorOf(std::string(kGood) + "        columns: [{column: qty, as: \"  \"}]\n");
  EXPECT_NE(s.message().find("'as' needs a name"), std::string::npos) << s.message();
  s = ErrorOf(std::string(kGood) +
              "        layout: value\n        columns: [{column: qty, as: q}]\n");
  EXPECT_NE(s.message().find("no effect with layout: value"), std::string::npos) << s.message();
  s = ErrorOf(std::string(kGood) +
              "        layout: cells\n        columns: [{column: qty, as: a.b}]\n");
  EXPECT_NE(s.message().find("contains the attribute separator '.'"), std::string::npos)
      << s.message();
  s = ErrorOf(std::string(kGood) + "        columns: [[qty]]\n");
  EXPECT_NE(s.message().find("{column: NAME, as: ATTRIBUTE}"), std::string::npos) << s.message();
}

TEST(MappingTest, NestJoinsNameColumnsOfTheIdValueAndVersion) {
  std::string y = kGood;
  y += "        joins:\n"
       "          - {table: product, as: p, on: {product_code: code}}\n"
       "          - {table: maker, on: {p.maker_id: id}}\n"
       "        columns: [qty, p.name, {column: maker.name, as: maker}]\n"
       "        version: p.changed_at\n";
  y.replace(y.find("id: [line_no]"), 13, "id: [line_no, {column: p.sku, on_null: reject}]");
  auto m = ParseMapping(y, "m.yaml");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const NestSpec& n = m->tables[0].nests[0];
  ASSERT_EQ(n.joins.size(), 2u);
  EXPECT_EQ(n.joins[0].alias, "p");
  EXPECT_EQ(n.joins[0].on[0].first.ToString(), "product_code");
  EXPECT_EQ(n.joins[0].on[0].second, "code");
  EXPECT_EQ(n.joins[1].alias, "maker");
  EXPECT_EQ(n.joins[1].on[0].first.ToString(), "p.maker_id");
  ASSERT_EQ(n.id.size(), 2u);
  EXPECT_EQ(n.id[1].column.alias, "p");
  EXPECT_EQ(n.id[1].column.column, "sku");
  std::vector<std::string> columns, names;
  for (const NestValue& v : n.values) {
    columns.push_back(v.column.ToString());
    names.push_back(v.name);
  }
  EXPECT_EQ(columns, (std::vector<std::string>{"qty", "p.name", "maker.name"}));
  EXPECT_EQ(names, (std::vector<std::string>{"", "", "maker"}));
  EXPECT_EQ(n.version.ToString(), "p.changed_at");
}

TEST(MappingTest, NestJoinAliasesAreChecked) {
  const std::string join = "        joins: [{table: product, as: p, on: {product_code: code}}]\n";
  // An alias that is neither the nested table nor one of its joins.
  Status s = ErrorOf(std::string(kGood) + join + "        columns: [q.name]\n");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bad.yaml:27:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'q' is neither the nested table nor a join of the nest of 'line'; "
                             "did you mean 'p'?"),
            std::string::npos)
      << s.message();
  // The table's own joins are not the nest's.
  s = ErrorOf(std::string(kGood) + "        columns: [c.name]\n");
  EXPECT_NE(s.message().find("'c' is neither the nested table"), std::string::npos) << s.message();
  s = ErrorOf(std::string(kGood) + join + "        version: x.at\n");
  EXPECT_NE(s.message().find("'x' is neither the nested table"), std::string::npos) << s.message();
  s = ErrorOf(std::string(kGood) + "        joins: [{table: line, on: {a: b}}]\n");
  EXPECT_NE(s.message().find("join alias 'line' must differ from the nested table"),
            std::string::npos)
      << s.message();
  s = ErrorOf(std::string(kGood) + "        joins: [{table: t, as: widen_parent, on: {a: b}}]\n");
  EXPECT_NE(s.message().find("'widen_parent' is widen's own"), std::string::npos) << s.message();
  s = ErrorOf(std::string(kGood) + "        joins: [{table: t, as: widen_lead, on: {a: b}}]\n");
  EXPECT_NE(s.message().find("'widen_lead' is widen's own"), std::string::npos) << s.message();
  // A joined column's attribute is its column name: p.qty and qty collide.
  s = ErrorOf(std::string(kGood) + join + "        columns: [qty, p.qty]\n");
  EXPECT_NE(s.message().find("attribute 'qty' appears twice"), std::string::npos) << s.message();
}

TEST(MappingTest, MissingRequiredFields) {
  EXPECT_EQ(ErrorOf("target: x\ntables: []\n").code(), StatusCode::kInvalidArgument);
  Status s = ErrorOf("source: s\ntables:\n  - name: t\n    from: a\n    families: [d]\n");
  EXPECT_NE(s.message().find("missing required field 'key'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("bad.yaml:3:5"), std::string::npos) << s.message();
}

TEST(MappingTest, InvalidYamlNamesLine) {
  Status s = ErrorOf("source: a\ntables:\n  - name: [unclosed\n");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bad.yaml:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("invalid YAML"), std::string::npos) << s.message();
}

// Found by the mapping fuzz target: the YAML reader marks an error at the
// end of the input one character past it (line 2 holds 5 characters; it
// said "2:7") and quotes its end-of-input marker, byte 0x04. A name a
// message quotes can hold control characters through a double-quoted
// escape, which a terminal would act on.
TEST(MappingTest, ErrorsNameAPlaceInTheTextInPrintableWords) {
  Status s = ErrorOf("# ]Cl\n : \"\\");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "bad.yaml:2:6: invalid YAML: unknown escape character: the end of the text");

  s = ErrorOf("source: a\ntables:\n  - {name: t, \"\\e[2J\\u0085\\n\": 1}\n");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("bad.yaml:3:15: unknown field '\\x1B[2J\\u0085\\x0A' in a table", 0),
            0u)
      << s.message();

  unsetenv("X\a");
  auto m = ParseMapping(
      "source: \"${X\\a}\"\ntables: [{name: t, from: x, families: [d], key: "
      "{parts: [id]}}]\n",
      "m.yaml");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->source_problem.message(),
            "m.yaml:1:9: environment variable X\\x07 is not set (write ${X\\x07:-default} to "
            "give one)");
}

// Found by the mapping fuzz target: a key part written as a bare scalar
// that is empty ("", a lone tag `!x`) loaded with no column, while
// {column: ""} was refused; so did "x." and ".b" everywhere a column is
// named. Each place refuses them, naming it.
TEST(MappingTest, EveryColumnReferenceNamesAColumn) {
  const std::string base = R"(source: s
tables:
  - name: t
    from: o
    version: V1
    families: [d]
    key: {parts: [K1, {column: K2}]}
    joins: [{table: c, on: {J1: id}}]
    columns: [C1, {column: C2, version: V2}]
    nest:
      - table: l
        on: {id: o_id}
        family: d
        id: [I1]
        version: V3
        columns: [N1, {column: N2, as: n}]
)";
  const char* places[] = {"V1", "K1", "K2", "J1", "C1", "C2", "V2", "I1", "V3", "N1", "N2"};
  for (const char* place : places) {
    for (const std::string& bad :
         {std::string("\"\""), std::string("!x"), std::string("o."), std::string(".b")}) {
      std::string y = base;
      const size_t at = y.find(place);
      y.replace(at, 2, bad);
      // The 1-based line and column of the replaced text.
      const int line = static_cast<int>(std::count(y.begin(), y.begin() + at, '\n')) + 1;
      const int column = static_cast<int>(at - y.rfind('\n', at));
      SCOPED_TRACE(std::string(place) + " = " + bad);
      Status s = ErrorOf(y);
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
      const std::string at_line = "bad.yaml:" + std::to_string(line) + ":";
      EXPECT_EQ(s.message().rfind(at_line, 0), 0u) << s.message();
      if (bad == "o." || bad == ".b") {
        EXPECT_EQ(s.message(), at_line + std::to_string(column) + ": '" + bad +
                                   "' names no column (write column or alias.column)");
      }
    }
  }
  std::string good = base;
  for (const char* place : places) {
    good.replace(good.find(place), 2, std::string(1, static_cast<char>(place[0] + 32)) + place[1]);
  }
  EXPECT_TRUE(ErrorOf(good).ok()) << ErrorOf(good).ToString();
}

TEST(MappingTest, ExpandsEnvironment) {
  setenv("WIDEN_TEST_MAPPING_VAR", "postgresql://x@h:1/d", 1);
  unsetenv("WIDEN_TEST_MAPPING_UNSET");
  std::string y = kGood;
  y.replace(0, y.find('\n'), "source: ${WIDEN_TEST_MAPPING_VAR}");
  auto m = ParseMapping(y, "m.yaml");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->source_url, "postgresql://x@h:1/d");

  y.replace(0, y.find('\n'), "source: ${WIDEN_TEST_MAPPING_UNSET:-fallback://x}");
  m = ParseMapping(y, "m.yaml");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->source_url, "fallback://x");

  y.replace(0, y.find('\n'), "source: ${WIDEN_TEST_MAPPING_UNSET}");
  m = ParseMapping(y, "m.yaml");
  ASSERT_TRUE(m.ok()) << "an unset variable matters only when the source is used";
  EXPECT_EQ(m->source_url, "");
  EXPECT_EQ(m->source_problem.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(m->source_problem.message().find("m.yaml:1:9"), std::string::npos)
      << m->source_problem.message();
  EXPECT_NE(m->source_problem.message().find("WIDEN_TEST_MAPPING_UNSET is not set"),
            std::string::npos);
}

TEST(MappingTest, MissingFileIsNotFound) {
  auto m = load_mapping("/nonexistent/dir/mapping.yaml");
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
}

TEST(MappingTest, DuplicateFieldsAndDocumentsAreErrors) {
  std::string y = kGood;
  y.insert(y.find("tables:"), "target: leveldb:other\n");
  Status s = ErrorOf(y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("duplicate field 'target'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("bad.yaml:3:1"), std::string::npos) << s.message();

  s = ErrorOf(std::string(kGood) + "---\nsource: x\n");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("second YAML document"), std::string::npos) << s.message();
}

TEST(MappingTest, EmptySeparatorWithSeveralTextPartsIsAnError) {
  std::string y = kGood;
  y.replace(y.find("separator: \"#\""), 14, "separator: \"\"");
  Status s = ErrorOf(y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("empty separator"), std::string::npos) << s.message();
}

TEST(MappingTest, DefaultNamespaceSpellingsAreOneTable) {
  const char* two = R"(source: s
tables:
  - {name: t, from: a, families: [d], key: {parts: [id]}}
  - {name: "default:t", from: a, families: [d], key: {parts: [id]}}
)";
  Status s = ErrorOf(two);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("mapped twice"), std::string::npos) << s.message();
}

TEST(MappingTest, DirectoryIsNotAMapping) {
  auto m = load_mapping("/");
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("not a regular file"), std::string::npos);
}

}  // namespace
}  // namespace widen
