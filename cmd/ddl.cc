// widen ddl: HBase shell statements that create the mapping's target tables
// — create_namespace, create with every family option, SPLITS and the row
// key layout as METADATA — from the same TableDescriptors widen creates
// tables from. Paste the output into `hbase shell`, or run it with
// `hbase shell -n FILE`. With --apply, widen creates them in the target
// itself (hbase:// or leveldb:) instead.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cmd/commands.h"
#include "cmd/design_util.h"
#include "cmd/exit_codes.h"
#include "cmd/run.h"
#include "extract/source.h"
#include "store/hbase_ddl.h"
#include "transform/split_points.h"

namespace widen {

namespace {

// Creates `tables` in the target (their namespaces first), or checks that
// they exist as described; one line per table.
int ApplyDdl(const DdlOptions& o, const Mapping& mapping,
             const std::vector<TableDescriptor>& tables) {
  std::string url = o.target_url;
  if (url.empty()) {
    if (!mapping.target_problem.ok()) return FailWith(mapping.target_problem);
    url = mapping.target_url;
  }
  if (url.empty()) {
    return FailWith(Status::InvalidArgument(fmt::format(
        "{}: no target: set 'target' in the mapping or pass --target URL", mapping.file)));
  }
  if (o.no_metadata) {
    return FailWith(Status::InvalidArgument(
        "--no-metadata: widen creates tables with their row key layout; leave it out with "
        "--apply"));
  }
  auto applied = ApplyTables(url, tables);
  if (!applied.ok()) return FailWith(applied.status());
  // The target first: a forgotten --target shows here.
  std::printf("target: %s (%s)\n", MaskUrl(url).c_str(),
              o.target_url.empty() ? "the mapping's target" : "--target");
  for (const AppliedTable& t : *applied) {
    if (t.existed) {
      std::printf("%s: exists with the same families and row key layout\n", t.name.c_str());
    } else {
      std::printf("%s: created, %zu region(s)\n", t.name.c_str(), t.regions);
    }
  }
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace

int RunDdl(const DdlOptions& o) {
  DesignRequest dr;
  dr.mapping_path = o.mapping_path;
  dr.source_url = o.source_url;
  dr.only_table = o.only_table;
  SplitOptions so;
  so.regions = o.regions;
  so.sample_keys = o.sample_keys;
  so.max_rows = o.sample_rows;
  auto run = DesignTables(dr, so);
  if (!run.ok()) return FailWith(run.status());
  const Design& in = *run->design;

  std::string out = fmt::format("# widen ddl -m {}: {} table(s); paste into `hbase shell`\n",
                                in.mapping.file, in.tables.size());
  std::vector<TableDescriptor> descriptors;
  for (const DesignedTable& t : run->tables) {
    const TableDescriptor& d = t.descriptor;
    const TablePlan* tp = t.plan;
    const SplitPlan* split = &t.split;
    const size_t regions = d.split_points.size() + 1;
    if (split->method == "salt") {
      out += fmt::format("# {}: {} region(s) at salt bucket boundaries ({} buckets)\n",
                         d.FullName(), regions, tp->key.salt().size);
    } else if (split->method == "hash") {
      out += fmt::format("# {}: {} region(s), equal ranges of the {}-byte hash prefix\n",
                         d.FullName(), regions, tp->key.hash_prefix().size);
    } else if (split->method == "quantiles") {
      out += fmt::format(
          "# {}: {} region(s) from key quantiles ({} keys sampled from {} source rows)\n",
          d.FullName(), regions, split->keys_sampled, split->rows_read);
    } else {
      out += fmt::format("# {}: one region (no salt; pre-split with --regions N)\n", d.FullName());
    }
    descriptors.push_back(d);
  }
  if (o.apply) return ApplyDdl(o, in.mapping, descriptors);
  out += "# TTL 2147483647 is HBase's FOREVER; METADATA widen.key is the row key layout\n";
  HBaseDdlOptions ho;
  ho.metadata = !o.no_metadata;
  ho.create_namespaces = !o.no_namespace;
  out += HBaseShellDdl(descriptors, ho);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return kExitOk;
}

CommandRunner AddDdlCommand(CLI::App* app) {
  auto o = std::make_shared<DdlOptions>();
  CLI::App* c = app->add_subcommand(
      "ddl",
      "Print HBase shell statements (create_namespace, create with family options and SPLITS) "
      "for the mapping's tables");
  c->add_option("-m,--mapping", o->mapping_path, "Mapping YAML file")->required();
  c->add_option("--source", o->source_url, "Source URL, overrides the mapping's 'source'");
  c->add_option("--table", o->only_table, "Only this target table (ns:table)");
  c->add_option("--regions", o->regions,
                "Pre-split into N regions: salt bucket groups, hash prefix ranges, or key "
                "quantiles of the source rows")
      ->check(CLI::Range(0, 10000));
  c->add_option("--sample-keys", o->sample_keys, "Quantiles: row keys kept in the sample")
      ->check(CLI::Range(uint64_t{100}, uint64_t{100000000}));
  c->add_option("--sample-rows", o->sample_rows,
                "Quantiles: read at most this many source rows (0 = all; the first rows are not "
                "a random sample)")
      ->check(CLI::Range(uint64_t{0}, std::numeric_limits<uint64_t>::max()));
  c->add_flag("--no-metadata", o->no_metadata, "Leave out METADATA (the widen.key row key layout)");
  c->add_flag("--no-namespace", o->no_namespace, "Leave out create_namespace");
  c->add_flag("--apply", o->apply,
              "Create the namespaces and tables in the target (hbase://HOST:PORT or "
              "leveldb:PATH) instead of printing statements; an existing table must have the "
              "same families and row key layout");
  c->add_option("--target", o->target_url, "With --apply: target URL, overrides the mapping's");
  return [o, c] { return c->parsed() ? RunDdl(*o) : -1; };
}

}  // namespace widen
