// StateStore: the durable TableState (store/table_state.h) of every target
// table of one store, beside the tables' cells: in the embedded store under
// its own key tag (store/leveldb_store.h), in HBase as one row per table of
// a state table (store/hbase_store.h). Both keep the same bytes per table —
// the state value:
//
//   +------------------+---------------------------------------------+
//   | version (u64 BE) | state record (table_state.h), or nothing:   |
//   |                  | a tombstone, left by Delete                 |
//   +------------------+---------------------------------------------+
//
// Every change is a compare-and-set on the version: Put and Delete name the
// version they read (Get, List) and write version + 1; when the stored
// version is another one — some other writer changed the state since — they
// change nothing and return Aborted, and the caller reads again and decides.
// Of two writers that read the same version, exactly one wins. Versions only
// grow (a Delete leaves a tombstone that keeps its version), so a version
// never comes back. The embedded store takes it under a mutex shared by
// every StateStore of the open store and the store's single-process lock;
// HBase takes it with checkAndMutate on the state row.
//
// The order that makes a state honest is the caller's: a state that says
// cells are in the table (TableStatus::kComplete, a watermark, a finished
// range) is Put only after CellSink::Sync (or Close) of the sinks that wrote
// those cells returned OK.
//
// Tables are named as TableDescriptor::FullName names them: "ns:table", or
// "table" in the default namespace ("default:table" is the same table); the
// name is the state's key (CanonicalTableName, common/table_descriptor.h).
// A table with no state recorded (written by a widen before state existed,
// or never loaded) has an unknown state: Get returns nullopt.
//
// Thread safety: a StateStore may be shared by threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "store/table_state.h"

namespace widen {

/// The exclusive right of one run to write a table's rows (StateStore::
/// LockTable), held until the object is destroyed, which gives it up.
/// Thread safety: status() may be called from any thread.
class TableLock {
 public:
  virtual ~TableLock() = default;
  /// OK while this run holds the lock; Aborted once it was lost (it could
  /// not be renewed in time and another run took it): the run must record
  /// nothing as done.
  virtual Status status() const = 0;
};

class StateStore {
 public:
  virtual ~StateStore() = default;

  /// Takes the lock of `table` for this process: while it is held, another
  /// LockTable of the table (from any process or machine) returns Aborted
  /// naming the holder. A holder that died (kill -9) gives it up: at once
  /// for a process of this machine, within the lease time for one of
  /// another. The default returns a lock that does nothing, for a store that
  /// one process at a time can open (the embedded store); HBase keeps the
  /// lock in the state table (store/hbase_store.h). Unavailable when the
  /// store cannot be reached.
  virtual Result<std::unique_ptr<TableLock>> LockTable(const std::string& table);

  /// Takes the lock of shard `index` of `count` (1 <= index <= count) of a
  /// sharded load of `table` (migrate --shard): the shards of one load hold
  /// theirs at once, while a second run of the same shard, and LockTable of
  /// the table, return Aborted naming the holder as long as it is held; and
  /// this returns Aborted while another run holds the table's LockTable.
  /// The default, for a store one process at a time opens, does nothing.
  virtual Result<std::unique_ptr<TableLock>> LockShard(const std::string& table, int index,
                                                       int count);

  /// OK when no live run holds the lock of `table` (LockTable) or of a
  /// shard of it (LockShard); Aborted naming the holder (process, host,
  /// since when) when one does: the table is being written right now.
  /// Takes no lock. The default, for a store one process at a time opens,
  /// returns OK. Unavailable when the store cannot be reached.
  virtual Status CheckNotBeingWritten(const std::string& table);

  /// The state of `table` with its version set, or nullopt when none is
  /// recorded (or it was deleted). DataLoss for a malformed record;
  /// FailedPrecondition for a record of a newer format; Unavailable when
  /// the store cannot be reached, LocalIo when its local files cannot be
  /// read.
  virtual Result<std::optional<TableState>> Get(const std::string& table) = 0;

  /// Records `state` (its `version` field is ignored) for `table` if the
  /// stored version is `expected_version` — nullopt: if no state is recorded
  /// (none ever, or a tombstone). Returns the new version (the old + 1; 1
  /// for the first state of a table). Aborted, changing nothing, when the
  /// stored state is another one; InvalidArgument for a state that cannot
  /// be encoded (EncodeTableState). The state is durable when Put returns.
  virtual Result<uint64_t> Put(const std::string& table, std::optional<uint64_t> expected_version,
                               const TableState& state) = 0;

  /// Removes the state of `table` if it is at `expected_version` (a
  /// tombstone keeps the version). Aborted when it is another version or
  /// none is recorded.
  virtual Status Delete(const std::string& table, uint64_t expected_version) = 0;

  /// Every recorded state (tombstones left out), ordered by table name,
  /// each with its version set.
  virtual Result<std::vector<std::pair<std::string, TableState>>> List() = 0;
};

/// The state value of a record (layout above): `version` then `record`
/// (empty: a tombstone).
std::string EncodeStateValue(uint64_t version, std::string_view record);

/// Splits a state value into its version and record (empty for a
/// tombstone). False when `value` is shorter than 8 bytes.
bool DecodeStateValue(std::string_view value, uint64_t* version, std::string_view* record);

}  // namespace widen
