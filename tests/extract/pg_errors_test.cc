// PostgreSQL errors coded by SQLSTATE (the codes from PostgreSQL's
// errcodes.txt, Appendix A of its manual), and libpq's verbose connection
// messages read back.
#include <gtest/gtest.h>

#include <pqxx/except>

#include "extract/pg_errors_internal.h"

namespace widen::pg_internal {
namespace {

TEST(PgErrorsTest, CodesFollowTheSqlStateClass) {
  EXPECT_EQ(CodeForSqlState("08006"), StatusCode::kUnavailable);      // connection_failure
  EXPECT_EQ(CodeForSqlState("08P01"), StatusCode::kUnavailable);      // protocol_violation
  EXPECT_EQ(CodeForSqlState("28P01"), StatusCode::kUnauthenticated);  // invalid_password
  EXPECT_EQ(CodeForSqlState("28000"), StatusCode::kUnauthenticated);  // no such role
  EXPECT_EQ(CodeForSqlState("42501"), StatusCode::kPermissionDenied);
  EXPECT_EQ(CodeForSqlState("3D000"), StatusCode::kNotFound);     // invalid_catalog_name
  EXPECT_EQ(CodeForSqlState("40001"), StatusCode::kUnavailable);  // serialization_failure
  EXPECT_EQ(CodeForSqlState("40P01"), StatusCode::kUnavailable);  // deadlock_detected
  EXPECT_EQ(CodeForSqlState("53300"), StatusCode::kUnavailable);  // too_many_connections
  EXPECT_EQ(CodeForSqlState("55P03"), StatusCode::kUnavailable);  // lock_not_available
  EXPECT_EQ(CodeForSqlState("57014"), StatusCode::kUnavailable);  // query_canceled
  EXPECT_EQ(CodeForSqlState("57P01"), StatusCode::kUnavailable);  // admin_shutdown
  EXPECT_EQ(CodeForSqlState("XX000"), StatusCode::kInternal);
  EXPECT_EQ(CodeForSqlState("42601"), StatusCode::kInvalidArgument);  // syntax_error
  EXPECT_EQ(CodeForSqlState("42P01"), StatusCode::kInvalidArgument);  // undefined_table
  EXPECT_EQ(CodeForSqlState("42703"), StatusCode::kInvalidArgument);  // undefined_column
  EXPECT_EQ(CodeForSqlState("22P02"), StatusCode::kInvalidArgument);  // invalid_text_representation
  EXPECT_EQ(CodeForSqlState("25006"), StatusCode::kInvalidArgument);  // read_only_sql_transaction
  EXPECT_EQ(CodeForSqlState(""), StatusCode::kInvalidArgument);
}

TEST(PgErrorsTest, StatesOfLibpqxxExceptions) {
  EXPECT_EQ(SqlStateOf(pqxx::sql_error("boom", "SELECT 1", "42P01")), "42P01");
  EXPECT_EQ(SqlStateOf(pqxx::insufficient_privilege("no", "SELECT 1", "42501")), "42501");
  // As libpqxx 6 throws them: without the state.
  EXPECT_EQ(SqlStateOf(pqxx::insufficient_privilege("no", "SELECT 1")), "42501");
  EXPECT_EQ(SqlStateOf(pqxx::out_of_memory("oom", "SELECT 1")), "53200");
  EXPECT_EQ(SqlStateOf(pqxx::too_many_connections("full")), "53300");
  EXPECT_EQ(SqlStateOf(pqxx::broken_connection("gone")), "08006");
  EXPECT_EQ(SqlStateOf(pqxx::deadlock_detected("dl")), "40P01");
  EXPECT_EQ(SqlStateOf(pqxx::serialization_failure("sf")), "40001");
  EXPECT_EQ(SqlStateOf(std::runtime_error("other")), "");
}

TEST(PgErrorsTest, TheServersPointerIntoTheQueryIsDropped) {
  EXPECT_EQ(WithoutQueryPointer("ERROR:  syntax error at or near \"x\"\nLINE 1: SELECT x y z\n"
                                "                 ^\nHINT:  h\n"),
            "ERROR:  syntax error at or near \"x\"\nHINT:  h\n");
  EXPECT_EQ(WithoutQueryPointer("FATAL:  terminating connection\nLINE 12: ...id = 3\n    ^"),
            "FATAL:  terminating connection\n");
  // Lines that only look like one are kept.
  const std::string kept = "LINE: no number\nLINE 1 no colon\n  ^ and more\nxLINE 1: x\n";
  EXPECT_EQ(WithoutQueryPointer(kept), kept);
  EXPECT_EQ(WithoutQueryPointer(""), "");
}

TEST(PgErrorsTest, VerboseMessagesReadBackInTheirDefaultForm) {
  std::string state;
  EXPECT_EQ(FromVerboseMessage("connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  "
                               "28P01: password authentication failed for user \"u\"\n"
                               "LOCATION:  auth_failed, auth.c:326\n",
                               &state),
            "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  password "
            "authentication failed for user \"u\"\n");
  EXPECT_EQ(state, "28P01");
  EXPECT_EQ(FromVerboseMessage("FATAL:  3D000: database \"nope\" does not exist\nDETAIL:  x\n"
                               "LOCATION:  InitPostgres, postinit.c:885\n",
                               &state),
            "FATAL:  database \"nope\" does not exist\nDETAIL:  x\n");
  EXPECT_EQ(state, "3D000");
  // A client-side failure has no state and stays as it is.
  const std::string refused =
      "connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n\tIs the "
      "server running on that host and accepting TCP/IP connections?\n";
  EXPECT_EQ(FromVerboseMessage(refused, &state), refused);
  EXPECT_EQ(state, "");
  // Text that only looks like a state later in the line is left alone.
  EXPECT_EQ(FromVerboseMessage("could not translate host name \"ab:  12345: x\"", &state),
            "could not translate host name \"ab:  12345: x\"");
}

}  // namespace
}  // namespace widen::pg_internal
