// libFuzzer target: the mapping loader. Every command reads its mapping
// file with load_mapping, which checks the input limits (mapping/
// yaml_limits_internal.h) and parses the text with ParseMapping; `widen
// lint` then runs its rules, those that need no source without one. For any
// bytes:
//   - nothing crashes, leaks, hits undefined behaviour or runs past
//     libFuzzer's time and memory limits (scripts/fuzz.sh), and no
//     exception escapes: every failure is a Status;
//   - a refused mapping is InvalidArgument, its message starts with the file
//     name, is one line of printable text, and the "FILE:LINE:COL" it
//     starts with is a place in the text;
//   - an accepted mapping holds what docs/mapping.md promises (each table
//     named once and found by its name, families, key parts and their
//     ranges, every column reference naming a column, columns in a
//     declared family, nests at most two deep, one sync entry per source
//     table, lookbacks that print back as themselves), every location is a
//     place in the text, and lint without a source succeeds with known
//     rule ids.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <set>
#include <string>
#include <string_view>

#include "mapping/mapping.h"
#include "tests/fuzz/fuzz_check.h"
#include "transform/lint.h"

namespace widen::fuzz {
namespace {

constexpr char kFile[] = "fuzz.yaml";

// The places of the text: line 1..lines, column 1..longest+1 (lines end at
// '\n', as the YAML reader counts them; a lone '\r' is a character).
struct TextShape {
  int lines = 1;
  int longest = 0;
  explicit TextShape(std::string_view text) {
    int column = 0;
    for (char c : text) {
      if (c == '\n') {
        ++lines;
        column = 0;
      } else {
        longest = std::max(longest, ++column);
      }
    }
  }
  bool Holds(int line, int column) const {
    return line >= 1 && line <= lines && column >= 1 && column <= longest + 1;
  }
};

std::string Where(const SourceLocation& loc) { return loc.ToString(); }

void CheckLoc(const TextShape& shape, const SourceLocation& loc, const char* what) {
  ASSERT_INVARIANT(loc.file == kFile, std::string(what) + " names file '" + loc.file + "'");
  ASSERT_INVARIANT(shape.Holds(loc.line, loc.column),
                   std::string(what) + " at " + Where(loc) + ", outside the text");
}

// `message` is one line of printable text: no control characters (C0,
// DEL, C1 as UTF-8), which a terminal would act on.
void CheckPrintable(const std::string& message) {
  for (size_t i = 0; i < message.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(message[i]);
    const bool c1 = c == 0xC2 && i + 1 < message.size() &&
                    static_cast<unsigned char>(message[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(message[i + 1]) <= 0x9F;
    ASSERT_INVARIANT(c >= 0x20 && c != 0x7F && !c1,
                     "control character " + std::to_string(c) + " in the message: " + message);
  }
}

// The "fuzz.yaml:LINE:COL" a message starts with, when it does, is a place
// in the text. (Only the first: the rest of a message may quote the text,
// which can hold anything that looks like a place.)
void CheckMessagePlace(const TextShape& shape, const std::string& message) {
  const std::string head = std::string(kFile) + ":";
  if (message.rfind(head, 0) != 0) return;
  size_t i = head.size();
  auto number = [&](long* out) {
    const size_t from = i;
    *out = 0;
    while (i < message.size() && message[i] >= '0' && message[i] <= '9' && i - from < 9) {
      *out = *out * 10 + (message[i++] - '0');
    }
    return i > from;
  };
  long line = 0, column = 0;
  if (!number(&line) || i >= message.size() || message[i] != ':') return;
  ++i;
  if (!number(&column)) return;
  ASSERT_INVARIANT(shape.Holds(static_cast<int>(line), static_cast<int>(column)),
                   "the message names a place outside the text: " + message);
}

// A column reference names a column ("column" or "alias.column"); an
// optional one (a version) may be unset, both sides empty.
void CheckRef(const ColumnRef& ref, bool optional, const std::string& where) {
  if (optional && ref.alias.empty() && ref.column.empty()) return;
  ASSERT_INVARIANT(!ref.column.empty(),
                   "a reference to no column ('" + ref.ToString() + "') at " + where);
}

void CheckKey(const TextShape& shape, const KeySpec& key, const std::string& table) {
  ASSERT_INVARIANT(!key.parts.empty(), "table '" + table + "' has a key without parts");
  ASSERT_INVARIANT(key.salt.size == 0 || (key.salt.size >= 2 && key.salt.size <= 256),
                   "salt buckets " + std::to_string(key.salt.size));
  ASSERT_INVARIANT(
      key.hash_prefix.size == 0 || (key.hash_prefix.size >= 1 && key.hash_prefix.size <= 8),
      "hash prefix bytes " + std::to_string(key.hash_prefix.size));
  for (const KeyPart& p : key.parts) {
    CheckLoc(shape, p.loc, "a key part");
    ASSERT_INVARIANT(p.width >= 0 && p.width <= 4096, "width " + std::to_string(p.width));
    if (p.is_literal) {
      ASSERT_INVARIANT(!p.desc && !p.reverse && !p.type,
                       "a literal part with desc, reverse or type");
    } else {
      CheckRef(p.column, false, Where(p.loc));
    }
    if (key.form == KeyForm::kText) {
      ASSERT_INVARIANT(!p.desc, "desc in a text key, at " + Where(p.loc));
      ASSERT_INVARIANT(p.on_null != KeyNullRule::kMarker, "on_null marker in a text key");
    }
  }
}

bool HasFamily(const TableMapping& t, const std::string& family) {
  for (const FamilySpec& f : t.families) {
    if (f.name == family) return true;
  }
  return false;
}

void CheckNest(const TextShape& shape, const TableMapping& t, const NestSpec& n, int depth) {
  CheckLoc(shape, n.loc, "a nest");
  ASSERT_INVARIANT(depth <= 2,
                   "a nest " + std::to_string(depth) + " levels deep at " + Where(n.loc));
  ASSERT_INVARIANT(!n.table.empty(), "a nest without a table at " + Where(n.loc));
  ASSERT_INVARIANT(!n.on.empty(), "a nest without 'on' at " + Where(n.loc));
  ASSERT_INVARIANT(!n.id.empty(), "a nest without id parts at " + Where(n.loc));
  ASSERT_INVARIANT(HasFamily(t, n.family), "a nest into undeclared family '" + n.family + "'");
  CheckRef(n.version, true, Where(n.loc));
  for (const NestValue& v : n.values) CheckRef(v.column, false, Where(v.loc));
  for (const KeyPart& p : n.id) {
    if (!p.is_literal) CheckRef(p.column, false, Where(p.loc));
  }
  if (n.form == KeyForm::kText && n.id.size() > 1) {
    ASSERT_INVARIANT(!n.id_separator.empty(),
                     "text id parts without a separator at " + Where(n.loc));
  }
  for (const NestSpec& child : n.nests) CheckNest(shape, t, child, depth + 1);
}

void CheckMapping(const TextShape& shape, const Mapping& m) {
  ASSERT_INVARIANT(m.file == kFile, "the mapping names file '" + m.file + "'");
  ASSERT_INVARIANT(!m.tables.empty(), "a mapping without tables");
  if (m.timestamp_ms) {
    ASSERT_INVARIANT(*m.timestamp_ms >= 0 && *m.timestamp_ms < INT64_MAX,
                     "timestamp_ms out of range");
  }
  for (const TableMapping& t : m.tables) {
    CheckLoc(shape, t.loc, "a table");
    ASSERT_INVARIANT(!t.name.empty() && !t.from.empty(), "a table without a name or from");
    ASSERT_INVARIANT(m.FindTable(t.name) == &t, "table '" + t.name + "' is not found by its name");
    ASSERT_INVARIANT(!t.families.empty(), "table '" + t.name + "' has no family");
    std::set<std::string> families;
    for (const FamilySpec& f : t.families) {
      CheckLoc(shape, f.loc, "a family");
      ASSERT_INVARIANT(families.insert(f.name).second, "family '" + f.name + "' declared twice");
      ASSERT_INVARIANT(f.ttl_seconds >= 0, "a negative TTL");
    }
    CheckKey(shape, t.key, t.name);
    CheckRef(t.version, true, Where(t.loc));
    for (const JoinSpec& j : t.joins) {
      for (const auto& on : j.on) CheckRef(on.first, false, Where(j.loc));
    }
    for (const ColumnSpec& c : t.columns) {
      CheckLoc(shape, c.loc, "a column");
      CheckRef(c.column, false, Where(c.loc));
      CheckRef(c.version, true, Where(c.loc));
      ASSERT_INVARIANT(HasFamily(t, c.family),
                       "column at " + Where(c.loc) + " in undeclared family '" + c.family + "'");
    }
    for (const NestSpec& n : t.nests) CheckNest(shape, t, n, 1);
  }
  std::set<std::string> synced;
  for (const SyncSpec& s : m.sync) {
    CheckLoc(shape, s.loc, "a sync entry");
    ASSERT_INVARIANT(synced.insert(s.table).second, "two sync entries for '" + s.table + "'");
    ASSERT_INVARIANT(m.FindSync(s.table) == &s,
                     "sync entry '" + s.table + "' not found by its table");
    const SyncLookback& lb = s.lookback;
    ASSERT_INVARIANT(lb.amount >= 0, "a negative lookback");
    if (lb.given && lb.unit == LookbackUnit::kMilliseconds) {
      ASSERT_INVARIANT(lb.amount <= kMaxLookbackMs, "a lookback over the limit");
      int64_t ms = -1;
      ASSERT_INVARIANT(ParseDurationMs(DurationText(lb.amount), &ms) && ms == lb.amount,
                       "lookback " + std::to_string(lb.amount) + " ms prints as '" +
                           DurationText(lb.amount) + "', which does not read back");
    }
    if (lb.given && lb.unit == LookbackUnit::kValues) {
      ASSERT_INVARIANT(lb.amount <= kMaxLookbackValues, "a lookback over the limit");
    }
  }
  const std::vector<std::string> sources = m.SourceTables();
  ASSERT_INVARIANT(std::set<std::string>(sources.begin(), sources.end()).size() == sources.size(),
                   "SourceTables() lists a table twice");

  std::set<std::string> rule_ids;
  for (const LintRule& r : LintRules()) rule_ids.insert(r.id);
  Result<LintReport> report = Lint(m, nullptr, LintOptions{});
  ASSERT_INVARIANT(report.ok(), "lint without a source failed: " + report.status().ToString());
  for (const LintFinding& f : report->findings) {
    ASSERT_INVARIANT(rule_ids.count(f.rule) == 1, "lint finding of unknown rule '" + f.rule + "'");
    if (f.loc.line != 0) CheckLoc(shape, f.loc, "a lint finding");
  }
}

void Run(std::string_view data) {
  const std::string text(data);
  const TextShape shape(text);
  Result<Mapping> m = ParseMapping(text, kFile);
  if (!m.ok()) {
    const Status& s = m.status();
    ASSERT_INVARIANT(s.code() == StatusCode::kInvalidArgument, s.ToString());
    ASSERT_INVARIANT(s.message().rfind(kFile, 0) == 0,
                     "the message does not name the file: " + s.message());
    CheckMessagePlace(shape, s.message());
    CheckPrintable(s.message());
    return;
  }
  // A problem with `source`/`target` is kept for the commands that need them.
  for (const Status* p : {&m->source_problem, &m->target_problem}) {
    if (p->ok()) continue;
    CheckMessagePlace(shape, p->message());
    CheckPrintable(p->message());
  }
  CheckMapping(shape, *m);
}

}  // namespace
}  // namespace widen::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return widen::fuzz::RunInput(widen::fuzz::Run, data, size);
}
