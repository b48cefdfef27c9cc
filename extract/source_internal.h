// Helpers shared by the Source implementations for their aggregate queries
// (LargestGroups, SummarizeColumn). Internal to extract/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "extract/source.h"
#include "extract/source_stats.h"

namespace widen::source_internal {

/// `spec`'s rows (table or query, joins, where, not_null) selecting `columns`,
/// without order: the rows an aggregate runs over.
ScanSpec Unordered(const ScanSpec& spec, std::vector<ColumnExpr> columns);

/// A scan of the derived query `sql` whose output columns are `names`.
ScanSpec OverQuery(std::string sql, const std::vector<std::string>& names);

/// Reads the rows of a LargestGroups query: the group columns, then the count.
Result<std::vector<GroupCount>> ReadGroups(RowStream* rows);

/// Reads the one row of a SummarizeColumn query: min, max, rows, non-NULL rows.
Result<ColumnSummary> ReadSummary(RowStream* rows);

}  // namespace widen::source_internal
