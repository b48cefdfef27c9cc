#include "transform/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "common/cell_spool.h"
#include "extract/source_stats.h"

namespace widen {

namespace {

// Serialises the jobs' calls into the caller's RejectHandler.
class LockedRejects : public RejectHandler {
 public:
  LockedRejects(RejectHandler* inner, std::mutex* mu) : inner_(inner), mu_(mu) {}
  Status Reject(const std::string& table, const std::string& row_id,
                const std::string& reason) override {
    std::lock_guard<std::mutex> lock(*mu_);
    return inner_->Reject(table, row_id, reason);
  }

 private:
  RejectHandler* inner_;
  std::mutex* mu_;
};

}  // namespace

Result<SplitBounds> ReadSplitBounds(const TablePlan& plan, Source* source) {
  SplitBounds out;
  std::optional<ColumnExpr> column = SplitColumn(plan);
  if (!column) {
    out.why_not = plan.scan.query.empty()
                      ? "the driving table has no primary key to split its rows by"
                      : "a free-form query without nests has no key to split its rows by";
    return out;
  }
  const std::string name = column->alias + "." + column->column;
  // The driving table (or query) alone: no joins or filters, so that the
  // server answers min/max from an index where the column has one.
  ScanSpec bare;
  bare.table = plan.scan.table;
  bare.query = plan.scan.query;
  bare.alias = plan.scan.alias;
  WIDEN_ASSIGN_OR_RETURN(ColumnSummary sum, source->stats().SummarizeColumn(bare, *column));
  if (sum.min.is_null() || sum.max.is_null()) {
    out.why_not = fmt::format("{} has no values", name);
    return out;
  }
  // Signed or unsigned (MySQL BIGINT UNSIGNED) integers; bounds are int64,
  // and the last range is open above, so values past INT64_MAX are read too.
  auto as_wide = [](const Value& v, __int128* out) {
    if (v.type() == ValueType::kInt) {
      *out = v.as_int();
      return true;
    }
    if (v.type() == ValueType::kUInt) {
      *out = v.as_uint();
      return true;
    }
    return false;
  };
  __int128 lo = 0, hi = 0;
  if (!as_wide(sum.min, &lo) || !as_wide(sum.max, &hi)) {
    out.why_not = fmt::format("{} is not an integer column (ranges are split on integers)", name);
    return out;
  }
  if (lo > INT64_MAX) {
    out.why_not = fmt::format("{} holds only values above 2^63 - 1", name);
    return out;
  }
  out.column = name;
  out.min = static_cast<int64_t>(lo);
  out.max = static_cast<int64_t>(std::min<__int128>(hi, INT64_MAX));
  return out;
}

int64_t SliceBound(const SplitBounds& bounds, int parts, int k) {
  return static_cast<int64_t>(bounds.min + bounds.span() * k / parts);
}

RowSplit SliceRows(const TablePlan& plan, const SplitBounds& bounds, int parts, int first,
                   int count) {
  RowSplit split;
  split.column = bounds.column;
  auto bound = [&](int k) { return SliceBound(bounds, parts, k); };
  for (int k = first; k < first + count; ++k) {
    RowRange r;
    if (k > 0) r.lo = bound(k);
    if (k < parts - 1) r.hi = bound(k + 1);
    r.with_null = k == parts - 1;
    split.ranges.push_back(r);
  }
  split.in_key_order = count > 1 && KeyFollowsSplit(plan);
  return split;
}

Result<RowSplit> SplitRows(const TablePlan& plan, Source* source, int jobs, int cores) {
  RowSplit one;
  one.ranges.resize(1);
  if (jobs < 2) return one;
  std::string fewer;
  if (cores > 0 && jobs > std::max(1, cores / 2)) {
    fewer = fmt::format(
        "{} core{} for this run (WIDEN_CORES, else the cores the process may use), and each job "
        "keeps about two busy (reading and encoding; writing, with the store's compaction) beside "
        "the database server: more jobs would take longer",
        cores, cores == 1 ? "" : "s");
    jobs = std::max(1, cores / 2);
    if (jobs < 2) {
      one.why_not = fewer;
      return one;
    }
  }
  WIDEN_ASSIGN_OR_RETURN(SplitBounds bounds, ReadSplitBounds(plan, source));
  if (bounds.column.empty()) {
    one.why_not = bounds.why_not;
    return one;
  }
  if (bounds.span() < jobs) {
    one.why_not = fmt::format("{} has fewer distinct values than jobs", bounds.column);
    return one;
  }
  RowSplit split = SliceRows(plan, bounds, jobs, 0, jobs);
  split.why_not = fewer;
  return split;
}

bool KeyFollowsSplit(const TablePlan& plan) {
  std::optional<ColumnExpr> column = SplitColumn(plan);
  const KeyCodec& key = plan.key;
  if (!column || key.salt().size > 0 || key.hash_prefix().size > 0 || key.parts().empty()) {
    return false;
  }
  const KeyPartPlan& first = key.parts().front();
  if (first.is_literal || first.desc || first.reverse) return false;
  const auto& cols = plan.scan.columns;
  return first.index < cols.size() && cols[first.index].alias == column->alias &&
         cols[first.index].column == column->column;
}

Status RunJobs(const TablePlan& plan, const RowSplit& split, const std::vector<Source*>& sources,
               const SinkFactory& new_sink, const AssembleOptions& options, TableStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  *stats = TableStats{};
  stats->table = plan.descriptor.FullName();
  const std::vector<RowRange>& ranges = split.ranges;
  const size_t n = ranges.size();
  if (n == 0 || sources.size() < n) {
    return Status::Internal(
        fmt::format("table '{}': {} ranges for {} sources", stats->table, n, sources.size()));
  }

  struct Job {
    std::unique_ptr<CellSink> sink;
    std::unique_ptr<CellSpool> spool;  // ordered writes: where jobs after the first put cells
    std::unique_ptr<RunsSink> sorter;  // other keys: where every job puts cells
    TableStats stats;
    Status status;
  };
  std::vector<Job> jobs(n);
  // When row keys do not follow the ranges, every job sorts its cells into
  // runs of its own, merged after the jobs (equal cells in range order, as
  // one job would write them) through one sink: the store gets one stream
  // in key order, and replaced cells between jobs are seen.
  const bool ordered = n > 1 && split.in_key_order;
  const bool sorted = n > 1 && !ordered;
  std::vector<std::shared_ptr<CellRuns>> job_runs;
  for (size_t i = 0; i < n; ++i) {
    if (!sorted || i == 0) {
      WIDEN_ASSIGN_OR_RETURN(jobs[i].sink, new_sink());
      jobs[i].sink->SetCancel(options.cancel);
    }
    if (sorted) {
      job_runs.push_back(std::make_shared<CellRuns>());
      jobs[i].sorter = std::make_unique<RunsSink>(job_runs.back());
    }
  }
  // When row keys sort like the ranges, the store gets the cells in key
  // order, as from one job: the first job writes, the others spool, and the
  // spools are written after it in range order. (Interleaved writers would
  // turn LevelDB's cheap moves of key-ordered files into compactions that
  // rewrite the data.)
  if (ordered) {
    for (size_t i = 1; i < n; ++i) {
      WIDEN_ASSIGN_OR_RETURN(jobs[i].spool, CellSpool::Open());
    }
  }

  auto finish = [&](Job* j) {
    if (j->spool != nullptr || j->sorter != nullptr) {
      Status closed = j->spool != nullptr ? j->spool->Close() : j->sorter->Close();
      if (j->status.ok()) j->status = closed;
      return;  // the sink is written and closed after the jobs
    }
    if (j->status.code() == StatusCode::kCancelled) return;  // left incomplete anyway
    Status closed = j->sink->Close();
    if (j->status.ok()) j->status = closed;
    AddSinkStats(j->sink->stats(), &j->stats);
  };

  if (n == 1) {
    AssembleOptions o = options;
    const RowRange& r = ranges.front();
    if (r.lo || r.hi) o.range = r;
    jobs[0].status = Assemble(plan, sources[0], jobs[0].sink.get(), o, &jobs[0].stats);
    finish(&jobs[0]);  // writes what the sink holds (the external sort's merge included)
    *stats = jobs[0].stats;
    stats->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return jobs[0].status;
  }

  std::mutex mu;  // guards latest, done, first_error and calls into the caller's hooks
  std::condition_variable cv;
  std::atomic<bool> stop{false};
  std::vector<TableStats> latest(n);
  size_t done = 0;
  Status first_error;
  LockedRejects rejects(options.rejects, &mu);

  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      AssembleOptions o = options;
      o.range = ranges[i];
      o.cancel = &stop;
      if (options.rejects != nullptr) o.rejects = &rejects;
      if (options.progress) {
        o.progress = [&, i](const TableStats& s) {
          std::lock_guard<std::mutex> lock(mu);
          latest[i] = s;
          TableStats sum;
          sum.table = s.table;
          for (const auto& l : latest) sum.Add(l);
          options.progress(sum);
        };
      }
      Job& j = jobs[i];
      CellSink* out = j.spool != nullptr    ? static_cast<CellSink*>(j.spool.get())
                      : j.sorter != nullptr ? static_cast<CellSink*>(j.sorter.get())
                                            : j.sink.get();
      j.status = Assemble(plan, sources[i], out, o, &j.stats);
      finish(&j);
      std::lock_guard<std::mutex> lock(mu);
      if (!j.status.ok()) {
        stop = true;
        if (first_error.ok() && j.status.code() != StatusCode::kCancelled) first_error = j.status;
      }
      ++done;
      cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    while (done < n) {
      cv.wait_for(lock, std::chrono::milliseconds(100));
      if (options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed)) stop = true;
    }
  }
  for (auto& t : threads) t.join();

  if (ordered && first_error.ok() && !stop) {
    for (size_t i = 1; i < n && first_error.ok(); ++i) {
      Job& j = jobs[i];
      Status s = j.spool->Replay(j.sink.get(), options.cancel);
      if (s.ok()) s = j.sink->Close();
      AddSinkStats(j.sink->stats(), &j.stats);
      j.spool.reset();
      if (!s.ok()) {
        if (s.code() == StatusCode::kCancelled) {
          j.status = s;
          break;
        } else {
          first_error = s;
        }
      }
    }
  }

  if (sorted && first_error.ok() && !stop) {
    // One merge of every job's runs, in range order, through the first job's sink.
    CellSink* sink = jobs[0].sink.get();
    std::vector<CellRuns*> sets;
    for (const auto& r : job_runs) sets.push_back(r.get());
    Status s = CellRuns::MergeAll(
        sets, [sink](const CellView& c, bool) { return sink->Put(c); }, options.cancel);
    if (s.ok()) s = sink->Close();
    AddSinkStats(sink->stats(), &jobs[0].stats);
    for (const auto& r : job_runs) {
      jobs[0].stats.sort_runs += r->runs_written();
      jobs[0].stats.sort_bytes += r->bytes_written();
    }
    if (s.code() == StatusCode::kCancelled) {
      jobs[0].status = s;
    } else if (!s.ok()) {
      first_error = s;
    }
  }

  for (const auto& j : jobs) stats->Add(j.stats);
  stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!first_error.ok()) return first_error;
  for (const auto& j : jobs) {
    if (!j.status.ok()) return j.status;  // Cancelled
  }
  return Status::OK();
}

}  // namespace widen
