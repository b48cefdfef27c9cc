// widen migrate: mapping -> source -> plan -> assemble -> store, with a
// progress line and a summary table.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "cmd/exit_codes.h"
#include "cmd/report.h"
#include "common/suggest.h"
#include "common/table_descriptor.h"
#include "extract/source.h"
#include "mapping/mapping.h"
#include "store/store.h"
#include "transform/assembler.h"
#include "transform/parallel.h"
#include "transform/plan.h"
#include "transform/split_points.h"

namespace widen {

namespace {

// Writes rejected rows as JSON lines: {"table":..., "row":..., "reason":...}.
class JsonLinesRejects : public RejectHandler {
 public:
  static Result<std::unique_ptr<JsonLinesRejects>> Open(const std::string& path) {
    auto r = std::make_unique<JsonLinesRejects>();
    r->path_ = path;
    r->out_.open(path, std::ios::out | std::ios::trunc);
    if (!r->out_)
      return Status::InvalidArgument(fmt::format("{}: cannot write the rejects file", path));
    return r;
  }
  Status Reject(const std::string& table, const std::string& row_id,
                const std::string& reason) override {
    nlohmann::json j = {{"table", table}, {"row", row_id}, {"reason", reason}};
    out_ << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    if (!out_) return Status::Unavailable(fmt::format("{}: write failed", path_));
    ++count_;
    return Status::OK();
  }
  uint64_t count() const { return count_; }

 private:
  std::string path_;
  std::ofstream out_;
  uint64_t count_ = 0;
};

// Calls `fn` with each scan of one target table — the driving scan, then
// every nest's at any depth — and the mapping place it comes from; stops at
// the first non-OK Status and returns it.
Status ForEachScan(const TablePlan& tp,
                   const std::function<Status(const ScanSpec&, const SourceLocation&)>& fn) {
  WIDEN_RETURN_IF_ERROR(fn(tp.scan, tp.mapping->loc));
  std::vector<const NestPlan*> todo;
  for (const auto& n : tp.nests) todo.push_back(&n);
  while (!todo.empty()) {
    const NestPlan* n = todo.back();
    todo.pop_back();
    WIDEN_RETURN_IF_ERROR(fn(n->scan, n->spec->loc));
    for (const auto& c : n->children) todo.push_back(&c);
  }
  return Status::OK();
}

// Checks the queries of one target table (driving and nested), naming the
// mapping place of the one that fails.
Status CheckScans(const TablePlan& tp, Source* source) {
  return ForEachScan(tp, [&](const ScanSpec& scan, const SourceLocation& loc) {
    Status s = source->CheckScan(scan);
    if (s.ok()) return s;
    return Status(s.code(),
                  fmt::format("{}: table '{}': {}", loc.ToString(), tp.mapping->name, s.message()));
  });
}

// The source tables the plan reads (driving, joined, nested), and whether
// some scan may read tables not named: a free-form query, or a `where` with
// a subquery (any SELECT in its text).
void SourceTables(const Plan& plan, std::vector<std::string>* tables, bool* has_queries) {
  auto add = [&](const ScanSpec& s) {
    if (!s.query.empty()) *has_queries = true;
    std::string where = s.where;
    std::transform(where.begin(), where.end(), where.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (where.find("select") != std::string::npos) *has_queries = true;
    std::vector<std::string> names;
    if (!s.table.empty()) names.push_back(s.table);
    for (const auto& j : s.joins) names.push_back(j.table);
    for (const auto& n : names) {
      if (std::find(tables->begin(), tables->end(), n) == tables->end()) tables->push_back(n);
    }
  };
  for (const TablePlan& tp : plan.tables) {
    (void)ForEachScan(tp, [&](const ScanSpec& scan, const SourceLocation&) {
      add(scan);
      return Status::OK();
    });
  }
}

int Fail(const Status& s) {
  std::fprintf(stderr, "widen: %s\n", s.message().c_str());
  return ExitCodeFor(s);
}

}  // namespace

// Refuses a rejects path that would overwrite the mapping or land inside the
// target store.
Status CheckRejectsPath(const std::string& path, const Mapping& m) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    if (!fs::is_regular_file(path, ec)) {
      return Status::InvalidArgument(fmt::format("--rejects {}: not a regular file", path));
    }
    if (fs::equivalent(path, m.file, ec)) {
      return Status::InvalidArgument(
          fmt::format("--rejects {}: that is the mapping file; give another path", path));
    }
  }
  if (m.target_url.rfind("leveldb:", 0) == 0) {
    const fs::path store = fs::weakly_canonical(m.target_url.substr(8), ec);
    const fs::path rej = fs::weakly_canonical(path, ec);
    auto [s_end, r_it] = std::mismatch(store.begin(), store.end(), rej.begin(), rej.end());
    if (s_end == store.end()) {
      return Status::InvalidArgument(
          fmt::format("--rejects {}: that is inside the target store; give another path", path));
    }
  }
  return Status::OK();
}

int RunMigrate(const MigrateOptions& o, const std::atomic<bool>* cancel) {
  const auto run_start = std::chrono::system_clock::now();
  auto mapping = load_mapping(o.mapping_path);
  if (!mapping.ok()) return Fail(mapping.status());
  Mapping& m = *mapping;
  if (!o.source_url.empty()) {
    m.source_url = o.source_url;
  } else if (!m.source_problem.ok()) {
    return Fail(m.source_problem);
  }
  if (!o.target_url.empty()) {
    m.target_url = o.target_url;
  } else if (!m.target_problem.ok()) {
    return Fail(m.target_problem);
  }
  if (m.target_url.empty()) {
    return Fail(Status::InvalidArgument(
        fmt::format("{}: no target: set 'target' in the mapping or pass --target leveldb:PATH or "
                    "hbase://HOST:PORT",
                    m.file)));
  }
  if (!o.only_table.empty() && m.FindTable(o.only_table) == nullptr) {
    std::vector<std::string> names;
    for (const auto& t : m.tables) names.push_back(t.name);
    return Fail(
        Status::NotFound(fmt::format("--table {}: the mapping {} has no such target table{}",
                                     o.only_table, m.file, DidYouMean(o.only_table, names))));
  }

  // --table: plan (and check) that table alone.
  if (!o.only_table.empty()) {
    std::vector<TableMapping> keep;
    for (auto& t : m.tables) {
      if (t.name == o.only_table) keep.push_back(std::move(t));
    }
    m.tables = std::move(keep);
  }

  SourceOptions so;
  so.fetch_rows = o.fetch_rows;
  auto source = Source::Open(m.source_url, so);
  if (!source.ok()) return Fail(source.status());
  auto schema = (*source)->Introspect();
  if (!schema.ok()) return Fail(schema.status());
  auto plan = Plan::Make(m, *schema, source->get());
  if (!plan.ok()) return Fail(plan.status());

  // Every query must run before anything is created in the target.
  for (const TablePlan& tp : plan->tables) {
    if (!o.only_table.empty() && tp.mapping->name != o.only_table) continue;
    if (Status s = CheckScans(tp, source->get()); !s.ok()) return Fail(s);
  }

  // Parallel jobs: how each table splits (min/max of its split column; the
  // ranges only balance the work, so reading them before the snapshot that
  // the jobs share is fine), then as many more connections on one snapshot
  // as the widest split needs, opened before the target is touched (a user
  // without the rights for it learns it now).
  std::vector<RowSplit> splits;
  size_t widest = 1;
  for (const TablePlan& tp : plan->tables) {
    auto split = SplitRows(tp, source->get(), o.jobs);
    if (!split.ok()) return Fail(split.status());
    widest = std::max(widest, split->ranges.size());
    splits.push_back(std::move(*split));
  }
  std::vector<std::unique_ptr<Source>> siblings;
  std::vector<Source*> sources = {source->get()};
  if (widest > 1) {
    std::vector<std::string> tables;
    bool has_queries = false;
    SourceTables(*plan, &tables, &has_queries);
    auto more = (*source)->OpenSiblings(static_cast<int>(widest) - 1, tables, has_queries);
    // The snapshot lock may have been waited for (up to 10 s) after a Ctrl-C.
    if (cancel != nullptr && cancel->load()) {
      std::fprintf(stderr, "widen: interrupted before anything was written\n");
      return kExitCancelled;
    }
    if (!more.ok()) return Fail(more.status());
    siblings = std::move(*more);
    for (auto& s : siblings) sources.push_back(s.get());
  }

  std::unique_ptr<JsonLinesRejects> rejects;
  if (!o.rejects_path.empty()) {
    if (Status s = CheckRejectsPath(o.rejects_path, m); !s.ok()) return Fail(s);
    auto r = JsonLinesRejects::Open(o.rejects_path);
    if (!r.ok()) return Fail(r.status());
    rejects = std::move(*r);
  }

  StoreOptions sto;
  auto store = Store::Open(m.target_url, sto);
  if (!store.ok()) return Fail(store.status());

  AssembleOptions ao;
  if (o.timestamp_ms) {
    ao.timestamp_ms = *o.timestamp_ms;
  } else if (m.timestamp_ms) {
    ao.timestamp_ms = *m.timestamp_ms;
  } else {
    ao.timestamp_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(run_start.time_since_epoch()).count();
  }
  ao.rejects = rejects.get();
  ProgressLine progress(!o.quiet && isatty(STDERR_FILENO));
  ao.progress = [&progress](const TableStats& s) { progress.Update(s); };

  // Every table is created (or checked) before any is written, and marked
  // incomplete until its run ends.
  for (const TablePlan& tp : plan->tables) {
    // A salted key pre-splits at its buckets (no source read); other split
    // points come from `widen ddl --apply --regions N` before the run.
    TableDescriptor d = tp.descriptor;
    auto split = ComputeSplitPoints(tp, source->get(), SplitOptions());
    if (!split.ok()) return Fail(split.status());
    d.split_points = split->points;
    Status s = (*store)->CreateTable(d);
    if (s.ok()) s = (*store)->SetTableMetadata(tp.descriptor.FullName(), kStateMetadata, "loading");
    if (!s.ok()) return Fail(s);
  }
  ao.cancel = cancel;

  std::vector<TableStats> all;
  std::vector<std::string> job_notes;  // how each table was split (--jobs)
  for (size_t i = 0; i < plan->tables.size(); ++i) {
    const TablePlan& tp = plan->tables[i];
    const RowSplit& split = splits[i];
    const std::string name = tp.descriptor.FullName();
    TableStats stats;
    stats.table = name;
    Status s = RunJobs(
        tp, split.ranges, sources, [&]() { return (*store)->NewSink(name); }, ao, &stats);
    if (split.ranges.size() > 1) {
      job_notes.push_back(fmt::format("{}: {} jobs, by ranges of {}{}", name, split.ranges.size(),
                                      split.column,
                                      KeyFollowsSplit(tp) ? ", written in key order" : ""));
    } else if (!split.why_not.empty()) {
      job_notes.push_back(fmt::format("{}: one job: {}", name, split.why_not));
    }
    if (s.ok())
      s = (*store)->SetTableMetadata(tp.descriptor.FullName(), kStateMetadata, "complete");
    progress.Clear();
    if (s.code() == StatusCode::kCancelled) {
      std::fprintf(stderr,
                   "widen: interrupted: table '%s' is left incomplete after %llu rows (widen scan "
                   "warns about it); run the migration again\n",
                   tp.descriptor.FullName().c_str(), static_cast<unsigned long long>(stats.rows));
      return kExitCancelled;
    }
    if (!s.ok()) return Fail(s);
    all.push_back(stats);
  }
  if (!o.quiet) {
    PrintSummary(all, stdout);
    for (const auto& n : job_notes) std::fprintf(stdout, "%s\n", n.c_str());
    PrintTableNotes(all, stdout);
    if (rejects && rejects->count() > 0) {
      std::fprintf(stdout, "%llu row(s) rejected; see %s\n",
                   static_cast<unsigned long long>(rejects->count()), o.rejects_path.c_str());
    }
  }
  // Cells that replaced others of this run lost data: never silent, not
  // even with --quiet.
  int replaced_exit = kExitOk;
  for (const auto& t : all) {
    if (t.overwritten == 0) continue;
    std::fprintf(stderr,
                 "widen: table '%s': %llu cell(s) replaced another cell of this run with the same "
                 "row key, column and timestamp, whose value is lost; the first: %s. Make the row "
                 "key (or the nest ids and prefixes) identify the source rows; widen lint and "
                 "widen plan --full find such designs\n",
                 t.table.c_str(), static_cast<unsigned long long>(t.overwritten),
                 t.first_overwritten.c_str());
    replaced_exit = kExitReplaced;
  }
  if (replaced_exit != kExitOk) return replaced_exit;
  return kExitOk;
}

}  // namespace widen
