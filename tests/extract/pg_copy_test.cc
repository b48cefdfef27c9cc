// SplitCopyRow against the text format of PostgreSQL's COPY ("COPY", "Text
// Format"): fields, NULL against '', and every escape the format defines.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "extract/pg_copy_internal.h"

namespace widen::pg_internal {
namespace {

struct Split {
  bool ok = false;
  std::vector<std::string> values;  // "<NULL>" for a NULL
};

Split Cut(std::string_view line) {
  std::vector<std::string_view> fields;
  std::vector<bool> nulls;
  std::vector<std::string> scratch;
  Split s;
  s.ok = SplitCopyRow(line, &fields, &nulls, &scratch);
  for (size_t i = 0; i < fields.size(); ++i) {
    s.values.push_back(nulls[i] ? "<NULL>" : std::string(fields[i]));
  }
  return s;
}

TEST(PgCopyTest, FieldsAndNulls) {
  Split s = Cut("1\t\\N\t\tabc");
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.values, (std::vector<std::string>{"1", "<NULL>", "", "abc"}));
  s = Cut("");
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.values, (std::vector<std::string>{""}));
  s = Cut("\t");
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.values, (std::vector<std::string>{"", ""}));
  // A text that reads \N is written \\N: a value, not NULL.
  s = Cut("\\\\N\t\\N");
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.values, (std::vector<std::string>{"\\N", "<NULL>"}));
}

TEST(PgCopyTest, Escapes) {
  Split s = Cut("a\\tb\\nc\\rd\\\\e\\bf\\fg\\vh");
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.values, (std::vector<std::string>{"a\tb\nc\rd\\e\bf\fg\vh"}));
  // Octal (1 to 3 digits) and hex (1 or 2 digits) bytes; any other
  // character after a backslash stands for itself.
  s = Cut("\\0\\101\\1010\\x41\\x4142\\xg\\q");
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.values, (std::vector<std::string>{std::string("\0", 1) + "AA0AA42xgq"}));
  // bytea's hex output: its backslash doubled.
  s = Cut("\\\\x00ff\t7");
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.values, (std::vector<std::string>{"\\x00ff", "7"}));
  EXPECT_FALSE(Cut("abc\\").ok);
}

TEST(PgCopyTest, ReusesItsVectorsAcrossRows) {
  std::vector<std::string_view> fields;
  std::vector<bool> nulls;
  std::vector<std::string> scratch;
  ASSERT_TRUE(SplitCopyRow("a\\tb\tc\td", &fields, &nulls, &scratch));
  ASSERT_EQ(fields.size(), 3u);
  ASSERT_TRUE(SplitCopyRow("x\t\\N", &fields, &nulls, &scratch));
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0], "x");
  EXPECT_TRUE(nulls[1]);
}

}  // namespace
}  // namespace widen::pg_internal
