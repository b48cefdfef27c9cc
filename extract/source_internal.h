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

/// `sql` for an error message: whole up to kSqlInMessageBytes, else its
/// start, cut at a character boundary, then "... (N bytes in all)" — a
/// rebuild batch's query binds hundreds of values and would fill a screen.
inline constexpr size_t kSqlInMessageBytes = 300;
std::string SqlForMessage(const std::string& sql);

}  // namespace widen::source_internal
