// Helpers of the MySQL/MariaDB reader that need no server: the URL, identifier
// quoting, the column-type rules (information_schema type -> widen type) and
// the parsers for the server's text protocol output. Internal to extract/.
//
// The reader uses the text protocol (every value as the server prints it,
// with the session pinned to utf8mb4 and time_zone '+00:00'); docs/types.md
// lists each type, its widen type and text form.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/value.h"

namespace widen::mysql_internal {

/// The parts of `mysql://USER[:PASSWORD]@HOST[:PORT]/DB` (also mariadb://).
/// User, password and database are percent-decoded; `[v6]` hosts lose their
/// brackets. `has_password` tells an empty password from none.
struct MySqlUrl {
  std::string user;
  std::string password;
  bool has_password = false;
  std::string host;
  int port = 3306;
  std::string database;
};

/// InvalidArgument (naming the masked URL) when the URL is malformed or has
/// no database.
Result<MySqlUrl> ParseMySqlUrl(const std::string& url);

/// `name` in backticks, with backticks inside doubled.
std::string QuoteIdent(std::string_view name);

/// How the reader selects, decodes, orders and compares a column. One kind
/// per information_schema DATA_TYPE family.
enum class ColumnKind : uint8_t {
  kInt,        // TINYINT..BIGINT signed, unsigned up to INT, YEAR     -> kInt
  kUInt,       // BIGINT UNSIGNED, BIT(n)                              -> kUInt
  kFloat,      // FLOAT: selected as CAST(x AS DOUBLE), widened exactly -> kFloat
  kDouble,     // DOUBLE / REAL                                        -> kFloat
  kDecimal,    // DECIMAL / NUMERIC: exact text                        -> kDecimal
  kText,       // CHAR, VARCHAR, *TEXT, ENUM, SET (UTF-8 on the wire)  -> kText
  kJson,       // JSON (MySQL), LONGTEXT CHECK (json_valid(x)) (MariaDB) -> kJson
  kBytes,      // BINARY, VARBINARY, *BLOB                             -> kBytes
  kGeometry,   // spatial types: SRID (4 bytes LE) + WKB               -> kBytes
  kDate,       // DATE                                                 -> kDate
  kDateTime,   // DATETIME                                             -> kTimestamp
  kTimestamp,  // TIMESTAMP (read in UTC)                              -> kTimestampTz
  kTime,       // TIME, may be negative or beyond 24 h                 -> kTime
  kOther,      // anything else (MariaDB UUID, INET6, ...): text form  -> kOther
};

/// The kind of a column from information_schema.COLUMNS DATA_TYPE and
/// COLUMN_TYPE (any case); `is_json` when a CHECK (json_valid(col)) marks a
/// MariaDB JSON column.
ColumnKind KindForColumn(std::string_view data_type, std::string_view column_type, bool is_json);

/// The widen type a kind's non-zero values have (zero and partial dates
/// become kOther, see ParseValue).
ValueType TypeForKind(ColumnKind kind);

/// Decodes the server's text form of a non-NULL value of `kind` into *out.
/// DATE, DATETIME and TIMESTAMP values that are not calendar dates (zero
/// dates `0000-00-00`, partial dates `2020-00-15`, invalid dates allowed by
/// ALLOW_INVALID_DATES) are kept as kOther holding the server's exact text,
/// never shifted. Returns false when the text does not have the kind's form.
bool ParseValue(ColumnKind kind, std::string_view text, Value* out);

/// "YYYY-MM-DD" with a real calendar date -> days since 1970-01-01.
bool ParseCalendarDate(std::string_view s, int64_t* days);
/// "YYYY-MM-DD HH:MM:SS[.ffffff]" with a real calendar date -> microseconds.
bool ParseDateTime(std::string_view s, int64_t* micros);

}  // namespace widen::mysql_internal
