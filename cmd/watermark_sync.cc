#include "cmd/watermark_sync.h"

#include <chrono>
#include <limits>
#include <memory>
#include <set>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "common/cell_runs.h"
#include "common/cell_sink.h"
#include "extract/source_stats.h"

namespace widen {
namespace {

// This machine's clock, in ms since the epoch (UTC).
int64_t NowMsForWatermarks() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

constexpr char kRowEntry = 'r';
constexpr char kChildEntry = 'c';

std::string Tuple(const std::vector<Value>& values) {
  std::string s;
  AppendValueTuple(&s, values);
  return s;
}

std::string Tuple1(const Value& v) { return Tuple(std::vector<Value>{v}); }

// The values of `indexes` in `row`, as a tuple.
std::string TupleOf(const Row& row, const std::vector<std::pair<std::string, size_t>>& indexes) {
  std::vector<Value> v;
  v.reserve(indexes.size());
  for (const auto& [name, i] : indexes) v.push_back(row[i]);
  return Tuple(v);
}

// Each nest with its path ("0", "0.1"), depth first.
void NestPaths(const std::vector<NestPlan>& nests, const std::string& parent,
               std::map<const NestPlan*, std::string>* out) {
  for (size_t i = 0; i < nests.size(); ++i) {
    const std::string path = parent.empty() ? std::to_string(i) : parent + "." + std::to_string(i);
    (*out)[&nests[i]] = path;
    NestPaths(nests[i].children, path, out);
  }
}

std::string ChildPrefix(const std::string& path) {
  std::string s(1, kChildEntry);
  s += path;
  s.push_back('\0');
  return s;
}

const SourceSync* WatermarkOf(const SyncPlan& sync, const std::string& table) {
  const SourceSync* s = sync.Find(table);
  return s != nullptr && s->mode == SyncMode::kWatermark ? s : nullptr;
}

// Where to read the changes from: the last watermark minus the lookback;
// nullopt reads every row (no watermark: the table had no row).
std::optional<Value> LowerBound(const Watermark& w, const SourceSync& s) {
  if (w.values.empty() || w.values.front().is_null()) return std::nullopt;
  const Value& v = w.values.front();
  switch (v.type()) {
    case ValueType::kInt: {
      int64_t out = 0;
      if (__builtin_sub_overflow(v.as_int(), s.lookback_values, &out)) {
        out = std::numeric_limits<int64_t>::min();
      }
      return Value::Int(out);
    }
    case ValueType::kUInt: {
      const uint64_t lb = static_cast<uint64_t>(std::max<int64_t>(0, s.lookback_values));
      return Value::UInt(v.as_uint() > lb ? v.as_uint() - lb : 0);
    }
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz: {
      int64_t out = 0;
      if (__builtin_sub_overflow(v.as_int(), s.lookback_micros, &out)) {
        out = std::numeric_limits<int64_t>::min();
      }
      return Value::Temporal(v.type(), out);
    }
    default:
      return v;
  }
}

// A scan's query reduced to what a change query or a reconcile needs: its
// table, alias and joins, no order, no paging, no filter.
ScanSpec Bare(const ScanSpec& scan) {
  ScanSpec q;
  q.table = scan.table;
  q.query = scan.query;
  q.alias = scan.alias;
  q.joins = scan.joins;
  return q;
}

// The rows a source table's change can reach in one scan of a target table.
struct ChangeScan {
  const ScanSpec* scan = nullptr;
  const NestPlan* nest = nullptr;  // null: the driving scan
  std::string alias;               // the scan's alias of the changed table
  const SourceSync* sync = nullptr;
};

void CollectChangeScans(const TablePlan& tp, const SyncPlan& sync, std::vector<ChangeScan>* out) {
  auto add = [&](const ScanSpec& scan, const NestPlan* nest) {
    if (const SourceSync* s = WatermarkOf(sync, scan.table)) {
      out->push_back(ChangeScan{&scan, nest, scan.alias, s});
    }
    for (const ScanJoin& j : scan.joins) {
      // Read as a nest (widen_parent) or as the driving table (widen_lead) already.
      if (j.alias == "widen_parent" || j.alias == "widen_lead") continue;
      if (const SourceSync* s = WatermarkOf(sync, j.table)) {
        out->push_back(ChangeScan{&scan, nest, j.alias, s});
      }
    }
  };
  add(tp.scan, nullptr);
  std::function<void(const std::vector<NestPlan>&)> walk = [&](const std::vector<NestPlan>& ns) {
    for (const NestPlan& n : ns) {
      add(n.scan, &n);
      walk(n.children);
    }
  };
  walk(tp.nests);
}

// Whether a recorded watermark value is of the type the watermark column
// has now (a column changed from timestamp to timestamptz is read anew).
bool KindHolds(WatermarkKind kind, ValueType type) {
  switch (kind) {
    case WatermarkKind::kTimestamp:
      return type == ValueType::kTimestamp;
    case WatermarkKind::kInstant:
      return type == ValueType::kTimestampTz;
    case WatermarkKind::kInteger:
      return type == ValueType::kInt || type == ValueType::kUInt;
  }
  return false;
}

bool AllNestsKeyed(const std::vector<NestPlan>& nests, std::string* table) {
  for (const NestPlan& n : nests) {
    if (n.identity.empty()) {
      *table = n.scan.table;
      return false;
    }
    if (!AllNestsKeyed(n.children, table)) return false;
  }
  return true;
}

}  // namespace

WatermarkSupport CheckWatermarkSync(const TablePlan& tp, const SyncPlan& sync) {
  WatermarkSupport w;
  if (!tp.scan.query.empty()) {
    w.why = "its driving rows come from a free-form query, which has no watermark";
    return w;
  }
  for (const SourceUse& u : SourceUses(tp)) {
    if (WatermarkOf(sync, u.table) == nullptr) {
      w.why = fmt::format("it reads '{}' in digest mode", u.table);
      return w;
    }
  }
  if (!SplitColumn(tp) || !SplitValueIndex(tp) || tp.identity.empty()) {
    w.why = fmt::format("its driving table '{}' has no primary key", tp.scan.table);
    return w;
  }
  // The rows are rebuilt by their split column's values, which must never
  // be NULL: a primary key column.
  bool in_key = false;
  for (const auto& [name, i] : tp.identity) in_key = in_key || i == *SplitValueIndex(tp);
  if (!in_key) {
    w.why = fmt::format("its first nest links on '{}', which is not a primary key column of '{}'",
                        SplitColumn(tp)->column, tp.scan.table);
    return w;
  }
  std::string table;
  if (!AllNestsKeyed(tp.nests, &table)) {
    w.why = fmt::format("its nested table '{}' has no primary key", table);
    return w;
  }
  w.ok = true;
  return w;
}

Result<std::vector<Watermark>> ReadWatermarks(const TablePlan& tp, const SyncPlan& sync,
                                              Source* source, std::vector<std::string>* notes) {
  std::vector<Watermark> out;
  for (const SourceUse& u : SourceUses(tp)) {
    const SourceSync* s = WatermarkOf(sync, u.table);
    if (s == nullptr) continue;
    ScanSpec spec;
    spec.table = u.table;
    spec.alias = u.table;
    const ColumnExpr column{u.table, s->watermark, false};
    WIDEN_ASSIGN_OR_RETURN(Value max, source->stats().HighestValue(spec, column));
    const bool temporal =
        max.type() == ValueType::kTimestamp || max.type() == ValueType::kTimestampTz;
    // A value far in the future (PostgreSQL's infinity, a placeholder such
    // as 9999-12-31, a writer whose clock is wrong) is never recorded: every
    // later change would fall below it and be missed. The bound is this
    // machine's clock plus kFutureWatermarkMs, past any time zone's offset
    // (a `timestamp` holds some zone's wall time, at most 14 h from UTC).
    const int64_t future_us = (NowMsForWatermarks() + kFutureWatermarkMs) * 1000;
    if (!max.is_null() && temporal && max.as_int() > future_us) {
      const bool infinity = max.as_int() == std::numeric_limits<int64_t>::max();
      const Value highest = max;
      const Value bound = Value::Temporal(max.type(), future_us);
      spec.bound = KeyBound{{column}, {bound}, BoundOp::kLess};
      WIDEN_ASSIGN_OR_RETURN(max, source->stats().HighestValue(spec, column));
      if (infinity) {
        notes->push_back(fmt::format(
            "source table '{}': rows whose {} is infinity are read again by every run (the "
            "watermark recorded is the highest finite value)",
            u.table, s->watermark));
      } else {
        notes->push_back(fmt::format(
            "source table '{}': rows whose {} is in the future (the highest is {}; after {}, "
            "two days past this run's start) are read again by every run and the watermark "
            "recorded is the highest value before that: a placeholder date or a writer's wrong "
            "clock? give those rows their real times",
            u.table, s->watermark, highest.DebugString(), bound.DebugString()));
      }
    }
    if (!max.is_null() && !KindHolds(s->kind, max.type())) {
      notes->push_back(fmt::format(
          "source table '{}': its highest {} ({}) is not a value of its type (a zero date?): the "
          "next run reads the whole table again; give the rows real watermarks",
          u.table, s->watermark, max.DebugString()));
      max = Value();
    }
    out.push_back(Watermark{u.table, {s->watermark}, {max}});
  }
  return out;
}

std::string WatermarkWentBack(const SyncPlan& sync, const std::vector<Watermark>& recorded,
                              const std::vector<Watermark>& now) {
  for (const Watermark& n : now) {
    const SourceSync* s = WatermarkOf(sync, n.source_table);
    for (const Watermark& r : recorded) {
      if (s == nullptr || r.source_table != n.source_table || r.columns != n.columns ||
          r.values.size() != 1 || n.values.size() != 1 || r.values[0].is_null()) {
        continue;
      }
      const std::optional<Value> lower = LowerBound(r, *s);
      if (lower && !n.values[0].is_null() && CompareValues(n.values[0], *lower) < 0) {
        return fmt::format(
            "source table '{}': its highest {} went back from {} to {}, more than the lookback, "
            "since the last run: if the table was filled again or values were set back, rows "
            "written with older values are not read; run widen sync --full once to compare "
            "every row (if only its newest rows were deleted, nothing is missed)",
            n.source_table, n.columns.front(), r.values[0].DebugString(),
            n.values[0].DebugString());
      }
    }
  }
  return "";
}

bool WatermarksCover(const TablePlan& tp, const SyncPlan& sync,
                     const std::vector<Watermark>& recorded) {
  for (const SourceUse& u : SourceUses(tp)) {
    const SourceSync* s = WatermarkOf(sync, u.table);
    if (s == nullptr) return false;
    bool found = false;
    for (const Watermark& w : recorded) {
      if (w.source_table == u.table && w.columns == std::vector<std::string>{s->watermark} &&
          w.values.size() == 1 &&
          (w.values.front().is_null() || KindHolds(s->kind, w.values.front().type()))) {
        found = true;
      }
    }
    if (!found) return false;
  }
  return true;
}

bool ReconcilesEverything(const TablePlan& tp, const SyncPlan& sync, bool reconcile) {
  if (reconcile) return true;
  for (const SourceUse& u : SourceUses(tp)) {
    const SourceSync* s = WatermarkOf(sync, u.table);
    if (s == nullptr || !s->reconcile) return false;
  }
  return true;
}

SyncIndexRecorder::SyncIndexRecorder(const TablePlan& table, RowWriter* writer)
    : table_(table), writer_(writer), split_index_(SplitValueIndex(table).value_or(0)) {
  NestPaths(table.nests, "", &paths_);
}

Status SyncIndexRecorder::OnRow(std::string_view row_key, const Row& driving) {
  std::string key(1, kRowEntry);
  key += Tuple1(driving[split_index_]);
  key.append(row_key);
  std::lock_guard<std::mutex> lock(mu_);
  return writer_->PutIndex(key, "");
}

Status SyncIndexRecorder::OnChild(const NestPlan& nest, const Row& child, const Row& driving) {
  std::string key = ChildPrefix(paths_[&nest]);
  key += TupleOf(child, nest.identity);
  key += Tuple1(driving[split_index_]);
  std::lock_guard<std::mutex> lock(mu_);
  return writer_->PutIndex(key, "");
}

void SyncIndexRecorder::Hook(AssembleOptions* o) {
  o->on_row = [this](std::string_view key, int64_t, const Row& row) { return OnRow(key, row); };
  o->on_child = [this](const NestPlan& n, const Row& child, const Row& driving) {
    return OnChild(n, child, driving);
  };
}

namespace {

// The state of one incremental run of a table.
class ChangeRun {
 public:
  ChangeRun(const ChangeSyncRequest& r, TableStats* read, RowSyncStats* rows,
            ChangeSyncStats* stats)
      : r_(r),
        tp_(*r.table),
        read_(read),
        rows_(rows),
        stats_(stats),
        split_index_(*SplitValueIndex(tp_)) {
    NestPaths(tp_.nests, "", &paths_);
  }

  Status Run() {
    WIDEN_RETURN_IF_ERROR(FindChanges());
    WIDEN_RETURN_IF_ERROR(FindOldParents());
    const size_t before = values_.size();
    if (Reconciles(tp_.scan.table)) WIDEN_RETURN_IF_ERROR(ReconcileRows());
    WIDEN_RETURN_IF_ERROR(ReconcileChildren());
    WIDEN_RETURN_IF_ERROR(ReconcileJoins());
    stats_->reconciled = values_.size() - before;
    stats_->split_values = values_.size();
    WIDEN_RETURN_IF_ERROR(Rebuild());
    return RemoveStale();
  }

 private:
  Status Cancelled() const {
    if (r_.assemble.cancel != nullptr && r_.assemble.cancel->load(std::memory_order_relaxed)) {
      return Status::Cancelled("interrupted");
    }
    return Status::OK();
  }

  // Whether this run finds the hard deletes of `table`: --reconcile, or
  // its entry's `deletes: reconcile: true`.
  bool Reconciles(const std::string& table) const {
    if (r_.reconcile) return true;
    const SourceSync* s = WatermarkOf(*r_.sync, table);
    return s != nullptr && s->reconcile;
  }

  void AddValue(const Value& v) {
    if (v.is_null()) return;
    values_.emplace(Tuple1(v), v);
  }

  // Step 2: the split values of the rows each change query returns.
  Status FindChanges() {
    std::vector<ChangeScan> scans;
    CollectChangeScans(tp_, *r_.sync, &scans);
    for (const ChangeScan& c : scans) {
      WIDEN_RETURN_IF_ERROR(Cancelled());
      const Watermark* last = nullptr;
      for (const Watermark& w : r_.recorded) {
        if (w.source_table == c.sync->table) last = &w;
      }
      ScanSpec q = Bare(*c.scan);
      q.columns.push_back(SplitExpr(c));
      const bool own_child = c.nest != nullptr && c.alias == c.scan->alias;
      if (own_child) {
        for (const auto& [name, i] : c.nest->identity) q.columns.push_back(c.scan->columns[i]);
      }
      if (last != nullptr) {
        if (std::optional<Value> lo = LowerBound(*last, *c.sync)) {
          q.bound = KeyBound{
              {ColumnExpr{c.alias, c.sync->watermark, false}}, {*lo}, BoundOp::kGreaterOrEqual};
        }
      }
      WIDEN_ASSIGN_OR_RETURN(auto rows, r_.source->Scan(q));
      const std::string path = own_child ? paths_[c.nest] : std::string();
      for (; rows->Valid(); rows->Next()) {
        const Row& row = rows->row();
        ++stats_->changed_rows;
        ++read_->source_rows;
        AddValue(row[0]);
        if (own_child) {
          std::vector<Value> key(row.values.begin() + 1, row.values.end());
          changed_children_.emplace(ChildPrefix(path) + Tuple(key), std::vector<std::string>());
        }
      }
      WIDEN_RETURN_IF_ERROR(rows->status());
    }
    return Status::OK();
  }

  // Step 3: the parents the changed nested rows were under.
  Status FindOldParents() {
    std::vector<std::string> prefixes;
    std::vector<std::vector<std::string>*> olds;
    for (auto& [prefix, o] : changed_children_) {
      prefixes.push_back(prefix);
      olds.push_back(&o);
    }
    WIDEN_RETURN_IF_ERROR(r_.store->ScanIndex(
        r_.full_name, prefixes, [&](size_t i, std::string_view key, std::string_view) {
          std::string_view rest = key.substr(prefixes[i].size());
          std::vector<Value> v;
          if (!ReadValueTuple(&rest, &v).ok() || v.size() != 1 || !rest.empty()) {
            bad_entry_ = std::string(key);
            return false;
          }
          olds[i]->push_back(Tuple1(v.front()));
          if (values_.emplace(olds[i]->back(), v.front()).second) ++stats_->moved_parents;
          return true;
        }));
    return BadEntry();
  }

  Status BadEntry() const {
    if (bad_entry_.empty()) return Status::OK();
    return Status::DataLoss(fmt::format(
        "table '{}': a malformed sync index entry; run widen sync --full to write the index anew",
        r_.full_name));
  }

  // Step 4a: split values the index holds whose driving row is gone.
  Status ReconcileRows() {
    std::vector<Value> batch;
    std::string last;
    auto flush = [&]() -> Status {
      if (batch.empty()) return Status::OK();
      ScanSpec q = Bare(tp_.scan);
      q.joins.clear();
      q.columns.push_back(tp_.scan.columns[split_index_]);
      q.any_of = ScanValues{*SplitColumn(tp_), batch};
      WIDEN_ASSIGN_OR_RETURN(auto rows, r_.source->Scan(q));
      std::set<std::string> present;
      for (; rows->Valid(); rows->Next()) present.insert(Tuple1(rows->row()[0]));
      WIDEN_RETURN_IF_ERROR(rows->status());
      for (const Value& v : batch) {
        if (!present.count(Tuple1(v))) AddValue(v);
      }
      batch.clear();
      return Cancelled();
    };
    Status inner;
    WIDEN_RETURN_IF_ERROR(r_.store->ScanIndex(
        r_.full_name, std::string(1, kRowEntry), [&](std::string_view key, std::string_view) {
          std::string_view rest = key.substr(1);
          const size_t before = rest.size();
          std::vector<Value> v;
          if (!ReadValueTuple(&rest, &v).ok() || v.size() != 1) {
            bad_entry_ = std::string(key);
            return false;
          }
          const std::string enc(key.substr(1, before - rest.size()));
          if (enc == last) return true;
          last = enc;
          if (v.front().is_null()) return true;
          batch.push_back(v.front());
          if (batch.size() >= kReconcileBatch) inner = flush();
          return inner.ok();
        }));
    WIDEN_RETURN_IF_ERROR(BadEntry());
    WIDEN_RETURN_IF_ERROR(inner);
    return flush();
  }

  // Step 4b: nested rows the index holds that the source no longer has:
  // their parents.
  Status ReconcileChildren() {
    for (const auto& [nest, path] : paths_) {
      if (!Reconciles(nest->scan.table)) continue;
      const std::string prefix = ChildPrefix(path);
      // A child key tuple's parents (their split values) and index entries.
      struct Child {
        std::vector<Value> parents;
        std::vector<std::string> entries;
      };
      std::map<std::string, Child> batch;
      std::vector<Value> firsts;
      auto flush = [&]() -> Status {
        if (batch.empty()) return Status::OK();
        ScanSpec q;
        q.table = nest->scan.table;
        q.alias = nest->scan.alias;
        for (const auto& [name, i] : nest->identity) q.columns.push_back(nest->scan.columns[i]);
        q.any_of = ScanValues{q.columns.front(), firsts};
        WIDEN_ASSIGN_OR_RETURN(auto rows, r_.source->Scan(q));
        std::set<std::string> present;
        for (; rows->Valid(); rows->Next()) present.insert(Tuple(rows->row().values));
        WIDEN_RETURN_IF_ERROR(rows->status());
        for (auto& [key, child] : batch) {
          if (present.count(key)) continue;
          for (const Value& v : child.parents) AddValue(v);
          // Gone in the snapshot: no rebuild gives the child again.
          for (std::string& e : child.entries) gone_children_.push_back(std::move(e));
        }
        batch.clear();
        firsts.clear();
        return Cancelled();
      };
      Status inner;
      WIDEN_RETURN_IF_ERROR(
          r_.store->ScanIndex(r_.full_name, prefix, [&](std::string_view key, std::string_view) {
            std::string_view rest = key.substr(prefix.size());
            const size_t before = rest.size();
            std::vector<Value> child, parent;
            if (!ReadValueTuple(&rest, &child).ok() || child.empty()) {
              bad_entry_ = std::string(key);
              return false;
            }
            const std::string enc(key.substr(prefix.size(), before - rest.size()));
            if (!ReadValueTuple(&rest, &parent).ok() || parent.size() != 1) {
              bad_entry_ = std::string(key);
              return false;
            }
            auto [it, added] = batch.emplace(enc, Child());
            it->second.parents.push_back(parent.front());
            it->second.entries.emplace_back(key);
            if (added) {
              if (child.front().is_null()) {
                it->second.parents.clear();  // cannot be looked up; never written so
              } else {
                firsts.push_back(child.front());
              }
            }
            if (batch.size() >= kReconcileBatch) inner = flush();
            return inner.ok();
          }));
      WIDEN_RETURN_IF_ERROR(BadEntry());
      WIDEN_RETURN_IF_ERROR(inner);
      WIDEN_RETURN_IF_ERROR(flush());
    }
    return Status::OK();
  }

  // Step 4c: rows (driving or nested) whose join no longer finds the row
  // they refer to (a joined row deleted): their parents' split values.
  Status ReconcileJoins() {
    std::vector<ChangeScan> scans;
    CollectChangeScans(tp_, *r_.sync, &scans);
    for (const ChangeScan& c : scans) {
      if (c.alias == c.scan->alias || !Reconciles(c.sync->table)) continue;
      const ScanJoin* join = nullptr;
      for (const ScanJoin& j : c.scan->joins) {
        if (j.alias == c.alias) join = &j;
      }
      if (join == nullptr || join->on.empty()) continue;
      ScanSpec q = Bare(*c.scan);
      q.columns.push_back(SplitExpr(c));
      q.not_null.push_back(join->on.front().first);
      q.is_null.push_back(ColumnExpr{join->alias, join->on.front().second, false});
      WIDEN_ASSIGN_OR_RETURN(auto rows, r_.source->Scan(q));
      for (; rows->Valid(); rows->Next()) AddValue(rows->row()[0]);
      WIDEN_RETURN_IF_ERROR(rows->status());
      WIDEN_RETURN_IF_ERROR(Cancelled());
    }
    return Status::OK();
  }

  // The split value in a scan's rows: the driving row's split column, or
  // the nested row's first link to its top-level parent.
  ColumnExpr SplitExpr(const ChangeScan& c) const {
    if (c.nest == nullptr) return c.scan->columns[split_index_];
    return c.nest->scan.merge.front().on.front().first;
  }

  // One batch of split values, read and assembled (Fetch), not yet written
  // (Apply).
  struct Fetched {
    std::vector<std::string> encs;
    std::shared_ptr<CellRuns> runs = std::make_shared<CellRuns>();
    std::map<std::string, std::set<std::string>> fresh;  // split value -> row keys
    std::vector<std::string> child_entries;              // index entries of the nested rows read
    TableStats stats;
    Status status;
  };

  // Step 5: the target rows of the split values, rebuilt in batches. The
  // next batch is read from the source on a second thread while this one
  // writes the store (Fetch touches the source and the rebuild's own sets,
  // Apply the store alone): the server's time and widen's overlap.
  Status Rebuild() {
    auto it = values_.begin();
    auto next = [&]() {
      auto f = std::make_unique<Fetched>();
      std::vector<Value> only;
      for (; it != values_.end() && only.size() < kRebuildBatch; ++it) {
        f->encs.push_back(it->first);
        only.push_back(it->second);
      }
      f->status = Fetch(only, f.get());
      return f;
    };
    if (it == values_.end()) return Status::OK();
    WIDEN_RETURN_IF_ERROR(Cancelled());
    std::unique_ptr<Fetched> current = next();
    while (current != nullptr) {
      read_->Add(current->stats);
      WIDEN_RETURN_IF_ERROR(current->status);
      std::unique_ptr<Fetched> ahead;
      std::thread reader;
      if (it != values_.end() && Cancelled().ok()) {
        reader = std::thread([&] { ahead = next(); });
      }
      Status s = Apply(current.get());
      if (reader.joinable()) reader.join();
      WIDEN_RETURN_IF_ERROR(s);
      WIDEN_RETURN_IF_ERROR(Cancelled());
      if (r_.assemble.progress) r_.assemble.progress(*read_);
      current = std::move(ahead);
    }
    return Status::OK();
  }

  // Reads and assembles the rows of `only` into f->runs. Uses the source,
  // new_rows_ and parent_now_; not the store.
  Status Fetch(const std::vector<Value>& only, Fetched* f) {
    RunsSink sink(f->runs);
    AssembleOptions ao = r_.assemble;
    ao.only = only;
    ao.progress = nullptr;
    ao.on_row = [&](std::string_view key, int64_t, const Row& row) -> Status {
      const std::string& k = *new_rows_.emplace(key).first;
      f->fresh[Tuple1(row[split_index_])].insert(k);
      return Status::OK();
    };
    ao.on_child = [&](const NestPlan& n, const Row& child, const Row& driving) -> Status {
      std::string key = ChildPrefix(paths_[&n]) + TupleOf(child, n.identity);
      auto found = changed_children_.find(key);
      const std::string parent = Tuple1(driving[split_index_]);
      if (found != changed_children_.end()) parent_now_[key] = parent;
      f->child_entries.push_back(key + parent);
      return Status::OK();
    };
    Status s = Assemble(tp_, r_.source, &sink, ao, &f->stats);
    Status closed = sink.Close();
    WIDEN_RETURN_IF_ERROR(s);
    return closed;
  }

  // Writes a fetched batch: the new index entries before their rows, then
  // the rows (SyncRows against what the store holds), then notes the
  // entries gone stale. Uses the store alone.
  Status Apply(Fetched* f) {
    for (const std::string& e : f->child_entries) WIDEN_RETURN_IF_ERROR(r_.writer->PutIndex(e, ""));

    // What the values gave before: the batch's and the rows' own values
    // (a text value may come from a child's link in another case).
    std::set<std::string> looked(f->encs.begin(), f->encs.end());
    for (const auto& [e, keys] : f->fresh) looked.insert(e);
    std::vector<std::string> prefixes;
    for (const std::string& e : looked) prefixes.push_back(std::string(1, kRowEntry) + e);
    std::map<std::string, std::set<std::string>> old;
    WIDEN_RETURN_IF_ERROR(r_.store->ScanIndex(
        r_.full_name, prefixes, [&](size_t i, std::string_view key, std::string_view) {
          old[prefixes[i].substr(1)].insert(std::string(key.substr(prefixes[i].size())));
          return true;
        }));

    // New entries before their rows.
    std::set<std::string> batch_rows;
    for (const auto& [e, keys] : f->fresh) {
      for (const std::string& k : keys) {
        batch_rows.insert(k);
        if (old[e].count(k)) continue;
        WIDEN_RETURN_IF_ERROR(r_.writer->PutIndex(std::string(1, kRowEntry) + e + k, ""));
      }
    }
    WIDEN_RETURN_IF_ERROR(r_.writer->Flush());
    WIDEN_ASSIGN_OR_RETURN(
        std::unique_ptr<RowDigestReader> stored,
        r_.store->NewDigestReaderOf(
            r_.full_name, std::vector<std::string>(batch_rows.begin(), batch_rows.end())));
    RowSyncStats rs;
    WIDEN_RETURN_IF_ERROR(
        SyncRows(f->runs.get(), stored.get(), r_.writer, r_.assemble.cancel, &rs));
    rows_->Add(rs);
    for (const auto& [e, keys] : old) {
      for (const std::string& k : keys) {
        auto found = f->fresh.find(e);
        if (found == f->fresh.end() || !found->second.count(k)) stale_.emplace_back(e, k);
      }
    }
    return r_.writer->Flush();
  }

  // Step 6: the rows no value gives any more, then their entries; then the
  // entries of nested rows a reconcile found gone, and of those that left a
  // parent.
  Status RemoveStale() {
    WIDEN_RETURN_IF_ERROR(Cancelled());
    const RowWriterStats before = r_.writer->stats();
    std::set<std::string> removed;
    for (const auto& [e, k] : stale_) {
      if (new_rows_.count(k) || !removed.insert(k).second) continue;
      WIDEN_RETURN_IF_ERROR(r_.writer->ReplaceRow(k, CellBatch(), ""));
    }
    WIDEN_RETURN_IF_ERROR(r_.writer->Flush());  // the figures are whole after it
    const RowWriterStats& after = r_.writer->stats();
    rows_->rows_deleted += after.rows_deleted - before.rows_deleted;
    rows_->cells_deleted += after.cells_deleted - before.cells_deleted;
    for (const auto& [e, k] : stale_) {
      WIDEN_RETURN_IF_ERROR(r_.writer->DeleteIndex(std::string(1, kRowEntry) + e + k));
    }
    for (const std::string& e : gone_children_) WIDEN_RETURN_IF_ERROR(r_.writer->DeleteIndex(e));
    for (const auto& [key, olds] : changed_children_) {
      auto now = parent_now_.find(key);
      for (const std::string& p : olds) {
        if (now != parent_now_.end() && now->second == p) continue;
        WIDEN_RETURN_IF_ERROR(r_.writer->DeleteIndex(key + p));
      }
    }
    return Status::OK();
  }

  const ChangeSyncRequest& r_;
  const TablePlan& tp_;
  TableStats* read_;
  RowSyncStats* rows_;
  ChangeSyncStats* stats_;
  const size_t split_index_;
  std::map<const NestPlan*, std::string> paths_;
  std::map<std::string, Value> values_;  // split values to rebuild, by tuple bytes
  /// Changed nested rows ('c' path 0x00 tuple(key)) -> the parents' tuples
  /// the index held for them.
  std::map<std::string, std::vector<std::string>> changed_children_;
  std::map<std::string, std::string> parent_now_;  // of those, the parent they are under now
  std::set<std::string> new_rows_;                 // every row key the rebuild gave
  std::vector<std::pair<std::string, std::string>> stale_;  // (value tuple, row key)
  std::vector<std::string> gone_children_;  // index entries of nested rows a reconcile found gone
  std::string bad_entry_;
};

}  // namespace

Status SyncChanges(const ChangeSyncRequest& r, TableStats* read, RowSyncStats* rows,
                   ChangeSyncStats* stats) {
  return ChangeRun(r, read, rows, stats).Run();
}

}  // namespace widen
