// widen sync: brings the target to what a migrate of the source now writes,
// rewriting only the rows that changed (cmd/run.h, Sync; store/row_sync.h).
// Quiet by default — one summary line, for cron — or JSON with --format json.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "cmd/design_util.h"
#include "cmd/exit_codes.h"
#include "cmd/metrics_file.h"
#include "cmd/report.h"
#include "cmd/run.h"
#include "transform/cell_timestamp.h"

namespace widen {

namespace {

using Json = nlohmann::ordered_json;

// The version of the JSON shape (README, "Keeping the copy current").
constexpr int kSyncJsonFormat = 1;

// A sync's figures for --metrics-file (cmd/metrics_file.h).
void FillMetrics(const SyncResult& s, RunMetrics* metrics) {
  metrics->has_figures = true;
  for (const TableSyncResult& t : s.tables) {
    TableMetrics tm;
    tm.table = t.table;
    tm.rows_read = t.read.source_rows;
    tm.rows_written = t.rows.rows_written;
    tm.cells_put = t.rows.cells_put;
    tm.cells_deleted = t.rows.cells_deleted;
    tm.rows_deleted = t.rows.rows_deleted;
    tm.rows_rejected = t.read.rejected;
    tm.seconds = t.seconds;
    if (t.mode != "digest") {
      for (const Watermark& w : t.watermarks_after) {
        if (w.values.empty() || w.columns.empty()) continue;
        tm.watermarks.push_back(
            WatermarkMetric{w.source_table, w.columns.front(), w.values.front()});
      }
    }
    metrics->tables.push_back(std::move(tm));
  }
}

// The run itself; fills *metrics' figures when it reaches its summary.
int Run(const SyncOptions& o, const std::atomic<bool>* cancel, RunMetrics* metrics) {
  if (!o.shard.empty()) {
    // A sync decides about every stored row of a table against every source
    // row (README, "Loading HBase from several machines"): it cannot be cut
    // into ranges that other processes sync alone.
    std::fprintf(stderr,
                 "widen: --shard %s: widen sync cannot be sharded: it makes each table hold "
                 "exactly what the whole source gives, so it must see every stored row (to "
                 "remove those no source row gives any more) and every source row (a row can "
                 "take values from rows of any range: joined, nested), and it keeps one sync "
                 "index and one set of watermarks per table; run one sync (with --jobs for "
                 "more connections); nothing was written\n",
                 o.shard.c_str());
    return kExitInvalid;
  }
  ProgressLine progress(o.progress && isatty(STDERR_FILENO));
  SyncRequest r;
  r.design.mapping_path = o.mapping_path;
  r.design.source_url = o.source_url;
  r.design.only_table = o.only_table;
  r.design.fetch_rows = o.fetch_rows;
  r.target_url = o.target_url;
  r.timestamp_ms = o.timestamp_ms;
  r.rejects_path = o.rejects_path;
  r.jobs = o.jobs;
  r.accept_mapping_change = o.accept_mapping_change;
  r.reconcile = o.reconcile;
  r.full = o.full;
  r.cancel = cancel;
  r.progress = [&progress](const TableStats& s) { progress.Update(s); };
  r.table_done = [&progress] { progress.Clear(); };
  auto result = Sync(r);
  if (!result.ok()) {
    std::fprintf(stderr, "widen: %s\n", result.status().message().c_str());
    return ExitCodeFor(result.status());
  }
  const SyncResult& s = *result;
  FillMetrics(s, metrics);
  // Notes first (stderr), so that stdout's document or line stands alone.
  for (const auto& t : s.tables) {
    for (const auto& n : t.notes) {
      std::fprintf(stderr, "widen: table '%s': %s\n", t.table.c_str(), n.c_str());
    }
  }
  std::fflush(stderr);
  RowSyncStats total;
  uint64_t read = 0;
  for (const auto& t : s.tables) {
    read += t.read.source_rows;
    total.Add(t.rows);
  }
  // Hard deletes: seen by every table in digest mode or a full pass, by
  // watermark-mode tables only with --reconcile.
  std::string hard_deletes = "detected";
  for (const auto& t : s.tables) {
    if (t.hard_deletes == "not detected") {
      hard_deletes = t.hard_deletes;
    } else if (t.hard_deletes == "reconciled" && hard_deletes == "detected") {
      hard_deletes = t.hard_deletes;
    }
  }
  // Per source table in watermark mode: where the run read from (null on
  // a full pass) and what it recorded (null for an empty table).
  auto marks = [](const TableSyncResult& t) {
    auto text = [](const Watermark* w) {
      if (w == nullptr || w->values.empty() || w->values.front().is_null()) return Json();
      return Json(w->values.front().DebugString());
    };
    Json a = Json::array();
    for (const Watermark& after : t.watermarks_after) {
      const Watermark* before = nullptr;
      if (t.mode == "watermark") {
        for (const Watermark& w : t.watermarks_before) {
          if (w.source_table == after.source_table) before = &w;
        }
      }
      a.push_back(Json{{"table", after.source_table},
                       {"column", after.columns.empty() ? "" : after.columns.front()},
                       {"before", text(before)},
                       {"after", text(&after)}});
    }
    return a;
  };
  if (o.format == "json") {
    Json doc;
    doc["widen_sync"] = kSyncJsonFormat;
    doc["run_id"] = s.run_id;
    doc["target"] = s.target;
    Json tables = Json::array();
    for (const auto& t : s.tables) {
      tables.push_back(Json{{"table", t.table},
                            {"mode", t.mode},
                            {"source_rows", t.read.source_rows},
                            {"rows", t.rows.rows},
                            {"rows_unchanged", t.rows.rows_unchanged},
                            {"rows_written", t.rows.rows_written},
                            {"rows_deleted", t.rows.rows_deleted},
                            {"cells_put", t.rows.cells_put},
                            {"cells_deleted", t.rows.cells_deleted},
                            {"cells_replaced", t.rows.overwritten},
                            {"rejected", t.read.rejected},
                            {"timestamp_ms", t.timestamp_ms},
                            {"hard_deletes", t.hard_deletes},
                            {"seconds", t.seconds}});
      Json& j = tables.back();
      if (!t.why.empty()) j["digest_because"] = t.why;
      if (!t.notes.empty()) j["notes"] = t.notes;
      if (t.mode != "digest") j["watermarks"] = marks(t);
      if (t.mode == "watermark") {
        j["changed_source_rows"] = t.changes.changed_rows;
        j["split_values"] = t.changes.split_values;
        j["old_parents"] = t.changes.moved_parents;
        j["reconciled"] = t.changes.reconciled;
      }
    }
    doc["tables"] = tables;
    doc["source_rows"] = read;
    doc["rows"] = total.rows;
    doc["rows_unchanged"] = total.rows_unchanged;
    doc["rows_written"] = total.rows_written;
    doc["rows_deleted"] = total.rows_deleted;
    doc["cells_put"] = total.cells_put;
    doc["cells_deleted"] = total.cells_deleted;
    doc["cells_replaced"] = total.overwritten;
    doc["rejected"] = s.rejected;
    doc["hard_deletes"] = hard_deletes;
    doc["seconds"] = s.seconds;
    std::string text = doc.dump(2, ' ', false, Json::error_handler_t::replace);
    std::printf("%s\n", text.c_str());
  } else if (!o.quiet) {
    // One line: how many tables ran in which mode, what was read and
    // written, and whether hard deletes were looked for.
    size_t watermark = 0, full = 0, digest = 0;
    for (const auto& t : s.tables) {
      (t.mode == "watermark" ? watermark : t.mode == "full" ? full : digest)++;
    }
    // The tables whose hard deletes went unseen, by name: others may have
    // reconciled (--reconcile, or `deletes: reconcile: true` in the mapping).
    std::vector<std::string> unseen, reconciled;
    for (const auto& t : s.tables) {
      if (t.hard_deletes == "not detected") unseen.push_back(t.table);
      if (t.hard_deletes == "reconciled" && t.mode == "watermark") reconciled.push_back(t.table);
    }
    std::string deletes;
    if (!unseen.empty()) {
      deletes = fmt::format(
          "; hard deletes and key changes not detected in {} (watermark mode without --reconcile "
          "or deletes: reconcile: true)",
          fmt::join(unseen, ", "));
    } else if (!reconciled.empty()) {
      deletes = fmt::format("; hard deletes reconciled in {}", fmt::join(reconciled, ", "));
    }
    std::vector<std::string> modes;
    if (watermark > 0) modes.push_back(fmt::format("{} watermark", watermark));
    if (full > 0) modes.push_back(fmt::format("{} full pass", full));
    if (digest > 0) modes.push_back(fmt::format("{} digest", digest));
    std::printf(
        "widen sync into %s (%s): %zu table(s) (%s), %llu source rows read, %llu rows: %llu "
        "unchanged, %llu written, %llu deleted; %llu cells put, %llu deleted; %.1f s%s\n",
        s.target.c_str(), s.target_from.c_str(), s.tables.size(),
        fmt::format("{}", fmt::join(modes, ", ")).c_str(), static_cast<unsigned long long>(read),
        static_cast<unsigned long long>(total.rows),
        static_cast<unsigned long long>(total.rows_unchanged),
        static_cast<unsigned long long>(total.rows_written),
        static_cast<unsigned long long>(total.rows_deleted),
        static_cast<unsigned long long>(total.cells_put),
        static_cast<unsigned long long>(total.cells_deleted), s.seconds, deletes.c_str());
    if (s.rejected > 0) {
      std::printf("%llu row(s) rejected; see %s\n", static_cast<unsigned long long>(s.rejected),
                  s.rejects_path.c_str());
    }
  }
  std::fflush(stdout);
  int exit_code = kExitOk;
  for (const auto& t : s.tables) {
    if (t.rows.overwritten == 0) continue;
    std::fprintf(stderr,
                 "widen: table '%s': %llu cell(s) replaced another cell of this run with the same "
                 "row key, column and timestamp, whose value is lost; the first: %s. Make the row "
                 "key (or the nest ids and prefixes) identify the source rows; widen lint and "
                 "widen plan --full find such designs\n",
                 t.table.c_str(), static_cast<unsigned long long>(t.rows.overwritten),
                 t.rows.first_overwritten.c_str());
    exit_code = kExitReplaced;
  }
  return exit_code;
}

}  // namespace

int RunSync(const SyncOptions& o, const std::atomic<bool>* cancel) {
  return RunWithOutputs("sync", o.mapping_path, o.rejects_path, o.metrics_path, o.target_url,
                        [&](RunMetrics* m) { return Run(o, cancel, m); });
}

CLI::Validator NonEmptyPath() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        return path.empty() ? "an empty path names no file; give the file's path" : "";
      },
      "", "NonEmptyPath");
}

CommandRunner AddSyncCommand(CLI::App* app, const std::atomic<bool>* cancel) {
  auto o = std::make_shared<SyncOptions>();
  CLI::App* c = app->add_subcommand(
      "sync",
      "Bring the target up to date with the source, rewriting only the rows that changed "
      "(for cron); quiet but for one summary line");
  c->add_option("-m,--mapping", o->mapping_path, "Mapping YAML file")->required();
  c->add_option("--source", o->source_url, "Source URL, overrides the mapping's 'source'");
  c->add_option("--target", o->target_url, "Target URL, overrides the mapping's 'target'");
  c->add_option("--table", o->only_table, "Sync only this target table (ns:table)");
  c->add_option("--rejects", o->rejects_path,
                "Write rows that cannot be encoded to this file (JSON lines) and leave them out "
                "of the target, instead of stopping at the first")
      ->check(NonEmptyPath());
  c->add_option("--timestamp-ms", o->timestamp_ms,
                "Timestamp of re-written cells in ms since the epoch (default: the mapping's "
                "timestamp_ms, else the one the table was last loaded with)")
      ->check(CLI::Range(kMinCellTimestampMs, kMaxCellTimestampMs));
  c->add_option("--fetch-rows", o->fetch_rows, "Rows fetched per round trip from the source")
      ->check(CLI::Range(1, 1000000));
  c->add_option("-j,--jobs", o->jobs, "Parallel jobs per table, as for migrate (default 1)")
      ->check(CLI::Range(1, 64));
  c->add_option("--format", o->format, "Summary format: text (one line) or json")
      ->check(CLI::IsMember({"text", "json"}));
  c->add_flag("--accept-mapping-change", o->accept_mapping_change,
              "Sync tables last written with another design (the mapping changed, or another "
              "mapping writes them): their rows become exactly what this mapping gives");
  c->add_flag("--reconcile", o->reconcile,
              "Watermark mode: also find rows deleted from the source (hard deletes), comparing "
              "the source's keys with the rows the target holds");
  c->add_flag("--full", o->full,
              "Watermark mode: compare every row this run (as digest mode) and record the "
              "watermarks anew");
  c->add_option("--shard", o->shard,
                "Refused: a sync cannot be split among processes (see README, \"Loading HBase "
                "from several machines\")");
  c->add_flag("-q,--quiet", o->quiet, "No summary line (errors still go to stderr)");
  c->add_flag("--progress", o->progress, "Show a progress line on a terminal");
  c->add_option("--metrics-file", o->metrics_path, kMetricsFileHelp)->check(NonEmptyPath());
  return [o, c, cancel]() { return c->parsed() ? RunSync(*o, cancel) : -1; };
}

}  // namespace widen
