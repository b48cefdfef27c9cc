// How PostgreSQL errors become Status codes: by SQLSTATE, never by message
// text (which the server translates to its lc_messages). Internal to extract/.
//
//   class 08 (connection exception)        Unavailable: the connection is gone
//   class 28 (invalid authorization)       Unauthenticated
//   42501 (insufficient privilege)         PermissionDenied
//   3D000 (invalid catalog name)           NotFound: no such database
//   class 40 (transaction rollback:        Unavailable: retry
//     serialization failure, deadlock)
//   class 53 (insufficient resources),     Unavailable: the server cannot
//   55P03 (lock not available), 55006        serve now; retry later
//   (object in use), class 57 (operator
//   intervention: query canceled by a
//   timeout or an administrator, shutdown),
//   class 58 (system error)
//   class XX (internal error)              Internal
//   anything else (class 42 syntax and     InvalidArgument: the mapping's
//   undefined names, 22 data, 0A, 25 ...)    query or data must change
//
// Thread safety: pure functions.
#pragma once

#include <exception>
#include <string>
#include <string_view>

#include "common/status.h"

namespace widen::pg_internal {

/// The Status code for a five-character SQLSTATE (table above);
/// InvalidArgument for "" (an error the server did not report).
StatusCode CodeForSqlState(std::string_view sqlstate);

/// The SQLSTATE of an exception libpqxx threw: pqxx::sql_error's own; where
/// libpqxx 6 leaves it out of a typed error, the state its type stands for
/// (insufficient_privilege 42501, insufficient_resources 53000, ...); for the
/// errors it raises as other types, likewise (broken_connection 08006,
/// too_many_connections 53300, in_doubt_error 08007, serialization_failure
/// 40001, deadlock_detected 40P01, statement_completion_unknown 40003,
/// another transaction_rollback 40000). "" for any other exception.
std::string SqlStateOf(const std::exception& e);

/// A libpq message written with PQERRORS_VERBOSE ("FATAL:  28P01: password
/// authentication failed ...\nLOCATION:  ...") in the default form
/// ("FATAL:  password authentication failed ..."), and the first SQLSTATE
/// found in it in *sqlstate ("" when none: the server sent no error).
std::string FromVerboseMessage(std::string_view message, std::string* sqlstate);

/// `message` (lines ended by '\n') without the lines a server error points
/// into its query with: "LINE 3: ...WHERE x = 1" and the line under it
/// that holds only blanks and a '^'. Every other line is kept as it is.
std::string WithoutQueryPointer(std::string_view message);

}  // namespace widen::pg_internal
