#include "cmd/design_util.h"

#include <cstdio>

#include <fmt/format.h>

#include "cmd/exit_codes.h"
#include "common/suggest.h"

namespace widen {

Result<std::unique_ptr<DesignInputs>> LoadDesign(const DesignLoadOptions& o) {
  auto in = std::make_unique<DesignInputs>();
  WIDEN_ASSIGN_OR_RETURN(in->mapping, load_mapping(o.mapping_path));
  Mapping& m = in->mapping;
  if (!o.only_table.empty() && m.FindTable(o.only_table) == nullptr) {
    std::vector<std::string> names;
    for (const auto& t : m.tables) names.push_back(t.name);
    return Status::NotFound(fmt::format("--table {}: the mapping {} has no such target table{}",
                                        o.only_table, m.file, DidYouMean(o.only_table, names)));
  }
  if (!o.open_source) return in;
  if (!o.source_url.empty()) {
    m.source_url = o.source_url;
  } else if (!m.source_problem.ok()) {
    return m.source_problem;
  }
  SourceOptions so;
  so.fetch_rows = o.fetch_rows;
  WIDEN_ASSIGN_OR_RETURN(in->source, Source::Open(m.source_url, so));
  WIDEN_ASSIGN_OR_RETURN(in->schema, in->source->Introspect());
  if (!o.make_plan) return in;
  WIDEN_ASSIGN_OR_RETURN(in->plan, Plan::Make(m, in->schema, in->source.get()));
  for (const TablePlan& tp : in->plan.tables) {
    if (o.only_table.empty() || tp.mapping->name == o.only_table) in->tables.push_back(&tp);
  }
  return in;
}

int FailWith(const Status& s) {
  std::fprintf(stderr, "widen: %s\n", s.message().c_str());
  return ExitCodeFor(s);
}

std::string HumanBytes(double b) {
  if (b < 1024) return fmt::format("{:.0f} B", b);
  if (b < 1024.0 * 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  if (b < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (b < 1024.0 * 1024 * 1024 * 1024) {
    return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  }
  return fmt::format("{:.2f} TiB", b / (1024.0 * 1024 * 1024 * 1024));
}

}  // namespace widen
