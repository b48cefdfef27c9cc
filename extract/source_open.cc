// Source::Open: the one place that names the engines, so that the Source
// interface (widen_source) links no database client library.
#include <fmt/format.h>

#include "extract/postgres_source.h"
#include "extract/source.h"
#ifdef WIDEN_WITH_MYSQL
#include "extract/mysql_source.h"
#endif

namespace widen {

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
