#include "transform/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include <fmt/format.h>

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

void Add(const TableStats& s, TableStats* sum) {
  sum->source_rows += s.source_rows;
  sum->rows += s.rows;
  sum->cells += s.cells;
  sum->bytes += s.bytes;
  sum->rejected += s.rejected;
  sum->orphans += s.orphans;
  sum->empty_rows += s.empty_rows;
  sum->overwritten += s.overwritten;
}

}  // namespace

Result<RowSplit> SplitRows(const TablePlan& plan, Source* source, int jobs) {
  RowSplit one;
  one.ranges.resize(1);
  if (jobs < 2) return one;
  std::optional<ColumnExpr> column = SplitColumn(plan);
  if (!column) {
    one.why_not = plan.scan.query.empty()
                      ? "the driving table has no primary key to split its rows by"
                      : "a free-form query without nests has no key to split its rows by";
    return one;
  }
  const std::string name = column->alias + "." + column->column;
  // The driving table (or query) alone: no joins or filters, so that the
  // server answers min/max from an index where the column has one.
  ScanSpec bare;
  bare.table = plan.scan.table;
  bare.query = plan.scan.query;
  bare.alias = plan.scan.alias;
  WIDEN_ASSIGN_OR_RETURN(ColumnSummary sum, source->SummarizeColumn(bare, *column));
  if (sum.min.is_null() || sum.max.is_null()) {
    one.why_not = fmt::format("{} has no values", name);
    return one;
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
    one.why_not = fmt::format("{} is not an integer column (ranges are split on integers)", name);
    return one;
  }
  if (lo > INT64_MAX) {
    one.why_not = fmt::format("{} holds only values above 2^63 - 1", name);
    return one;
  }
  hi = std::min<__int128>(hi, INT64_MAX);
  const __int128 span = hi - lo + 1;
  if (span < jobs) {
    one.why_not = fmt::format("{} has fewer distinct values than jobs", name);
    return one;
  }
  RowSplit split;
  split.column = name;
  std::vector<RowRange>& ranges = split.ranges;
  ranges.resize(static_cast<size_t>(jobs));
  for (int i = 1; i < jobs; ++i) {
    const auto bound = static_cast<int64_t>(lo + span * i / jobs);
    ranges[i - 1].hi = bound;
    ranges[i].lo = bound;
  }
  ranges.back().with_null = true;
  return split;
}

Status RunJobs(const TablePlan& plan, const std::vector<RowRange>& ranges,
               const std::vector<Source*>& sources, const SinkFactory& new_sink,
               const AssembleOptions& options, TableStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  *stats = TableStats{};
  stats->table = plan.descriptor.FullName();
  const size_t n = ranges.size();
  if (n == 0 || sources.size() < n) {
    return Status::Internal(
        fmt::format("table '{}': {} ranges for {} sources", stats->table, n, sources.size()));
  }

  struct Job {
    std::unique_ptr<CellSink> sink;
    TableStats stats;
    Status status;
  };
  std::vector<Job> jobs(n);
  for (auto& j : jobs) {
    WIDEN_ASSIGN_OR_RETURN(j.sink, new_sink());
  }

  auto finish = [&](Job* j) {
    Status closed = j->sink->Close();
    if (j->status.ok()) j->status = closed;
    j->stats.overwritten = j->sink->stats().overwritten;
  };

  if (n == 1) {
    AssembleOptions o = options;
    const RowRange& r = ranges.front();
    if (r.lo || r.hi) o.range = r;
    jobs[0].status = Assemble(plan, sources[0], jobs[0].sink.get(), o, &jobs[0].stats);
    finish(&jobs[0]);
    *stats = jobs[0].stats;
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
          for (const auto& l : latest) Add(l, &sum);
          options.progress(sum);
        };
      }
      Job& j = jobs[i];
      j.status = Assemble(plan, sources[i], j.sink.get(), o, &j.stats);
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

  for (const auto& j : jobs) Add(j.stats, stats);
  stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!first_error.ok()) return first_error;
  for (const auto& j : jobs) {
    if (!j.status.ok()) return j.status;  // Cancelled
  }
  return Status::OK();
}

}  // namespace widen
