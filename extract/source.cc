#include "extract/source.h"

#include <fmt/format.h>

#include "extract/postgres_source.h"
#ifdef WIDEN_WITH_MYSQL
#include "extract/mysql_source.h"
#endif

namespace widen {

const SourceColumn* SourceTable::FindColumn(const std::string& n) const {
  for (const auto& c : columns) {
    if (c.name == n) return &c;
  }
  return nullptr;
}

const SourceTable* SourceSchema::FindTable(const std::string& n) const {
  for (const auto& t : tables) {
    if (t.name == n) return &t;
  }
  return nullptr;
}

Result<SourceTable> Source::DescribeQuery(const std::string&) {
  return Status::InvalidArgument("free-form queries are not supported by the " + dialect() +
                                 " source yet");
}

Status Source::CheckScan(const ScanSpec& spec) { return Scan(spec).status(); }

Result<std::vector<GroupCount>> Source::LargestGroups(const ScanSpec&,
                                                      const std::vector<ColumnExpr>&, int) {
  return Status::InvalidArgument("counting rows per group is not supported by the " + dialect() +
                                 " source");
}

Result<ColumnSummary> Source::SummarizeColumn(const ScanSpec&, const ColumnExpr&) {
  return Status::InvalidArgument("summarizing a column is not supported by the " + dialect() +
                                 " source");
}

std::string MaskUrl(const std::string& url) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  size_t at = url.find('@', scheme + 3);
  if (at == std::string::npos) return url;
  size_t colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

Result<std::unique_ptr<Source>> Source::Open(const std::string& url, const SourceOptions& options) {
  if (url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0) {
    WIDEN_ASSIGN_OR_RETURN(auto pg, PostgresSource::Open(url, options));
    return std::unique_ptr<Source>(std::move(pg));
  }
  if (url.rfind("mysql://", 0) == 0 || url.rfind("mariadb://", 0) == 0) {
#ifdef WIDEN_WITH_MYSQL
    WIDEN_ASSIGN_OR_RETURN(auto my, MySqlSource::Open(url, options));
    return std::unique_ptr<Source>(std::move(my));
#else
    return Status::InvalidArgument(fmt::format(
        "source '{}': the MySQL/MariaDB extractor is not part of this build yet", MaskUrl(url)));
#endif
  }
  return Status::InvalidArgument(
      fmt::format("source '{}': unknown URL scheme (expected postgresql://USER@HOST:PORT/DB or "
                  "mysql://USER@HOST:PORT/DB)",
                  MaskUrl(url)));
}

}  // namespace widen
