#include "transform/plan.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/suggest.h"
#include "transform/qualifier_check.h"

namespace widen {

bool TextSortsLikeValues(const SourceColumn& c) {
  if (c.type != ValueType::kOther && c.type != ValueType::kJson) return true;
  if (c.type == ValueType::kJson) return false;
  std::string t = c.storage_type();
  for (char& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const std::string word = t.substr(0, t.find_first_of("( "));
  return word == "uuid" || word == "macaddr" || word == "macaddr8" ||
         t.rfind("bit", 0) == 0;  // bit(n), bit varying(n)
}

namespace {

// Text sorts by collation in the database: ORDER BY it with COLLATE "C" so
// that the order is unsigned bytes, as widen compares.
bool IsTextual(ValueType t) { return t == ValueType::kText; }

// Columns a nest link compares through their text (MergeLink::on).
bool ComparedAsText(ValueType t) { return t == ValueType::kText || t == ValueType::kOther; }

// True when the database's `=` between columns of these types is what
// CompareValues says of their values: numbers (but a float with a decimal,
// which the engines compare as floats), and booleans, bytes, dates and times
// of one type. Text is not: collations, padding and case-insensitive types
// make values equal that differ in bytes.
bool ComparesByValue(ValueType a, ValueType b) {
  auto number = [](ValueType t) {
    return t == ValueType::kInt || t == ValueType::kUInt || t == ValueType::kDecimal ||
           t == ValueType::kFloat;
  };
  if (number(a) && number(b)) {
    return !((a == ValueType::kFloat && b == ValueType::kDecimal) ||
             (a == ValueType::kDecimal && b == ValueType::kFloat));
  }
  switch (a) {
    case ValueType::kBool:
    case ValueType::kBytes:
    case ValueType::kDate:
    case ValueType::kTime:
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz:
      return a == b;
    default:
      return false;
  }
}

// Points the nests' merge comparisons at the merge keys of their scans (see
// MergeKeyIndexes): `parent` is the parent rows' scan, whose links from
// `first_link` on are the nests' in order, each after the keys `prefix`. A
// first-level child matches on its link to the parent; a second-level one
// on (its parent's link to the top-level parent, its own link).
void SetMergeKeys(const ScanSpec& parent, std::span<const size_t> prefix, size_t first_link,
                  bool second_level, std::vector<NestPlan>* nests) {
  for (size_t i = 0; i < nests->size(); ++i) {
    NestPlan& n = (*nests)[i];
    n.parent_key.assign(prefix.begin(), prefix.end());
    for (size_t k : MergeKeyIndexes(parent, first_link + i)) n.parent_key.push_back(k);
    n.child_key = MergeKeyIndexes(n.scan, 0);
    if (second_level) {
      for (size_t k : MergeKeyIndexes(n.scan, 1)) n.child_key.push_back(k);
    }
    if (n.children.empty()) continue;
    SetMergeKeys(n.scan, MergeKeyIndexes(n.scan, 0), 1, true, &n.children);
    n.link_key = n.children.front().parent_key;
  }
}

// Values the database and widen's CompareValues order alike only within one
// class: numbers with numbers, text with text, a date with a date...
int CompareClass(ValueType t) {
  switch (t) {
    case ValueType::kInt:
    case ValueType::kUInt:
    case ValueType::kDecimal:
    case ValueType::kFloat:
      return 0;
    default:
      return 1 + static_cast<int>(t);
  }
}

// The columns of `table` that `cols` covers a key of (primary or unique).
bool CoversKey(const SourceTable& table, std::span<const std::string> cols) {
  auto covers = [&](const std::vector<std::string>& key) {
    if (key.empty()) return false;
    for (const auto& k : key) {
      if (std::find(cols.begin(), cols.end(), k) == cols.end()) return false;
    }
    return true;
  };
  if (covers(table.primary_key)) return true;
  for (const auto& u : table.unique_keys) {
    if (covers(u)) return true;
  }
  return false;
}

// A key of `table` whose columns are all NOT NULL (the primary key, else the
// narrowest such unique key), or empty when it has none.
std::vector<std::string> NotNullKey(const SourceTable& table) {
  if (!table.primary_key.empty()) return table.primary_key;
  std::vector<std::string> best;
  for (const auto& u : table.unique_keys) {
    bool not_null = !u.empty();
    for (const auto& c : u) {
      const SourceColumn* sc = table.FindColumn(c);
      not_null = not_null && sc != nullptr && !sc->nullable;
    }
    if (not_null && (best.empty() || u.size() < best.size())) best = u;
  }
  return best;
}

// Appends `e` to *key unless it has it already.
void AddKeyColumn(const ColumnExpr& e, std::vector<ColumnExpr>* key) {
  auto same = [&](const ColumnExpr& x) { return x.alias == e.alias && x.column == e.column; };
  if (!std::any_of(key->begin(), key->end(), same)) key->push_back(e);
}

// Marks every scan of a nest (and its own nests) as read beside others.
void MarkShared(std::vector<NestPlan>* nests) {
  for (NestPlan& n : *nests) {
    n.scan.shared = true;
    MarkShared(&n.children);
  }
}

// Makes the rows a soft delete marks (SourceSync::soft_delete_column) absent
// from `scan`: rows of its own table are not read, and a join finds no row of
// a joined table (a grandchild's join to its parent's table included), so
// that every read sees the source as if those rows were not there.
void ExcludeSoftDeleted(const SyncPlan& sync, ScanSpec* scan) {
  auto exclude = [&](const std::string& table, const std::string& alias) {
    const SourceSync* s = table.empty() ? nullptr : sync.Find(table);
    if (s == nullptr || s->soft_delete_column.empty()) return;
    scan->exclude.push_back(ScanExclusion{alias, s->soft_delete_column, s->soft_delete_value});
  };
  exclude(scan->table, scan->alias);
  for (const ScanJoin& j : scan->joins) exclude(j.table, j.alias);
}

// The same for every scan of `nests`, at any depth.
void ExcludeSoftDeleted(const SyncPlan& sync, std::vector<NestPlan>* nests) {
  for (NestPlan& n : *nests) {
    ExcludeSoftDeleted(sync, &n.scan);
    ExcludeSoftDeleted(sync, &n.children);
  }
}

// True when the database orders a text column's values as their bytes under
// a bytewise collation (text, varchar, name): not char(n), whose comparison
// ignores trailing blanks the value keeps, nor enums (declared order).
bool TextOrdersAsBytes(const SourceColumn& c) {
  if (c.type != ValueType::kText || c.is_enum) return false;
  std::string t = c.storage_type();
  for (char& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const std::string word = t.substr(0, t.find_first_of("( "));
  return word == "text" || word == "varchar" || word == "name" ||
         t.rfind("character varying", 0) == 0;
}

// Whether key part `p` (the key's last column part when `last`) encodes so
// that keys sort as the database orders the column's values, and in which
// direction and with NULLs where: *term gets it (its column and whether it
// can be NULL set by the caller); else false with
// the reason in *why. Ties the bytes do not keep (two timestamps in one
// millisecond, -0.0 and 0.0) may leave a key out of order: the sink checks.
bool PartSortsLikeColumn(const KeyPartPlan& p, KeyForm form, bool last, LeadTerm* term,
                         std::string* why) {
  const ValueType vt = p.value_type;
  term->column.is_text = vt == ValueType::kText;
  if (form == KeyForm::kText) {
    term->nulls_first = true;
    if (p.reverse) {
      term->desc = true;  // Long.MAX_VALUE - ms in 19 digits
      return true;
    }
    if (IsIntegerType(vt) && p.width > 0) return true;  // zero-padded, fixed width
    if (last && vt == ValueType::kText) return true;    // the value's bytes, nothing after
    *why = fmt::format(
        "key part '{}' ({} in the text form{}) does not sort like its column's values as text: "
        "only zero-padded integers (width), reverse timestamps and, as the last part, text do",
        p.name, p.source_type,
        vt == ValueType::kText ? ", before the separator of the next part" : "");
    return false;
  }
  bool ok = false;
  if (p.reverse) {
    ok = vt == ValueType::kTimestamp || vt == ValueType::kTimestampTz || vt == ValueType::kDate ||
         vt == ValueType::kInt;
  } else {
    switch (p.type) {
      case KeyType::kInt8:
      case KeyType::kInt16:
      case KeyType::kInt32:
      case KeyType::kInt64:
      case KeyType::kUInt64:
        ok = IsIntegerType(vt);
        break;
      case KeyType::kFloat32:
      case KeyType::kFloat64:
        ok = vt == ValueType::kFloat;
        break;
      case KeyType::kDecimal:
        ok = vt == ValueType::kDecimal || IsIntegerType(vt);
        break;
      case KeyType::kBool:
        ok = vt == ValueType::kBool;
        break;
      case KeyType::kDate:
        ok = vt == ValueType::kDate;
        break;
      case KeyType::kTime:
        ok = vt == ValueType::kTime;
        break;
      case KeyType::kTimestamp:
        ok = vt == ValueType::kTimestamp || vt == ValueType::kTimestampTz;
        break;
      case KeyType::kString:
        ok = vt == ValueType::kText;
        break;
      case KeyType::kBytes:
        ok = vt == ValueType::kBytes;
        break;
    }
  }
  if (!ok) {
    *why = fmt::format("key part '{}' encodes {} values as {}, whose bytes do not sort like them",
                       p.name, p.source_type, KeyTypeName(p.type));
    return false;
  }
  term->desc = p.desc != p.reverse;  // reverse: newest first
  term->nulls_first = !p.desc;       // the NULL marker sorts first, last when desc (inverted)
  return true;
}

// Collects the columns one query selects, without duplicates.
class ColumnSet {
 public:
  size_t Add(const std::string& alias, const std::string& column) {
    for (size_t i = 0; i < cols_.size(); ++i) {
      if (cols_[i].alias == alias && cols_[i].column == column) return i;
    }
    cols_.push_back(ColumnExpr{alias, column, false});
    return cols_.size() - 1;
  }
  const ColumnExpr& At(size_t i) const { return cols_[i]; }
  std::vector<ColumnExpr> Take() { return std::move(cols_); }

 private:
  std::vector<ColumnExpr> cols_;
};

// The tables one query can refer to, by alias.
struct Scope {
  std::vector<std::pair<std::string, const SourceTable*>> aliases;
  std::string driving;  // alias of the driving table
  const SourceTable* Find(const std::string& alias) const {
    for (const auto& [a, t] : aliases) {
      if (a == alias) return t;
    }
    return nullptr;
  }
  bool IsJoined(const std::string& alias) const { return alias != driving; }
};

class Planner {
 public:
  Planner(const Mapping& m, const SourceSchema& s, Source* source)
      : mapping_(m),
        schema_(s),
        source_(source),
        lead_limit_(source == nullptr ? std::string() : source->LeadOrderLimit()) {}

  Result<Plan> Make() {
    Plan plan;
    for (const auto& t : mapping_.tables) {
      TablePlan tp;
      WIDEN_RETURN_IF_ERROR(PlanTable(t, &tp));
      plan.tables.push_back(std::move(tp));
    }
    std::vector<const TablePlan*> planned;
    for (const TablePlan& tp : plan.tables) planned.push_back(&tp);
    WIDEN_ASSIGN_OR_RETURN(plan.sync, SyncPlan::Make(mapping_, schema_, ReadsOf(planned).tables));
    for (TablePlan& tp : plan.tables) {
      ExcludeSoftDeleted(plan.sync, &tp.scan);
      ExcludeSoftDeleted(plan.sync, &tp.nests);
    }
    return plan;
  }

 private:
  Result<const SourceTable*> FindTable(const SourceLocation& loc, const std::string& target,
                                       const std::string& name) {
    if (const SourceTable* t = schema_.FindTable(name)) return t;
    if (source_ != nullptr) {
      // A table the schema hides from this user (MySQL) is a missing grant.
      Status readable = source_->CheckTableReadable(name);
      if (!readable.ok()) {
        return Status(readable.code(), fmt::format("{}: table '{}': {}", loc.ToString(), target,
                                                   readable.message()));
      }
    }
    std::vector<std::string> names;
    for (const auto& t : schema_.tables) names.push_back(t.name);
    // Tables are those of the session's schema (PostgreSQL: the first of
    // search_path; MySQL: the URL's database), named without it.
    const std::string schema_hint =
        name.find('.') != std::string::npos
            ? " (source tables are named without their schema: widen reads the schema the "
              "connection starts in, PostgreSQL's search_path or MySQL's database in the URL; "
              "docs/mapping.md, \"Source connections\")"
            : "";
    return Status::NotFound(fmt::format("{}: table '{}': source table '{}' does not exist{}{}",
                                        loc.ToString(), target, name, DidYouMean(name, names),
                                        schema_hint));
  }

  Result<const SourceColumn*> FindColumn(const SourceLocation& loc, const std::string& target,
                                         const SourceTable& table, const std::string& column) {
    if (const SourceColumn* c = table.FindColumn(column)) return c;
    std::vector<std::string> names;
    for (const auto& c : table.columns) names.push_back(c.name);
    return Status::NotFound(fmt::format("{}: table '{}': source table '{}' has no column '{}'{}",
                                        loc.ToString(), target, table.name, column,
                                        DidYouMean(column, names)));
  }

  // Resolves `ref` in `scope`; *alias gets the alias it belongs to.
  Result<const SourceColumn*> Resolve(const SourceLocation& loc, const std::string& target,
                                      const Scope& scope, const ColumnRef& ref,
                                      std::string* alias) {
    *alias = ref.alias.empty() ? scope.driving : ref.alias;
    const SourceTable* t = scope.Find(*alias);
    if (t == nullptr) {
      return Status::InvalidArgument(
          fmt::format("{}: table '{}': unknown table alias '{}'", loc.ToString(), target, *alias));
    }
    return FindColumn(loc, target, *t, ref.column);
  }

  Result<KeyPartPlan> PlanKeyPart(const KeyPart& kp, KeyForm form, const std::string& target,
                                  const Scope& scope, ColumnSet* cols) {
    KeyPartPlan p;
    p.width = kp.width;
    p.desc = kp.desc;
    p.reverse = kp.reverse;
    p.null_marker = kp.on_null == KeyNullRule::kMarker;
    if (kp.is_literal) {
      p.is_literal = true;
      p.literal = kp.literal;
      p.name = "'" + kp.literal + "'";
      return p;
    }
    std::string alias;
    WIDEN_ASSIGN_OR_RETURN(const SourceColumn* c,
                           Resolve(kp.loc, target, scope, kp.column, &alias));
    const std::string where = fmt::format("{}: table '{}': key part '{}'", kp.loc.ToString(),
                                          target, kp.column.ToString());
    p.name = kp.column.column;
    p.value_type = c->type;
    p.source_type = c->storage_type();
    p.type = kp.type.value_or(DefaultKeyType(*c));
    if (kp.reverse) p.type = KeyType::kTimestamp;
    if (form == KeyForm::kBinary && !kp.reverse && !KeyTypeAccepts(p.type, c->type)) {
      return Status::InvalidArgument(
          fmt::format("{}: type {} cannot hold source column {}.{} ({}, a {} value){}", where,
                      KeyTypeName(p.type), scope.Find(alias)->name, c->name, c->source_type,
                      ValueTypeName(c->type),
                      KeyTypeAccepts(DefaultKeyType(*c), c->type)
                          ? fmt::format("; its own type is {}", KeyTypeName(DefaultKeyType(*c)))
                          : ""));
    }
    if (form == KeyForm::kBinary && !kp.type && !TextSortsLikeValues(*c)) {
      return Status::InvalidArgument(fmt::format(
          "{}: source column {}.{} is {}, whose text form does not sort like its values; a "
          "binary key part must sort like its values. Key by a column that does (a generated "
          "column, or a free-form query computing one), or say type: string to key by the text "
          "as it is (docs/types.md, \"Key parts\")",
          where, scope.Find(alias)->name, c->name, c->storage_type()));
    }
    if (form == KeyForm::kText && kp.width > 0 && !IsIntegerType(c->type)) {
      return Status::InvalidArgument(fmt::format(
          "{} has a width, which pads integers in text keys, but source column {}.{} is {} ({})",
          where, scope.Find(alias)->name, c->name, ValueTypeName(c->type), c->source_type));
    }
    if (form == KeyForm::kBinary && kp.width > 0 && p.type != KeyType::kString &&
        p.type != KeyType::kBytes) {
      return Status::InvalidArgument(fmt::format(
          "{}: in binary keys 'width' fixes the byte width of string and bytes parts; {} parts "
          "have a fixed width already",
          where, KeyTypeName(p.type)));
    }
    if (kp.reverse && c->type != ValueType::kTimestamp && c->type != ValueType::kTimestampTz &&
        c->type != ValueType::kDate && c->type != ValueType::kInt) {
      return Status::InvalidArgument(
          fmt::format("{}: 'reverse' needs a timestamp, date or integer (ms) column; {}.{} is {}",
                      where, scope.Find(alias)->name, c->name, c->source_type));
    }
    const bool may_be_null = c->nullable || scope.IsJoined(alias);
    if (may_be_null && !kp.on_null_given) {
      return Status::InvalidArgument(fmt::format(
          "{}: source column {}.{} can be NULL{}; say what a NULL does: on_null: reject (the row "
          "is rejected) or on_null: marker (binary keys: NULL sorts first)",
          where, scope.Find(alias)->name, c->name,
          scope.IsJoined(alias) ? " (it comes from a LEFT JOIN)" : ""));
    }
    p.index = cols->Add(alias, c->name);
    return p;
  }

  Result<KeyHashPlan> PlanHash(const KeyHashSpec& h, std::span<const KeyPart> parts) {
    KeyHashPlan k;
    k.size = h.size;
    for (const auto& name : h.parts) {
      for (size_t i = 0; i < parts.size(); ++i) {
        if (!parts[i].is_literal && parts[i].column.column == name) k.parts.push_back(i);
      }
    }
    return k;
  }

  Result<int> PlanVersion(const SourceLocation& loc, const std::string& target, const Scope& scope,
                          const ColumnRef& ref, ColumnSet* cols) {
    if (ref.column.empty()) return -1;
    std::string alias;
    WIDEN_ASSIGN_OR_RETURN(const SourceColumn* c, Resolve(loc, target, scope, ref, &alias));
    if (c->type != ValueType::kTimestamp && c->type != ValueType::kTimestampTz &&
        c->type != ValueType::kDate && c->type != ValueType::kInt) {
      return Status::InvalidArgument(fmt::format(
          "{}: table '{}': version column {} is {}; it must be a timestamp, date or integer (ms)",
          loc.ToString(), target, ref.ToString(), c->source_type));
    }
    return static_cast<int>(cols->Add(alias, c->name));
  }

  Result<ValueCodecPlan> PlanCodec(const ColumnSpec& c, const SourceColumn& sc,
                                   const std::string& target) {
    ValueCodecPlan p;
    p.kind = c.codec;
    if (p.kind == ValueCodecKind::kHBase) {
      p.hbase_type = c.type == HBaseType::kAuto ? DefaultHBaseType(sc) : c.type;
      if (!HBaseTypeAccepts(p.hbase_type, sc.type)) {
        return Status::InvalidArgument(fmt::format(
            "{}: table '{}': column {} is {} ({}), which the hbase codec cannot write as Java {} "
            "(no value of it is one); use type: string, or a type that holds it",
            c.loc.ToString(), target, c.column.ToString(), sc.source_type, ValueTypeName(sc.type),
            HBaseTypeName(p.hbase_type)));
      }
    }
    return p;
  }

  // Plans the many-to-one join `j` of a scan whose aliases are *scope (a
  // target table's, or a nest's): checks its columns and that its `on`
  // columns are a key of the joined table, appends it to *joins and its
  // alias to *scope.
  Status PlanJoin(const JoinSpec& j, const std::string& target, Scope* scope,
                  std::vector<ScanJoin>* joins) {
    WIDEN_ASSIGN_OR_RETURN(const SourceTable* jt, FindTable(j.loc, target, j.table));
    ScanJoin sj;
    sj.table = jt->name;
    sj.alias = j.alias;
    for (const auto& [left, right] : j.on) {
      const std::string la = left.alias.empty() ? scope->driving : left.alias;
      const SourceTable* lt = scope->Find(la);
      if (lt == nullptr) {
        return Status::InvalidArgument(
            fmt::format("{}: table '{}': join '{}' refers to '{}' before it is joined",
                        j.loc.ToString(), target, j.alias, la));
      }
      WIDEN_RETURN_IF_ERROR(FindColumn(j.loc, target, *lt, left.column).status());
      WIDEN_RETURN_IF_ERROR(FindColumn(j.loc, target, *jt, right).status());
      sj.on.emplace_back(ColumnExpr{la, left.column, false}, right);
    }
    std::vector<std::string> right_cols;
    for (const auto& on : j.on) right_cols.push_back(on.second);
    if (!CoversKey(*jt, right_cols) && jt->is_view) {
      return Status::InvalidArgument(fmt::format(
          "{}: table '{}': join '{}' is on {}.({}), but {} is a view, which declares no "
          "primary or unique key, so nothing says that a row matches at most one of its rows; "
          "join the table the view reads (on its primary key or a unique key) instead",
          j.loc.ToString(), target, j.alias, jt->name, fmt::join(right_cols, ", "), jt->name));
    }
    if (!CoversKey(*jt, right_cols)) {
      return Status::InvalidArgument(fmt::format(
          "{}: table '{}': join '{}' matches {}.({}) which is not the primary key or a unique "
          "key of {}, so a row could match several: a one-to-many relation is a nest, not a "
          "join",
          j.loc.ToString(), target, j.alias, jt->name, fmt::join(right_cols, ", "), jt->name));
    }
    scope->aliases.emplace_back(j.alias, jt);
    joins->push_back(std::move(sj));
    return Status::OK();
  }

  Status PlanTable(const TableMapping& t, TablePlan* tp) {
    tp->mapping = &t;
    if (t.columns.empty() && t.nests.empty()) {
      return Status::InvalidArgument(fmt::format(
          "{}: table '{}' maps no column and no nest: no source row would give a cell, and an "
          "HBase row exists only through its cells; list the columns to write (columns: "
          "[...]) or nest a child table",
          t.loc.ToString(), t.name));
    }
    SplitTableName(t.name, &tp->descriptor.name_space, &tp->descriptor.table);
    for (const auto& f : t.families) {
      FamilyDescriptor fd;
      fd.name = f.name;
      fd.versions = f.versions;
      fd.min_versions = f.min_versions;
      fd.ttl_seconds = f.ttl_seconds;
      fd.compression = CompressionName(f.compression);
      fd.bloom_filter = BloomFilterName(f.bloom_filter);
      fd.block_size_bytes = f.block_size_bytes;
      fd.in_memory = f.in_memory;
      fd.data_block_encoding = DataBlockEncodingName(f.data_block_encoding);
      tp->descriptor.families.push_back(fd);
    }
    if (Status s = tp->descriptor.Validate(); !s.ok()) {
      return Status::InvalidArgument(fmt::format("{}: {}", t.loc.ToString(), s.message()));
    }

    Scope scope;
    scope.driving = t.from;
    const SourceTable* driving = nullptr;
    if (!t.query.empty()) {
      if (source_ == nullptr) {
        return Status::InvalidArgument(
            fmt::format("{}: table '{}': a query needs a source", t.loc.ToString(), t.name));
      }
      auto q = source_->DescribeQuery(t.query);
      if (!q.ok()) {
        return Status::InvalidArgument(
            fmt::format("{}: table '{}': {}", t.loc.ToString(), t.name, q.status().message()));
      }
      queries_.push_back(std::make_unique<SourceTable>(std::move(*q)));
      queries_.back()->name = t.from;
      driving = queries_.back().get();
      tp->scan.query = t.query;
    } else {
      WIDEN_ASSIGN_OR_RETURN(driving, FindTable(t.loc, t.name, t.from));
      tp->scan.table = driving->name;
    }
    scope.aliases.emplace_back(t.from, driving);
    ColumnSet cols;
    tp->scan.alias = t.from;
    tp->scan.where = t.where;

    for (const auto& j : t.joins) {
      WIDEN_RETURN_IF_ERROR(PlanJoin(j, t.name, &scope, &tp->scan.joins));
    }
    WIDEN_RETURN_IF_ERROR(CheckAccess(t, scope));

    // Row identity for messages, and a total order for paging sources: the
    // driving table's primary key.
    for (const auto& pk : driving->primary_key) {
      tp->identity.emplace_back(pk, cols.Add(t.from, pk));
      const SourceColumn* pc = driving->FindColumn(pk);
      tp->scan.unique_key.push_back(ColumnExpr{t.from, pk, pc != nullptr && IsTextual(pc->type)});
    }

    std::vector<KeyPartPlan> parts;
    for (const auto& kp : t.key.parts) {
      WIDEN_ASSIGN_OR_RETURN(KeyPartPlan p, PlanKeyPart(kp, t.key.form, t.name, scope, &cols));
      parts.push_back(std::move(p));
    }
    WIDEN_ASSIGN_OR_RETURN(KeyHashPlan salt, PlanHash(t.key.salt, t.key.parts));
    WIDEN_ASSIGN_OR_RETURN(KeyHashPlan hash, PlanHash(t.key.hash_prefix, t.key.parts));
    tp->key =
        KeyCodec(t.key.form, std::move(parts), t.key.separator, std::move(salt), std::move(hash));
    tp->descriptor.metadata[kKeyLayoutMetadata] = tp->key.ToJson();

    WIDEN_ASSIGN_OR_RETURN(tp->version_index, PlanVersion(t.loc, t.name, scope, t.version, &cols));

    for (const auto& c : t.columns) {
      std::string alias;
      WIDEN_ASSIGN_OR_RETURN(const SourceColumn* sc,
                             Resolve(c.loc, t.name, scope, c.column, &alias));
      CellPlan cp;
      cp.index = cols.Add(alias, sc->name);
      cp.family = c.family;
      cp.qualifier = c.qualifier;
      cp.on_null = c.on_null;
      cp.column = alias + "." + sc->name;
      WIDEN_ASSIGN_OR_RETURN(cp.codec, PlanCodec(c, *sc, t.name));
      WIDEN_ASSIGN_OR_RETURN(cp.version_index, PlanVersion(c.loc, t.name, scope, c.version, &cols));
      tp->cells.push_back(std::move(cp));
    }

    // Nests: every nest merges on the same parent columns, which order the driving rows.
    WIDEN_RETURN_IF_ERROR(PlanNests(t.nests, t, *driving, t.from, tp->scan.query, &cols,
                                    &tp->scan.merge, &tp->nests));
    if (!t.nests.empty()) {
      std::vector<std::string> parent_cols;
      for (const auto& on : t.nests.front().on) parent_cols.push_back(on.first);
      WIDEN_RETURN_IF_ERROR(
          CheckParentKey(t.nests.front().loc, t.name, *driving, !t.query.empty(), parent_cols));
      // The scans of a table with nests are read side by side. Without a
      // primary key the driving rows are told apart (and read in pages) by
      // the columns that place their cells: rows equal on those give the
      // same cells.
      if (tp->scan.unique_key.empty()) {
        for (const auto& c : NotNullKey(*driving)) {
          const SourceColumn* sc = driving->FindColumn(c);
          tp->scan.unique_key.push_back(
              ColumnExpr{t.from, c, sc != nullptr && IsTextual(sc->type)});
        }
      }
      if (tp->scan.unique_key.empty()) {
        std::vector<size_t> idx;
        for (const auto& p : tp->key.parts()) {
          if (!p.is_literal) idx.push_back(p.index);
        }
        if (tp->version_index >= 0) idx.push_back(static_cast<size_t>(tp->version_index));
        for (const auto& c : tp->cells) {
          if (c.version_index >= 0) idx.push_back(static_cast<size_t>(c.version_index));
        }
        for (const MergeLink& l : tp->scan.merge) {
          for (const auto& on : l.on) AddKeyColumn(on.first, &tp->scan.unique_key);
        }
        for (size_t i : idx) AddKeyColumn(Typed(scope, cols.At(i)), &tp->scan.unique_key);
        tp->scan.unique_key_from_mapping = true;
      }
      tp->scan.shared = true;
      MarkShared(&tp->nests);
    }
    tp->scan.columns = cols.Take();
    tp->order = PlanKeyOrder(*driving, !t.query.empty(), t.key_order, scope, tp);
    // A key_order the plan could not follow says so.
    if (t.key_order == KeyOrderChoice::kDatabase && tp->order.how == KeyOrder::kSort) {
      tp->order.why += " (key_order: database cannot apply)";
    } else if (t.key_order == KeyOrderChoice::kSort && tp->order.how == KeyOrder::kRead) {
      tp->order.why += " (key_order: sort has nothing to sort)";
    }
    SetMergeKeys(tp->scan, {}, 0, false, &tp->nests);
    if (tp->order.how == KeyOrder::kDatabase) PrependLead(tp->scan, &tp->nests);
    return CheckQualifierCollisions(*tp);
  }

  // Chooses how the table's cells reach the store in key order (KeyOrder)
  // and, for kDatabase, orders the scans by the key's columns: the driving
  // scan by them (ScanSpec::lead), each nested scan through a join to the
  // driving table on its link (alias widen_lead), whose key columns it
  // selects and is ordered by first. `choice` is the mapping's key_order:
  // kSort sorts whenever the scans' own order is not the key's; kDatabase
  // orders by the database wherever it can (else sorts); kAuto does too,
  // but sorts a table with nests (measured: sorting the runs in widen costs
  // less than the joins that order each nested scan through its parent).
  // REQUIRES: the scans' columns are final but for the lead columns this
  // adds at their end.
  KeyOrderPlan PlanKeyOrder(const SourceTable& driving, bool is_query, KeyOrderChoice choice,
                            const Scope& scope, TablePlan* tp) {
    const KeyCodec& key = tp->key;
    if (key.salt().size > 0) {
      return {KeyOrder::kSort,
              fmt::format("the key starts with a salt byte ({} buckets) that widen computes from "
                          "the encoded parts: the database cannot order the rows by it",
                          key.salt().size)};
    }
    if (key.hash_prefix().size > 0) {
      return {KeyOrder::kSort,
              fmt::format("the key starts with a {}-byte hash prefix that widen computes from the "
                          "encoded parts: the database cannot order the rows by it",
                          key.hash_prefix().size)};
    }
    const auto parts = key.parts();
    size_t last = parts.size();
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!parts[i].is_literal) last = i;
    }
    std::vector<LeadTerm> terms;
    std::vector<std::string> names;
    for (size_t i = 0; i < parts.size(); ++i) {
      const KeyPartPlan& p = parts[i];
      if (p.is_literal) continue;  // the same bytes in every key
      LeadTerm term;
      std::string why;
      if (!PartSortsLikeColumn(p, key.form(), i == last, &term, &why)) {
        return {KeyOrder::kSort, why};
      }
      const ColumnExpr& c = tp->scan.columns[p.index];
      const SourceTable* st = scope.Find(c.alias);
      const SourceColumn* sc = st == nullptr ? nullptr : st->FindColumn(c.column);
      if (term.column.is_text && (sc == nullptr || !TextOrdersAsBytes(*sc))) {
        return {
            KeyOrder::kSort,
            fmt::format(
                "key part '{}' is {}, which the database does not order by its bytes "
                "as the key does{}",
                p.name, p.source_type,
                sc != nullptr && sc->is_enum ? " (an enum: by the labels' declared order)" : "")};
      }
      // Rows whose part is NULL come too (a marker, or rejected): placed
      // where the key places them, or first.
      term.nullable = sc == nullptr || sc->nullable || scope.IsJoined(c.alias);
      term.column.alias = c.alias;
      term.column.column = c.column;
      names.push_back(fmt::format("{}.{}{}", c.alias, c.column, term.desc ? " DESC" : ""));
      terms.push_back(std::move(term));
    }
    if (terms.empty()) return {KeyOrder::kRead, "every row has the same key"};
    // The scans' own order: by the nest link (numbers, dates: by value),
    // and on MySQL by the primary key (its pages), which the key may follow.
    std::vector<ColumnExpr> own;
    if (!tp->nests.empty()) {
      if (tp->scan.merge.front().by_value) {
        for (const auto& on : tp->scan.merge.front().on) own.push_back(on.first);
      }
    } else if (!lead_limit_.empty()) {
      own = tp->scan.unique_key;
    }
    size_t same = 0;
    while (same < terms.size() && same < own.size() && !terms[same].desc &&
           !terms[same].column.is_text && terms[same].column.alias == own[same].alias &&
           terms[same].column.column == own[same].column) {
      ++same;
    }
    // The nest link and the primary key are keys: once they are all in the
    // key, the parts after them change nothing in the order.
    if (same > 0 && (same == terms.size() || same == own.size())) {
      std::vector<std::string> by;
      for (size_t i = 0; i < same; ++i) by.push_back(own[i].alias + "." + own[i].column);
      return {KeyOrder::kRead, fmt::format("the scans read the rows in key order already (by {})",
                                           fmt::join(by, ", "))};
    }
    if (choice == KeyOrderChoice::kSort) {
      return {KeyOrder::kSort, "the mapping asks widen to sort (key_order: sort)"};
    }
    if (!lead_limit_.empty()) return {KeyOrder::kSort, lead_limit_};
    if (!tp->nests.empty()) {
      if (is_query || driving.is_view) {
        return {KeyOrder::kSort,
                fmt::format("nested rows are ordered through their parent's table, and the rows "
                            "come from a {}",
                            is_query ? "free-form query" : "view")};
      }
      for (const LeadTerm& t : terms) {
        if (t.column.alias != tp->scan.alias) {
          return {KeyOrder::kSort,
                  fmt::format("nested rows are ordered through their parent's table, and key "
                              "part {}.{} comes from a joined table",
                              t.column.alias, t.column.column)};
        }
      }
      if (choice == KeyOrderChoice::kAuto) {
        return {KeyOrder::kSort,
                fmt::format("the database could order the rows by the key's columns ({}), but "
                            "each nested scan only through a join to its parent's table, which "
                            "costs more than widen's sort (key_order: database asks it all the "
                            "same)",
                            fmt::join(names, ", "))};
      }
    }
    tp->scan.lead = terms;
    for (NestPlan& n : tp->nests) {
      LeadChild(driving.name, terms, n.spec->on, n.scan.alias, &n.scan);
      for (NestPlan& g : n.children) {
        LeadChild(driving.name, terms, n.spec->on, "widen_parent", &g.scan);
      }
    }
    return {KeyOrder::kDatabase,
            fmt::format(
                "the database orders the rows by the key's columns ({}){}", fmt::join(names, ", "),
                tp->nests.empty() ? "" : ", and each nested scan through its parent's table")};
  }

  // Orders a nested scan by the driving row's key columns: joins the
  // driving table (alias widen_lead, its columns projected as widen_l0,
  // widen_l1, ...) on `on` (driving column, column of `via`: the child's own
  // alias, or widen_parent for a second-level child) and selects and orders
  // by its `terms` columns first.
  static void LeadChild(const std::string& driving, const std::vector<LeadTerm>& terms,
                        const std::vector<std::pair<std::string, std::string>>& on,
                        const std::string& via, ScanSpec* scan) {
    ScanJoin j;
    j.table = driving;
    j.alias = "widen_lead";
    // The driving table's columns under names of widen's own (a nest's
    // `where` names its table's columns unqualified).
    auto name = [&j](const std::string& column) {
      for (const auto& [c, n] : j.project) {
        if (c == column) return n;
      }
      j.project.emplace_back(column, fmt::format("widen_l{}", j.project.size()));
      return j.project.back().second;
    };
    for (const auto& [pcol, ccol] : on) j.on.emplace_back(ColumnExpr{via, ccol, false}, name(pcol));
    for (const LeadTerm& t : terms) {
      LeadTerm c = t;
      c.column.alias = "widen_lead";
      c.column.column = name(t.column.column);
      c.nullable = true;  // a child whose parent is not there reads NULL
      scan->columns.push_back(c.column);
      scan->lead.push_back(std::move(c));
    }
    scan->joins.push_back(std::move(j));
  }

  // Puts the lead columns in front of every nest's merge keys (SetMergeKeys
  // ran): the driving row's key columns against the child's copies of them.
  static void PrependLead(const ScanSpec& driving, std::vector<NestPlan>* nests) {
    const size_t n_lead = driving.lead.size();
    std::vector<size_t> top;  // the lead columns in the driving rows
    for (const LeadTerm& t : driving.lead) {
      for (size_t i = 0; i < driving.columns.size(); ++i) {
        if (driving.columns[i].alias == t.column.alias &&
            driving.columns[i].column == t.column.column) {
          top.push_back(i);
          break;
        }
      }
    }
    // The lead columns of a nested scan: the last n_lead of its columns.
    auto own = [n_lead](const ScanSpec& s) {
      std::vector<size_t> idx;
      for (size_t i = s.columns.size() - n_lead; i < s.columns.size(); ++i) idx.push_back(i);
      return idx;
    };
    auto prepend = [&](const std::vector<size_t>& parent, const ScanSpec& child, NestPlan* n) {
      std::vector<size_t> pk = parent, ck = own(child);
      pk.insert(pk.end(), n->parent_key.begin(), n->parent_key.end());
      ck.insert(ck.end(), n->child_key.begin(), n->child_key.end());
      n->parent_key = std::move(pk);
      n->child_key = std::move(ck);
      n->lead = n_lead;
      n->key_order.clear();
      for (const LeadTerm& t : driving.lead) {
        n->key_order.push_back(KeyDirection{t.desc, t.nulls_first});
      }
    };
    for (NestPlan& n : *nests) {
      prepend(top, n.scan, &n);
      for (NestPlan& g : n.children) prepend(own(n.scan), g.scan, &g);
      if (!n.children.empty()) n.link_key = n.children.front().parent_key;
    }
  }

  // The columns the access patterns of `t` name exist: the driving
  // table's, or a join's. A nested table's column is named as such (a
  // pattern reads row keys, which nested rows are not).
  Status CheckAccess(const TableMapping& t, const Scope& scope) {
    for (const AccessPattern& a : t.access) {
      for (const auto* list : {&a.by, &a.order}) {
        for (const AccessColumn& c : *list) {
          std::string alias;
          auto r = Resolve(c.loc, t.name, scope, c.column, &alias);
          if (r.ok()) continue;
          std::string nested;
          std::vector<const NestSpec*> nests;
          for (const auto& n : t.nests) nests.push_back(&n);
          for (size_t i = 0; i < nests.size() && c.column.alias.empty(); ++i) {
            for (const auto& g : nests[i]->nests) nests.push_back(&g);
            const SourceTable* nt = schema_.FindTable(nests[i]->table);
            if (nested.empty() && nt != nullptr && nt->FindColumn(c.column.column) != nullptr) {
              nested = nt->name;
            }
          }
          return Status(
              r.status().code(),
              fmt::format("{} (access pattern '{}'{})", r.status().message(), a.name,
                          nested.empty() ? ""
                                         : fmt::format("; '{}' is a column of the nested table "
                                                       "{}, whose rows are cells of this row, not "
                                                       "rows: a pattern reads row keys",
                                                       c.column.column, nested)));
        }
      }
    }
    return Status::OK();
  }

  // `e` with is_text set from its column's type in `scope`.
  static ColumnExpr Typed(const Scope& scope, ColumnExpr e) {
    const SourceTable* t = scope.Find(e.alias);
    const SourceColumn* c = t == nullptr ? nullptr : t->FindColumn(e.column);
    e.is_text = c != nullptr && IsTextual(c->type);
    return e;
  }

  // Nesting merges each child under the one parent row its link columns
  // match: `cols` of `parent` must identify one row. A base table says so by
  // a primary or unique key; a view or a query declares none, so there the
  // run checks the rows as they come (a repeat stops it before the repeated
  // row is written).
  Status CheckParentKey(const SourceLocation& loc, const std::string& target,
                        const SourceTable& parent, bool is_query,
                        std::span<const std::string> cols) {
    if (is_query || parent.is_view || CoversKey(parent, cols)) return Status::OK();
    return Status::InvalidArgument(fmt::format(
        "{}: table '{}': nests join on {}.({}), which is not the primary key or a unique key of "
        "{}: several of its rows could share a value, and a child row is nested under one "
        "parent row only; nest on columns of a key of {} (or, if the values are unique, "
        "declare it: ALTER TABLE {} ADD UNIQUE ({}))",
        loc.ToString(), target, parent.name, fmt::join(cols, ", "), parent.name, parent.name,
        parent.name, fmt::join(cols, ", ")));
  }

  // Plans `nests` under a parent table (`parent`, or the free-form query
  // `parent_query`, selected through `parent_cols` under `parent_alias`);
  // appends each nest's link, seen from the parent, to *parent_links.
  Status PlanNests(std::span<const NestSpec> nests, const TableMapping& t,
                   const SourceTable& parent, const std::string& parent_alias,
                   const std::string& parent_query, ColumnSet* parent_cols,
                   std::vector<MergeLink>* parent_links, std::vector<NestPlan>* out) {
    const NestSpec* first = nullptr;
    for (const auto& n : nests) {
      if (first == nullptr) {
        first = &n;
      } else {
        bool same = first->on.size() == n.on.size();
        for (size_t i = 0; same && i < n.on.size(); ++i) same = first->on[i].first == n.on[i].first;
        if (!same) {
          return Status::InvalidArgument(fmt::format(
              "{}: table '{}': every nest under one parent must join on the same parent columns "
              "as the first ({}); this one differs",
              n.loc.ToString(), t.name, first->loc.ToString()));
        }
      }
      NestPlan np;
      WIDEN_RETURN_IF_ERROR(PlanNest(n, t, parent, parent_alias, parent_query, parent_cols, &np));
      // The same link seen from the parent: its columns, compared with the child's.
      MergeLink link;
      link.peer_table = np.scan.table;
      link.by_value = np.scan.merge.front().by_value;
      for (const auto& [pcol, ccol] : n.on) {
        const SourceColumn* pc = parent.FindColumn(pcol);
        link.on.emplace_back(ColumnExpr{parent_alias, pcol, ComparedAsText(pc->type)}, ccol);
      }
      parent_links->push_back(std::move(link));
      out->push_back(std::move(np));
    }
    return Status::OK();
  }

  Status PlanNest(const NestSpec& n, const TableMapping& t, const SourceTable& parent,
                  const std::string& parent_alias, const std::string& parent_query,
                  ColumnSet* parent_cols, NestPlan* np) {
    np->spec = &n;
    np->family = n.family;
    np->prefix = n.prefix;
    np->layout = n.layout;
    np->attribute_separator = n.attribute_separator;
    WIDEN_ASSIGN_OR_RETURN(const SourceTable* child, FindTable(n.loc, t.name, n.table));
    if (child->name == parent.name) {
      return Status::InvalidArgument(fmt::format(
          "{}: table '{}': a table cannot be nested in itself", n.loc.ToString(), t.name));
    }
    ColumnSet cols;
    np->scan.table = child->name;
    np->scan.alias = child->name;
    np->scan.where = n.where;
    // The child's columns, and its joins' as alias.column.
    Scope scope;
    scope.driving = child->name;
    scope.aliases.emplace_back(child->name, child);
    for (const auto& j : n.joins) {
      WIDEN_RETURN_IF_ERROR(PlanJoin(j, t.name, &scope, &np->scan.joins));
    }
    auto own = [&](const ColumnRef& r) { return r.alias.empty() || r.alias == child->name; };
    std::vector<std::string> used;  // child columns left out of the default value
    // The link to the parent rows, seen from the child rows: the database
    // decides which parent a child belongs to (MergeLink).
    MergeLink up;
    up.child = true;
    up.by_value = true;
    if (parent_query.empty()) {
      up.peer_table = parent.name;
    } else {
      up.peer_query = parent_query;
    }
    for (const auto& [pcol, ccol] : n.on) {
      WIDEN_ASSIGN_OR_RETURN(const SourceColumn* pc, FindColumn(n.loc, t.name, parent, pcol));
      WIDEN_ASSIGN_OR_RETURN(const SourceColumn* cc, FindColumn(n.loc, t.name, *child, ccol));
      const bool same = CompareClass(pc->type) == CompareClass(cc->type) &&
                        (pc->type != ValueType::kOther || pc->storage_type() == cc->storage_type());
      if (!same || pc->type == ValueType::kJson) {
        return Status::InvalidArgument(fmt::format(
            "{}: table '{}': nest on {}.{} ({}) = {}.{} ({}): the two columns must have "
            "comparable types (numbers with numbers, text with text, the same date/time type)",
            n.loc.ToString(), t.name, parent.name, pc->name, pc->source_type, child->name, cc->name,
            cc->source_type));
      }
      np->parent_values.push_back(parent_cols->Add(parent_alias, pc->name));
      np->child_values.push_back(cols.Add(child->name, cc->name));
      np->scan.not_null.push_back(ColumnExpr{child->name, cc->name, false});
      up.on.emplace_back(ColumnExpr{child->name, cc->name, ComparedAsText(cc->type)}, pc->name);
      up.by_value = up.by_value && ComparesByValue(pc->type, cc->type);
      used.push_back(cc->name);
    }
    np->scan.merge.push_back(std::move(up));
    std::vector<KeyPartPlan> parts;
    for (const auto& kp : n.id) {
      WIDEN_ASSIGN_OR_RETURN(KeyPartPlan p, PlanKeyPart(kp, n.form, t.name, scope, &cols));
      if (!p.is_literal && own(kp.column)) used.push_back(p.name);
      parts.push_back(std::move(p));
    }
    np->qualifier = KeyCodec(n.form, std::move(parts), n.id_separator);
    if (!n.version.column.empty()) {
      WIDEN_ASSIGN_OR_RETURN(np->version_index,
                             PlanVersion(n.loc, t.name, scope, n.version, &cols));
      if (own(n.version)) used.push_back(n.version.column);
    }
    for (const auto& pk : child->primary_key)
      np->identity.emplace_back(pk, cols.Add(child->name, pk));
    for (const auto& pk : NotNullKey(*child)) {
      const SourceColumn* pc = child->FindColumn(pk);
      np->scan.unique_key.push_back(
          ColumnExpr{child->name, pk, pc != nullptr && IsTextual(pc->type)});
    }
    if (np->scan.unique_key.empty()) {
      // No key declared (a view, a table without one): the child rows are
      // told apart by what places their cells, link, id and version; two
      // rows equal on those would give the same cell.
      for (const MergeLink& l : np->scan.merge) {
        for (const auto& on : l.on) AddKeyColumn(on.first, &np->scan.unique_key);
      }
      for (const auto& p : np->qualifier.parts()) {
        if (!p.is_literal) AddKeyColumn(Typed(scope, cols.At(p.index)), &np->scan.unique_key);
      }
      if (np->version_index >= 0) {
        AddKeyColumn(Typed(scope, cols.At(static_cast<size_t>(np->version_index))),
                     &np->scan.unique_key);
      }
      np->scan.unique_key_from_mapping = true;
    }
    if (!n.nests.empty()) {
      WIDEN_RETURN_IF_ERROR(PlanNests(n.nests, t, *child, child->name, std::string(), &cols,
                                      &np->scan.merge, &np->children));
      // A grandchild is read joined to this child's table (as the database
      // matches them) so that it can be ordered like the children: by (the
      // child's link to its parent, the child's link to the grandchild).
      // The grandchildren are merged by (the child's link to its parent, its
      // link to them): those columns must identify one child row.
      std::vector<std::string> link_cols;
      for (const auto& on : n.on) link_cols.push_back(on.second);
      for (const auto& on : n.nests.front().on) {
        if (std::find(link_cols.begin(), link_cols.end(), on.first) == link_cols.end()) {
          link_cols.push_back(on.first);
        }
      }
      WIDEN_RETURN_IF_ERROR(CheckParentKey(n.nests.front().loc, t.name, *child, false, link_cols));
      for (NestPlan& g : np->children) {
        ScanJoin j;
        j.table = child->name;
        j.alias = "widen_parent";
        for (const auto& [ccol, gcol] : g.spec->on) {
          j.on.emplace_back(ColumnExpr{g.scan.alias, gcol, false}, ccol);
        }
        MergeLink top = np->scan.merge.front();
        std::vector<size_t> values;
        for (auto& [c, peer] : top.on) {
          c.alias = "widen_parent";
          g.scan.not_null.push_back(ColumnExpr{"widen_parent", c.column, false});
          g.scan.columns.push_back(ColumnExpr{"widen_parent", c.column, false});
          values.push_back(g.scan.columns.size() - 1);
        }
        // The grandchild's own link, taken from the joined child row: the
        // child's values, as the child's scan sees them (the parent side).
        const MergeLink& own = g.scan.merge.front();
        MergeLink via;
        via.peer_table = g.scan.table;
        via.by_value = own.by_value;
        for (size_t i = 0; i < own.on.size(); ++i) {
          via.on.emplace_back(
              ColumnExpr{"widen_parent", g.spec->on[i].first, own.on[i].first.is_text},
              own.on[i].first.column);
        }
        g.scan.joins.push_back(std::move(j));
        g.scan.merge = {std::move(top), std::move(via)};
        values.insert(values.end(), g.child_values.begin(), g.child_values.end());
        g.child_values = std::move(values);
        std::vector<size_t> parent_values = np->child_values;
        parent_values.insert(parent_values.end(), g.parent_values.begin(), g.parent_values.end());
        g.parent_values = std::move(parent_values);
      }
    }
    if (n.values.empty()) {
      for (const auto& c : child->columns) {
        if (std::find(used.begin(), used.end(), c.name) != used.end()) continue;
        np->value_columns.emplace_back(c.name, cols.Add(child->name, c.name));
      }
    } else {
      for (const NestValue& v : n.values) {
        std::string alias;
        WIDEN_ASSIGN_OR_RETURN(const SourceColumn* c,
                               Resolve(v.loc, t.name, scope, v.column, &alias));
        np->value_columns.emplace_back(v.name.empty() ? c->name : v.name, cols.Add(alias, c->name));
      }
    }
    if (np->layout == NestLayout::kValue && np->value_columns.size() != 1) {
      return Status::InvalidArgument(fmt::format(
          "{}: table '{}': layout: value needs exactly one value column; this nest has {} (list "
          "it in 'columns')",
          n.loc.ToString(), t.name, np->value_columns.size()));
    }
    np->scan.columns = cols.Take();
    return Status::OK();
  }

  const Mapping& mapping_;
  const SourceSchema& schema_;
  Source* source_;
  const std::string lead_limit_;  // Source::LeadOrderLimit
  std::vector<std::unique_ptr<SourceTable>> queries_;
};

}  // namespace

Status ForEachScan(const TablePlan& tp,
                   const std::function<Status(const ScanSpec&, const SourceLocation&)>& fn) {
  WIDEN_RETURN_IF_ERROR(fn(tp.scan, tp.mapping->loc));
  std::vector<const NestPlan*> todo;
  for (auto it = tp.nests.rbegin(); it != tp.nests.rend(); ++it) todo.push_back(&*it);
  while (!todo.empty()) {
    const NestPlan* n = todo.back();
    todo.pop_back();
    WIDEN_RETURN_IF_ERROR(fn(n->scan, n->spec->loc));
    for (auto it = n->children.rbegin(); it != n->children.rend(); ++it) todo.push_back(&*it);
  }
  return Status::OK();
}

SourceReads ReadsOf(const std::vector<const TablePlan*>& tables) {
  SourceReads reads;
  auto add = [&](const std::string& name) {
    if (name.empty()) return;
    if (std::find(reads.tables.begin(), reads.tables.end(), name) == reads.tables.end()) {
      reads.tables.push_back(name);
    }
  };
  for (const TablePlan* tp : tables) {
    (void)ForEachScan(*tp, [&](const ScanSpec& scan, const SourceLocation&) {
      if (!scan.query.empty() || !scan.where.empty()) reads.sql_text = true;
      add(scan.table);
      for (const auto& j : scan.joins) add(j.table);
      return Status::OK();
    });
  }
  return reads;
}

std::vector<SourceUse> SourceUses(const TablePlan& tp) {
  std::vector<SourceUse> uses;
  auto use = [&](const std::string& table) -> SourceUse& {
    for (SourceUse& u : uses) {
      if (u.table == table) return u;
    }
    uses.push_back(SourceUse{table});
    return uses.back();
  };
  (void)ForEachScan(tp, [&](const ScanSpec& scan, const SourceLocation&) {
    if (&scan == &tp.scan) {
      use(scan.table).driving = true;
    } else {
      use(scan.table).nested = true;
    }
    for (const ScanJoin& j : scan.joins) {
      // A grandchild's scan joins its parent's table to be ordered like
      // it: that table is read as a nest already.
      // widen_lead: a nested scan joins the driving table to be ordered
      // in key order (KeyOrder::kDatabase); it is read as driving already.
      if (j.alias != "widen_parent" && j.alias != "widen_lead") use(j.table).joined = true;
    }
    return Status::OK();
  });
  return uses;
}

std::string SourceRowId(const TablePlan& plan, const Row& row) {
  std::string s;
  for (const auto& [name, idx] : plan.identity) {
    if (!s.empty()) s += ", ";
    s += name + "=" + row[idx].DebugString();
  }
  if (!s.empty()) return s;
  for (const auto& p : plan.key.parts()) {
    if (p.is_literal) continue;
    if (!s.empty()) s += ", ";
    s += p.name + "=" + row[p.index].DebugString();
  }
  return s.empty() ? "(no primary key)" : s;
}

KeyType DefaultKeyType(const SourceColumn& c) {
  switch (c.type) {
    case ValueType::kBool:
      return KeyType::kBool;
    case ValueType::kInt:
    case ValueType::kUInt: {
      // The narrowest signed type that holds every value of the storage type.
      const std::optional<IntegerRange> r = DeclaredIntegerRange(c);
      if (!r) return c.type == ValueType::kUInt ? KeyType::kUInt64 : KeyType::kInt64;
      if (r->min >= INT8_MIN && r->max <= uint64_t{INT8_MAX}) return KeyType::kInt8;
      if (r->min >= INT16_MIN && r->max <= uint64_t{INT16_MAX}) return KeyType::kInt16;
      if (r->min >= INT32_MIN && r->max <= uint64_t{INT32_MAX}) return KeyType::kInt32;
      if (r->max <= uint64_t{INT64_MAX}) return KeyType::kInt64;
      return KeyType::kUInt64;
    }
    case ValueType::kFloat:
      return IsSinglePrecision(c) ? KeyType::kFloat32 : KeyType::kFloat64;
    case ValueType::kDecimal:
      return KeyType::kDecimal;
    case ValueType::kBytes:
      return KeyType::kBytes;
    case ValueType::kDate:
      return KeyType::kDate;
    case ValueType::kTime:
      return KeyType::kTime;
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz:
      return KeyType::kTimestamp;
    default:
      return KeyType::kString;
  }
}

HBaseType DefaultHBaseType(const SourceColumn& c) {
  switch (c.type) {
    case ValueType::kBool:
      return HBaseType::kBoolean;
    case ValueType::kInt:
    case ValueType::kUInt: {
      // The narrowest Java type that holds every value of the storage type;
      // BIGINT UNSIGNED and BIT(64) are long (values above Long.MAX_VALUE
      // reject their row: type: bigdecimal holds them all).
      const std::optional<IntegerRange> r = DeclaredIntegerRange(c);
      if (!r) return HBaseType::kLong;
      if (r->min >= INT16_MIN && r->max <= uint64_t{INT16_MAX}) return HBaseType::kShort;
      if (r->min >= INT32_MIN && r->max <= uint64_t{INT32_MAX}) return HBaseType::kInt;
      return HBaseType::kLong;
    }
    case ValueType::kFloat:
      return IsSinglePrecision(c) ? HBaseType::kFloat : HBaseType::kDouble;
    case ValueType::kDecimal:
      return HBaseType::kBigDecimal;
    case ValueType::kBytes:
      return HBaseType::kBytes;
    case ValueType::kDate:
    case ValueType::kTime:
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz:
      return HBaseType::kLong;
    default:
      return HBaseType::kString;
  }
}

std::string_view KeyOrderName(KeyOrder order) {
  switch (order) {
    case KeyOrder::kRead:
      return "read";
    case KeyOrder::kDatabase:
      return "database";
    case KeyOrder::kSort:
      return "sort";
  }
  return "sort";
}

Result<Plan> Plan::Make(const Mapping& mapping, const SourceSchema& schema, Source* source) {
  return Planner(mapping, schema, source).Make();
}

}  // namespace widen
