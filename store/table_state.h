// TableState: what widen records about one target table's load — its status,
// the run that wrote it, when, the mapping it was written with, and room for
// incremental sync (watermarks) and resumable jobs (finished ranges) — and
// the state record, the bytes a StateStore (store/state_store.h) keeps for it
// in the embedded store and in HBase alike.
//
// Persisted layout of the state record, record format version 1. NEVER
// CHANGE IT; bump kStateRecordVersion instead (and keep reading version 1).
// Integers are big-endian; i64 is two's complement.
//
//   record:
//     +------+--------+--------+------------+-------------+-------------+
//     | 0x01 | status | run_id | started_ms | finished_ms | fingerprint | ...
//     | u8   | u8     | str    | i64        | i64         | str         |
//     +------+--------+--------+------------+-------------+-------------+
//        +-----------------+----------------------+------------------------+
//     ...| watermarks      | finished ranges      | extensions             |
//        | u32 n, n x mark | u32 n, n x range     | u32 n, n x (str, str)  |
//        +-----------------+----------------------+------------------------+
//
//   str:    u32 length, then the bytes
//   mark:   str source table | u32 n, n x str column | tuple values
//   range:  str source table | u32 n, n x str column | u8 flags | tuple lo | tuple hi
//           flags: 0x01 lo is set, 0x02 hi is set, 0x04 with_null
//   tuple:  u32 n, n x value
//   value:  u8 type code | u8 0x00 (NULL) or 0x01 (a value) | payload when not NULL:
//             bool 1, int 2, date 8, time 9, timestamp 10, timestamptz 11:  i64
//             uint 3:                                                     u64
//             float 4:                                                    u64 IEEE-754 bits
//             decimal 5, text 6, bytes 7, json 12, other 13:              str
//   status: loading 1, complete 2, failed 3
//
// Every code above is persisted: never renumber one. A record whose first
// byte is another version decodes to FailedPrecondition (written by a newer
// widen); a malformed record (cut short, an unknown code, bytes left over)
// to DataLoss.
//
// Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/value.h"

namespace widen {

/// The first byte of every state record.
inline constexpr uint8_t kStateRecordVersion = 0x01;

/// Where a table's load stands. The codes are persisted: never renumber.
enum class TableStatus : uint8_t {
  kLoading = 1,   // a run is writing the table (or died writing it)
  kComplete = 2,  // the last run finished and its cells are durable
  kFailed = 3,    // the last run stopped on an error
};

/// "loading", "complete", "failed".
std::string_view TableStatusName(TableStatus status);

/// How far a sync has read one source table: the highest tuple of its
/// watermark columns (`updated_at, id`) whose rows are in the target.
struct Watermark {
  std::string source_table;          // as the mapping names it ("public.orders")
  std::vector<std::string> columns;  // the watermark columns, in tuple order
  std::vector<Value> values;         // one per column (NULLs allowed)
};

/// A range of source rows a resumable job has finished: the rows whose
/// `columns` tuple t has lo <= t < hi (an unset bound is open; with
/// `with_null`, rows whose columns are NULL belong to it too).
struct FinishedRange {
  std::string source_table;
  std::vector<std::string> columns;
  bool has_lo = false;
  std::vector<Value> lo;  // inclusive, one per column (when has_lo)
  bool has_hi = false;
  std::vector<Value> hi;  // exclusive, one per column (when has_hi)
  bool with_null = false;
};

/// What is recorded about one target table.
struct TableState {
  TableStatus status = TableStatus::kLoading;
  std::string run_id;       // the run that wrote this state (any text)
  int64_t started_ms = 0;   // when that run started on the table, ms since the epoch
  int64_t finished_ms = 0;  // when it finished (0: it has not)
  /// A digest of the mapping the table was written with (raw bytes; shown
  /// as hex): a run with another mapping knows the table's layout changed.
  std::string mapping_fingerprint;
  std::vector<Watermark> watermarks;
  std::vector<FinishedRange> finished_ranges;
  /// Opaque entries (name -> bytes) for later features; kept as they are.
  std::map<std::string, std::string> extensions;

  /// Not part of the record: the version the StateStore holds it at, set by
  /// StateStore::Get and List, for the next Put's compare-and-set.
  uint64_t version = 0;
};

/// Table state extensions (TableState::extensions) widen keeps. The cell
/// timestamp (ms, decimal text) a table was loaded with when its mapping
/// gives none (no --timestamp-ms, no `timestamp_ms`): sync writes re-written
/// rows with it, so the table stays what one migrate writes.
inline constexpr char kLoadTimestampExtension[] = "widen.timestamp_ms";
/// "complete" once a sync finished the table: every row has its digest
/// (store/row_sync.h). Absent (a migrate wrote the table last, or a repair
/// may have lost cells): the next sync compares against the rows the cells
/// hold and rewrites every one.
inline constexpr char kDigestsExtension[] = "widen.digests";
/// "complete" once a sync in watermark mode finished a full pass of the
/// table: its sync index (cmd/watermark_sync.h) names every row's source
/// rows, and TableState::watermarks hold where each source table's changes
/// were read up to. Absent (a migrate, a digest-mode sync or a repair wrote
/// the table last): the next watermark-mode sync makes a full pass.
inline constexpr char kSyncIndexExtension[] = "widen.sync_index";

/// The state record of `state` (layout above; `version` is not written).
/// InvalidArgument when a watermark or range has a tuple whose size is not
/// its number of columns.
Result<std::string> EncodeTableState(const TableState& state);

/// Decodes a state record. FailedPrecondition for another record version;
/// DataLoss for malformed bytes. `version` of the result is 0.
Result<TableState> DecodeTableState(std::string_view record);

/// Appends `values` in the state record's `tuple` layout (docs/format.md,
/// "Table state"): self-delimiting, and equal tuples (same types, same
/// values) give equal bytes. Also the layout of the sync index's keys.
void AppendValueTuple(std::string* dst, const std::vector<Value>& values);

/// Reads one tuple from the front of *in and advances *in past it.
/// DataLoss for malformed bytes (*in is then left as it was).
Status ReadValueTuple(std::string_view* in, std::vector<Value>* values);

/// Lower-case hex of `bytes` ("0a1b"), to show a fingerprint.
std::string HexBytes(std::string_view bytes);

}  // namespace widen
