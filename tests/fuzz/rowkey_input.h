// The input of the row key fuzz target, shared with the seed writer:
//
//   line 1   a key layout as JSON, as widen stores it in a target table's
//            metadata ("widen.key", KeyCodec::ToJson)
//   line 2   the source type of each part, comma-separated value type names
//            ("int,text,,timestamptz"; common/value.h ValueTypeName); an
//            empty or unknown name leaves the part as the stored layout
//            gives it (no source type). May be empty.
//   rest     the key bytes (any bytes, newlines included)
//
// The source types turn the stored layout into the codec a plan builds
// (KeyPartPlan::value_type), which `widen verify` decodes keys with; only
// combinations the planner accepts are made.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/value.h"
#include "transform/key_codec.h"

namespace widen::fuzz {

/// One row key target input, split.
struct RowKeyInput {
  std::string layout_json;
  std::vector<std::optional<ValueType>> types;  // by part; nullopt = none given
  std::string key;
};

/// Splits `data`; false when it has fewer than two newlines.
bool ParseRowKeyInput(std::string_view data, RowKeyInput* out);

/// The bytes ParseRowKeyInput reads back as (layout_json, types, key).
/// REQUIRES: layout_json holds no newline.
std::string FormatRowKeyInput(std::string_view layout_json,
                              const std::vector<std::optional<ValueType>>& types,
                              std::string_view key);

/// `codec` with part i's value_type set to types[i] where given, or nullopt
/// when the planner would refuse that combination (transform/plan.cc,
/// PlanKeyPart: a binary part whose key type cannot hold the source type, a
/// text width on a non-integer, `reverse` on a non-temporal column).
std::optional<KeyCodec> WithSourceTypes(const KeyCodec& codec,
                                        const std::vector<std::optional<ValueType>>& types);

}  // namespace widen::fuzz
