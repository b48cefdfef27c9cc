// widen migrate: option handling, one call into the run layer (cmd/run.h),
// then the progress line, the summary table and the exit code.
#include <unistd.h>

#include <cstdio>

#include "cmd/commands.h"
#include "cmd/design_util.h"
#include "cmd/exit_codes.h"
#include "cmd/metrics_file.h"
#include "cmd/report.h"
#include "cmd/run.h"

namespace widen {

namespace {

// The run itself; fills *metrics' figures when it reaches its summary.
int Run(const MigrateOptions& o, const std::atomic<bool>* cancel, RunMetrics* metrics) {
  ProgressLine progress(!o.quiet && isatty(STDERR_FILENO));
  MigrateRequest r;
  r.design.mapping_path = o.mapping_path;
  r.design.source_url = o.source_url;
  r.design.only_table = o.only_table;
  r.design.fetch_rows = o.fetch_rows;
  r.target_url = o.target_url;
  r.rejects_path = o.rejects_path;
  r.timestamp_ms = o.timestamp_ms;
  r.jobs = o.jobs;
  r.writers = o.writers;
  if (!o.shard.empty()) {
    auto shard = ParseShardSpec(o.shard);
    if (!shard.ok()) {
      std::fprintf(stderr, "widen: %s\n", shard.status().message().c_str());
      return ExitCodeFor(shard.status());
    }
    r.shard = *shard;
  }
  r.cancel = cancel;
  r.progress = [&progress](const TableStats& s) { progress.Update(s); };
  r.table_done = [&progress] { progress.Clear(); };
  auto result = Migrate(r);
  if (!result.ok()) {
    std::fprintf(stderr, "widen: %s\n", result.status().message().c_str());
    return ExitCodeFor(result.status());
  }
  const MigrateResult& m = *result;
  metrics->has_figures = true;
  for (const TableStats& t : m.tables) {
    TableMetrics tm;
    tm.table = t.table;
    tm.rows_read = t.source_rows;
    tm.rows_written = t.rows;
    tm.cells_put = t.cells;
    tm.rows_rejected = t.rejected;
    tm.seconds = t.seconds;
    metrics->tables.push_back(std::move(tm));
  }
  if (!o.quiet) {
    std::fprintf(stdout, "target: %s (%s)\n", m.target.c_str(), m.target_from.c_str());
    PrintSummary(m.tables, stdout);
    for (const auto& n : m.job_notes) std::fprintf(stdout, "%s\n", n.c_str());
    PrintTableNotes(m.tables, stdout);
    if (m.rejected > 0) {
      std::fprintf(stdout, "%llu row(s) rejected; see %s\n",
                   static_cast<unsigned long long>(m.rejected), m.rejects_path.c_str());
    }
  }
  // Cells that replaced others of this run lost data: never silent, not
  // even with --quiet.
  int exit_code = kExitOk;
  for (const auto& t : m.tables) {
    if (t.overwritten == 0) continue;
    std::fprintf(stderr,
                 "widen: table '%s': %llu cell(s) replaced another cell of this run with the same "
                 "row key, column and timestamp, whose value is lost; the first: %s. Make the row "
                 "key (or the nest ids and prefixes) identify the source rows; widen lint and "
                 "widen plan --full find such designs\n",
                 t.table.c_str(), static_cast<unsigned long long>(t.overwritten),
                 t.first_overwritten.c_str());
    exit_code = kExitReplaced;
  }
  return exit_code;
}

}  // namespace

int RunMigrate(const MigrateOptions& o, const std::atomic<bool>* cancel) {
  return RunWithOutputs("migrate", o.mapping_path, o.rejects_path, o.metrics_path, o.target_url,
                        [&](RunMetrics* m) { return Run(o, cancel, m); });
}

}  // namespace widen
