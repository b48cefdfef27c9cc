// The widen subcommands, each a function from parsed options to an exit code.
// They print results to stdout, progress and errors to stderr.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace widen {

struct MigrateOptions {
  std::string mapping_path;
  std::string source_url;               // overrides the mapping's source when set
  std::string target_url;               // overrides the mapping's target when set
  std::string only_table;               // run one target table only (empty = all)
  std::string rejects_path;             // write rejected rows here (JSON lines) instead of failing
  std::optional<int64_t> timestamp_ms;  // cell timestamp override (unset = mapping or run start)
  bool quiet = false;                   // no progress line and no summary
  int fetch_rows = 5000;
  int jobs = 1;                   // parallel jobs per table (source connections on one snapshot)
  int writers = kDefaultWriters;  // HBase: requests in flight per table
  std::string shard;              // --shard I/N ("" = not sharded)
  std::string metrics_path;       // --metrics-file: the run's figures for Prometheus ("" = none)
};

struct ReadOptionsCli {
  std::string mapping_path;  // to find the target and decode row keys
  std::string target_url;
  std::string table;
  std::string row;     // get: the row key (HBase printable form, \xNN escapes)
  std::string prefix;  // scan: row prefix (printable form)
  std::string start_row, stop_row;
  uint64_t limit = 0;
  int versions = 1;
  bool decode = false;  // show row keys decoded into named parts (needs -m)
};

/// widen plan: a dry run that writes nothing (docs/plan.md).
struct PlanOptions {
  std::string mapping_path;
  std::string source_url;               // overrides the mapping's source when set
  std::string only_table;               // one target table (empty = all)
  uint64_t limit = 5;                   // rows shown per table
  uint64_t sample = 1000;               // driving rows read for the statistics
  bool full = false;                    // read every row (exact statistics and collisions)
  std::string format = "text";          // text | json
  std::string diagram_path;             // FILE.dot, or FILE.svg (and .png, .pdf) via Graphviz
  std::string html_path;                // --html: the design report page ("" = none)
  std::optional<int64_t> timestamp_ms;  // cell timestamp (unset = mapping or now)
  int fetch_rows = 5000;
};

/// widen lint: design rules (docs/lint.md).
struct LintCliOptions {
  std::string mapping_path;
  std::string source_url;
  bool no_source = false;            // mapping rules only
  std::string format = "text";       // text | json
  std::vector<std::string> disable;  // rule ids not to report
  std::string policy_path;           // --policy FILE: replaces the mapping's policy:
  int max_families = 0;              // 0: the naming policy's (default 3)
  int max_family_name = 0;           // 0: the naming policy's (default 2)
  int max_key_bytes = 100;
  int64_t large_table_rows = 10000000;
  int64_t large_sync_rows = 1000000;
  uint64_t max_row_cells = 100000;
  uint64_t max_row_mib = 10;
};

/// widen init: a first mapping drafted from the source (docs/design.md).
struct InitOptions {
  std::string source_url;
  std::vector<std::string> tables;  // source tables in scope (empty = all)
  std::vector<std::string> roots;   // the root tables (empty = the rule)
  std::string name_space;           // the target tables' namespace ("" = the database's name)
  std::string target_url;           // the draft's target ("" = leveldb:out/NAMESPACE)
  std::string policy_path;          // a naming policy the names follow
  std::string output_path;          // "" = stdout
  bool force = false;               // replace output_path when it exists
  bool quiet = false;               // no summary on stderr
};

/// widen ddl: HBase shell statements (docs/plan.md, "widen ddl").
struct DdlOptions {
  std::string mapping_path;
  std::string source_url;
  std::string only_table;
  int regions = 0;  // pre-split into N regions (0: salt buckets only)
  uint64_t sample_keys = 100000;
  uint64_t sample_rows = 0;   // driving rows read for quantiles (0 = all)
  bool no_metadata = false;   // leave out METADATA (widen.key)
  bool no_namespace = false;  // leave out create_namespace
  bool apply = false;         // create the tables in the target instead of printing
  std::string target_url;     // --apply: overrides the mapping's target
};

/// widen sync (README, "Keeping the copy current").
struct SyncOptions {
  std::string mapping_path;
  std::string source_url;
  std::string target_url;
  std::string only_table;
  std::optional<int64_t> timestamp_ms;  // re-written cells' timestamp (unset: see run.h)
  std::string rejects_path;             // write rejected rows here (JSON lines) instead of failing
  int fetch_rows = 5000;
  int jobs = 1;
  std::string format = "text";         // text | json
  bool quiet = false;                  // no summary line
  bool progress = false;               // a progress line on a terminal
  bool accept_mapping_change = false;  // sync tables written with another design
  bool reconcile = false;              // watermark mode: find hard deletes too
  bool full = false;                   // watermark mode: a full pass
  std::string shard;                   // --shard I/N: refused (see sync.cc)
  std::string metrics_path;            // --metrics-file: the run's figures for Prometheus
};

/// widen verify (README, "Checking the copy").
struct VerifyOptions {
  std::string mapping_path;
  std::string source_url;
  std::string target_url;
  std::string only_table;
  uint64_t sample = 1;                  // compare one row in N (1: every row)
  bool full = false;                    // --full: every row (the default; excludes --sample)
  std::optional<int64_t> timestamp_ms;  // the cells' timestamp (unset: see run.h, Verify)
  size_t limit = 10;                    // rows named per kind of difference and table
  int fetch_rows = 5000;
  int jobs = 1;
  std::string format = "text";  // text | json
  bool quiet = false;           // no report
  bool progress = false;        // a progress line on a terminal
};

/// The --help text of migrate's and sync's --metrics-file.
inline constexpr const char* kMetricsFileHelp =
    "Write the run's figures (rows, cells, rejects, seconds, watermark lag, exit status, last "
    "success) to FILE in Prometheus' text format, replacing it whole, on success and failure "
    "alike (for node_exporter's textfile collector; README, \"Operating it\")";

/// The check of an option naming a file (--metrics-file, --rejects, --html,
/// --diagram): an empty value names no file and is refused (exit 2, CLI11's
/// message "--OPTION: ..."), instead of leaving the file out.
CLI::Validator NonEmptyPath();

/// `cancel` (may be null) turns true on Ctrl-C; the run then stops cleanly.
int RunMigrate(const MigrateOptions& options, const std::atomic<bool>* cancel);
int RunScan(const ReadOptionsCli& options);
int RunGet(const ReadOptionsCli& options);
int RunPlan(const PlanOptions& options);
int RunLint(const LintCliOptions& options);
int RunDdl(const DdlOptions& options);
int RunInit(const InitOptions& options);

/// Adds a subcommand and its options to `app`. The returned function runs
/// the subcommand if it is the one parsed, returning its exit code, and
/// returns -1 otherwise.
using CommandRunner = std::function<int()>;
CommandRunner AddPlanCommand(CLI::App* app);
CommandRunner AddLintCommand(CLI::App* app);
CommandRunner AddDdlCommand(CLI::App* app);
CommandRunner AddInitCommand(CLI::App* app);
/// `cancel` turns true on Ctrl-C or SIGTERM.
CommandRunner AddSyncCommand(CLI::App* app, const std::atomic<bool>* cancel);
int RunSync(const SyncOptions& options, const std::atomic<bool>* cancel);
/// widen verify (cmd/verify.cc); `cancel` turns true on Ctrl-C or SIGTERM.
CommandRunner AddVerifyCommand(CLI::App* app, const std::atomic<bool>* cancel);
int RunVerify(const VerifyOptions& options, const std::atomic<bool>* cancel);
/// widen repair (cmd/repair.cc): a damaged embedded store into a new one.
CommandRunner AddRepairCommand(CLI::App* app);

}  // namespace widen
