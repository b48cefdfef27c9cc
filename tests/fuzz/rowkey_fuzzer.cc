// libFuzzer target: the row key decoder. `widen scan/get --decode` read a
// table's key layout from its metadata (KeyCodec::FromJson) and split row
// keys with Decode; `widen verify` decodes keys into source values with
// DecodeRow. Both read bytes from the store, which may be damaged or
// foreign, so for any layout text and any key bytes
// (tests/fuzz/rowkey_input.h):
//   - nothing crashes, leaks or hits undefined behaviour, and no exception
//     escapes: every failure is a Status;
//   - a layout that does not load is DataLoss ("key layout: ..."); one that
//     loads writes itself back (ToJson) as a layout that loads to the same
//     text;
//   - a key DecodeRow refuses is InvalidArgument naming the key; a key it
//     accepts re-encodes (Encode) to exactly the same bytes, and Decode
//     splits it into the same named parts;
// with the stored layout as it is and with the source types a plan gives.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/rowkey_input.h"
#include "transform/key_codec.h"

namespace widen::fuzz {
namespace {

// The names Decode gives, in order: "salt", "hash", then every part's.
std::vector<std::string> DecodeNames(const KeyCodec& codec) {
  std::vector<std::string> names;
  if (codec.salt().size > 0) names.push_back("salt");
  if (codec.hash_prefix().size > 0) names.push_back("hash");
  for (const KeyPartPlan& p : codec.parts()) names.push_back(p.name);
  return names;
}

void CheckKey(const KeyCodec& codec, const std::string& key) {
  std::vector<std::pair<std::string, std::string>> named;
  const bool splits = codec.Decode(key, &named);
  Result<Row> row = codec.DecodeRow(key);
  if (!row.ok()) {
    ASSERT_INVARIANT(row.status().code() == StatusCode::kInvalidArgument, row.status().ToString());
    ASSERT_INVARIANT(row.status().message().rfind("row key '", 0) == 0, row.status().message());
    return;
  }
  for (const KeyPartPlan& p : codec.parts()) {
    if (!p.is_literal) ASSERT_INVARIANT(p.index < row->size(), "a part's column is missing");
  }
  std::string again;
  Status s = codec.Encode(*row, &again);
  ASSERT_INVARIANT(s.ok(), "DecodeRow accepted '" + ToStringBinary(key) +
                               "' but its values do not encode: " + s.ToString());
  ASSERT_INVARIANT(again == key, "DecodeRow accepted '" + ToStringBinary(key) +
                                     "', which re-encodes as '" + ToStringBinary(again) + "'");
  ASSERT_INVARIANT(splits, "DecodeRow accepted '" + ToStringBinary(key) + "' but Decode did not");
  const std::vector<std::string> names = DecodeNames(codec);
  ASSERT_INVARIANT(named.size() == names.size(), "Decode gave another number of parts");
  for (size_t i = 0; i < names.size(); ++i) {
    ASSERT_INVARIANT(named[i].first == names[i], "Decode named part " + std::to_string(i) + " '" +
                                                     named[i].first + "', not '" + names[i] + "'");
  }
}

void Run(std::string_view data) {
  RowKeyInput in;
  if (!ParseRowKeyInput(data, &in)) return;
  Result<KeyCodec> codec = KeyCodec::FromJson(in.layout_json);
  if (!codec.ok()) {
    ASSERT_INVARIANT(codec.status().code() == StatusCode::kDataLoss, codec.status().ToString());
    ASSERT_INVARIANT(codec.status().message().rfind("key layout: ", 0) == 0,
                     codec.status().message());
    return;
  }
  const std::string json = codec->ToJson();
  Result<KeyCodec> back = KeyCodec::FromJson(json);
  ASSERT_INVARIANT(back.ok(), "the layout's own JSON does not load: " + back.status().ToString());
  ASSERT_INVARIANT(back->ToJson() == json, "the layout's JSON changes when loaded again");
  (void)codec->Anatomy();

  CheckKey(*codec, in.key);
  if (std::optional<KeyCodec> typed = WithSourceTypes(*codec, in.types)) CheckKey(*typed, in.key);
}

}  // namespace
}  // namespace widen::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return widen::fuzz::RunInput(widen::fuzz::Run, data, size);
}
