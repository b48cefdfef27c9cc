// The run layer: what every widen command does between its options and its
// output, in one library (widen_run) that migrate, plan, lint and ddl call
// and sync and verify build on:
//
//   LoadDesign   mapping (file:line:col errors), --table, source URL, open
//                the source read-only, introspect, plan
//   LayOutJobs   --jobs: each table's ranges, the snapshot lock's scope (from
//                the plan: the tables its scans read), sibling connections,
//                and whether jobs spool to write in key order
//   Migrate      check every query, open the target, create the tables,
//                record each table's state (loading), run the jobs into the
//                sinks, record the state (complete) once the sinks are
//                synced, and return the figures the summary is made of
//   Verify       compare the target with what Migrate would write
//   PreviewDesign / LintDesign / DesignTables: plan, lint and ddl's work
//
// Nothing here prints: results and errors (Status, whose message names the
// mapping place, table, column or URL) go back to the command, which
// presents them. Progress is reported through callbacks.
//
// Thread safety: each call is independent; callbacks are called from one
// thread at a time (see RunJobs).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cmd/shard_load.h"
#include "cmd/watermark_sync.h"
#include "common/status.h"
#include "extract/source.h"
#include "mapping/mapping.h"
#include "store/row_sync.h"
#include "store/row_verify.h"
#include "store/store.h"
#include "transform/assembler.h"
#include "transform/draft.h"
#include "transform/key_anatomy.h"
#include "transform/lint.h"
#include "transform/parallel.h"
#include "transform/plan.h"
#include "transform/preview.h"
#include "transform/range_check.h"
#include "transform/split_points.h"

namespace widen {

/// A mapping with its open source and plan. Heap-held and immovable in use:
/// the plan points into the mapping.
struct Design {
  Mapping mapping;
  std::unique_ptr<Source> source;  // null when not opened
  SourceSchema schema;
  Plan plan;
  /// The plans of the tables asked for (all, or the one --table names), in
  /// mapping order; point into `plan`.
  std::vector<const TablePlan*> tables;
};

/// What LoadDesign reads.
struct DesignRequest {
  std::string mapping_path;
  std::string source_url;   // overrides the mapping's source when set
  std::string only_table;   // one target table (empty = all)
  int fetch_rows = 5000;    // rows per fetch (SourceOptions::fetch_rows)
  bool open_source = true;  // false: the mapping only (no source, schema or plan)
  bool make_plan = true;    // false: open and introspect, but do not plan
  /// Called with the loaded mapping before the source is opened (may be
  /// empty): a command's own checks of it (migrate: the target); its error
  /// is LoadDesign's.
  std::function<Status(Mapping&)> check_mapping;
};

/// Loads the mapping, checks --table (NotFound with "did you mean"), opens
/// the source read-only, introspects and plans. Errors: the mapping loader's
/// (InvalidArgument with file:line:col, NotFound), an unset ${VAR} in the
/// source URL, the source's (Unavailable, PermissionDenied, ...), the
/// planner's.
Result<std::unique_ptr<Design>> LoadDesign(const DesignRequest& request);

/// Runs Source::CheckScan on every query of `table` (driving and nested, at
/// any depth), naming the mapping place and table of the first that fails.
Status CheckScans(const TablePlan& table, Source* source);

/// How the jobs of a run are laid out: per table of Design::tables, its
/// split; the connections that read one snapshot. Owns the sibling sources.
struct JobLayout {
  std::vector<RowSplit> splits;  // one per Design::tables entry, same order
  /// The sources the jobs read, all on one snapshot: the design's own first,
  /// then the siblings. size() >= the widest split.
  std::vector<Source*> sources;
  std::vector<std::unique_ptr<Source>> siblings;
  /// What the snapshot lock had to cover (empty when no sibling was needed).
  SourceReads reads;
};

/// The cores a run may use, for SplitRows: WIDEN_CORES when set (a
/// positive integer), else the processors this process may run on
/// (sched_getaffinity, as nproc counts them). Errors: InvalidArgument
/// naming WIDEN_CORES and its value when it is set to anything else.
Result<int> UsableCores();

/// Lays out `jobs` parallel jobs per table (SplitRows, with UsableCores()), decides whether
/// jobs spool to keep the key order (RowSplit::in_key_order, from
/// KeyFollowsSplit), and opens as many sibling connections on one snapshot
/// as the widest split needs, telling the source which tables the plan reads
/// (ReadsOf) for the lock that lines the snapshots up. Cancelled when
/// `cancel` turned true while the lock was waited for. Errors: the
/// source's (PermissionDenied says what to grant).
Result<JobLayout> LayOutJobs(Design& design, int jobs, const std::atomic<bool>* cancel);

/// The second half of LayOutJobs: opens as many sibling connections on one
/// snapshot as the widest of layout->splits needs (none for one range) and
/// sets layout->sources, siblings and reads. Errors as LayOutJobs'.
Status OpenJobSources(Design& design, JobLayout* layout, const std::atomic<bool>* cancel);

/// A digest of what decides a target table's cells: its descriptor (families,
/// options, key layout), what its scans read (tables, joins, columns,
/// `where`, nest links, the rows a soft delete leaves out) and how each
/// column and nest is encoded. Equal for
/// equal designs, on either engine and whatever --fetch-rows; 16 raw bytes
/// (XXH3-128).
std::string TableFingerprint(const TablePlan& table);

/// What Migrate does, beyond the design.
struct MigrateRequest {
  DesignRequest design;
  std::string target_url;               // overrides the mapping's target when set
  std::string rejects_path;             // rejected rows as JSON lines (empty: a reject fails)
  std::optional<int64_t> timestamp_ms;  // cell timestamp (unset: the mapping's, else run start)
  int jobs = 1;                         // parallel jobs per table
  int writers = kDefaultWriters;        // HBase: requests in flight per table (StoreOptions)
  /// --shard I/N: load the I-th of N ranges of each table, together with
  /// N - 1 other runs (cmd/shard_load.h). Not with an embedded store.
  ShardSpec shard;
  const std::atomic<bool>* cancel = nullptr;  // turns true on Ctrl-C (may be null)
  /// Called with each table's running figures (from one thread at a time).
  std::function<void(const TableStats&)> progress;
  /// Called when a table's jobs ended (ok or not), before anything else is
  /// reported.
  std::function<void()> table_done;
};

/// What a migrate did.
struct MigrateResult {
  std::string run_id;  // recorded in each table's state
  /// The target written, its password masked (MaskUrl), and where it came
  /// from ("--target" or "the mapping's target"), for the summary.
  std::string target, target_from;
  std::vector<TableStats> tables;      // per table written, in mapping order
  std::vector<std::string> job_notes;  // how each table was split (--jobs)
  uint64_t rejected = 0;               // rows written to the rejects file
  std::string rejects_path;
};

/// The whole migrate: LoadDesign, CheckScans of every table before the
/// target is touched, LayOutJobs, open the rejects file (refusing the
/// mapping's own path or one inside the store), open the target, create (or
/// check) every table before any is written, record each table's state as
/// loading (StateStore), RunJobs per table, and record it complete once its
/// sinks are closed (synced). Errors stop the run and are returned: the
/// table stays loading (failed when its jobs failed), which `scan` warns
/// about. Cancelled (message: what was left incomplete and how many rows
/// were written) when `cancel` turned true. With request.shard: each table's
/// load is joined or laid out (JoinShardLoad, cmd/shard_load.h) before its
/// table is created, its jobs read this shard's range only (the source's
/// sibling connections open after that), cells get the load's timestamp,
/// and the end of each table is recorded with FinishShard (complete once
/// every shard finished; a note per table in job_notes). InvalidArgument
/// for an embedded (leveldb:) target; FailedPrecondition for an unfinished
/// load that differs.
Result<MigrateResult> Migrate(const MigrateRequest& request);

/// What Sync does, beyond the design.
struct SyncRequest {
  DesignRequest design;
  std::string target_url;               // overrides the mapping's target when set
  std::optional<int64_t> timestamp_ms;  // cell timestamp (see kLoadTimestampExtension)
  std::string rejects_path;             // rejected rows as JSON lines (empty: a reject fails)
  int jobs = 1;                         // parallel jobs per table
  /// Sync a table whose recorded mapping fingerprint is another one
  /// (TableFingerprint): without it, FailedPrecondition before anything is
  /// written.
  bool accept_mapping_change = false;
  /// Watermark mode: also find hard deletes, comparing the rows the sync
  /// index names with the source's (cmd/watermark_sync.h, step 4).
  bool reconcile = false;
  /// Watermark mode: a full pass even when watermarks are recorded.
  bool full = false;
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(const TableStats&)> progress;
  std::function<void()> table_done;
};

/// What a sync did to one target table.
struct TableSyncResult {
  std::string table;
  /// How changes were found: "digest" (every row compared), "full" (a
  /// watermark-mode table's full pass: every row compared, watermarks
  /// recorded) or "watermark" (the rows changed since the watermarks).
  std::string mode = "digest";
  std::string why;  // why a table is not in watermark mode ("" when it is)
  /// Watermark mode: what the user should know, one line each (a
  /// watermark that went back and made the run a full pass, infinity or
  /// zero-date watermarks).
  std::vector<std::string> notes;
  /// "detected" (every row compared), "reconciled" (--reconcile) or "not
  /// detected" (watermark mode without --reconcile: only soft deletes).
  std::string hard_deletes = "detected";
  TableStats read;          // source rows read and cells assembled
  RowSyncStats rows;        // rows left alone, written, removed
  ChangeSyncStats changes;  // watermark mode: what the change queries found
  /// Watermark mode: per source table, where the run read from (empty on
  /// the first pass) and what it recorded.
  std::vector<Watermark> watermarks_before, watermarks_after;
  int64_t timestamp_ms = 0;  // the timestamp re-written cells got (unless a version column's)
  double seconds = 0;
};

/// What a sync did.
struct SyncResult {
  std::string run_id;
  std::string target, target_from;  // as MigrateResult's
  uint64_t rejected = 0;            // rows written to the rejects file
  std::string rejects_path;
  std::vector<TableSyncResult> tables;
  double seconds = 0;
};

/// widen sync: brings each target table to what a migrate of the source
/// now writes, writing only the rows that changed: LoadDesign, CheckScans,
/// LayOutJobs, open the target, create missing tables, then per table
/// either digest mode (store/row_sync.h: assemble every row into an
/// external sort, SyncRows against the stored rows) — also the full pass
/// of a watermark-mode table, which writes its sync index — or, for a
/// watermark-mode table with its index and watermarks recorded, the rows
/// the changes since reach (cmd/watermark_sync.h); then Sync the writer and
/// record the table complete (with its digests complete, and its index and
/// the watermarks read in the snapshot); a table is recorded loading only
/// just before its first write. A table recorded with another mapping
/// fingerprint is refused (FailedPrecondition) unless
/// request.accept_mapping_change. The source is read in one snapshot. A run
/// stopped at any point (error, Ctrl-C, kill -9) leaves every row either as
/// it was or as it should be, and the next run converges. Errors as
/// Migrate; FailedPrecondition for a target that cannot sync (HBase, for
/// now).
Result<SyncResult> Sync(const SyncRequest& request);

/// What Verify does, beyond the design.
struct VerifyRequest {
  DesignRequest design;
  std::string target_url;  // overrides the mapping's target when set
  /// The cells' timestamp (unset: the mapping's timestamp_ms, else the one
  /// the table's state records it was loaded with, kLoadTimestampExtension).
  std::optional<int64_t> timestamp_ms;
  uint64_t sample_every = 1;  // compare the rows InVerifySample takes (1: every row)
  size_t max_listed = 10;     // rows named per kind and table
  int jobs = 1;               // parallel jobs per table (as migrate's)
  int64_t now_ms = 0;         // clock for TTL (0: the system clock)
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(const TableStats&)> progress;
  std::function<void()> table_done;
};

/// A row Verify names: its key as stored and decoded.
struct VerifiedRow {
  std::string row;  // the row key (bytes)
  /// The row key's parts, (name, text) in key order (KeyCodec::Decode);
  /// empty when the key does not have the mapping's layout.
  std::vector<std::pair<std::string, std::string>> key;
  /// The driving source row's primary key, (column, value), when the row
  /// key holds all of it (KeyCodec::DecodeRow); else empty.
  std::vector<std::pair<std::string, std::string>> source;
  uint64_t cells = 0;                    // see RowMismatch::cells
  std::vector<std::string> differences;  // see RowMismatch::differences
};

/// What Verify found in one target table.
struct TableVerifyResult {
  std::string table;
  bool exists = true;          // false: the target has no such table (every row is missing)
  std::string state;           // the recorded state ("complete", "loading", "failed",
                               // "repaired"), "" when none is recorded
  std::string why_incomplete;  // when state is not complete: IncompleteReason
  bool same_design = true;     // no other mapping fingerprint is recorded (TableFingerprint)
  int64_t timestamp_ms = 0;    // the cell timestamp the source's cells were given
  std::string timestamp_from;  // "--timestamp-ms", "mapping" or "table state"
  TableStats read;             // source rows read
  RowVerifyStats rows;         // the comparison
  std::vector<VerifiedRow> missing, extra, different;  // RowVerifyStats' rows, decoded
  uint64_t rejected = 0;  // source rows that cannot be encoded: in no target, not compared
  std::vector<std::string> first_rejected;  // "order_id=7: reason", the first max_listed
  double seconds = 0;
};

/// What Verify found.
struct VerifyResult {
  uint64_t sample_every = 1;
  std::vector<TableVerifyResult> tables;  // in mapping order
  double seconds = 0;
  /// No table has a missing, extra or different row.
  bool equal() const {
    for (const auto& t : tables) {
      if (!t.rows.equal()) return false;
    }
    return true;
  }
};

/// widen verify: compares each target table with what a migrate of the
/// source now writes, without writing anything (store/row_verify.h):
/// LoadDesign, CheckScans, LayOutJobs (the source is read in one
/// snapshot), open the target (never created), then per table assemble
/// every row as migrate does — streamed beside a reader of the stored table
/// when the row keys follow the read order, else through an external sort
/// — and compare row by row. Rows that cannot be encoded are counted, not
/// compared. A table the target lacks has every row missing. Errors: as
/// Migrate; NotFound for a store that is not there; FailedPrecondition for a
/// table that holds cells but whose cell timestamp is not known (no
/// --timestamp-ms, none in the mapping or the table's state).
Result<VerifyResult> Verify(const VerifyRequest& request);

/// Refuses a rejects path that is the mapping file, not a regular file, or
/// inside a leveldb: target store. InvalidArgument naming the path.
Status CheckRejectsPath(const std::string& path, const Mapping& mapping);

/// What PreviewDesign computes per table.
struct TablePreviewResult {
  const TablePlan* plan = nullptr;  // into PreviewRun::design
  KeyAnatomy anatomy;
  TablePreview preview;
  RangeReport ranges;  // key widths and version columns against the columns' ranges
};

/// A plan run: the design and its tables' previews.
struct PreviewRun {
  std::unique_ptr<Design> design;
  int64_t timestamp_ms = 0;  // the cell timestamp the previews used
  std::vector<TablePreviewResult> tables;
};

/// widen plan's work: LoadDesign, then for each table PreviewTable (the
/// first rows, statistics, collisions; `sample` driving rows, 0 = all),
/// the row key anatomy and the value range checks. Never opens the target.
/// `timestamp_ms` unset: the mapping's, else now. Errors name the mapping
/// place and table.
Result<PreviewRun> PreviewDesign(const DesignRequest& request, uint64_t sample, uint64_t show_rows,
                                 std::optional<int64_t> timestamp_ms);

/// widen lint's work: the mapping (and, with `request.open_source`, the
/// source: the linter plans each table itself, to report plan errors as
/// findings). Returns the design (for its mapping's name) and the report.
struct LintRun {
  std::unique_ptr<Design> design;
  LintReport report;
};
Result<LintRun> LintDesign(const DesignRequest& request, const LintOptions& options);

/// What DraftDesign drafts (widen init).
struct InitRequest {
  std::string source_url;
  DraftOptions draft;  // source_url and dialect are set from the source
  int fetch_rows = 5000;
  std::string file_name = "the draft";  // names the draft in the lint report
};

/// widen init's work: the draft, and the lint report of it against the
/// source (with the draft's naming policy).
struct InitRun {
  Draft draft;
  LintReport report;
};

/// Opens the source read-only, introspects it, drafts a mapping
/// (transform/draft.h), reads the draft back with the mapping loader and
/// lints it against the source. Errors: the source's (Unavailable,
/// PermissionDenied, ...), the drafter's (InvalidArgument naming a table or
/// the policy); Internal when the draft does not load (a bug, with the
/// loader's message).
Result<InitRun> DraftDesign(const InitRequest& request);

/// One target table's descriptor with its split points, and how they were
/// chosen.
struct DesignedTable {
  TableDescriptor descriptor;  // split_points set
  SplitPlan split;
  const TablePlan* plan = nullptr;  // into DesignTablesRun::design
};
struct DesignTablesRun {
  std::unique_ptr<Design> design;
  std::vector<DesignedTable> tables;
};

/// widen ddl's work: the descriptors of the design's tables with split
/// points (ComputeSplitPoints with `split`), each validated.
Result<DesignTablesRun> DesignTables(const DesignRequest& request, const SplitOptions& split);

/// What one table got from ApplyTables.
struct AppliedTable {
  std::string name;
  bool existed = false;  // it was there with the same families and key layout
  size_t regions = 0;
};

/// Creates `tables` in the target `url` (namespaces first), or checks that
/// they exist as described. FailedPrecondition for a table that exists
/// otherwise; the store's errors.
Result<std::vector<AppliedTable>> ApplyTables(const std::string& url,
                                              const std::vector<TableDescriptor>& tables);

}  // namespace widen
