#include "transform/sync_plan.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/suggest.h"
#include "common/temporal.h"
#include "transform/plan.h"

namespace widen {

namespace {

constexpr EnumName<WatermarkKind> kWatermarkKinds[] = {{WatermarkKind::kTimestamp, "timestamp"},
                                                       {WatermarkKind::kInstant, "instant"},
                                                       {WatermarkKind::kInteger, "integer"}};
constexpr NameTable<WatermarkKind> kWatermarkKindNames{kWatermarkKinds};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "varchar(20)", or "my_domain (a domain over bigint)".
std::string TypeText(const SourceColumn& c) {
  if (c.base_type.empty() || c.base_type == c.source_type) return c.source_type;
  return fmt::format("{} (a domain over {})", c.source_type, c.base_type);
}

// The kind of watermark a column can be; false (and *why) when it can be none.
bool KindOf(const SourceColumn& c, WatermarkKind* kind, std::string* why) {
  const std::string storage = Lower(c.storage_type());
  switch (c.type) {
    case ValueType::kTimestamp:
      *kind = WatermarkKind::kTimestamp;
      return true;
    case ValueType::kTimestampTz:
      *kind = WatermarkKind::kInstant;
      return true;
    case ValueType::kInt:
    case ValueType::kUInt:
      if (storage.rfind("bit", 0) == 0 || storage.rfind("year", 0) == 0) {
        *why = "a bit string or a year, not a counter that every write raises";
        return false;
      }
      if (storage.rfind("tinyint", 0) == 0 || storage.rfind("bool", 0) == 0) {
        // MySQL's BOOLEAN is tinyint(1).
        *why =
            "a tinyint or boolean (MySQL's BOOLEAN is tinyint(1)), too small to be a counter "
            "that every write raises";
        return false;
      }
      *kind = WatermarkKind::kInteger;
      return true;
    case ValueType::kDate:
      *why = "a date, which cannot order the changes made on one day";
      return false;
    default:
      *why = c.type == ValueType::kOther ? std::string("a type widen reads as its text form")
                                         : fmt::format("a {} value", ValueTypeName(c.type));
      return false;
  }
}

// Whether the database orders a column of this type as widen compares its
// values (ScanSpec::order_by, KeyBound), so that (watermark, tiebreak) > (w,
// t) reads on exactly after the last row: not floats (NaN, -0.0), JSON,
// enums (ordered by declaration) or types kept as text that does not sort
// like them.
bool OrdersLikeWiden(const SourceColumn& c) {
  if (c.is_enum) return false;
  switch (c.type) {
    case ValueType::kFloat:
    case ValueType::kJson:
      return false;
    case ValueType::kOther:
      return TextSortsLikeValues(c);
    default:
      return true;
  }
}

// Parses a soft-delete value written in the mapping for column `c`; false
// (and *expected: what would parse) when it is no value of the column.
bool ParseSoftValue(const SourceColumn& c, const std::string& text, Value* out,
                    std::string* expected) {
  const auto is_word = [&](std::initializer_list<const char*> words) {
    return std::any_of(words.begin(), words.end(), [&](const char* w) { return text == w; });
  };
  switch (c.type) {
    case ValueType::kBool:
      *expected = "true or false";
      if (is_word({"true", "yes", "on"})) {
        *out = Value::Bool(true);
        return true;
      }
      if (is_word({"false", "no", "off"})) {
        *out = Value::Bool(false);
        return true;
      }
      return false;
    case ValueType::kInt:
    case ValueType::kUInt: {
      const std::optional<IntegerRange> r = DeclaredIntegerRange(c);
      *expected = r ? fmt::format("a whole number from {} to {} (true and false are 1 and 0)",
                                  r->min, r->max)
                    : "a whole number (true and false are 1 and 0)";
      // MySQL's BOOLEAN is TINYINT(1), whose TRUE and FALSE are 1 and 0.
      const std::string digits = is_word({"true"}) ? "1" : is_word({"false"}) ? "0" : text;
      const char* end = digits.data() + digits.size();
      if (!digits.empty() && digits[0] == '-') {
        int64_t v = 0;
        auto [p, ec] = std::from_chars(digits.data(), end, v);
        if (ec != std::errc() || p != end || (r && v < r->min)) return false;
        if (c.type == ValueType::kUInt) return false;
        *out = Value::Int(v);
        return true;
      }
      uint64_t v = 0;
      auto [p, ec] = std::from_chars(digits.data(), end, v);
      if (ec != std::errc() || p != end || (r && v > r->max)) return false;
      if (c.type == ValueType::kUInt) {
        *out = Value::UInt(v);
      } else if (v > uint64_t{INT64_MAX}) {
        return false;
      } else {
        *out = Value::Int(static_cast<int64_t>(v));
      }
      return true;
    }
    case ValueType::kDecimal: {
      *expected = "a decimal number such as 1 or -2.50";
      size_t i = text.size() > 0 && text[0] == '-' ? 1 : 0;
      const size_t int_start = i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      if (i == int_start) return false;
      if (i < text.size() && text[i] == '.') {
        const size_t frac_start = ++i;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
        if (i == frac_start) return false;
      }
      if (i != text.size()) return false;
      *out = Value::Str(ValueType::kDecimal, text);
      return true;
    }
    case ValueType::kText:
      *out = Value::Str(ValueType::kText, text);
      return true;
    default:
      return false;
  }
}

class SyncPlanner {
 public:
  SyncPlanner(const Mapping& m, const SourceSchema& s) : mapping_(m), schema_(s) {}

  Status PlanTable(const std::string& name, SourceSync* out) {
    out->table = name;
    out->spec = mapping_.FindSync(name);
    if (out->spec == nullptr) return Status::OK();
    const SyncSpec& spec = *out->spec;
    out->mode = spec.mode;
    if (spec.mode == SyncMode::kDigest) return Status::OK();
    const SourceTable* t = schema_.FindTable(name);
    if (t == nullptr) {
      return Status::NotFound(fmt::format("{}: sync of '{}': source table '{}' does not exist",
                                          spec.loc.ToString(), name, name));
    }
    const std::string where = fmt::format("sync of '{}'", name);
    if (t->is_view) {
      return Status::InvalidArgument(fmt::format(
          "{}: {}: '{}' is a view, which declares no primary or unique key, so no tiebreak can "
          "be shown to tell its rows apart; sync it in digest mode, or map the table it reads",
          spec.loc.ToString(), where, name));
    }

    // The watermark.
    WIDEN_ASSIGN_OR_RETURN(const SourceColumn* w, FindColumn(*t, spec.watermark, where));
    std::string why;
    if (!KindOf(*w, &out->kind, &why)) {
      return Status::InvalidArgument(fmt::format(
          "{}: {}: watermark column {}.{} is {}, {}; a watermark must be a timestamp "
          "(timestamp, timestamptz, MySQL DATETIME or TIMESTAMP) or an integer that every insert "
          "and update raises",
          spec.watermark.loc.ToString(), where, name, w->name, TypeText(*w), why));
    }
    if (w->nullable) {
      return Status::InvalidArgument(fmt::format(
          "{}: {}: watermark column {}.{} can be NULL, and a row whose watermark is NULL has no "
          "place among the changes: its writes would never be found; declare it NOT NULL "
          "(with a default), or sync the table in digest mode",
          spec.watermark.loc.ToString(), where, name, w->name));
    }
    out->watermark = w->name;
    out->watermark_type = w->source_type;

    // The tiebreak: the entry's, else the primary key.
    std::vector<const SourceColumn*> tiebreak;
    if (spec.tiebreak.empty()) {
      if (t->primary_key.empty()) {
        return Status::InvalidArgument(fmt::format(
            "{}: {}: '{}' has no primary key to order the rows of one watermark value; give "
            "'tiebreak': columns that, with the watermark, are a unique key of the table",
            spec.loc.ToString(), where, name));
      }
      out->tiebreak_is_primary_key = true;
      for (const auto& pk : t->primary_key) {
        const SourceColumn* c = t->FindColumn(pk);
        if (c == nullptr || pk == w->name) continue;
        tiebreak.push_back(c);
      }
    } else {
      for (const SyncColumn& col : spec.tiebreak) {
        WIDEN_ASSIGN_OR_RETURN(const SourceColumn* c, FindColumn(*t, col, where));
        if (c->nullable) {
          return Status::InvalidArgument(
              fmt::format("{}: {}: tiebreak column {}.{} can be NULL; a tiebreak must be NOT "
                          "NULL, so that every row has one place in the order of changes",
                          col.loc.ToString(), where, name, c->name));
        }
        tiebreak.push_back(c);
      }
    }
    for (const SourceColumn* c : tiebreak) {
      if (OrdersLikeWiden(*c)) continue;
      return Status::InvalidArgument(fmt::format(
          "{}: {}: tiebreak column {}.{}{} is {}, which the database does not order as widen "
          "compares its values (floats, JSON, enums and types kept as text are not); name "
          "columns of another type in 'tiebreak'",
          TiebreakLoc(spec, c->name).ToString(), where, name, c->name,
          out->tiebreak_is_primary_key ? " (of the primary key)" : "", TypeText(*c)));
    }
    std::vector<std::string> key;
    for (const SourceColumn* c : tiebreak) {
      out->tiebreak.push_back(c->name);
      key.push_back(c->name);
    }
    key.push_back(w->name);
    if (!CoversKey(*t, key)) {
      return Status::InvalidArgument(fmt::format(
          "{}: {}: (watermark {}, tiebreak {}) is not, nor contains, the primary key or a unique "
          "key of {}: rows sharing a watermark value could not be told apart, and a run that "
          "ended among them would skip or repeat some; name the columns of a key ({})",
          (spec.tiebreak.empty() ? spec.loc : spec.tiebreak_loc).ToString(), where, w->name,
          out->tiebreak.empty() ? "none" : fmt::format("({})", fmt::join(out->tiebreak, ", ")),
          name, KeysText(*t)));
    }

    // The lookback, in the watermark's unit.
    const SyncLookback& l = spec.lookback;
    out->lookback_given = l.given;
    const bool integer = out->kind == WatermarkKind::kInteger;
    if (!l.given) {
      out->lookback_values = integer ? kDefaultLookbackValues : 0;
      out->lookback_micros = integer ? 0 : kDefaultLookbackMs * kMicrosPerMs;
    } else if (l.amount == 0) {
      // "0" and "0s" alike: no lookback.
    } else if (integer && l.unit == LookbackUnit::kMilliseconds) {
      return Status::InvalidArgument(fmt::format(
          "{}: {}: 'lookback' {} is a duration, but watermark {}.{} is an integer ({}): give how "
          "many watermark values to read again, such as {}",
          l.loc.ToString(), where, DurationText(l.amount), name, w->name, TypeText(*w),
          kDefaultLookbackValues));
    } else if (!integer && l.unit == LookbackUnit::kValues) {
      return Status::InvalidArgument(fmt::format(
          "{}: {}: 'lookback' {} is a count of values, for an integer watermark, but watermark "
          "{}.{} is {}: give a duration such as {}",
          l.loc.ToString(), where, l.amount, name, w->name, TypeText(*w),
          DurationText(kDefaultLookbackMs)));
    } else if (integer) {
      out->lookback_values = l.amount;
    } else {
      out->lookback_micros = l.amount * kMicrosPerMs;
    }

    // Deletes.
    out->reconcile = spec.reconcile;
    if (spec.soft_delete) {
      const SoftDeleteSpec& sd = *spec.soft_delete;
      WIDEN_ASSIGN_OR_RETURN(const SourceColumn* c, FindColumn(*t, sd.column, where));
      std::string expected;
      const bool flag = c->type == ValueType::kBool || IsIntegerType(c->type) ||
                        c->type == ValueType::kDecimal || c->type == ValueType::kText;
      if (!flag) {
        return Status::InvalidArgument(fmt::format(
            "{}: {}: soft-delete column {}.{} is {}; a soft delete is marked by a boolean, "
            "integer, decimal or text column holding one value",
            sd.column.loc.ToString(), where, name, c->name, TypeText(*c)));
      }
      if (!ParseSoftValue(*c, sd.value, &out->soft_delete_value, &expected)) {
        return Status::InvalidArgument(fmt::format(
            "{}: {}: soft-delete value '{}' is no value of {}.{} ({}): expected {}",
            sd.value_loc.ToString(), where, sd.value, name, c->name, TypeText(*c), expected));
      }
      out->soft_delete_column = c->name;
    }
    return Status::OK();
  }

 private:
  Result<const SourceColumn*> FindColumn(const SourceTable& t, const SyncColumn& col,
                                         const std::string& where) {
    if (const SourceColumn* c = t.FindColumn(col.name)) return c;
    std::vector<std::string> names;
    for (const auto& c : t.columns) names.push_back(c.name);
    return Status::NotFound(fmt::format("{}: {}: source table '{}' has no column '{}'{}",
                                        col.loc.ToString(), where, t.name, col.name,
                                        DidYouMean(col.name, names)));
  }

  static const SourceLocation& TiebreakLoc(const SyncSpec& spec, const std::string& column) {
    for (const SyncColumn& c : spec.tiebreak) {
      if (c.name == column) return c.loc;
    }
    return spec.loc;
  }

  // Whether `cols` contains the primary key or a unique key of `t`.
  static bool CoversKey(const SourceTable& t, const std::vector<std::string>& cols) {
    auto covers = [&](const std::vector<std::string>& key) {
      return !key.empty() && std::all_of(key.begin(), key.end(), [&](const std::string& k) {
        return std::find(cols.begin(), cols.end(), k) != cols.end();
      });
    };
    return covers(t.primary_key) || std::any_of(t.unique_keys.begin(), t.unique_keys.end(), covers);
  }

  // "primary key (id); unique (code)", or "it declares none".
  static std::string KeysText(const SourceTable& t) {
    std::vector<std::string> keys;
    if (!t.primary_key.empty()) {
      keys.push_back(fmt::format("primary key ({})", fmt::join(t.primary_key, ", ")));
    }
    for (const auto& u : t.unique_keys)
      keys.push_back(fmt::format("unique ({})", fmt::join(u, ", ")));
    return keys.empty() ? "it declares none" : fmt::format("{}", fmt::join(keys, "; "));
  }

  const Mapping& mapping_;
  const SourceSchema& schema_;
};

}  // namespace

const NameTable<WatermarkKind>& WatermarkKindNames() { return kWatermarkKindNames; }

const SourceSync* SyncPlan::Find(const std::string& table) const {
  for (const auto& t : tables) {
    if (t.table == table) return &t;
  }
  return nullptr;
}

Result<SyncPlan> SyncPlan::Make(const Mapping& mapping, const SourceSchema& schema,
                                std::span<const std::string> read) {
  SyncPlan plan;
  SyncPlanner planner(mapping, schema);
  for (const std::string& name : read) {
    SourceSync s;
    WIDEN_RETURN_IF_ERROR(planner.PlanTable(name, &s));
    plan.tables.push_back(std::move(s));
  }
  return plan;
}

}  // namespace widen
