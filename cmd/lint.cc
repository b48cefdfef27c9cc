// widen lint: the mapping's design against HBase practice (docs/lint.md).
// Findings print like compiler diagnostics, `file:line:col: severity RULE:
// message`, each followed by its fix. Exit status 2 when there is an error,
// 0 with only warnings and notes.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "cmd/design_util.h"
#include "cmd/exit_codes.h"
#include "cmd/run.h"
#include "transform/lint.h"

namespace widen {

namespace {

using Json = nlohmann::ordered_json;

constexpr int kLintJsonFormat = 1;

}  // namespace

int RunLint(const LintCliOptions& o) {
  DesignRequest dr;
  dr.mapping_path = o.mapping_path;
  dr.source_url = o.source_url;
  dr.open_source = !o.no_source;
  LintOptions lopt;
  if (o.max_families > 0) lopt.max_families = o.max_families;
  if (o.max_family_name > 0) lopt.max_family_name_bytes = static_cast<size_t>(o.max_family_name);
  NamingPolicy policy;
  if (!o.policy_path.empty()) {
    auto p = load_policy(o.policy_path);
    if (!p.ok()) return FailWith(p.status());
    policy = std::move(*p);
    lopt.policy = &policy;
  }
  lopt.max_key_bytes = o.max_key_bytes;
  lopt.large_table_rows = o.large_table_rows;
  lopt.large_sync_rows = o.large_sync_rows;
  lopt.max_row_cells = o.max_row_cells;
  lopt.max_row_bytes = o.max_row_mib << 20;
  lopt.now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  for (const auto& id : o.disable) lopt.disabled.insert(id);
  auto run = LintDesign(dr, lopt);
  if (!run.ok()) {
    if (!o.no_source && run.status().code() == StatusCode::kUnavailable) {
      std::fprintf(stderr, "widen: %s (--no-source runs the rules that need no source)\n",
                   run.status().message().c_str());
      return ExitCodeFor(run.status());
    }
    return FailWith(run.status());
  }
  const Design& in = *run->design;
  const LintReport* report = &run->report;

  const int errors = report->errors();
  const int warnings = report->warnings();
  const int infos = static_cast<int>(report->findings.size()) - errors - warnings;
  if (o.format == "json") {
    Json doc;
    doc["widen_lint"] = kLintJsonFormat;
    doc["mapping"] = in.mapping.file;
    Json findings = Json::array();
    for (const auto& f : report->findings) {
      findings.push_back(Json{{"rule", f.rule},
                              {"severity", SeverityName(f.severity)},
                              {"file", f.loc.file},
                              {"line", f.loc.line},
                              {"column", f.loc.column},
                              {"table", f.table},
                              {"message", f.message},
                              {"fix", f.fix}});
    }
    doc["findings"] = findings;
    doc["notes"] = report->notes;
    doc["errors"] = errors;
    doc["warnings"] = warnings;
    doc["infos"] = infos;
    std::string s = doc.dump(2, ' ', false, Json::error_handler_t::replace);
    std::printf("%s\n", s.c_str());
  } else {
    std::string s;
    for (const auto& f : report->findings) {
      s += fmt::format("{}: {} {}: {}: {}\n    fix: {}\n", f.loc.ToString(),
                       SeverityName(f.severity), f.rule, f.table, f.message, f.fix);
    }
    for (const auto& n : report->notes) s += "note: " + n + "\n";
    s += fmt::format("{} error(s), {} warning(s), {} info\n", errors, warnings, infos);
    std::fwrite(s.data(), 1, s.size(), stdout);
  }
  std::fflush(stdout);
  return errors > 0 ? kExitInvalid : kExitOk;
}

CommandRunner AddLintCommand(CLI::App* app) {
  auto o = std::make_shared<LintCliOptions>();
  auto rules = std::make_shared<bool>(false);
  CLI::App* c = app->add_subcommand(
      "lint",
      "Check the mapping's design against HBase practice (rule id, severity, file:line, fix); "
      "exit 2 on errors");
  c->add_option("-m,--mapping", o->mapping_path, "Mapping YAML file");
  c->add_option("--source", o->source_url, "Source URL, overrides the mapping's 'source'");
  c->add_flag("--no-source", o->no_source,
              "Do not connect: run only the rules that need no source (E101, W102, W103, W107, "
              "E123)");
  c->add_option("--format", o->format, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  c->add_option("--disable", o->disable, "Rule ids not to report (repeat, or W103,W105)")
      ->delimiter(',');
  c->add_flag("--rules", *rules, "List the rules and exit");
  c->add_option("--policy", o->policy_path,
                "Naming policy file (docs/lint.md, \"Naming policy\"); replaces the mapping's "
                "'policy:' section");
  c->add_option("--max-families", o->max_families,
                "W102: more families than this warn (default: the policy's, 3)")
      ->check(CLI::Range(1, 100));
  c->add_option("--max-family-name", o->max_family_name,
                "W103: longer family names (bytes) warn (default: the policy's, 2)")
      ->check(CLI::Range(1, 127));
  c->add_option("--max-key-bytes", o->max_key_bytes, "W104: longer row keys (bytes) warn")
      ->check(CLI::Range(1, 1 << 20));
  c->add_option("--large-table-rows", o->large_table_rows,
                "W106: source tables with more rows should be pre-split")
      ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()));
  c->add_option("--large-sync-rows", o->large_sync_rows,
                "I121: source tables with more rows should say whether a watermark finds their "
                "changes")
      ->check(CLI::Range(int64_t{0}, std::numeric_limits<int64_t>::max()));
  c->add_option("--max-row-cells", o->max_row_cells, "W109: rows with more cells warn")
      ->check(CLI::Range(uint64_t{1}, std::numeric_limits<uint64_t>::max()));
  c->add_option("--max-row-mib", o->max_row_mib, "W109: rows larger than this (MiB) warn")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  return [o, c, rules]() -> int {
    if (!c->parsed()) return -1;
    if (*rules) {
      for (const auto& r : LintRules()) {
        std::printf("%s  %-7s  %s\n", r.id, SeverityName(r.severity), r.title);
      }
      return kExitOk;
    }
    if (o->mapping_path.empty()) {
      std::fprintf(stderr, "widen: lint needs -m MAPPING (see widen lint --help)\n");
      return kExitInvalid;
    }
    return RunLint(*o);
  };
}

}  // namespace widen
