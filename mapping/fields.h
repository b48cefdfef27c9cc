// The fields each kind of map in a mapping file may hold, in one table that
// the loader checks every map against (unknown fields are refused with "did
// you mean") and that the JSON Schema of the mapping (docs/mapping.schema.json)
// is tested against, so the two cannot drift apart.
//
// Thread safety: constants.
#pragma once

#include <span>
#include <string_view>

namespace widen {

/// One kind of map of a mapping file and the fields it may hold, in the
/// order docs/mapping.md lists them.
struct MappingObject {
  std::string_view kind;  // "mapping", "table", "key", ...: the name tests and the schema use
  std::span<const std::string_view> fields;
};

/// Every kind: mapping (the top level), table, family, key, key_part, salt,
/// hash_prefix, join, column, nest, nest_column, access, access_order, sync, deletes,
/// soft, policy, policy_rule. A view of a constant table.
std::span<const MappingObject> MappingObjects();

/// The fields of `kind`. REQUIRES: `kind` is one of MappingObjects().
std::span<const std::string_view> MappingFields(std::string_view kind);

}  // namespace widen
