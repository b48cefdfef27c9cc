// What the HBase store's sync support (store/hbase_row_sync.cc) and table
// locks (store/hbase_lock.cc) share with store/hbase_store.cc. The layouts
// are drawn in docs/format.md, "HBase".
//
// Thread safety: the functions are safe to call from any thread; a lock's
// status() too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "store/hbase_client_internal.h"
#include "store/state_store.h"

namespace widen {
namespace hbase_internal {

/// The column family descriptor value that makes a delete marker mask only
/// the puts written before it (HBase's NEW_VERSION_BEHAVIOR, HBASE-15968):
/// set to "true" on every family of the tables widen creates.
inline constexpr std::string_view kNewVersionBehavior = "NEW_VERSION_BEHAVIOR";

/// Takes the lock of target table `table` (a full name): a lease in the
/// cell s:l of the table's row in `state_table` (which must exist), taken
/// with checkAndMutate when it is free, released, expired, or held by a
/// process of this machine that is gone, and renewed by a thread every
/// third of `lease_ms` through `conn` (owned). Aborted naming the holder
/// when another live process holds it; Unavailable when HBase cannot be
/// reached. `url` names HBase in messages.
Result<std::unique_ptr<TableLock>> LockTable(std::unique_ptr<HBaseConnection> conn,
                                             const std::string& url, const std::string& state_table,
                                             const std::string& table, int lease_ms);

/// Takes the lock of shard `index` of `count` of target table `table`'s
/// sharded load (migrate --shard): a lease like LockTable's in the row
/// LockRow(table, "shard I/N"), so that the shards of one load run together
/// while two runs of one shard do not. Errors as LockTable.
Result<std::unique_ptr<TableLock>> LockShard(std::unique_ptr<HBaseConnection> conn,
                                             const std::string& url, const std::string& state_table,
                                             const std::string& table, int index, int count,
                                             int lease_ms);

/// The state table row that holds a lease: `table` itself for the table's
/// lock, else `table`, 0x00 and `shard` ("shard 2/3"). Rows of the second
/// kind hold no state cell s:v, so StateStore::List does not see them.
std::string LockRow(const std::string& table, const std::string& shard);

/// OK when no live run holds a lease of `table` of the kind asked for:
/// with `shards`, the lease of any shard of it (one scan of the rows
/// LockRow(table, ...)); else the table's own lease. Aborted naming the
/// holder otherwise; DataLoss for a lease cell widen did not write;
/// Unavailable when HBase cannot be reached. Taken after a run's own lease,
/// so that of two runs that start at once at least one sees the other.
Status CheckNoLiveLease(HBaseConnection* conn, const std::string& url,
                        const std::string& state_table, const std::string& table, bool shards);

/// A checkAndMutate through `conn`: puts `value` in the cell
/// family:qualifier of `row` in `table` if the cell holds `expected`
/// (HBase's empty expected value matches a missing cell and an empty one).
/// True when it was put, false when the cell held something else. Not
/// idempotent, so a lost answer is settled by reading the cell: `value`
/// there means it was put; `expected` still there means it was not, and the
/// same request is sent again (a late first one then finds the cell changed
/// and is refused), up to 3 times, 100 and 200 ms apart, but only when
/// `expected` is not empty (a late request expecting a free cell would find
/// it free again); anything else, or Unavailable after the last try, is
/// returned as Unavailable. `value` must be one only this
/// caller writes (a lease or a state record with its own version), so that
/// finding it tells "put" from "someone else's". `what` names the request
/// in errors.
Result<bool> CheckAndPutCell(HBaseConnection* conn, const std::string& table,
                             const std::string& row, const std::string& family,
                             const std::string& qualifier, const std::string& expected,
                             const std::string& value, const std::string& what);

/// Who holds a lock: the lease cell's fields (docs/format.md, "HBase").
struct LockHolder {
  int64_t expires_ms = 0;  // ms since the epoch, the holder's clock
  int64_t taken_ms = 0;
  std::string host;     // gethostname()
  std::string boot_id;  // /proc/sys/kernel/random/boot_id
  std::string pid_ns;   // /proc/self/ns/pid ("pid:[4026531836]")
  uint64_t pid = 0;
  uint64_t start_ticks = 0;  // the process's start, clock ticks after boot (/proc/PID/stat)
};

/// The lease cell's value for `holder`: 0x01, then the fields above (i64
/// BE, and u32 BE length + bytes for the strings).
std::string EncodeLockHolder(const LockHolder& holder);
/// False for a value of another layout (an empty value is a free lock, not
/// a holder).
bool DecodeLockHolder(std::string_view value, LockHolder* holder);
/// This process as a holder whose lease runs `lease_ms` from `now_ms`.
LockHolder ThisProcess(int64_t now_ms, int lease_ms);
/// Whether `holder` may still be running at `now_ms`: a process of this
/// machine (same host, boot and pid namespace) while it runs; another one
/// until its lease expires.
bool HolderAlive(const LockHolder& holder, int64_t now_ms);

}  // namespace hbase_internal
}  // namespace widen
