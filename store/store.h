// Store: a wide-column target — the embedded LevelDB store or HBase through
// its Thrift2 gateway — opened from a URL:
//   leveldb:PATH          embedded store in directory PATH (created if missing)
//   hbase://HOST:PORT     HBase Thrift2 gateway
//
// A Store creates tables from TableDescriptors, hands out one CellSink per
// table for writing, CellReaders for scans and gets, and the StateStore that
// keeps its tables' load state (store/state_store.h).
//
// Thread safety: a Store may be shared by threads; each sink and reader is used
// by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/cell.h"
#include "common/cell_sink.h"
#include "common/status.h"
#include "common/table_descriptor.h"
#include "store/state_store.h"

namespace widen {

struct StoreOptions {
  size_t batch_bytes = 4 << 20;  // sink flush threshold, bytes
  /// Create the embedded store's directory when missing (false: NotFound).
  bool create_if_missing = true;
};

/// What a reader returns; HBase Scan/Get semantics.
struct ReadOptions {
  std::string start_row;    // inclusive; empty = first row
  std::string stop_row;     // exclusive; empty = to the end
  std::string row_prefix;   // only rows starting with these bytes
  uint64_t limit_rows = 0;  // 0 = no limit
  int max_versions = 1;     // versions per column returned (capped by the family's VERSIONS)
  int64_t now_ms = 0;       // clock for TTL; 0 = the system clock
};

/// Iterates the live cells of one table in HBase cell order, after applying
/// delete markers, each family's VERSIONS and TTL, and ReadOptions.
/// Errors are sticky in status(); cell() is a view valid until Next().
class CellReader {
 public:
  virtual ~CellReader() = default;
  virtual bool Valid() const = 0;
  /// REQUIRES: Valid().
  virtual void Next() = 0;
  /// REQUIRES: Valid().
  virtual CellView cell() const = 0;
  virtual Status status() const = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  /// Opens the store named by `url` (see above). InvalidArgument for an unknown
  /// scheme; Unavailable when the target cannot be reached; Aborted when the
  /// store is held by another process (retry once it is released).
  static Result<std::unique_ptr<Store>> Open(const std::string& url, const StoreOptions& options);

  /// Creates the table, or checks that an existing one has the same families
  /// (FailedPrecondition naming the difference otherwise).
  virtual Status CreateTable(const TableDescriptor& descriptor) = 0;
  /// NotFound if the table does not exist.
  virtual Result<TableDescriptor> DescribeTable(const std::string& full_name) = 0;
  /// Sets one metadata entry of an existing table's descriptor (HBase's
  /// table METADATA). Keys starting with "widen.state" are bookkeeping and
  /// are not compared by CreateTable. NotFound if the table does not exist.
  virtual Status SetTableMetadata(const std::string& full_name, const std::string& key,
                                  const std::string& value) = 0;
  virtual Result<std::vector<TableDescriptor>> ListTables() = 0;
  /// A sink for cells of `full_name` (which must exist). It checks every
  /// cell (common/cell_check.h) against the table and the store's limits.
  virtual Result<std::unique_ptr<CellSink>> NewSink(const std::string& full_name) = 0;
  virtual Result<std::unique_ptr<CellReader>> NewReader(const std::string& full_name,
                                                        const ReadOptions& options) = 0;
  /// The state of this store's tables. Does no I/O; may outlive the store.
  virtual Result<std::unique_ptr<StateStore>> NewStateStore() = 0;
};

}  // namespace widen
