#include "mapping/fields.h"

#include <cassert>
#include <iterator>

namespace widen {

namespace {

using F = std::string_view;

constexpr F kMapping[] = {"source", "target", "timestamp_ms", "tables", "sync", "policy"};
constexpr F kTable[] = {"name", "from",  "query",   "where", "version", "families",
                        "key",  "joins", "columns", "nest",  "access",  "key_order"};
constexpr F kFamily[] = {"name",       "versions",    "min_versions",
                         "ttl",        "compression", "bloom_filter",
                         "block_size", "in_memory",   "data_block_encoding"};
constexpr F kKey[] = {"form", "separator", "parts", "salt", "hash_prefix"};
constexpr F kKeyPart[] = {"column", "literal", "width", "type", "desc", "reverse", "on_null"};
constexpr F kSalt[] = {"buckets", "parts"};
constexpr F kHashPrefix[] = {"bytes", "parts"};
constexpr F kJoin[] = {"table", "as", "on"};
constexpr F kColumn[] = {"column", "to", "on_null", "codec", "type", "version"};
constexpr F kNest[] = {"table",   "on",   "family",       "prefix",
                       "joins",   "id",   "id_separator", "columns",
                       "where",   "form", "layout",       "attribute_separator",
                       "version", "nest"};
constexpr F kNestColumn[] = {"column", "as"};
constexpr F kAccess[] = {"name", "by", "order"};
constexpr F kAccessOrder[] = {"column", "desc"};
constexpr F kSync[] = {"table", "mode", "watermark", "tiebreak", "lookback", "deletes"};
constexpr F kDeletes[] = {"soft", "reconcile"};
constexpr F kSoft[] = {"column", "value"};
constexpr F kPolicy[] = {"namespace", "table",     "family",       "qualifier",
                         "prefix",    "attribute", "max_families", "reserved_prefixes"};
constexpr F kPolicyRule[] = {"pattern",   "style",   "min_bytes",
                             "max_bytes", "allowed", "reserved_prefixes"};

constexpr MappingObject kObjects[] = {
    {"mapping", kMapping},
    {"table", kTable},
    {"family", kFamily},
    {"key", kKey},
    {"key_part", kKeyPart},
    {"salt", kSalt},
    {"hash_prefix", kHashPrefix},
    {"join", kJoin},
    {"column", kColumn},
    {"nest", kNest},
    {"nest_column", kNestColumn},
    {"access", kAccess},
    {"access_order", kAccessOrder},
    {"sync", kSync},
    {"deletes", kDeletes},
    {"soft", kSoft},
    {"policy", kPolicy},
    {"policy_rule", kPolicyRule},
};

}  // namespace

std::span<const MappingObject> MappingObjects() { return kObjects; }

std::span<const std::string_view> MappingFields(std::string_view kind) {
  for (const MappingObject& o : kObjects) {
    if (o.kind == kind) return o.fields;
  }
  assert(false && "unknown mapping object kind");
  return {};
}

}  // namespace widen
