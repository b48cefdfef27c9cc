// RepairLevelDbStore: recovers what can still be read of a damaged embedded
// store into a NEW store, and says what was lost. The damaged store is never
// changed: its files are copied beside the new path, LevelDB's RepairDB
// rebuilds the copy (every log record and table block whose checksum holds
// is kept; a damaged MANIFEST or CURRENT is rebuilt from the table files),
// and the copy is renamed onto the new path only once it reads back whole.
//
// What was lost cannot be counted exactly — a store keeps no count of its
// cells, and an unreadable block hides how many it held — so the report
// names each damaged file and what of it could not be read, and counts the
// rows and cells each table has after the repair. When anything could not
// be read, every table is marked as repaired (its `widen.state` metadata
// "repaired", its state record "failed" without watermarks or finished
// ranges), so that `scan` warns and a later run does not trust it: running
// `widen migrate` into the new store writes the lost cells again.
//
// Thread safety: one call at a time per store; the damaged store is locked
// (as an open store is) for the duration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace widen {

/// One table of the repaired store.
struct RepairedTable {
  std::string name;      // "ns:table"
  uint64_t rows = 0;     // rows with at least one live cell
  uint64_t cells = 0;    // live cells, every version its families keep
  bool marked = false;   // marked as repaired (some bytes of the store were unreadable)
  std::string previous;  // its `widen.state` before ("complete", "loading", "" when none)
};

/// What RepairLevelDbStore found and did.
struct RepairReport {
  /// Each damaged file of the old store and what of it could not be read.
  std::vector<std::string> damage;
  /// True when a log record or a table block could not be read: cells may
  /// be missing from the new store.
  bool lost_cells = false;
  /// Files RepairDB set aside in the new store's lost/ folder (kept for
  /// inspection; the new store does not read them).
  std::vector<std::string> set_aside;
  /// The repaired store's tables, ordered by name.
  std::vector<RepairedTable> tables;
  /// Tables whose cells survived but whose descriptor was lost (the new
  /// store cannot list or read them).
  std::vector<std::string> tables_without_descriptor;
  /// The store header was lost and written again.
  bool header_rewritten = false;
};

/// Repairs the store in directory `from` into directory `into`, which must
/// not exist or be empty (and is not `from` or inside it). FailedPrecondition
/// when `from` is not a widen store or `into` is not new; Aborted when
/// another process has `from` open; LocalIo on I/O errors (a full disk),
/// naming the file, leaving nothing at `into`; DataLoss when even the repaired
/// copy does not read back.
Result<RepairReport> RepairLevelDbStore(const std::string& from, const std::string& into);

}  // namespace widen
