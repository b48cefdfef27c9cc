// widen init: a first mapping drafted from the source's foreign-key graph,
// as commented YAML (transform/draft.h; docs/design.md). The draft is read
// back and linted against the source before it is written: a draft lint
// reports an error in is a bug, and is not written.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cmd/atomic_file.h"
#include "cmd/commands.h"
#include "cmd/design_util.h"
#include "cmd/exit_codes.h"
#include "cmd/run.h"

namespace widen {

namespace {

// The mapping's JSON Schema beside this executable: installed
// (PREFIX/bin/widen, PREFIX/share/widen/mapping.schema.json) or in the
// source tree it was built in (build/cmd/widen, docs/); "" when neither.
std::string SchemaBesideExecutable() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (const char* rel : {"../share/widen/mapping.schema.json", "../../docs/mapping.schema.json"}) {
    const std::filesystem::path p = (exe.parent_path() / rel).lexically_normal();
    if (std::filesystem::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

}  // namespace

int RunInit(const InitOptions& o) {
  if (!o.output_path.empty() && std::filesystem::is_directory(o.output_path)) {
    std::fprintf(stderr, "widen: -o %s: a folder, not a file (name the mapping file to write)\n",
                 o.output_path.c_str());
    return kExitInvalid;
  }
  if (!o.output_path.empty() && !o.force && std::filesystem::exists(o.output_path)) {
    std::fprintf(stderr,
                 "widen: -o %s: the file exists (a mapping you may have edited); --force "
                 "replaces it\n",
                 o.output_path.c_str());
    return kExitInvalid;
  }
  // The draft's file first (through AtomicFile: written whole, links
  // followed): a folder it cannot go to is named before the source is read.
  if (Status s = CheckOutputPaths({{"--policy", o.policy_path}}, {{"-o", o.output_path}}, "",
                                  o.target_url);
      !s.ok()) {
    return FailWith(s);
  }
  std::unique_ptr<AtomicFile> out;
  if (!o.output_path.empty()) {
    auto file = AtomicFile::Create(o.output_path, "-o");
    if (!file.ok()) return FailWith(file.status());
    out = std::move(file).value();
  }
  InitRequest r;
  r.source_url = o.source_url;
  r.fetch_rows = 5000;
  r.file_name = o.output_path.empty() ? "the draft" : o.output_path;
  r.draft.tables = o.tables;
  r.draft.roots = o.roots;
  r.draft.name_space = o.name_space;
  r.draft.target_url = o.target_url;
  r.draft.policy = NamingPolicy::Default();
  r.draft.schema_ref = SchemaBesideExecutable();
  if (!o.policy_path.empty()) {
    auto p = load_policy(o.policy_path);
    if (!p.ok()) return FailWith(p.status());
    r.draft.policy = std::move(*p);
    r.draft.policy_file = o.policy_path;
  }
  auto run = DraftDesign(r);
  if (!run.ok()) return FailWith(run.status());
  if (run->report.errors() > 0) {
    std::string s =
        "widen: the draft has lint errors (a bug in widen init; the draft is not "
        "written):\n";
    for (const auto& f : run->report.findings) {
      if (f.severity != Severity::kError) continue;
      s += fmt::format("{}: {} {}: {}: {}\n", f.loc.ToString(), SeverityName(f.severity), f.rule,
                       f.table, f.message);
    }
    s += run->draft.yaml + "\n";
    std::fwrite(s.data(), 1, s.size(), stderr);
    return kExitInternal;
  }
  const std::string text = run->draft.yaml + "\n";
  if (o.output_path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    if (std::ferror(stdout)) return FailWith(Status::LocalIo("cannot write the draft to stdout"));
  } else if (Status s = out->Write(text); !s.ok()) {
    return FailWith(s);
  } else if (s = out->Commit(); !s.ok()) {
    return FailWith(s);
  }
  if (!o.quiet) {
    const std::string file = o.output_path.empty() ? "MAPPING" : ShellWord(o.output_path);
    std::string s =
        fmt::format("widen: drafted {} target table(s){}; lint: 0 errors, {} warning(s)\n",
                    run->draft.target_tables, o.output_path.empty() ? "" : " into " + o.output_path,
                    run->report.warnings());
    for (const auto& l : run->draft.left_out) s += "widen: not mapped: " + l + "\n";
    if (!run->draft.without_statistics.empty()) {
      s += fmt::format(
          "widen: no row counts in the statistics of {}: the draft's comments lack "
          "their averages and a large table gets no salt; run ANALYZE (MySQL: "
          "ANALYZE TABLE) and init again\n",
          fmt::join(run->draft.without_statistics, ", "));
    }
    s += fmt::format("next: widen lint -m {0}{1}; widen plan -m {0}; widen migrate -m {0}\n", file,
                     o.policy_path.empty() ? "" : " --policy " + ShellWord(o.policy_path));
    std::fwrite(s.data(), 1, s.size(), stderr);
  }
  return kExitOk;
}

CommandRunner AddInitCommand(CLI::App* app) {
  auto o = std::make_shared<InitOptions>();
  CLI::App* c = app->add_subcommand(
      "init",
      "Draft a commented mapping from the source's foreign keys (roots, nests, joins, keys, "
      "families, access patterns); it lints without errors");
  c->add_option("--source", o->source_url, "Source URL (postgresql://... or mysql://...)")
      ->required();
  c->add_option("--tables", o->tables, "Only these source tables (T1,T2,...)")->delimiter(',');
  c->add_option("--root", o->roots,
                "Make exactly these tables the target tables (repeat, or T1,T2); the others "
                "nest under them where a NOT NULL foreign key leads")
      ->delimiter(',');
  c->add_option("--namespace", o->name_space,
                "Namespace of the target tables (default: the database's name)");
  c->add_option("--target", o->target_url, "The draft's target (default leveldb:out/NAMESPACE)");
  c->add_option(
      "--policy", o->policy_path,
      "Naming policy file (docs/lint.md, \"Naming policy\"): the draft's names follow it");
  c->add_option("-o,--output", o->output_path, "Write the draft here (default: stdout)");
  c->add_flag("--force", o->force, "Replace the -o file when it exists");
  c->add_flag("-q,--quiet", o->quiet, "No summary on stderr");
  return [o, c] { return c->parsed() ? RunInit(*o) : -1; };
}

}  // namespace widen
