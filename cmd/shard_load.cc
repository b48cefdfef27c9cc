#include "cmd/shard_load.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace widen {

namespace {

// Compare-and-set attempts before giving up on a state that keeps changing.
constexpr int kStateAttempts = 20;

SplitBounds BoundsOf(const ShardLayout& layout) {
  SplitBounds b;
  b.column = layout.column;
  b.min = layout.min;
  b.max = layout.max;
  return b;
}

bool SameInts(const std::vector<Value>& a, const std::vector<Value>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type() != b[i].type() || a[i].is_null() != b[i].is_null()) return false;
    if (!a[i].is_null() && a[i].as_int() != b[i].as_int()) return false;
  }
  return true;
}

bool SameRange(const FinishedRange& a, const FinishedRange& b) {
  return a.source_table == b.source_table && a.columns == b.columns && a.has_lo == b.has_lo &&
         a.has_hi == b.has_hi && a.with_null == b.with_null &&
         (!a.has_lo || SameInts(a.lo, b.lo)) && (!a.has_hi || SameInts(a.hi, b.hi));
}

// The shards that have rows to load: all of a split table, shard 1 of one
// that is not.
int ShardsWithWork(const ShardLayout& layout) { return layout.column.empty() ? 1 : layout.shards; }

std::string ListShards(const std::vector<int>& shards) {
  if (shards.empty()) return "none";
  std::string out;
  for (int s : shards) out += (out.empty() ? "" : ", ") + std::to_string(s);
  return out;
}

// The layout recorded in `state` for an unfinished load, if any.
Result<std::optional<ShardLayout>> UnfinishedLoad(const std::string& table,
                                                  const std::optional<TableState>& state) {
  if (!state) return std::optional<ShardLayout>();
  auto it = state->extensions.find(kShardsExtension);
  if (it == state->extensions.end()) return std::optional<ShardLayout>();
  Result<ShardLayout> layout = DecodeShardLayout(it->second);
  if (!layout.ok()) {
    return Status::DataLoss(
        fmt::format("table '{}': its state: {}", table, layout.status().message()));
  }
  if (state->status == TableStatus::kComplete) return std::optional<ShardLayout>();
  return std::optional<ShardLayout>(std::move(*layout));
}

std::string Describe(const ShardLayout& layout, const std::vector<int>& finished) {
  return fmt::format(
      "a load in {} shards (laid out by run {}, cell timestamp {}; shards finished: {})",
      layout.shards, layout.load, layout.timestamp_ms, ListShards(finished));
}

}  // namespace

Result<ShardSpec> ParseShardSpec(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(fmt::format("--shard {}: {}", text, why));
  };
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return bad("expected I/N, e.g. 2/3");
  auto number = [](std::string_view s, int* out) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size();
  };
  ShardSpec spec;
  if (!number(text.substr(0, slash), &spec.index) || !number(text.substr(slash + 1), &spec.count)) {
    return bad("expected I/N with whole numbers, e.g. 2/3");
  }
  if (spec.count < 1 || spec.count > kMaxShards) {
    return bad(fmt::format("N must be from 1 to {}", kMaxShards));
  }
  if (spec.index < 1 || spec.index > spec.count) return bad("I must be from 1 to N");
  return spec;
}

std::string EncodeShardLayout(const ShardLayout& l) {
  nlohmann::json j = {{"load", l.load}, {"shards", l.shards}, {"column", l.column},
                      {"min", l.min},   {"max", l.max},       {"timestamp_ms", l.timestamp_ms}};
  if (!l.why_not.empty()) j["why_not"] = l.why_not;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<ShardLayout> DecodeShardLayout(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Status::DataLoss(fmt::format("the sharded load's layout ({} '{}') {}", kShardsExtension,
                                        text.substr(0, 200), why));
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return bad("is not a JSON object");
  ShardLayout l;
  auto str = [&](const char* key, std::string* out, bool required) {
    auto it = j.find(key);
    if (it == j.end()) return !required;
    if (!it->is_string()) return false;
    *out = it->get<std::string>();
    return true;
  };
  auto num = [&](const char* key, int64_t* out) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return false;
    *out = it->get<int64_t>();
    return true;
  };
  int64_t shards = 0;
  if (!str("load", &l.load, true) || !str("column", &l.column, true) ||
      !str("why_not", &l.why_not, false) || !num("shards", &shards) || !num("min", &l.min) ||
      !num("max", &l.max) || !num("timestamp_ms", &l.timestamp_ms)) {
    return bad("lacks a field or has one of another type");
  }
  if (shards < 1 || shards > kMaxShards) return bad("has a shard count out of range");
  l.shards = static_cast<int>(shards);
  if (!l.column.empty() && static_cast<__int128>(l.max) - l.min + 1 < l.shards) {
    return bad("has fewer values between min and max than shards");
  }
  return l;
}

Result<ShardLayout> LayOutShards(const TablePlan& plan, Source* source, int shards,
                                 const std::string& load, int64_t timestamp_ms) {
  ShardLayout l;
  l.load = load;
  l.shards = shards;
  l.timestamp_ms = timestamp_ms;
  if (shards < 2) {
    l.why_not = "one shard";  // the whole table
    return l;
  }
  WIDEN_ASSIGN_OR_RETURN(SplitBounds bounds, ReadSplitBounds(plan, source));
  if (bounds.column.empty()) {
    l.why_not = bounds.why_not;
  } else if (bounds.span() < shards) {
    l.why_not = fmt::format("{} has fewer distinct values than shards", bounds.column);
  } else {
    l.column = bounds.column;
    l.min = bounds.min;
    l.max = bounds.max;
  }
  return l;
}

RowSplit ShardRows(const TablePlan& plan, const ShardLayout& layout, int shard, int jobs) {
  RowSplit split;
  if (layout.column.empty()) {
    if (shard == 1) split.ranges.resize(1);
    split.why_not = layout.why_not;
    return split;
  }
  const SplitBounds bounds = BoundsOf(layout);
  const int64_t n = layout.shards;
  if (jobs > 1 && bounds.span() >= n * jobs) {
    return SliceRows(plan, bounds, static_cast<int>(n * jobs), (shard - 1) * jobs, jobs);
  }
  split = SliceRows(plan, bounds, layout.shards, shard - 1, 1);
  if (jobs > 1)
    split.why_not = fmt::format("{} has fewer distinct values than jobs", layout.column);
  return split;
}

FinishedRange ShardRange(const ShardLayout& layout, const std::string& source_table, int shard) {
  FinishedRange r;
  r.source_table = source_table;
  r.with_null = true;
  if (layout.column.empty()) return r;  // shard 1: the whole table
  r.columns = {layout.column};
  const SplitBounds bounds = BoundsOf(layout);
  if (shard > 1) {
    r.has_lo = true;
    r.lo = {Value::Int(SliceBound(bounds, layout.shards, shard - 1))};
  }
  if (shard < layout.shards) {
    r.has_hi = true;
    r.hi = {Value::Int(SliceBound(bounds, layout.shards, shard))};
    r.with_null = false;
  }
  return r;
}

std::vector<int> FinishedShards(const ShardLayout& layout, const std::string& source_table,
                                const TableState& state) {
  std::vector<int> out;
  for (int k = 1; k <= ShardsWithWork(layout); ++k) {
    const FinishedRange want = ShardRange(layout, source_table, k);
    for (const FinishedRange& r : state.finished_ranges) {
      if (SameRange(r, want)) {
        out.push_back(k);
        break;
      }
    }
  }
  return out;
}

Result<ShardJoin> JoinShardLoad(StateStore* states, const std::string& table,
                                const std::string& source_table, const ShardSpec& spec,
                                const TableState& fresh, std::optional<int64_t> timestamp_ms,
                                const std::function<Result<ShardLayout>()>& lay_out,
                                const std::function<bool(const ShardLayout&)>& has_work) {
  for (int attempt = 0; attempt < kStateAttempts; ++attempt) {
    WIDEN_ASSIGN_OR_RETURN(std::optional<TableState> before, states->Get(table));
    WIDEN_ASSIGN_OR_RETURN(std::optional<ShardLayout> unfinished, UnfinishedLoad(table, before));
    ShardJoin join;
    if (before) join.version = before->version;
    if (unfinished) {
      // Join it, when it is this load.
      join.layout = std::move(*unfinished);
      join.finished = FinishedShards(join.layout, source_table, *before);
      std::string differs;
      if (join.layout.shards != spec.count) {
        differs = fmt::format("this run is shard {}/{}", spec.index, spec.count);
      } else if (before->mapping_fingerprint != fresh.mapping_fingerprint) {
        differs = "this run's mapping gives the table another design";
      } else if (timestamp_ms && *timestamp_ms != join.layout.timestamp_ms) {
        differs = fmt::format("this run's cell timestamp is {}", *timestamp_ms);
      }
      if (!differs.empty()) {
        return Status::FailedPrecondition(fmt::format(
            "table '{}' is in the middle of {}, and {}; nothing was written. Finish that load "
            "(run its missing shards with --shard I/{} and the same mapping), or load the table "
            "anew with a migrate without --shard",
            table, Describe(join.layout, join.finished), differs, join.layout.shards));
      }
      join.state = *before;
      if (!has_work(join.layout)) return join;  // nothing of this table is ours
      join.state.status = TableStatus::kLoading;
      join.state.run_id = fresh.run_id;
      join.state.finished_ms = 0;
    } else {
      // A new load: laid out by this run.
      WIDEN_ASSIGN_OR_RETURN(join.layout, lay_out());
      join.created = true;
      join.state = fresh;
      join.state.finished_ranges.clear();
      join.state.extensions[kShardsExtension] = EncodeShardLayout(join.layout);
      join.state.extensions[kLoadTimestampExtension] = std::to_string(join.layout.timestamp_ms);
    }
    auto put = states->Put(table, join.version, join.state);
    if (put.ok()) {
      join.version = *put;
      join.state.version = *put;
      return join;
    }
    if (put.status().code() != StatusCode::kAborted) {
      return Status(put.status().code(), fmt::format("table '{}': recording its state: {}", table,
                                                     put.status().message()));
    }
    // Another run changed the state meanwhile (a shard that started at the
    // same moment): read it again.
  }
  return Status::Aborted(fmt::format(
      "table '{}': its state kept changing while this shard tried to record it; retry", table));
}

Result<ShardJoin> FinishShard(StateStore* states, const std::string& table,
                              const std::string& source_table, const ShardSpec& spec,
                              const ShardJoin& join, bool ok, int64_t now_ms) {
  const std::string layout_text = EncodeShardLayout(join.layout);
  for (int attempt = 0; attempt < kStateAttempts; ++attempt) {
    WIDEN_ASSIGN_OR_RETURN(std::optional<TableState> now, states->Get(table));
    const bool ours = now && now->extensions.count(kShardsExtension) > 0 &&
                      now->extensions.at(kShardsExtension) == layout_text;
    if (!ours) {
      return Status::Aborted(fmt::format(
          "table '{}': shard {}/{} wrote its rows, but the table's state no longer records its "
          "load (run {}): a migrate without --shard, or a new sharded load, replaced it "
          "meanwhile, so this shard's rows are not recorded as loaded",
          table, spec.index, spec.count, join.layout.load));
    }
    ShardJoin out = join;
    out.state = *now;
    if (ok) {
      const FinishedRange mine = ShardRange(join.layout, source_table, spec.index);
      bool have = false;
      for (const FinishedRange& r : out.state.finished_ranges) have = have || SameRange(r, mine);
      if (!have) out.state.finished_ranges.push_back(mine);
      out.finished = FinishedShards(join.layout, source_table, out.state);
      if (static_cast<int>(out.finished.size()) == ShardsWithWork(join.layout)) {
        out.state.status = TableStatus::kComplete;
        out.state.finished_ms = now_ms;
      } else if (out.state.status == TableStatus::kComplete) {
        out.state.status = TableStatus::kLoading;  // cannot happen: complete needs every range
      }
    } else {
      out.state.status = TableStatus::kFailed;
      out.state.finished_ms = now_ms;
      out.finished = FinishedShards(join.layout, source_table, out.state);
    }
    auto put = states->Put(table, now->version, out.state);
    if (put.ok()) {
      out.version = *put;
      out.state.version = *put;
      return out;
    }
    if (put.status().code() != StatusCode::kAborted) {
      return Status(put.status().code(), fmt::format("table '{}': recording its state: {}", table,
                                                     put.status().message()));
    }
  }
  return Status::Aborted(fmt::format(
      "table '{}': its state kept changing while shard {}/{} tried to record it finished; run "
      "the shard again",
      table, spec.index, spec.count));
}

std::string IncompleteReason(StateStore* states, const std::string& table,
                             const std::optional<TableState>& state) {
  const Status busy = states->CheckNotBeingWritten(table);
  if (busy.code() == StatusCode::kAborted) {
    // "table 'T' is being written by another widen run (process P on host
    // 'H' since ...); ...": the part from "being written".
    const std::string& m = busy.message();
    const size_t from = m.find("being written");
    const size_t to = m.find(';', from);
    if (from != std::string::npos) {
      return "it is " + m.substr(from, to == std::string::npos ? std::string::npos : to - from) +
             " right now";
    }
  }
  if (state) {
    auto it = state->extensions.find(kShardsExtension);
    if (it != state->extensions.end()) {
      auto layout = DecodeShardLayout(it->second);
      if (layout.ok()) {
        // Every finished range names the driving table; with none finished,
        // every shard is missing whatever the name.
        const std::string source =
            state->finished_ranges.empty() ? "" : state->finished_ranges.front().source_table;
        const std::vector<int> done = FinishedShards(*layout, source, *state);
        std::vector<std::string> missing;
        for (int i = 1; i <= layout->shards; ++i) {
          if (std::find(done.begin(), done.end(), i) == done.end()) {
            missing.push_back(fmt::format("{}/{}", i, layout->shards));
          }
        }
        if (!missing.empty()) {
          return fmt::format(
              "{} {} of sharded load {} {} not finished ({} of {} shard(s) finished); run {} "
              "(migrate --shard)",
              missing.size() == 1 ? "shard" : "shards", fmt::join(missing, ", "), layout->load,
              missing.size() == 1 ? "has" : "have", done.size(), layout->shards,
              missing.size() == 1 ? "it" : "them");
        }
      }
    }
  }
  return "the last run (migrate or sync) into it did not finish";
}

}  // namespace widen
