// TableDescriptor: a target table as HBase creates it — a namespace-qualified
// name, column families with their creation options, and split points.
//
// The same descriptor drives `widen ddl` (HBase shell text), the HBase store's
// createTable and the embedded store's read rules (VERSIONS, TTL).
//
// Thread safety: a value type.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace widen {

/// One column family and the options HBase takes at creation
/// (ColumnFamilyDescriptorBuilder). Defaults are HBase 2's.
struct FamilyDescriptor {
  std::string name;                          // printable, short: stored in every cell
  int versions = 1;                          // VERSIONS: newest versions kept per column
  int min_versions = 0;                      // MIN_VERSIONS: kept even past the TTL
  int64_t ttl_seconds = 0;                   // TTL in seconds; 0 = forever (HBase's FOREVER)
  std::string compression = "NONE";          // NONE, SNAPPY, GZ, LZ4, ZSTD, LZO, BZIP2
  std::string bloom_filter = "ROW";          // NONE, ROW, ROWCOL
  int block_size_bytes = 65536;              // BLOCKSIZE in bytes
  bool in_memory = false;                    // IN_MEMORY
  std::string data_block_encoding = "NONE";  // NONE, PREFIX, DIFF, FAST_DIFF, ROW_INDEX_V1
};

struct TableDescriptor {
  std::string name_space = "default";  // HBase namespace
  std::string table;                   // qualifier-less table name
  std::vector<FamilyDescriptor> families;
  std::vector<std::string> split_points;  // row keys, ascending, for pre-split regions
  /// Table metadata (HBase's METADATA key/values). widen keeps the row key
  /// layout under "widen.key" (KeyCodec::ToJson) so readers can decode keys.
  std::map<std::string, std::string> metadata;

  /// "ns:table", or "table" in the default namespace (HBase's TableName form).
  std::string FullName() const;
  /// REQUIRES: none. nullptr when the family is unknown.
  const FamilyDescriptor* Family(std::string_view name) const;

  /// Checks names as HBase does (TableName.isLegalTableQualifierName,
  /// isLegalNamespaceName, ColumnFamilyDescriptorBuilder.isLegalColumnFamilyName)
  /// and option ranges. InvalidArgument names the offending part.
  Status Validate() const;
};

/// Splits "ns:table" (or "table") into namespace and table.
void SplitTableName(std::string_view full, std::string* name_space, std::string* table);

/// The one name of a table that FullName gives: "ns:table", or "table" in
/// the default namespace ("default:table" becomes "table"). What stores key
/// a table by (its descriptor, its cells, its state).
std::string CanonicalTableName(std::string_view full_name);

/// The family names of `d`, comma-separated ("d, a"), for messages.
std::string FamilyNames(const TableDescriptor& d);

/// Table metadata key where a widen before table states (StateStore) kept a
/// table's load state ("loading"/"complete"); read by `scan`/`get` for such
/// tables, written by nothing any more (docs/format.md). Keys that start
/// with it are bookkeeping, not layout: CheckSameTable does not compare them.
inline constexpr char kStateMetadata[] = "widen.state";

/// Whether a table that exists (`stored`) may be written as `wanted`
/// describes it: the same families with the same options, and no metadata
/// key of `wanted` (bookkeeping aside) with another value in `stored`
/// (another row key layout). Split points are not compared. OK, or
/// FailedPrecondition naming the table, `where` ("store 'out/x'") and the
/// first difference.
Status CheckSameTable(const TableDescriptor& stored, const TableDescriptor& wanted,
                      const std::string& where);

/// Serialised descriptor (JSON text) as the embedded store keeps it; see docs/format.md.
std::string EncodeTableDescriptor(const TableDescriptor& d);
Result<TableDescriptor> DecodeTableDescriptor(std::string_view json);

}  // namespace widen
