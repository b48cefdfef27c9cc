// Parsers for PostgreSQL's text output formats (with DateStyle ISO, TimeZone
// UTC, bytea_output hex), shared by the reader and its tests. Internal.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/value.h"

namespace widen::pg_internal {

/// widen's type for a PostgreSQL type OID (base type of a domain already
/// resolved); kOther for anything unlisted (its text form is kept).
ValueType TypeForOid(uint32_t oid);

/// Parses `text` (the server's text form of a non-NULL value of type `oid`)
/// into *out. Returns false when the text is not of the expected form.
bool ParseText(uint32_t oid, std::string_view text, Value* out);

/// "YYYY-MM-DD[ BC]" -> days since 1970-01-01.
bool ParseDate(std::string_view s, int64_t* days);
/// "YYYY-MM-DD HH:MM:SS[.f][+HH[:MM[:SS]]][ BC]" -> microseconds since the epoch,
/// offset applied (so the result is UTC for timestamptz).
bool ParseTimestamp(std::string_view s, int64_t* micros);
/// "[-]HH:MM:SS[.f]" -> microseconds.
bool ParseTime(std::string_view s, int64_t* micros);
/// "\x0a0b..." -> bytes.
bool ParseByteaHex(std::string_view s, std::string* out);

/// `url` (a postgresql:// URI) with `password` added as its `password`
/// parameter (%-escaped), unless `password` is null or the URL has a password
/// of its own. libpq falls back to PGPASSWORD and ~/.pgpass only without one.
std::string WithPassword(const std::string& url, const char* password);

/// `url` with connect_timeout=10 (seconds) unless it sets one: a server that
/// accepts but never answers fails the run instead of hanging it.
std::string WithConnectTimeout(const std::string& url);

/// `url` with TCP keepalives on (keepalives=1, keepalives_idle=60,
/// keepalives_interval=10, keepalives_count=6: a peer gone silent is found
/// within about 2 minutes) and tcp_user_timeout=120000 (ms: data the server
/// does not acknowledge for 2 minutes ends the connection), each unless the
/// URL sets it.
std::string WithConnectionDefaults(const std::string& url);

}  // namespace widen::pg_internal
