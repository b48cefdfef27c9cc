// The fuzz targets run in the normal build, on every test run: each target
// (linked in, one per binary: WIDEN_FUZZ_TARGET_MAPPING or _ROWKEY) is fed
// fixed inputs — the mapping seeds and examples, keys that a codec writes
// and every byte-level change of them — and must hold its invariants (a
// broken one aborts the process, which fails the test). The row key
// target's input format is tested here too. A long, coverage-guided run is
// scripts/fuzz.sh's.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/rowkey_input.h"
#include "tests/transform/key_parts.h"
#include "transform/key_codec.h"
#include "transform/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace widen::fuzz {
namespace {

namespace fs = std::filesystem;

int Feed(const std::string& bytes) {
  return LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

// `bytes`, then each one-byte change of it (every byte flipped in its low
// bit and in its top bit) and each prefix: the neighbourhood a fuzzer
// starts from.
std::vector<std::string> Neighbours(const std::string& bytes) {
  std::vector<std::string> out{bytes};
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned char bit : {0x01, 0x80}) {
      std::string b = bytes;
      b[i] = static_cast<char>(static_cast<unsigned char>(b[i]) ^ bit);
      out.push_back(std::move(b));
    }
    out.push_back(bytes.substr(0, i));
  }
  return out;
}

#ifdef WIDEN_FUZZ_TARGET_MAPPING

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(MappingFuzzTargetTest, HoldsItsInvariantsOnTheSeedsAndExamplesAndTheirNeighbours) {
  std::vector<fs::path> files;
  const fs::path root(WIDEN_SOURCE_DIR);
  for (const auto& e : fs::directory_iterator(root / "tests/fuzz/seeds/mapping")) {
    files.push_back(e.path());
  }
  for (const auto& e : fs::recursive_directory_iterator(root / "examples")) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  ASSERT_GE(files.size(), 5u);
  size_t fed = 0;
  for (const fs::path& f : files) {
    SCOPED_TRACE(f.string());
    const std::string text = ReadFile(f);
    ASSERT_FALSE(text.empty());
    // The whole file and its neighbourhood up to 2 KiB in (a run's budget).
    for (const std::string& input : Neighbours(text.substr(0, 2048))) {
      EXPECT_EQ(Feed(input), 0);
      ++fed;
    }
  }
  EXPECT_GT(fed, 1000u);
}

#endif

#ifdef WIDEN_FUZZ_TARGET_ROWKEY

using testing::Part;

Row MakeRow(std::vector<Value> v) {
  Row r;
  r.values = std::move(v);
  return r;
}

// A text key (zero-padded integer | text) and a binary one (int, reversed
// timestamp, double), with rows each encodes.
struct Design {
  KeyCodec codec;
  std::vector<Row> rows;
};

std::vector<Design> Designs() {
  std::vector<Design> out;
  out.push_back(Design{KeyCodec(KeyForm::kText,
                                {Part("customer_id", 0, KeyType::kInt32, ValueType::kInt, 5),
                                 Part("code", 1, KeyType::kString, ValueType::kText)},
                                "|"),
                       {MakeRow({Value::Int(1), Value::Str(ValueType::kText, "A100")}),
                        MakeRow({Value::Int(99999), Value::Str(ValueType::kText, "")})}});
  KeyPartPlan when = Part("at", 1, KeyType::kTimestamp, ValueType::kTimestampTz);
  when.reverse = true;
  out.push_back(
      Design{KeyCodec(KeyForm::kBinary,
                      {Part("user_id", 0, KeyType::kInt64, ValueType::kInt), when,
                       Part("score", 2, KeyType::kFloat64, ValueType::kFloat)},
                      ""),
             {MakeRow({Value::Int(-7), Value::Temporal(ValueType::kTimestampTz, 1718200000123000),
                       Value::Float(2.5)}),
              MakeRow({Value::Int(42), Value::Temporal(ValueType::kTimestampTz, 0),
                       Value::Float(-0.0)})}});
  return out;
}

TEST(RowKeyFuzzTargetTest, HoldsItsInvariantsOnEncodedKeysAndTheirNeighbours) {
  size_t fed = 0;
  for (const Design& d : Designs()) {
    std::vector<std::optional<ValueType>> types;
    for (const KeyPartPlan& p : d.codec.parts()) types.push_back(p.value_type);
    for (const Row& row : d.rows) {
      std::string key;
      ASSERT_TRUE(d.codec.Encode(row, &key).ok());
      for (const std::string& k : Neighbours(key)) {
        EXPECT_EQ(Feed(FormatRowKeyInput(d.codec.ToJson(), types, k)), 0);
        EXPECT_EQ(Feed(FormatRowKeyInput(d.codec.ToJson(), {}, k)), 0);
        fed += 2;
      }
    }
    // A damaged layout: its neighbourhood, with the first key.
    std::string key;
    ASSERT_TRUE(d.codec.Encode(d.rows.front(), &key).ok());
    for (const std::string& json : Neighbours(d.codec.ToJson())) {
      if (json.find('\n') != std::string::npos) continue;
      EXPECT_EQ(Feed(FormatRowKeyInput(json, types, key)), 0);
      ++fed;
    }
  }
  EXPECT_GT(fed, 500u);
}

// The input format: what FormatRowKeyInput writes reads back as written,
// key bytes with newlines included; fewer than two newlines is no input.
TEST(RowKeyFuzzTargetTest, InputsReadBackAsWritten) {
  const std::vector<std::optional<ValueType>> types = {ValueType::kInt, std::nullopt,
                                                       ValueType::kText};
  const std::string key("a\nb\0c\n", 6);
  RowKeyInput in;
  ASSERT_TRUE(ParseRowKeyInput(FormatRowKeyInput("{\"x\":1}", types, key), &in));
  EXPECT_EQ(in.layout_json, "{\"x\":1}");
  EXPECT_EQ(in.types, types);
  EXPECT_EQ(in.key, key);
  EXPECT_FALSE(ParseRowKeyInput("{}\nint", &in));
  ASSERT_TRUE(ParseRowKeyInput("{}\n\n", &in));
  EXPECT_TRUE(in.types.empty());
  EXPECT_TRUE(in.key.empty());
}

#endif

}  // namespace
}  // namespace widen::fuzz
