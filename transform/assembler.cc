#include "transform/assembler.h"

#include "transform/cell_timestamp.h"
#include "transform/value_codec.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/cell_check.h"
#include "common/cell_runs.h"

namespace widen {

namespace {

// A row whose cells take more than this (bytes, an estimate including the
// bookkeeping per cell) is sorted in runs spilled to temporary files rather
// than in memory: memory stays bounded however many children one parent has.
constexpr size_t kRowSpillBytes = 8 << 20;
constexpr size_t kPendingCellOverhead = 128;  // three strings and a timestamp

int CompareKeys(const Row& a, const std::vector<size_t>& ai, const Row& b,
                const std::vector<size_t>& bi) {
  for (size_t i = 0; i < ai.size(); ++i) {
    int c = CompareValues(a[ai[i]], b[bi[i]]);
    if (c != 0) return c;
  }
  return 0;
}

bool AnyNull(const Row& r, const std::vector<size_t>& idx) {
  for (size_t i : idx) {
    if (r[i].is_null()) return true;
  }
  return false;
}

std::string DescribeKey(const Row& r, const std::vector<size_t>& idx) {
  std::string s;
  for (size_t i = 0; i < idx.size(); ++i) {
    if (i) s += ", ";
    s += r[idx[i]].DebugString();
  }
  return s;
}

// A child stream being merged with its parent's, and its own children.
struct Child {
  const NestPlan* plan = nullptr;
  std::unique_ptr<RowStream> stream;
  Row prev;
  bool has_prev = false;
  std::vector<Child> kids;
};

class TableAssembler {
 public:
  TableAssembler(const TablePlan& plan, Source* source, CellSink* sink,
                 const AssembleOptions& options, TableStats* stats)
      : plan_(plan), source_(source), sink_(sink), options_(options), stats_(stats) {}

  Status Run() {
    ScanSpec scan = plan_.scan;
    if (options_.range) {
      std::optional<ColumnExpr> col = SplitColumn(plan_);
      if (!col) {
        return Status::Internal(
            fmt::format("table '{}': no column to split the rows by", plan_.descriptor.FullName()));
      }
      scan.range = Range(*col, true);
    }
    WIDEN_ASSIGN_OR_RETURN(auto rows, source_->Scan(scan));
    for (const auto& n : plan_.nests) {
      children_.emplace_back();
      WIDEN_RETURN_IF_ERROR(OpenChild(n, &children_.back()));
    }
    bool have_prev_parent = false;
    Row prev_parent;
    uint64_t driving_rows = 0;
    for (; rows->Valid(); rows->Next()) {
      if (options_.max_driving_rows > 0 && driving_rows++ == options_.max_driving_rows) {
        return Status::OK();  // a sample: the rest is not read
      }
      if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
        return Status::Cancelled("interrupted");
      }
      const Row& row = rows->row();
      ++stats_->source_rows;
      if (!plan_.nests.empty()) {
        const NestPlan& first = plan_.nests.front();
        const auto& pk = first.parent_key;
        if (have_prev_parent && !AnyNull(row, pk) && !AnyNull(prev_parent, pk)) {
          int c = CompareKeys(prev_parent, pk, row, pk);
          if (c > 0) return OutOfOrder("driving", plan_.scan.alias, row, first.parent_values);
          if (c == 0) return Repeated(plan_.scan.alias, row, prev_parent, first.parent_values);
        }
        prev_parent = row;
        have_prev_parent = true;
      }
      WIDEN_RETURN_IF_ERROR(EmitRow(row));
      if (options_.progress && stats_->rows % options_.progress_rows == 0) {
        options_.progress(*stats_);
      }
    }
    WIDEN_RETURN_IF_ERROR(rows->status());
    // Children past the last parent are orphans; read them to count them.
    for (auto& ch : children_) WIDEN_RETURN_IF_ERROR(Drain(&ch));
    return Status::OK();
  }

 private:
  // The job's range over `column` (NULLs only in the driving scan's range:
  // nested scans leave NULL links out).
  ScanRange Range(const ColumnExpr& column, bool driving) const {
    ScanRange r;
    r.column = column;
    if (options_.range->lo) r.lo = Value::Int(*options_.range->lo);
    if (options_.range->hi) r.hi = Value::Int(*options_.range->hi);
    r.with_null = driving && options_.range->with_null;
    return r;
  }

  Status OpenChild(const NestPlan& n, Child* ch) {
    ch->plan = &n;
    if (options_.range) {
      // Every nested scan links first to the top-level parent, whose first
      // column is the split column: the range of the child's own (integer)
      // column holds the children of the parents in the range, and the
      // children without a parent, which are counted once whatever the job.
      ScanSpec scan = n.scan;
      scan.range = Range(n.scan.merge.front().on.front().first, false);
      WIDEN_ASSIGN_OR_RETURN(ch->stream, source_->Scan(scan));
    } else {
      WIDEN_ASSIGN_OR_RETURN(ch->stream, source_->Scan(n.scan));
    }
    for (const auto& g : n.children) {
      ch->kids.emplace_back();
      WIDEN_RETURN_IF_ERROR(OpenChild(g, &ch->kids.back()));
    }
    return Status::OK();
  }

  Status Drain(Child* ch) {
    for (; ch->stream->Valid(); ch->stream->Next()) {
      ++stats_->source_rows;
      ++stats_->orphans;
    }
    WIDEN_RETURN_IF_ERROR(ch->stream->status());
    for (auto& k : ch->kids) WIDEN_RETURN_IF_ERROR(Drain(&k));
    return Status::OK();
  }

  std::string RowId(const Row& row) const { return SourceRowId(plan_, row); }

  Status Reject(const Row& row, const std::string& reason) {
    if (options_.rejects == nullptr) {
      return Status::InvalidArgument(fmt::format("table '{}': source row {} of '{}': {}",
                                                 plan_.descriptor.FullName(), RowId(row),
                                                 plan_.scan.alias, reason));
    }
    ++stats_->rejected;
    return options_.rejects->Reject(plan_.descriptor.FullName(), RowId(row), reason);
  }

  // Two rows of `table` share the link columns `key` that nested rows merge
  // on (a view or query, whose keys the plan cannot check).
  // Two rows of `table` whose nest link is equal as the database compares
  // it: their nested rows cannot be told apart. `shown`: the link's values.
  Status Repeated(const std::string& table, const Row& row, const Row& before,
                  const std::vector<size_t>& shown) {
    const std::string now = DescribeKey(row, shown);
    const std::string then = DescribeKey(before, shown);
    return Status::InvalidArgument(fmt::format(
        "table '{}': two rows of '{}' repeat the nest link value ({}{}), so their nested rows "
        "cannot be told apart; nest on columns that identify one row of '{}'",
        plan_.descriptor.FullName(), table, now,
        now == then ? "" : ", equal to " + then + " as the database compares them", table));
  }

  Status OutOfOrder(const char* which, const std::string& table, const Row& row,
                    const std::vector<size_t>& key) {
    return Status::Internal(fmt::format(
        "table '{}': the {} rows of '{}' arrived out of order at key ({}); the source's sort "
        "order differs from widen's comparison, so nesting cannot be merged safely",
        plan_.descriptor.FullName(), which, table, DescribeKey(row, key)));
  }

  // Buffers one cell of the current row; the strings keep their capacity
  // from row to row, so steady state does not allocate. A row grown past
  // kRowSpillBytes is spilled first (see SpillPending).
  std::string* Put(std::string_view family, int64_t timestamp_ms) {
    if (pending_n_ > 0) {
      const PendingCell& last = pending_[pending_n_ - 1];
      pending_bytes_ +=
          last.family.size() + last.qualifier.size() + last.value.size() + kPendingCellOverhead;
      if (pending_bytes_ > kRowSpillBytes && spill_status_.ok()) spill_status_ = SpillPending();
    }
    if (pending_n_ == pending_.size()) pending_.emplace_back();
    PendingCell& p = pending_[pending_n_++];
    p.family.assign(family);
    p.timestamp_ms = timestamp_ms;
    p.qualifier.clear();
    p.value.clear();
    return &p.qualifier;
  }
  std::string* value() { return &pending_[pending_n_ - 1].value; }

  // Sorts pending_ in HBase cell order into order_ (equal cells keep the
  // order they were built in).
  void SortPending() {
    order_.resize(pending_n_);
    for (size_t i = 0; i < pending_n_; ++i) order_[i] = i;
    std::sort(order_.begin(), order_.end(), [this](size_t a, size_t b) {
      const PendingCell& x = pending_[a];
      const PendingCell& y = pending_[b];
      if (int c = x.family.compare(y.family)) return c < 0;
      if (int c = x.qualifier.compare(y.qualifier)) return c < 0;
      if (x.timestamp_ms != y.timestamp_ms) return x.timestamp_ms > y.timestamp_ms;
      return a < b;
    });
  }

  // Two cells of the current source row with the same coordinates: the
  // later replaces the earlier, as in the store; counted and named.
  void Replaced(std::string_view family, std::string_view qualifier, int64_t timestamp_ms) {
    ++stats_->overwritten;
    if (options_.on_replaced) options_.on_replaced(key_, family, qualifier, timestamp_ms);
    if (!stats_->first_overwritten.empty()) return;
    stats_->first_overwritten = fmt::format(
        "row '{}', column {}:{}, timestamp {}: source row {} of '{}' gives this cell more than "
        "once (the last one is kept)",
        ToStringBinary(key_), family, ToStringBinary(qualifier), timestamp_ms, RowId(*row_),
        plan_.scan.alias);
  }

  // Moves the row's pending cells, sorted, into a run of row_runs_.
  Status SpillPending() {
    if (pending_n_ == 0) return Status::OK();
    if (!row_runs_) row_runs_ = std::make_unique<CellRuns>();
    SortPending();
    CellBatch batch;
    for (size_t n = 0; n < order_.size(); ++n) {
      const PendingCell& p = pending_[order_[n]];
      batch.Add(key_, p.family, p.qualifier, p.timestamp_ms, p.value);
    }
    pending_n_ = 0;
    pending_bytes_ = 0;
    return row_runs_->Add(batch);
  }

  // Puts one cell of the current row into the sink.
  Status PutCell(std::string_view family, std::string_view qualifier, int64_t timestamp_ms,
                 std::string_view value) {
    CellView cell{key_, family, qualifier, timestamp_ms, CellType::kPut, value};
    WIDEN_RETURN_IF_ERROR(sink_->Put(cell));
    ++stats_->cells;
    stats_->bytes += key_.size() + family.size() + qualifier.size() + value.size();
    return Status::OK();
  }

  // Puts the row's cells into the sink in HBase order, the later of equal
  // cells only: from pending_, or merged from the spilled runs.
  Status PutRow() {
    if (!row_runs_) {
      SortPending();
      for (size_t n = 0; n < order_.size(); ++n) {
        const PendingCell& p = pending_[order_[n]];
        if (n + 1 < order_.size()) {
          const PendingCell& q = pending_[order_[n + 1]];
          if (p.timestamp_ms == q.timestamp_ms && p.qualifier == q.qualifier &&
              p.family == q.family) {
            Replaced(p.family, p.qualifier, p.timestamp_ms);
            continue;
          }
        }
        WIDEN_RETURN_IF_ERROR(PutCell(p.family, p.qualifier, p.timestamp_ms, p.value));
      }
      return Status::OK();
    }
    WIDEN_RETURN_IF_ERROR(SpillPending());
    std::unique_ptr<CellRuns> runs = std::move(row_runs_);
    bool held = false;
    PendingCell prev;
    Status s = runs->Merge(
        [&](const CellView& c, bool) {
          if (held) {
            if (c.timestamp_ms == prev.timestamp_ms && c.qualifier == prev.qualifier &&
                c.family == prev.family) {
              Replaced(c.family, c.qualifier, c.timestamp_ms);
            } else {
              WIDEN_RETURN_IF_ERROR(
                  PutCell(prev.family, prev.qualifier, prev.timestamp_ms, prev.value));
            }
          }
          prev.family.assign(c.family);
          prev.qualifier.assign(c.qualifier);
          prev.value.assign(c.value);
          prev.timestamp_ms = c.timestamp_ms;
          held = true;
          return Status::OK();
        },
        options_.cancel);
    if (s.ok() && held) s = PutCell(prev.family, prev.qualifier, prev.timestamp_ms, prev.value);
    return s;
  }

  Status EmitRow(const Row& row) {
    key_.clear();
    pending_n_ = 0;
    pending_bytes_ = 0;
    row_runs_.reset();
    spill_status_ = Status::OK();
    row_ = &row;
    std::string reason;
    Status s = BuildRow(row, &reason);
    if (s.ok()) s = spill_status_;
    if (!s.ok()) return s;
    if (!reason.empty()) {
      row_runs_.reset();  // the row's spilled cells go with it
      WIDEN_RETURN_IF_ERROR(Reject(row, reason));
      return SkipChildren(row);
    }
    if (pending_n_ == 0 && !row_runs_) {
      ++stats_->empty_rows;  // no cell: HBase has no such row
      if (stats_->first_empty_row.empty()) stats_->first_empty_row = RowId(row);
      return Status::OK();
    }
    if (options_.on_row) WIDEN_RETURN_IF_ERROR(options_.on_row(key_, row_ts_, row));
    // Cells of one row go out in HBase order, so that a sink fed rows in key
    // order receives sorted batches and need not sort them.
    WIDEN_RETURN_IF_ERROR(PutRow());
    ++stats_->rows;
    return Status::OK();
  }

  // Builds the key and every cell of `row` into pending_. A reason to reject
  // the row goes to *reason (cells are then discarded); a non-OK Status stops
  // the run.
  Status BuildRow(const Row& row, std::string* reason) {
    if (Status s = plan_.key.Encode(row, &key_); !s.ok()) {
      *reason = s.message();
      return Status::OK();
    }
    if (key_.empty() || key_.size() > kMaxRowKeyBytes) {
      *reason =
          fmt::format("the row key is {} bytes; HBase takes 1 to {}", key_.size(), kMaxRowKeyBytes);
      return Status::OK();
    }
    int64_t row_ts = options_.timestamp_ms;
    std::string why;
    if (plan_.version_index >= 0 && !CellTimestampMs(row[plan_.version_index], &row_ts, &why)) {
      *reason = fmt::format("version column {} is {}",
                            plan_.scan.columns[plan_.version_index].column, why);
      return Status::OK();
    }
    row_ts_ = row_ts;
    for (const CellPlan& c : plan_.cells) {
      const Value& v = row[c.index];
      int64_t ts = row_ts;
      if (c.version_index >= 0 && !CellTimestampMs(row[c.version_index], &ts, &why)) {
        *reason = fmt::format("version column {} of {} is {}",
                              plan_.scan.columns[c.version_index].column, c.column, why);
        return Status::OK();
      }
      if (v.is_null()) {
        if (c.on_null == NullPolicy::kOmit) continue;
        if (c.on_null == NullPolicy::kReject) {
          *reason = fmt::format("column {} is NULL", c.column);
          return Status::OK();
        }
        Put(c.family, ts)->assign(c.qualifier);
        continue;
      }
      Put(c.family, ts)->assign(c.qualifier);
      if (Status s = EncodeValue(c.codec, v, value()); !s.ok()) {
        *reason = fmt::format("column {}: {}", c.column, s.message());
        return Status::OK();
      }
    }
    for (auto& ch : children_) {
      WIDEN_RETURN_IF_ERROR(EmitChildren(row, &ch, std::string_view(), row_ts));
    }
    return Status::OK();
  }

  // Advances the child streams past the children of a rejected parent row;
  // children before them (of no parent) count as orphans, as EmitChildren
  // counts them, so the counts do not depend on where a job's range ends.
  Status SkipChildren(const Row& row) {
    for (auto& ch : children_) WIDEN_RETURN_IF_ERROR(SkipUnder(row, &ch));
    return Status::OK();
  }

  // Advances ch's stream past the children of `parent` (and theirs), which
  // go with a rejected parent.
  Status SkipUnder(const Row& parent, Child* ch) {
    const NestPlan& n = *ch->plan;
    if (AnyNull(parent, n.parent_key)) return Status::OK();
    while (ch->stream->Valid()) {
      const Row& r = ch->stream->row();
      const int c = CompareKeys(r, n.child_key, parent, n.parent_key);
      if (c > 0) break;
      ++stats_->source_rows;
      if (c < 0) {
        ++stats_->orphans;
      } else {
        for (auto& k : ch->kids) WIDEN_RETURN_IF_ERROR(SkipUnder(r, &k));
      }
      ch->stream->Next();
    }
    return ch->stream->status();
  }

  // "track (album_id=1, track_no=12) in source row album_id=1 of 'album'":
  // a nested row by its primary key (else its id parts) and its driving row.
  std::string ChildId(const NestPlan& n, const Row& child) const {
    std::string s;
    for (const auto& [name, idx] : n.identity) {
      if (!s.empty()) s += ", ";
      s += name + "=" + child[idx].DebugString();
    }
    if (s.empty()) {
      for (const auto& p : n.qualifier.parts()) {
        if (p.is_literal) continue;
        if (!s.empty()) s += ", ";
        s += p.name + "=" + child[p.index].DebugString();
      }
    }
    return fmt::format("{} ({}) in source row {} of '{}'", n.scan.table, s, RowId(*row_),
                       plan_.scan.alias);
  }

  // A nested row that cannot be encoded: it alone is rejected (its own
  // children go with it); without a RejectHandler the run stops naming it.
  Status RejectChild(const NestPlan& n, const Row& child, const std::string& reason) {
    const std::string id = ChildId(n, child);
    if (options_.rejects == nullptr) {
      return Status::InvalidArgument(
          fmt::format("table '{}': nested row {}: {}", plan_.descriptor.FullName(), id, reason));
    }
    ++stats_->rejected;
    return options_.rejects->Reject(plan_.descriptor.FullName(), id, reason);
  }

  // Emits the children of `parent` from ch's stream: one cell each (or one
  // per attribute), under qualifier `outer` + prefix + id, then their own
  // children. A child that cannot be encoded is rejected alone (RejectChild).
  Status EmitChildren(const Row& parent, Child* ch, std::string_view outer, int64_t row_ts) {
    const NestPlan& n = *ch->plan;
    if (AnyNull(parent, n.parent_key)) return Status::OK();
    RowStream* s = ch->stream.get();
    std::string qualifier;
    while (s->Valid()) {
      const Row& child = s->row();
      if (ch->has_prev && CompareKeys(ch->prev, n.child_key, child, n.child_key) > 0) {
        return OutOfOrder("child", n.scan.table, child, n.child_values);
      }
      int c = CompareKeys(child, n.child_key, parent, n.parent_key);
      if (c > 0) break;
      // Its own children merge on link_key, which must name one row.
      if (c == 0 && !ch->kids.empty() && ch->has_prev && !AnyNull(child, n.link_key) &&
          CompareKeys(ch->prev, n.link_key, child, n.link_key) == 0) {
        return Repeated(n.scan.table, child, ch->prev, ch->kids.front().plan->parent_values);
      }
      ch->prev = child;
      ch->has_prev = true;
      ++stats_->source_rows;
      if (c < 0) {
        ++stats_->orphans;
        s->Next();
        continue;
      }
      qualifier.assign(outer);
      qualifier.append(n.prefix);
      std::string bad;
      if (Status st = n.qualifier.Encode(child, &qualifier); !st.ok()) bad = st.message();
      int64_t ts = row_ts;
      std::string why;
      if (bad.empty() && n.version_index >= 0 &&
          !CellTimestampMs(child[n.version_index], &ts, &why)) {
        bad = fmt::format("version column {} is {}", n.scan.columns[n.version_index].column, why);
      }
      if (!bad.empty()) {
        WIDEN_RETURN_IF_ERROR(RejectChild(n, child, bad));
        for (auto& k : ch->kids) WIDEN_RETURN_IF_ERROR(SkipUnder(child, &k));
        s->Next();
        continue;
      }
      bool all_null = true;
      for (const auto& vc : n.value_columns) all_null = all_null && child[vc.second].is_null();
      if (all_null) {
        ++stats_->empty_children;
        if (stats_->first_empty_child.empty()) {
          stats_->first_empty_child = ChildId(n, child);
        }
      }
      if (n.layout == NestLayout::kValue) {
        const Value& v = child[n.value_columns.front().second];
        if (!v.is_null()) {
          Put(n.family, ts)->assign(qualifier);
          v.AppendText(value());
        }
      } else if (n.layout == NestLayout::kCells) {
        for (const auto& [name, idx] : n.value_columns) {
          if (child[idx].is_null()) continue;
          std::string* q = Put(n.family, ts);
          q->assign(qualifier);
          q->append(n.attribute_separator);
          q->append(name);
          child[idx].AppendText(value());
        }
      } else {
        Put(n.family, ts)->assign(qualifier);
        std::string* v = value();
        v->push_back('{');
        bool first = true;
        for (const auto& [name, idx] : n.value_columns) {
          // SQL NULL: no attribute (as layout: cells has no cell), so that
          // `null` is only ever a JSON column's JSON null.
          if (child[idx].is_null()) continue;
          if (!first) v->push_back(',');
          first = false;
          AppendJsonString(name, v);
          v->push_back(':');
          AppendJson(child[idx], v);
        }
        v->push_back('}');
      }
      for (auto& k : ch->kids) WIDEN_RETURN_IF_ERROR(EmitChildren(child, &k, qualifier, row_ts));
      s->Next();
    }
    return s->status();
  }

  struct PendingCell {
    std::string family, qualifier, value;
    int64_t timestamp_ms = 0;
  };

  const TablePlan& plan_;
  Source* source_;
  CellSink* sink_;
  const AssembleOptions& options_;
  TableStats* stats_;
  std::vector<Child> children_;
  std::string key_;
  int64_t row_ts_ = 0;  // the current row's default cell timestamp
  std::vector<PendingCell> pending_;
  size_t pending_n_ = 0;
  size_t pending_bytes_ = 0;            // estimate of pending_[0, pending_n_ - 1)'s memory
  std::vector<size_t> order_;           // put order of pending_ (HBase cell order)
  std::unique_ptr<CellRuns> row_runs_;  // the current row's spilled cells, if any
  Status spill_status_;                 // first error of a spill during BuildRow
  const Row* row_ = nullptr;            // the driving row being built
};

}  // namespace

void AddSinkStats(const SinkStats& sink, TableStats* stats) {
  // What the store holds: a replaced cell is gone.
  stats->cells -= std::min(stats->cells, sink.overwritten);
  stats->bytes -= std::min(stats->bytes, sink.overwritten_bytes);
  stats->overwritten += sink.overwritten;
  if (stats->first_overwritten.empty() && sink.first_overwritten) {
    const CellCoordinates& c = *sink.first_overwritten;
    stats->first_overwritten = fmt::format(
        "row '{}', column {}:{}, timestamp {}: two source rows give this row key and column (the "
        "row key does not identify the source rows)",
        ToStringBinary(c.row), c.family, ToStringBinary(c.qualifier), c.timestamp_ms);
  }
  stats->row_keys += sink.rows;
  stats->beyond_versions += sink.beyond_versions;
  stats->sort_runs += sink.spilled_runs;
  stats->sort_bytes += sink.spilled_bytes;
}

std::optional<ColumnExpr> SplitColumn(const TablePlan& plan) {
  if (!plan.nests.empty() && !plan.scan.merge.empty()) {
    return plan.scan.merge.front().on.front().first;
  }
  if (plan.nests.empty() && !plan.scan.unique_key.empty()) return plan.scan.unique_key.front();
  return std::nullopt;
}

Status Assemble(const TablePlan& plan, Source* source, CellSink* sink,
                const AssembleOptions& options, TableStats* stats) {
  stats->table = plan.descriptor.FullName();
  auto start = std::chrono::steady_clock::now();
  Status s = TableAssembler(plan, source, sink, options, stats).Run();
  stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace widen
