#include "transform/assembler.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/cell_check.h"
#include "common/cell_runs.h"
#include "transform/row_builder.h"

namespace widen {

namespace {

// A row whose cells take more than this (bytes, RowCells::bytes()) is sorted
// in runs spilled to temporary files rather than in memory: memory stays
// bounded however many children one parent has.
constexpr size_t kRowSpillBytes = 8 << 20;

// Compares the keys `ai` of `a` with the keys `bi` of `b` in the order the
// rows come: key i as order[i] says (order may be shorter: the rest ascend,
// NULLs first, as CompareValues).
int CompareKeys(const Row& a, const std::vector<size_t>& ai, const Row& b,
                const std::vector<size_t>& bi, const std::vector<KeyDirection>& order = {}) {
  for (size_t i = 0; i < ai.size(); ++i) {
    const Value& x = a[ai[i]];
    const Value& y = b[bi[i]];
    if (i < order.size() && (x.is_null() || y.is_null())) {
      if (x.is_null() == y.is_null()) continue;
      return x.is_null() == order[i].nulls_first ? -1 : 1;
    }
    const int c = CompareValues(x, y);
    if (c != 0) return i < order.size() && order[i].desc ? -c : c;
  }
  return 0;
}

// A nest's keys (NestPlan::parent_key / child_key) in the order the rows come.
int CompareKeys(const Row& a, const std::vector<size_t>& ai, const Row& b,
                const std::vector<size_t>& bi, const NestPlan& n) {
  return CompareKeys(a, ai, b, bi, n.key_order);
}

// True when a link key from `from` on (the lead columns before it are
// values, NULL or not) is NULL: such a row has no nested rows.
bool AnyNull(const Row& r, const std::vector<size_t>& idx, size_t from = 0) {
  for (size_t i = from; i < idx.size(); ++i) {
    if (r[idx[i]].is_null()) return true;
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
  // The previous child row: only the columns `kept` names (Keep), the
  // others NULL.
  Row prev;
  bool has_prev = false;
  std::vector<size_t> kept;
  std::vector<Child> kids;

  // Copies into prev the columns of `row` that are read from it: the child
  // key (the order check) and, with nested children, the link key and the
  // columns a repeated link value is shown by. Cheaper than a copy of the
  // whole row, once per child row.
  void Keep(const Row& row) {
    if (!has_prev) {
      prev.values.assign(row.size(), Value());
      kept = plan->child_key;
      if (!kids.empty()) {
        kept.insert(kept.end(), plan->link_key.begin(), plan->link_key.end());
        const auto& shown = kids.front().plan->parent_values;
        kept.insert(kept.end(), shown.begin(), shown.end());
      }
      std::sort(kept.begin(), kept.end());
      kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
      has_prev = true;
    }
    for (size_t i : kept) prev.values[i] = row[i];
  }
};

class TableAssembler {
 public:
  TableAssembler(const TablePlan& plan, Source* source, CellSink* sink,
                 const AssembleOptions& options, TableStats* stats)
      : plan_(plan),
        source_(source),
        sink_(sink),
        options_(options),
        stats_(stats),
        builder_(plan,
                 RowBuilderOptions{options.timestamp_ms, options.replace, options.max_cell_bytes}) {
  }

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
    if (!options_.only.empty()) {
      std::optional<ColumnExpr> col = SplitColumn(plan_);
      if (!col) {
        return Status::Internal(fmt::format("table '{}': no column to select the rows by",
                                            plan_.descriptor.FullName()));
      }
      scan.any_of = ScanValues{*col, options_.only};
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
        if (have_prev_parent && !AnyNull(row, pk, first.lead) &&
            !AnyNull(prev_parent, pk, first.lead)) {
          int c = CompareKeys(prev_parent, pk, row, pk, first);
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
    if (!options_.only.empty()) {
      // The children of the parents selected: their first link column holds
      // the split column's values (as the range below).
      ScanSpec scan = n.scan;
      scan.any_of = ScanValues{n.scan.merge.front().on.front().first, options_.only};
      WIDEN_ASSIGN_OR_RETURN(ch->stream, source_->Scan(scan));
    } else if (options_.range) {
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

  // Two cells of the current source row with the same coordinates: the
  // later replaces the earlier, as in the store; counted and named.
  void Replaced(std::string_view family, std::string_view qualifier, int64_t timestamp_ms) {
    ++stats_->overwritten;
    const std::string& key = builder_.row_key();
    if (options_.on_replaced) options_.on_replaced(key, family, qualifier, timestamp_ms);
    if (!stats_->first_overwritten.empty()) return;
    stats_->first_overwritten = fmt::format(
        "row '{}', column {}:{}, timestamp {}: source row {} of '{}' gives this cell more than "
        "once (the last one is kept)",
        ToStringBinary(key), family, ToStringBinary(qualifier), timestamp_ms, RowId(*row_),
        plan_.scan.alias);
  }

  // Moves the row's cells built so far, sorted, into a run of row_runs_
  // when they take more than kRowSpillBytes.
  Status MaybeSpill() {
    if (cells_.bytes() <= kRowSpillBytes) return Status::OK();
    return Spill();
  }

  // Moves the row's cells built so far, sorted, into a run of row_runs_.
  Status Spill() {
    if (cells_.empty()) return Status::OK();
    if (!row_runs_) row_runs_ = std::make_unique<CellRuns>();
    CellBatch batch;
    const std::string& key = builder_.row_key();
    for (size_t i : cells_.Sorted()) {
      const RowCell& c = cells_[i];
      batch.Add(key, c.family, c.qualifier, c.timestamp_ms, c.value, c.type);
    }
    cells_.Clear();
    return row_runs_->Add(batch);
  }

  // Puts one cell of the current row into the sink.
  Status PutCell(std::string_view family, std::string_view qualifier, int64_t timestamp_ms,
                 CellType type, std::string_view value) {
    const std::string& key = builder_.row_key();
    CellView cell{key, family, qualifier, timestamp_ms, type, value};
    WIDEN_RETURN_IF_ERROR(sink_->Put(cell));
    ++stats_->cells;
    stats_->bytes += key.size() + family.size() + qualifier.size() + value.size();
    return Status::OK();
  }

  // Puts the row's cells into the sink in HBase order, the later of equal
  // cells only: from cells_, or merged from the spilled runs.
  Status PutRow() {
    if (!row_runs_) {
      return cells_.Emit(
          [this](const RowCell& c) {
            return PutCell(c.family, c.qualifier, c.timestamp_ms, c.type, c.value);
          },
          [this](const RowCell& c) { Replaced(c.family, c.qualifier, c.timestamp_ms); });
    }
    WIDEN_RETURN_IF_ERROR(Spill());
    std::unique_ptr<CellRuns> runs = std::move(row_runs_);
    bool held = false;
    RowCell prev;
    Status s = runs->Merge(
        [&](const CellView& c, bool) {
          if (held) {
            if (c.timestamp_ms == prev.timestamp_ms && c.type == prev.type &&
                c.qualifier == prev.qualifier && c.family == prev.family) {
              Replaced(c.family, c.qualifier, c.timestamp_ms);
            } else {
              WIDEN_RETURN_IF_ERROR(
                  PutCell(prev.family, prev.qualifier, prev.timestamp_ms, prev.type, prev.value));
            }
          }
          prev.family.assign(c.family);
          prev.qualifier.assign(c.qualifier);
          prev.value.assign(c.value);
          prev.timestamp_ms = c.timestamp_ms;
          prev.type = c.type;
          held = true;
          return Status::OK();
        },
        options_.cancel);
    if (s.ok() && held) {
      s = PutCell(prev.family, prev.qualifier, prev.timestamp_ms, prev.type, prev.value);
    }
    return s;
  }

  Status EmitRow(const Row& row) {
    row_runs_.reset();
    row_ = &row;
    if (!builder_.StartRow(row, &cells_, &reason_)) {
      WIDEN_RETURN_IF_ERROR(Reject(row, reason_));
      return SkipChildren(row);
    }
    WIDEN_RETURN_IF_ERROR(MaybeSpill());
    for (auto& ch : children_) {
      WIDEN_RETURN_IF_ERROR(EmitChildren(row, &ch, std::string_view()));
    }
    if (!builder_.FinishRow(&cells_, &reason_)) {
      row_runs_.reset();  // the row's spilled cells go with it; its children were read
      return Reject(row, reason_);
    }
    if (builder_.puts() == 0) {
      ++stats_->empty_rows;  // no cell: HBase has no such row
      if (stats_->first_empty_row.empty()) stats_->first_empty_row = RowId(row);
      // Replace mode: the row's delete markers still go out.
      return cells_.empty() && !row_runs_ ? Status::OK() : PutRow();
    }
    if (options_.on_row) {
      WIDEN_RETURN_IF_ERROR(options_.on_row(builder_.row_key(), builder_.timestamp_ms(), row));
    }
    // Cells of one row go out in HBase order, so that a sink fed rows in key
    // order receives sorted batches and need not sort them.
    WIDEN_RETURN_IF_ERROR(PutRow());
    ++stats_->rows;
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
    if (AnyNull(parent, n.parent_key, n.lead)) return Status::OK();
    while (ch->stream->Valid()) {
      const Row& r = ch->stream->row();
      const int c = CompareKeys(r, n.child_key, parent, n.parent_key, n);
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

  // Emits the children of `parent` from ch's stream (RowBuilder::AddNested),
  // then their own children. A child that cannot be encoded is rejected
  // alone (RejectChild).
  Status EmitChildren(const Row& parent, Child* ch, std::string_view outer) {
    const NestPlan& n = *ch->plan;
    if (AnyNull(parent, n.parent_key, n.lead)) return Status::OK();
    RowStream* s = ch->stream.get();
    std::string qualifier;
    while (s->Valid()) {
      const Row& child = s->row();
      if (ch->has_prev && CompareKeys(ch->prev, n.child_key, child, n.child_key, n) > 0) {
        return OutOfOrder("child", n.scan.table, child, n.child_values);
      }
      int c = CompareKeys(child, n.child_key, parent, n.parent_key, n);
      if (c > 0) break;
      // Its own children merge on link_key, which must name one row.
      const size_t kid_lead = ch->kids.empty() ? 0 : ch->kids.front().plan->lead;
      if (c == 0 && !ch->kids.empty() && ch->has_prev && !AnyNull(child, n.link_key, kid_lead) &&
          CompareKeys(ch->prev, n.link_key, child, n.link_key) == 0) {
        return Repeated(n.scan.table, child, ch->prev, ch->kids.front().plan->parent_values);
      }
      ch->Keep(child);
      ++stats_->source_rows;
      if (c < 0) {
        ++stats_->orphans;
        s->Next();
        continue;
      }
      if (options_.on_child) WIDEN_RETURN_IF_ERROR(options_.on_child(n, child, *row_));
      bool all_null = false;
      if (!builder_.AddNested(n, child, outer, &cells_, &qualifier, &all_null, &reason_)) {
        WIDEN_RETURN_IF_ERROR(RejectChild(n, child, reason_));
        for (auto& k : ch->kids) WIDEN_RETURN_IF_ERROR(SkipUnder(child, &k));
        s->Next();
        continue;
      }
      if (all_null) {
        ++stats_->empty_children;
        if (stats_->first_empty_child.empty()) {
          stats_->first_empty_child = ChildId(n, child);
        }
      }
      WIDEN_RETURN_IF_ERROR(MaybeSpill());
      for (auto& k : ch->kids) WIDEN_RETURN_IF_ERROR(EmitChildren(child, &k, qualifier));
      s->Next();
    }
    return s->status();
  }

  const TablePlan& plan_;
  Source* source_;
  CellSink* sink_;
  const AssembleOptions& options_;
  TableStats* stats_;
  RowBuilder builder_;
  std::vector<Child> children_;
  RowCells cells_;                      // the current row's cells not spilled yet
  std::string reason_;                  // why the builder refused a row or nested row
  std::unique_ptr<CellRuns> row_runs_;  // the current row's spilled cells, if any
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
  stats->sorted_all = stats->sorted_all || sink.sorted_all;
}

std::optional<ColumnExpr> SplitColumn(const TablePlan& plan) {
  if (!plan.nests.empty() && !plan.scan.merge.empty()) {
    return plan.scan.merge.front().on.front().first;
  }
  if (plan.nests.empty() && !plan.scan.unique_key.empty()) return plan.scan.unique_key.front();
  return std::nullopt;
}

std::optional<size_t> SplitValueIndex(const TablePlan& plan) {
  if (!plan.nests.empty() && !plan.scan.merge.empty()) {
    return plan.nests.front().parent_values.front();
  }
  if (plan.nests.empty() && !plan.scan.unique_key.empty() && !plan.identity.empty()) {
    return plan.identity.front().second;
  }
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

void TableStats::Add(const TableStats& s) {
  source_rows += s.source_rows;
  rows += s.rows;
  cells += s.cells;
  bytes += s.bytes;
  rejected += s.rejected;
  orphans += s.orphans;
  empty_rows += s.empty_rows;
  if (first_empty_row.empty()) first_empty_row = s.first_empty_row;
  empty_children += s.empty_children;
  if (first_empty_child.empty()) first_empty_child = s.first_empty_child;
  overwritten += s.overwritten;
  if (first_overwritten.empty()) first_overwritten = s.first_overwritten;
  row_keys += s.row_keys;
  beyond_versions += s.beyond_versions;
  sort_runs += s.sort_runs;
  sort_bytes += s.sort_bytes;
  sorted_all = sorted_all || s.sorted_all;
}

}  // namespace widen
