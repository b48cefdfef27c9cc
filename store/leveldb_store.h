// LevelDbStore: the embedded store — every table of a store in ONE LevelDB
// database (one directory), ordered by LevelDB's default bytewise comparator,
// with keys laid out so that byte order is HBase's cell order. Reads apply
// HBase's semantics: delete markers, each family's VERSIONS, TTL and
// MIN_VERSIONS.
//
// Thread safety: a LevelDbStore may be shared by threads (CreateTable is
// serialised inside); each sink and reader it hands out is used by one thread
// at a time. A sink adding table files (NewSink) waits for the readers and
// calls of other threads to end, at most 10 s, then writes its cells
// through LevelDB's write path instead (as it does, after the wait, when
// its own thread holds a reader of the store). Sinks and readers share ownership of the database,
// so they may outlive the store: the database closes when the store and all of them are gone.
//
// Persisted layout, store format version 1. NEVER CHANGE IT; bump the format
// version instead (and keep reading version 1). All integers big-endian.
//
//   store header   key:   +------+-----+-----+-----+-----+-----+-----+
//                         | 0x00 | 'f' | 'o' | 'r' | 'm' | 'a' | 't' |
//                         +------+-----+-----+-----+-----+-----+-----+
//                  value: +------+
//                         | 0x01 |  format version (1 byte)
//                         +------+
//
//   table meta     key:   +------+------------------+
//                         | 0x01 | full table name  |  "ns:table", or "table" in
//                         +------+------------------+  the default namespace
//                  value: EncodeTableDescriptor(): JSON text with "format": 1
//
//   table state    key:   +------+------------------+
//                         | 0x03 | full table name  |
//                         +------+------------------+
//                  value: +------------------+---------------------------------+
//                         | version (u64 BE) | state record (store/table_state.h),
//                         |                  | or nothing: a tombstone         |
//                         +------------------+---------------------------------+
//
//   row digest     key:   +------+-----------+------+-----------------------+
//                         | 0x04 | full name | 0x00 | row key, as it is     |
//                         +------+-----------+------+-----------------------+
//                  value: the row's digest (16 bytes, store/row_sync.h), written
//                         by sync in the same atomic batch as the row's cells
//
//   cell           key:
//     +------+-----------+------+----------+-----------+--------+------+
//     | 0x02 | full name | 0x00 | ESC(row) | 0x00 0x01 | family | 0x00 |  ...
//     +------+-----------+------+----------+-----------+--------+------+
//        +----------------+-----------+-----------------+---------------+
//     ...| ESC(qualifier) | 0x00 0x01 | timestamp (8 B) | 0xFF - type   |
//        +----------------+-----------+-----------------+---------------+
//                  value: the cell's value bytes, as they are
//
//   ESC(x):     x with every 0x00 byte written as 0x00 0xFF. The terminator
//               0x00 0x01 sorts below an escaped 0x00 (0x00 0xFF) and below
//               every other byte, so a row (qualifier) sorts before every
//               longer one it is a prefix of.
//   timestamp:  ~(uint64(timestamp_ms) ^ 0x8000000000000000): sign bit flipped
//               (negatives below positives), then every bit inverted (newest
//               first).
//   type:       0xFF - HBase KeyValue.Type code (Put 4, Delete 8,
//               DeleteColumn 12, DeleteFamily 14): higher codes first, so a
//               delete marker precedes the put it masks at the same timestamp.
//   Table names never contain 0x00 and families are printable ASCII, so the
//   bytewise order of cell keys is: table, row ascending (unsigned bytes),
//   family ascending, qualifier ascending, timestamp descending, type
//   descending — HBase's CellComparator order.
//
// A header with another version is refused with FailedPrecondition; a store
// without its header is damaged (DataLoss). No key starts with 0xFF.
//
// Beside LevelDB's files the directory holds widen's marker WIDEN_STORE
// with the store's seal (store/leveldb_marker_internal.h); a directory
// without it is never opened. A store is created atomically
// (store/leveldb_create_internal.h). Damage is never served: LevelDB runs
// with paranoid checks and verified reads, the seal is checked on open, and
// any damage found is DataLoss naming the file, with nothing deleted or
// rewritten (docs/format.md, "Damage").
//
// The table state keys (tag 0x03) and row digest keys (tag 0x04) came after
// format 1 was first written,
// without a version bump: a format 1 store without them opens as before
// (every table's state is unknown: StateStore::Get gives nullopt), and a
// reader that knows only tags 0x00 to 0x02 never reads past the keys it
// looks for (table meta keys are listed from 0x01 while the tag is 0x01;
// cells are read by table prefix), so it still reads a store that has them.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/cell_sink.h"
#include "common/status.h"
#include "common/table_descriptor.h"
#include "store/state_store.h"
#include "store/store.h"

namespace leveldb {
class Env;
}  // namespace leveldb

namespace widen {

namespace leveldb_store_internal {
struct Database;  // the open leveldb::DB and its block cache (leveldb_store.cc)
}  // namespace leveldb_store_internal

class LevelDbStore final : public Store {
 public:
  /// Opens (or, with options.create_if_missing, creates) the store in
  /// directory `path`. A new store is created atomically in a sibling
  /// directory and renamed onto `path` (a missing or empty directory).
  /// Errors: NotFound when there is no store and create_if_missing is false;
  /// FailedPrecondition when the directory is not empty and not a widen
  /// store, or the store is not of format 1; Aborted when another process
  /// (or another open in this process) has the store open — also when it is
  /// creating it at this moment; DataLoss, naming the file, when a file of
  /// the store is damaged (nothing is deleted or repaired: the next open
  /// reports it again); LocalIo, naming the file and the reason, when a
  /// file or directory cannot be written or read (a full disk, no
  /// permission, a read-only file system). Every later call (a sink's
  /// write, a state record) also gives LocalIo for such an I/O error.
  /// The store is sealed when the last of it, its sinks and readers goes.
  /// `env` (borrowed, may be null: LevelDB's default) is the leveldb::Env
  /// the database does its file I/O through; it must outlive the store and
  /// every sink, reader and StateStore from it (tests pass one that
  /// simulates a crash).
  static Result<std::unique_ptr<LevelDbStore>> Open(const std::string& path,
                                                    const StoreOptions& options,
                                                    leveldb::Env* env = nullptr);

  LevelDbStore(const LevelDbStore&) = delete;
  LevelDbStore& operator=(const LevelDbStore&) = delete;
  /// Releases the store's share of the database (see Close).
  ~LevelDbStore() override;

  /// Releases the store's share of the database; the database closes once
  /// no sink or reader from this store remains. Later calls on the store
  /// return FailedPrecondition. REQUIRES: no concurrent call on the store.
  Status Close();

  /// Validates `descriptor` and records it. If the table exists, OK when its
  /// families and their options are the same (split points are not compared),
  /// else FailedPrecondition naming the first difference.
  Status CreateTable(const TableDescriptor& descriptor) override;
  /// `full_name` is "ns:table" or "table" (default namespace; "default:table"
  /// is the same table). NotFound if the table does not exist; DataLoss if
  /// its descriptor cannot be decoded.
  Result<TableDescriptor> DescribeTable(const std::string& full_name) override;
  Status SetTableMetadata(const std::string& full_name, const std::string& key,
                          const std::string& value) override;
  /// Every table, ordered by full name.
  Result<std::vector<TableDescriptor>> ListTables() override;
  /// A sink for the table's cells. Into a table that holds no cell, with
  /// options.write_table_files, cells that come in key order are written
  /// into LevelDB table files directly and added to the database at each
  /// Flush, readable and durable (docs/format.md, "Table files written
  /// directly"); the database is closed and opened again for that, after
  /// waiting (at most 10 s) for readers other threads hold. Otherwise
  /// batches of options.batch_bytes are written as one LevelDB write batch,
  /// not synced (Flush: readable, not durable). Sync (and Close) make every
  /// cell the sink wrote durable: LevelDB writes its memtable out to a
  /// synced table file, then the log is synced — a synced log write alone
  /// would leave the cells of a log LevelDB switched away from (closed
  /// unsynced) at risk. Destroying the sink without Close
  /// drops cells not yet flushed. NotFound for an unknown table. Every cell
  /// is checked (common/cell_check.h: the table's families, row keys of 1 to
  /// 32767 bytes, known types, a DeleteFamily marker without qualifier; any
  /// size and timestamp are taken): Put/Flush/Sync/Close return
  /// InvalidArgument for a refused cell, and the whole batch holding it is
  /// not written.
  Result<std::unique_ptr<CellSink>> NewSink(const std::string& full_name) override;
  /// A reader over the table's live cells (see CellReader), seeing the
  /// database as of this call. start_row, stop_row and row_prefix all apply
  /// (a row is read when it satisfies each one given). NotFound for an unknown table;
  /// InvalidArgument when options.max_versions < 1.
  Result<std::unique_ptr<CellReader>> NewReader(const std::string& full_name,
                                                const ReadOptions& options) override;

  /// The table states, under tag 0x03 of this database (see above). Put
  /// and Delete write synced; their compare-and-set holds under a mutex
  /// shared by every StateStore of this open store, and LevelDB's lock
  /// keeps other processes out of the store.
  Result<std::unique_ptr<StateStore>> NewStateStore() override;
  bool SupportsRowSync() const override { return true; }
  /// Digests under tag 0x04 (above); from_cells lists the cell keys' rows.
  Result<std::unique_ptr<RowDigestReader>> NewDigestReader(const std::string& full_name,
                                                           bool from_cells) override;
  /// Each ReplaceRow deletes the row's cell keys the new cells do not put
  /// again (read through one iterator, made anew after each write; not read
  /// with same_keys) and puts its new cells and digest key in one
  /// leveldb::WriteBatch (written when it holds about
  /// StoreOptions::batch_bytes): atomic per row.
  Result<std::unique_ptr<RowWriter>> NewRowWriter(const std::string& full_name) override;
  /// The rows' digest keys, sought in order through one iterator (a
  /// snapshot taken here: writes after it are not seen).
  Result<std::unique_ptr<RowDigestReader>> NewDigestReaderOf(
      const std::string& full_name, std::vector<std::string> rows) override;
  /// The entries under tag 0x05 (docs/format.md, "Sync index"), through one
  /// iterator.
  using Store::ScanIndex;
  Status ScanIndex(const std::string& full_name, const std::vector<std::string>& prefixes,
                   const std::function<bool(size_t prefix, std::string_view key,
                                            std::string_view value)>& fn) override;

  /// The store's directory.
  const std::string& path() const { return path_; }

 private:
  using Database = leveldb_store_internal::Database;

  /// Does no I/O: takes an open database.
  LevelDbStore(std::string path, std::shared_ptr<Database> db, const StoreOptions& options);

  Status CheckOpen() const;

  const std::string path_;
  std::shared_ptr<Database> db_;  // null once closed
  const StoreOptions options_;
  std::mutex create_mu_;  // serialises CreateTable's read-check-write
};

}  // namespace widen
