#include "transform/lint.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/table_descriptor.h"
#include "common/temporal.h"
#include "extract/source_stats.h"
#include "transform/access_plan.h"
#include "transform/cell_timestamp.h"
#include "transform/key_anatomy.h"
#include "transform/plan.h"
#include "transform/preview.h"
#include "transform/range_check.h"

namespace widen {

namespace {

// The digits of the widest value of an integer column's type (5 for a
// smallint, 10 for an int: a width every value fits); 20 when unknown.
int TypeDigits(const SourceColumn& c) {
  const auto range = DeclaredIntegerRange(c);
  return range ? static_cast<int>(std::to_string(range->max).size()) : 20;
}

constexpr LintRule kRules[] = {
    {"E100", Severity::kError, "the mapping does not resolve against the source"},
    {"E101", Severity::kError, "a namespace, table or family name HBase rejects"},
    {"W102", Severity::kWarning, "more column families than HBase handles well"},
    {"W103", Severity::kWarning, "a long column family name (stored in every cell)"},
    {"W104", Severity::kWarning, "a long row key (stored in every cell)"},
    {"I104", Severity::kInfo, "a row key part without a length bound"},
    {"W105", Severity::kWarning, "a monotonically increasing leading key part (write hotspot)"},
    {"W106", Severity::kWarning, "a large table that is not pre-split"},
    {"W107", Severity::kWarning, "a version column with more versions than the family keeps"},
    {"W108", Severity::kWarning, "a TTL shorter than the age of the data"},
    {"W109", Severity::kWarning, "nesting that makes rows too wide"},
    {"E110", Severity::kError, "a key part that can be NULL without an on_null rule"},
    {"W111", Severity::kWarning, "a row key or nested id that may not be unique"},
    {"W112", Severity::kWarning, "an unpadded integer in a text row key (sorts as text)"},
    {"I113", Severity::kInfo, "an unpadded integer in a text nested id (sorts as text)"},
    {"W114", Severity::kWarning, "a version column with values that are no cell timestamp"},
    {"W115", Severity::kWarning, "a key width too narrow for the column's values"},
    {"W116", Severity::kWarning, "a row key part whose bytes do not sort like its values"},
    {"I117", Severity::kInfo, "a nested id part whose bytes do not sort like its values"},
    {"W118", Severity::kWarning, "a nested table without an index on its link (MySQL pages)"},
    {"E120", Severity::kError, "nest link columns that repeat in a view's or query's rows"},
    {"I121", Severity::kInfo, "a large table synced in digest mode that has a watermark column"},
    {"E122", Severity::kError, "an access pattern that no table's row key serves"},
    {"E123", Severity::kError, "a name that breaks the naming policy"},
};

Severity SeverityOf(const std::string& rule) {
  for (const auto& r : kRules) {
    if (rule == r.id) return r.severity;
  }
  return Severity::kWarning;
}

std::string HumanBytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", b) : fmt::format("{:.1f} {}", b, units[u]);
}

bool IsTemporal(ValueType t) {
  return t == ValueType::kTimestamp || t == ValueType::kTimestampTz || t == ValueType::kDate;
}

class Linter {
 public:
  Linter(const Mapping& m, Source* source, const LintOptions& o)
      : m_(m),
        source_(source),
        o_(o),
        policy_(o.policy != nullptr ? *o.policy : m.policy),
        max_families_(o.max_families.value_or(policy_.max_families)),
        max_family_bytes_(o.max_family_name_bytes.value_or(
            static_cast<size_t>(policy_.rule(NameKind::kFamily).max_bytes))) {}

  Result<LintReport> Run() {
    if (source_ != nullptr) {
      auto schema = source_->Introspect();
      if (!schema.ok()) return schema.status();
      schema_ = std::move(*schema);
    } else {
      report_.notes.push_back(
          "no source: only the mapping rules ran (E101, W102, W103, W107, E123); the rules that "
          "need "
          "the source schema or data were skipped");
    }
    for (const auto& t : m_.tables) WIDEN_RETURN_IF_ERROR(LintTable(t));
    if (source_ != nullptr) {
      LintSyncModes();
      LintAccess();
    }
    std::stable_sort(report_.findings.begin(), report_.findings.end(),
                     [](const LintFinding& a, const LintFinding& b) {
                       if (a.loc.line != b.loc.line) return a.loc.line < b.loc.line;
                       return a.rule < b.rule;
                     });
    return std::move(report_);
  }

 private:
  void Add(const std::string& rule, const SourceLocation& loc, const std::string& table,
           std::string message, std::string fix) {
    if (o_.disabled.count(rule) > 0) return;
    // One mistake found through several target tables (a sync entry of a
    // table two of them read) is one finding, at the first.
    for (const LintFinding& f : report_.findings) {
      if (f.rule == rule && f.loc.line == loc.line && f.loc.column == loc.column &&
          f.message == message) {
        return;
      }
    }
    report_.findings.push_back(
        LintFinding{rule, SeverityOf(rule), loc, table, std::move(message), std::move(fix)});
  }
  void Note(std::string n) { report_.notes.push_back(std::move(n)); }

  // I121: a large source table without a sync entry (so synced in digest
  // mode, every row read by every run) that has a column fit to be its
  // watermark: NOT NULL, a timestamp, named like a last-change time (its
  // type alone does not say that writes set it: a creation time is none).
  void LintSyncModes() {
    for (const std::string& name : m_.SourceTables()) {
      if (m_.FindSync(name) != nullptr) continue;
      const SourceTable* t = schema_.FindTable(name);
      if (t == nullptr || t->is_view || t->primary_key.empty()) continue;
      if (t->estimated_rows < 0 || t->estimated_rows <= o_.large_sync_rows) continue;
      const SourceColumn* w = nullptr;
      for (const SourceColumn& c : t->columns) {
        if (c.nullable || (c.type != ValueType::kTimestamp && c.type != ValueType::kTimestampTz)) {
          continue;
        }
        std::string lower = c.name;
        for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        for (const char* word : {"updat", "modif", "chang", "mtime"}) {
          if (lower.find(word) != std::string::npos && w == nullptr) w = &c;
        }
      }
      if (w == nullptr) continue;
      std::string target;
      const SourceLocation loc = FirstRead(name, &target);
      Add("I121", loc, target,
          fmt::format("source table {} (about {} rows) has no sync entry, so widen sync reads "
                      "every row of it on every run (digest mode); its column {} ({}, NOT NULL) "
                      "looks like a last-change time, from which watermark mode would read only "
                      "the rows changed since the last run",
                      name, t->estimated_rows, w->name, w->source_type),
          fmt::format("if every insert and update of {} sets {}, add to the mapping's sync "
                      "section: - {{table: {}, mode: watermark, watermark: {}}} (docs/mapping.md, "
                      "\"Sync\"; plan checks it now, sync still runs digest mode)",
                      name, w->name, name, w->name));
    }
  }

  // Where the mapping first reads source table `name` (a driving table, a
  // join, a nest); *target gets the target table it belongs to.
  SourceLocation FirstRead(const std::string& name, std::string* target) const {
    std::function<const SourceLocation*(const NestSpec&)> in_nest =
        [&](const NestSpec& n) -> const SourceLocation* {
      if (n.table == name) return &n.loc;
      for (const auto& j : n.joins) {
        if (j.table == name) return &j.loc;
      }
      for (const auto& g : n.nests) {
        if (const SourceLocation* l = in_nest(g)) return l;
      }
      return nullptr;
    };
    for (const auto& t : m_.tables) {
      *target = t.name;
      if (t.query.empty() && t.from == name) return t.loc;
      for (const auto& j : t.joins) {
        if (j.table == name) return j.loc;
      }
      for (const auto& n : t.nests) {
        if (const SourceLocation* l = in_nest(n)) return *l;
      }
    }
    return SourceLocation{m_.file};
  }

  // E122: access patterns that no planned table serves.
  void LintAccess() {
    std::vector<const TablePlan*> tables;
    for (const auto& p : plans_) tables.push_back(&p->tables.front());
    for (const AccessProof& proof : ProveAccessPatterns(tables, schema_)) {
      if (proof.kind != AccessKind::kNotServed) continue;
      Add("E122", proof.pattern->loc, proof.declared_on->mapping->name,
          fmt::format("access pattern '{}' is not served by any table's row key: {}; it would "
                      "take a full scan",
                      proof.pattern->name, proof.problem),
          proof.fix);
    }
    for (const auto& t : m_.tables) {
      bool planned = false;
      for (const TablePlan* tp : tables) planned = planned || tp->mapping->name == t.name;
      if (!planned && !t.access.empty()) {
        Note(fmt::format("{}: E122 skipped for its access patterns: the table was not planned",
                         t.name));
      }
    }
  }

  // E123: every name the mapping gives, against the naming policy.
  void LintPolicy(const TableMapping& t) {
    auto check = [&](NameKind kind, const std::string& name, const SourceLocation& loc,
                     bool length = true) {
      const std::string why = NameProblem(policy_, kind, name, length);
      if (why.empty()) return;
      const NameRule& r = policy_.rule(kind);
      const std::string styled = ApplyNameStyle(r.style, name);
      std::string fix;
      if (styled != name && NameProblem(policy_, kind, styled, length).empty()) {
        fix = fmt::format("rename it '{}'", styled);
      } else if (!r.allowed.empty()) {
        fix = fmt::format("use one of the names the policy allows: {}", fmt::join(r.allowed, ", "));
      } else {
        fix = fmt::format("rename it to follow the policy ({})", r.Where());
      }
      Add("E123", loc, t.name, why, fix);
    };
    const size_t colon = t.name.find(':');
    check(NameKind::kNamespace, colon == std::string::npos ? "default" : t.name.substr(0, colon),
          t.name_loc);
    check(NameKind::kTable, colon == std::string::npos ? t.name : t.name.substr(colon + 1),
          t.name_loc);
    for (const auto& f : t.families) check(NameKind::kFamily, f.name, f.loc, false);
    for (const auto& c : t.columns) check(NameKind::kQualifier, c.qualifier, c.to_loc);
    std::vector<const NestSpec*> nests;
    for (const auto& n : t.nests) nests.push_back(&n);
    for (size_t i = 0; i < nests.size(); ++i) {
      const NestSpec* n = nests[i];
      for (const auto& g : n->nests) nests.push_back(&g);
      if (!n->prefix.empty()) check(NameKind::kPrefix, n->prefix, n->prefix_loc);
      if (n->layout == NestLayout::kValue) continue;
      for (const auto& v : n->values) check(NameKind::kAttribute, v.attribute(), v.loc);
    }
  }

  Status LintTable(const TableMapping& t) {
    const bool names_ok = LintNames(t);
    if (policy_.given) LintPolicy(t);
    LintFamilies(t);
    LintVersions(t);
    if (source_ == nullptr) return Status::OK();
    if (!names_ok) {
      Note(fmt::format("{}: the rules that need the plan were skipped (fix E101 first)", t.name));
      return Status::OK();
    }
    // E110 is checked on the mapping; the plan is then made as if each such
    // part said `on_null: reject`, so the other rules still run.
    auto single = std::make_unique<Mapping>(m_);
    single->tables.clear();
    single->tables.push_back(t);
    LintNullableKeys(&single->tables.front());
    auto plan = Plan::Make(*single, schema_, source_);
    if (!plan.ok()) {
      // The planner's message starts with the place it refers to: report it there.
      SourceLocation loc = t.loc;
      std::string message = plan.status().message();
      const std::string prefix = m_.file + ":";
      int line = 0, column = 0, used = 0;
      if (message.rfind(prefix, 0) == 0 &&
          std::sscanf(message.c_str() + prefix.size(), "%d:%d: %n", &line, &column, &used) >= 2 &&
          used > 0) {
        loc.line = line;
        loc.column = column;
        message.erase(0, prefix.size() + static_cast<size_t>(used));
      }
      // The finding names the table already.
      const std::string table_prefix = "table '" + t.name + "': ";
      if (message.rfind(table_prefix, 0) == 0) message.erase(0, table_prefix.size());
      Add("E100", loc, t.name, message,
          "fix the mapping: the message names the source table or column (widen plan and "
          "migrate stop on it)");
      return Status::OK();
    }
    mappings_.push_back(std::move(single));
    plans_.push_back(std::make_unique<Plan>(std::move(*plan)));
    const TablePlan& tp = plans_.back()->tables.front();
    WIDEN_ASSIGN_OR_RETURN(const bool queries_ok, LintQueries(t, tp));
    if (!queries_ok) return Status::OK();
    LintKey(t, tp);
    LintKeyOrder(t, tp);
    LintUniqueness(t, tp);
    WIDEN_RETURN_IF_ERROR(LintVersionDepth(t, tp));
    WIDEN_RETURN_IF_ERROR(LintTtl(t, tp));
    WIDEN_RETURN_IF_ERROR(LintWideRows(t, tp));
    WIDEN_RETURN_IF_ERROR(LintRanges(t, tp));
    WIDEN_RETURN_IF_ERROR(LintRepeatedLinks(t, tp));
    LintLinkIndexes(t, tp);
    return Status::OK();
  }

  // W118: MySQL reads a nested table in pages ordered by its link columns
  // (then its primary key); an index that starts with them serves each
  // page, and without one every page sorts the rest of the table.
  void LintLinkIndexes(const TableMapping& t, const TablePlan& tp) {
    auto ident = [](const std::string& name) {
      const bool plain = !name.empty() && std::isdigit(static_cast<unsigned char>(name[0])) == 0 &&
                         std::all_of(name.begin(), name.end(), [](unsigned char c) {
                           return std::isalnum(c) != 0 || c == '_' || c == '$';
                         });
      if (plain) return name;
      std::string q = "`";
      for (char c : name) q += c == '`' ? std::string("``") : std::string(1, c);
      return q + "`";
    };
    for (const NestPlan& n : tp.nests) {
      const SourceTable* child = schema_.FindTable(n.spec->table);
      if (child == nullptr || !child->indexes_known) continue;
      std::vector<std::string> link;
      for (const auto& on : n.spec->on) link.push_back(on.second);
      const bool served = std::any_of(
          child->indexes.begin(), child->indexes.end(), [&](const std::vector<std::string>& ix) {
            return ix.size() >= link.size() && std::equal(link.begin(), link.end(), ix.begin());
          });
      if (served) continue;
      std::vector<std::string> quoted;
      for (const auto& c : link) quoted.push_back(ident(c));
      Add("W118", n.spec->loc, t.name,
          fmt::format("the nest of {0} links on {0}.({1}), which no index of {0} starts with: "
                      "its rows are read in pages ordered by the link, and without such an index "
                      "every page reads and sorts all the rows after it (the time grows with the "
                      "square of the table's rows; EXPLAIN of the nest's query in widen plan "
                      "shows 'Using filesort')",
                      child->name, fmt::join(link, ", ")),
          fmt::format("CREATE INDEX {} ON {} ({}); a link compared in another collation than "
                      "the column's own, or an ENUM or SET link, cannot use an index: raise "
                      "--fetch-rows instead",
                      ident(child->name + "_" + fmt::format("{}", fmt::join(link, "_"))),
                      ident(child->name), fmt::join(quoted, ", ")));
    }
  }

  // E120: a view or query that nested rows merge under has no key to say
  // that its link columns name one row; count its largest group.
  Status LintRepeatedLinks(const TableMapping& t, const TablePlan& tp) {
    if (tp.nests.empty()) return Status::OK();
    // The rows nested rows merge under, and the links (indexes into their
    // scan's merge) whose keys must name one of them.
    struct Parent {
      const ScanSpec* scan;
      std::vector<size_t> links;
      std::vector<ColumnExpr> link;  // the links' columns, for the message
      bool keyless;
      SourceLocation loc;
    };
    std::vector<Parent> parents;
    auto columns_of = [](const ScanSpec& scan, const std::vector<size_t>& links) {
      std::vector<ColumnExpr> out;
      for (size_t l : links) {
        for (const auto& on : scan.merge[l].on) out.push_back(on.first);
      }
      return out;
    };
    {
      const SourceTable* st = tp.scan.table.empty() ? nullptr : schema_.FindTable(tp.scan.table);
      parents.push_back(Parent{&tp.scan,
                               {0},
                               columns_of(tp.scan, {0}),
                               st == nullptr || st->is_view,
                               tp.nests.front().spec->loc});
    }
    for (const auto& n : tp.nests) {
      if (n.children.empty() || n.scan.merge.size() < 2) continue;
      const SourceTable* st = schema_.FindTable(n.spec->table);
      // A child is told apart by its link to its parent and its link to
      // its own children (merge[0] and merge[1]).
      parents.push_back(Parent{&n.scan,
                               {0, 1},
                               columns_of(n.scan, {0, 1}),
                               st == nullptr || st->is_view,
                               n.children.front().spec->loc});
    }
    for (const Parent& p : parents) {
      if (!p.keyless) continue;
      ScanSpec scan = *p.scan;
      scan.range.reset();
      for (const auto& c : p.link) scan.not_null.push_back(c);
      auto groups = source_->stats().LargestLinkGroups(scan, p.links, 1);
      if (!groups.ok()) {
        if (groups.status().code() != StatusCode::kInvalidArgument) return groups.status();
        Note(fmt::format("{}: E120 skipped: {}", t.name, groups.status().message()));
        continue;
      }
      if (groups->empty() || groups->front().rows < 2) continue;
      std::vector<std::string> values;
      for (size_t i = 0; i < p.link.size() && i < groups->front().key.size(); ++i) {
        values.push_back(p.link[i].column + "=" + groups->front().key[i].DebugString());
      }
      const std::string from = p.scan->table.empty() ? "query " + p.scan->alias : p.scan->table;
      Add("E120", p.loc, t.name,
          fmt::format("{} rows of {} have the same nest link value ({}); a view or query "
                      "declares no key, so the run finds this only when it gets there and "
                      "stops: nested rows can be merged under one row only",
                      groups->front().rows, from, fmt::join(values, ", ")),
          fmt::format("nest on columns that identify one row of {} (such as the primary key of "
                      "the table it reads), or make it give one row per link value",
                      from));
    }
    return Status::OK();
  }

  // E100 too: a query of the plan that the source refuses without reading
  // rows (the driving rows, each nest's): a `where` that does not run, nest
  // columns the database cannot compare. False when one is refused (the
  // rules that read through the plan are then skipped).
  Result<bool> LintQueries(const TableMapping& t, const TablePlan& tp) {
    std::vector<std::pair<const ScanSpec*, SourceLocation>> scans = {{&tp.scan, t.loc}};
    std::vector<const NestPlan*> nests;
    for (const auto& n : tp.nests) nests.push_back(&n);
    for (size_t i = 0; i < nests.size(); ++i) {
      scans.emplace_back(&nests[i]->scan, nests[i]->spec->loc);
      for (const auto& g : nests[i]->children) nests.push_back(&g);
    }
    for (const auto& [scan, loc] : scans) {
      Status s = source_->CheckScan(*scan);
      if (s.ok()) continue;
      if (s.code() != StatusCode::kInvalidArgument && s.code() != StatusCode::kNotFound) return s;
      Add("E100", loc, t.name, s.message(),
          "fix the mapping or the source: the message says what the source refused (widen plan "
          "and migrate stop on it)");
      return false;
    }
    return true;
  }

  // E101: HBase's naming rules (TableDescriptor::Validate) and its reserved namespace.
  bool LintNames(const TableMapping& t) {
    bool ok = true;
    TableDescriptor d;
    SplitTableName(t.name, &d.name_space, &d.table);
    d.families.push_back(FamilyDescriptor{});
    d.families.back().name = "d";
    if (Status s = d.Validate(); !s.ok()) {
      Add("E101", t.loc, t.name, s.message(),
          "use [A-Za-z0-9_] for the namespace and [A-Za-z0-9_.-] for the table name");
      ok = false;
    } else if (d.name_space == "hbase") {
      Add("E101", t.loc, t.name, "the 'hbase' namespace is reserved for HBase's system tables",
          "choose another namespace");
      ok = false;
    }
    for (const auto& f : t.families) {
      TableDescriptor fd;
      fd.table = "t";
      fd.families.push_back(FamilyDescriptor{});
      fd.families.back().name = f.name;
      if (Status s = fd.Validate(); !s.ok()) {
        Add("E101", f.loc, t.name, s.message().substr(s.message().find(": ") + 2),
            "use printable characters without ':', '\\' or '/'; best one short letter");
        ok = false;
      }
    }
    return ok;
  }

  // W102, W103.
  void LintFamilies(const TableMapping& t) {
    if (static_cast<int>(t.families.size()) > max_families_) {
      Add("W102", t.families[static_cast<size_t>(max_families_)].loc, t.name,
          fmt::format("{} column families; HBase does not do well with more than two or three "
                      "(flushes and compactions are per region, so a busy family makes the "
                      "others flush small files)",
                      t.families.size()),
          "merge families that are read together; keep a separate family only for data with "
          "different access or retention (versions, TTL)");
    }
    for (const auto& f : t.families) {
      if (max_family_bytes_ > 0 && f.name.size() > max_family_bytes_) {
        Add("W103", f.loc, t.name,
            fmt::format("column family name '{}' has {} bytes; HBase stores it in every cell",
                        f.name, f.name.size()),
            max_family_bytes_ == 2
                ? fmt::format("use a name of one or two characters (e.g. '{}')",
                              f.name.substr(0, 1))
                : fmt::format("use a name of at most {} byte(s) (e.g. '{}')", max_family_bytes_,
                              f.name.substr(0, max_family_bytes_)));
      }
    }
  }

  const FamilySpec* Family(const TableMapping& t, const std::string& name) {
    for (const auto& f : t.families) {
      if (f.name == name) return &f;
    }
    return nullptr;
  }

  // Families whose cells take their timestamp from a version column, with the
  // column and where it is set (W107, W108).
  struct Versioned {
    const FamilySpec* family;
    std::string column;
    SourceLocation loc;
  };
  std::vector<Versioned> VersionedFamilies(const TableMapping& t) {
    std::vector<Versioned> out;
    auto add = [&](const std::string& fam, const std::string& col, const SourceLocation& loc) {
      const FamilySpec* f = Family(t, fam);
      if (f == nullptr) return;
      for (const auto& v : out) {
        if (v.family == f && v.column == col) return;
      }
      out.push_back(Versioned{f, col, loc});
    };
    // "table.column" of a version column of `t`.
    auto qualified = [&](const ColumnRef& r) {
      if (!r.alias.empty() && r.alias != t.from) return r.ToString();
      return t.from + "." + r.column;
    };
    for (const auto& c : t.columns) {
      if (!c.version.column.empty()) {
        add(c.family, qualified(c.version), c.loc);
      } else if (!t.version.column.empty()) {
        add(c.family, qualified(t.version), t.loc);
      }
    }
    std::vector<std::pair<const NestSpec*, bool>> nests;
    for (const auto& n : t.nests) nests.emplace_back(&n, false);
    for (size_t i = 0; i < nests.size(); ++i) {
      const NestSpec* n = nests[i].first;
      for (const auto& g : n->nests) nests.emplace_back(&g, false);
      if (!n->version.column.empty()) {
        add(n->family,
            n->version.alias.empty() ? n->table + "." + n->version.column : n->version.ToString(),
            n->loc);
      } else if (!t.version.column.empty()) {
        add(n->family, qualified(t.version), t.loc);
      }
    }
    return out;
  }

  // W107.
  void LintVersions(const TableMapping& t) {
    for (const auto& v : VersionedFamilies(t)) {
      if (v.family->versions > 1) continue;
      Add("W107", v.loc, t.name,
          fmt::format("cells of family '{}' take their timestamp from version column {}, but the "
                      "family keeps VERSIONS => 1: of several versions of a cell only the newest "
                      "survives (history is lost)",
                      v.family->name, v.column),
          fmt::format("set versions: N on family '{}' ({}) to keep N versions, or drop "
                      "'version:' if only the newest value matters",
                      v.family->name, v.family->loc.ToString()));
    }
  }

  // The source table an alias of `t` names (driving table or a join).
  const SourceTable* AliasTable(const TableMapping& t, const std::string& alias) {
    if (alias.empty() || alias == t.from) {
      return t.query.empty() ? schema_.FindTable(t.from) : nullptr;
    }
    for (const auto& j : t.joins) {
      if (j.alias == alias) return schema_.FindTable(j.table);
    }
    return nullptr;
  }

  // The source table an alias of nest `n` names (the child or a nest join).
  const SourceTable* NestAliasTable(const NestSpec& n, const std::string& alias) {
    if (alias.empty() || alias == n.table) return schema_.FindTable(n.table);
    for (const auto& j : n.joins) {
      if (j.alias == alias) return schema_.FindTable(j.table);
    }
    return nullptr;
  }

  // E110 on the row key and nested ids of *t; marks each reported part
  // `on_null: reject` so that the plan can be made.
  void LintNullableKeys(TableMapping* t) {
    for (auto& kp : t->key.parts) {
      if (kp.is_literal || kp.on_null_given) continue;
      if (!t->query.empty() && (kp.column.alias.empty() || kp.column.alias == t->from)) {
        Add("E110", kp.loc, t->name,
            fmt::format("row key part '{}' comes from a free-form query, whose columns can be "
                        "NULL; the row's key cannot be built then",
                        kp.column.ToString()),
            "say what a NULL does: on_null: reject (the row is rejected) or on_null: marker "
            "(binary keys: NULL sorts first)");
        kp.on_null = KeyNullRule::kReject;
        kp.on_null_given = true;
        continue;
      }
      const SourceTable* st = AliasTable(*t, kp.column.alias);
      const SourceColumn* c = st == nullptr ? nullptr : st->FindColumn(kp.column.column);
      if (c == nullptr) continue;  // the plan reports it
      const bool joined = !kp.column.alias.empty() && kp.column.alias != t->from;
      if (!c->nullable && !joined) continue;
      Add("E110", kp.loc, t->name,
          fmt::format("row key part '{}' can be NULL ({}.{} is {}); the row's key cannot be "
                      "built then",
                      kp.column.ToString(), st->name, c->name,
                      joined ? "from a LEFT JOIN" : "nullable"),
          "say what a NULL does: on_null: reject (the row is rejected) or on_null: marker "
          "(binary keys: NULL sorts first); or make the column NOT NULL");
      kp.on_null = KeyNullRule::kReject;
      kp.on_null_given = true;
    }
    std::vector<NestSpec*> nests;
    for (auto& n : t->nests) nests.push_back(&n);
    for (size_t i = 0; i < nests.size(); ++i) {
      NestSpec* n = nests[i];
      for (auto& g : n->nests) nests.push_back(&g);
      for (auto& kp : n->id) {
        if (kp.is_literal || kp.on_null_given) continue;
        const bool joined = !kp.column.alias.empty() && kp.column.alias != n->table;
        const SourceTable* st = NestAliasTable(*n, kp.column.alias);
        const SourceColumn* c = st == nullptr ? nullptr : st->FindColumn(kp.column.column);
        if (c == nullptr || (!c->nullable && !joined)) continue;
        Add("E110", kp.loc, t->name,
            fmt::format("nested id part '{}' can be NULL ({}.{} is {}); the child's "
                        "qualifier cannot be built then",
                        kp.column.ToString(), st->name, c->name,
                        joined ? "from a LEFT JOIN" : "nullable"),
            "add on_null: reject (or marker, binary form) to the id part, or make the column "
            "NOT NULL");
        kp.on_null = KeyNullRule::kReject;
        kp.on_null_given = true;
      }
    }
  }

  // W104, I104, W105, W106, W112, I113.
  void LintKey(const TableMapping& t, const TablePlan& tp) {
    const KeyAnatomy a = DescribeRowKey(tp, schema_);
    if (a.max_bytes > o_.max_key_bytes) {
      Add("W104", t.key.loc, t.name,
          fmt::format("row keys can reach {} bytes ({}); the row key is stored in every cell of "
                      "the row",
                      a.max_bytes, a.compact),
          fmt::format("keep keys under {} bytes: shorten or drop parts, give strings a width, "
                      "use binary integers (form: binary) or a hash of long parts",
                      o_.max_key_bytes));
    } else if (a.max_bytes < 0) {
      std::vector<std::string> open;
      for (const auto& p : a.pieces) {
        if (p.max_bytes < 0)
          open.push_back(p.name + (p.source_type.empty() ? "" : " (" + p.source_type + ")"));
      }
      Add("I104", t.key.loc, t.name,
          fmt::format("row key part(s) {} have no declared length: the key size depends on the "
                      "data",
                      fmt::join(open, ", ")),
          "run widen plan to see the key sizes of real rows (or --full for all of them)");
    }

    const bool spread = tp.key.salt().size > 0 || tp.key.hash_prefix().size > 0;
    const SourceTable* driving = tp.scan.table.empty() ? nullptr : schema_.FindTable(tp.scan.table);
    // W105: the first column part, unless a salt or hash prefix spreads writes.
    for (size_t i = 0; i < tp.key.parts().size() && !spread; ++i) {
      const KeyPartPlan& p = tp.key.parts()[i];
      if (p.is_literal) continue;
      std::string table;
      const SourceColumn* c = KeyPartColumn(tp, p, schema_, &table);
      if (c == nullptr) break;
      const SourceTable* st = schema_.FindTable(table);
      std::string why;
      if (IsTemporal(c->type) || p.reverse) {
        why = fmt::format("{}.{} is a {}{}", table, c->name, c->source_type,
                          p.reverse ? " (reversed: newest first, so new rows go to the start)"
                                    : ": new rows carry the newest times");
      } else if (IsIntegerType(c->type) && st != nullptr && st->primary_key.size() == 1 &&
                 st->primary_key[0] == c->name) {
        why = fmt::format(
            "{}.{} is the integer primary key of {}, usually filled from a "
            "sequence or auto-increment",
            table, c->name, table);
      }
      if (!why.empty()) {
        Add("W105", t.key.parts[i].loc, t.name,
            fmt::format("the row key starts with '{}', which increases monotonically ({}): "
                        "new rows all land at one end of the key range, in one region (a "
                        "write hotspot)",
                        p.name, why),
            "add a salt (key: {salt: {buckets: N}}) or a hash prefix, or lead with a "
            "well-spread column; a salted key is read back with N scans, one per bucket");
      }
      break;
    }
    // W106: a large table without pre-split points.
    if (driving != nullptr && driving->estimated_rows < 0 && !spread) {
      Note(driving->is_view
               ? fmt::format("{}: W106 skipped: {} is a view, which has no row estimate", t.name,
                             driving->name)
               : fmt::format("{}: W106 skipped: source table {} has no row estimate yet (run "
                             "ANALYZE on it)",
                             t.name, driving->name));
    }
    if (driving != nullptr && driving->estimated_rows > o_.large_table_rows && !spread) {
      Add("W106", t.loc, t.name,
          fmt::format("source table {} has about {} rows; without pre-split points the target "
                      "table starts as one region on one server, which takes every write until "
                      "it splits",
                      driving->name, driving->estimated_rows),
          "create it pre-split: widen ddl --regions N (split points from key quantiles of a "
          "sample), or add a salt (its buckets become the split points)");
    }
    // W112: unpadded integers in a text row key.
    if (tp.key.form() == KeyForm::kText) {
      for (size_t i = 0; i < tp.key.parts().size(); ++i) {
        const KeyPartPlan& p = tp.key.parts()[i];
        const SourceColumn* c = KeyPartColumn(tp, p, schema_);
        if (c == nullptr || !IsIntegerType(c->type) || p.width > 0 || p.reverse) continue;
        Add("W112", t.key.parts[i].loc, t.name,
            fmt::format("integer key part '{}' has no width: in a text key it sorts as text "
                        "(10 < 9), so range scans by it return the wrong rows",
                        p.name),
            fmt::format("give it a width (e.g. {{column: {}, width: {}}}) or use form: binary",
                        p.name, TypeDigits(*c)));
      }
    }
    // I113: unpadded integers in text nested ids.
    std::vector<const NestPlan*> nests;
    for (const auto& n : tp.nests) nests.push_back(&n);
    for (size_t i = 0; i < nests.size(); ++i) {
      const NestPlan* n = nests[i];
      for (const auto& g : n->children) nests.push_back(&g);
      if (n->qualifier.form() != KeyForm::kText) continue;
      for (size_t j = 0; j < n->qualifier.parts().size(); ++j) {
        const KeyPartPlan& p = n->qualifier.parts()[j];
        const SourceTable* st =
            p.is_literal ? nullptr : NestAliasTable(*n->spec, n->spec->id[j].column.alias);
        const SourceColumn* c =
            st == nullptr ? nullptr : st->FindColumn(n->spec->id[j].column.column);
        if (c == nullptr || !IsIntegerType(c->type) || p.width > 0 || p.reverse) continue;
        Add("I113", n->spec->id[j].loc, t.name,
            fmt::format("nested id '{}' has no width: qualifiers sort as text ({}1, {}10, {}2), "
                        "so column ranges over them are not in id order",
                        p.name, n->prefix, n->prefix, n->prefix),
            fmt::format("give it a width (e.g. {{column: {}, width: {}}}) if qualifiers are read "
                        "in ranges",
                        p.name, TypeDigits(*c)));
      }
    }
  }

  // Why the bytes of key part `p` over column `c` do not sort like its
  // values ("" when they do): text-form numbers, instants and times, types
  // kept as text, and enum labels in either form. Integers are W112/W115's.
  // W116 on row key parts, I117 on nested id parts.
  void LintKeyOrder(const TableMapping& t, const TablePlan& tp) {
    // The fix for a part of `form` over column `c`.
    auto fix = [](KeyForm form, const SourceColumn& c) -> std::string {
      if (c.is_enum) {
        return "key by the enum's position instead of its label (a generated column), or "
               "ignore this if the part is only matched exactly";
      }
      if (form == KeyForm::kBinary) {
        return "key by a column whose bytes sort like its values, or ignore this if the part is "
               "only matched exactly";
      }
      return "use form: binary (it orders numbers, instants and times), or key by a column "
             "whose bytes sort like its values; ignore this if the part is only matched exactly";
    };
    for (size_t i = 0; i < tp.key.parts().size() && i < t.key.parts.size(); ++i) {
      const KeyPartPlan& p = tp.key.parts()[i];
      const SourceColumn* c = p.is_literal ? nullptr : KeyPartColumn(tp, p, schema_);
      if (c == nullptr) continue;
      const bool text = tp.key.form() == KeyForm::kText;
      const std::string why = KeyOrderProblem(p, *c, text);
      if (!why.empty()) {
        Add("W116", t.key.parts[i].loc, t.name,
            fmt::format("row key part '{}' does not sort like its values ({}): range scans by it "
                        "return the wrong rows",
                        p.name, why),
            fix(tp.key.form(), *c));
        continue;
      }
      // Integers without a width are W112's.
      if (!text || IsIntegerType(c->type) || i + 1 >= tp.key.parts().size()) continue;
      const std::string width = TextWidthProblem(p, tp.key.separator());
      if (width.empty()) continue;
      Add("W116", t.key.parts[i].loc, t.name,
          fmt::format("row key part '{}' does not keep the key in its order: {}; a scan in key "
                      "order does not return the rows in '{}' order",
                      p.name, width, p.name),
          "use form: binary (its strings are escaped and terminated, so a shorter value sorts "
          "first), or move the part to the end of the key; ignore this if the part is only "
          "matched exactly");
    }
    std::vector<const NestPlan*> nests;
    for (const auto& n : tp.nests) nests.push_back(&n);
    for (size_t i = 0; i < nests.size(); ++i) {
      const NestPlan* n = nests[i];
      for (const auto& g : n->children) nests.push_back(&g);
      const SourceTable* st = schema_.FindTable(n->spec->table);
      for (size_t j = 0; j < n->qualifier.parts().size() && j < n->spec->id.size(); ++j) {
        const KeyPartPlan& p = n->qualifier.parts()[j];
        const SourceColumn* c = st == nullptr || p.is_literal ? nullptr : st->FindColumn(p.name);
        if (c == nullptr) continue;
        const bool text = n->qualifier.form() == KeyForm::kText;
        std::string why = KeyOrderProblem(p, *c, text);
        if (why.empty() && text && !IsIntegerType(c->type) && j + 1 < n->qualifier.parts().size()) {
          why = TextWidthProblem(p, n->qualifier.separator());
        }
        if (why.empty()) continue;
        Add("I117", n->spec->id[j].loc, t.name,
            fmt::format("nested id '{}' (prefix '{}') does not sort like its values ({}): "
                        "column ranges over the qualifiers are not in value order",
                        p.name, n->prefix, why),
            fix(n->qualifier.form(), *c));
      }
    }
  }

  // W114, W115: the ranges of version columns and width-padded key parts.
  Status LintRanges(const TableMapping& t, const TablePlan& tp) {
    WIDEN_ASSIGN_OR_RETURN(RangeReport r, CheckValueRanges(tp, source_));
    for (auto& n : r.notes) Note(std::move(n));
    for (auto& f : r.findings) {
      Add(f.kind == RangeFinding::Kind::kKeyWidth ? "W115" : "W114", f.loc, t.name,
          std::move(f.message), std::move(f.fix));
    }
    return Status::OK();
  }

  // True when `cols` are the primary key or a unique key of `t` (all of its columns).
  static bool IsKey(const SourceTable& t, const std::vector<std::string>& cols) {
    auto same = [&](const std::vector<std::string>& key) {
      return !key.empty() && key.size() == cols.size() &&
             std::is_permutation(key.begin(), key.end(), cols.begin());
    };
    if (same(t.primary_key)) return true;
    return std::any_of(t.unique_keys.begin(), t.unique_keys.end(), same);
  }

  // W111: the row key (or a nested id) does not contain the source's primary key.
  void LintUniqueness(const TableMapping& t, const TablePlan& tp) {
    const SourceTable* driving = tp.scan.table.empty() ? nullptr : schema_.FindTable(tp.scan.table);
    if (driving != nullptr && t.version.column.empty()) {
      if (driving->primary_key.empty()) {
        Note(fmt::format("{}: W111 skipped: source table {} has no primary key", t.name,
                         driving->name));
      } else {
        std::vector<std::string> missing;
        for (const auto& pk : driving->primary_key) {
          bool found = false;
          for (const auto& kp : t.key.parts) {
            found = found || (!kp.is_literal && kp.column.column == pk &&
                              (kp.column.alias.empty() || kp.column.alias == t.from));
          }
          if (!found) missing.push_back(pk);
        }
        if (!missing.empty()) {
          Add("W111", t.key.loc, t.name,
              fmt::format("the row key does not contain {} of the primary key of {}: two source "
                          "rows can get the same row key, and one row's cells then replace the "
                          "other's",
                          fmt::join(missing, ", "), driving->name),
              "add the missing primary key column(s) to the key, or check with widen plan "
              "--full that no two rows collide");
        }
      }
    }
    std::vector<const NestPlan*> nests;
    for (const auto& n : tp.nests) nests.push_back(&n);
    for (size_t i = 0; i < nests.size(); ++i) {
      const NestPlan* n = nests[i];
      for (const auto& g : n->children) nests.push_back(&g);
      const SourceTable* child = schema_.FindTable(n->spec->table);
      if (child == nullptr || !n->spec->version.column.empty()) continue;
      // The child columns the id stands for: its own, and the `on` columns
      // of a join whose key the id part is (category.name, a unique key of
      // category, stands for the child's category_id).
      std::vector<std::string> named;
      for (const auto& kp : n->spec->id) {
        if (kp.is_literal) continue;
        if (kp.column.alias.empty() || kp.column.alias == child->name) {
          named.push_back(kp.column.column);
          continue;
        }
        for (const auto& j : n->spec->joins) {
          const SourceTable* jt = schema_.FindTable(j.table);
          if (j.alias != kp.column.alias || jt == nullptr || !IsKey(*jt, {kp.column.column})) {
            continue;
          }
          for (const auto& [left, right] : j.on) {
            if (left.alias.empty() || left.alias == child->name) named.push_back(left.column);
          }
        }
      }
      // The id is unique among one parent's children when the link
      // columns and the id parts cover the primary key or a unique key.
      auto covered = [&](const std::vector<std::string>& key, std::vector<std::string>* missing) {
        for (const auto& k : key) {
          bool found = std::find(named.begin(), named.end(), k) != named.end();
          for (const auto& on : n->spec->on) found = found || on.second == k;
          if (!found) missing->push_back(k);
        }
        return !key.empty() && missing->empty();
      };
      std::vector<std::string> missing;
      bool unique = covered(child->primary_key, &missing);
      for (const auto& u : child->unique_keys) {
        std::vector<std::string> ignored;
        unique = unique || covered(u, &ignored);
      }
      if (unique) continue;
      if (child->primary_key.empty() && child->unique_keys.empty()) {
        Note(fmt::format("{}: W111 skipped for the nest of {}: it has no primary or unique key",
                         t.name, child->name));
        continue;
      }
      Add("W111", n->spec->loc, t.name,
          fmt::format("the nested id of {} (prefix '{}') does not contain {} of its primary key "
                      "(nor a whole unique key): two children of one parent can get the same "
                      "qualifier, and one replaces the other (migrate then exits with code 8)",
                      child->name, n->prefix, fmt::join(missing, ", ")),
          "add the missing primary key column(s) to 'id'");
    }
  }

  // W107 from the data: a family that keeps N > 1 versions, and a version
  // column that gives one cell more versions than that (the most versions
  // of one cell, by one GROUP BY on the server).
  Status LintVersionDepth(const TableMapping& t, const TablePlan& tp) {
    struct Check {
      const ScanSpec* scan;
      std::vector<ColumnExpr> cell;  // the columns that name one cell
      std::string family;
      std::string what;
      SourceLocation loc;
    };
    std::vector<Check> checks;
    for (const NestPlan& n : tp.nests) {
      if (n.spec->version.column.empty()) continue;
      Check c{&n.scan, {}, n.family, fmt::format("nested rows of {}", n.spec->table), n.spec->loc};
      // The child's link to its parent (merge[0], the child's side), then the id.
      for (const auto& on : n.scan.merge.front().on) c.cell.push_back(on.first);
      bool ok = true;
      for (const auto& kp : n.qualifier.parts()) {
        if (kp.is_literal) continue;
        if (kp.index >= n.scan.columns.size()) ok = false;
        if (ok) c.cell.push_back(n.scan.columns[kp.index]);
      }
      if (ok) checks.push_back(std::move(c));
    }
    if (tp.version_index >= 0 && !tp.scan.table.empty()) {
      // Driving rows that share a row key give one cell several versions.
      for (const FamilySpec& f : t.families) {
        Check c{&tp.scan, {}, f.name, fmt::format("the rows of {}", tp.scan.table), t.loc};
        bool ok = true;
        for (const auto& kp : tp.key.parts()) {
          if (kp.is_literal) continue;
          const ColumnExpr& e = tp.scan.columns[kp.index];
          if (e.alias != tp.scan.alias) ok = false;
          c.cell.push_back(e);
        }
        if (ok) checks.push_back(std::move(c));
      }
    }
    for (const Check& c : checks) {
      const FamilySpec* f = Family(t, c.family);
      if (f == nullptr || f->versions <= 1) continue;  // versions 1: W107 above
      auto groups = source_->stats().LargestGroups(*c.scan, c.cell, 1);
      if (!groups.ok()) {
        if (groups.status().code() != StatusCode::kInvalidArgument) return groups.status();
        Note(fmt::format("{}: W107 skipped for {}: {}", t.name, c.what, groups.status().message()));
        continue;
      }
      if (groups->empty() || groups->front().rows <= f->versions) continue;
      const GroupCount& g = groups->front();
      std::vector<std::string> key;
      for (size_t i = 0; i < g.key.size() && i < c.cell.size(); ++i) {
        key.push_back(c.cell[i].column + "=" + g.key[i].DebugString());
      }
      Add("W107", c.loc, t.name,
          fmt::format("{} give one cell up to {} versions ({}), but family '{}' keeps VERSIONS "
                      "=> {}: the older ones are stored but never read (migrate and plan count "
                      "them)",
                      c.what, g.rows, fmt::join(key, ", "), f->name, f->versions),
          fmt::format("set versions: {} (or more) on family '{}' ({}) to keep the whole history",
                      g.rows, f->name, f->loc.ToString()));
    }
    return Status::OK();
  }

  // W108: a version column's oldest value is older than the family's TTL.
  Status LintTtl(const TableMapping& t, const TablePlan& tp) {
    struct VersionSource {
      const FamilySpec* family;
      const ScanSpec* scan;
      int index;
      SourceLocation loc;
    };
    std::vector<VersionSource> sources;
    auto add = [&](const std::string& fam, const ScanSpec* scan, int index,
                   const SourceLocation& loc) {
      const FamilySpec* f = Family(t, fam);
      if (f == nullptr || f->ttl_seconds <= 0 || index < 0) return;
      for (const auto& s : sources) {
        if (s.family == f && s.scan == scan && s.index == index) return;
      }
      sources.push_back(VersionSource{f, scan, index, loc});
    };
    for (size_t i = 0; i < tp.cells.size() && i < t.columns.size(); ++i) {
      const CellPlan& c = tp.cells[i];
      if (c.version_index >= 0) {
        add(c.family, &tp.scan, c.version_index, t.columns[i].loc);
      } else {
        add(c.family, &tp.scan, tp.version_index, t.loc);
      }
    }
    std::vector<const NestPlan*> nests;
    for (const auto& n : tp.nests) nests.push_back(&n);
    for (size_t i = 0; i < nests.size(); ++i) {
      const NestPlan* n = nests[i];
      for (const auto& g : n->children) nests.push_back(&g);
      if (n->version_index >= 0) {
        add(n->family, &n->scan, n->version_index, n->spec->loc);
      } else {
        add(n->family, &tp.scan, tp.version_index, t.loc);
      }
    }
    for (const auto& v : sources) {
      const ColumnExpr& col = v.scan->columns[v.index];
      const std::string column = col.alias + "." + col.column;
      auto summary = source_->stats().SummarizeColumn(*v.scan, col);
      if (!summary.ok()) {
        if (summary.status().code() != StatusCode::kInvalidArgument) return summary.status();
        Note(fmt::format("{}: W108 skipped for family '{}': {}", t.name, v.family->name,
                         summary.status().message()));
        continue;
      }
      int64_t oldest_ms;
      if (!EpochMs(summary->min, &oldest_ms)) continue;
      // Cells older than the cutoff have expired (compared so that no age
      // overflows: an integer version may be INT64_MIN ms).
      const int64_t cutoff_ms =
          o_.now_ms -
          std::chrono::milliseconds(std::chrono::seconds(v.family->ttl_seconds)).count();
      if (oldest_ms >= cutoff_ms) continue;
      int64_t newest_ms = oldest_ms;
      EpochMs(summary->max, &newest_ms);
      const bool all = newest_ms < cutoff_ms;
      Add("W108", v.loc, t.name,
          fmt::format("family '{}' has TTL {} s ({:.1f} days) but version column {} goes back to "
                      "{}{}: cells older than the TTL expire as soon as they are written (reads "
                      "skip them{}; compactions delete them)",
                      v.family->name, v.family->ttl_seconds,
                      std::chrono::duration<double, std::chrono::days::period>(
                          std::chrono::seconds(v.family->ttl_seconds))
                          .count(),
                      column, MsText(oldest_ms), all ? " (every value is older than the TTL)" : "",
                      v.family->min_versions > 0
                          ? fmt::format(" except the {} newest version(s)", v.family->min_versions)
                          : ""),
          fmt::format("raise the TTL of family '{}' ({}) above the data's age, set min_versions to "
                      "keep the newest versions, or leave old rows out with 'where'",
                      v.family->name, v.family->loc.ToString()));
    }
    return Status::OK();
  }

  // W109: the widest row the nests can make, from the most children per parent.
  Status LintWideRows(const TableMapping& t, const TablePlan& tp) {
    if (tp.nests.empty()) return Status::OK();
    struct Level {
      const NestPlan* nest;
      size_t group_columns;  // leading columns of scan.merge[0] that name the top-level parent
    };
    std::vector<Level> levels;
    for (const auto& n : tp.nests) {
      levels.push_back(Level{&n, n.spec->on.size()});
      for (const auto& g : n.children) levels.push_back(Level{&g, n.spec->on.size()});
    }
    // The size of a nested cell, from a small sample of the table.
    PreviewOptions po;
    po.sample_rows = o_.sample_rows;
    po.show_rows = 0;
    po.widest_rows = 0;
    auto sample = PreviewTable(tp, source_, po);
    if (!sample.ok()) {
      if (sample.status().code() != StatusCode::kInvalidArgument) return sample.status();
      Note(fmt::format("{}: W109 skipped: {}", t.name, sample.status().message()));
      return Status::OK();
    }
    auto cell_bytes = [&](const std::string& family) {
      uint64_t cells = 0, bytes = 0;
      for (const auto& f : sample->families) {
        cells += f.cells;
        bytes += f.bytes;
        if (f.name == family && f.cells > 0) return static_cast<double>(f.bytes) / f.cells;
      }
      return cells == 0 ? 64.0 : static_cast<double>(bytes) / cells;
    };
    double cells = static_cast<double>(tp.cells.size());
    double bytes = 0;
    for (const auto& c : tp.cells) bytes += cell_bytes(c.family);
    std::vector<std::string> parts;
    for (const Level& l : levels) {
      // The children of one parent, as the database matches them: grouped
      // by the link columns in their own collation (not bytewise).
      std::vector<ColumnExpr> group;
      for (size_t i = 0; i < l.group_columns; ++i) {
        group.push_back(l.nest->scan.merge.front().on[i].first);
        group.back().is_text = false;
      }
      auto groups = source_->stats().LargestGroups(l.nest->scan, group, 1);
      if (!groups.ok()) {
        if (groups.status().code() != StatusCode::kInvalidArgument) return groups.status();
        Note(fmt::format("{}: W109 skipped: {}", t.name, groups.status().message()));
        return Status::OK();
      }
      if (groups->empty()) continue;
      const GroupCount& g = groups->front();
      const double per_child = l.nest->layout == NestLayout::kCells
                                   ? static_cast<double>(l.nest->value_columns.size())
                                   : 1.0;
      cells += static_cast<double>(g.rows) * per_child;
      bytes += static_cast<double>(g.rows) * per_child * cell_bytes(l.nest->family);
      std::vector<std::string> key;
      const auto& top = tp.nests.front().spec->on;
      for (size_t i = 0; i < g.key.size() && i < top.size(); ++i) {
        key.push_back(top[i].first + "=" + g.key[i].DebugString());
      }
      parts.push_back(fmt::format("{} {} ({}, prefix '{}')", g.rows, l.nest->spec->table,
                                  fmt::join(key, ", "), l.nest->prefix));
    }
    if (cells > static_cast<double>(o_.max_row_cells) ||
        bytes > static_cast<double>(o_.max_row_bytes)) {
      Add("W109", tp.nests.front().spec->loc, t.name,
          fmt::format("the widest row can reach about {:.0f} cells and {} (most children of one "
                      "parent: {}); a row is never split across regions, is written and read "
                      "whole, and rows this wide strain region servers and clients",
                      cells, HumanBytes(bytes), fmt::join(parts, "; ")),
          fmt::format("keep rows under {} cells and {}: move the children into their own table "
                      "keyed parent|child (a prefix scan reads them), or filter them with 'where'",
                      o_.max_row_cells, HumanBytes(static_cast<double>(o_.max_row_bytes))));
    }
    return Status::OK();
  }

  const Mapping& m_;
  Source* source_;
  const LintOptions& o_;
  SourceSchema schema_;
  LintReport report_;
  std::vector<std::unique_ptr<Mapping>> mappings_;  // the single-table copies plans point into
  std::vector<std::unique_ptr<Plan>> plans_;        // the tables planned, in mapping order
  const NamingPolicy& policy_;
  const int max_families_;
  const size_t max_family_bytes_;
};

}  // namespace

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "info";
  }
  return "?";
}

int LintReport::errors() const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(), [](const auto& f) {
    return f.severity == Severity::kError;
  }));
}

int LintReport::warnings() const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(), [](const auto& f) {
    return f.severity == Severity::kWarning;
  }));
}

std::span<const LintRule> LintRules() { return kRules; }

Result<LintReport> Lint(const Mapping& mapping, Source* source, const LintOptions& options) {
  return Linter(mapping, source, options).Run();
}

}  // namespace widen
