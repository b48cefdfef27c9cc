// SourceStats: the aggregate queries widen asks a source's database for,
// apart from the streaming Source interface: the largest groups of rows
// (widen lint: children per parent, versions per cell) and the range of a
// column's values (widen lint: the age of version columns, values that do
// not fit a key; parallel jobs: the bounds to split rows on). Each is one
// query the server answers, reading no row data into widen.
//
// A Source hands out its SourceStats (Source::stats()); the PostgreSQL and
// MySQL sources implement both interfaces. Sources that cannot aggregate
// answer InvalidArgument "... not supported by the <dialect> source", which
// callers report as a skipped check.
//
// Thread safety: as the Source it belongs to (one thread).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/value.h"
#include "extract/source.h"

namespace widen {

/// A group of rows sharing the values of some columns, and its size.
struct GroupCount {
  Row key;           // the group's values, in group_by order
  int64_t rows = 0;  // rows in the group
};

/// The range of one column's values over the rows of a scan.
struct ColumnSummary {
  Value min;             // smallest non-NULL value; NULL when there is none
  Value max;             // largest non-NULL value; NULL when there is none
  int64_t rows = 0;      // rows of the scan
  int64_t non_null = 0;  // rows where the column is not NULL
};

class SourceStats {
 public:
  virtual ~SourceStats() = default;

  /// The `limit` largest groups of the rows `spec` selects (its table or
  /// query, joins, where, not_null, range and bound apply; its columns,
  /// merge links and order_by do not), grouped by `group_by`, biggest
  /// first: one GROUP BY that the server runs. Text columns with is_text
  /// group by their bytes, others as the server compares them.
  /// InvalidArgument when group_by is empty or limit < 1, or the engine
  /// cannot run it; the errors of Source::Scan otherwise.
  virtual Result<std::vector<GroupCount>> LargestGroups(const ScanSpec& spec,
                                                        const std::vector<ColumnExpr>& group_by,
                                                        int limit) = 0;

  /// The `limit` largest groups of the rows `spec` selects whose merge keys
  /// of the links `links` (indexes into spec.merge, seen from the rows'
  /// side) are equal: rows a nest merge cannot tell apart, equal as the
  /// database's `=` of each link compares them (MySQL: in the link's
  /// collation, with its padding rule; PostgreSQL: the rows' own values).
  /// GroupCount::key holds each link column's value (one of the group's).
  /// The default answers InvalidArgument "... not supported ..."; errors as
  /// LargestGroups otherwise.
  virtual Result<std::vector<GroupCount>> LargestLinkGroups(const ScanSpec& spec,
                                                            const std::vector<size_t>& links,
                                                            int limit);

  /// Smallest and largest value of `column` and the row counts over the rows
  /// `spec` selects (as for LargestGroups), by one aggregate query on the
  /// server. Text min/max compare as unsigned bytes on MySQL and in the
  /// server's collation on PostgreSQL. Errors as LargestGroups.
  virtual Result<ColumnSummary> SummarizeColumn(const ScanSpec& spec, const ColumnExpr& column) = 0;

  /// The largest value of `column` over the rows `spec` selects (NULL when
  /// there is none), by one aggregate query an index on the column answers
  /// without reading the table (widen sync's watermarks). For columns that
  /// are not text. The default takes SummarizeColumn's max.
  virtual Result<Value> HighestValue(const ScanSpec& spec, const ColumnExpr& column);
};

/// A SourceStats that answers every query with InvalidArgument naming
/// `dialect` ("counting rows per group is not supported by the <dialect>
/// source"): what Source::stats() gives by default.
class UnsupportedStats : public SourceStats {
 public:
  explicit UnsupportedStats(std::string dialect) : dialect_(std::move(dialect)) {}
  Result<std::vector<GroupCount>> LargestGroups(const ScanSpec& spec,
                                                const std::vector<ColumnExpr>& group_by,
                                                int limit) override;
  Result<ColumnSummary> SummarizeColumn(const ScanSpec& spec, const ColumnExpr& column) override;

 private:
  std::string dialect_;
};

}  // namespace widen
