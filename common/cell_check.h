// CellChecker: the checks every cell passes before a sink hands it to a
// store — HBase's own rules, written once for every sink (the embedded
// store's, HBase's, the dry run's):
//
//   - the family is one of the table's;
//   - the row key is 1 to kMaxRowKeyBytes bytes (HBase's row length is a
//     Java short);
//   - the type is a known CellType, and a DeleteFamily marker has an empty
//     qualifier;
//   - with CellLimits::negative_timestamps false, the timestamp is >= 0
//     (HBase takes no negative timestamp);
//   - with CellLimits::max_cell_bytes, the cell is at most that many bytes
//     as HBase's region server counts it: row + family + qualifier + value
//     + kCellOverheadBytes (hbase.server.keyvalue.maxsize).
//
// A refused cell is InvalidArgument naming the table, the row (in HBase's
// printable form) and the rule.
//
// Thread safety: a checker is used by one thread at a time (it caches the
// last family looked up).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/cell.h"
#include "common/status.h"
#include "common/table_descriptor.h"

namespace widen {

/// HBase's longest row key (Short.MAX_VALUE bytes).
inline constexpr size_t kMaxRowKeyBytes = 32767;

/// The bytes HBase counts for a cell besides row, family, qualifier and
/// value when it checks hbase.server.keyvalue.maxsize (the region server,
/// PrivateCellUtil.estimatedSerializedSizeOf): the KeyValue's key length
/// (4), value length (4), row length (2), family length (1), timestamp (8)
/// and type (1), plus a 4-byte length prefix. The gateway's own check
/// (hbase.client.keyvalue.maxsize) counts 4 bytes fewer, so with equal
/// limits the region server's is the one that binds.
inline constexpr int64_t kCellOverheadBytes = 24;

/// hbase.server.keyvalue.maxsize and hbase.client.keyvalue.maxsize by default.
inline constexpr int64_t kHBaseMaxCellBytes = 10485760;

/// What a store takes beyond the rules every store shares.
struct CellLimits {
  /// The largest cell as HBase counts it (see above); 0 = no limit.
  int64_t max_cell_bytes = 0;
  /// Whether timestamps below 0 are taken (the embedded store's order
  /// holds them; HBase refuses them).
  bool negative_timestamps = true;
};

class CellChecker {
 public:
  /// Checks cells of `table` (its name and family names are copied) against
  /// `limits`.
  CellChecker(const TableDescriptor& table, const CellLimits& limits);

  /// OK, or InvalidArgument naming the table, row and rule (see above).
  Status Check(const CellView& cell);

  /// Checks every cell of `batch`; the first refusal.
  Status CheckBatch(const CellBatch& batch);

 private:
  std::string table_;                  // full name, for messages
  std::vector<std::string> families_;  // the table's family names
  std::string family_names_;           // "d, a", for messages
  CellLimits limits_;
  std::string last_family_;  // the last family found in families_
  bool has_last_ = false;
};

}  // namespace widen
