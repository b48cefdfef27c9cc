#include "mapping/sync_section_internal.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/suggest.h"

namespace widen {

namespace {

constexpr EnumName<SyncMode> kSyncModes[] = {{SyncMode::kDigest, "digest"},
                                             {SyncMode::kWatermark, "watermark"}};
constexpr NameTable<SyncMode> kSyncModeNames{kSyncModes};

// The units of a duration, largest first: a duration names each at most
// once, in this order.
struct DurationUnit {
  std::string_view name;
  int64_t ms;
};
constexpr DurationUnit kDurationUnits[] = {
    {"d", 86'400'000}, {"h", 3'600'000}, {"m", 60'000}, {"s", 1000}, {"ms", 1}};

}  // namespace

const NameTable<SyncMode>& SyncModeNames() { return kSyncModeNames; }

bool ParseDurationMs(std::string_view text, int64_t* ms) {
  if (text.empty()) return false;
  int64_t total = 0;
  size_t next_unit = 0;  // the largest unit still allowed
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = i;
    int64_t n = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      n = n * 10 + (text[i] - '0');
      if (n > kMaxLookbackMs) return false;
      ++i;
    }
    if (i == start) return false;  // a unit without a number, or a sign
    // The longest unit name that follows ("ms" before "m").
    size_t unit = std::size(kDurationUnits);
    for (size_t u = 0; u < std::size(kDurationUnits); ++u) {
      const std::string_view name = kDurationUnits[u].name;
      if (text.substr(i, name.size()) == name &&
          (unit == std::size(kDurationUnits) || name.size() > kDurationUnits[unit].name.size())) {
        unit = u;
      }
    }
    if (unit == std::size(kDurationUnits) || unit < next_unit) return false;
    i += kDurationUnits[unit].name.size();
    next_unit = unit + 1;
    total += n * kDurationUnits[unit].ms;
    if (total > kMaxLookbackMs) return false;
  }
  *ms = total;
  return true;
}

std::string DurationText(int64_t ms) {
  if (ms == 0) return "0s";
  std::string out;
  for (const DurationUnit& u : kDurationUnits) {
    if (ms >= u.ms) {
      out += fmt::format("{}{}", ms / u.ms, u.name);
      ms %= u.ms;
    }
  }
  return out;
}

namespace mapping_internal {

namespace {

// The fields of an entry that only watermark mode takes.
constexpr const char* kWatermarkFields[] = {"watermark", "tiebreak", "lookback", "deletes"};

class SyncLoader {
 public:
  SyncLoader(const YamlContext& ctx, const Mapping& m) : ctx_(ctx), read_(m.SourceTables()) {
    for (const auto& t : m.tables) {
      if (!t.query.empty()) queries_.emplace_back(t.from, t.name);
    }
  }

  Status LoadEntry(const YAML::Node& e, SyncSpec* s) {
    WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(e, "a sync entry", "sync"));
    s->loc = ctx_.Loc(e);
    WIDEN_RETURN_IF_ERROR(ctx_.RequiredString(e, "table", &s->table));
    WIDEN_RETURN_IF_ERROR(CheckTableIsRead(e["table"], s->table));
    const std::string where = fmt::format("sync of '{}'", s->table);
    if (YAML::Node mode = e["mode"]) {
      std::string name;
      WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(e, "mode", &name));
      if (!SyncModeNames().Parse(name, &s->mode)) {
        return ctx_.Error(mode, fmt::format("{}: 'mode' must be {}, got '{}'{}", where,
                                            SyncModeNames().List(" or "), name,
                                            DidYouMean(name, SyncModeNames().Names())));
      }
    }
    if (s->mode == SyncMode::kDigest) {
      for (const char* field : kWatermarkFields) {
        if (!e[field]) continue;
        return ctx_.Error(e[field],
                          fmt::format("{}: '{}' applies to watermark mode, and this entry's mode "
                                      "is digest{}: add mode: watermark, or remove '{}' (digest "
                                      "mode reads every row and finds every change and delete "
                                      "itself)",
                                      where, field, e["mode"] ? "" : " (the default)", field));
      }
      return Status::OK();
    }

    // Watermark mode.
    YAML::Node w = e["watermark"];
    if (!w) {
      return ctx_.Error(e, fmt::format("{}: mode: watermark needs 'watermark': the column that "
                                       "every insert and update of a row raises (a timestamp or "
                                       "an ever-increasing integer)",
                                       where));
    }
    WIDEN_RETURN_IF_ERROR(Column(w, where, "'watermark'", &s->watermark));
    if (YAML::Node t = e["tiebreak"]) {
      s->tiebreak_loc = ctx_.Loc(t);
      std::vector<YAML::Node> items;
      if (t.IsSequence()) {
        for (const auto& c : t) items.push_back(c);
        if (items.empty()) {
          return ctx_.Error(t, fmt::format("{}: 'tiebreak' is empty: name its columns, or leave it "
                                           "out for the primary key",
                                           where));
        }
      } else {
        items.push_back(t);
      }
      for (const auto& c : items) {
        SyncColumn col;
        WIDEN_RETURN_IF_ERROR(Column(c, where, "a 'tiebreak' entry", &col));
        if (col.name == s->watermark.name) {
          return ctx_.Error(c, fmt::format("{}: 'tiebreak' lists the watermark column '{}', which "
                                           "orders the rows already; name the columns that order "
                                           "rows of one watermark value",
                                           where, col.name));
        }
        for (const auto& other : s->tiebreak) {
          if (other.name == col.name) {
            return ctx_.Error(c, fmt::format("{}: 'tiebreak' lists '{}' twice", where, col.name));
          }
        }
        s->tiebreak.push_back(std::move(col));
      }
    }
    if (YAML::Node l = e["lookback"]) WIDEN_RETURN_IF_ERROR(Lookback(l, where, &s->lookback));
    if (YAML::Node d = e["deletes"]) WIDEN_RETURN_IF_ERROR(Deletes(d, where, s));
    return Status::OK();
  }

 private:
  Status CheckTableIsRead(const YAML::Node& at, const std::string& table) {
    if (std::find(read_.begin(), read_.end(), table) != read_.end()) return Status::OK();
    for (const auto& [alias, target] : queries_) {
      if (alias != table) continue;
      return ctx_.Error(at, fmt::format("sync: '{}' names the free-form query of table '{}', not "
                                        "a source table: a query has no watermark, and every "
                                        "sync reads its rows whole (digest mode); name the "
                                        "tables it reads in the mapping instead",
                                        table, target));
    }
    return ctx_.Error(at, fmt::format("sync: '{}' is not a source table the mapping reads{} (it "
                                      "reads {})",
                                      table, DidYouMean(table, read_), fmt::join(read_, ", ")));
  }

  // One column name of the entry's own table.
  Status Column(const YAML::Node& n, const std::string& where, const char* what, SyncColumn* out) {
    if (!n.IsScalar() || n.Scalar().empty()) {
      return ctx_.Error(n, fmt::format("{}: {} must be a column name", where, what));
    }
    if (n.Scalar().find('.') != std::string::npos) {
      return ctx_.Error(n, fmt::format("{}: {} '{}' must be a column of the table itself, without "
                                       "an alias",
                                       where, what, n.Scalar()));
    }
    out->loc = ctx_.Loc(n);
    out->name = n.Scalar();
    return Status::OK();
  }

  Status Lookback(const YAML::Node& n, const std::string& where, SyncLookback* l) {
    l->loc = ctx_.Loc(n);
    l->given = true;
    const std::string text = n.IsScalar() ? n.Scalar() : std::string();
    const bool count = !text.empty() && std::all_of(text.begin(), text.end(),
                                                    [](char c) { return c >= '0' && c <= '9'; });
    if (count) {
      l->unit = LookbackUnit::kValues;
      if (text.size() > 18 || std::stoll(text) > kMaxLookbackValues) {
        return ctx_.Error(n, fmt::format("{}: 'lookback' {} is more than {} values", where, text,
                                         kMaxLookbackValues));
      }
      l->amount = std::stoll(text);
      return Status::OK();
    }
    l->unit = LookbackUnit::kMilliseconds;
    if (!ParseDurationMs(text, &l->amount)) {
      return ctx_.Error(
          n, fmt::format("{}: 'lookback' must be a duration such as 30s, 5m, 2h or 1h30m (units "
                         "d, h, m, s, ms; at most {}) for a timestamp watermark, or a whole number "
                         "of values for an integer watermark; got '{}'",
                         where, DurationText(kMaxLookbackMs), text));
    }
    return Status::OK();
  }

  Status Deletes(const YAML::Node& d, const std::string& where, SyncSpec* s) {
    WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(d, "'deletes'", "deletes"));
    if (d.size() == 0) {
      return ctx_.Error(d,
                        fmt::format("{}: 'deletes' is empty: give soft: {{column: C, value: V}}, "
                                    "reconcile: true, or both",
                                    where));
    }
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalBool(d, "reconcile", &s->reconcile));
    YAML::Node soft = d["soft"];
    if (!soft) return Status::OK();
    WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(soft, "'soft'", "soft"));
    SoftDeleteSpec sd;
    sd.loc = ctx_.Loc(soft);
    if (!soft["column"]) {
      return ctx_.Error(soft, fmt::format("{}: 'soft' needs 'column': the column that marks a row "
                                          "deleted",
                                          where));
    }
    WIDEN_RETURN_IF_ERROR(Column(soft["column"], where, "the soft-delete 'column'", &sd.column));
    YAML::Node v = soft["value"];
    if (!v) {
      return ctx_.Error(soft, fmt::format("{}: 'soft' needs 'value': the value of '{}' that marks "
                                          "a row deleted",
                                          where, sd.column.name));
    }
    if (!v.IsScalar()) {
      return ctx_.Error(v, fmt::format("{}: the soft-delete 'value' must be one value, not {}{}",
                                       where, v.IsNull() ? "null" : "a list or map",
                                       v.IsNull() ? " (a NULL marks no row: SQL's = never holds "
                                                    "for it)"
                                                  : ""));
    }
    sd.value = v.Scalar();
    sd.value_loc = ctx_.Loc(v);
    s->soft_delete = std::move(sd);
    return Status::OK();
  }

  const YamlContext& ctx_;
  std::vector<std::string> read_;
  std::vector<std::pair<std::string, std::string>> queries_;  // (query name, target table)
};

}  // namespace

Status LoadSyncSection(const YamlContext& ctx, const YAML::Node& node, const Mapping& mapping,
                       std::vector<SyncSpec>* out) {
  if (node.IsNull()) return Status::OK();  // `sync:` with every entry left out
  WIDEN_RETURN_IF_ERROR(ctx.CheckSequence(node, "'sync'"));
  SyncLoader loader(ctx, mapping);
  for (const auto& e : node) {
    SyncSpec s;
    WIDEN_RETURN_IF_ERROR(loader.LoadEntry(e, &s));
    for (const auto& other : *out) {
      if (other.table != s.table) continue;
      return ctx.Error(e["table"], fmt::format("sync: source table '{}' has a second entry (the "
                                               "first is at {}); one entry per table",
                                               s.table, other.loc.ToString()));
    }
    out->push_back(std::move(s));
  }
  return Status::OK();
}

}  // namespace mapping_internal

}  // namespace widen
