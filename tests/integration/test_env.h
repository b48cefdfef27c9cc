// Helpers for integration tests against the real servers that
// scripts/with-servers.sh starts: connection URLs from the environment, fresh
// databases, loading SQL files with psql, running the widen binary, and
// reading a target table back through the store API.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace widen::testing {

/// WIDEN_TEST_PG_URL, or "" when unset. With CI=true an unset URL is a test
/// failure (never a skip); callers use WIDEN_REQUIRE_PG.
std::string PgUrl();
bool InCi();

/// WIDEN_TEST_MYSQL_URL (mysql://widen@127.0.0.1:PORT/mysql), or "" when
/// unset; callers use WIDEN_REQUIRE_MYSQL.
std::string MySqlUrl();

/// `url` with its database replaced by `db`.
std::string WithDatabase(const std::string& url, const std::string& db);

/// Drops and creates a database named `base` + "_" + this process's id on the
/// server of `url`; returns its URL.
std::string FreshPgDatabase(const std::string& url, const std::string& db);

/// Runs `psql -v ON_ERROR_STOP=1 -f file` against `url`; fails the test on error.
void RunPsqlFile(const std::string& url, const std::string& file);

/// Loads a dataset script that creates and switches to its own database
/// (DROP/CREATE DATABASE, \c) into the database of `url` instead.
void RunPsqlScript(const std::string& url, const std::string& file);

/// Runs a SQL query and returns its rows as tab-separated text lines.
std::vector<std::vector<std::string>> PgQuery(const std::string& url, const std::string& sql);

/// Drops and creates a MySQL/MariaDB database named `base` + "_" + this
/// process's id (utf8mb4) on the server of `url`; returns its URL.
std::string FreshMySqlDatabase(const std::string& url, const std::string& base);

/// Runs the mariadb (or mysql) client with `file` as input against the
/// database of `url`, client charset utf8mb4; fails the test on error. With
/// `strip_database_switch`, a dataset script's own DROP/CREATE DATABASE and
/// USE lines are left out so it loads where we say.
void RunMySqlFile(const std::string& url, const std::string& file,
                  bool strip_database_switch = false);

/// Runs SQL statements (`;`-separated is not split: one statement per
/// element) on one connection with SET NAMES utf8mb4 and time_zone '+00:00',
/// returning the rows of the last one as text exactly as the server prints
/// them ("<NULL>" for NULL; binary bytes unchanged).
std::vector<std::vector<std::string>> MySqlQuery(const std::string& url,
                                                 const std::vector<std::string>& statements);
std::vector<std::vector<std::string>> MySqlQuery(const std::string& url, const std::string& sql);

/// One connection to a test database kept open across statements, so a test
/// can hold a transaction open (BEGIN, writes, and COMMIT later) while other
/// connections and processes work. PostgreSQL through libpqxx; MySQL/MariaDB
/// through Connector/C++ with SET NAMES utf8mb4 and time_zone '+00:00', as
/// MySqlQuery. Statements run one at a time, as given, in autocommit unless
/// the test opens a transaction itself. Not thread safe.
class SqlSession {
 public:
  /// Connects to `url` (postgresql:// or mysql://). On error: a test failure
  /// and nullptr.
  static std::unique_ptr<SqlSession> Open(const std::string& url);
  virtual ~SqlSession() = default;
  /// Runs one statement; a failure is a test failure (ADD_FAILURE naming it).
  virtual void Exec(const std::string& sql) = 0;
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};
/// Runs a shell command line, capturing output.
CommandResult RunCommand(const std::string& command);
/// Path of the built widen binary.
std::string WidenBinary();
/// A new empty directory under the system temp dir.
std::string MakeTempDir();
std::string SourceDir();
/// The shared datasets folder (WIDEN_DATASETS, else ../shared/datasets beside the repo).
std::string DatasetsDir();

/// All live cells of `table` in store `url`: row -> "family:qualifier" -> value.
using TableCells = std::map<std::string, std::map<std::string, std::string>>;
TableCells ReadTable(const std::string& store_url, const std::string& table);

/// One live cell as read back, with its timestamp.
struct CellRecord {
  std::string row;
  std::string column;  // "family:qualifier"
  int64_t timestamp_ms = 0;
  std::string value;
};
/// The live cells of `table` in store `url`, in the store's order (row,
/// family, qualifier ascending; versions newest first): up to `max_versions`
/// versions per column (the store caps it at the family's VERSIONS), of the
/// rows that start with `row_prefix` (raw bytes; "" = every row).
std::vector<CellRecord> ReadCells(const std::string& store_url, const std::string& table,
                                  int max_versions = 1, const std::string& row_prefix = "");

/// Single-quoted for the shell.
std::string ShellQuote(const std::string& s);

}  // namespace widen::testing

#define WIDEN_REQUIRE_MYSQL(url)                                                          \
  std::string url = ::widen::testing::MySqlUrl();                                         \
  if (url.empty()) {                                                                      \
    if (::widen::testing::InCi()) FAIL() << "WIDEN_TEST_MYSQL_URL is not set under CI";   \
    GTEST_SKIP() << "WIDEN_TEST_MYSQL_URL not set (run through scripts/with-servers.sh)"; \
  }

#define WIDEN_REQUIRE_PG(url)                                                          \
  std::string url = ::widen::testing::PgUrl();                                         \
  if (url.empty()) {                                                                   \
    if (::widen::testing::InCi()) FAIL() << "WIDEN_TEST_PG_URL is not set under CI";   \
    GTEST_SKIP() << "WIDEN_TEST_PG_URL not set (run through scripts/with-servers.sh)"; \
  }
