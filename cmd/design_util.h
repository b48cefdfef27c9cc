// Shared by widen plan, lint and ddl: loading the mapping, opening the source
// read-only and planning, without ever touching the target.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "extract/source.h"
#include "mapping/mapping.h"
#include "transform/plan.h"

namespace widen {

/// A mapping with its source and plan. Heap-held: the plan points into the mapping.
struct DesignInputs {
  Mapping mapping;
  std::unique_ptr<Source> source;  // null when not opened
  SourceSchema schema;
  Plan plan;
  /// The plans of the tables asked for (all, or the one --table names).
  std::vector<const TablePlan*> tables;
};

struct DesignLoadOptions {
  std::string mapping_path;
  std::string source_url;  // overrides the mapping's source when set
  std::string only_table;  // one target table (empty = all)
  int fetch_rows = 5000;
  bool open_source = true;  // false: mapping only (no schema, no plan)
  bool make_plan = true;
};

/// Loads the mapping, checks --table, opens the source and plans. Every
/// error names what to fix (file:line:col, the table, the URL).
Result<std::unique_ptr<DesignInputs>> LoadDesign(const DesignLoadOptions& options);

/// "widen: <message>" on stderr; the exit code for the status.
int FailWith(const Status& status);

/// 1536 -> "1.5 KiB".
std::string HumanBytes(double bytes);

}  // namespace widen
