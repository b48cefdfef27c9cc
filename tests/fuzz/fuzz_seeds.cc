// widen_fuzz_seeds: writes seed inputs for the row key fuzz target
// (tests/fuzz/rowkey_input.h), one file each, into OUT_DIR.
//
//   widen_fuzz_seeds synthetic OUT_DIR
//       keys of one- and several-part layouts of every key type, form and
//       modifier (desc, NULL marker, fixed width, reverse, salt, hash
//       prefix, literals), encoded from values that include negatives,
//       0x00 and 0xFF bytes, empty strings, NaN and the types' extremes
//   widen_fuzz_seeds store STORE_DIR OUT_DIR [ROWS_PER_TABLE]
//       the stored key layout and the first ROWS_PER_TABLE (default 64)
//       row keys of every table of the embedded store in STORE_DIR
//       (scripts/fuzz.sh migrates the examples into stores for this)
//
// Exit 0 with the number of files written on stdout; 2 on a usage error,
// 1 when a store cannot be read or a file written.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "store/store.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/rowkey_input.h"
#include "transform/key_codec.h"
#include "transform/plan.h"

namespace widen::fuzz {
namespace {

namespace fs = std::filesystem;

class SeedWriter {
 public:
  SeedWriter(fs::path dir, std::string prefix) : dir_(std::move(dir)), prefix_(std::move(prefix)) {}

  bool Write(const std::string& bytes) {
    std::ofstream out(dir_ / fmt::format("{}-{:05d}", prefix_, count_), std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) return false;
    ++count_;
    return true;
  }
  int count() const { return count_; }

 private:
  fs::path dir_;
  std::string prefix_;
  int count_ = 0;
};

KeyPartPlan Column(std::string name, size_t index, KeyType type, ValueType value_type) {
  KeyPartPlan p;
  p.name = std::move(name);
  p.index = index;
  p.type = type;
  p.value_type = value_type;
  return p;
}

KeyPartPlan Literal(std::string text) {
  KeyPartPlan p;
  p.name = "'" + text + "'";
  p.is_literal = true;
  p.literal = std::move(text);
  return p;
}

// A key type, the source type it is read from, and values of that type.
struct Sample {
  KeyType type;
  ValueType value_type;
  std::vector<Value> values;
};

std::vector<Sample> Samples() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  auto text = [](std::vector<std::string> v) {
    std::vector<Value> out;
    for (const auto& s : v) out.push_back(Value::Str(ValueType::kText, s));
    return out;
  };
  auto ints = [](std::vector<int64_t> v) {
    std::vector<Value> out;
    for (int64_t x : v) out.push_back(Value::Int(x));
    return out;
  };
  auto temporal = [](ValueType t, std::vector<int64_t> v) {
    std::vector<Value> out;
    for (int64_t x : v) out.push_back(Value::Temporal(t, x));
    return out;
  };
  return {
      {KeyType::kString, ValueType::kText,
       text({"", "A100", std::string("a\0b", 3), "\xff\xfe", "a|b", "caf\xc3\xa9"})},
      {KeyType::kBytes,
       ValueType::kBytes,
       {Value::Str(ValueType::kBytes, std::string("\0\0", 2)),
        Value::Str(ValueType::kBytes, "\x01\xff")}},
      {KeyType::kString,
       ValueType::kOther,
       {Value::Str(ValueType::kOther, "123e4567-e89b-12d3-a456-426614174000")}},
      {KeyType::kInt8, ValueType::kInt, ints({-128, -1, 0, 127})},
      {KeyType::kInt16, ValueType::kInt, ints({-32768, 300, 32767})},
      {KeyType::kInt32, ValueType::kInt, ints({INT32_MIN, 42, INT32_MAX})},
      {KeyType::kInt64, ValueType::kInt, ints({INT64_MIN, -1, 0, 1042, INT64_MAX})},
      {KeyType::kUInt64, ValueType::kUInt, {Value::UInt(0), Value::UInt(UINT64_MAX)}},
      {KeyType::kFloat32,
       ValueType::kFloat,
       {Value::Float(-1.5), Value::Float(0.0), Value::Float(nan), Value::Float(inf)}},
      {KeyType::kFloat64,
       ValueType::kFloat,
       {Value::Float(-0.0), Value::Float(1e300), Value::Float(-inf), Value::Float(nan),
        Value::Float(5e-324)}},
      {KeyType::kDecimal,
       ValueType::kDecimal,
       {Value::Str(ValueType::kDecimal, "-12.50"), Value::Str(ValueType::kDecimal, "0"),
        Value::Str(ValueType::kDecimal, "1000"), Value::Str(ValueType::kDecimal, "0.001")}},
      {KeyType::kDecimal, ValueType::kInt, ints({-7, 0, 123456789})},
      {KeyType::kBool, ValueType::kBool, {Value::Bool(false), Value::Bool(true)}},
      {KeyType::kDate, ValueType::kDate, temporal(ValueType::kDate, {-719162, -1, 0, 19885})},
      {KeyType::kTimestamp, ValueType::kTimestamp,
       temporal(ValueType::kTimestamp, {-1000, 0, 1718200000123456})},
      {KeyType::kTimestamp, ValueType::kTimestampTz,
       temporal(ValueType::kTimestampTz, {1718200000123000})},
      {KeyType::kTimestamp, ValueType::kInt, ints({1718200000123})},
      {KeyType::kTime, ValueType::kTime, temporal(ValueType::kTime, {0, 86399999999, -3600000000})},
  };
}

// Encodes every row with `codec` and writes the keys that encode.
bool WriteKeys(SeedWriter* out, const KeyCodec& codec, const std::vector<Row>& rows) {
  std::vector<std::optional<ValueType>> types;
  for (const KeyPartPlan& p : codec.parts()) {
    types.push_back(p.is_literal ? std::nullopt : std::optional<ValueType>(p.value_type));
  }
  const std::string json = codec.ToJson();
  for (const Row& row : rows) {
    std::string key;
    if (!codec.Encode(row, &key).ok()) continue;
    // A seed is worth its place when it reads back as written and its key
    // decodes: the target then starts from keys the encoder really writes.
    const std::string seed = FormatRowKeyInput(json, types, key);
    RowKeyInput back;
    ASSERT_INVARIANT(ParseRowKeyInput(seed, &back), "a seed does not read back");
    ASSERT_INVARIANT(back.layout_json == json && back.key == key && back.types == types,
                     "a seed reads back otherwise than written");
    Result<Row> decoded = codec.DecodeRow(key);
    ASSERT_INVARIANT(decoded.ok(),
                     "an encoded seed key does not decode: " + decoded.status().ToString());
    if (!out->Write(seed)) return false;
  }
  return true;
}

Row OneValue(const Value& v) {
  Row r;
  r.values.push_back(v);
  return r;
}

bool Synthetic(const fs::path& dir) {
  SeedWriter out(dir, "synthetic");
  for (const Sample& s : Samples()) {
    std::vector<Row> rows;
    for (const Value& v : s.values) rows.push_back(OneValue(v));
    // Binary: plain, desc, with a NULL marker (and NULL), both.
    for (int variant = 0; variant < 4; ++variant) {
      KeyPartPlan p = Column("k", 0, s.type, s.value_type);
      p.desc = variant & 1;
      p.null_marker = variant & 2;
      std::vector<Row> with_null = rows;
      if (p.null_marker) with_null.push_back(OneValue(Value::Null(s.value_type)));
      if (!WriteKeys(&out, KeyCodec(KeyForm::kBinary, {p}, ""), with_null)) return false;
    }
    // Text, as the value's text.
    if (!WriteKeys(&out, KeyCodec(KeyForm::kText, {Column("k", 0, s.type, s.value_type)}, "|"),
                   rows)) {
      return false;
    }
  }
  // Fixed-width binary strings; zero-padded text integers; reversed times.
  {
    KeyPartPlan p = Column("code", 0, KeyType::kString, ValueType::kText);
    p.width = 6;
    std::vector<Row> rows{OneValue(Value::Str(ValueType::kText, "")),
                          OneValue(Value::Str(ValueType::kText, "A100")),
                          OneValue(Value::Str(ValueType::kText, "ZZZZZZ"))};
    if (!WriteKeys(&out, KeyCodec(KeyForm::kBinary, {p}, ""), rows)) return false;
    p.desc = true;
    if (!WriteKeys(&out, KeyCodec(KeyForm::kBinary, {p}, ""), rows)) return false;
  }
  {
    KeyPartPlan p = Column("id", 0, KeyType::kInt64, ValueType::kInt);
    p.width = 6;
    if (!WriteKeys(
            &out, KeyCodec(KeyForm::kText, {p}, "|"),
            {OneValue(Value::Int(0)), OneValue(Value::Int(1042)), OneValue(Value::Int(999999))})) {
      return false;
    }
  }
  for (KeyForm form : {KeyForm::kBinary, KeyForm::kText}) {
    for (ValueType t : {ValueType::kTimestamp, ValueType::kTimestampTz, ValueType::kInt}) {
      KeyPartPlan p = Column("sent_at", 0, KeyType::kTimestamp, t);
      p.reverse = true;
      const int64_t v = t == ValueType::kInt ? 1718200000123 : 1718200000123000;
      if (!WriteKeys(&out, KeyCodec(form, {p}, "|"),
                     {OneValue(Value::Temporal(t, 0)), OneValue(Value::Temporal(t, v))})) {
        return false;
      }
    }
  }
  // Several parts, a literal, a salt and a hash prefix.
  {
    std::vector<KeyPartPlan> parts{Literal("o"),
                                   Column("user", 0, KeyType::kString, ValueType::kText),
                                   Column("n", 1, KeyType::kInt32, ValueType::kInt),
                                   Column("at", 2, KeyType::kTimestamp, ValueType::kTimestamp)};
    parts[2].desc = true;
    parts[3].reverse = true;
    Row r;
    r.values = {Value::Str(ValueType::kText, std::string("u\0", 2)), Value::Int(-5),
                Value::Temporal(ValueType::kTimestamp, 1718200000123000)};
    for (int salt : {0, 16, 256}) {
      for (int hash : {0, 1, 8}) {
        KeyHashPlan s{salt, {}}, h{hash, {1}};
        if (!WriteKeys(&out, KeyCodec(KeyForm::kBinary, parts, "", s, h), {r})) return false;
      }
    }
    Row t;
    t.values = {Value::Str(ValueType::kText, "A100"), Value::Int(42),
                Value::Temporal(ValueType::kTimestamp, 1718200000123000)};
    std::vector<KeyPartPlan> text_parts{
        Column("product", 0, KeyType::kString, ValueType::kText),
        Column("customer", 1, KeyType::kInt64, ValueType::kInt), Literal("x"),
        Column("at", 2, KeyType::kTimestamp, ValueType::kTimestamp)};
    text_parts[1].width = 5;
    for (int salt : {0, 10, 100}) {
      for (int hash : {0, 2}) {
        KeyHashPlan s{salt, {}}, h{hash, {0}};
        if (!WriteKeys(&out, KeyCodec(KeyForm::kText, text_parts, "|", s, h), {t})) return false;
        if (!WriteKeys(&out, KeyCodec(KeyForm::kText, text_parts, "::", s, h), {t})) return false;
      }
    }
  }
  std::printf("%d\n", out.count());
  return true;
}

bool FromStore(const fs::path& store_dir, const fs::path& dir, uint64_t rows_per_table) {
  StoreOptions so;
  so.create_if_missing = false;
  auto store = Store::Open("leveldb:" + store_dir.string(), so);
  if (!store.ok()) {
    std::fprintf(stderr, "widen_fuzz_seeds: %s\n", store.status().ToString().c_str());
    return false;
  }
  auto tables = (*store)->ListTables();
  if (!tables.ok()) {
    std::fprintf(stderr, "widen_fuzz_seeds: %s\n", tables.status().ToString().c_str());
    return false;
  }
  int written = 0;
  for (const TableDescriptor& d : *tables) {
    auto layout = d.metadata.find(kKeyLayoutMetadata);
    if (layout == d.metadata.end()) continue;
    std::string name = store_dir.filename().string() + "-" + d.FullName();
    for (char& c : name) {
      if (c == ':' || c == '/') c = '_';
    }
    SeedWriter out(dir, name);
    ReadOptions ro;
    ro.limit_rows = rows_per_table;
    auto reader = (*store)->NewReader(d.FullName(), ro);
    if (!reader.ok()) {
      std::fprintf(stderr, "widen_fuzz_seeds: %s\n", reader.status().ToString().c_str());
      return false;
    }
    std::string last;
    bool first = true;
    for (; (*reader)->Valid(); (*reader)->Next()) {
      const CellView c = (*reader)->cell();
      if (!first && c.row == last) continue;
      first = false;
      last.assign(c.row);
      if (!out.Write(FormatRowKeyInput(layout->second, {}, last))) return false;
    }
    if (!(*reader)->status().ok()) {
      std::fprintf(stderr, "widen_fuzz_seeds: %s\n", (*reader)->status().ToString().c_str());
      return false;
    }
    written += out.count();
  }
  std::printf("%d\n", written);
  return true;
}

int Usage() {
  std::fprintf(stderr,
               "usage: widen_fuzz_seeds synthetic OUT_DIR\n"
               "       widen_fuzz_seeds store STORE_DIR OUT_DIR [ROWS_PER_TABLE]\n");
  return 2;
}

}  // namespace
}  // namespace widen::fuzz

int main(int argc, char** argv) {
  using namespace widen::fuzz;
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && args[0] == "synthetic") return Synthetic(args[1]) ? 0 : 1;
  if ((args.size() == 3 || args.size() == 4) && args[0] == "store") {
    const uint64_t rows = args.size() == 4 ? std::stoull(args[3]) : 64;
    return FromStore(args[1], args[2], rows) ? 0 : 1;
  }
  return Usage();
}
