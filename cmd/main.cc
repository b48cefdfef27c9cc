// widen: migrate relational databases into wide-column stores.
#include <sys/stat.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "cmd/cli_doc.h"
#include "cmd/commands.h"
#include "cmd/exit_codes.h"
#include "cmd/hidden_args.h"
#include "cmd/version.h"
#include "extract/server_watch.h"
#include "transform/cell_timestamp.h"

namespace {

// What a command printed must have been written: an error writing stdout (a
// full disk, a file that went away) fails the run with kExitOutput and a
// message; a pipe or socket whose reader went away (`widen scan | head`) is
// normal and leaves the command's exit code as it was.
int FinishOutput(int rc) {
  errno = 0;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return rc;
  const int err = errno;
  struct stat st;
  if (err == EPIPE ||
      (fstat(STDOUT_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))) {
    return rc;
  }
  // The failed write may have been an earlier one, whose errno is gone.
  std::fprintf(stderr, "widen: writing the output failed: %s\n",
               err != 0 ? std::strerror(err) : "a full disk, or a file that went away?");
  return rc == widen::kExitOk || rc == widen::kExitReplaced || rc == widen::kExitDifferent
             ? widen::kExitOutput
             : rc;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace widen;
  // Writing to a pipe whose reader went away fails with EPIPE (FinishOutput)
  // instead of killing the process.
  std::signal(SIGPIPE, SIG_IGN);
  // First of all: a password in a URL argument leaves the process list.
  const std::vector<std::string> args = HidePasswordsInArgs(argc, argv);
  std::vector<const char*> arg_ptrs;
  for (const std::string& a : args) arg_ptrs.push_back(a.c_str());

  CLI::App app{
      "widen: migrate a PostgreSQL or MySQL database into a wide-column store (the "
      "embedded LevelDB store, with HBase's cell model, or HBase through its Thrift2 gateway), "
      "following a DDI mapping"};
  app.require_subcommand(1);
  app.set_version_flag("--version", WidenVersionLine(),
                       "Print the version and the source commit, and exit");

  MigrateOptions mo;
  auto* migrate =
      app.add_subcommand("migrate", "Run the mapping once: read the source, write the target");
  migrate->add_option("-m,--mapping", mo.mapping_path, "Mapping YAML file")->required();
  migrate->add_option("--source", mo.source_url, "Source URL, overrides the mapping's 'source'");
  migrate->add_option("--target", mo.target_url, "Target URL, overrides the mapping's 'target'");
  migrate->add_option("--table", mo.only_table, "Migrate only this target table (ns:table)");
  migrate
      ->add_option("--rejects", mo.rejects_path,
                   "Write rows that cannot be encoded to this file (JSON lines) and go on, "
                   "instead of stopping at the first")
      ->check(NonEmptyPath());
  migrate
      ->add_option("--timestamp-ms", mo.timestamp_ms,
                   "Timestamp of every cell in ms since the epoch (default: the mapping's "
                   "timestamp_ms, else the run's start time)")
      ->check(CLI::Range(kMinCellTimestampMs, kMaxCellTimestampMs));
  migrate
      ->add_option("--fetch-rows", mo.fetch_rows,
                   "Rows per round trip: MySQL's page size, PostgreSQL's cursor fetch for scans "
                   "with bound values (the others stream through COPY) (default 5000)")
      ->check(CLI::Range(1, 1000000));
  migrate
      ->add_option("-j,--jobs", mo.jobs,
                   "Parallel jobs per table: the driving rows are split into ranges of an "
                   "integer key read on one snapshot by as many connections (default 1); at "
                   "most one job per two cores the run may use (WIDEN_CORES=N, else the "
                   "processors the process may run on)")
      ->check(CLI::Range(1, 64));
  migrate
      ->add_option("--writers", mo.writers,
                   "HBase: putMultiple requests in flight per table, each on its own connection "
                   "to the gateway (default 4; the embedded store ignores it)")
      ->check(CLI::Range(1, kMaxWriters));
  migrate->add_option("--shard", mo.shard,
                      "I/N: load the I-th of N disjoint ranges of each table, while N - 1 other "
                      "widen processes load the others into the same HBase (see README, "
                      "\"Loading HBase from several machines\")");
  migrate->add_flag("-q,--quiet", mo.quiet, "No progress line and no summary");
  migrate->add_option("--metrics-file", mo.metrics_path, kMetricsFileHelp)->check(NonEmptyPath());

  ReadOptionsCli so;
  auto* scan =
      app.add_subcommand("scan", "Print a target table's cells as HBase's shell shows a scan");
  scan->add_option("table", so.table, "Target table (ns:table)")->required();
  scan->add_option("-m,--mapping", so.mapping_path, "Mapping file (for its target)");
  scan->add_option("--target", so.target_url, "Target URL (leveldb:PATH or hbase://HOST:PORT)");
  scan->add_option("--limit", so.limit, "Rows to print at most (0 = all)")
      ->check(CLI::Range(int64_t{0}, std::numeric_limits<int64_t>::max()));
  scan->add_option("--prefix", so.prefix, "Only rows starting with this (\\xNN for bytes)");
  scan->add_option("--start-row", so.start_row, "First row (inclusive)");
  scan->add_option("--stop-row", so.stop_row, "Stop before this row (exclusive)");
  scan->add_option("--versions", so.versions, "Versions per column")->check(CLI::Range(1, 1 << 30));
  scan->add_flag("--decode", so.decode, "Show each row key decoded into its named parts");

  ReadOptionsCli go;
  auto* get = app.add_subcommand("get", "Print one row as HBase's shell shows a get");
  get->add_option("table", go.table, "Target table (ns:table)")->required();
  get->add_option("row", go.row, "Row key (\\xNN for bytes)")->required();
  get->add_option("-m,--mapping", go.mapping_path, "Mapping file (for its target)");
  get->add_option("--target", go.target_url, "Target URL (leveldb:PATH or hbase://HOST:PORT)");
  get->add_option("--versions", go.versions, "Versions per column")->check(CLI::Range(1, 1 << 30));
  get->add_flag("--decode", go.decode, "Show the row key decoded into its named parts");

  static std::atomic<bool> interrupted{false};
  const CommandRunner sync = AddSyncCommand(&app, &interrupted);
  const CommandRunner verify = AddVerifyCommand(&app, &interrupted);
  const CommandRunner design[] = {AddInitCommand(&app), AddPlanCommand(&app), AddLintCommand(&app),
                                  AddDdlCommand(&app), AddRepairCommand(&app)};

  // widen __doc and __complete (cmd/cli_doc.h): for the build and the shell
  // completions; not in --help.
  if (IsHiddenCommand(args)) return FinishOutput(RunHiddenCommand(app, args));
  // An unknown command word would otherwise read as "a subcommand is required".
  auto known = [&](const char* name) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == name) return true;
    }
    return false;
  };
  if (argc > 1 && args[1][0] != '-' && !known(args[1].c_str())) {
    std::fprintf(
        stderr,
        "widen: unknown command '%s' (expected init, migrate, sync, verify, plan, lint, ddl, "
        "scan, get or repair; see widen --help)\n",
        MaskArgsIn(args[1], args).c_str());
    return kExitInvalid;
  }
  try {
    app.parse(argc, arg_ptrs.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "widen: %s (see widen --help)\n", MaskArgsIn(e.what(), args).c_str());
    return kExitInvalid;
  }

  try {
    if (*migrate || app.got_subcommand("sync") || app.got_subcommand("verify")) {
      std::signal(SIGINT, [](int) { interrupted.store(true); });
      std::signal(SIGTERM, [](int) { interrupted.store(true); });
      // A run waiting on a source server sees the flag only when the server
      // answers: the watcher closes the source connections instead.
      WatchInterrupts(&interrupted);
    }
    if (*migrate) return FinishOutput(RunMigrate(mo, &interrupted));
    if (const int rc = sync(); rc >= 0) return FinishOutput(rc);
    if (const int rc = verify(); rc >= 0) return FinishOutput(rc);
    if (*scan) return FinishOutput(RunScan(so));
    if (*get) return FinishOutput(RunGet(go));
    for (const auto& run : design) {
      if (const int rc = run(); rc >= 0) return FinishOutput(rc);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "widen: internal error: %s\n", e.what());
    return kExitInternal;
  }
  return kExitInvalid;
}
