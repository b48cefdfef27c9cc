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
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/cell.h"
#include "common/cell_sink.h"
#include "common/status.h"
#include "common/table_descriptor.h"
#include "store/state_store.h"

namespace widen {

/// HBase: putMultiple requests in flight per sink by default, and at most.
inline constexpr int kDefaultWriters = 4;
inline constexpr int kMaxWriters = 64;
/// HBase: a request holds at most this many cells and bytes (row + family +
/// qualifier + value) by default.
inline constexpr size_t kDefaultRequestCells = 10000;
inline constexpr size_t kDefaultRequestBytes = 4 << 20;

struct StoreOptions {
  size_t batch_bytes = 4 << 20;  // sink flush threshold, bytes
  /// Create the embedded store's directory when missing (false: NotFound).
  bool create_if_missing = true;
  /// Embedded store: a sink into a table that holds no cell writes cells
  /// that come in key order straight into LevelDB table files, added to
  /// the database at each Flush (docs/format.md, "Table files written
  /// directly"); false: every cell through LevelDB's write-ahead log and
  /// memtable (what the benchmark's store limit measures).
  bool write_table_files = true;
  /// HBase only (the embedded store writes in-process): requests in flight
  /// per sink, each on its own connection to the gateway (1 to
  /// kMaxWriters), and the bounds of one request.
  int writers = kDefaultWriters;
  size_t request_cells = kDefaultRequestCells;
  size_t request_bytes = kDefaultRequestBytes;
};

/// Rows of one table with the digest of what widen last wrote into each
/// (Store::NewDigestReader), in row key order (unsigned bytes). row() and
/// digest() are views valid until Next(). Errors are sticky in status().
class RowDigestReader {
 public:
  virtual ~RowDigestReader() = default;
  virtual bool Valid() const = 0;
  /// REQUIRES: Valid().
  virtual void Next() = 0;
  virtual std::string_view row() const = 0;
  /// The recorded digests (store/row_sync.h): RowDigest then RowKeysDigest,
  /// 32 bytes; 16 (RowDigest alone) as an older widen recorded them; empty
  /// when none is known.
  virtual std::string_view digest() const = 0;
  virtual Status status() const = 0;
};

/// What a RowWriter changed.
struct RowWriterStats {
  uint64_t rows_written = 0;   // rows replaced or added (ReplaceRow with cells)
  uint64_t rows_deleted = 0;   // rows removed (ReplaceRow without cells, of a row that held some)
  uint64_t cells_put = 0;      // cells written
  uint64_t cells_deleted = 0;  // stored cells removed (every version counts)
  uint64_t bytes_put = 0;      // key and value bytes of the cells written
};

/// Replaces whole rows of one table: what sync writes. After a crash each
/// replaced row is as it was, with its digest, or as it is after the
/// ReplaceRow, with its digest, or listed by the store's digest readers with
/// an empty digest (so that the next sync writes it again). In the embedded
/// store each ReplaceRow is also atomic for readers; in HBase a reader may
/// see part of a row's change (store/hbase_store.h). Used by one thread.
class RowWriter {
 public:
  virtual ~RowWriter() = default;
  /// Makes `row` hold exactly `cells` — every cell it held before, of
  /// every family and version, is removed (physically, no delete marker) —
  /// and records `digest` for it (empty: removes the row's digest). `cells`
  /// are all of row `row`, sorted in HBase cell order, with no two of equal
  /// coordinates; empty removes the row. Each cell is checked like a sink's
  /// (common/cell_check.h). Not durable until Sync. `same_keys`: the caller
  /// knows the row holds cells of exactly the coordinates of `cells` (its
  /// recorded key digest says so), so the writer may put them over the old
  /// ones without reading the row.
  virtual Status ReplaceRow(std::string_view row, const CellBatch& cells, std::string_view digest,
                            bool same_keys = false) = 0;
  /// Makes every change so far durable (as CellSink::Sync).
  virtual Status Sync() = 0;
  /// What the writer changed; whole after Flush or Sync (a store may learn
  /// what a replaced row held only when it writes the row).
  virtual const RowWriterStats& stats() const = 0;

  /// The table's sync index (cmd/watermark_sync.h): entries of opaque key
  /// and value bytes that widen sync keeps beside the rows. Puts, deletes
  /// and row replacements take effect in the order they are called: after
  /// a crash the store holds the effect of some prefix of them. Not durable
  /// until Sync; Store::ScanIndex sees them after Flush. The default
  /// returns FailedPrecondition.
  virtual Status PutIndex(std::string_view key, std::string_view value);
  virtual Status DeleteIndex(std::string_view key);
  /// Removes every entry of the table's sync index (in order, as above).
  virtual Status ClearIndex();
  /// Makes what was written so far visible to readers (Store::ScanIndex,
  /// NewDigestReaderOf); not durable. The default does nothing.
  virtual Status Flush();

  /// For a pass that writes every row of the table anew and trusts none of
  /// its recorded digests or index entries until it has ended (its table
  /// state records them complete only then, and a run after a crash reads
  /// the rows from their cells and writes the index anew): from here on
  /// the writer may hold the rows' digests and the index's puts and deletes
  /// back and write them after row replacements that follow them, each
  /// kind (digests; index entries by their first byte) in key order apart
  /// from the rest, so that the embedded store's table files each hold one
  /// kind and LevelDB moves them down without rewriting them. Flush and Sync
  /// write everything held back first. The default does nothing.
  virtual void DeferDigestsAndIndex() {}
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
  /// scheme; Unavailable when the target cannot be reached; LocalIo when
  /// an embedded store's files cannot be written or read; Aborted when the
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
  /// The largest cell the store takes, as HBase counts it (row + family +
  /// qualifier + value + kCellOverheadBytes); 0 = any size (the default).
  /// Runs reject a row with a larger cell before it reaches a sink.
  virtual int64_t max_cell_bytes() const { return 0; }
  virtual Result<std::unique_ptr<CellReader>> NewReader(const std::string& full_name,
                                                        const ReadOptions& options) = 0;
  /// The state of this store's tables. Does no I/O; may outlive the store.
  virtual Result<std::unique_ptr<StateStore>> NewStateStore() = 0;

  /// Whether NewDigestReader and NewRowWriter work on this store (widen
  /// sync can write to it). False by default.
  virtual bool SupportsRowSync() const { return false; }

  /// The rows of `full_name` (which must exist) with the digest widen
  /// recorded for each when it last wrote the row through a RowWriter, in
  /// row key order. With `from_cells`, the rows are those the table's cells
  /// hold (each once, digest empty: unknown) — for a table whose rows were
  /// written without digests. FailedPrecondition from a store that cannot
  /// sync (the default).
  virtual Result<std::unique_ptr<RowDigestReader>> NewDigestReader(const std::string& full_name,
                                                                   bool from_cells);
  /// A writer of whole rows of `full_name` (which must exist), for sync.
  /// FailedPrecondition from a store that cannot sync (the default).
  virtual Result<std::unique_ptr<RowWriter>> NewRowWriter(const std::string& full_name);

  /// The rows among `rows` (sorted by unsigned bytes, distinct) that have a
  /// recorded digest, each with it, in row key order: the stored side of a
  /// sync of those rows only. FailedPrecondition from a store that cannot
  /// sync (the default).
  virtual Result<std::unique_ptr<RowDigestReader>> NewDigestReaderOf(const std::string& full_name,
                                                                     std::vector<std::string> rows);

  /// Calls `fn` with each entry of the sync index of `full_name` whose key
  /// starts with one of `prefixes`, prefix by prefix in the order given and
  /// in key order (unsigned bytes) under each, with the prefix's index,
  /// until it returns false; an entry under two prefixes comes once for
  /// each. One read of the store for them all: give the prefixes sorted
  /// for the fewest blocks read. The views are valid during the call only.
  /// Sees what a RowWriter flushed. FailedPrecondition from a store that
  /// cannot sync (the default); the store's read errors.
  virtual Status ScanIndex(
      const std::string& full_name, const std::vector<std::string>& prefixes,
      const std::function<bool(size_t prefix, std::string_view key, std::string_view value)>& fn);
  /// ScanIndex of one prefix.
  Status ScanIndex(const std::string& full_name, std::string_view prefix,
                   const std::function<bool(std::string_view key, std::string_view value)>& fn);
};

}  // namespace widen
