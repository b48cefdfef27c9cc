#include "mapping/mapping.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "common/suggest.h"
#include "mapping/policy_section_internal.h"
#include "mapping/sync_section_internal.h"
#include "mapping/yaml_internal.h"
#include "mapping/yaml_limits_internal.h"

namespace widen {

using mapping_internal::YamlContext;

std::string SourceLocation::ToString() const {
  if (line <= 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

ColumnRef ColumnRef::Parse(const std::string& text) {
  ColumnRef ref;
  size_t dot = text.find('.');
  if (dot == std::string::npos) {
    ref.column = text;
  } else {
    ref.alias = text.substr(0, dot);
    ref.column = text.substr(dot + 1);
  }
  return ref;
}

const TableMapping* Mapping::FindTable(const std::string& name) const {
  for (const auto& t : tables) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const SyncSpec* Mapping::FindSync(const std::string& source_table) const {
  for (const auto& s : sync) {
    if (s.table == source_table) return &s;
  }
  return nullptr;
}

namespace {

// Adds the tables a nest reads (its own, its joins', its nests') to *out.
void AddNestTables(const NestSpec& n, std::vector<std::string>* out) {
  auto add = [&](const std::string& name) {
    if (std::find(out->begin(), out->end(), name) == out->end()) out->push_back(name);
  };
  add(n.table);
  for (const auto& j : n.joins) add(j.table);
  for (const auto& g : n.nests) AddNestTables(g, out);
}

}  // namespace

std::vector<std::string> Mapping::SourceTables() const {
  std::vector<std::string> out;
  auto add = [&](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  for (const auto& t : tables) {
    if (t.query.empty()) add(t.from);
    for (const auto& j : t.joins) add(j.table);
    for (const auto& n : t.nests) AddNestTables(n, &out);
  }
  return out;
}

namespace {

// Expands ${VAR} and ${VAR:-default} from the environment.
Result<std::string> ExpandEnv(const std::string& in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '$' && i + 1 < in.size() && in[i + 1] == '{') {
      size_t end = in.find('}', i + 2);
      if (end == std::string::npos) {
        return Status::InvalidArgument(fmt::format("unterminated '${{' in '{}'", in));
      }
      std::string expr = in.substr(i + 2, end - i - 2);
      std::string name = expr, fallback;
      bool has_default = false;
      if (size_t d = expr.find(":-"); d != std::string::npos) {
        name = expr.substr(0, d);
        fallback = expr.substr(d + 2);
        has_default = true;
      }
      const char* v = std::getenv(name.c_str());
      if (v != nullptr && *v != '\0') {
        out += v;
      } else if (has_default) {
        out += fallback;
      } else {
        return Status::InvalidArgument(fmt::format(
            "environment variable {} is not set (write ${{{}:-default}} to give one)", name, name));
      }
      i = end;
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

ColumnRef ParseColumnRef(const std::string& text) { return ColumnRef::Parse(text); }

constexpr EnumName<KeyNullRule> kKeyNullRules[] = {{KeyNullRule::kReject, "reject"},
                                                   {KeyNullRule::kMarker, "marker"}};
constexpr NameTable<KeyNullRule> kKeyNullRuleNames{kKeyNullRules};
constexpr EnumName<NullPolicy> kNullPolicies[] = {
    {NullPolicy::kOmit, "omit"}, {NullPolicy::kEmpty, "empty"}, {NullPolicy::kReject, "reject"}};
constexpr NameTable<NullPolicy> kNullPolicyNames{kNullPolicies};
constexpr EnumName<KeyOrderChoice> kKeyOrderChoices[] = {{KeyOrderChoice::kAuto, "auto"},
                                                         {KeyOrderChoice::kDatabase, "database"},
                                                         {KeyOrderChoice::kSort, "sort"}};
constexpr NameTable<KeyOrderChoice> kKeyOrderChoiceNames{kKeyOrderChoices};

// The aliases a column reference may name: the rows' own table and its joins
// (a target table's driving table, or a nest's child table).
struct AliasScope {
  std::string from;                    // the rows' own table (or query alias)
  const std::vector<JoinSpec>* joins;  // joins so far
  std::string own;                     // "the driving table" / "the nested table"
  std::string owner;                   // "table 'x'" / "the nest of 'y'", for messages
};

AliasScope TableScope(const TableMapping& t) {
  return AliasScope{t.from, &t.joins, "the driving table", fmt::format("table '{}'", t.name)};
}

class Loader {
 public:
  explicit Loader(std::string file) : ctx_(file), file_(std::move(file)) {}

  Result<Mapping> Load(const YAML::Node& root) {
    Mapping m;
    m.file = file_;
    WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(root, "the mapping", "mapping"));
    std::string source, target;
    WIDEN_RETURN_IF_ERROR(ctx_.RequiredString(root, "source", &source));
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(root, "target", &target));
    // An unset variable is an error only when the URL is used (the command
    // line may override it).
    auto src = ExpandEnv(source);
    if (src.ok()) {
      m.source_url = *src;
    } else {
      m.source_problem = ctx_.Error(root["source"], src.status().message());
    }
    if (!target.empty()) {
      auto tgt = ExpandEnv(target);
      if (tgt.ok()) {
        m.target_url = *tgt;
      } else {
        m.target_problem = ctx_.Error(root["target"], tgt.status().message());
      }
    }
    if (root["timestamp_ms"]) {
      int64_t ts = 0;
      // HBase takes 0 .. Long.MAX_VALUE - 1 (Long.MAX_VALUE is its LATEST_TIMESTAMP).
      WIDEN_RETURN_IF_ERROR(ctx_.OptionalInt(root, "timestamp_ms", 0, INT64_MAX - 1, &ts));
      m.timestamp_ms = ts;
    }
    YAML::Node tables = root["tables"];
    if (!tables) return ctx_.Error(root, "missing required field 'tables'");
    WIDEN_RETURN_IF_ERROR(ctx_.CheckSequence(tables, "'tables'"));
    if (tables.size() == 0) return ctx_.Error(tables, "'tables' is empty: map at least one table");
    std::set<std::string> names;
    for (const auto& t : tables) {
      TableMapping tm;
      WIDEN_RETURN_IF_ERROR(LoadTable(t, &tm));
      // "default:t" and "t" name the same HBase table.
      const std::string canonical = tm.name.rfind("default:", 0) == 0 ? tm.name.substr(8) : tm.name;
      if (!names.insert(canonical).second) {
        return ctx_.Error(t, fmt::format("target table '{}' is mapped twice", tm.name));
      }
      m.tables.push_back(std::move(tm));
    }
    if (YAML::Node sync = root["sync"]) {
      WIDEN_RETURN_IF_ERROR(mapping_internal::LoadSyncSection(ctx_, sync, m, &m.sync));
    }
    m.policy = NamingPolicy::Default();
    if (YAML::Node policy = root["policy"]) {
      if (policy.IsScalar() && !policy.Scalar().empty()) {
        // A policy file, relative to the mapping's folder.
        std::filesystem::path path(policy.Scalar());
        if (path.is_relative()) path = std::filesystem::path(file_).parent_path() / path;
        auto p = load_policy(path.string());
        if (!p.ok()) {
          return ctx_.Error(policy, fmt::format("'policy': {}", p.status().message()));
        }
        m.policy = std::move(*p);
      } else {
        WIDEN_RETURN_IF_ERROR(mapping_internal::LoadPolicySection(ctx_, policy, &m.policy));
      }
    }
    // Access pattern names are unique in the mapping (plan and lint name them).
    std::vector<const AccessPattern*> access;
    for (const auto& t : m.tables) {
      for (const auto& a : t.access) {
        for (const AccessPattern* other : access) {
          if (other->name == a.name) {
            return Status::InvalidArgument(
                fmt::format("{}: access pattern '{}' is declared twice (first at {})",
                            a.loc.ToString(), a.name, other->loc.ToString()));
          }
        }
        access.push_back(&a);
      }
    }
    return m;
  }

 private:
  // `text` at `at` as a column reference, "column" or "alias.column"; an
  // empty text, or an empty side of the dot (".b", "x."), names no column.
  Status ColumnRefAt(const YAML::Node& at, const std::string& text, ColumnRef* out) {
    *out = ParseColumnRef(text);
    if (out->column.empty() || (text.find('.') != std::string::npos && out->alias.empty())) {
      return ctx_.Error(at,
                        fmt::format("'{}' names no column (write column or alias.column)", text));
    }
    return Status::OK();
  }

  Status LoadTable(const YAML::Node& n, TableMapping* t) {
    WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(n, "a table", "table"));
    t->loc = ctx_.Loc(n);
    WIDEN_RETURN_IF_ERROR(ctx_.RequiredString(n, "name", &t->name));
    t->name_loc = ctx_.Loc(n["name"]);
    WIDEN_RETURN_IF_ERROR(ctx_.RequiredString(n, "from", &t->from));
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(n, "where", &t->where));
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(n, "query", &t->query));
    if (!t->query.empty() && !t->where.empty()) {
      return ctx_.Error(n["where"], "a table with 'query' takes no 'where' (put it in the query)");
    }
    const std::string where = fmt::format("table '{}'", t->name);

    YAML::Node fams = n["families"];
    if (!fams) return ctx_.Error(n, where + ": missing required field 'families'");
    WIDEN_RETURN_IF_ERROR(ctx_.CheckSequence(fams, "'families'"));
    if (fams.size() == 0) return ctx_.Error(fams, where + ": at least one column family is needed");
    for (const auto& f : fams) {
      FamilySpec fs;
      fs.loc = ctx_.Loc(f);
      if (f.IsScalar()) {
        fs.name = f.Scalar();
      } else {
        WIDEN_RETURN_IF_ERROR(LoadFamily(f, &fs));
      }
      for (const auto& other : t->families) {
        if (other.name == fs.name) {
          return ctx_.Error(
              f, fmt::format("{}: column family '{}' is declared twice", where, fs.name));
        }
      }
      t->families.push_back(fs);
    }

    YAML::Node joins = n["joins"];
    if (joins) {
      WIDEN_RETURN_IF_ERROR(ctx_.CheckSequence(joins, "'joins'"));
      for (const auto& j : joins) {
        JoinSpec js;
        WIDEN_RETURN_IF_ERROR(LoadJoin(j, TableScope(*t), &js));
        t->joins.push_back(std::move(js));
      }
    }

    if (n["version"]) {
      std::string v;
      WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(n, "version", &v));
      WIDEN_RETURN_IF_ERROR(ColumnRefAt(n["version"], v, &t->version));
      if (!t->version.alias.empty() && !HasAlias(*t, t->version.alias)) {
        return ctx_.Error(n["version"], UnknownAlias(*t, t->version.alias));
      }
    }

    if (n["key_order"]) {
      std::string order;
      WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(n, "key_order", &order));
      if (!kKeyOrderChoiceNames.Parse(order, &t->key_order)) {
        return ctx_.Error(
            n["key_order"],
            fmt::format("'key_order' must be {}, got '{}'{}", kKeyOrderChoiceNames.List(" or "),
                        order, DidYouMean(order, kKeyOrderChoiceNames.Names())));
      }
    }

    YAML::Node key = n["key"];
    if (!key) return ctx_.Error(n, where + ": missing required field 'key'");
    WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(key, "'key'", "key"));
    t->key.loc = ctx_.Loc(key);
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(key, "separator", &t->key.separator));
    WIDEN_RETURN_IF_ERROR(LoadForm(key, &t->key.form));
    if (t->key.form == KeyForm::kText && t->key.separator.empty() && key["parts"] &&
        key["parts"].IsSequence() && key["parts"].size() > 1) {
      return ctx_.Error(key["separator"] ? key["separator"] : key,
                        "an empty separator lets parts run into each other in text keys (1|23 "
                        "and 12|3 would both be 123); give one, or use form: binary");
    }
    WIDEN_RETURN_IF_ERROR(LoadHash(key, "salt", "buckets", 2, 256, &t->key.salt));
    WIDEN_RETURN_IF_ERROR(LoadHash(key, "hash_prefix", "bytes", 1, 8, &t->key.hash_prefix));
    YAML::Node parts = key["parts"];
    if (!parts) return ctx_.Error(key, where + ": the key needs 'parts'");
    WIDEN_RETURN_IF_ERROR(ctx_.CheckSequence(parts, "'parts'"));
    if (parts.size() == 0) return ctx_.Error(parts, where + ": the key needs at least one part");
    for (const auto& p : parts) {
      KeyPart kp;
      WIDEN_RETURN_IF_ERROR(LoadKeyPart(p, TableScope(*t), t->name, t->key.form, &kp));
      t->key.parts.push_back(std::move(kp));
    }
    for (KeyHashSpec* h : {&t->key.salt, &t->key.hash_prefix}) {
      for (const auto& name : h->parts) {
        bool found = false;
        for (const auto& kp : t->key.parts)
          found = found || (!kp.is_literal && kp.column.column == name);
        if (!found) {
          return Status::InvalidArgument(
              fmt::format("{}: table '{}': '{}' is not a column part of the key", h->loc.ToString(),
                          t->name, name));
        }
      }
    }

    YAML::Node cols = n["columns"];
    if (cols) {
      WIDEN_RETURN_IF_ERROR(ctx_.CheckSequence(cols, "'columns'"));
      for (const auto& c : cols) {
        ColumnSpec cs;
        WIDEN_RETURN_IF_ERROR(LoadColumn(c, *t, &cs));
        t->columns.push_back(std::move(cs));
      }
    }

    YAML::Node nests = n["nest"];
    if (nests) {
      WIDEN_RETURN_IF_ERROR(ctx_.CheckSequence(nests, "'nest'"));
      for (const auto& x : nests) {
        NestSpec ns;
        WIDEN_RETURN_IF_ERROR(LoadNest(x, *t, &ns));
        t->nests.push_back(std::move(ns));
      }
    }
    if (YAML::Node access = n["access"]) {
      WIDEN_RETURN_IF_ERROR(ctx_.CheckSequence(access, "'access'"));
      for (const auto& a : access) {
        AccessPattern ap;
        WIDEN_RETURN_IF_ERROR(LoadAccess(a, *t, &ap));
        t->access.push_back(std::move(ap));
      }
    }
    return CheckQualifiers(*t);
  }

  // One entry of `access:`: {name, by: [columns], order: [entries]}, an
  // `order` entry "column", "column asc" or "column desc" (one space, the
  // direction in any case) or {column: NAME, desc: BOOL} (a name with
  // white space). A column is named at most once in `by` and once in
  // `order` (a `by` column may be in `order`: one value, any order).
  Status LoadAccess(const YAML::Node& n, const TableMapping& t, AccessPattern* a) {
    WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(n, "an access pattern", "access"));
    a->loc = ctx_.Loc(n);
    WIDEN_RETURN_IF_ERROR(ctx_.RequiredString(n, "name", &a->name));
    auto columns = [&](const char* field, bool ordered, std::vector<AccessColumn>* out) -> Status {
      YAML::Node list = n[field];
      if (!list) return Status::OK();
      std::vector<YAML::Node> items;
      if (list.IsScalar()) {
        items.push_back(list);
      } else {
        WIDEN_RETURN_IF_ERROR(ctx_.CheckSequence(list, fmt::format("'{}'", field)));
        for (const auto& e : list) items.push_back(e);
      }
      for (const auto& e : items) {
        AccessColumn c;
        c.loc = ctx_.Loc(e);
        std::string text;
        if (ordered && e.IsMap()) {
          WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(e, "an 'order' entry", "access_order"));
          WIDEN_RETURN_IF_ERROR(ctx_.RequiredString(e, "column", &text));
          WIDEN_RETURN_IF_ERROR(ctx_.OptionalBool(e, "desc", &c.desc));
        } else if (!e.IsScalar() || e.Scalar().empty()) {
          return ctx_.Error(e, fmt::format("'{}' holds column names{}", field,
                                           ordered ? " (\"column\", \"column desc\" or {column: "
                                                     "NAME, desc: true})"
                                                   : ""));
        } else {
          text = e.Scalar();
          const size_t blank = text.find_first_of(" \t\r\n\f\v");
          if (ordered && blank != std::string::npos) {
            // "column asc" / "column desc": one space, the direction last.
            std::string dir = text.substr(blank + 1);
            for (char& ch : dir)
              ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            if (text[blank] != ' ' || blank == 0 || (dir != "asc" && dir != "desc")) {
              return ctx_.Error(
                  e, fmt::format("an 'order' entry is \"column\", \"column asc\" or \"column "
                                 "desc\" (one space between), got '{}'; a column whose name "
                                 "holds white space is written {{column: NAME, desc: false}}",
                                 text));
            }
            c.desc = dir == "desc";
            text = text.substr(0, blank);
          } else if (!ordered && (text.front() == ' ' || text.back() == ' ')) {
            return ctx_.Error(e, fmt::format("'by' entry '{}' starts or ends with a space", text));
          }
        }
        WIDEN_RETURN_IF_ERROR(ColumnRefAt(e, text, &c.column));
        if (!c.column.alias.empty() && !HasAlias(t, c.column.alias)) {
          return ctx_.Error(e, UnknownAlias(t, c.column.alias));
        }
        for (const AccessColumn& other : *out) {
          if (other.column.ToString() == c.column.ToString()) {
            return ctx_.Error(e, fmt::format("access pattern '{}' names column '{}' twice in "
                                             "'{}'",
                                             a->name, c.column.ToString(), field));
          }
        }
        out->push_back(std::move(c));
      }
      return Status::OK();
    };
    WIDEN_RETURN_IF_ERROR(columns("by", false, &a->by));
    WIDEN_RETURN_IF_ERROR(columns("order", true, &a->order));
    return Status::OK();
  }

  Status LoadJoin(const YAML::Node& n, const AliasScope& t, JoinSpec* j) {
    WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(n, "a join", "join"));
    j->loc = ctx_.Loc(n);
    WIDEN_RETURN_IF_ERROR(ctx_.RequiredString(n, "table", &j->table));
    j->alias = j->table;
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(n, "as", &j->alias));
    if (j->alias == t.from || j->alias.find('.') != std::string::npos) {
      return ctx_.Error(n, fmt::format("join alias '{}' must differ from {} and contain no '.' "
                                       "(set 'as')",
                                       j->alias, t.own));
    }
    // A second-level nest is read joined to its parent's table under
    // widen_parent, a nested scan ordered in key order to the driving table
    // under widen_lead.
    if (j->alias == "widen_parent" || j->alias == "widen_lead") {
      return ctx_.Error(n, fmt::format("join alias '{}' is widen's own (set 'as')", j->alias));
    }
    for (const auto& other : *t.joins) {
      if (other.alias == j->alias) {
        return ctx_.Error(n, fmt::format("join alias '{}' is used twice (set 'as')", j->alias));
      }
    }
    YAML::Node on = n["on"];
    if (!on || !on.IsMap() || on.size() == 0) {
      return ctx_.Error(on ? on : n, "a join needs 'on': a map {this_column: joined_column, ...}");
    }
    for (auto it = on.begin(); it != on.end(); ++it) {
      ColumnRef left;
      WIDEN_RETURN_IF_ERROR(ColumnRefAt(it->first, it->first.Scalar(), &left));
      if (!left.alias.empty() && !HasAlias(t, left.alias)) {
        return ctx_.Error(it->first, UnknownAlias(t, left.alias));
      }
      if (!it->second.IsScalar() || it->second.Scalar().empty()) {
        return ctx_.Error(it->second, "a join's 'on' values are column names of the joined table");
      }
      j->on.emplace_back(left, it->second.Scalar());
    }
    return Status::OK();
  }

  Status LoadForm(const YAML::Node& n, KeyForm* form) {
    std::string f = "text";
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(n, "form", &f));
    if (!KeyFormNames().Parse(f, form)) {
      return ctx_.Error(n["form"],
                        fmt::format("'form' must be {}, got '{}'", KeyFormNames().List(" or "), f));
    }
    return Status::OK();
  }

  Status LoadHash(const YAML::Node& key, const char* field, const char* size_name, int64_t min,
                  int64_t max, KeyHashSpec* h) {
    YAML::Node n = key[field];
    if (!n) return Status::OK();
    h->loc = ctx_.Loc(n);
    WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(n, fmt::format("'{}'", field), field));
    if (!n[size_name]) return ctx_.Error(n, fmt::format("'{}' needs '{}'", field, size_name));
    int64_t size = 0;
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalInt(n, size_name, min, max, &size));
    h->size = static_cast<int>(size);
    if (n["parts"]) {
      WIDEN_RETURN_IF_ERROR(ctx_.CheckSequence(n["parts"], "'parts'"));
      for (const auto& p : n["parts"]) h->parts.push_back(p.Scalar());
    }
    return Status::OK();
  }

  Status LoadFamily(const YAML::Node& f, FamilySpec* fs) {
    WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(f, "a column family", "family"));
    WIDEN_RETURN_IF_ERROR(ctx_.RequiredString(f, "name", &fs->name));
    int64_t v = fs->versions, mv = fs->min_versions, bs = fs->block_size_bytes;
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalInt(f, "versions", 1, INT32_MAX, &v));
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalInt(f, "min_versions", 0, INT32_MAX, &mv));
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalInt(f, "ttl", 0, INT32_MAX, &fs->ttl_seconds));
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalInt(f, "block_size", 1024, 16 << 20, &bs));
    if (mv > v) {
      return ctx_.Error(f["min_versions"],
                        fmt::format("'min_versions' ({}) exceeds 'versions' ({})", mv, v));
    }
    fs->versions = static_cast<int>(v);
    fs->min_versions = static_cast<int>(mv);
    fs->block_size_bytes = static_cast<int>(bs);
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalBool(f, "in_memory", &fs->in_memory));
    WIDEN_RETURN_IF_ERROR(OneOf(f, "compression", kCompressionNames, &fs->compression));
    WIDEN_RETURN_IF_ERROR(OneOf(f, "bloom_filter", kBloomFilterNames, &fs->bloom_filter));
    WIDEN_RETURN_IF_ERROR(
        OneOf(f, "data_block_encoding", kDataBlockEncodingNames, &fs->data_block_encoding));
    return Status::OK();
  }

  // An optional field whose value (upper-cased) must be a name of `names`.
  template <typename E>
  Status OneOf(const YAML::Node& map, const char* key, const NameTable<E>& names, E* out) {
    if (!map[key]) return Status::OK();
    std::string v;
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(map, key, &v));
    for (char& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (names.Parse(v, out)) return Status::OK();
    return ctx_.Error(map[key],
                      fmt::format("'{}' must be one of {}, got '{}'{}", key, names.List(", "),
                                  map[key].Scalar(), DidYouMean(v, names.Names())));
  }

  // `target` names the target table in messages.
  Status LoadKeyPart(const YAML::Node& p, const AliasScope& t, const std::string& target,
                     KeyForm form, KeyPart* kp) {
    kp->loc = ctx_.Loc(p);
    std::string type;
    if (p.IsScalar()) {
      WIDEN_RETURN_IF_ERROR(ColumnRefAt(p, p.Scalar(), &kp->column));
    } else {
      WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(p, "a key part", "key_part"));
      if (p["column"] && p["literal"]) {
        return ctx_.Error(p, "a key part is either a 'column' or a 'literal', not both");
      }
      if (p["literal"]) {
        kp->is_literal = true;
        WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(p, "literal", &kp->literal));
      } else {
        std::string col;
        WIDEN_RETURN_IF_ERROR(ctx_.RequiredString(p, "column", &col));
        WIDEN_RETURN_IF_ERROR(ColumnRefAt(p["column"], col, &kp->column));
      }
      int64_t w = 0;
      WIDEN_RETURN_IF_ERROR(ctx_.OptionalInt(p, "width", 0, kMaxKeyPartWidth, &w));
      kp->width = static_cast<int>(w);
      WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(p, "type", &type));
      WIDEN_RETURN_IF_ERROR(ctx_.OptionalBool(p, "desc", &kp->desc));
      WIDEN_RETURN_IF_ERROR(ctx_.OptionalBool(p, "reverse", &kp->reverse));
      if (p["on_null"]) {
        std::string r;
        WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(p, "on_null", &r));
        if (!kKeyNullRuleNames.Parse(r, &kp->on_null)) {
          return ctx_.Error(p["on_null"], fmt::format("a key part's 'on_null' is {}, got '{}'",
                                                      kKeyNullRuleNames.List(" or "), r));
        }
        kp->on_null_given = true;
      }
      if (form == KeyForm::kText) {
        if (kp->desc)
          return ctx_.Error(p["desc"], "'desc' needs the binary key form (form: binary)");
        if (kp->on_null == KeyNullRule::kMarker) {
          return ctx_.Error(p["on_null"],
                            "'on_null: marker' needs the binary key form (form: binary)");
        }
      }
      if (kp->is_literal && (kp->desc || kp->reverse || !type.empty())) {
        return ctx_.Error(p, "a literal part takes no type, desc or reverse");
      }
    }
    if (!kp->is_literal && !kp->column.alias.empty() && !HasAlias(t, kp->column.alias)) {
      return ctx_.Error(p, UnknownAlias(t, kp->column.alias));
    }
    if (!type.empty()) {
      KeyType kt;
      if (!ParseKeyType(type, &kt)) {
        return Status::InvalidArgument(fmt::format(
            "{}: table '{}': key part '{}': unknown type '{}' (expected {})", kp->loc.ToString(),
            target, kp->column.ToString(), type, KeyTypeNames().List(", ")));
      }
      kp->type = kt;
    }
    return Status::OK();
  }

  Status LoadColumn(const YAML::Node& c, const TableMapping& t, ColumnSpec* cs) {
    cs->loc = ctx_.Loc(c);
    cs->to_loc = cs->loc;
    std::string to, type;
    if (c.IsScalar()) {
      WIDEN_RETURN_IF_ERROR(ColumnRefAt(c, c.Scalar(), &cs->column));
    } else {
      WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(c, "a column", "column"));
      std::string col;
      WIDEN_RETURN_IF_ERROR(ctx_.RequiredString(c, "column", &col));
      WIDEN_RETURN_IF_ERROR(ColumnRefAt(c["column"], col, &cs->column));
      WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(c, "to", &to));
      if (c["to"]) cs->to_loc = ctx_.Loc(c["to"]);
      WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(c, "type", &type));
      if (c["codec"]) {
        std::string codec;
        WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(c, "codec", &codec));
        if (!ParseValueCodec(codec, &cs->codec)) {
          return ctx_.Error(c["codec"], fmt::format("'codec' must be {}, got '{}'{}",
                                                    ValueCodecNames().List(" or "), codec,
                                                    DidYouMean(codec, ValueCodecNames().Names())));
        }
      }
      if (c["version"]) {
        std::string v;
        WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(c, "version", &v));
        WIDEN_RETURN_IF_ERROR(ColumnRefAt(c["version"], v, &cs->version));
        if (!cs->version.alias.empty() && !HasAlias(t, cs->version.alias)) {
          return ctx_.Error(c["version"], UnknownAlias(t, cs->version.alias));
        }
      }
      std::string on_null = "omit";
      WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(c, "on_null", &on_null));
      if (!kNullPolicyNames.Parse(on_null, &cs->on_null)) {
        return ctx_.Error(c["on_null"], fmt::format("'on_null' must be {}, got '{}'",
                                                    kNullPolicyNames.List(" or "), on_null));
      }
    }
    if (!cs->column.alias.empty() && !HasAlias(t, cs->column.alias)) {
      return ctx_.Error(c, UnknownAlias(t, cs->column.alias));
    }
    if (to.empty()) {
      cs->family = t.families.front().name;
      cs->qualifier = cs->column.column;
    } else {
      size_t colon = to.find(':');
      if (colon == std::string::npos) {
        return ctx_.Error(c["to"], fmt::format("'to' must be family:qualifier, got '{}'", to));
      }
      cs->family = to.substr(0, colon);
      cs->qualifier = to.substr(colon + 1);
    }
    if (cs->qualifier.empty()) cs->qualifier = cs->column.column;
    WIDEN_RETURN_IF_ERROR(CheckFamily(c.IsScalar() ? c : (c["to"] ? c["to"] : c), t, cs->family));
    if (!type.empty() && cs->codec != ValueCodecKind::kHBase) {
      return Status::InvalidArgument(fmt::format(
          "{}: table '{}': 'type' applies to the hbase codec only", cs->loc.ToString(), t.name));
    }
    if (!type.empty() && !ParseHBaseType(type, &cs->type)) {
      return Status::InvalidArgument(
          fmt::format("{}: table '{}': unknown hbase type '{}' (expected {})", cs->loc.ToString(),
                      t.name, type, HBaseTypeNames().List(", ")));
    }
    return Status::OK();
  }

  Status LoadNest(const YAML::Node& n, const TableMapping& t, NestSpec* ns, int depth = 1,
                  const NestSpec* parent = nullptr) {
    WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(n, "a nest", "nest"));
    ns->loc = ctx_.Loc(n);
    WIDEN_RETURN_IF_ERROR(ctx_.RequiredString(n, "table", &ns->table));
    const AliasScope scope{ns->table, &ns->joins, "the nested table",
                           fmt::format("the nest of '{}'", ns->table)};
    if (YAML::Node joins = n["joins"]) {
      WIDEN_RETURN_IF_ERROR(ctx_.CheckSequence(joins, "'joins'"));
      for (const auto& j : joins) {
        JoinSpec js;
        WIDEN_RETURN_IF_ERROR(LoadJoin(j, scope, &js));
        ns->joins.push_back(std::move(js));
      }
    }
    if (parent != nullptr && !n["family"]) {
      ns->family = parent->family;
    } else {
      WIDEN_RETURN_IF_ERROR(ctx_.RequiredString(n, "family", &ns->family));
    }
    WIDEN_RETURN_IF_ERROR(CheckFamily(n["family"] ? n["family"] : n, t, ns->family));
    WIDEN_RETURN_IF_ERROR(LoadForm(n, &ns->form));
    std::string layout = "json";
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(n, "layout", &layout));
    if (!NestLayoutNames().Parse(layout, &ns->layout)) {
      return ctx_.Error(n["layout"], fmt::format("'layout' must be {}, got '{}'",
                                                 NestLayoutNames().List(" or "), layout));
    }
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(n, "attribute_separator", &ns->attribute_separator));
    std::string version;
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(n, "version", &version));
    if (n["version"]) WIDEN_RETURN_IF_ERROR(ColumnRefAt(n["version"], version, &ns->version));
    if (!ns->version.alias.empty() && !HasAlias(scope, ns->version.alias)) {
      return ctx_.Error(n["version"], UnknownAlias(scope, ns->version.alias));
    }
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(n, "prefix", &ns->prefix));
    ns->prefix_loc = ctx_.Loc(n["prefix"] ? n["prefix"] : n);
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(n, "where", &ns->where));
    YAML::Node on = n["on"];
    if (!on || !on.IsMap() || on.size() == 0) {
      return ctx_.Error(on ? on : n, "a nest needs 'on': a map {parent_column: child_column, ...}");
    }
    for (auto it = on.begin(); it != on.end(); ++it) {
      if (!it->second.IsScalar() || it->second.Scalar().empty()) {
        return ctx_.Error(it->second, "a nest's 'on' values are column names of the child table");
      }
      if (it->first.Scalar().find('.') != std::string::npos) {
        return ctx_.Error(it->first, "a nest's 'on' keys are columns of the parent table");
      }
      ns->on.emplace_back(it->first.Scalar(), it->second.Scalar());
    }
    YAML::Node id = n["id"];
    if (!id) return ctx_.Error(n, "a nest needs 'id': the child columns that name each child");
    if (id.IsScalar()) {
      KeyPart kp;
      WIDEN_RETURN_IF_ERROR(LoadKeyPart(id, scope, t.name, ns->form, &kp));
      ns->id.push_back(kp);
    } else {
      WIDEN_RETURN_IF_ERROR(ctx_.CheckSequence(id, "'id'"));
      if (id.size() == 0) return ctx_.Error(id, "'id' needs at least one child column");
      for (const auto& p : id) {
        KeyPart kp;
        WIDEN_RETURN_IF_ERROR(LoadKeyPart(p, scope, t.name, ns->form, &kp));
        ns->id.push_back(std::move(kp));
      }
    }
    ns->id_separator = ns->id.size() > 1 ? "|" : "";
    WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(n, "id_separator", &ns->id_separator));
    if (ns->form == KeyForm::kText && ns->id_separator.empty() && ns->id.size() > 1) {
      return ctx_.Error(n["id_separator"] ? n["id_separator"] : n,
                        "an empty id_separator lets id parts run into each other; give one, or "
                        "use form: binary");
    }
    YAML::Node cols = n["columns"];
    if (cols) {
      WIDEN_RETURN_IF_ERROR(ctx_.CheckSequence(cols, "'columns'"));
      for (const auto& c : cols) {
        // A child column name, or {column: NAME, as: ATTRIBUTE} to rename it.
        std::string column, as;
        if (c.IsScalar()) {
          column = c.Scalar();
        } else if (c.IsMap()) {
          WIDEN_RETURN_IF_ERROR(ctx_.CheckMap(c, "a nest column", "nest_column"));
          WIDEN_RETURN_IF_ERROR(ctx_.RequiredString(c, "column", &column));
          WIDEN_RETURN_IF_ERROR(ctx_.OptionalString(c, "as", &as));
          if (c["as"] && as.find_first_not_of(" \t") == std::string::npos) {
            return ctx_.Error(c["as"], "'as' needs a name");
          }
          if (ns->layout == NestLayout::kValue) {
            return ctx_.Error(c["as"] ? c["as"] : c,
                              "'as' has no effect with layout: value (the cell holds the bare "
                              "value, with no attribute name)");
          }
          if (ns->layout == NestLayout::kCells && !ns->attribute_separator.empty() &&
              as.find(ns->attribute_separator) != std::string::npos) {
            return ctx_.Error(c["as"], fmt::format("'as' name '{}' contains the attribute "
                                                   "separator '{}', so the qualifier could not "
                                                   "be split back",
                                                   as, ns->attribute_separator));
          }
        } else {
          return ctx_.Error(c,
                            "a nest's 'columns' are child column names or {column: NAME, as: "
                            "ATTRIBUTE}");
        }
        NestValue value{ctx_.Loc(c), {}, as};
        WIDEN_RETURN_IF_ERROR(ColumnRefAt(c.IsMap() ? c["column"] : c, column, &value.column));
        if (!value.column.alias.empty() && !HasAlias(scope, value.column.alias)) {
          return ctx_.Error(c, UnknownAlias(scope, value.column.alias));
        }
        for (const NestValue& other : ns->values) {
          if (other.attribute() == value.attribute()) {
            return ctx_.Error(c, fmt::format("attribute '{}' appears twice in this nest's "
                                             "'columns' (rename one with 'as')",
                                             value.attribute()));
          }
        }
        ns->values.push_back(std::move(value));
      }
    }
    YAML::Node kids = n["nest"];
    if (kids) {
      if (depth >= 2) return ctx_.Error(kids, "nesting goes two levels deep at most");
      WIDEN_RETURN_IF_ERROR(ctx_.CheckSequence(kids, "'nest'"));
      for (const auto& k : kids) {
        NestSpec child;
        WIDEN_RETURN_IF_ERROR(LoadNest(k, t, &child, depth + 1, ns));
        ns->nests.push_back(std::move(child));
      }
    }
    return Status::OK();
  }

  Status CheckFamily(const YAML::Node& at, const TableMapping& t, const std::string& family) {
    std::vector<std::string> names;
    for (const auto& f : t.families) {
      if (f.name == family) return Status::OK();
      names.push_back(f.name);
    }
    std::string hint = ClosestName(family, names);
    return ctx_.Error(at,
                      fmt::format("table '{}' has no column family '{}'{}", t.name, family,
                                  hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
  }

  // Two columns written to the same family:qualifier would overwrite each other.
  Status CheckQualifiers(const TableMapping& t) {
    std::set<std::string> seen;
    for (const auto& c : t.columns) {
      std::string fq = c.family + ":" + c.qualifier;
      if (!seen.insert(fq).second) {
        return Status::InvalidArgument(fmt::format(
            "{}: table '{}': column '{}' is written twice (each cell would overwrite the other)",
            c.loc.ToString(), t.name, fq));
      }
    }
    // Nests that can write one qualifier are found when the mapping is
    // planned against the source (transform/qualifier_check.h): that needs
    // the id columns' types.
    return Status::OK();
  }

  static bool HasAlias(const AliasScope& t, const std::string& alias) {
    if (alias == t.from) return true;
    for (const auto& j : *t.joins) {
      if (j.alias == alias) return true;
    }
    return false;
  }
  static bool HasAlias(const TableMapping& t, const std::string& alias) {
    return HasAlias(TableScope(t), alias);
  }

  static std::string UnknownAlias(const AliasScope& t, const std::string& alias) {
    std::vector<std::string> names{t.from};
    for (const auto& j : *t.joins) names.push_back(j.alias);
    std::string hint = ClosestName(alias, names);
    return fmt::format("'{}' is neither {} nor a join of {}{}", alias, t.own, t.owner,
                       hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint));
  }
  static std::string UnknownAlias(const TableMapping& t, const std::string& alias) {
    return UnknownAlias(TableScope(t), alias);
  }

  YamlContext ctx_;
  std::string file_;
};

}  // namespace

const NameTable<KeyOrderChoice>& KeyOrderChoiceNames() { return kKeyOrderChoiceNames; }

namespace {

// "FILE:LINE:COL" of a YAML reader's error mark in `text`. The reader marks
// an error at the end of the input one character past it: such a mark, or
// any past the end of its line, is given as the end of that line (of the
// text). "FILE" alone when the mark has no place.
std::string MarkPlace(const std::string& file, std::string_view text, const YAML::Mark& mark) {
  if (mark.line < 0 || mark.column < 0) return file;
  int line = 0;
  size_t start = 0;  // of line `line`
  while (line < mark.line) {
    const size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
    ++line;
  }
  const size_t end = std::min(text.find('\n', start), text.size());
  const size_t length = end - start;
  const size_t column =
      line < mark.line ? length : std::min(static_cast<size_t>(mark.column), length);
  return fmt::format("{}:{}:{}", file, line + 1, column + 1);
}

// `message` on one line of printable text: the YAML reader's end-of-input
// marker (0x04; the text holds no control characters, CheckYamlText) as
// "the end of the text", other control characters (which a double-quoted
// escape can put in a name the message quotes) as \xNN.
std::string Printable(std::string_view message) {
  std::string out;
  for (size_t i = 0; i < message.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(message[i]);
    const bool c1 = c == 0xC2 && i + 1 < message.size() &&
                    static_cast<unsigned char>(message[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(message[i + 1]) <= 0x9F;
    if (c == 0x04) {
      out += "the end of the text";
    } else if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02X}", c);
    } else if (c1) {
      out += fmt::format("\\u{:04X}", static_cast<unsigned char>(message[++i]));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

Status PrintableStatus(const Status& s) {
  return s.ok() ? s : Status(s.code(), Printable(s.message()));
}

Result<Mapping> ParseMappingText(const std::string& yaml_text, const std::string& file_name) {
  WIDEN_RETURN_IF_ERROR(mapping_internal::CheckYamlLimits(yaml_text, file_name));
  YAML::Node root;
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(yaml_text);
    if (docs.size() > 1) {
      return Status::InvalidArgument(
          fmt::format("{}: a second YAML document ('---'): a mapping file holds one document",
                      MarkPlace(file_name, yaml_text, docs[1].Mark())));
    }
    if (!docs.empty()) root = docs[0];
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(
        fmt::format("{}: invalid YAML: {}", MarkPlace(file_name, yaml_text, e.mark), e.msg));
  }
  if (!root || root.IsNull()) return Status::InvalidArgument(file_name + ": the mapping is empty");
  try {
    return Loader(file_name).Load(root);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(
        fmt::format("{}: {}", MarkPlace(file_name, yaml_text, e.mark), e.msg));
  }
}

}  // namespace

Result<Mapping> ParseMapping(const std::string& yaml_text, const std::string& file_name) {
  Result<Mapping> m = ParseMappingText(yaml_text, file_name);
  if (!m.ok()) return PrintableStatus(m.status());
  m->source_problem = PrintableStatus(m->source_problem);
  m->target_problem = PrintableStatus(m->target_problem);
  return m;
}

Result<Mapping> load_mapping(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return Status::NotFound(fmt::format("{}: no such mapping file", path));
  }
  if (!std::filesystem::is_regular_file(status)) {
    return Status::InvalidArgument(fmt::format("{}: the mapping is not a regular file", path));
  }
  // Read at most one byte past the limit, so a file that grows while it is
  // read costs no more than one at the limit.
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("{}: cannot open the mapping file", path));
  std::string text(mapping_internal::kMaxMappingBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return Status::NotFound(fmt::format("{}: cannot read the mapping file", path));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > mapping_internal::kMaxMappingBytes) {
    const uintmax_t size = std::filesystem::file_size(path, ec);
    return Status::InvalidArgument(fmt::format(
        "{}: the mapping is {} bytes, more than the limit of 1 MiB ({} bytes); is it the right "
        "file?",
        path, ec ? text.size() : size, mapping_internal::kMaxMappingBytes));
  }
  return ParseMapping(text, path);
}

}  // namespace widen
