// The file `widen migrate|sync --metrics-file FILE` writes: the run's
// figures in the Prometheus text exposition format (version 0.0.4), for
// node_exporter's textfile collector (README, "Operating it"). One file per
// run, replacing the previous run's whole (an AtomicFile: written beside
// FILE, fsynced, renamed onto it), on every exit path that can write it:
// success, failure, a busy store (exit 7), Ctrl-C (130).
//
// Every sample has the labels command="migrate|sync" and mapping="PATH" (the
// mapping file as given). Not `job`: Prometheus sets that label itself on
// every scrape (node_exporter's job), and would rename ours to
// exported_job. The metrics, all gauges (a run's figures, not counters
// that grow across runs):
//
//   widen_exit_status                      the run's exit code (README, "Exit codes")
//   widen_last_run_timestamp_seconds       when this run ended (Unix time)
//   widen_last_success_timestamp_seconds   when the last run that exited 0 ended:
//                                          this run's end, else the value the
//                                          previous file held (0: none known)
//   widen_run_duration_seconds             this run's wall time
//   widen_run_rows_read ... _rows_rejected this run's totals (a run that
//                                          failed has none)
//   widen_table_rows_read{table} ...       the same per target table ("ns:t")
//   widen_watermark_lag_seconds{table,source_table,column}
//                                          sync, time watermarks: the run's
//                                          end less the newest watermark read
//   widen_watermark_value{table,source_table,column}
//                                          sync, integer watermarks: the newest
//                                          watermark read
//
// Thread safety: not thread safe; one object per run.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cmd/atomic_file.h"
#include "common/status.h"
#include "common/value.h"

namespace widen {

/// The newest watermark a sync read from one source table.
struct WatermarkMetric {
  std::string source_table;  // "public.orders"
  std::string column;        // the (first) watermark column
  /// The watermark (kInt, kUInt, kDate, kTimestamp, kTimestampTz; other
  /// types and NULL give no sample). A timestamp without time zone is read
  /// as UTC wall-clock time.
  Value value;
};

/// One target table's figures of a run.
struct TableMetrics {
  std::string table;          // "ns:table"
  uint64_t rows_read = 0;     // source rows read (driving and nested)
  uint64_t rows_written = 0;  // target rows written (sync: written or replaced)
  uint64_t cells_put = 0;
  uint64_t cells_deleted = 0;  // sync only (migrate: 0)
  uint64_t rows_deleted = 0;   // sync only
  uint64_t rows_rejected = 0;  // source rows written to the rejects file
  double seconds = 0;
  std::vector<WatermarkMetric> watermarks;  // sync, tables in watermark mode
};

/// What one run reports.
struct RunMetrics {
  int exit_status = 0;
  double start_seconds = 0;  // Unix time (seconds since the epoch, UTC)
  double end_seconds = 0;
  /// The run reached its summary: the totals and `tables` are written.
  bool has_figures = false;
  std::vector<TableMetrics> tables;
};

class MetricsFile {
 public:
  /// Makes the temporary file beside `path` (AtomicFile::Create's errors,
  /// named "--metrics-file PATH") and reads the previous file's
  /// widen_last_success_timestamp_seconds for the same labels, if `path`
  /// holds one. `command` is "migrate" or "sync"; `mapping` the mapping
  /// file as given.
  static Result<std::unique_ptr<MetricsFile>> Create(const std::string& path,
                                                     const std::string& command,
                                                     const std::string& mapping);

  /// The metrics text of `run` (see above).
  std::string Format(const RunMetrics& run) const;

  /// Writes Format(run) and renames it onto the path. LocalIo naming the
  /// file. REQUIRES: called at most once.
  Status Commit(const RunMetrics& run);

  /// The previous file's last success (Unix seconds), if it had one.
  std::optional<double> previous_success_seconds() const { return previous_success_; }

 private:
  MetricsFile(std::unique_ptr<AtomicFile> file, std::string labels,
              std::optional<double> previous_success)
      : file_(std::move(file)), labels_(std::move(labels)), previous_success_(previous_success) {}

  std::unique_ptr<AtomicFile> file_;
  const std::string labels_;  // command="sync",mapping="..." (escaped)
  const std::optional<double> previous_success_;
};

/// Unix time now, in seconds (the system clock), for RunMetrics.
double UnixSecondsNow();

/// A command's run with its --metrics-file: with `path` empty, just
/// run(&metrics). Else the MetricsFile is made first (its error goes to
/// stderr and its exit code is returned: nothing is read), then `run` fills
/// the figures and returns the exit code, and the file is written with it
/// and the run's start and end times. An exception escaping `run` is
/// written as exit status 1 (kExitInternal) and rethrown. A file that
/// cannot be written at the end is reported on stderr; it turns exit 0 into
/// kExitOutput (10: the run did its work, its report is missing), other
/// codes stay.
int RunWithMetrics(const std::string& path, const std::string& command, const std::string& mapping,
                   const std::function<int(RunMetrics*)>& run);

/// migrate's and sync's run: first CheckOutputPaths (the mapping against
/// --rejects and --metrics-file, and both outside the embedded target
/// store; its error is reported and its exit code returned, nothing is
/// read or written), then RunWithMetrics(metrics_path, command, mapping,
/// run). Empty paths are options not given.
int RunWithOutputs(const std::string& command, const std::string& mapping,
                   const std::string& rejects_path, const std::string& metrics_path,
                   const std::string& target_url, const std::function<int(RunMetrics*)>& run);

}  // namespace widen
