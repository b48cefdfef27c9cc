// Sharded loads: `widen migrate --shard I/N`, N widen processes (on N
// machines) loading one HBase together, each the I-th of N disjoint ranges
// of every table's driving rows.
//
// The ranges are the --jobs ranges (transform/parallel.h): even slices of
// [min, max] of the table's split column, the first open below, the last
// open above and with the NULLs, so the N shards cover every row exactly
// once and their union is the cells of one run. Each process reads its own
// snapshot of the source. Every shard must cut at the same bounds and write
// the same cell timestamp, whenever it starts; so the first shard to reach a
// table lays the load out (reads min and max, picks the timestamp) and
// records that layout in the table's state, and the others adopt it.
//
// What the table state (store/table_state.h) holds during a sharded load:
//
//   extensions["widen.shards"]  the layout, JSON (EncodeShardLayout):
//       {"load": RUN_ID, "shards": N, "column": "alias.col", "min": LO,
//        "max": HI, "timestamp_ms": TS}
//     "column" empty: the table cannot be split (no integer split column,
//     no values, fewer values than shards); shard 1 loads it whole and the
//     others leave it alone.
//   finished_ranges  one FinishedRange per shard that finished, its range
//     of the split column (the whole table, no bounds and with_null, when
//     not split);
//   status  loading until every shard's range is among finished_ranges,
//     then complete; failed after a shard failed, until it runs again;
//   extensions["widen.timestamp_ms"]  the layout's timestamp, as for any
//     migrate.
//
// Every change is a compare-and-set of the state (StateStore::Put, HBase's
// checkAndMutate): of two shards that start a load at once one lays it out
// and the other, refused, reads it again and joins; two that finish at once
// both end up recorded. A shard run joins the unfinished load it finds; it
// starts a new load when none is recorded, when the last one finished (all
// N shards), or when a run without --shard wrote the state last. It refuses
// an unfinished load of another shard count, another mapping fingerprint or
// (when it gives one) another timestamp: the user finishes that load first
// (runs its missing shards) or loads the table anew without --shard.
//
// Thread safety: functions and value types; the StateStore given is used
// from the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/state_store.h"
#include "store/table_state.h"
#include "transform/parallel.h"
#include "transform/plan.h"

namespace widen {

/// The table state extension that holds a sharded load's layout.
inline constexpr char kShardsExtension[] = "widen.shards";
/// The largest N of --shard I/N.
inline constexpr int kMaxShards = 1024;

/// --shard I/N: this run is shard `index` (1 to `count`) of `count`.
struct ShardSpec {
  int index = 0;
  int count = 0;  // 0: not sharded
  bool active() const { return count > 0; }
};

/// Parses "I/N" (1 <= I <= N <= kMaxShards). InvalidArgument naming
/// --shard and what is wrong.
Result<ShardSpec> ParseShardSpec(std::string_view text);

/// How a table's sharded load is cut (see above).
struct ShardLayout {
  std::string load;    // the run id of the shard that laid it out
  int shards = 0;      // N
  std::string column;  // the split column ("alias.column"); empty: not split
  int64_t min = 0;     // [min, max] of the column the ranges are cut from
  int64_t max = 0;
  int64_t timestamp_ms = 0;  // every shard's cell timestamp
  std::string why_not;       // when not split: why (for the user)
};

/// The layout as recorded (JSON, above).
std::string EncodeShardLayout(const ShardLayout& layout);
/// DataLoss naming what is wrong when `text` is no layout EncodeShardLayout
/// wrote (not JSON, a field missing or of another type, shards out of range).
Result<ShardLayout> DecodeShardLayout(std::string_view text);

/// Lays a new load of `plan` out in `shards` shards: its split bounds from
/// `source` (ReadSplitBounds; not split when it has fewer values than
/// shards). `load` and `timestamp_ms` are the layout's. Errors: the
/// source's.
Result<ShardLayout> LayOutShards(const TablePlan& plan, Source* source, int shards,
                                 const std::string& load, int64_t timestamp_ms);

/// The ranges shard `shard` (1-based) of `layout` reads `plan` in, split
/// further into `jobs` ranges when the column has enough values (slices
/// (shard - 1) * jobs to shard * jobs - 1 of a cut into shards * jobs).
/// Empty ranges (no work) for shards above 1 of a table not split.
RowSplit ShardRows(const TablePlan& plan, const ShardLayout& layout, int shard, int jobs);

/// Shard `shard`'s (1-based) range as finished_ranges records it, reading
/// driving table `source_table` (as the mapping names it; "" for a query).
FinishedRange ShardRange(const ShardLayout& layout, const std::string& source_table, int shard);

/// The shards (1-based, ascending) whose ShardRange is among
/// `state.finished_ranges`.
std::vector<int> FinishedShards(const ShardLayout& layout, const std::string& source_table,
                                const TableState& state);

/// Why `table`, whose recorded `state` is not complete, is incomplete, for
/// the warnings of scan, get and verify: "it is being written by ... right
/// now" when a live run holds its lock or a shard's
/// (StateStore::CheckNotBeingWritten), else the shards of its sharded load
/// that have not finished ("shard 2/3 of sharded load L has not finished
/// ..."), else that the last run into it did not finish.
std::string IncompleteReason(StateStore* states, const std::string& table,
                             const std::optional<TableState>& state);

/// What JoinShardLoad decided for one table.
struct ShardJoin {
  ShardLayout layout;
  bool created = false;             // this run laid the load out
  TableState state;                 // the state as recorded (or read, when nothing was written)
  std::optional<uint64_t> version;  // its version
  std::vector<int> finished;        // shards finished when it was read
};

/// Joins the unfinished sharded load of `table` recorded in `states`, or
/// starts one (see above) with the layout `lay_out` returns, recording the
/// state as loading: `fresh` (status, run id, start, fingerprint, every
/// extension but the layout's) for a new load; for a join, the recorded
/// state with this run's id, status loading, unless `has_work` says this
/// shard has nothing to load there (a table not split, for shards above
/// 1): then nothing is written. `timestamp_ms`: the timestamp this run was
/// given (--timestamp-ms, the mapping's), checked against a joined load's.
/// Retries when another shard changed the state meanwhile (Aborted after a
/// few attempts). FailedPrecondition, writing nothing, for an unfinished
/// load that differs (shard count, fingerprint, timestamp), naming it and
/// what to do. The state store's errors.
Result<ShardJoin> JoinShardLoad(StateStore* states, const std::string& table,
                                const std::string& source_table, const ShardSpec& spec,
                                const TableState& fresh, std::optional<int64_t> timestamp_ms,
                                const std::function<Result<ShardLayout>()>& lay_out,
                                const std::function<bool(const ShardLayout&)>& has_work);

/// Records that shard `spec.index` of `join`'s load ended: finished (`ok`:
/// its range added to finished_ranges; status complete once every shard's
/// is there, finished_ms = `now_ms`) or failed (status failed). Returns the
/// state recorded, with `finished` the shards finished now. Retries when
/// another shard changed the state meanwhile. Aborted when the table's
/// state no longer holds this load (a run without --shard, or a new load,
/// replaced it): the cells are written, but not recorded as this load's.
Result<ShardJoin> FinishShard(StateStore* states, const std::string& table,
                              const std::string& source_table, const ShardSpec& spec,
                              const ShardJoin& join, bool ok, int64_t now_ms);

}  // namespace widen
