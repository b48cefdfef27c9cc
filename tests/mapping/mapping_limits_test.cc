// The bounds on reading a mapping, as docs/mapping.md ("Limits") states
// them: 1 MiB of text, lists and maps 64 deep, 100,000 nodes once aliases
// are expanded, 1,000 aliases. Each is tried just under (not refused for
// it) and just over (refused, naming the file, the place and the limit,
// after little CPU).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "mapping/mapping.h"

namespace widen {
namespace {

// A valid mapping of 22 YAML nodes (maps, lists and scalars, keys included)
// before the items of its `columns` list, which is last.
constexpr char kHead[] = R"(source: postgresql://u@h/db
target: leveldb:x
tables:
  - name: t
    from: item
    families: [d]
    key: {parts: [id]}
    columns: )";
constexpr int kHeadNodes = 22;
constexpr int kColumnsLine = 8;
constexpr size_t kColumnsCol = 14;  // 1-based column of the text after "columns: "

constexpr char kLimitWords[] = "a limit of widen's mapping reader";

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// The status of parsing `yaml`, and the CPU seconds it took.
struct Outcome {
  Status status;
  double cpu_seconds;
};
Outcome Parse(const std::string& yaml) {
  const double before = CpuSeconds();
  auto m = ParseMapping(yaml, "m.yaml");
  return Outcome{m.ok() ? Status::OK() : m.status(), CpuSeconds() - before};
}

// A flow list of `n` distinct column names.
std::string Columns(int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ",c" : "c") + std::to_string(i);
  return s + "]\n";
}

bool Mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST(MappingLimitsTest, SizeUpToOneMiBIsRead) {
  std::string y = std::string(kHead) + "[c1]\n#";
  const size_t limit = 1 << 20;
  y.append(limit - y.size() - 1, 'x').push_back('\n');
  ASSERT_EQ(y.size(), limit);
  Outcome at = Parse(y);
  EXPECT_TRUE(at.status.ok()) << at.status.ToString();

  y.insert(y.size() - 1, "x");
  Outcome over = Parse(y);
  EXPECT_EQ(over.status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(over.status,
                       "m.yaml: the mapping is 1048577 bytes, more than the limit of "
                       "1 MiB (1048576 bytes)"))
      << over.status.ToString();
  EXPECT_LT(over.cpu_seconds, 0.1);
}

TEST(MappingLimitsTest, AFileFarOverTheSizeIsRefusedWithoutReadingIt) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("widen_limits_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/big.yaml";
  {
    std::ofstream out(path, std::ios::binary);
    out << kHead << "[c1]\n";
    const std::string line = "# " + std::string(1021, 'x') + "\n";
    for (int i = 0; i < 16 * 1024; ++i) out << line;  // 16 MiB more
  }
  const double before = CpuSeconds();
  auto m = load_mapping(path);
  const double cpu = CpuSeconds() - before;
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(m.status(), path + ": the mapping is " +
                                       std::to_string(std::filesystem::file_size(path)) +
                                       " bytes, more than the limit of 1 MiB"))
      << m.status().ToString();
  EXPECT_LT(cpu, 0.1);
  std::filesystem::remove_all(dir);
}

// A mapping is UTF-8 text of YAML's printable characters. The fuzz target
// found that a text starting with 0x00 made the YAML reader guess UTF-16 or
// UTF-32 and name a column past the end of a 72-byte file; Latin-1 bytes
// passed through into names and SQL.
TEST(MappingLimitsTest, TextIsUtf8OfPrintableCharacters) {
  const std::string found = std::string(1, '\0') + std::string(63, '\xad') + std::string(8, '\0');
  Outcome o = Parse(found);
  EXPECT_EQ(o.status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(o.status.message().rfind("m.yaml:1:1: character U+0000 is not printable: a mapping "
                                     "is UTF-8 text",
                                     0),
            0u)
      << o.status.ToString();

  // "[c1, \"caf" is 9 bytes after the column where `columns` starts.
  const std::string col = std::to_string(kColumnsCol + 9);
  const std::string where = "m.yaml:" + std::to_string(kColumnsLine) + ":" + col + ": ";
  const std::pair<std::string, std::string> bad[] = {
      {"\xe9", "byte 0xE9 is not UTF-8"},              // Latin-1
      {"\xc3\xa9\xc3", "byte 0xC3 is not UTF-8"},      // cut short (at the second é)
      {"\xc0\xa9", "byte 0xC0 is not UTF-8"},          // overlong
      {"\xed\xa0\x80", "byte 0xED is not UTF-8"},      // a surrogate
      {"\xf4\x90\x80\x80", "byte 0xF4 is not UTF-8"},  // beyond U+10FFFF
      {"\x07", "character U+0007 is not printable"},
      {"\x1b[2J", "character U+001B is not printable"},
      {"\xc2\x9b", "character U+009B is not printable"},  // C1 control
  };
  for (const auto& [bytes, why] : bad) {
    const std::string y = std::string(kHead) + "[c1, \"caf" + bytes + "\"]\n";
    Outcome r = Parse(y);
    EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument);
    const std::string want = bytes == "\xc3\xa9\xc3"
                                 ? "m.yaml:" + std::to_string(kColumnsLine) + ":" +
                                       std::to_string(kColumnsCol + 11) + ": " + why
                                 : where + why;
    EXPECT_EQ(r.status.message().rfind(want, 0), 0u) << r.status.ToString();
  }

  // UTF-8 with a byte order mark, tabs, CRLF line ends and characters of
  // every length is read.
  const std::string good = "\xef\xbb\xbf" + std::string(kHead) +
                           "[c1, \"caf\xc3\xa9\", \"\xe2\x82\xac\", \"\xf0\x9f\x98\x80\","
                           "\t\"\xc2\xa0x\"]\r\n";
  auto m = ParseMapping(good, "m.yaml");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->tables[0].columns.size(), 5u);
  EXPECT_EQ(m->tables[0].columns[1].column.column, "caf\xc3\xa9");
  EXPECT_EQ(m->tables[0].columns[3].column.column, "\xf0\x9f\x98\x80");
}

TEST(MappingLimitsTest, NodesUpTo100000AreRead) {
  Outcome at = Parse(kHead + Columns(100000 - kHeadNodes));
  EXPECT_TRUE(at.status.ok()) << at.status.ToString();

  Outcome over = Parse(kHead + Columns(100000 - kHeadNodes + 1));
  EXPECT_EQ(over.status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(over.status, "more than 100000 YAML nodes")) << over.status.ToString();
  EXPECT_TRUE(Mentions(over.status, "m.yaml:8:")) << over.status.ToString();
  EXPECT_LT(over.cpu_seconds, 0.5);
}

// Lists inside `columns` (the loader refuses them for what they are; the
// reader must not refuse them for their depth up to 64).
std::string Nested(int lists) {
  return std::string(kHead) + std::string(lists, '[') + "c" + std::string(lists, ']') + "\n";
}

TEST(MappingLimitsTest, NestingUpTo64DeepIsRead) {
  // The root map, `tables` and the table's map are three levels.
  Outcome at = Parse(Nested(64 - 3));
  EXPECT_EQ(at.status.code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(Mentions(at.status, kLimitWords)) << at.status.ToString();

  Outcome over = Parse(Nested(64 - 3 + 1));
  EXPECT_EQ(over.status.code(), StatusCode::kInvalidArgument);
  // The 65th level is the 62nd '[' after "columns: ".
  EXPECT_TRUE(Mentions(over.status, "m.yaml:" + std::to_string(kColumnsLine) + ":" +
                                        std::to_string(kColumnsCol + 61) +
                                        ": lists and maps nest more than 64 deep"))
      << over.status.ToString();
  EXPECT_LT(over.cpu_seconds, 0.1);
}

TEST(MappingLimitsTest, TenThousandDeepNestingIsRefusedQuickly) {
  for (const std::string& open : {std::string("["), std::string("{a: ")}) {
    const std::string close = open == "[" ? "]" : "}";
    std::string y;
    for (int i = 0; i < 10000; ++i) y += open;
    y += "x";
    for (int i = 0; i < 10000; ++i) y += close;
    Outcome o = Parse(y);
    EXPECT_EQ(o.status.code(), StatusCode::kInvalidArgument) << open;
    EXPECT_TRUE(Mentions(o.status, "m.yaml:1:" + std::to_string(64 * open.size() + 1) +
                                       ": lists and maps nest more than 64 deep"))
        << o.status.ToString();
    EXPECT_LT(o.cpu_seconds, 0.1);
  }
}

// `n` aliases of one anchored column name.
std::string Aliases(int n) {
  std::string s = std::string(kHead) + "[&a c0";
  for (int i = 0; i < n; ++i) s += ", *a";
  return s + "]\n";
}

TEST(MappingLimitsTest, UpTo1000AliasesAreRead) {
  Outcome at = Parse(Aliases(1000));
  EXPECT_FALSE(Mentions(at.status, kLimitWords)) << at.status.ToString();

  Outcome over = Parse(Aliases(1001));
  EXPECT_EQ(over.status.code(), StatusCode::kInvalidArgument);
  // The 1001st alias: after "[&a c0" and 1000 ", *a".
  EXPECT_TRUE(Mentions(over.status, "m.yaml:" + std::to_string(kColumnsLine) + ":" +
                                        std::to_string(kColumnsCol + 6 + 1000 * 4 + 2) +
                                        ": more than 1000 aliases"))
      << over.status.ToString();
  EXPECT_LT(over.cpu_seconds, 0.1);
}

// Each alias counts the nodes of what it repeats: a list of 1 + 199 nodes
// repeated by 498 aliases, in a list with `extra` more scalars.
std::string Expanded(int extra) {
  std::string anchored = "&a [";
  for (int i = 0; i < 199; ++i) anchored += i ? ",x" : "x";
  std::string y = "[" + anchored + "]";
  for (int i = 0; i < 498; ++i) y += ",*a";
  for (int i = 0; i < extra; ++i) y += ",y";
  return y + "]\n";
}

TEST(MappingLimitsTest, AliasesCountTheNodesTheyRepeat) {
  // 1 (outer list) + 200 (anchored list) + 498 * 200 + 199 = 100,000.
  Outcome at = Parse(Expanded(199));
  EXPECT_EQ(at.status.code(), StatusCode::kInvalidArgument);  // not a map of fields
  EXPECT_FALSE(Mentions(at.status, kLimitWords)) << at.status.ToString();

  Outcome over = Parse(Expanded(200));
  EXPECT_EQ(over.status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(over.status, "more than 100000 YAML nodes")) << over.status.ToString();
  EXPECT_LT(over.cpu_seconds, 0.5);
}

TEST(MappingLimitsTest, BillionLaughsIsRefusedQuickly) {
  // Nine levels of nine aliases of the level before: 9^9 "lol"s expanded.
  std::string y = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    const std::string p(1, static_cast<char>(c - 1));
    y += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) y += (i ? ", *" : "*") + p;
    y += "]\n";
  }
  Outcome o = Parse(y);
  EXPECT_EQ(o.status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(o.status, "more than 100000 YAML nodes")) << o.status.ToString();
  EXPECT_LT(o.cpu_seconds, 0.1);
}

TEST(MappingLimitsTest, AnAliasInsideWhatItNamesIsRefused) {
  Outcome o = Parse(std::string(kHead) + "&a [c0, *a]\n");
  EXPECT_EQ(o.status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(o.status, "m.yaml:" + std::to_string(kColumnsLine) + ":" +
                                     std::to_string(kColumnsCol + 8) +
                                     ": an alias refers to a node that contains it"))
      << o.status.ToString();
}

}  // namespace
}  // namespace widen
