#include "cmd/run.h"

#include <sched.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmd/watermark_sync.h"
#include "common/suggest.h"
#include "common/table_descriptor.h"
#include "extract/source_stats.h"
#include "store/state_store.h"
#include "store/store.h"

namespace widen {

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Writes rejected rows as JSON lines: {"table":..., "row":..., "reason":...}.
// A file that cannot be written (a missing folder, a full disk) is LocalIo
// naming it; Flush makes the lines written so far reach the file, so that a
// table is recorded complete only with its rejects written.
class JsonLinesRejects : public RejectHandler {
 public:
  static Result<std::unique_ptr<JsonLinesRejects>> Open(const std::string& path) {
    auto r = std::make_unique<JsonLinesRejects>();
    r->path_ = path;
    r->out_ = std::fopen(path.c_str(), "w");
    if (r->out_ == nullptr) return r->Error("cannot create");
    return r;
  }
  ~JsonLinesRejects() override {
    if (out_ != nullptr) std::fclose(out_);
  }
  Status Reject(const std::string& table, const std::string& row_id,
                const std::string& reason) override {
    nlohmann::json j = {{"table", table}, {"row", row_id}, {"reason", reason}};
    std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    line += '\n';
    if (std::fwrite(line.data(), 1, line.size(), out_) != line.size()) return Error("cannot write");
    ++count_;
    return Status::OK();
  }
  /// Writes out what is buffered. LocalIo naming the file when it cannot.
  Status Flush() {
    if (std::fflush(out_) != 0) return Error("cannot write");
    return Status::OK();
  }
  uint64_t count() const { return count_; }

 private:
  Status Error(const char* what) const {
    const int err = errno;
    const std::string m = fmt::format("--rejects {}: {} the rejects file", path_, what);
    return err != 0 ? LocalIoError(m, err) : Status::LocalIo(m);
  }

  std::string path_;
  std::FILE* out_ = nullptr;
  uint64_t count_ = 0;
};

// A run id: the start time (UTC, to the ms) and the process id.
std::string NewRunId(int64_t start_ms) {
  const auto tp =
      std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(start_ms));
  return fmt::format("{:%Y%m%dT%H%M%S}Z-{}", std::chrono::floor<std::chrono::seconds>(tp),
                     static_cast<long>(getpid()));
}

// Records `state` for `table` at `*version` (nullopt: none recorded), and
// moves *version on. Aborted (another run changed it) names the table.
Status PutState(StateStore* states, const std::string& table, std::optional<uint64_t>* version,
                const TableState& state) {
  auto put = states->Put(table, *version, state);
  if (!put.ok()) {
    if (put.status().code() == StatusCode::kAborted) {
      return Status::Aborted(fmt::format(
          "table '{}': another widen run changed its state meanwhile; retry when it is done",
          table));
    }
    return Status(put.status().code(), fmt::format("table '{}': recording its state: {}", table,
                                                   put.status().message()));
  }
  *version = *put;
  return Status::OK();
}

// DesignRequest::check_mapping for commands that write: the target is
// `target_url` when set, else the mapping's, which must be there.
std::function<Status(Mapping&)> ResolveTarget(const std::string& target_url) {
  return [target_url](Mapping& m) -> Status {
    if (!target_url.empty()) {
      m.target_url = target_url;
    } else if (!m.target_problem.ok()) {
      return m.target_problem;
    }
    if (m.target_url.empty()) {
      return Status::InvalidArgument(
          fmt::format("{}: no target: set 'target' in the mapping or pass --target leveldb:PATH or "
                      "hbase://HOST:PORT",
                      m.file));
    }
    return Status::OK();
  };
}

// Creates (or checks) `tp`'s table in `store` with the split points a
// migrate gives it (a salted key's buckets); returns its full name.
Result<std::string> CreateTargetTable(const TablePlan& tp, Source* source, Store* store) {
  // A salted key pre-splits at its buckets (no source read); other split
  // points come from `widen ddl --apply --regions N` before the run.
  TableDescriptor desc = tp.descriptor;
  WIDEN_ASSIGN_OR_RETURN(SplitPlan split, ComputeSplitPoints(tp, source, SplitOptions()));
  desc.split_points = split.points;
  WIDEN_RETURN_IF_ERROR(store->CreateTable(desc));
  return desc.FullName();
}

// A RowWriter that calls `first` once, before the first row it writes (sync
// records a table loading only then), and passes everything on to `inner`.
class FirstWriteHook : public RowWriter {
 public:
  FirstWriteHook(std::unique_ptr<RowWriter> inner, std::function<Status()> first)
      : inner_(std::move(inner)), first_(std::move(first)) {}
  Status ReplaceRow(std::string_view row, const CellBatch& cells, std::string_view digest,
                    bool same_keys) override {
    if (first_) {
      WIDEN_RETURN_IF_ERROR(first_());
      first_ = nullptr;
    }
    return inner_->ReplaceRow(row, cells, digest, same_keys);
  }
  Status PutIndex(std::string_view key, std::string_view value) override {
    WIDEN_RETURN_IF_ERROR(First());
    return inner_->PutIndex(key, value);
  }
  Status DeleteIndex(std::string_view key) override {
    WIDEN_RETURN_IF_ERROR(First());
    return inner_->DeleteIndex(key);
  }
  Status ClearIndex() override {
    WIDEN_RETURN_IF_ERROR(First());
    return inner_->ClearIndex();
  }
  Status Flush() override { return inner_->Flush(); }
  Status Sync() override { return inner_->Sync(); }
  void DeferDigestsAndIndex() override { inner_->DeferDigestsAndIndex(); }
  const RowWriterStats& stats() const override { return inner_->stats(); }
  bool wrote() const { return !first_; }

 private:
  Status First() {
    if (!first_) return Status::OK();
    WIDEN_RETURN_IF_ERROR(first_());
    first_ = nullptr;
    return Status::OK();
  }

  std::unique_ptr<RowWriter> inner_;
  std::function<Status()> first_;
};

// A table a run finished: a mark left in its metadata by an older widen or
// by `widen repair` ("repaired": it may lack cells) no longer holds.
Status ClearStateMark(Store* store, const std::string& table) {
  WIDEN_ASSIGN_OR_RETURN(TableDescriptor d, store->DescribeTable(table));
  auto it = d.metadata.find(kStateMetadata);
  if (it == d.metadata.end() || it->second == "complete") return Status::OK();
  return store->SetTableMetadata(table, kStateMetadata, "complete");
}

// Counts the rows that cannot be encoded (verify compares the rest) and
// keeps the first `keep` of them.
class CountingRejects : public RejectHandler {
 public:
  explicit CountingRejects(size_t keep) : keep_(keep) {}
  Status Reject(const std::string&, const std::string& row_id, const std::string& reason) override {
    if (first_.size() < keep_) first_.push_back(row_id + ": " + reason);
    ++count_;
    return Status::OK();
  }
  uint64_t count() const { return count_; }
  const std::vector<std::string>& first() const { return first_; }

 private:
  const size_t keep_;
  uint64_t count_ = 0;
  std::vector<std::string> first_;
};

// The reader of a table the target does not have.
class NoCells : public CellReader {
 public:
  bool Valid() const override { return false; }
  void Next() override {}
  CellView cell() const override { return CellView(); }
  Status status() const override { return Status::OK(); }
};

// Passes on the cells of the rows InVerifySample takes.
class SampleSink : public CellSink {
 public:
  SampleSink(std::unique_ptr<CellSink> inner, uint64_t every)
      : inner_(std::move(inner)), every_(every) {}
  Status Put(const CellView& cell) override {
    if (!have_row_ || cell.row != std::string_view(row_)) {
      row_.assign(cell.row);
      have_row_ = true;
      in_sample_ = InVerifySample(row_, every_);
    }
    return in_sample_ ? inner_->Put(cell) : Status::OK();
  }
  Status Flush() override { return inner_->Flush(); }
  Status Sync() override { return inner_->Sync(); }
  Status Close() override { return inner_->Close(); }
  const SinkStats& stats() const override { return inner_->stats(); }

 private:
  std::unique_ptr<CellSink> inner_;
  const uint64_t every_;
  std::string row_;
  bool have_row_ = false;
  bool in_sample_ = true;
};

// A row verify names, with its key decoded by the mapping's layout.
VerifiedRow NameRow(const TablePlan& tp, const RowMismatch& m) {
  VerifiedRow v;
  v.row = m.row;
  v.cells = m.cells;
  v.differences = m.differences;
  if (!tp.key.Decode(m.row, &v.key)) v.key.clear();
  auto row = tp.key.DecodeRow(m.row);
  if (!row.ok() || tp.identity.empty()) return v;
  // The source row's primary key, when the row key holds every column of it.
  for (const auto& [name, index] : tp.identity) {
    bool held = false;
    for (const KeyPartPlan& p : tp.key.parts()) held = held || (!p.is_literal && p.index == index);
    if (!held) {
      v.source.clear();
      return v;
    }
    const Value& value = (*row)[index];
    v.source.emplace_back(name, value.is_null() ? "NULL" : value.ToText());
  }
  return v;
}

// Whether `table` holds at least one cell.
Result<bool> HoldsCells(Store* store, const std::string& table) {
  ReadOptions ro;
  ro.limit_rows = 1;
  WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<CellReader> reader, store->NewReader(table, ro));
  WIDEN_RETURN_IF_ERROR(reader->status());
  return reader->Valid();
}

}  // namespace

Result<std::unique_ptr<Design>> LoadDesign(const DesignRequest& o) {
  auto in = std::make_unique<Design>();
  WIDEN_ASSIGN_OR_RETURN(in->mapping, load_mapping(o.mapping_path));
  Mapping& m = in->mapping;
  if (!o.only_table.empty() && m.FindTable(o.only_table) == nullptr) {
    std::vector<std::string> names;
    for (const auto& t : m.tables) names.push_back(t.name);
    return Status::NotFound(fmt::format("--table {}: the mapping {} has no such target table{}",
                                        o.only_table, m.file, DidYouMean(o.only_table, names)));
  }
  if (o.check_mapping) WIDEN_RETURN_IF_ERROR(o.check_mapping(m));
  if (!o.open_source) return in;
  if (!o.source_url.empty()) {
    m.source_url = o.source_url;
  } else if (!m.source_problem.ok()) {
    return m.source_problem;
  }
  SourceOptions so;
  so.fetch_rows = o.fetch_rows;
  WIDEN_ASSIGN_OR_RETURN(in->source, Source::Open(m.source_url, so));
  WIDEN_ASSIGN_OR_RETURN(in->schema, in->source->Introspect());
  if (!o.make_plan) return in;
  WIDEN_ASSIGN_OR_RETURN(in->plan, Plan::Make(m, in->schema, in->source.get()));
  for (const TablePlan& tp : in->plan.tables) {
    if (o.only_table.empty() || tp.mapping->name == o.only_table) in->tables.push_back(&tp);
  }
  return in;
}

Status CheckScans(const TablePlan& tp, Source* source) {
  return ForEachScan(tp, [&](const ScanSpec& scan, const SourceLocation& loc) {
    Status s = source->CheckScan(scan);
    if (s.ok()) return s;
    return Status(s.code(),
                  fmt::format("{}: table '{}': {}", loc.ToString(), tp.mapping->name, s.message()));
  });
}

Result<int> UsableCores() {
  if (const char* env = std::getenv("WIDEN_CORES")) {
    int n = 0;
    const std::string_view v(env);
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || n < 1) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("WIDEN_CORES: '{}' is not a positive whole number (the cores "
                                "this run may use)",
                                v));
    }
    return n;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
}

Result<JobLayout> LayOutJobs(Design& design, int jobs, const std::atomic<bool>* cancel) {
  JobLayout layout;
  WIDEN_ASSIGN_OR_RETURN(const int cores, UsableCores());
  // How each table splits (min/max of its split column; the ranges only
  // balance the work, so reading them before the snapshot the jobs share is
  // fine), then as many more connections on one snapshot as the widest
  // split needs, opened before the target is touched (a user without the
  // rights for it learns it now).
  for (const TablePlan* tp : design.tables) {
    WIDEN_ASSIGN_OR_RETURN(RowSplit split, SplitRows(*tp, design.source.get(), jobs, cores));
    layout.splits.push_back(std::move(split));
  }
  WIDEN_RETURN_IF_ERROR(OpenJobSources(design, &layout, cancel));
  return layout;
}

Status OpenJobSources(Design& design, JobLayout* layout, const std::atomic<bool>* cancel) {
  layout->sources = {design.source.get()};
  layout->siblings.clear();
  size_t widest = 1;
  for (const RowSplit& split : layout->splits) widest = std::max(widest, split.ranges.size());
  if (widest <= 1) return Status::OK();
  layout->reads = ReadsOf(design.tables);
  auto more = design.source->OpenSiblings(static_cast<int>(widest) - 1, layout->reads);
  // The snapshot lock may have been waited for (up to 10 s) after a Ctrl-C.
  if (cancel != nullptr && cancel->load()) {
    return Status::Cancelled("interrupted before anything was written");
  }
  if (!more.ok()) return more.status();
  layout->siblings = std::move(*more);
  for (auto& s : layout->siblings) layout->sources.push_back(s.get());
  return Status::OK();
}

// Adds the cells the assembler found given twice by one source row (the
// later kept; TableStats::overwritten) to a row comparison's count of
// replaced cells, and names the first when none is named yet (`first` may
// be null). Sync and verify compare rows after assembly, where those cells
// are already gone.
static void AddReplacedByAssembly(const TableStats& read, uint64_t* count, std::string* first) {
  if (read.overwritten == 0) return;
  *count += read.overwritten;
  if (first != nullptr && first->empty()) *first = read.first_overwritten;
}

std::string TableFingerprint(const TablePlan& tp) {
  std::string text = tp.descriptor.FullName();
  auto field = [&text](std::string_view f) {
    text += '\x1f';
    text += f;
  };
  for (const auto& f : tp.descriptor.families) {
    field(f.name);
    field(fmt::format("{} {} {} {} {} {} {} {}", f.versions, f.min_versions, f.ttl_seconds,
                      f.compression, f.bloom_filter, f.block_size_bytes, f.in_memory,
                      f.data_block_encoding));
  }
  for (const auto& [k, v] : tp.descriptor.metadata) {
    if (k == kStateMetadata) continue;
    field(k);
    field(v);
  }
  field(tp.key.ToJson());
  for (const CellPlan& c : tp.cells) {
    field(fmt::format("{} {}:{} {} {} {} {}", c.index, c.family, c.qualifier,
                      static_cast<int>(c.on_null), static_cast<int>(c.codec.kind),
                      static_cast<int>(c.codec.hbase_type), c.version_index));
  }
  field(fmt::format("v{}", tp.version_index));
  std::vector<const NestPlan*> todo;
  for (const auto& n : tp.nests) todo.push_back(&n);
  while (!todo.empty()) {
    const NestPlan* n = todo.back();
    todo.pop_back();
    field(fmt::format("nest {} {} {} {} {}", n->family, n->prefix, static_cast<int>(n->layout),
                      n->attribute_separator, n->version_index));
    field(n->qualifier.ToJson());
    for (const auto& [name, index] : n->value_columns) field(fmt::format("{}={}", name, index));
    for (const auto& c : n->children) todo.push_back(&c);
  }
  // What each scan reads (not its SQL text, which depends on the engine and
  // on --fetch-rows).
  // The join and columns that order a nested scan in key order (widen_lead)
  // change no cell: left out, so that a table keeps its fingerprint.
  auto columns = [&field](const std::vector<ColumnExpr>& cs) {
    std::string t;
    for (const auto& c : cs) {
      if (c.alias != "widen_lead") t += c.alias + "." + c.column + ",";
    }
    field(t);
  };
  (void)ForEachScan(tp, [&](const ScanSpec& scan, const SourceLocation&) {
    field("scan");
    field(scan.table);
    field(scan.query);
    field(scan.alias);
    field(scan.where);
    for (const auto& j : scan.joins) {
      if (j.alias == "widen_lead") continue;
      field(j.table + " " + j.alias);
      for (const auto& [mine, theirs] : j.on) field(mine.alias + "." + mine.column + "=" + theirs);
    }
    columns(scan.columns);
    columns(scan.not_null);
    for (const auto& l : scan.merge) {
      field(l.peer_table + " " + l.peer_query + (l.child ? " child" : ""));
      for (const auto& [mine, theirs] : l.on) field(mine.alias + "." + mine.column + "=" + theirs);
    }
    // Rows a soft delete leaves out decide which cells there are.
    for (const auto& e : scan.exclude) {
      field(fmt::format("exclude {}.{} {} {}", e.alias, e.column, ValueTypeName(e.value.type()),
                        e.value.ToText()));
    }
    return Status::OK();
  });
  const XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
  std::string out(16, '\0');
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>(h.high64 >> (56 - 8 * i));
    out[8 + i] = static_cast<char>(h.low64 >> (56 - 8 * i));
  }
  return out;
}

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

// What every command that reads all rows does first: load the design (the
// target resolved before the source is opened: a missing one is a mapping
// error the user fixes first), check every query before anything is
// created, and lay out the --jobs.
static Status PrepareRun(DesignRequest dr, const std::string& target_url, int jobs,
                         const std::atomic<bool>* cancel, std::unique_ptr<Design>* design,
                         JobLayout* layout) {
  dr.check_mapping = ResolveTarget(target_url);
  WIDEN_ASSIGN_OR_RETURN(*design, LoadDesign(dr));
  Design& d = **design;
  for (const TablePlan* tp : d.tables) WIDEN_RETURN_IF_ERROR(CheckScans(*tp, d.source.get()));
  WIDEN_ASSIGN_OR_RETURN(*layout, LayOutJobs(d, jobs, cancel));
  return Status::OK();
}

// The note on one table of a sharded run: which rows it loaded, how far
// the load is.
static std::string ShardNote(const std::string& table, const ShardSpec& spec,
                             const ShardJoin& join) {
  const ShardLayout& l = join.layout;
  std::string rows;
  if (l.column.empty()) {
    rows = spec.index == 1 ? fmt::format("the whole table ({}: not split)", l.why_not)
                           : fmt::format("nothing ({}: shard 1 loads it whole)", l.why_not);
  } else {
    const FinishedRange r = ShardRange(l, "", spec.index);
    if (r.has_lo && r.has_hi) {
      rows = fmt::format("rows with {} from {} to below {}", l.column, r.lo[0].as_int(),
                         r.hi[0].as_int());
    } else if (r.has_hi) {
      rows = fmt::format("rows with {} below {}", l.column, r.hi[0].as_int());
    } else {
      rows = fmt::format("rows with {} from {} up, and NULL", l.column, r.lo[0].as_int());
    }
  }
  const int with_work = l.column.empty() ? 1 : l.shards;
  std::string state =
      join.state.status == TableStatus::kComplete
          ? "every shard finished: the table is complete"
          : fmt::format("{} of {} shard(s) finished; the table is complete once all are",
                        join.finished.size(), with_work);
  return fmt::format("{}: shard {}/{} of load {}: {}; {}", table, spec.index, spec.count, l.load,
                     rows, state);
}

// The target's store and the locks of a run's tables, taken before the run
// opens the source (HoldEarly) or, for a target that did not exist, right
// after.
struct HeldTables {
  std::unique_ptr<Store> store;
  std::unique_ptr<StateStore> states;
  std::vector<std::unique_ptr<TableLock>> locks;
  std::vector<std::string> names;  // locks[i] is names[i]'s
  std::string target_url;          // where they were taken
};

// Opens the store at `target_url` with `so` and takes the lock of each of
// `tables` (full names) in turn: the table's own, or for a shard of a
// sharded load its shard's. `row_sync`: the store must be one widen sync
// writes (FailedPrecondition otherwise). Errors: NotFound (no store there
// and `so` does not create one), Aborted (a table is busy: another run
// holds it), and the store's own.
static Result<HeldTables> HoldTables(const std::string& target_url,
                                     const std::vector<std::string>& tables, const StoreOptions& so,
                                     const ShardSpec& shard, bool row_sync) {
  HeldTables h;
  h.target_url = target_url;
  // In one order for every run: two runs of overlapping tables listed in
  // other orders would otherwise each take one and both stop busy.
  std::vector<std::string> sorted = tables;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  WIDEN_ASSIGN_OR_RETURN(h.store, Store::Open(target_url, so));
  if (row_sync && !h.store->SupportsRowSync()) {
    return Status::FailedPrecondition(fmt::format(
        "target {}: widen sync does not write to this kind of store; nothing was written",
        MaskUrl(target_url)));
  }
  WIDEN_ASSIGN_OR_RETURN(h.states, h.store->NewStateStore());
  for (const std::string& t : sorted) {
    auto lock =
        shard.active() ? h.states->LockShard(t, shard.index, shard.count) : h.states->LockTable(t);
    if (!lock.ok()) return lock.status();
    h.locks.push_back(std::move(*lock));
    h.names.push_back(t);
  }
  return h;
}

// The mapping of `dr` alone, its target resolved against `target_url`
// (--target, or empty), without opening the source: what a run needs to
// find and hold its target before it reads anything. Errors: the mapping's.
static Result<std::unique_ptr<Design>> LoadMappingOnly(const DesignRequest& dr,
                                                       const std::string& target_url) {
  DesignRequest mapping_only = dr;
  mapping_only.open_source = false;
  mapping_only.check_mapping = ResolveTarget(target_url);
  return LoadDesign(mapping_only);
}

// The locks of a run's tables before the run opens the source, so that a
// second run (migrate or sync, from this machine or another) stops at once,
// busy, writing nothing, even while the source is slow to answer (a table
// lock held there, a long DDL), and runs from cron never pile up: the
// mapping alone names the tables and the target (`target_url`: --target, or
// empty). nullopt when the target does not exist yet (the run creates and
// locks it once the source has been checked) and for a sharded load into
// the embedded store (which the run then refuses).
static Result<std::optional<HeldTables>> HoldEarly(const DesignRequest& dr,
                                                   const std::string& target_url, StoreOptions so,
                                                   const ShardSpec& shard, bool row_sync) {
  WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<Design> pre, LoadMappingOnly(dr, target_url));
  const std::string& url = pre->mapping.target_url;
  if (shard.active() && url.rfind("leveldb:", 0) == 0) return std::optional<HeldTables>();
  std::vector<std::string> names;
  for (const TableMapping& t : pre->mapping.tables) {
    if (!dr.only_table.empty() && t.name != dr.only_table) continue;
    TableDescriptor td;
    SplitTableName(t.name, &td.name_space, &td.table);
    names.push_back(td.FullName());
  }
  so.create_if_missing = false;
  Result<HeldTables> held = HoldTables(url, names, so, shard, row_sync);
  if (held.ok()) return std::optional<HeldTables>(std::move(*held));
  if (held.status().code() == StatusCode::kNotFound) return std::optional<HeldTables>();
  return held.status();
}

// The locks of `tables` moved out of `held` (taken before), in that order.
// Internal when one of them was not taken.
static Result<std::vector<std::unique_ptr<TableLock>>> LocksOf(
    HeldTables* held, const std::vector<const TablePlan*>& tables) {
  std::vector<std::unique_ptr<TableLock>> locks;
  for (const TablePlan* tp : tables) {
    const std::string name = tp->descriptor.FullName();
    const auto found = std::find(held->names.begin(), held->names.end(), name);
    const size_t i = static_cast<size_t>(found - held->names.begin());
    if (found == held->names.end() || held->locks[i] == nullptr) {
      return Status::Aborted("table " + name +
                             " is in the mapping now but was not when this run took its "
                             "tables: the mapping file changed while the run started; nothing "
                             "was written; run again");
    }
    locks.push_back(std::move(held->locks[i]));
  }
  return locks;
}

// Takes the locks of the run's tables, unless HoldEarly did (`held`), and
// hands the store, its states and the locks (in the order of d.tables) over.
static Status HoldAll(const Design& d, std::optional<HeldTables>* held, const StoreOptions& so,
                      const ShardSpec& shard, bool row_sync, std::unique_ptr<Store>* store,
                      std::unique_ptr<StateStore>* states,
                      std::vector<std::unique_ptr<TableLock>>* locks) {
  if (!*held) {
    std::vector<std::string> names;
    for (const TablePlan* tp : d.tables) names.push_back(tp->descriptor.FullName());
    WIDEN_ASSIGN_OR_RETURN(HeldTables h,
                           HoldTables(d.mapping.target_url, names, so, shard, row_sync));
    *held = std::move(h);
  }
  if ((*held)->target_url != d.mapping.target_url) {
    return Status::Aborted(fmt::format(
        "the mapping's target is {} now but was {} when this run took its tables: the mapping "
        "file changed while the run started; nothing was written; run again",
        MaskUrl(d.mapping.target_url), MaskUrl((*held)->target_url)));
  }
  *store = std::move((*held)->store);
  *states = std::move((*held)->states);
  WIDEN_ASSIGN_OR_RETURN(*locks, LocksOf(&**held, d.tables));
  return Status::OK();
}

Result<MigrateResult> Migrate(const MigrateRequest& r) {
  const int64_t start_ms = NowMs();
  const ShardSpec& shard = r.shard;
  StoreOptions so;
  so.writers = r.writers;
  // Every table's lock before anything is written and, when the target
  // exists, before the source is opened (HoldEarly). A shard takes its
  // shard's lock, which the other shards of its load leave to it.
  WIDEN_ASSIGN_OR_RETURN(std::optional<HeldTables> held,
                         HoldEarly(r.design, r.target_url, so, shard, /*row_sync=*/false));
  std::unique_ptr<Design> design;
  JobLayout jobs;
  // A sharded run lays its jobs out per table once it knows the load's
  // layout (recorded in the target); its source connections open after.
  WIDEN_RETURN_IF_ERROR(
      PrepareRun(r.design, r.target_url, shard.active() ? 1 : r.jobs, r.cancel, &design, &jobs));
  Design& d = *design;
  Mapping& m = d.mapping;
  if (shard.active() && m.target_url.rfind("leveldb:", 0) == 0) {
    return Status::InvalidArgument(fmt::format(
        "--shard {}/{}: the embedded store ({}) is written by one process at a time, so several "
        "processes cannot load it together; --shard is for HBase (hbase://HOST:PORT). To use "
        "more connections and cores on this machine, use --jobs; nothing was written",
        shard.index, shard.count, MaskUrl(m.target_url)));
  }

  MigrateResult result;
  result.run_id = NewRunId(start_ms);
  result.target = MaskUrl(m.target_url);
  result.target_from = r.target_url.empty() ? "the mapping's target" : "--target";
  std::unique_ptr<JsonLinesRejects> rejects;
  if (!r.rejects_path.empty()) {
    WIDEN_RETURN_IF_ERROR(CheckRejectsPath(r.rejects_path, m));
    WIDEN_ASSIGN_OR_RETURN(rejects, JsonLinesRejects::Open(r.rejects_path));
    result.rejects_path = r.rejects_path;
  }

  std::unique_ptr<Store> store;
  std::unique_ptr<StateStore> states;
  std::vector<std::unique_ptr<TableLock>> locks;
  WIDEN_RETURN_IF_ERROR(HoldAll(d, &held, so, shard, /*row_sync=*/false, &store, &states, &locks));

  // The cell timestamp: given, else the run's start. A shard adopts its
  // load's (ShardLayout), and lays later loads out with the first it adopts.
  std::optional<int64_t> given_ms = r.timestamp_ms ? r.timestamp_ms : m.timestamp_ms;
  int64_t default_ms = given_ms ? *given_ms : start_ms;
  AssembleOptions ao;
  ao.rejects = rejects.get();
  ao.progress = r.progress;
  ao.max_cell_bytes = store->max_cell_bytes();

  // Every table is created (or checked) before any is written, and recorded
  // as loading until its run ends. A new table is recorded before it is
  // created, so that a run that dies in between leaves no table, or one
  // that scan calls incomplete — never an empty table with no record; an
  // existing one is checked first, so that a refused run changes nothing.
  struct Target {
    std::string name;
    std::optional<uint64_t> version;  // of its state
    TableState state;
    int64_t timestamp_ms = 0;
    std::optional<ShardJoin> shard;  // a sharded run's load of the table
  };
  std::vector<Target> targets;
  for (size_t i = 0; i < d.tables.size(); ++i) {
    const TablePlan* tp = d.tables[i];
    Target t;
    t.name = tp->descriptor.FullName();
    Result<TableDescriptor> described = store->DescribeTable(t.name);
    if (!described.ok() && described.status().code() != StatusCode::kNotFound) {
      return described.status();
    }
    const bool existed = described.ok();
    if (existed) {
      WIDEN_ASSIGN_OR_RETURN(t.name, CreateTargetTable(*tp, d.source.get(), store.get()));
    }
    t.state.status = TableStatus::kLoading;
    t.state.run_id = result.run_id;
    t.state.started_ms = start_ms;
    t.state.mapping_fingerprint = TableFingerprint(*tp);
    t.timestamp_ms = default_ms;
    t.state.extensions[kLoadTimestampExtension] = std::to_string(t.timestamp_ms);
    bool creates = true;
    if (shard.active()) {
      WIDEN_ASSIGN_OR_RETURN(ShardJoin join,
                             JoinShardLoad(
                                 states.get(), t.name, tp->scan.table, shard, t.state, given_ms,
                                 [&]() {
                                   return LayOutShards(*tp, d.source.get(), shard.count,
                                                       result.run_id, default_ms);
                                 },
                                 [&](const ShardLayout& l) {
                                   return !ShardRows(*tp, l, shard.index, 1).ranges.empty();
                                 }));
      const std::optional<ColumnExpr> column = SplitColumn(*tp);
      const std::string mine = column ? column->alias + "." + column->column : "";
      if (!join.layout.column.empty() && join.layout.column != mine) {
        return Status::FailedPrecondition(fmt::format(
            "table '{}': its sharded load (run {}) splits it by {}, but this run's plan by '{}'",
            t.name, join.layout.load, join.layout.column, mine));
      }
      t.timestamp_ms = join.layout.timestamp_ms;
      if (!given_ms) default_ms = t.timestamp_ms;
      jobs.splits[i] = ShardRows(*tp, join.layout, shard.index, r.jobs);
      creates = !jobs.splits[i].ranges.empty();
      t.version = join.version;
      t.state = join.state;
      t.shard = std::move(join);
    } else {
      WIDEN_ASSIGN_OR_RETURN(std::optional<TableState> before, states->Get(t.name));
      if (before) t.version = before->version;
      WIDEN_RETURN_IF_ERROR(PutState(states.get(), t.name, &t.version, t.state));
    }
    if (!existed && creates) {
      WIDEN_ASSIGN_OR_RETURN(std::string created,
                             CreateTargetTable(*tp, d.source.get(), store.get()));
      if (created != t.name) {
        return Status::Internal(fmt::format("table '{}' was created as '{}'", t.name, created));
      }
    }
    targets.push_back(std::move(t));
  }
  if (shard.active()) WIDEN_RETURN_IF_ERROR(OpenJobSources(d, &jobs, r.cancel));
  ao.cancel = r.cancel;

  for (size_t i = 0; i < d.tables.size(); ++i) {
    const TablePlan& tp = *d.tables[i];
    const RowSplit& split = jobs.splits[i];
    Target& target = targets[i];
    if (split.ranges.empty()) {  // a shard with nothing of this table
      result.job_notes.push_back(ShardNote(target.name, shard, *target.shard));
      continue;
    }
    ao.timestamp_ms = target.timestamp_ms;
    TableStats stats;
    stats.table = target.name;
    Status s = RunJobs(
        tp, split, jobs.sources, [&]() { return store->NewSink(target.name); }, ao, &stats);
    if (split.ranges.size() > 1) {
      result.job_notes.push_back(fmt::format(
          "{}: {} jobs, by ranges of {}{}{}", target.name, split.ranges.size(), split.column,
          split.in_key_order ? ", written in key order" : "",
          split.why_not.empty() ? "" : fmt::format(" (not {}: {})", r.jobs, split.why_not)));
    } else if (!split.why_not.empty() && (r.jobs > 1 || !shard.active())) {
      result.job_notes.push_back(fmt::format("{}: one job: {}", target.name, split.why_not));
    }
    if (s.ok() && rejects) s = rejects->Flush();
    if (r.table_done) r.table_done();
    if (s.code() == StatusCode::kCancelled) {
      // Left loading: the next run (and `widen scan`) knows it is incomplete.
      return Status::Cancelled(fmt::format(
          "interrupted: table '{}' is left incomplete after {} rows (widen scan warns about it); "
          "run the migration again",
          target.name, stats.rows));
    }
    // A run that lost its lock records nothing (another run took the table).
    if (s.ok()) s = locks[i]->status();
    if (target.shard) {
      // RunJobs closed (synced) every sink: this shard's cells are durable.
      auto finished = FinishShard(states.get(), target.name, tp.scan.table, shard, *target.shard,
                                  s.ok(), NowMs());
      if (!s.ok()) return s;
      if (!finished.ok()) return finished.status();
      result.job_notes.push_back(ShardNote(target.name, shard, *finished));
      if (finished->state.status == TableStatus::kComplete) {
        WIDEN_RETURN_IF_ERROR(ClearStateMark(store.get(), target.name));
      }
      result.tables.push_back(stats);
      continue;
    }
    if (!s.ok()) {
      TableState failed = target.state;
      failed.status = TableStatus::kFailed;
      failed.finished_ms = NowMs();
      (void)PutState(states.get(), target.name, &target.version, failed);
      return s;
    }
    // RunJobs closed (synced) every sink: the cells are durable.
    TableState done = target.state;
    done.status = TableStatus::kComplete;
    done.finished_ms = NowMs();
    WIDEN_RETURN_IF_ERROR(PutState(states.get(), target.name, &target.version, done));
    WIDEN_RETURN_IF_ERROR(ClearStateMark(store.get(), target.name));
    result.tables.push_back(stats);
  }
  if (rejects) result.rejected = rejects->count();
  return result;
}

Result<SyncResult> Sync(const SyncRequest& r) {
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t start_ms = NowMs();
  // Every table's lock before anything is written and, when the target
  // exists, before the source is opened (HoldEarly).
  WIDEN_ASSIGN_OR_RETURN(std::optional<HeldTables> held,
                         HoldEarly(r.design, r.target_url, StoreOptions(), ShardSpec(),
                                   /*row_sync=*/true));
  std::unique_ptr<Design> design;
  JobLayout jobs;
  WIDEN_RETURN_IF_ERROR(PrepareRun(r.design, r.target_url, r.jobs, r.cancel, &design, &jobs));
  Design& d = *design;
  Mapping& m = d.mapping;
  std::unique_ptr<Store> store;
  std::unique_ptr<StateStore> states;
  std::vector<std::unique_ptr<TableLock>> locks;
  WIDEN_RETURN_IF_ERROR(
      HoldAll(d, &held, StoreOptions(), ShardSpec(), /*row_sync=*/true, &store, &states, &locks));

  SyncResult result;
  result.run_id = NewRunId(start_ms);
  result.target = MaskUrl(m.target_url);
  result.target_from = r.target_url.empty() ? "the mapping's target" : "--target";
  std::unique_ptr<JsonLinesRejects> rejects;
  if (!r.rejects_path.empty()) {
    WIDEN_RETURN_IF_ERROR(CheckRejectsPath(r.rejects_path, m));
    WIDEN_ASSIGN_OR_RETURN(rejects, JsonLinesRejects::Open(r.rejects_path));
    result.rejects_path = r.rejects_path;
  }
  struct Target {
    std::string name;
    std::optional<uint64_t> version;
    TableState state;
    bool digests = false;  // every stored row has its digest
    int64_t timestamp_ms = 0;
    WatermarkSupport watermark;      // whether the table syncs in watermark mode
    std::vector<std::string> notes;  // what the user should know (TableSyncResult::notes)
    bool incremental = false;        // watermark mode from recorded watermarks
    std::vector<Watermark> before, after;
  };
  std::vector<Target> targets;
  for (const TablePlan* tp : d.tables) {
    Target t;
    WIDEN_ASSIGN_OR_RETURN(t.name, CreateTargetTable(*tp, d.source.get(), store.get()));
    WIDEN_ASSIGN_OR_RETURN(std::optional<TableState> before, states->Get(t.name));
    if (before) {
      t.version = before->version;
      t.state = *before;
    }
    auto ext = [&](const char* key) -> std::string {
      auto it = t.state.extensions.find(key);
      return it == t.state.extensions.end() ? "" : it->second;
    };
    t.digests = ext(kDigestsExtension) == "complete";
    // The cell timestamp the table was last loaded with, when recorded.
    const std::string recorded = ext(kLoadTimestampExtension);
    const std::optional<int64_t> recorded_ts =
        recorded.empty() ? std::nullopt : std::optional<int64_t>(std::stoll(recorded));
    if (r.timestamp_ms) {
      t.timestamp_ms = *r.timestamp_ms;
    } else if (m.timestamp_ms) {
      t.timestamp_ms = *m.timestamp_ms;
    } else {
      t.timestamp_ms = recorded_ts.value_or(start_ms);
    }
    // A table written with another design (the mapping changed, or another
    // mapping writes it): sync makes it hold exactly what this mapping
    // gives, so rows the other design wrote would be rewritten or removed.
    const std::string fingerprint = TableFingerprint(*tp);
    const bool design_changed = before && !before->mapping_fingerprint.empty() &&
                                before->mapping_fingerprint != fingerprint;
    if (design_changed && !r.accept_mapping_change) {
      return Status::FailedPrecondition(fmt::format(
          "{}: table '{}' was last written with another design (the mapping changed since, or "
          "another mapping writes this table): a sync makes the table hold exactly what this "
          "mapping gives, rewriting or removing the rows the other design wrote. Nothing was "
          "written. If this mapping is the one to keep, run widen sync "
          "--accept-mapping-change once",
          tp->mapping->loc.ToString(), t.name));
    }
    // Watermark mode reads the changes since the recorded watermarks when
    // the last full pass left its index and every watermark; otherwise (a
    // migrate, a digest-mode sync or a repair wrote the table last, the
    // watermark column changed, --full) a full pass writes them anew. So
    // too after a new design (accepted) or a new cell timestamp
    // (--timestamp-ms, the mapping's timestamp_ms): they change rows no
    // source change touched.
    const bool timestamp_changed = recorded_ts && *recorded_ts != t.timestamp_ms;
    t.watermark = CheckWatermarkSync(*tp, d.plan.sync);
    if (t.watermark.ok) {
      t.before = t.state.watermarks;
      t.incremental = !r.full && !design_changed && !timestamp_changed && t.digests &&
                      ext(kSyncIndexExtension) == "complete" &&
                      WatermarksCover(*tp, d.plan.sync, t.state.watermarks);
      if (!r.full && design_changed) {
        t.notes.push_back(
            "a full pass: the mapping changed since the last run (--accept-mapping-change)");
      } else if (!r.full && timestamp_changed) {
        t.notes.push_back(fmt::format(
            "a full pass: the cells' timestamp is {} ms, the last run's {} ms; every row "
            "written anew with it",
            t.timestamp_ms, recorded));
      }
      WIDEN_ASSIGN_OR_RETURN(t.after, ReadWatermarks(*tp, d.plan.sync, d.source.get(), &t.notes));
      if (t.incremental) {
        std::string back = WatermarkWentBack(d.plan.sync, t.state.watermarks, t.after);
        if (!back.empty()) t.notes.push_back(std::move(back));
      }
    }
    if (!t.incremental) {
      // Until the pass ends, the table's index and watermarks are not whole.
      t.state.extensions.erase(kSyncIndexExtension);
      t.state.watermarks.clear();
    }
    t.state.status = TableStatus::kLoading;
    t.state.run_id = result.run_id;
    t.state.started_ms = start_ms;
    t.state.finished_ms = 0;
    t.state.mapping_fingerprint = fingerprint;
    t.state.extensions[kLoadTimestampExtension] = std::to_string(t.timestamp_ms);
    targets.push_back(std::move(t));
  }

  for (size_t i = 0; i < d.tables.size(); ++i) {
    const auto table_start = std::chrono::steady_clock::now();
    const TablePlan& tp = *d.tables[i];
    Target& target = targets[i];
    AssembleOptions ao;
    ao.timestamp_ms = target.timestamp_ms;
    ao.progress = r.progress;
    ao.cancel = r.cancel;
    ao.rejects = rejects.get();
    ao.max_cell_bytes = store->max_cell_bytes();
    TableSyncResult out;
    out.table = target.name;
    out.timestamp_ms = target.timestamp_ms;
    out.read.table = target.name;
    // The table is recorded loading only just before its first write: a
    // run stopped while reading the source leaves it as it was. Every row
    // the source gives now is compared with the stored one in row key order:
    // streamed as it comes when the rows come in key order (one job, and the
    // plan's KeyOrder read or database; a cell out of order all the same sends the table
    // through the external sort, where the rows written meanwhile are found
    // unchanged), else sorted on disk first.
    std::unique_ptr<RowDigestReader> stored;
    std::unique_ptr<FirstWriteHook> writer;
    auto open = [&]() -> Status {
      WIDEN_ASSIGN_OR_RETURN(stored, store->NewDigestReader(target.name, !target.digests));
      if (writer == nullptr) {
        WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<RowWriter> w, store->NewRowWriter(target.name));
        writer = std::make_unique<FirstWriteHook>(std::move(w), [&]() {
          return PutState(states.get(), target.name, &target.version, target.state);
        });
      }
      return Status::OK();
    };
    Status s = open();
    out.watermarks_before = target.before;
    out.watermarks_after = target.after;
    out.notes = target.notes;
    out.why = target.watermark.why;
    bool sorted = jobs.splits[i].ranges.size() > 1 || tp.order.how == KeyOrder::kSort;
    std::unique_ptr<SyncIndexRecorder> recorder;
    if (s.ok() && target.incremental) {
      out.mode = "watermark";
      out.hard_deletes =
          ReconcilesEverything(tp, d.plan.sync, r.reconcile) ? "reconciled" : "not detected";
      ChangeSyncRequest cr;
      cr.table = &tp;
      cr.sync = &d.plan.sync;
      cr.source = d.source.get();
      cr.store = store.get();
      cr.writer = writer.get();
      cr.full_name = target.name;
      cr.recorded = target.before;
      cr.reconcile = r.reconcile;
      cr.assemble = ao;
      s = SyncChanges(cr, &out.read, &out.rows, &out.changes);
      sorted = false;
    } else if (s.ok() && target.watermark.ok) {
      // The full pass writes the sync index anew beside the rows.
      out.mode = "full";
      recorder = std::make_unique<SyncIndexRecorder>(tp, writer.get());
      recorder->Hook(&ao);
      s = writer->ClearIndex();
    }
    // A pass that reads the stored rows from their cells rewrites every row
    // and trusts no recorded digest or index entry (the state written at
    // its first write records neither complete, so a run after a crash
    // does the same): their writes may follow the rows' (RowWriter).
    if (s.ok() && !target.incremental && !target.digests) writer->DeferDigestsAndIndex();
    if (s.ok() && !sorted && !target.incremental) {
      s = RunJobs(
          tp, jobs.splits[i], jobs.sources,
          [&]() -> Result<std::unique_ptr<CellSink>> {
            auto rows =
                std::make_unique<RowSyncSink>(stored.get(), writer.get(), r.cancel, &out.rows);
            if (recorder != nullptr) return std::unique_ptr<CellSink>(std::move(rows));
            // The rows' digests, comparisons and writes on a second thread,
            // beside the reading and assembly (not in a full pass: its index
            // entries go through the same writer from the assembling thread).
            return std::unique_ptr<CellSink>(new PipelineSink(std::move(rows)));
          },
          ao, &out.read);
      if (s.code() == StatusCode::kFailedPrecondition &&
          s.message().find(RowSyncSink::kOutOfOrder) != std::string::npos) {
        sorted = true;
        const RowSyncStats streamed = out.rows;
        out.rows = RowSyncStats();
        out.rows.rows_written = streamed.rows_written;
        out.rows.rows_deleted = streamed.rows_deleted;
        out.rows.cells_put = streamed.cells_put;
        out.rows.cells_deleted = streamed.cells_deleted;
        out.rows.bytes_put = streamed.bytes_put;
        s = writer->Sync();  // a new reader sees what was written
        if (s.ok()) s = open();
      }
    }
    if (s.ok() && sorted && !target.incremental) {
      auto runs = std::make_shared<CellRuns>();
      s = RunJobs(
          tp, jobs.splits[i], jobs.sources,
          [&]() -> Result<std::unique_ptr<CellSink>> {
            return std::unique_ptr<CellSink>(new RunsSink(runs));
          },
          ao, &out.read);
      if (s.ok()) s = SyncRows(runs.get(), stored.get(), writer.get(), r.cancel, &out.rows);
    }
    const bool writing = writer != nullptr && writer->wrote();
    if (s.ok()) s = writer->Sync();
    if (s.ok() && rejects) s = rejects->Flush();
    if (r.table_done) r.table_done();
    if (s.code() == StatusCode::kCancelled) {
      if (!writing) {
        return Status::Cancelled(fmt::format(
            "interrupted while table '{}' had nothing written yet: it is as it was; run the sync "
            "again",
            target.name));
      }
      return Status::Cancelled(fmt::format(
          "interrupted: table '{}' is left partly synced (every row whole, old or new); run the "
          "sync again",
          target.name));
    }
    if (!s.ok()) {
      if (!writing) return s;  // nothing of this table was written
      TableState failed = target.state;
      failed.status = TableStatus::kFailed;
      failed.finished_ms = NowMs();
      (void)PutState(states.get(), target.name, &target.version, failed);
      return s;
    }
    // The writer synced: the rows and their digests are durable. Recorded
    // only while this run still holds the table.
    WIDEN_RETURN_IF_ERROR(locks[i]->status());
    TableState done = target.state;
    done.status = TableStatus::kComplete;
    done.finished_ms = NowMs();
    done.extensions[kDigestsExtension] = "complete";
    if (target.watermark.ok) {
      // The cells are durable: the watermarks read at the snapshot hold.
      done.extensions[kSyncIndexExtension] = "complete";
      done.watermarks = target.after;
    }
    WIDEN_RETURN_IF_ERROR(PutState(states.get(), target.name, &target.version, done));
    WIDEN_RETURN_IF_ERROR(ClearStateMark(store.get(), target.name));
    // Cells one source row gives twice (the assembler keeps the last) are
    // replaced cells too, as migrate counts them.
    AddReplacedByAssembly(out.read, &out.rows.overwritten, &out.rows.first_overwritten);
    out.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - table_start).count();
    result.tables.push_back(std::move(out));
  }
  if (rejects) result.rejected = rejects->count();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

Result<VerifyResult> Verify(const VerifyRequest& r) {
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t now_ms = r.now_ms != 0 ? r.now_ms : NowMs();
  // The store before the source, as migrate and sync take it: while
  // another run has the embedded store open, verify exits busy at once
  // instead of waiting for the source first.
  StoreOptions so;
  so.create_if_missing = false;  // verify never creates anything
  std::unique_ptr<Store> store;
  {
    WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<Design> pre, LoadMappingOnly(r.design, r.target_url));
    WIDEN_ASSIGN_OR_RETURN(store, Store::Open(pre->mapping.target_url, so));
  }
  std::unique_ptr<Design> design;
  JobLayout jobs;
  WIDEN_RETURN_IF_ERROR(PrepareRun(r.design, r.target_url, r.jobs, r.cancel, &design, &jobs));
  Design& d = *design;
  WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<StateStore> states, store->NewStateStore());

  VerifyResult result;
  result.sample_every = std::max<uint64_t>(1, r.sample_every);
  for (size_t i = 0; i < d.tables.size(); ++i) {
    const auto table_start = std::chrono::steady_clock::now();
    const TablePlan& tp = *d.tables[i];
    TableVerifyResult out;
    out.table = tp.descriptor.FullName();
    out.read.table = out.table;

    // The table as the target has it: its state, and the timestamp its
    // cells were written with.
    auto described = store->DescribeTable(out.table);
    if (!described.ok() && described.status().code() != StatusCode::kNotFound) {
      return described.status();
    }
    out.exists = described.ok();
    std::optional<TableState> state;
    if (out.exists) {
      WIDEN_ASSIGN_OR_RETURN(state, states->Get(out.table));
      if (state) {
        out.state = std::string(TableStatusName(state->status));
        if (state->status != TableStatus::kComplete) {
          out.why_incomplete = IncompleteReason(states.get(), out.table, state);
        }
        out.same_design = state->mapping_fingerprint.empty() ||
                          state->mapping_fingerprint == TableFingerprint(tp);
      }
      auto mark = described->metadata.find(kStateMetadata);
      if (mark != described->metadata.end() && (!state || mark->second == "repaired")) {
        out.state = mark->second;
      }
    }
    const std::string recorded = state && state->extensions.count(kLoadTimestampExtension) > 0
                                     ? state->extensions.at(kLoadTimestampExtension)
                                     : "";
    if (r.timestamp_ms) {
      out.timestamp_ms = *r.timestamp_ms;
      out.timestamp_from = "--timestamp-ms";
    } else if (d.mapping.timestamp_ms) {
      out.timestamp_ms = *d.mapping.timestamp_ms;
      out.timestamp_from = "mapping";
    } else if (!recorded.empty()) {
      const auto [end, ec] =
          std::from_chars(recorded.data(), recorded.data() + recorded.size(), out.timestamp_ms);
      if (ec != std::errc() || end != recorded.data() + recorded.size()) {
        return Status::DataLoss(
            fmt::format("table '{}': its state records the timestamp '{}', "
                        "which is not a number",
                        out.table, recorded));
      }
      out.timestamp_from = "table state";
    } else {
      // Only a table with no cell can be compared without it.
      bool holds = false;
      if (out.exists) {
        WIDEN_ASSIGN_OR_RETURN(holds, HoldsCells(store.get(), out.table));
      }
      if (holds) {
        return Status::FailedPrecondition(fmt::format(
            "{}: table '{}': the target records no timestamp its cells were written with (it "
            "was not written by widen migrate or sync); give the one used with --timestamp-ms",
            tp.mapping->loc.ToString(), out.table));
      }
      out.timestamp_ms = now_ms;
    }

    RowVerifyOptions vo;
    vo.families = tp.descriptor.families;
    vo.now_ms = now_ms;
    vo.sample_every = result.sample_every;
    vo.max_listed = r.max_listed;
    std::unique_ptr<CellReader> stored;
    std::unique_ptr<CountingRejects> rejects;
    AssembleOptions ao;
    ao.timestamp_ms = out.timestamp_ms;
    ao.progress = r.progress;
    ao.cancel = r.cancel;
    ao.max_cell_bytes = store->max_cell_bytes();
    // Opens the stored table's reader at its first cell, and counts the
    // rejected rows anew.
    auto start = [&]() -> Status {
      out.rows = RowVerifyStats();
      out.read = TableStats();
      out.read.table = out.table;
      rejects = std::make_unique<CountingRejects>(r.max_listed);
      ao.rejects = rejects.get();
      if (!out.exists) {
        stored = std::make_unique<NoCells>();
        return Status::OK();
      }
      ReadOptions ro;
      ro.max_versions = std::numeric_limits<int>::max();
      ro.now_ms = now_ms;
      WIDEN_ASSIGN_OR_RETURN(stored, store->NewReader(out.table, ro));
      return stored->status();
    };
    // As sync: streamed when the rows come in key order (KeyOrder read or
    // database; a cell out of order all the same sends the table through the external sort),
    // else sorted on disk first.
    Status s = start();
    bool sorted = jobs.splits[i].ranges.size() > 1 || tp.order.how == KeyOrder::kSort;
    if (s.ok() && !sorted) {
      s = RunJobs(
          tp, jobs.splits[i], jobs.sources,
          [&]() -> Result<std::unique_ptr<CellSink>> {
            return std::unique_ptr<CellSink>(
                new RowVerifySink(stored.get(), vo, r.cancel, &out.rows));
          },
          ao, &out.read);
      if (s.code() == StatusCode::kFailedPrecondition &&
          s.message().find(RowVerifySink::kOutOfOrder) != std::string::npos) {
        sorted = true;
        s = start();
      }
    }
    if (s.ok() && sorted) {
      auto runs = std::make_shared<CellRuns>();
      s = RunJobs(
          tp, jobs.splits[i], jobs.sources,
          [&]() -> Result<std::unique_ptr<CellSink>> {
            return std::unique_ptr<CellSink>(
                new SampleSink(std::make_unique<RunsSink>(runs), result.sample_every));
          },
          ao, &out.read);
      if (s.ok()) s = VerifyRows(runs.get(), stored.get(), vo, r.cancel, &out.rows);
    }
    if (r.table_done) r.table_done();
    if (s.code() == StatusCode::kCancelled) {
      return Status::Cancelled("interrupted; nothing was written");
    }
    if (!s.ok()) return s;
    out.rejected = rejects->count();
    out.first_rejected = rejects->first();
    for (const RowMismatch& row : out.rows.missing) out.missing.push_back(NameRow(tp, row));
    for (const RowMismatch& row : out.rows.extra) out.extra.push_back(NameRow(tp, row));
    for (const RowMismatch& row : out.rows.different) out.different.push_back(NameRow(tp, row));
    AddReplacedByAssembly(out.read, &out.rows.cells_replaced, nullptr);
    out.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - table_start).count();
    result.tables.push_back(std::move(out));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

Result<PreviewRun> PreviewDesign(const DesignRequest& request, uint64_t sample, uint64_t show_rows,
                                 std::optional<int64_t> timestamp_ms) {
  PreviewRun run;
  run.timestamp_ms = NowMs();
  WIDEN_ASSIGN_OR_RETURN(run.design, LoadDesign(request));
  Design& in = *run.design;
  if (timestamp_ms) {
    run.timestamp_ms = *timestamp_ms;
  } else if (in.mapping.timestamp_ms) {
    run.timestamp_ms = *in.mapping.timestamp_ms;
  }
  for (const TablePlan* tp : in.tables) {
    PreviewOptions po;
    po.sample_rows = sample;
    po.show_rows = show_rows;
    po.timestamp_ms = run.timestamp_ms;
    const SourceTable* st = tp->scan.table.empty() ? nullptr : in.schema.FindTable(tp->scan.table);
    po.estimated_rows = st == nullptr ? -1 : st->estimated_rows;
    auto preview = PreviewTable(*tp, in.source.get(), po);
    if (!preview.ok()) {
      // The run's messages may name the table already.
      const std::string named = fmt::format("table '{}': ", tp->mapping->name);
      std::string message = preview.status().message();
      if (message.rfind(named, 0) == 0) message.erase(0, named.size());
      return Status(preview.status().code(),
                    fmt::format("{}: {}{}", tp->mapping->loc.ToString(), named, message));
    }
    WIDEN_ASSIGN_OR_RETURN(RangeReport ranges, CheckValueRanges(*tp, in.source.get()));
    run.tables.push_back(TablePreviewResult{tp, DescribeRowKey(*tp, in.schema), std::move(*preview),
                                            std::move(ranges)});
  }
  return run;
}

Result<LintRun> LintDesign(const DesignRequest& request, const LintOptions& options) {
  DesignRequest r = request;
  r.make_plan = false;  // the linter plans each table itself, to report plan errors as findings
  LintRun run;
  WIDEN_ASSIGN_OR_RETURN(run.design, LoadDesign(r));
  WIDEN_ASSIGN_OR_RETURN(run.report, Lint(run.design->mapping, run.design->source.get(), options));
  return run;
}

Result<InitRun> DraftDesign(const InitRequest& request) {
  SourceOptions so;
  so.fetch_rows = request.fetch_rows;
  WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<Source> source, Source::Open(request.source_url, so));
  WIDEN_ASSIGN_OR_RETURN(SourceSchema schema, source->Introspect());
  DraftOptions o = request.draft;
  o.source_url = request.source_url;
  o.dialect = source->dialect();
  InitRun run;
  WIDEN_ASSIGN_OR_RETURN(run.draft, DraftMapping(schema, source.get(), o));
  if (run.draft.yaml.size() > kMaxMappingTextBytes) {
    return Status::InvalidArgument(fmt::format(
        "the draft of {} target table(s) is {} bytes, more than a mapping may hold (1 MiB, {} "
        "bytes): draft the schema in parts, each with the tables that belong together "
        "(--tables T1,T2,... or --root T1,T2,...), one mapping each",
        run.draft.target_tables, run.draft.yaml.size(), kMaxMappingTextBytes));
  }
  auto mapping = ParseMapping(run.draft.yaml, request.file_name);
  if (!mapping.ok()) {
    return Status::Internal("the draft does not load (a bug in widen init): " +
                            mapping.status().message());
  }
  LintOptions lo;
  lo.policy = &o.policy;
  lo.now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  WIDEN_ASSIGN_OR_RETURN(run.report, Lint(*mapping, source.get(), lo));
  return run;
}

Result<DesignTablesRun> DesignTables(const DesignRequest& request, const SplitOptions& so) {
  DesignTablesRun run;
  WIDEN_ASSIGN_OR_RETURN(run.design, LoadDesign(request));
  for (const TablePlan* tp : run.design->tables) {
    auto split = ComputeSplitPoints(*tp, run.design->source.get(), so);
    if (!split.ok()) {
      return Status(split.status().code(),
                    fmt::format("table '{}': {}", tp->mapping->name, split.status().message()));
    }
    DesignedTable t;
    t.descriptor = tp->descriptor;
    t.descriptor.split_points = split->points;
    WIDEN_RETURN_IF_ERROR(t.descriptor.Validate());
    t.split = std::move(*split);
    t.plan = tp;
    run.tables.push_back(std::move(t));
  }
  return run;
}

Result<std::vector<AppliedTable>> ApplyTables(const std::string& url,
                                              const std::vector<TableDescriptor>& tables) {
  WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open(url, StoreOptions()));
  std::vector<AppliedTable> out;
  for (const TableDescriptor& d : tables) {
    auto before = store->DescribeTable(d.FullName());
    if (!before.ok() && before.status().code() != StatusCode::kNotFound) return before.status();
    WIDEN_RETURN_IF_ERROR(store->CreateTable(d));
    out.push_back(AppliedTable{d.FullName(), before.ok(), d.split_points.size() + 1});
  }
  return out;
}

}  // namespace widen
