// SyncPlan: the mapping's `sync:` section resolved against the live source
// schema — for every source table the planned target tables read (driving,
// joined, nested), how `widen sync` finds its changes: digest mode (every
// row read and compared; the default), or watermark mode with its watermark
// column and kind, its tiebreak, lookback and deletes, checked and typed.
//
// SyncPlan::Make checks, for each watermark entry of a table read: the table
// is a table (not a view); the watermark column exists ("did you mean"), is a
// timestamp (timestamp, timestamptz, MySQL DATETIME or TIMESTAMP) or an
// integer (domains resolved) and NOT NULL; the tiebreak (the primary key by
// default) exists, is NOT NULL and of a type the database and widen order
// alike, and together with the watermark covers the primary key or a unique
// key; the lookback's unit suits the watermark (a duration for timestamps, a
// count for integers); the soft-delete column exists and its value parses
// for its type. Every error is InvalidArgument (NotFound for an unknown
// column) naming the mapping's file:line:col, the source table and column.
//
// `widen sync` runs a target table in watermark mode when every source
// table it reads is (cmd/watermark_sync.h), else in digest mode.
//
// Thread safety: immutable after Make; points into the Mapping it was made
// from, which must outlive it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/enum_names.h"
#include "common/status.h"
#include "common/value.h"
#include "extract/source.h"
#include "mapping/mapping.h"

namespace widen {

/// What a watermark column holds, as sync compares and records it.
enum class WatermarkKind {
  kTimestamp,  // "timestamp": timestamp without time zone, MySQL DATETIME (wall clock, no zone)
  kInstant,    // "instant": timestamptz, MySQL TIMESTAMP (microseconds since the epoch, UTC)
  kInteger,    // "integer": an ever-increasing integer
};

/// "timestamp", "instant", "integer".
const NameTable<WatermarkKind>& WatermarkKindNames();

/// How the changes of one source table are found.
struct SourceSync {
  std::string table;               // the source table, as the schema names it
  const SyncSpec* spec = nullptr;  // its `sync:` entry; nullptr: none (digest, the default)
  SyncMode mode = SyncMode::kDigest;

  // Watermark mode only.
  std::string watermark;       // the column
  std::string watermark_type;  // its declared type, e.g. "timestamp with time zone"
  WatermarkKind kind = WatermarkKind::kTimestamp;
  /// Orders the rows of one watermark value; with the watermark a key of
  /// the table. The entry's, else the primary key (tiebreak_is_primary_key).
  std::vector<std::string> tiebreak;
  bool tiebreak_is_primary_key = false;
  /// How far behind the last watermark a run reads again: microseconds for
  /// kTimestamp and kInstant, watermark values for kInteger; `lookback_given`
  /// false when it is the default (kDefaultLookbackMs/kDefaultLookbackValues).
  int64_t lookback_micros = 0;
  int64_t lookback_values = 0;
  bool lookback_given = false;
  /// A row whose soft_delete_column holds soft_delete_value (typed for the
  /// column) counts as deleted: every scan of a plan leaves it out
  /// (ScanSpec::exclude, filled by Plan::Make); soft_delete_column "" = no
  /// soft delete.
  std::string soft_delete_column;
  Value soft_delete_value;
  bool reconcile = false;  // hard deletes found by comparing primary keys
};

/// The sync mode of every source table a plan reads.
struct SyncPlan {
  std::vector<SourceSync> tables;  // in order of first use

  /// The table's entry; nullptr when the plan does not read it.
  const SourceSync* Find(const std::string& table) const;

  /// Resolves `mapping.sync` for the source tables `read` (the tables the
  /// planned target tables read, e.g. ReadsOf(...).tables); entries of other
  /// tables are left alone (the loader checked they are read by some target
  /// table). REQUIRES: every name of `read` is a table or view of `schema`.
  /// Errors: see the header comment.
  static Result<SyncPlan> Make(const Mapping& mapping, const SourceSchema& schema,
                               std::span<const std::string> read);
};

}  // namespace widen
