// widen verify: compares the target with what a migrate of the source now
// writes, and writes nothing (cmd/run.h, Verify; store/row_verify.h). A
// table of figures per target table and the first rows of each kind of
// difference, or JSON with --format json (README, "Checking the copy"). Exit
// 0 when every table is equal, kExitDifferent when not.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "cmd/exit_codes.h"
#include "cmd/report.h"
#include "cmd/run.h"
#include "common/bytes.h"
#include "transform/cell_timestamp.h"

namespace widen {

namespace {

using Json = nlohmann::ordered_json;

// The version of the JSON shape (README, "Checking the copy").
constexpr int kVerifyJsonFormat = 1;

Json Pairs(const std::vector<std::pair<std::string, std::string>>& pairs) {
  Json j = Json::object();
  for (const auto& [k, v] : pairs) j[k] = v;
  return j;
}

Json RowJson(const VerifiedRow& row, bool with_differences) {
  Json j;
  j["row"] = ToStringBinary(row.row);
  j["key"] = row.key.empty() ? Json() : Pairs(row.key);
  j["source"] = row.source.empty() ? Json() : Pairs(row.source);
  j["cells"] = row.cells;
  if (with_differences) j["differences"] = row.differences;
  return j;
}

// "name=value name=value".
std::string Joined(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string s;
  for (const auto& [k, v] : pairs) {
    if (!s.empty()) s += ' ';
    s += k + "=" + ToStringBinary(v);
  }
  return s;
}

// One named row: "ROW  =  parts  <-  primary key", as widen plan shows keys.
std::string RowLine(const VerifiedRow& row) {
  std::string s = "  " + ToStringBinary(row.row);
  if (!row.key.empty()) s += "  =  " + Joined(row.key);
  if (!row.source.empty()) s += "  <-  " + Joined(row.source);
  return s;
}

void PrintRows(const char* what, uint64_t count, const std::vector<VerifiedRow>& rows,
               const std::string& table, const char* cells_word) {
  if (count == 0) return;
  std::printf("%s: %llu row(s) %s%s:\n", table.c_str(), static_cast<unsigned long long>(count),
              what,
              count > rows.size() ? fmt::format(" (the first {} shown)", rows.size()).c_str() : "");
  for (const VerifiedRow& row : rows) {
    std::printf("%s  (%llu cell(s)%s)\n", RowLine(row).c_str(),
                static_cast<unsigned long long>(row.cells), cells_word);
    for (const std::string& d : row.differences) std::printf("      %s\n", d.c_str());
  }
}

void PrintText(const VerifyResult& v) {
  // Every figure is of rows (row keys).
  std::printf("%-32s %15s %15s %10s %10s %10s %10s\n", "table", "rows in source", "rows in target",
              "equal", "missing", "extra", "different");
  for (const TableVerifyResult& t : v.tables) {
    const RowVerifyStats& r = t.rows;
    std::printf("%-32s %15llu %15llu %10llu %10llu %10llu %10llu\n", t.table.c_str(),
                static_cast<unsigned long long>(r.source_rows),
                static_cast<unsigned long long>(r.target_rows),
                static_cast<unsigned long long>(r.rows_equal),
                static_cast<unsigned long long>(r.rows_missing),
                static_cast<unsigned long long>(r.rows_extra),
                static_cast<unsigned long long>(r.rows_different));
  }
  for (const TableVerifyResult& t : v.tables) {
    if (!t.exists) std::printf("%s: the target has no such table\n", t.table.c_str());
    if (t.state == "repaired") {
      std::printf("%s: it was repaired (widen repair) and may lack cells\n", t.table.c_str());
    } else if (!t.state.empty() && t.state != "complete") {
      std::printf("%s: its state is '%s': %s\n", t.table.c_str(), t.state.c_str(),
                  t.why_incomplete.empty() ? "the last run into it did not finish"
                                           : t.why_incomplete.c_str());
    }
    if (!t.same_design) {
      std::printf(
          "%s: it was last written with another design (the mapping changed since, or another "
          "mapping writes it)\n",
          t.table.c_str());
    }
    PrintRows("missing from the target (the source gives them)", t.rows.rows_missing, t.missing,
              t.table, "");
    PrintRows("only in the target (the source does not give them)", t.rows.rows_extra, t.extra,
              t.table, "");
    if (t.rows.rows_extra > 0) {
      std::printf(
          "  (a source row deleted, or its primary key changed, since the last load: widen sync "
          "removes such rows, in watermark mode only with --reconcile)\n");
    }
    PrintRows("different", t.rows.rows_different, t.different, t.table, " differ");
    if (t.rejected > 0) {
      std::printf("%s: %llu source row(s) cannot be encoded (in no target; not compared):\n",
                  t.table.c_str(), static_cast<unsigned long long>(t.rejected));
      for (const std::string& why : t.first_rejected) std::printf("  %s\n", why.c_str());
    }
    if (t.rows.cells_replaced > 0) {
      std::printf(
          "%s: %llu cell(s) of the source replace another with the same row key, column and "
          "timestamp (compared: the last one, which the store keeps; a migrate exits 8 for "
          "them)\n",
          t.table.c_str(), static_cast<unsigned long long>(t.rows.cells_replaced));
    }
  }
  uint64_t missing = 0, extra = 0, different = 0, rows = 0;
  size_t tables_differ = 0;
  for (const TableVerifyResult& t : v.tables) {
    missing += t.rows.rows_missing;
    extra += t.rows.rows_extra;
    different += t.rows.rows_different;
    rows += t.rows.source_rows;
    if (!t.rows.equal()) ++tables_differ;
  }
  const std::string sample =
      v.sample_every > 1 ? fmt::format(" in a sample of 1 row in {}", v.sample_every) : "";
  if (v.equal()) {
    std::printf("widen verify: %zu table(s) equal to the source (%llu rows%s); %.1f s\n",
                v.tables.size(), static_cast<unsigned long long>(rows), sample.c_str(), v.seconds);
  } else {
    std::printf(
        "widen verify: %zu of %zu table(s) differ from the source%s: %llu row(s) missing, %llu "
        "extra, %llu different; %.1f s\n",
        tables_differ, v.tables.size(), sample.c_str(), static_cast<unsigned long long>(missing),
        static_cast<unsigned long long>(extra), static_cast<unsigned long long>(different),
        v.seconds);
  }
}

void PrintJson(const VerifyResult& v) {
  Json doc;
  doc["widen_verify"] = kVerifyJsonFormat;
  doc["equal"] = v.equal();
  doc["sample"] = v.sample_every;
  Json tables = Json::array();
  RowVerifyStats total;
  uint64_t read = 0, rejected = 0;
  for (const TableVerifyResult& t : v.tables) {
    const RowVerifyStats& r = t.rows;
    read += t.read.source_rows;
    rejected += t.rejected;
    total.source_rows += r.source_rows;
    total.target_rows += r.target_rows;
    total.rows_equal += r.rows_equal;
    total.rows_missing += r.rows_missing;
    total.rows_extra += r.rows_extra;
    total.rows_different += r.rows_different;
    Json j;
    j["table"] = t.table;
    j["equal"] = r.equal();
    j["exists"] = t.exists;
    j["state"] = t.state.empty() ? Json() : Json(t.state);
    if (!t.why_incomplete.empty()) j["incomplete_because"] = t.why_incomplete;
    j["same_design"] = t.same_design;
    j["timestamp_ms"] = t.timestamp_ms;
    j["timestamp_from"] = t.timestamp_from.empty() ? Json() : Json(t.timestamp_from);
    j["source_rows"] = t.read.source_rows;
    j["rows"] = r.source_rows;
    j["target_rows"] = r.target_rows;
    j["rows_equal"] = r.rows_equal;
    j["rows_missing"] = r.rows_missing;
    j["rows_extra"] = r.rows_extra;
    j["rows_different"] = r.rows_different;
    j["cells"] = r.source_cells;
    j["target_cells"] = r.target_cells;
    j["cells_missing"] = r.cells_missing;
    j["cells_extra"] = r.cells_extra;
    j["cells_changed"] = r.cells_changed;
    j["cells_replaced"] = r.cells_replaced;
    j["rejected"] = t.rejected;
    j["first_rejected"] = t.first_rejected;
    Json missing = Json::array(), extra = Json::array(), different = Json::array();
    for (const VerifiedRow& row : t.missing) missing.push_back(RowJson(row, false));
    for (const VerifiedRow& row : t.extra) extra.push_back(RowJson(row, false));
    for (const VerifiedRow& row : t.different) different.push_back(RowJson(row, true));
    j["missing"] = missing;
    j["extra"] = extra;
    j["different"] = different;
    j["seconds"] = t.seconds;
    tables.push_back(std::move(j));
  }
  doc["tables"] = tables;
  doc["source_rows"] = read;
  doc["rows"] = total.source_rows;
  doc["target_rows"] = total.target_rows;
  doc["rows_equal"] = total.rows_equal;
  doc["rows_missing"] = total.rows_missing;
  doc["rows_extra"] = total.rows_extra;
  doc["rows_different"] = total.rows_different;
  doc["rejected"] = rejected;
  doc["seconds"] = v.seconds;
  const std::string text = doc.dump(2, ' ', false, Json::error_handler_t::replace);
  std::printf("%s\n", text.c_str());
}

}  // namespace

int RunVerify(const VerifyOptions& o, const std::atomic<bool>* cancel) {
  ProgressLine progress(o.progress && isatty(STDERR_FILENO));
  VerifyRequest r;
  r.design.mapping_path = o.mapping_path;
  r.design.source_url = o.source_url;
  r.design.only_table = o.only_table;
  r.design.fetch_rows = o.fetch_rows;
  r.target_url = o.target_url;
  r.timestamp_ms = o.timestamp_ms;
  r.sample_every = o.sample;
  r.max_listed = o.limit;
  r.jobs = o.jobs;
  r.cancel = cancel;
  r.progress = [&progress](const TableStats& s) { progress.Update(s); };
  r.table_done = [&progress] { progress.Clear(); };
  auto result = Verify(r);
  if (!result.ok()) {
    std::fprintf(stderr, "widen: %s\n", result.status().message().c_str());
    return ExitCodeFor(result.status());
  }
  if (o.format == "json") {
    PrintJson(*result);
  } else if (!o.quiet) {
    PrintText(*result);
  }
  std::fflush(stdout);
  return result->equal() ? kExitOk : kExitDifferent;
}

CommandRunner AddVerifyCommand(CLI::App* app, const std::atomic<bool>* cancel) {
  auto o = std::make_shared<VerifyOptions>();
  CLI::App* c = app->add_subcommand(
      "verify",
      "Compare the target with the source: rows missing, only in the target, or different "
      "(writes nothing; exit 9 when they differ)");
  c->add_option("-m,--mapping", o->mapping_path, "Mapping YAML file")->required();
  c->add_option("--source", o->source_url, "Source URL, overrides the mapping's 'source'");
  c->add_option("--target", o->target_url, "Target URL, overrides the mapping's 'target'");
  c->add_option("--table", o->only_table, "Verify only this target table (ns:table)");
  CLI::Option* sample =
      c->add_option("--sample", o->sample,
                    "Compare one row in N, chosen by a hash of the row key (default: every row)")
          ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  c->add_flag("--full", o->full, "Compare every row (the default)")->excludes(sample);
  c->add_option("--timestamp-ms", o->timestamp_ms,
                "Timestamp the cells were written with, ms since the epoch (default: the "
                "mapping's timestamp_ms, else the one the table was last loaded with)")
      ->check(CLI::Range(kMinCellTimestampMs, kMaxCellTimestampMs));
  c->add_option("--limit", o->limit, "Rows named per kind of difference and table (default 10)")
      ->check(CLI::Range(0, 1000000));
  c->add_option("--fetch-rows", o->fetch_rows, "Rows fetched per round trip from the source")
      ->check(CLI::Range(1, 1000000));
  c->add_option("-j,--jobs", o->jobs, "Parallel jobs per table, as for migrate (default 1)")
      ->check(CLI::Range(1, 64));
  c->add_option("--format", o->format, "Report format: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  c->add_flag("-q,--quiet", o->quiet,
              "No report: the exit code says it (errors still go to stderr)");
  c->add_flag("--progress", o->progress, "Show a progress line on a terminal");
  return [o, c, cancel]() { return c->parsed() ? RunVerify(*o, cancel) : -1; };
}

}  // namespace widen
