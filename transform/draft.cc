#include "transform/draft.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/suggest.h"
#include "common/table_descriptor.h"
#include "extract/source_stats.h"
#include "transform/key_anatomy.h"
#include "transform/plan.h"

namespace widen {

namespace {

// ---------------------------------------------------------------- YAML text

bool PlainScalar(std::string_view s) {
  if (s.empty()) return false;
  const char c0 = s.front();
  if (!(std::isalpha(static_cast<unsigned char>(c0)) || c0 == '_')) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    // ':' inside a word is plain ("music:artists"); at the end it would start a map.
    const bool colon = c == ':' && i + 1 < s.size();
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
          colon)) {
      return false;
    }
  }
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"true", "false", "yes", "no", "on", "off", "null", "y", "n"}) {
    if (lower == word) return false;
  }
  return true;
}

// A double-quoted YAML scalar.
std::string Quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7F) {
      out += fmt::format("\\x{:02X}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A scalar: plain when YAML reads it back as the same text, else quoted.
std::string Y(std::string_view s) { return PlainScalar(s) ? std::string(s) : Quoted(s); }

// Comment lines ("# ...") at `indent`, wrapped at 99 columns; leading
// spaces of `text` indent every line of it.
std::string Comment(int indent, const std::string& raw) {
  // A name may hold a line break or other control bytes: shown escaped, so
  // that the comment stays one comment.
  std::string text;
  for (char c : raw) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '\n') {
      text += "\\n";
    } else if (u < 0x20 || u == 0x7F) {
      text += fmt::format("\\x{:02X}", u);
    } else {
      text += c;
    }
  }
  size_t i = text.find_first_not_of(' ');
  if (i == std::string::npos) i = text.size();
  const std::string lead =
      std::string(static_cast<size_t>(indent), ' ') + "# " + std::string(i, ' ');
  std::string out, line;
  while (i < text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    const std::string word = text.substr(i, j - i);
    if (!line.empty() && lead.size() + line.size() + 1 + word.size() > 99) {
      out += lead + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    i = j + 1;
  }
  if (!line.empty()) out += lead + line + "\n";
  return out;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// `name` with each run of bytes outside [A-Za-z0-9_] (and '.', '-' with
// `dots`) turned into one '_' (a space, a UTF-8 letter: "日本" is one run);
// "t" when no letter or digit is left, and a leading '.' or '-' gets a 't'
// before it. Names that come out equal are told apart by the caller.
std::string Sanitize(std::string_view name, bool dots) {
  std::string out;
  bool replaced = false;  // the last byte was replaced
  bool alnum = false;
  for (char c : name) {
    const bool ok =
        std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (dots && (c == '.' || c == '-'));
    alnum = alnum || std::isalnum(static_cast<unsigned char>(c));
    if (ok) {
      out += c;
    } else if (!replaced) {
      out += '_';
    }
    replaced = !ok;
  }
  if (!alnum) return "t";
  if (out.front() == '.' || out.front() == '-') out.insert(out.begin(), 't');
  return out;
}

// Whether table `child` is named after `parent`: its name starts with the
// parent's, then a word boundary ('_', '-', or an upper-case letter after
// a lower-case one: invoice_line, InvoiceLine).
bool NamedAfter(const std::string& child, const std::string& parent) {
  if (child.size() <= parent.size() + 1 || Lower(child.substr(0, parent.size())) != Lower(parent)) {
    return false;
  }
  const char next = child[parent.size()];
  const char last = child[parent.size() - 1];
  return next == '_' || next == '-' ||
         (std::isupper(static_cast<unsigned char>(next)) &&
          std::islower(static_cast<unsigned char>(last)));
}

// The role a one-column foreign key names (support_rep_id -> support_rep,
// SupportRepId -> SupportRep); the referenced table's name otherwise.
std::string RoleName(const ForeignKey& fk) {
  if (fk.columns.size() != 1) return fk.ref_table;
  std::string base = fk.columns.front();
  for (const char* suffix : {"_id", "_key", "_code", "_no", "id"}) {
    const std::string sfx(suffix);
    if (base.size() > sfx.size() && Lower(base).substr(base.size() - sfx.size()) == sfx) {
      return base.substr(0, base.size() - sfx.size());
    }
  }
  return base;
}

// The name of a copied column: `alias`_`column`, or AliasColumn when both
// are written in CamelCase.
std::string JoinedName(const std::string& alias, const std::string& column) {
  if (Lower(column).rfind(Lower(alias), 0) == 0) return column;
  const bool camel = alias.find('_') == std::string::npos &&
                     column.find('_') == std::string::npos && !column.empty() &&
                     std::isupper(static_cast<unsigned char>(column.front()));
  return camel ? alias + column : alias + "_" + column;
}

// The digits of the widest value of an integer column's type (10 for int4).
int IntegerDigits(const SourceColumn& c) {
  const auto range = DeclaredIntegerRange(c);
  if (!range) return 20;
  return static_cast<int>(std::to_string(range->max).size());
}

std::string Avg(const SourceTable& child, const SourceTable& parent) {
  if (child.estimated_rows < 0 || parent.estimated_rows <= 0) {
    return "no row counts in the database's statistics (ANALYZE gathers them)";
  }
  return fmt::format(
      "avg {:.1f} per parent from statistics",
      static_cast<double>(child.estimated_rows) / static_cast<double>(parent.estimated_rows));
}

std::string Rows(const SourceTable& t) {
  return t.estimated_rows < 0 ? "no row count in the statistics"
                              : fmt::format("about {} rows", t.estimated_rows);
}

// ------------------------------------------------------------- the graph

// A table placed in the draft: a root (level 0) or nested under `parent`.
struct Placed {
  const SourceTable* table = nullptr;
  int level = 0;
  Placed* parent = nullptr;
  const ForeignKey* via = nullptr;  // the table's foreign key to its parent
  const ForeignKey* far = nullptr;  // a link table: its foreign key to the far end
  std::string why;                  // the comment on the choice
  std::vector<Placed*> children;
  std::vector<const SourceTable*> extensions;  // 1:1 children copied in by joins
};

// Tables with at least this many rows (by the statistics) and a key that
// grows with every row get a salt.
constexpr int64_t kSaltRows = 1000000;

class Drafter {
 public:
  Drafter(const SourceSchema& schema, Source* source, const DraftOptions& o)
      : schema_(schema), source_(source), o_(o) {}

  Result<Draft> Run() {
    WIDEN_RETURN_IF_ERROR(Scope());
    Classify();
    WIDEN_RETURN_IF_ERROR(Place());
    return Emit();
  }

 private:
  // ------------------------------------------------------------ scope

  Status Scope() {
    // Each table once, in the order given (--tables a,a is a).
    std::vector<std::string> names;
    auto add = [&](const std::string& n) {
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    };
    for (const std::string& t : o_.tables) add(t);
    if (!names.empty()) {
      for (const std::string& r : o_.roots) add(r);
    }
    if (names.empty()) {
      for (const SourceTable& t : schema_.tables) add(t.name);
    }
    std::map<std::string, std::string> why_out;  // table -> why it is left out
    auto leave_out = [&](const std::string& n, std::string why) {
      why_out[n] = why;
      left_out_.push_back(fmt::format("{}: {}", n, why));
    };
    for (const std::string& n : names) {
      const SourceTable* t = schema_.FindTable(n);
      if (t == nullptr) {
        std::vector<std::string> known;
        for (const SourceTable& s : schema_.tables) known.push_back(s.name);
        return Status::InvalidArgument(
            fmt::format("the source has no table '{}' (its tables: {}){}", n,
                        known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", ")),
                        DidYouMean(n, known)));
      }
      if (!t->partition_of.empty()) {
        leave_out(n, fmt::format("a partition of {}: its rows are read through {}", t->partition_of,
                                 t->partition_of));
        continue;
      }
      if (t->is_view) {
        leave_out(n, "a view (it declares no key; map the tables it reads)");
        continue;
      }
      std::vector<std::string> key = t->primary_key;
      if (key.empty()) {
        for (const auto& u : t->unique_keys) {
          const bool not_null = std::all_of(u.begin(), u.end(), [&](const std::string& c) {
            const SourceColumn* col = t->FindColumn(c);
            return col != nullptr && !col->nullable;
          });
          if (not_null && !u.empty()) {
            key = u;
            break;
          }
        }
      }
      if (key.empty()) {
        leave_out(n,
                  "no primary key and no NOT NULL unique key to key its rows by (give it one, or "
                  "map it by hand)");
        continue;
      }
      key_[t->name] = key;
      scope_.push_back(t);
    }
    for (const std::string& r : o_.roots) {
      if (key_.count(r) > 0) continue;
      if (schema_.FindTable(r) == nullptr) {
        std::vector<std::string> known;
        for (const SourceTable& s : schema_.tables) known.push_back(s.name);
        return Status::InvalidArgument(
            fmt::format("--root {}: the source has no such table{}", r, DidYouMean(r, known)));
      }
      const auto why = why_out.find(r);
      return Status::InvalidArgument(
          fmt::format("--root {}: the table cannot be a root ({})", r,
                      why == why_out.end() ? "it is not among --tables" : r + ": " + why->second));
    }
    if (scope_.empty()) {
      return Status::InvalidArgument(
          left_out_.empty() ? std::string("no table to map: the source's schema has no tables")
                            : fmt::format("no table to map: {}", fmt::join(left_out_, "; ")));
    }
    return Status::OK();
  }

  bool InScope(const std::string& name) const { return key_.count(name) > 0; }
  const std::vector<std::string>& Key(const SourceTable* t) const { return key_.at(t->name); }

  // The foreign keys of `t` the draft follows: to other tables in scope.
  std::vector<const ForeignKey*> Fks(const SourceTable* t, bool self_too = false) const {
    std::vector<const ForeignKey*> out;
    for (const ForeignKey& fk : t->foreign_keys) {
      if (!InScope(fk.ref_table) || (fk.ref_table == t->name && !self_too)) continue;
      if (fk.columns.empty() || fk.columns.size() != fk.ref_columns.size()) continue;
      out.push_back(&fk);
    }
    // In the order of their columns in the table (the same on both
    // engines, whose constraint lists come in different orders).
    auto position = [&](const ForeignKey* fk) {
      std::vector<size_t> at;
      for (const std::string& c : fk->columns) {
        size_t i = 0;
        while (i < t->columns.size() && t->columns[i].name != c) ++i;
        at.push_back(i);
      }
      return std::make_pair(at, fk->ref_table);
    };
    std::stable_sort(out.begin(), out.end(), [&](const ForeignKey* a, const ForeignKey* b) {
      return position(a) < position(b);
    });
    return out;
  }

  bool NotNull(const SourceTable* t, const ForeignKey* fk) const {
    return std::all_of(fk->columns.begin(), fk->columns.end(), [&](const std::string& c) {
      const SourceColumn* col = t->FindColumn(c);
      return col != nullptr && !col->nullable;
    });
  }

  static bool Contains(const std::vector<std::string>& set, const std::string& v) {
    return std::find(set.begin(), set.end(), v) != set.end();
  }

  // ------------------------------------------------------------ classify

  struct Role {
    enum Kind { kRoot, kChild, kLink } kind = kRoot;
    const ForeignKey* parent = nullptr;              // kChild
    const ForeignKey* ends[2] = {nullptr, nullptr};  // kLink
    std::string why;
    bool code = false;
    std::string cycle;  // a root that breaks a cycle of children: "a -> b -> a"
    /// A root: the tables its NOT NULL foreign keys lead to, none chosen as
    /// its owner (several, and no rule picks one).
    std::vector<std::string> owners;
  };

  bool IsCode(const SourceTable* t) const {
    return Fks(t).empty() && Key(t).size() == 1 && t->columns.size() <= 2;
  }

  void Classify() {
    for (const SourceTable* t : scope_) {
      Role r;
      r.code = IsCode(t);
      const std::vector<std::string>& key = Key(t);
      const std::vector<const ForeignKey*> fks = Fks(t, true);
      // A link table: two foreign keys whose columns make up the key exactly.
      for (size_t i = 0; i < fks.size() && r.kind == Role::kRoot; ++i) {
        for (size_t j = i + 1; j < fks.size() && r.kind == Role::kRoot; ++j) {
          std::vector<std::string> both = fks[i]->columns;
          both.insert(both.end(), fks[j]->columns.begin(), fks[j]->columns.end());
          const bool inside = std::all_of(both.begin(), both.end(),
                                          [&](const std::string& c) { return Contains(key, c); });
          std::set<std::string> distinct(both.begin(), both.end());
          if (inside && distinct.size() == key.size() && distinct.size() == both.size()) {
            r.kind = Role::kLink;
            r.ends[0] = fks[i];
            r.ends[1] = fks[j];
            r.why = fmt::format(
                "a link table: its key ({}) is the columns of its foreign keys to "
                "{} and {}",
                fmt::join(key, ", "), fks[i]->ref_table, fks[j]->ref_table);
          }
        }
      }
      if (r.kind == Role::kRoot) ChooseParent(t, &r);
      roles_[t->name] = r;
    }
    BreakCycles();
  }

  // Children whose parents lead back to them (ca.cb_id -> cb, cb.ca_id ->
  // ca, both NOT NULL) would wait on each other for ever: the first table
  // of each such cycle, in scope order, becomes a root, and the others nest
  // under it as their foreign keys lead.
  void BreakCycles() {
    for (const SourceTable* t : scope_) {
      std::vector<std::string> chain;
      std::string at = t->name;
      while (roles_.at(at).kind == Role::kChild && !Contains(chain, at)) {
        chain.push_back(at);
        at = roles_.at(at).parent->ref_table;
      }
      if (roles_.at(at).kind != Role::kChild) continue;  // it reaches a root
      // `at` starts the cycle: chain from it on.
      std::vector<std::string> cycle(std::find(chain.begin(), chain.end(), at), chain.end());
      std::string first;
      for (const SourceTable* s : scope_) {
        if (first.empty() && Contains(cycle, s->name)) first = s->name;
      }
      Role& r = roles_.at(first);
      std::vector<std::string> loop = cycle;
      while (loop.front() != first) std::rotate(loop.begin(), loop.begin() + 1, loop.end());
      loop.push_back(first);
      r.kind = Role::kRoot;
      r.parent = nullptr;
      r.cycle = fmt::format("{}", fmt::join(loop, " -> "));
    }
  }

  // The parent of `t` by the rule (see draft.h), if any.
  void ChooseParent(const SourceTable* t, Role* r) const {
    std::vector<const ForeignKey*> candidates;
    for (const ForeignKey* fk : Fks(t)) {
      const SourceTable* p = schema_.FindTable(fk->ref_table);
      if (p == nullptr || !NotNull(t, fk) || IsCode(p)) continue;
      candidates.push_back(fk);
    }
    if (candidates.empty()) return;
    const std::vector<std::string>& key = Key(t);
    auto pick = [&](const ForeignKey* fk, std::string why) {
      r->kind = Role::kChild;
      r->parent = fk;
      r->why = std::move(why);
    };
    for (const ForeignKey* fk : candidates) {
      if (fk->columns.size() < key.size() &&
          std::equal(fk->columns.begin(), fk->columns.end(), key.begin())) {
        return pick(fk, fmt::format("identifying: ({}) leads {}'s key",
                                    fmt::join(fk->columns, ", "), t->name));
      }
    }
    for (const ForeignKey* fk : candidates) {
      if (fk->on_delete == ForeignKeyAction::kCascade) {
        return pick(fk, "ON DELETE CASCADE: its rows belong to their parent");
      }
    }
    for (const ForeignKey* fk : candidates) {
      if (NamedAfter(t->name, fk->ref_table)) {
        return pick(fk, fmt::format("{} is named after {}", t->name, fk->ref_table));
      }
    }
    if (candidates.size() == 1) {
      return pick(candidates.front(),
                  fmt::format("({}) is {}'s only NOT NULL foreign key to a table in scope that "
                              "is no code table",
                              fmt::join(candidates.front()->columns, ", "), t->name));
    }
    for (const ForeignKey* fk : candidates) r->owners.push_back(fk->ref_table);
  }

  // ------------------------------------------------------------- place

  Placed* Add(const SourceTable* t, int level, Placed* parent) {
    placed_.push_back(std::make_unique<Placed>());
    Placed* p = placed_.back().get();
    p->table = t;
    p->level = level;
    p->parent = parent;
    if (parent != nullptr) parent->children.push_back(p);
    return p;
  }

  Placed* RootOf(const std::string& table) {
    for (auto& p : placed_) {
      if (p->level == 0 && p->table->name == table) return p.get();
    }
    return nullptr;
  }

  // The placements of `table` at a level below 2 (where children can go).
  std::vector<Placed*> Hosts(const std::string& table) {
    std::vector<Placed*> out;
    for (auto& p : placed_) {
      if (p->table->name == table && p->level < 2 && p->far == nullptr) out.push_back(p.get());
    }
    return out;
  }

  Status Place() {
    const bool forced = !o_.roots.empty();
    // Roots first.
    for (const SourceTable* t : scope_) {
      const Role& r = roles_.at(t->name);
      const bool root = forced ? Contains(o_.roots, t->name) : r.kind == Role::kRoot;
      if (!root) continue;
      Placed* p = Add(t, 0, nullptr);
      if (forced) {
        p->why = fmt::format("{}: a root (--root); {}", t->name, Rows(*t));
      } else if (r.code) {
        p->why = fmt::format(
            "{}: a root, a code table (a key and at most one other column): "
            "other tables copy its label; {}",
            t->name, Rows(*t));
      } else if (!r.cycle.empty()) {
        p->why = fmt::format(
            "{}: a root: the NOT NULL foreign keys of {} lead in a cycle, so that each would "
            "be the other's child; the first of them is a root, and the others nest under it; "
            "{}",
            t->name, r.cycle, Rows(*t));
      } else if (!r.owners.empty()) {
        p->why = fmt::format(
            "{}: a root: its NOT NULL foreign keys lead to {}, and no rule picks its owner among "
            "them (none leads its key, cascades on delete or names it): each is copied in by a "
            "join; {}",
            t->name, fmt::join(r.owners, ", "), Rows(*t));
      } else {
        bool self = false;
        for (const ForeignKey* fk : Fks(t, true)) {
          self = self || (fk->ref_table == t->name && NotNull(t, fk));
        }
        p->why = fmt::format(
            "{}: a root (no NOT NULL foreign key to another table makes it a child{}, and it is "
            "no link table); {}",
            t->name, self ? "; its reference to itself is a join" : "", Rows(*t));
      }
    }
    // Children, level by level: a child goes under its parent's placements
    // above level 2; one whose parent is nested two deep becomes a root.
    std::set<std::string> done;
    for (int round = 0; round < 4; ++round) {
      for (const SourceTable* t : scope_) {
        if (done.count(t->name) > 0) continue;
        const Role& r = roles_.at(t->name);
        if (r.kind == Role::kLink) continue;
        const ForeignKey* via = r.kind == Role::kChild ? r.parent : nullptr;
        std::string why = r.why;
        if (forced && (via == nullptr || Hosts(via->ref_table).empty())) {
          // Under --root: any NOT NULL foreign key to a placed table.
          via = nullptr;
          for (const ForeignKey* fk : Fks(t)) {
            if (NotNull(t, fk) && !Hosts(fk->ref_table).empty() && via == nullptr) {
              via = fk;
              why = fmt::format("({}) leads to {}, a table of the draft",
                                fmt::join(fk->columns, ", "), fk->ref_table);
            }
          }
        }
        if (via == nullptr) continue;
        const std::vector<Placed*> hosts = Hosts(via->ref_table);
        const bool parent_deep = [&] {
          for (auto& p : placed_) {
            if (p->table->name == via->ref_table && p->level == 2) return true;
          }
          return false;
        }();
        if (hosts.empty()) {
          if (parent_deep && !forced && RootOf(t->name) == nullptr) {
            Placed* p = Add(t, 0, nullptr);
            p->why = fmt::format(
                "{}: a root: its parent {} is nested two levels deep already "
                "(nesting goes two levels at most); {} is copied in by a join",
                t->name, via->ref_table, via->ref_table);
            done.insert(t->name);
          }
          continue;
        }
        const SourceTable* parent = schema_.FindTable(via->ref_table);
        // Its key minus the parent's part; empty: a 1:1 extension.
        std::vector<std::string> id;
        for (const std::string& c : Key(t)) {
          if (!Contains(via->columns, c)) id.push_back(c);
        }
        for (Placed* h : hosts) {
          if (id.empty()) {
            h->extensions.push_back(t);
            continue;
          }
          Placed* p = Add(t, h->level + 1, h);
          p->via = via;
          p->why = fmt::format("nested: {}.({}) -> {}.({}) (1:N, {}; {})", t->name,
                               fmt::join(via->columns, ", "), parent->name,
                               fmt::join(via->ref_columns, ", "), Avg(*t, *parent), why);
        }
        done.insert(t->name);
      }
    }
    // Link tables, under each end that can hold children.
    for (const SourceTable* t : scope_) {
      const Role& r = roles_.at(t->name);
      if (r.kind != Role::kLink) continue;
      bool nested = false;
      for (int e = 0; e < 2; ++e) {
        const ForeignKey* mine = r.ends[e];
        const ForeignKey* far = r.ends[1 - e];
        for (Placed* h : Hosts(mine->ref_table)) {
          Placed* p = Add(t, h->level + 1, h);
          p->via = mine;
          p->far = far;
          const SourceTable* end = schema_.FindTable(mine->ref_table);
          p->why = fmt::format(
              "nested: {}.({}) -> {}.({}) (M:N through the link table {}, {}), "
              "with {}'s label copied in by a nest join",
              t->name, fmt::join(mine->columns, ", "), end->name,
              fmt::join(mine->ref_columns, ", "), t->name, Avg(*t, *end), far->ref_table);
          nested = true;
        }
      }
      if (!nested && !forced && RootOf(t->name) == nullptr) {
        Placed* p = Add(t, 0, nullptr);
        p->why =
            fmt::format("{}: a root: {}, and neither end is a table of the draft", t->name, r.why);
      }
    }
    for (const SourceTable* t : scope_) {
      bool somewhere = false;
      for (auto& p : placed_) somewhere = somewhere || p->table == t;
      for (auto& p : placed_) {
        somewhere = somewhere || Contains(Names(p->extensions), t->name);
      }
      if (!somewhere) {
        // A NOT NULL foreign key to a table placed only two levels down:
        // the nesting limit, not the graph, leaves it out.
        std::string deep;
        for (const ForeignKey* fk : Fks(t)) {
          if (!NotNull(t, fk) || !deep.empty()) continue;
          for (auto& p : placed_) {
            if (p->table->name == fk->ref_table && p->level == 2) deep = fk->ref_table;
          }
        }
        left_out_.push_back(fmt::format(
            "{}: {}", t->name,
            !deep.empty() ? fmt::format("its parent {} is nested two levels deep already (nesting "
                                        "goes two levels at most; name it with --root to map it)",
                                        deep)
            : forced      ? "no NOT NULL foreign key leads to a table of the draft (name it with "
                            "--root to map it)"
                          : "its parent could not hold it"));
      }
    }
    return Status::OK();
  }

  static std::vector<std::string> Names(const std::vector<const SourceTable*>& tables) {
    std::vector<std::string> out;
    for (const SourceTable* t : tables) out.push_back(t->name);
    return out;
  }

  // ------------------------------------------------------------- names

  // Why HBase refuses `name` as a namespace, table or family name ("" =
  // it takes it; other kinds are bytes HBase takes as they are).
  static std::string HBaseProblem(NameKind kind, const std::string& name) {
    if (kind != NameKind::kNamespace && kind != NameKind::kTable && kind != NameKind::kFamily) {
      return "";
    }
    if (kind == NameKind::kNamespace && name == "hbase") {
      return "the 'hbase' namespace is reserved for HBase's system tables";
    }
    TableDescriptor d;
    d.name_space = kind == NameKind::kNamespace ? name : "ns";
    d.table = kind == NameKind::kTable ? name : "t";
    d.families.push_back(FamilyDescriptor{});
    d.families.back().name = kind == NameKind::kFamily ? name : "d";
    const Status st = d.Validate();
    return st.ok() ? "" : st.message();
  }

  // The first of `candidates` (each in the policy's style) the policy and
  // HBase allow for `kind` and that is not in *used; added to *used. A
  // candidate too long for the policy is shortened (at a word's end when
  // one is near); one that is taken is numbered (name_2, name2), shortened
  // to leave room for the number.
  Result<std::string> PickName(NameKind kind, const std::vector<std::string>& candidates,
                               std::set<std::string>* used) {
    const NameRule& rule = o_.policy.rule(kind);
    const size_t max = rule.max_bytes > 0 ? static_cast<size_t>(rule.max_bytes) : 0;
    std::vector<std::string> tried;
    auto allowed = [&](const std::string& n) {
      return !n.empty() && NameProblem(o_.policy, kind, n).empty() && HBaseProblem(kind, n).empty();
    };
    auto taken = [&](const std::string& n) { return used != nullptr && used->count(n) > 0; };
    auto take = [&](const std::string& n) {
      if (used != nullptr) used->insert(n);
      return n;
    };
    // `n` cut to `bytes`, at the end of a word when one ends in its last
    // third (author_full_name at 10: "author"), never ending in '_'.
    auto shorten = [](std::string n, size_t bytes) {
      if (n.size() <= bytes) return n;
      // The last word start (after '_', '-', '.', or an upper-case letter
      // after a lower-case one) that keeps two thirds of `bytes`.
      size_t cut = 0;
      for (size_t i = bytes - bytes / 3; i <= bytes && i < n.size(); ++i) {
        const bool sep = n[i] == '_' || n[i] == '-' || n[i] == '.';
        const bool camel = i > 0 && std::isupper(static_cast<unsigned char>(n[i])) &&
                           std::islower(static_cast<unsigned char>(n[i - 1]));
        if ((sep || camel) && i > 0) cut = i;
      }
      n.resize(cut > 0 ? cut : bytes);
      while (n.size() > 1 && (n.back() == '_' || n.back() == '-' || n.back() == '.')) n.pop_back();
      return n;
    };
    std::vector<std::string> fitting;  // forms the policy allows (taken or not), in order
    for (int pass = 0; pass < 2; ++pass) {
      for (const std::string& c : candidates) {
        const std::string styled = ApplyNameStyle(rule.style, c);
        std::vector<std::string> forms;
        if (pass == 0) {
          forms.push_back(styled);
        } else {
          if (max > 0 && styled.size() > max) forms.push_back(shorten(styled, max));
          // Other cases only when the styled form breaks the policy itself.
          if (!allowed(styled) && !(max > 0 && styled.size() > max)) {
            forms.push_back(Lower(styled));
            std::string upper = styled;
            for (char& ch : upper) {
              ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
            }
            forms.push_back(upper);
          }
        }
        for (const std::string& f : forms) {
          if (allowed(f)) {
            if (!taken(f)) return take(f);
            fitting.push_back(f);
            tried.push_back(f + " (taken)");
          } else {
            tried.push_back(f);
          }
        }
      }
    }
    // Numbered forms of the first form that fits, else of the first candidate.
    const std::string base =
        !fitting.empty()
            ? fitting.front()
            : (candidates.empty() ? "" : ApplyNameStyle(rule.style, candidates.front()));
    for (int i = 2; i < 1000 && !base.empty(); ++i) {
      const std::string number =
          rule.style == NameStyle::kSnakeCase ? "_" + std::to_string(i) : std::to_string(i);
      std::string f = base;
      if (max > 0 && f.size() + number.size() > max) {
        if (number.size() >= max) break;
        f = shorten(f, max - number.size());
      }
      f += number;
      if (allowed(f) && !taken(f)) return take(f);
    }
    const std::string first = tried.empty() ? "" : tried.front();
    std::string why = rule.Where();
    if (!first.empty()) {
      const std::string name = first.substr(0, first.find(" (taken)"));
      why = NameProblem(o_.policy, kind, name);
      if (why.empty()) why = HBaseProblem(kind, name);
      if (why.empty()) why = fmt::format("{} is taken, and no numbered form of it fits", name);
    }
    return Status::InvalidArgument(fmt::format("no {} name the naming policy allows: tried {} ({})",
                                               NameKindNames().Name(kind), fmt::join(tried, ", "),
                                               why));
  }

  // The words of a child's name that do not name its parent (invoice_line
  // under invoice: "line"; InvoiceLine under Invoice: "Line"), for its
  // prefix and family.
  static std::string OwnPart(const std::string& child, const std::string& parent) {
    if (!NamedAfter(child, parent)) return child;
    std::string rest = child.substr(parent.size());
    if (!rest.empty() && (rest.front() == '_' || rest.front() == '-')) rest.erase(0, 1);
    return rest;
  }

  // Prefix candidates: first letters of the distinguishing words.
  static std::vector<std::string> PrefixCandidates(const std::vector<std::string>& names) {
    // Each name's words (message_recipient: message, recipient), in order.
    std::vector<std::string> words;
    for (const std::string& n : names) {
      words.push_back(n);
      std::string w;
      for (size_t i = 0; i <= n.size(); ++i) {
        const bool end = i == n.size() || n[i] == '_' || n[i] == '-' ||
                         (i > 0 && std::isupper(static_cast<unsigned char>(n[i])) &&
                          std::islower(static_cast<unsigned char>(n[i - 1])));
        if (end && !w.empty()) {
          if (w != n) words.push_back(w);
          w.clear();
        }
        if (i < n.size() && n[i] != '_' && n[i] != '-') w += n[i];
      }
    }
    std::vector<std::string> out;
    for (const std::string& w : words) {
      std::string clean = Lower(Sanitize(w, false));
      size_t start = 0;
      while (start < clean.size() && !std::isalpha(static_cast<unsigned char>(clean[start]))) {
        ++start;
      }
      if (start < clean.size()) out.push_back(clean.substr(start, 1));
    }
    for (const std::string& w : words) {
      std::string clean = Lower(Sanitize(w, false));
      std::string letters;
      for (char c : clean) {
        if (std::isalpha(static_cast<unsigned char>(c))) letters += c;
      }
      if (letters.size() >= 2) out.push_back(letters.substr(0, 2));
      if (letters.size() >= 3) out.push_back(letters.substr(0, 3));
    }
    for (char c = 'a'; c <= 'z'; ++c) out.push_back(std::string(1, c));
    return out;
  }

  // ------------------------------------------------------------- labels

  // The label columns of `t` (see draft.h), at most three.
  std::vector<std::string> Labels(const SourceTable* t) const {
    std::vector<std::string> out;
    const std::vector<std::string>& key = Key(t);
    // Text columns that are no key and no foreign key (those hold ids).
    auto text = [&](const SourceColumn& c) {
      if (c.type != ValueType::kText || Contains(key, c.name)) return false;
      for (const ForeignKey& fk : t->foreign_keys) {
        if (Contains(fk.columns, c.name)) return false;
      }
      return true;
    };
    for (const auto& u : t->unique_keys) {
      for (const std::string& n : u) {
        const SourceColumn* c = t->FindColumn(n);
        if (c != nullptr && text(*c) && !Contains(out, n) && out.size() < 3) out.push_back(n);
      }
    }
    for (const SourceColumn& c : t->columns) {
      const std::string lower = Lower(c.name);
      bool named = false;
      for (const char* w :
           {"name", "title", "label", "code", "handle", "email", "subject", "description"}) {
        named = named || lower.find(w) != std::string::npos;
      }
      if (named && text(c) && !Contains(out, c.name) && out.size() < 3) out.push_back(c.name);
    }
    for (bool nullable : {false, true}) {
      for (const SourceColumn& c : t->columns) {
        if (out.empty() && text(c) && c.nullable == nullable) out.push_back(c.name);
      }
    }
    return out;
  }

  // ------------------------------------------------------------- keys

  struct KeyDraft {
    std::string yaml;     // the `parts` list items / an id list, flow style
    bool binary = false;  // form: binary
    bool no_separator = false;
    std::string why;
  };

  Result<int64_t> MinValue(const SourceTable* t, const std::string& column) {
    if (source_ == nullptr) return int64_t{0};
    ScanSpec scan;
    scan.table = t->name;
    scan.alias = t->name;
    ColumnExpr c{t->name, column, false};
    scan.columns.push_back(c);
    auto s = source_->stats().SummarizeColumn(scan, c);
    if (!s.ok()) {
      if (s.status().code() == StatusCode::kInvalidArgument) return int64_t{0};
      return s.status();
    }
    if (s->min.is_null()) return int64_t{0};
    if (s->min.type() == ValueType::kInt) return s->min.as_int();
    return int64_t{0};
  }

  // A key part over `c` as the planner makes it (its name and types), a
  // width for integers.
  static KeyPartPlan Part(const SourceColumn& c) {
    KeyPartPlan p;
    p.name = c.name;
    p.value_type = c.type;
    p.source_type = c.storage_type();
    p.width = IsIntegerType(c.type) ? IntegerDigits(c) : 0;
    return p;
  }

  // Whether a scan over the parts before `c` returns the rows in `c`'s
  // order, `c` in a key of that form, followed by other parts or not.
  static bool SortsInKey(const SourceColumn& c, bool binary, bool followed) {
    if (c.is_enum) return false;
    const KeyPartPlan p = Part(c);
    if (!KeyOrderProblem(p, c, !binary).empty()) return false;
    return binary || !followed || TextWidthProblem(p, "|").empty();
  }

  // The key parts over `columns` of `t`; `row_key` false: a nested id.
  // `continued`: a nested id its children's qualifiers continue (a text
  // part there would let one child's qualifier run into another's). The
  // text form unless a part needs the binary form; the comment says how
  // each part is written in the form chosen.
  Result<KeyDraft> KeyOf(const SourceTable* t, const std::vector<std::string>& columns,
                         bool row_key, bool continued = false) {
    KeyDraft k;
    struct PartDraft {
      std::string text, binary;          // the part as the form writes it
      std::string text_why, binary_why;  // how, for the comment
      std::string needs_binary;          // why the text form cannot hold it ("" = it can)
    };
    std::vector<PartDraft> drafts;
    for (size_t i = 0; i < columns.size(); ++i) {
      const std::string& name = columns[i];
      const SourceColumn* c = t->FindColumn(name);
      if (c == nullptr) return Status::Internal("no column " + name);
      // Whether another part (or a child's qualifier) follows it.
      const bool followed = continued || i + 1 < columns.size();
      const std::string what = fmt::format("{} ({})", name, c->source_type);
      const int digits = FractionDigits(c->storage_type());
      PartDraft d;
      d.text = d.binary = Y(name);
      switch (c->type) {
        case ValueType::kInt:
        case ValueType::kUInt: {
          WIDEN_ASSIGN_OR_RETURN(const int64_t min, MinValue(t, name));
          d.binary_why = what + " big-endian with the sign bit flipped (sorts numerically)";
          if (min < 0) {
            d.needs_binary = fmt::format("{} holds negative values (min {})", name, min);
          } else if (row_key) {
            const int width = IntegerDigits(*c);
            d.text = fmt::format("{{column: {}, width: {}}}", Y(name), width);
            d.text_why = fmt::format(
                "{} zero-padded to {} digits, so that it sorts numerically: every value of the "
                "type fits",
                what, width);
          } else {
            d.text_why = fmt::format(
                "{} unpadded (qualifiers stay short; add width: N to read column ranges in id "
                "order)",
                name);
          }
          break;
        }
        case ValueType::kOther:
        case ValueType::kJson:
          if (!TextSortsLikeValues(*c)) {
            d.needs_binary = what + " does not sort as text";
            d.binary = fmt::format("{{column: {}, type: string}}", Y(name));
            d.binary_why = what +
                           " as its text (escaped and terminated; it is matched exactly, "
                           "its order is the text's)";
          } else {
            if (followed && !TextWidthProblem(Part(*c), "|").empty()) {
              d.needs_binary = what +
                               " has no fixed width, so as text it would not keep the "
                               "parts after it in order";
            }
            d.text_why = what + " as text, which sorts like its values";
            d.binary_why = what + " as its text, escaped and terminated";
          }
          break;
        case ValueType::kDate:
          d.text_why = what + " as text (YYYY-MM-DD sorts like its values)";
          d.binary_why = what + " as days since 1970";
          break;
        case ValueType::kTimestamp:
          d.text_why = what + " as text, which sorts like its values";
          if (followed && digits != 0) {
            // ...:00 starts ...:00.5, and the next part's separator then
            // sorts it after the longer one.
            d.needs_binary = what +
                             " can hold fractions of a second, so its text has no fixed "
                             "width and would not keep the parts after it in order";
          }
          if (digits > 3 || digits < 0) {
            d.binary = fmt::format("{{column: {}, type: string}}", Y(name));
            d.binary_why = what +
                           " as its text, escaped and terminated (every microsecond "
                           "kept, in order; a binary timestamp keeps milliseconds)";
          } else {
            d.binary_why = what + " as milliseconds since 1970";
          }
          break;
        case ValueType::kText:
          d.text_why = fmt::format("{} as its text{}", what,
                                   row_key ? ", without a separator (one part: no value is "
                                             "refused for holding a separator)"
                                           : "");
          d.binary_why = what + " escaped and terminated, so no value can run into the next";
          if (columns.size() > 1 || continued) {
            d.needs_binary = fmt::format(
                "{} is text {}", name,
                continued ? "that the children's qualifiers continue" : "beside other parts");
          } else {
            k.no_separator = row_key;
          }
          break;
        case ValueType::kTimestampTz:
          d.needs_binary = what + " does not sort as text (instants end in 'Z')";
          d.binary_why = what +
                         " as milliseconds since 1970 (two instants within one "
                         "millisecond would share a key)";
          break;
        default:
          d.needs_binary = what + " does not sort as text";
          d.binary_why = what + " in its order-preserving binary encoding";
          break;
      }
      // Values no key part can hold: a row with one is rejected by migrate.
      std::string refused;
      if (c->type == ValueType::kDecimal || c->type == ValueType::kFloat) {
        refused = "NaN and +/-Infinity";
      } else if (o_.dialect == "postgresql" &&
                 (c->type == ValueType::kTimestamp || c->type == ValueType::kTimestampTz ||
                  c->type == ValueType::kDate)) {
        refused = "'infinity' and '-infinity'";
      } else if (c->type == ValueType::kText && row_key && columns.size() == 1) {
        refused = "'' (an empty row key, which HBase refuses)";
      }
      if (!refused.empty()) {
        const std::string note =
            fmt::format(" ({} would be refused: migrate rejects such a row)", refused);
        d.text_why += note;
        d.binary_why += note;
      }
      drafts.push_back(std::move(d));
    }
    std::vector<std::string> because, parts, how;
    for (const PartDraft& d : drafts) {
      if (!d.needs_binary.empty()) because.push_back(d.needs_binary);
    }
    k.binary = !because.empty();
    if (k.binary) k.no_separator = false;
    for (const PartDraft& d : drafts) {
      parts.push_back(k.binary ? d.binary : d.text);
      how.push_back(k.binary ? d.binary_why : d.text_why);
    }
    k.yaml = fmt::format("[{}]", fmt::join(parts, ", "));
    k.why = k.binary ? fmt::format("binary form ({}): {}", fmt::join(because, "; "),
                                   fmt::join(how, "; "))
                     : fmt::format("text form: {}", fmt::join(how, "; "));
    return k;
  }

  // ------------------------------------------------------------- emit

  struct Ctx {
    std::set<std::string> families;
  };

  // The namespace: --namespace, else the database's name from the URL
  // (%-escapes decoded: Shop%20DB is "Shop DB", drafted Shop_DB).
  std::string Namespace() {
    if (!o_.name_space.empty()) return o_.name_space;
    std::string url = o_.source_url;
    url = url.substr(0, url.find('?'));
    const size_t slash = url.rfind('/');
    std::string db = slash == std::string::npos ? "db" : url.substr(slash + 1);
    if (db.empty()) db = "db";
    std::string decoded;
    for (size_t i = 0; i < db.size(); ++i) {
      unsigned int byte = 0;
      if (db[i] == '%' && i + 2 < db.size() &&
          std::isxdigit(static_cast<unsigned char>(db[i + 1])) &&
          std::isxdigit(static_cast<unsigned char>(db[i + 2])) &&
          std::sscanf(db.c_str() + i + 1, "%2x", &byte) == 1) {
        decoded += static_cast<char>(byte);
        i += 2;
      } else {
        decoded += db[i];
      }
    }
    return Sanitize(decoded, false);
  }

  // The draft's source: the URL without a password (user:password@ and
  // password= parameters both).
  std::string SourceText() const { return WithoutPassword(o_.source_url); }

  // A joined table's copied columns: (alias.column, qualifier base).
  struct JoinDraft {
    std::string yaml;  // "{table: t, as: a, "on": {...}}"
    std::string why;
    std::vector<std::pair<std::string, std::string>> columns;  // column ref, name
  };

  // The join of `fk` of `t` (the referencing side), its alias unique in *aliases.
  JoinDraft JoinOf(const SourceTable* t, const ForeignKey* fk, std::set<std::string>* aliases,
                   const std::string& own, bool all_columns = false, bool role_alias = true) {
    JoinDraft j;
    const SourceTable* ref = schema_.FindTable(fk->ref_table);
    // The alias: the reference's role, from a one-column foreign key's name
    // (support_rep_id -> support_rep, sender_id -> sender); else the table's.
    // Not a column's name of `t` (sequel_of beside column sequel_of reads
    // as the column): the referenced table's name then, else role_row.
    std::string base = role_alias ? Sanitize(RoleName(*fk), false) : ref->name;
    if (role_alias && t->FindColumn(base) != nullptr) {
      const std::string table = Sanitize(ref->name, false);
      base = t->FindColumn(table) == nullptr && table != own ? table : base + "_row";
    }
    std::string alias = base;
    for (int i = 2; alias == own || aliases->count(alias) > 0; ++i) {
      alias = base + std::to_string(i);
    }
    aliases->insert(alias);
    std::vector<std::string> on;
    for (size_t i = 0; i < fk->columns.size(); ++i) {
      on.push_back(fmt::format("{}: {}", Y(fk->columns[i]), Y(fk->ref_columns[i])));
    }
    // "on" quoted: YAML 1.1 loaders (PyYAML) read a bare on as true.
    j.yaml = fmt::format("{{table: {}{}, \"on\": {{{}}}}}", Y(ref->name),
                         alias == ref->name ? "" : ", as: " + Y(alias), fmt::join(on, ", "));
    std::vector<std::string> cols;
    if (all_columns) {
      for (const SourceColumn& c : ref->columns) {
        if (!Contains(fk->ref_columns, c.name)) cols.push_back(c.name);
      }
    } else {
      cols = Labels(ref);
    }
    for (const std::string& c : cols) j.columns.emplace_back(alias + "." + c, JoinedName(alias, c));
    j.why = fmt::format("joined: {}.({}) -> {}.({}) (N:1): {}", t->name,
                        fmt::join(fk->columns, ", "), ref->name, fmt::join(fk->ref_columns, ", "),
                        all_columns ? "its row is this row's 1:1 extension: every column copied"
                        : cols.empty()
                            ? "it has no label column; the id alone is kept"
                            : fmt::format("its label column{} {} copied",
                                          cols.size() > 1 ? "s" : "", fmt::join(cols, ", ")));
    return j;
  }

  // A 1:1 extension child as a join from its parent's key.
  JoinDraft ExtensionJoin(const SourceTable* parent, const SourceTable* ext,
                          std::set<std::string>* aliases) {
    // The extension's foreign key to the parent.
    const ForeignKey* to_parent = nullptr;
    for (const ForeignKey& fk : ext->foreign_keys) {
      if (fk.ref_table == parent->name && to_parent == nullptr) to_parent = &fk;
    }
    ForeignKey reversed;
    reversed.ref_table = ext->name;
    reversed.columns = to_parent->ref_columns;
    reversed.ref_columns = to_parent->columns;
    JoinDraft j = JoinOf(parent, &reversed, aliases, parent->name, true, false);
    j.why = fmt::format(
        "joined: {}.({}) -> {}.({}) (1:1: {}'s key is its foreign key): every "
        "column copied",
        ext->name, fmt::join(to_parent->columns, ", "), parent->name,
        fmt::join(to_parent->ref_columns, ", "), ext->name);
    return j;
  }

  // Where a nested id comes from, for its comment: "invoice_line_id (the
  // key (invoice_id, invoice_line_id) without the parent's part
  // (invoice_id)); ", or the key itself when it holds no part of the parent.
  static std::string IdWhy(const std::vector<std::string>& key, const std::vector<std::string>& id,
                           const std::vector<std::string>& via) {
    if (id.size() == key.size()) {
      return fmt::format("{} (the key; the foreign key to the parent, ({}), is no part of it); ",
                         fmt::join(id, ", "), fmt::join(via, ", "));
    }
    return fmt::format("{} (the key ({}) without the parent's part ({})); ", fmt::join(id, ", "),
                       fmt::join(key, ", "), fmt::join(via, ", "));
  }

  Status EmitNest(Placed* n, int indent, std::set<std::string>* prefixes, const std::string& family,
                  std::string* out) {
    const SourceTable* t = n->table;
    const SourceTable* parent = n->parent->table;
    const std::string pad(static_cast<size_t>(indent), ' ');
    *out += Comment(indent, n->why);
    std::vector<std::string> on;
    for (size_t i = 0; i < n->via->columns.size(); ++i) {
      on.push_back(fmt::format("{}: {}", Y(n->via->ref_columns[i]), Y(n->via->columns[i])));
    }
    *out += fmt::format("{}- table: {}\n", pad, Y(t->name));
    *out += fmt::format("{}  \"on\": {{{}}}\n", pad, fmt::join(on, ", "));
    if (n->level == 1) *out += fmt::format("{}  family: {}\n", pad, Y(family));
    // Prefix: the far end's name for a link, else the child's own words.
    std::vector<std::string> words;
    if (n->far != nullptr) {
      words.push_back(RoleName(*n->far));
      words.push_back(n->far->ref_table);
      words.push_back(OwnPart(t->name, parent->name));
    } else {
      words.push_back(OwnPart(t->name, parent->name));
      words.push_back(t->name);
    }
    // Prefix-free among the siblings of one family.
    std::vector<std::string> candidates;
    for (const std::string& c : PrefixCandidates(words)) {
      const bool clash = std::any_of(prefixes->begin(), prefixes->end(), [&](const std::string& p) {
        return p.rfind(c, 0) == 0 || c.rfind(p, 0) == 0;
      });
      if (!clash) candidates.push_back(c);
    }
    WIDEN_ASSIGN_OR_RETURN(const std::string prefix,
                           PickName(NameKind::kPrefix, candidates, prefixes));
    *out += fmt::format("{}  prefix: {}\n", pad, Y(prefix));
    // Joins: the far end of a link, the child's other references.
    std::set<std::string> aliases;
    std::vector<JoinDraft> joins;
    for (const ForeignKey* fk : Fks(t, true)) {
      if (fk != n->via) joins.push_back(JoinOf(t, fk, &aliases, t->name));
    }
    if (!joins.empty()) {
      *out += fmt::format("{}  joins:\n", pad);
      for (const JoinDraft& j : joins) {
        *out += Comment(indent + 4, j.why);
        *out += fmt::format("{}    - {}\n", pad, j.yaml);
      }
    }
    std::vector<std::string> id;
    for (const std::string& c : Key(t)) {
      if (!Contains(n->via->columns, c)) id.push_back(c);
    }
    WIDEN_ASSIGN_OR_RETURN(KeyDraft k, KeyOf(t, id, false, !n->children.empty()));
    *out += Comment(indent + 2, "id: " + IdWhy(Key(t), id, n->via->columns) + k.why);
    if (k.binary) *out += fmt::format("{}  form: binary\n", pad);
    *out += fmt::format("{}  id: {}\n", pad, k.yaml);
    // Values: the child's own columns but the link and the id, then the joins' labels.
    std::vector<std::string> values;
    std::set<std::string> attributes;
    for (const SourceColumn& c : t->columns) {
      if (Contains(n->via->columns, c.name) || Contains(id, c.name)) continue;
      WIDEN_ASSIGN_OR_RETURN(const std::string a,
                             PickName(NameKind::kAttribute, {c.name}, &attributes));
      values.push_back(a == c.name ? Y(c.name)
                                   : fmt::format("{{column: {}, as: {}}}", Y(c.name), Y(a)));
    }
    for (const JoinDraft& j : joins) {
      for (const auto& [ref, name] : j.columns) {
        WIDEN_ASSIGN_OR_RETURN(const std::string a,
                               PickName(NameKind::kAttribute, {name}, &attributes));
        values.push_back(fmt::format("{{column: {}, as: {}}}", Y(ref), Y(a)));
      }
    }
    const std::string flow = fmt::format("{}  columns: [{}]", pad, fmt::join(values, ", "));
    if (values.empty()) {
      *out += Comment(indent + 2,
                      "no column beside its key: each child is a cell whose value is "
                      "{} (its qualifier names it)");
      *out += fmt::format("{}  columns: []\n", pad);
    } else if (flow.size() <= 99) {
      *out += flow + "\n";
    } else {
      *out += fmt::format("{}  columns:\n", pad);
      for (const std::string& v : values) *out += fmt::format("{}    - {}\n", pad, v);
    }
    if (!n->children.empty()) {
      *out += fmt::format("{}  nest:\n", pad);
      std::set<std::string> inner;
      for (Placed* c : n->children) {
        WIDEN_RETURN_IF_ERROR(EmitNest(c, indent + 4, &inner, family, out));
      }
    }
    return Status::OK();
  }

  Status EmitRoot(Placed* r, const std::string& ns, std::set<std::string>* tables,
                  std::string* out) {
    const SourceTable* t = r->table;
    *out += "\n" + Comment(2, r->why);
    WIDEN_ASSIGN_OR_RETURN(const std::string name,
                           PickName(NameKind::kTable, {Sanitize(t->name, true)}, tables));
    *out += fmt::format("  - name: {}\n", Y(ns + ":" + name));
    *out += fmt::format("    from: {}\n", Y(t->name));
    // Families.
    std::set<std::string> fams;
    WIDEN_ASSIGN_OR_RETURN(const std::string d,
                           PickName(NameKind::kFamily, {"d", "f", "a"}, &fams));
    std::vector<std::string> nest_families;
    std::string why = fmt::format("families: {} holds the row's own columns and copied labels", d);
    const size_t nests = r->children.size();
    // A family per kind of child while the families stay within the
    // policy's max_families (3 by default; two at least: one for the row's
    // own columns, one for its children).
    const size_t max_families = static_cast<size_t>(std::max(o_.policy.max_families, 2));
    const bool shared = 1 + nests > max_families;
    std::string shared_family;
    if (shared) {
      WIDEN_ASSIGN_OR_RETURN(shared_family, PickName(NameKind::kFamily, {"c", "n", "k"}, &fams));
      why += fmt::format(
          "; {} holds every nested child ({} kinds, told apart by their qualifier "
          "prefixes: {} families at most{}, and a read of the row's own columns skips them)",
          shared_family, nests, max_families,
          o_.policy.given ? " by the naming policy" : ", as HBase does best with two or three");
    }
    for (Placed* c : r->children) {
      if (shared) {
        nest_families.push_back(shared_family);
        continue;
      }
      std::vector<std::string> cand =
          c->far != nullptr ? PrefixCandidates({RoleName(*c->far), c->far->ref_table,
                                                OwnPart(c->table->name, t->name)})
                            : PrefixCandidates({OwnPart(c->table->name, t->name), c->table->name});
      WIDEN_ASSIGN_OR_RETURN(const std::string f, PickName(NameKind::kFamily, cand, &fams));
      nest_families.push_back(f);
      why += fmt::format(
          "; {} holds the nested {} rows (a family of their own: a read of one "
          "kind skips the other)",
          f, c->table->name);
    }
    if (nests == 0) why += " (one family: HBase stores the family name in every cell)";
    *out += Comment(4, why);
    std::vector<std::string> fam_list = {d};
    for (const std::string& f : nest_families) {
      if (!Contains(fam_list, f)) fam_list.push_back(f);
    }
    *out += fmt::format("    families: [{}]\n", fmt::join(fam_list, ", "));
    // Key.
    WIDEN_ASSIGN_OR_RETURN(KeyDraft k, KeyOf(t, Key(t), true));
    *out +=
        Comment(4, fmt::format("key: {} ({}); {}", fmt::join(Key(t), ", "),
                               t->primary_key.empty() ? "a NOT NULL unique key" : "the primary key",
                               k.why));
    // A large table keyed by a sequence: salted against a write hotspot (lint W105).
    const SourceColumn* lead = t->FindColumn(Key(t).front());
    const bool sequential =
        Key(t).size() == 1 && lead != nullptr &&
        (IsIntegerType(lead->type) || lead->type == ValueType::kTimestamp ||
         lead->type == ValueType::kTimestampTz || lead->type == ValueType::kDate);
    const bool salt = sequential && t->estimated_rows >= kSaltRows;
    if (salt) {
      *out += Comment(4, fmt::format("salt: {} has {} and its key increases with every new row: "
                                     "16 buckets spread the writes over 16 regions (a Get by "
                                     "the key still finds its bucket; a scan of a key range "
                                     "reads all 16)",
                                     t->name, Rows(*t)));
    } else if (sequential) {
      *out += Comment(4, fmt::format("no salt: {}; if it grows past millions of rows add salt: "
                                     "{{buckets: 16}} (lint W105: new rows all land in one region)",
                                     t->estimated_rows < 0
                                         ? fmt::format("{} has no row count in the statistics "
                                                       "(ANALYZE gathers it), so its size is "
                                                       "unknown",
                                                       t->name)
                                         : fmt::format("{} ({}) is small", t->name, Rows(*t))));
    }
    *out += "    key:\n";
    if (k.binary) *out += "      form: binary\n";
    if (k.no_separator && !salt) *out += "      separator: \"\"\n";
    *out += fmt::format("      parts: {}\n", k.yaml);
    if (salt) *out += "      salt: {buckets: 16}\n";
    // Joins: every foreign key (this is a root), and 1:1 extensions.
    std::set<std::string> aliases;
    std::vector<JoinDraft> joins;
    for (const ForeignKey* fk : Fks(t, true)) joins.push_back(JoinOf(t, fk, &aliases, t->name));
    for (const SourceTable* e : r->extensions) joins.push_back(ExtensionJoin(t, e, &aliases));
    if (!joins.empty()) {
      *out += "    joins:\n";
      for (const JoinDraft& j : joins) {
        *out += Comment(6, j.why);
        *out += fmt::format("      - {}\n", j.yaml);
      }
    }
    // Columns.
    std::set<std::string> qualifiers;
    std::vector<std::string> cols;
    for (const SourceColumn& c : t->columns) {
      if (Contains(Key(t), c.name)) continue;
      WIDEN_ASSIGN_OR_RETURN(const std::string q,
                             PickName(NameKind::kQualifier, {c.name}, &qualifiers));
      cols.push_back(fmt::format("{{column: {}, to: {}}}", Y(c.name), Quoted(d + ":" + q)));
    }
    for (const JoinDraft& j : joins) {
      for (const auto& [ref, name] : j.columns) {
        WIDEN_ASSIGN_OR_RETURN(const std::string q,
                               PickName(NameKind::kQualifier, {name}, &qualifiers));
        cols.push_back(fmt::format("{{column: {}, to: {}}}", Y(ref), Quoted(d + ":" + q)));
      }
    }
    // A row whose cells are all left out (NULLs) is no row in HBase: when
    // every column can be NULL, the first key column is kept as a cell too.
    const bool always = std::any_of(
        t->columns.begin(), t->columns.end(),
        [&](const SourceColumn& c) { return !c.nullable && !Contains(Key(t), c.name); });
    std::string kept;
    if (!always && !cols.empty()) {
      const std::string& k0 = Key(t).front();
      WIDEN_ASSIGN_OR_RETURN(const std::string q,
                             PickName(NameKind::kQualifier, {k0}, &qualifiers));
      cols.push_back(fmt::format("{{column: {}, to: {}}}", Y(k0), Quoted(d + ":" + q)));
      kept = fmt::format(
          "; {} is kept as a cell too: every other column can be NULL, and a row whose cells "
          "are all left out is no row in HBase (a Get would not find it)",
          k0);
    }
    if (!cols.empty()) {
      *out += Comment(4,
                      "columns: the row's own columns but its key (the key holds them), then "
                      "the joined labels" +
                          kept);
      *out += "    columns:\n";
      for (const std::string& c : cols) *out += fmt::format("      - {}\n", c);
    }
    // Nests.
    if (!r->children.empty()) {
      *out += "    nest:\n";
      std::map<std::string, std::set<std::string>> prefixes;  // by family
      for (size_t i = 0; i < r->children.size(); ++i) {
        WIDEN_RETURN_IF_ERROR(
            EmitNest(r->children[i], 6, &prefixes[nest_families[i]], nest_families[i], out));
      }
    }
    if (cols.empty() && r->children.empty()) {
      // A table needs cells: keep the key columns as cells too.
      *out += Comment(4,
                      "columns: the key is all it has; its columns are kept as cells too, "
                      "since a table needs at least one");
      *out += "    columns:\n";
      for (const std::string& c : Key(t)) {
        WIDEN_ASSIGN_OR_RETURN(const std::string q,
                               PickName(NameKind::kQualifier, {c}, &qualifiers));
        *out += fmt::format("      - {{column: {}, to: {}}}\n", Y(c), Quoted(d + ":" + q));
      }
    }
    // Access patterns the key serves.
    *out += "    access:\n";
    const std::vector<std::string>& key = Key(t);
    *out +=
        Comment(6, fmt::format("served by a Get: ({}) is the whole row key", fmt::join(key, ", ")));
    *out += fmt::format(
        "      - {{name: {}, by: [{}]}}\n",
        Y(AccessName(fmt::format("{}_by_{}", Sanitize(t->name, false), fmt::join(key, "_")))),
        fmt::join(Quote(key), ", "));
    const SourceColumn* second = key.size() > 1 ? t->FindColumn(key[1]) : nullptr;
    if (second != nullptr && SortsInKey(*second, k.binary, key.size() > 2)) {
      *out += Comment(6, fmt::format("served by one prefix Scan: {} leads the key, and the rows "
                                     "come ordered by {}",
                                     key.front(), key[1]));
      *out +=
          fmt::format("      - {{name: {}, by: [{}], order: [{}]}}\n",
                      Y(AccessName(fmt::format("{}_of_{}", Sanitize(t->name, false), key.front()))),
                      Y(key.front()),
                      // A name with white space is no "column desc": the map form.
                      key[1].find_first_of(" \t\r\n") == std::string::npos
                          ? Y(key[1])
                          : fmt::format("{{column: {}}}", Y(key[1])));
    } else if (second != nullptr) {
      *out += Comment(6, fmt::format("served by one prefix Scan: {} leads the key (the rows come "
                                     "in key order, which is not {}'s order: its key part does "
                                     "not sort like its values)",
                                     key.front(), key[1]));
      *out +=
          fmt::format("      - {{name: {}, by: [{}]}}\n",
                      Y(AccessName(fmt::format("{}_of_{}", Sanitize(t->name, false), key.front()))),
                      Y(key.front()));
    }
    return Status::OK();
  }

  // `base`, or base_2, base_3, ... when the mapping has that access
  // pattern name already (names are unique in a mapping).
  std::string AccessName(const std::string& base) {
    std::string name = base;
    for (int i = 2; access_names_.count(name) > 0; ++i) name = fmt::format("{}_{}", base, i);
    access_names_.insert(name);
    return name;
  }

  static std::vector<std::string> Quote(const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const auto& n : names) out.push_back(Y(n));
    return out;
  }

  Result<Draft> Emit() {
    Draft d;
    // A namespace given is used as it is, or refused: never replaced.
    if (!o_.name_space.empty()) {
      std::string why = HBaseProblem(NameKind::kNamespace, o_.name_space);
      if (why.empty()) why = NameProblem(o_.policy, NameKind::kNamespace, o_.name_space);
      if (!why.empty()) {
        return Status::InvalidArgument(fmt::format("--namespace '{}': {}", o_.name_space, why));
      }
    }
    std::set<std::string> ns_used;
    // The database's name, else the first namespace the policy allows.
    std::vector<std::string> ns_candidates = {Namespace()};
    for (const std::string& n : o_.policy.rule(NameKind::kNamespace).allowed) {
      ns_candidates.push_back(n);
    }
    ns_candidates.push_back("db");
    WIDEN_ASSIGN_OR_RETURN(const std::string ns,
                           PickName(NameKind::kNamespace, ns_candidates, &ns_used));
    std::string body;
    std::set<std::string> tables;
    std::vector<std::string> links, children, roots, codes;
    for (const SourceTable* t : scope_) {
      const Role& r = roles_.at(t->name);
      if (r.kind == Role::kLink) links.push_back(t->name);
      if (r.kind == Role::kChild) {
        children.push_back(fmt::format("{} -> {}", t->name, r.parent->ref_table));
      }
      if (r.code) codes.push_back(t->name);
    }
    for (auto& p : placed_) {
      if (p->level != 0) continue;
      roots.push_back(p->table->name);
      WIDEN_RETURN_IF_ERROR(EmitRoot(p.get(), ns, &tables, &body));
      ++d.target_tables;
    }
    std::string head;
    if (!o_.schema_ref.empty()) {
      head += fmt::format("# yaml-language-server: $schema={}\n", o_.schema_ref);
    }
    head += Comment(0, fmt::format("A first design drafted by widen init from the schema of {} "
                                   "({}, {} tables in scope). Review it, then: widen lint -m "
                                   "FILE; widen plan -m FILE (it proves the access patterns); "
                                   "widen migrate -m FILE.",
                                   Namespace(), o_.dialect, scope_.size()));
    head += Comment(0,
                    "How the draft was made (docs/design.md, \"How widen init drafts a "
                    "design\"):");
    if (!o_.roots.empty()) {
      head += Comment(0, fmt::format("  roots (--root): {}", fmt::join(o_.roots, ", ")));
    }
    head +=
        Comment(0, fmt::format("  link tables (a key made of two foreign keys; nested under "
                               "their ends): {}",
                               links.empty() ? "none" : fmt::format("{}", fmt::join(links, ", "))));
    head += Comment(
        0, fmt::format("  children (a NOT NULL foreign key to their owner; nested "
                       "there): {}",
                       children.empty() ? "none" : fmt::format("{}", fmt::join(children, ", "))));
    head +=
        Comment(0, fmt::format("  code tables (a key and one label; copied in by joins): {}",
                               codes.empty() ? "none" : fmt::format("{}", fmt::join(codes, ", "))));
    head += Comment(0, fmt::format("  target tables (one per root): {}", fmt::join(roots, ", ")));
    for (const std::string& l : left_out_) head += Comment(0, "  not mapped: " + l);
    if (!o_.policy_file.empty()) {
      head += Comment(0, fmt::format("Names follow the naming policy {}: widen lint --policy {} "
                                     "checks them.",
                                     o_.policy_file, o_.policy_file));
    }
    head += fmt::format("source: {}\n", Quoted("${WIDEN_SOURCE_URL:-" + SourceText() + "}"));
    const std::string target =
        o_.target_url.empty() ? fmt::format("leveldb:out/{}", ns) : o_.target_url;
    head += fmt::format("target: {}\n", Quoted("${WIDEN_TARGET_URL:-" + target + "}"));
    head += "tables:";
    d.yaml = head + body;
    d.left_out = left_out_;
    for (const SourceTable* t : scope_) {
      if (t->estimated_rows < 0) d.without_statistics.push_back(t->name);
    }
    if (d.target_tables == 0) {
      return Status::InvalidArgument("no table could be drafted: " +
                                     fmt::format("{}", fmt::join(left_out_, "; ")));
    }
    return d;
  }

  const SourceSchema& schema_;
  Source* source_;
  const DraftOptions& o_;
  std::vector<const SourceTable*> scope_;
  std::map<std::string, std::vector<std::string>> key_;
  std::map<std::string, Role> roles_;
  std::vector<std::unique_ptr<Placed>> placed_;
  std::vector<std::string> left_out_;
  std::set<std::string> access_names_;
};

}  // namespace

Result<Draft> DraftMapping(const SourceSchema& schema, Source* source,
                           const DraftOptions& options) {
  return Drafter(schema, source, options).Run();
}

}  // namespace widen
