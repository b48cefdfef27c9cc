// ReadRules: HBase's read rules applied to a stream of cells — which of a
// table's cells a read (a Scan or Get with max_versions) returns: delete
// markers hide what they mask and are never returned, each column keeps its
// family's VERSIONS newest versions, and versions older than the family's
// TTL are dropped (but MIN_VERSIONS of them always stay). The rules of the
// embedded store's reader (store/leveldb_store.cc), for cells that were
// never written: `widen verify` filters the cells a mapping gives through
// them, so that they compare with what the store's reader returns.
//
// Thread safety: one filter per stream, used by one thread.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/cell.h"
#include "common/table_descriptor.h"

namespace widen {

class ReadRules {
 public:
  /// The rules of `families` for a read of up to `max_versions` versions
  /// per column at clock `now_ms` (ms since the epoch; TTL is measured from
  /// it).
  ReadRules(const std::vector<FamilyDescriptor>& families, int max_versions, int64_t now_ms);
  ReadRules(const ReadRules&) = delete;
  ReadRules& operator=(const ReadRules&) = delete;

  /// Whether a read returns `cell`, given the cells passed before it.
  /// REQUIRES: cells of one table passed in HBase cell order, no two with
  /// equal coordinates (row, family, qualifier, timestamp, type). Delete
  /// markers, and cells of a family the rules do not know, are never
  /// returned.
  bool Returns(const CellView& cell);

 private:
  struct Family {
    std::string name;
    int max_versions;   // min(max_versions, VERSIONS)
    int min_versions;   // MIN_VERSIONS: kept even when older than oldest_ms
    int64_t oldest_ms;  // versions older than this have expired (TTL)
  };

  std::vector<Family> families_;
  // The current row, family and column, and what masks their cells.
  std::string row_, qualifier_;
  const Family* family_ = nullptr;
  bool have_row_ = false;
  bool family_deleted_ = false;
  int64_t family_delete_ms_ = 0;
  bool column_deleted_ = false;
  int64_t column_delete_ms_ = 0;
  bool version_deleted_ = false;
  int64_t version_delete_ms_ = 0;
  int versions_seen_ = 0;
};

}  // namespace widen
