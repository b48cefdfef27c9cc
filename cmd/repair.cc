// widen repair: copies what can still be read of a damaged embedded store
// into a new store (store/leveldb_repair.h) and prints what was lost. The
// damaged store is never changed.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "cmd/commands.h"
#include "cmd/design_util.h"
#include "cmd/exit_codes.h"
#include "store/leveldb_repair.h"

namespace widen {

namespace {

struct RepairOptions {
  std::string target_url;  // leveldb:PATH, the damaged store
  std::string into_url;    // leveldb:NEWPATH, the new store
};

constexpr std::string_view kLevelDbScheme = "leveldb:";

Result<std::string> LevelDbPath(const char* option, const std::string& url) {
  if (url.substr(0, kLevelDbScheme.size()) != kLevelDbScheme ||
      url.size() == kLevelDbScheme.size()) {
    return Status::InvalidArgument(fmt::format(
        "{} '{}': repair works on the embedded store, leveldb:PATH (HBase repairs its own "
        "files: hbase hbck)",
        option, url));
  }
  return url.substr(kLevelDbScheme.size());
}

int RunRepair(const RepairOptions& o) {
  auto from = LevelDbPath("--target", o.target_url);
  if (!from.ok()) return FailWith(from.status());
  auto into = LevelDbPath("--into", o.into_url);
  if (!into.ok()) return FailWith(into.status());
  auto report = RepairLevelDbStore(*from, *into);
  if (!report.ok()) return FailWith(report.status());

  std::string out = fmt::format(
      "widen repair: read '{}' (left as it was) into the new store '{}'\n", *from, *into);
  if (report->damage.empty()) out += "damaged: nothing found\n";
  for (const std::string& d : report->damage) out += "damaged: " + d + "\n";
  if (report->header_rewritten) out += "damaged: the store header was lost; written again\n";
  if (!report->set_aside.empty()) {
    out += fmt::format("set aside in '{}/lost' (not read by the new store):", *into);
    for (const std::string& f : report->set_aside) out += " " + f;
    out += "\n";
  }
  out += fmt::format("{:<32} {:>12} {:>12}  {}\n", "table", "rows", "cells", "state");
  for (const RepairedTable& t : report->tables) {
    std::string state = t.previous.empty() ? "(none)" : t.previous;
    if (t.marked) state = "repaired (was " + state + ")";
    out += fmt::format("{:<32} {:>12} {:>12}  {}\n", t.name, t.rows, t.cells, state);
  }
  for (const std::string& t : report->tables_without_descriptor) {
    out += fmt::format(
        "lost: the descriptor of table '{}' (its cells remain but cannot be read; "
        "run migrate again to create it)\n",
        t);
  }
  if (report->lost_cells) {
    out +=
        "lost: the cells of the unreadable parts above; how many is not known (a store keeps no "
        "count of its cells). The rows and cells above are what the new store holds. Every "
        "table is marked repaired: run `widen migrate` into the new store to write the lost "
        "cells again\n";
  } else {
    out += "lost: nothing (every log record and table block read back)\n";
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace

CommandRunner AddRepairCommand(CLI::App* app) {
  auto o = std::make_shared<RepairOptions>();
  CLI::App* c = app->add_subcommand(
      "repair",
      "Copy what can be read of a damaged embedded store into a new store and say what was "
      "lost (the damaged store is left as it is)");
  c->add_option("--target", o->target_url, "The damaged store, leveldb:PATH")->required();
  c->add_option("--into", o->into_url, "The new store, leveldb:NEWPATH (new or empty)")->required();
  return [o, c] { return c->parsed() ? RunRepair(*o) : -1; };
}

}  // namespace widen
