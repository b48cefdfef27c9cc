// The hbase value codec and the binary key types against every numeric,
// date and time source type of both engines (docs/types.md, "codec: hbase"):
// each source column x each Java type (and each binary key type) either
// writes exactly the bytes HBase's Bytes.toBytes gives for the same number,
// or rejects the row with the reason; the default Java type and key type
// follow the column's storage type (domains resolved, MySQL unsigned widths,
// single-precision FLOAT in every form).
//
// The values come from the source database: each column is read back by SQL
// as a number (integers and decimals as text, floats widened to double
// precision, dates and timestamps as ms since the epoch, times as
// microseconds). The expected bytes are worked out here from those numbers
// by the specification alone: Java's Bytes.toBytes (big-endian two's
// complement, IEEE 754 raw bits, BigDecimal as int scale + minimal two's
// complement unscaled value) and docs/format.md for the binary key parts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/source_scan.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

using Int128 = __int128;

// ---- the specification ------------------------------------------------------

// How the spec turns a column's values into numbers.
enum class Kind {
  kInteger,  // exact integers (also MySQL BIT, YEAR, BOOLEAN = TINYINT(1))
  kDecimal,  // exact decimals, PostgreSQL's NaN and ±Infinity
  kDouble,   // IEEE doubles (float columns widened exactly)
  kMillis,   // dates and timestamps: ms since the epoch, floored
  kMicros,   // times: microseconds
  kBool,     // PostgreSQL boolean: 1 or 0
};

// A number as text: "-12.50", "1e+38", "NaN", "Infinity".
struct Number {
  bool finite = false;
  bool nan = false;
  bool negative = false;
  std::string digits;       // as written, leading zeros dropped ("" for zero)
  int64_t frac_digits = 0;  // digits after the point as written (minus the exponent)
};

Number Parse(const std::string& text) {
  Number n;
  if (text == "NaN") {
    n.nan = true;
    return n;
  }
  if (text == "Infinity" || text == "-Infinity") {
    n.negative = text[0] == '-';
    return n;
  }
  std::string_view s = text;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    n.negative = s[0] == '-';
    s.remove_prefix(1);
  }
  const size_t e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  const int64_t exponent =
      e == std::string_view::npos ? 0 : std::stoll(std::string(s.substr(e + 1)));
  const size_t dot = mantissa.find('.');
  for (char c : mantissa) {
    if (c != '.') n.digits.push_back(c);
  }
  n.frac_digits =
      (dot == std::string_view::npos ? 0 : int64_t(mantissa.size() - dot - 1)) - exponent;
  n.digits.erase(0, std::min(n.digits.find_first_not_of('0'), n.digits.size()));
  if (n.digits.empty()) n.negative = false;
  n.finite = true;
  return n;
}

// The exact integer a number is (within 128 bits), if it is one.
std::optional<Int128> AsInteger(const Number& n) {
  if (!n.finite) return std::nullopt;
  std::string d = n.digits;
  int64_t f = n.frac_digits;
  while (f > 0 && !d.empty() && d.back() == '0') {
    d.pop_back();
    --f;
  }
  if (f > 0 && !d.empty()) return std::nullopt;  // a fraction
  if (d.empty()) return Int128(0);
  for (; f < 0; ++f) d.push_back('0');
  if (d.size() > 38) return std::nullopt;
  Int128 v = 0;
  for (char c : d) v = v * 10 + (c - '0');
  return n.negative ? -v : v;
}

std::string BigEndian(Int128 v, int bytes) {
  std::string out(bytes, '\0');
  for (int i = bytes - 1; i >= 0; --i) {
    out[i] = static_cast<char>(static_cast<unsigned char>(v & 0xff));
    v >>= 8;
  }
  return out;
}

std::string Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return BigEndian(Int128(b), 8);
}

std::string Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return BigEndian(Int128(b), 4);
}

// The shortest digits that read back as `d` (C's %.*e at rising precision),
// as a Number with trailing zeros dropped.
Number ShortestDouble(double d) {
  char buf[64];
  for (int p = 0; p < 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  Number n = Parse(buf);
  while (!n.digits.empty() && n.digits.back() == '0') {
    n.digits.pop_back();
    --n.frac_digits;
  }
  return n;
}

bool SameNumber(Number a, Number b) {
  auto strip = [](Number* n) {
    while (!n->digits.empty() && n->digits.back() == '0') {
      n->digits.pop_back();
      --n->frac_digits;
    }
    if (n->digits.empty()) n->frac_digits = 0;
  };
  strip(&a);
  strip(&b);
  return a.negative == b.negative && a.digits == b.digits && a.frac_digits == b.frac_digits;
}

// The IEEE double a value is, exactly (or, for a decimal, the nearest double
// when it prints back as the same number); nullopt when there is none.
std::optional<double> AsDouble(Kind kind, const std::string& text) {
  const Number n = Parse(text);
  if (kind == Kind::kDecimal && !n.finite) {
    if (n.nan) return std::nan("");
    return n.negative ? -HUGE_VAL : HUGE_VAL;
  }
  if (kind == Kind::kDouble) return std::strtod(text.c_str(), nullptr);  // exact: shortest text
  if (kind == Kind::kDecimal) {
    const double d = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(d) || !SameNumber(ShortestDouble(d), n)) return std::nullopt;
    return d;
  }
  if (kind == Kind::kInteger) {
    const std::optional<Int128> v = AsInteger(n);
    if (!v) return std::nullopt;
    const double d = static_cast<double>(*v);
    if (static_cast<Int128>(d) != *v) return std::nullopt;
    return d;
  }
  return std::nullopt;
}

std::optional<float> AsFloat(Kind kind, const std::string& text) {
  const Number n = Parse(text);
  if (kind == Kind::kDecimal && n.finite) {
    const float f = std::strtof(text.c_str(), nullptr);
    char buf[64];
    for (int p = 0; p < 9; ++p) {
      std::snprintf(buf, sizeof buf, "%.*e", p, static_cast<double>(f));
      if (std::strtof(buf, nullptr) == f) break;
    }
    if (!std::isfinite(f) || !SameNumber(Parse(buf), n)) return std::nullopt;
    return f;
  }
  const std::optional<double> d = AsDouble(kind, text);
  if (!d) return std::nullopt;
  const float f = static_cast<float>(*d);
  if (!std::isnan(*d) && static_cast<double>(f) != *d) return std::nullopt;
  return f;
}

// BigInteger.toByteArray: minimal big-endian two's complement.
std::string MinimalTwosComplement(Int128 v) {
  std::string b = BigEndian(v, 16);
  while (b.size() > 1 && ((b[0] == '\0' && !(b[1] & 0x80)) || (b[0] == '\xff' && (b[1] & 0x80)))) {
    b.erase(0, 1);
  }
  return b;
}

// Bytes.toBytes(BigDecimal): the scale (int) then the unscaled value.
std::string BigDecimalBytes(Int128 unscaled, int64_t scale) {
  return BigEndian(Int128(static_cast<int32_t>(scale)), 4) + MinimalTwosComplement(unscaled);
}

// Bytes.toBytes of the value `text` (a column of `kind`) as Java type `type`;
// nullopt when the value is not that type's exactly (the row is rejected).
std::optional<std::string> JavaBytes(Kind kind, const std::string& text, const std::string& type) {
  const Number n = Parse(text);
  if (type == "short" || type == "int" || type == "long") {
    const std::optional<Int128> v = AsInteger(n);
    const int bytes = type == "short" ? 2 : type == "int" ? 4 : 8;
    const Int128 lim = Int128(1) << (bytes * 8 - 1);
    if (!v || *v < -lim || *v >= lim) return std::nullopt;
    return BigEndian(*v, bytes);
  }
  if (type == "double") {
    std::optional<double> d = AsDouble(kind, text);
    if (!d) return std::nullopt;
    return Bits(*d);
  }
  if (type == "float") {
    std::optional<float> f = AsFloat(kind, text);
    if (!f) return std::nullopt;
    return Bits(*f);
  }
  if (type == "boolean") {
    const std::optional<Int128> v = AsInteger(n);
    if (!v || (*v != 0 && *v != 1)) return std::nullopt;
    return std::string(1, *v == 1 ? '\xff' : '\0');
  }
  if (type == "bigdecimal") {
    if (!n.finite) return std::nullopt;
    if (kind == Kind::kInteger) return BigDecimalBytes(*AsInteger(n), 0);
    Number w = kind == Kind::kDouble ? ShortestDouble(std::strtod(text.c_str(), nullptr)) : n;
    Int128 unscaled = 0;
    for (char c : w.digits) unscaled = unscaled * 10 + (c - '0');
    if (w.negative) unscaled = -unscaled;
    if (w.digits.empty()) w.frac_digits = kind == Kind::kDouble ? 0 : w.frac_digits;
    return BigDecimalBytes(unscaled, w.frac_digits);
  }
  ADD_FAILURE() << "no rule for type " << type;
  return std::nullopt;
}

// docs/format.md, binary key parts: integers big-endian with the sign bit
// flipped, uint64 big-endian, doubles and floats as IEEE bits with the sign
// bit flipped when positive and every bit inverted when negative (NaN: the
// canonical quiet NaN).
std::optional<std::string> KeyBytes(Kind kind, const std::string& text, const std::string& type) {
  const Number n = Parse(text);
  if (type == "int8" || type == "int16" || type == "int32" || type == "int64") {
    const int bytes = std::stoi(type.substr(3)) / 8;
    const std::optional<Int128> v = AsInteger(n);
    const Int128 lim = Int128(1) << (bytes * 8 - 1);
    if (!v || *v < -lim || *v >= lim) return std::nullopt;
    std::string b = BigEndian(*v, bytes);
    b[0] = static_cast<char>(b[0] ^ 0x80);
    return b;
  }
  if (type == "uint64") {
    const std::optional<Int128> v = AsInteger(n);
    if (!v || *v < 0 || *v > Int128(UINT64_MAX)) return std::nullopt;
    return BigEndian(*v, 8);
  }
  if (type == "double" || type == "float") {
    std::string b;
    if (type == "double") {
      std::optional<double> d = AsDouble(kind, text);
      if (!d) return std::nullopt;
      b = Bits(std::isnan(*d) ? std::nan("") : *d);
    } else {
      std::optional<float> f = AsFloat(kind, text);
      if (!f) return std::nullopt;
      b = Bits(std::isnan(*f) ? std::nanf("") : *f);
    }
    if (b[0] & 0x80) {
      for (char& c : b) c = static_cast<char>(~c);
    } else {
      b[0] = static_cast<char>(b[0] ^ 0x80);
    }
    return b;
  }
  ADD_FAILURE() << "no rule for key type " << type;
  return std::nullopt;
}

// The Java types a column of `kind` can be asked for (the others are
// refused by the planner, see PlanTimeRefusals).
std::vector<std::string> JavaTypes(Kind kind) {
  switch (kind) {
    case Kind::kInteger:
    case Kind::kDecimal:
      return {"short", "int", "long", "float", "double", "boolean", "bigdecimal"};
    case Kind::kDouble:
      return {"short", "int", "long", "float", "double", "bigdecimal"};
    case Kind::kMillis:
    case Kind::kMicros:
      return {"short", "int", "long"};
    case Kind::kBool:
      return {"short", "int", "long", "boolean"};
  }
  return {};
}

// ---- the run ----------------------------------------------------------------

struct Column {
  std::string name;
  Kind kind;
  std::string as_number;     // SQL giving the value as a number (text), per row
  std::string default_java;  // docs/mapping.md's default for its storage type
  std::string default_key;   // "" = not checked (not a numeric key)
};

class HBaseCodecMatrix {
 public:
  HBaseCodecMatrix(std::string db, std::vector<Column> columns)
      : db_(std::move(db)), columns_(std::move(columns)), dir_(MakeTempDir()) {}
  ~HBaseCodecMatrix() { std::filesystem::remove_all(dir_); }

  // Writes one target table per (column, Java type) and per (column, key
  // type), migrates them all with --rejects, and checks every cell.
  void Run(const std::function<std::string(const std::string&)>& query_numbers) {
    std::string yaml = "source: " + db_ + "\ntarget: leveldb:" + dir_ + "/store\ntables:\n";
    for (const Column& c : columns_) {
      std::vector<std::string> types = JavaTypes(c.kind);
      types.push_back("");  // the default
      for (const auto& t : types) {
        yaml += fmt::format(
            "  - name: v_{}_{}\n    from: v\n    families: [d]\n"
            "    key: {{parts: [{{column: id, width: 3}}]}}\n"
            "    columns: [{{column: {}, to: \"d:v\", codec: hbase{}}}]\n",
            c.name, t.empty() ? "default" : t, c.name, t.empty() ? "" : ", type: " + t);
      }
      if (c.kind == Kind::kMillis || c.kind == Kind::kMicros || c.kind == Kind::kBool) continue;
      std::vector<std::string> keys = {"int16", "int32", "int64", "uint64", "float", "double"};
      if (!c.default_key.empty()) keys.push_back("");
      for (const auto& k : keys) {
        yaml += fmt::format(
            "  - name: k_{}_{}\n    from: v\n    families: [d]\n"
            "    key: {{form: binary, parts: [{{column: {}, on_null: reject{}}}, id]}}\n"
            "    columns: [{{column: id, to: \"d:id\"}}]\n",
            c.name, k.empty() ? "default" : k, c.name, k.empty() ? "" : ", type: " + k);
      }
    }
    std::ofstream(dir_ + "/m.yaml") << yaml;
    CommandResult r =
        RunCommand(fmt::format("{} migrate -m {} --timestamp-ms 1 --rejects {}", WidenBinary(),
                               ShellQuote(dir_ + "/m.yaml"), ShellQuote(dir_ + "/rejects.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::map<std::pair<std::string, std::string>, std::string> rejects;  // (table, row) -> reason
    std::ifstream in(dir_ + "/rejects.jsonl");
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      rejects[{j.at("table").get<std::string>(), j.at("row").get<std::string>()}] = j.at("reason");
    }
    for (const Column& c : columns_) {
      SCOPED_TRACE("column " + c.name);
      // id -> the value as a number, from the source database.
      std::map<int, std::string> values;
      const std::string rows = query_numbers(c.as_number);
      std::istringstream lines(rows);
      for (std::string line; std::getline(lines, line);) {
        const size_t tab = line.find('\t');
        values[std::stoi(line.substr(0, tab))] = line.substr(tab + 1);
      }
      ASSERT_FALSE(values.empty());
      std::vector<std::string> types = JavaTypes(c.kind);
      types.push_back("");
      for (const auto& t : types) {
        const std::string java = t.empty() ? c.default_java : t;
        const std::string table = fmt::format("v_{}_{}", c.name, t.empty() ? "default" : t);
        SCOPED_TRACE(table);
        TableCells cells = ReadTable("leveldb:" + dir_ + "/store", table);
        for (const auto& [id, text] : values) {
          SCOPED_TRACE(fmt::format("id {} value {}", id, text));
          const std::string row = fmt::format("{:03d}", id);
          const auto reject = rejects.find({table, fmt::format("id={}", id)});
          if (text == "<NULL>") {
            EXPECT_EQ(cells.count(row), 0u);
            EXPECT_EQ(reject, rejects.end());
            continue;
          }
          const std::optional<std::string> expected = JavaBytes(c.kind, text, java);
          if (expected) {
            ASSERT_EQ(cells.count(row), 1u) << (reject == rejects.end() ? "" : reject->second);
            EXPECT_EQ(Hex(cells[row].at("d:v")), Hex(*expected));
            ++written_;
          } else {
            EXPECT_EQ(cells.count(row), 0u) << Hex(cells[row]["d:v"]);
            ASSERT_NE(reject, rejects.end());
            EXPECT_NE(reject->second.find("does not fit the hbase codec's Java " + java),
                      std::string::npos)
                << reject->second;
            ++rejected_;
          }
        }
      }
      if (c.kind == Kind::kMillis || c.kind == Kind::kMicros || c.kind == Kind::kBool) continue;
      std::vector<std::string> keys = {"int16", "int32", "int64", "uint64", "float", "double"};
      if (!c.default_key.empty()) keys.push_back("");
      for (const auto& k : keys) {
        const std::string key_type = k.empty() ? c.default_key : k;
        const std::string table = fmt::format("k_{}_{}", c.name, k.empty() ? "default" : k);
        SCOPED_TRACE(table);
        std::map<std::string, std::string> id_of_key;
        for (const auto& [key, columns] : ReadTable("leveldb:" + dir_ + "/store", table)) {
          id_of_key[key] = columns.at("d:id");
        }
        std::set<std::string> expected_keys;
        for (const auto& [id, text] : values) {
          SCOPED_TRACE(fmt::format("id {} value {}", id, text));
          const auto reject = rejects.find({table, fmt::format("id={}", id)});
          const std::optional<std::string> part =
              text == "<NULL>" ? std::nullopt : KeyBytes(c.kind, text, key_type);
          if (!part) {
            ASSERT_NE(reject, rejects.end());
            EXPECT_NE(reject->second.find(text == "<NULL>" ? "is NULL" : "key part"),
                      std::string::npos)
                << reject->second;
            continue;
          }
          const std::string key = *part + *KeyBytes(Kind::kInteger, std::to_string(id), "int32");
          expected_keys.insert(key);
          ASSERT_EQ(id_of_key.count(key), 1u) << Hex(key);
          EXPECT_EQ(id_of_key[key], std::to_string(id));
        }
        EXPECT_EQ(id_of_key.size(), expected_keys.size());
      }
    }
    EXPECT_GT(written_, 0);
    EXPECT_GT(rejected_, 0);
  }

 private:
  std::string db_;
  std::vector<Column> columns_;
  std::string dir_;
  int written_ = 0, rejected_ = 0;
};

std::string Lines(const std::vector<std::vector<std::string>>& rows) {
  std::string s;
  for (const auto& r : rows) s += r.at(0) + "\t" + r.at(1) + "\n";
  return s;
}

TEST(HBaseCodecMatrixTest, PostgreSqlTypes) {
  WIDEN_REQUIRE_PG(url);
  const std::string db = FreshPgDatabase(url, "widen_it_hbase_matrix");
  PgQuery(db, R"SQL(
    CREATE DOMAIN big_d AS bigint;
    CREATE DOMAIN small_d AS smallint;
    CREATE DOMAIN small_dd AS small_d;
    CREATE DOMAIN num_d AS numeric(20,0);
    CREATE DOMAIN real_d AS real;
    CREATE TABLE v (id int PRIMARY KEY, s smallint, i integer, b bigint, o oid,
      n20 numeric(20,0), n102 numeric(10,2), n numeric, r real, d double precision,
      bd big_d, sd small_d, sdd small_dd, nd num_d, rd real_d,
      dt date, ts timestamp, tz timestamptz, tm time, bo boolean, tx text);
    INSERT INTO v VALUES
      (1, -32768, -2147483648, -9223372036854775808, 0, 42, 1.50, 0.1, 3.1415927, 0.1,
       7, 7, 7, 42, 0.5, '1970-01-02', '2024-02-29 12:00:00.123456', '2020-01-01 00:00:00.5+00',
       '12:00:00.5', true, 'x'),
      (2, 32767, 2147483647, 9223372036854775807, 4294967295, 99999999999999999999, -0.01,
       0.12345678901234567890, 1e38, 1.7976931348623157e308, 5000000000, 1, -2, -42, 1e38,
       '1900-01-01', '1969-12-31 23:59:59.9995', '-infinity', '00:00:00', false, 'y'),
      (3, 0, 1, 9007199254740993, 1, -42, 42.00, 'NaN', '-0', 16777217, -1, 0, 32767,
       99999999999999999999, 16777217, 'infinity', 'infinity', '2038-01-19 03:14:08+00',
       '24:00:00', NULL, NULL),
      (4, 1, 16777217, 1, 2147483648, 0, 0.00, 'Infinity', 0.5, -2.5, 0, -1, 1, 0, -0.25,
       '2262-04-12', '1000-01-01 00:00:00', '1969-07-20 20:17:40+00', '00:00:00.000001', NULL,
       NULL),
      (5, NULL, NULL, NULL, NULL, NULL, NULL, '-Infinity', 'NaN', NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL);
  )SQL");
  const std::string ms = "floor(extract(epoch from {}) * 1000)::text";
  HBaseCodecMatrix m(db,
                     {{"s", Kind::kInteger, "s::text", "short", "int16"},
                      {"i", Kind::kInteger, "i::text", "int", "int32"},
                      {"b", Kind::kInteger, "b::text", "long", "int64"},
                      {"o", Kind::kInteger, "o::text", "long", "int64"},
                      {"n20", Kind::kDecimal, "n20::text", "bigdecimal", ""},
                      {"n102", Kind::kDecimal, "n102::text", "bigdecimal", ""},
                      {"n", Kind::kDecimal, "n::text", "bigdecimal", ""},
                      {"r", Kind::kDouble, "r::float8::text", "float", "float"},
                      {"d", Kind::kDouble, "d::text", "double", "double"},
                      {"bd", Kind::kInteger, "bd::text", "long", "int64"},
                      {"sd", Kind::kInteger, "sd::text", "short", "int16"},
                      {"sdd", Kind::kInteger, "sdd::text", "short", "int16"},
                      {"nd", Kind::kDecimal, "nd::text", "bigdecimal", ""},
                      {"rd", Kind::kDouble, "rd::float8::text", "float", "float"},
                      {"dt", Kind::kMillis,
                       "CASE WHEN NOT isfinite(dt) THEN 'Infinity' ELSE ((dt - date "
                       "'1970-01-01')::int8 * 86400000)::text END",
                       "long", ""},
                      {"ts", Kind::kMillis, fmt::format(fmt::runtime(ms), "ts"), "long", ""},
                      {"tz", Kind::kMillis, fmt::format(fmt::runtime(ms), "tz"), "long", ""},
                      {"tm", Kind::kMicros, "(extract(epoch from tm) * 1000000)::text", "long", ""},
                      {"bo", Kind::kBool, "bo::int::text", "boolean", ""}});
  m.Run([&](const std::string& expr) {
    return Lines(PgQuery(db, "SELECT id, " + expr + " FROM v ORDER BY id"));
  });
}

TEST(HBaseCodecMatrixTest, MySqlTypes) {
  WIDEN_REQUIRE_MYSQL(url);
  const std::string db = FreshMySqlDatabase(url, "widen_it_hbase_matrix");
  MySqlQuery(db, std::vector<std::string>{
                     "CREATE TABLE v (id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, "
                     "su SMALLINT UNSIGNED, mu MEDIUMINT UNSIGNED, iu INT UNSIGNED, bi BIGINT, "
                     "bu BIGINT UNSIGNED, b64 BIT(64), b5 BIT(5), y YEAR, d20 DECIMAL(20,0), "
                     "d102 DECIMAL(10,2), f FLOAT, f52 FLOAT(5,2), fu FLOAT UNSIGNED, db DOUBLE, "
                     "dt DATE, dtm DATETIME(6), tsp TIMESTAMP(6) NULL, tm TIME(6), bo BOOLEAN)",
                     "INSERT INTO v VALUES "
                     "(1, -128, 0, 0, 0, 0, -9223372036854775808, 0, 0, 0, 1901, 42, 1.50, "
                     "3.1415927, 123.45, 0.5, 0.1, '1970-01-02', '2024-02-29 12:00:00.123456', "
                     "'2020-01-01 00:00:00.5', '-838:59:59', 1), "
                     "(2, 127, 255, 65535, 16777215, 4294967295, 9223372036854775807, "
                     "9223372036854775808, b'1000000000000000000000000000000000000000000000000000"
                     "000000000000', 31, 2155, 99999999999999999999, -0.01, 1e38, -999.99, "
                     "3.4e38, 1.7976931348623157e308, '1000-01-01', '1969-12-31 23:59:59.999500', "
                     "'1970-01-01 00:00:01', '838:59:59.999999', 0), "
                     "(3, 0, 1, 1, 1, 1, 9007199254740993, 18446744073709551615, "
                     "b'1111111111111111111111111111111111111111111111111111111111111111', 1, 0, "
                     "-42, 42.00, 16777217, 0.01, 0, -2.5, '9999-12-31', "
                     "'9999-12-31 23:59:59.999999', '2038-01-19 03:14:07', '-00:00:01.5', 2), "
                     "(4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
                     "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
                     "SELECT 1"});
  auto as_char = [](const std::string& e) { return "CAST(" + e + " AS CHAR)"; };
  const std::string ms =
      "CAST(FLOOR(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', {}) / 1000) AS CHAR)";
  HBaseCodecMatrix m(
      db, {{"ti", Kind::kInteger, as_char("ti"), "short", "int8"},
           {"tu", Kind::kInteger, as_char("tu"), "short", "int16"},
           {"su", Kind::kInteger, as_char("su"), "int", "int32"},
           {"mu", Kind::kInteger, as_char("mu"), "int", "int32"},
           {"iu", Kind::kInteger, as_char("iu"), "long", "int64"},
           {"bi", Kind::kInteger, as_char("bi"), "long", "int64"},
           {"bu", Kind::kInteger, as_char("bu"), "long", "uint64"},
           {"b64", Kind::kInteger, as_char("CAST(b64 AS UNSIGNED)"), "long", "uint64"},
           {"b5", Kind::kInteger, as_char("CAST(b5 AS UNSIGNED)"), "short", "int8"},
           {"y", Kind::kInteger, as_char("y + 0"), "short", "int16"},
           {"d20", Kind::kDecimal, as_char("d20"), "bigdecimal", ""},
           {"d102", Kind::kDecimal, as_char("d102"), "bigdecimal", ""},
           {"f", Kind::kDouble, "CAST(f AS DOUBLE)", "float", "float"},
           {"f52", Kind::kDouble, "CAST(f52 AS DOUBLE)", "float", "float"},
           {"fu", Kind::kDouble, "CAST(fu AS DOUBLE)", "float", "float"},
           {"db", Kind::kDouble, "db", "double", "double"},
           {"dt", Kind::kMillis, as_char("DATEDIFF(dt, '1970-01-01') * 86400000"), "long", ""},
           {"dtm", Kind::kMillis, fmt::format(fmt::runtime(ms), "dtm"), "long", ""},
           {"tsp", Kind::kMillis, fmt::format(fmt::runtime(ms), "tsp"), "long", ""},
           {"tm", Kind::kMicros, as_char("TIME_TO_SEC(tm) * 1000000"), "long", ""},
           {"bo", Kind::kInteger, as_char("bo"), "short", "int8"}});
  m.Run([&](const std::string& expr) {
    std::string s;
    for (const auto& r : MySqlQuery(db, "SELECT id, " + expr + " FROM v ORDER BY id")) {
      s += r.at(0) + "\t" + r.at(1) + "\n";
    }
    return s;
  });
}

// A Java type no value of the column can be, or a key type that cannot hold
// the column, stops `plan` (and migrate) before any row is read.
TEST(HBaseCodecMatrixTest, PlanTimeRefusals) {
  WIDEN_REQUIRE_PG(url);
  const std::string db = FreshPgDatabase(url, "widen_it_hbase_refusals");
  PgQuery(db,
          "CREATE TABLE v (id int PRIMARY KEY, tx text, dt date, ts timestamp NOT NULL);"
          "INSERT INTO v VALUES (1, 'x', '2024-01-01', '2024-01-01 10:00:00')");
  const std::string dir = MakeTempDir();
  struct Case {
    std::string key, column, message;
  };
  const Case cases[] = {
      {"{parts: [id]}", "{column: tx, codec: hbase, type: long}",
       "column tx is text (text), which the hbase codec cannot write as Java long"},
      {"{parts: [id]}", "{column: dt, codec: hbase, type: double}",
       "column dt is date (date), which the hbase codec cannot write as Java double"},
      {"{form: binary, parts: [{column: ts, type: date}]}", "tx",
       "type date cannot hold source column v.ts (timestamp without time zone, a timestamp "
       "value); its own type is timestamp"},
      {"{form: binary, parts: [{column: tx, type: int64, on_null: reject}]}", "dt",
       "type int64 cannot hold source column v.tx (text, a text value)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.column);
    std::ofstream(dir + "/m.yaml")
        << "source: " << db << "\ntables:\n  - name: t\n    from: v\n"
        << "    families: [d]\n    key: " << c.key << "\n    columns: [" << c.column << "]\n";
    CommandResult r =
        RunCommand(fmt::format("{} plan -m {}", WidenBinary(), ShellQuote(dir + "/m.yaml")));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << r.output;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace widen::testing
