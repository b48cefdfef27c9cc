// Queries in error messages: whole when short, else cut to their start.
#include <gtest/gtest.h>

#include <string>

#include "extract/source_internal.h"

namespace widen::source_internal {
namespace {

TEST(SqlForMessageTest, AShortQueryIsWhole) {
  const std::string sql = "SELECT a FROM t WHERE id IN ($1, $2)";
  EXPECT_EQ(SqlForMessage(sql), sql);
  const std::string limit(kSqlInMessageBytes, 'x');
  EXPECT_EQ(SqlForMessage(limit), limit);
}

TEST(SqlForMessageTest, ALongQueryIsCutAndSaysItsSize) {
  std::string sql = "SELECT a FROM t WHERE id IN (";
  for (int i = 1; i <= 500; ++i) sql += "$" + std::to_string(i) + ", ";
  sql += "$501)";
  const std::string m = SqlForMessage(sql);
  EXPECT_EQ(m, sql.substr(0, kSqlInMessageBytes) + "... (" + std::to_string(sql.size()) +
                   " bytes in all)");
  EXPECT_LT(m.size(), kSqlInMessageBytes + 40);
}

TEST(SqlForMessageTest, NeverCutsInsideAUtf8Character) {
  // "é" (C3 A9) starts one byte before the limit: the cut is before it.
  const std::string sql = std::string(kSqlInMessageBytes - 1, 'a') + "\xC3\xA9" + "bbbb";
  EXPECT_EQ(SqlForMessage(sql), std::string(kSqlInMessageBytes - 1, 'a') + "... (" +
                                    std::to_string(sql.size()) + " bytes in all)");
}

}  // namespace
}  // namespace widen::source_internal
