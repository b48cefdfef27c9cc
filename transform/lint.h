// Lint: checks a mapping's design against HBase practice and reports
// findings, each with a stable rule id, a severity, the place in the mapping
// (file:line:col), what is wrong and how to fix it. docs/lint.md lists every
// rule with an example.
//
// Rules that need only the mapping (names, family count and names) always
// run. Rules that need the source run when a Source is given: its schema
// (types, nullability, primary keys, row estimates) and a few read-only
// aggregate queries (children per parent, the oldest version). When a query
// is not supported by the source, or there is no source, the rule is skipped
// and a note says so. A mapping that does not resolve against the source (an
// unknown column) is itself a finding (E100), and the rules that need the
// plan are skipped.
//
// Thread safety: one Lint call per thread; the Source is used by it alone.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "extract/source.h"
#include "mapping/mapping.h"

namespace widen {

enum class Severity { kError, kWarning, kInfo };

/// "error", "warning", "info".
const char* SeverityName(Severity s);

struct LintFinding {
  std::string rule;  // stable id, e.g. "W105"
  Severity severity = Severity::kWarning;
  SourceLocation loc;  // where in the mapping
  std::string table;   // target table ("" for the whole mapping)
  std::string message;
  std::string fix;
};

struct LintOptions {
  /// W102: more column families than this; unset = the naming policy's (default 3).
  std::optional<int> max_families;
  /// W103: longer family names; unset = the naming policy's family max_bytes (default 2).
  std::optional<size_t> max_family_name_bytes;
  /// The naming policy (E123, W102, W103); null = the mapping's `policy:`
  /// (the default policy when it has none). Not owned; outlives the Lint call.
  const NamingPolicy* policy = nullptr;
  int max_key_bytes = 100;              // W104: estimated longest row key
  int64_t large_table_rows = 10000000;  // W106: driving rows without pre-split
  int64_t large_sync_rows = 1000000;    // I121: source rows synced in digest mode
  uint64_t max_row_cells = 100000;      // W109: estimated cells in one row
  uint64_t max_row_bytes = 10u << 20;   // W109: estimated bytes of one row
  int64_t now_ms = 0;                   // W108: the clock for TTLs (ms since the epoch)
  uint64_t sample_rows = 200;           // W109: rows sampled for the size of nested cells
  std::set<std::string> disabled;       // rule ids not to report
};

struct LintReport {
  std::vector<LintFinding> findings;  // in mapping order, then by rule
  std::vector<std::string> notes;     // rules skipped, and why
  int errors() const;
  int warnings() const;
};

/// One row of the rule catalogue (docs/lint.md has the long form).
struct LintRule {
  const char* id;
  Severity severity;
  const char* title;
};
/// Every rule, by id; a view of a constant table.
std::span<const LintRule> LintRules();

/// Checks `mapping`; `source` may be null (rules that need it are skipped).
/// Fails only when the source cannot be read (Unavailable, ...).
Result<LintReport> Lint(const Mapping& mapping, Source* source, const LintOptions& options);

}  // namespace widen
