// widen plan --html against a real PostgreSQL, opened in a headless
// Chromium (Debian's package, installed by scripts/deps.sh): the Chinook
// report loads without a console message or an error its own script
// records, fetches nothing (its Content-Security-Policy refuses every URL,
// and the file names none), and its DOM holds each target table's section
// with the counts the source gives and the lint findings; a screenshot goes
// to the build's test-artifacts folder. Names and values holding <, & and "
// come out as text, never as markup.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

int Occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Chromium, or "" (a test failure under CI).
std::string Chromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    if (RunCommand(fmt::format("command -v {}", name)).exit_code == 0) return name;
  }
  return "";
}

#define WIDEN_REQUIRE_CHROMIUM(var)                                                  \
  const std::string var = Chromium();                                                \
  if (var.empty()) {                                                                 \
    if (InCi()) FAIL() << "chromium is not installed (scripts/deps.sh installs it)"; \
    GTEST_SKIP() << "chromium is not installed";                                     \
  }

// What a headless Chromium made of a page.
struct Browsed {
  int exit_code = -1;
  std::string dom;  // the DOM after the load event, serialized
  std::string log;  // Chromium's stderr, console messages included
};

// Opens `page` with networking pointed at a closed port (a request could
// not succeed quietly) and its console logged to stderr; with
// `screenshot`, also takes one of the page 1280 px wide.
Browsed Browse(const std::string& chromium, const std::string& page,
               const std::string& screenshot = "") {
  const std::string profile = MakeTempDir();
  const std::string common = fmt::format(
      "{} --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir={} "
      "--proxy-server=127.0.0.1:9 --enable-logging=stderr --v=0 --virtual-time-budget=2000",
      chromium, ShellQuote(profile));
  Browsed b;
  const std::string log = profile + "/stderr.txt";
  CommandResult r = RunCommand(
      fmt::format("{} --dump-dom {} 2>{}", common, ShellQuote("file://" + page), ShellQuote(log)));
  b.exit_code = r.exit_code;
  b.dom = r.output;
  b.log = ReadAll(log);
  if (!screenshot.empty()) {
    CommandResult s =
        RunCommand(fmt::format("{} --hide-scrollbars --window-size=1280,2000 "
                               "--screenshot={} {} 2>&1",
                               common, ShellQuote(screenshot), ShellQuote("file://" + page)));
    EXPECT_EQ(s.exit_code, 0) << s.output;
  }
  fs::remove_all(profile);
  return b;
}

// The console lines of Chromium's log ("CONSOLE(12)] ..." for any
// console message: an uncaught exception, a refused load, a CSP violation).
std::vector<std::string> ConsoleLines(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) {
      out.push_back(line);
    }
  }
  return out;
}

// Every URL the page could fetch: src/href/xlink:href attributes and CSS
// url(...) that do not point into the page itself.
std::vector<std::string> OutsideReferences(const std::string& html) {
  std::vector<std::string> out;
  static const std::regex kAttr(R"re(\b(?:src|href|xlink:href|action|poster)\s*=\s*"([^"]*)")re");
  for (std::sregex_iterator i(html.begin(), html.end(), kAttr), end; i != end; ++i) {
    const std::string v = (*i)[1];
    if (v.empty() || v[0] != '#') out.push_back(v);
  }
  static const std::regex kUrl(R"re(url\(\s*['"]?([^)'"]*))re");
  for (std::sregex_iterator i(html.begin(), html.end(), kUrl), end; i != end; ++i) {
    const std::string v = (*i)[1];
    if (v.empty() || v[0] != '#') out.push_back(v);
  }
  if (html.find("@import") != std::string::npos) out.push_back("@import");
  if (html.find("<link") != std::string::npos) out.push_back("<link>");
  if (html.find("<iframe") != std::string::npos) out.push_back("<iframe>");
  return out;
}

// The build's test-artifacts folder (kept by CI).
std::string ArtifactsDir() {
  const std::string dir = std::string(WIDEN_BINARY_DIR_FOR_TESTS) + "/test-artifacts";
  fs::create_directories(dir);
  return dir;
}

TEST(HtmlReportTest, ChinookReportLoadsInChromiumWithEveryTable) {
  WIDEN_REQUIRE_PG(url);
  WIDEN_REQUIRE_CHROMIUM(chromium);
  const std::string sql = DatasetsDir() + "/chinook/postgresql/Chinook_PostgreSql.sql";
  ASSERT_TRUE(fs::exists(sql)) << sql << " is missing: set WIDEN_DATASETS";
  const std::string db = FreshPgDatabase(url, "widen_it_html_chinook");
  RunPsqlScript(db, sql);
  PgQuery(db, "ANALYZE");
  const std::string dir = MakeTempDir();
  const std::string mapping = SourceDir() + "/examples/chinook/mapping.yaml";
  CommandResult r =
      RunCommand(fmt::format("cd {} && WIDEN_SOURCE_URL={} {} plan -m {} --limit 0 "
                             "--html report.html --diagram design.dot",
                             ShellQuote(dir), ShellQuote(db), WidenBinary(), ShellQuote(mapping)));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir + "/design.dot")) << "--html goes with --diagram";
  const std::string page = dir + "/report.html";
  const std::string html = ReadAll(page);
  ASSERT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u) << html.substr(0, 200);
  EXPECT_TRUE(OutsideReferences(html).empty())
      << "the page refers outside itself: " << OutsideReferences(html).front();
  EXPECT_NE(html.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);

  const std::string shot = ArtifactsDir() + "/chinook-report.png";
  fs::remove(shot);
  Browsed b = Browse(chromium, page, shot);
  ASSERT_EQ(b.exit_code, 0) << b.log;
  EXPECT_TRUE(ConsoleLines(b.log).empty()) << "console: " << ConsoleLines(b.log).front();
  EXPECT_NE(b.dom.find("data-loaded=\"yes\""), std::string::npos) << "the load event never came";
  EXPECT_EQ(b.dom.find("data-errors=\""), std::string::npos) << b.dom.substr(0, 2000);
  // The diagram drawn inline, with every table.
  EXPECT_NE(b.dom.find("class=\"diagram\"><svg"), std::string::npos);
  // Each target table's section, with the source's row counts (the default
  // sample of 1000 reads every artist and invoice).
  const auto count = [&](const std::string& q) { return PgQuery(db, q).at(0).at(0); };
  struct Expected {
    std::string table, id, source_rows;
  };
  const Expected tables[] = {
      {"music:artists", "table-music-3aartists", count("SELECT count(*) FROM artist")},
      {"sales:invoices", "table-sales-3ainvoices", count("SELECT count(*) FROM invoice")},
  };
  for (const Expected& t : tables) {
    const size_t at = b.dom.find("id=\"" + t.id + "\"");
    ASSERT_NE(at, std::string::npos) << t.table;
    const size_t end = b.dom.find("</section>", at);
    const std::string section = b.dom.substr(at, end - at);
    EXPECT_NE(section.find("<h2>" + t.table + "</h2>"), std::string::npos) << t.table;
    EXPECT_NE(section.find("all " + t.source_rows + " source rows"), std::string::npos)
        << section.substr(0, 3000);
    EXPECT_NE(section.find("class=\"keybar\""), std::string::npos) << t.table;
    EXPECT_EQ(Occurrences(section, "aria-label=\""), 3) << "three histograms in " << t.table;
    EXPECT_NE(b.dom.find("fill=\"white\">" + t.table + "</text>"), std::string::npos)
        << "the diagram names it";
  }
  // The lint findings (as widen lint reports them for this mapping).
  EXPECT_NE(b.dom.find("warning W105</span><code>" + mapping +
                       ":12:15</code> music:artists: the "
                       "row key starts with 'artist_id'"),
            std::string::npos);
  EXPECT_NE(b.dom.find("W116"), std::string::npos);
  EXPECT_NE(b.dom.find("0 error(s), 2 warning(s), 2 info"), std::string::npos);
  // The screenshot: a PNG of the page.
  ASSERT_TRUE(fs::exists(shot));
  EXPECT_EQ(ReadAll(shot).substr(1, 3), "PNG");
  EXPECT_GT(fs::file_size(shot), 20000u) << "an empty page?";
  // Without Graphviz's dot the page is written all the same, saying why
  // the diagram is missing (and so does stderr).
  r =
      RunCommand(fmt::format("cd {} && PATH=/nonexistent WIDEN_SOURCE_URL={} {} plan -m {} "
                             "--limit 0 --html nodot.html",
                             ShellQuote(dir), ShellQuote(db), WidenBinary(), ShellQuote(mapping)));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("widen: note: --html nodot.html: the page has no diagram: the diagram: "
                          "cannot run Graphviz's dot"),
            std::string::npos)
      << r.output;
  const std::string nodot = ReadAll(dir + "/nodot.html");
  EXPECT_EQ(nodot.find("class=\"diagram\""), std::string::npos);
  EXPECT_NE(nodot.find("No diagram: the diagram: cannot run Graphviz&#39;s dot"),
            std::string::npos);
  EXPECT_NE(nodot.find("id=\"table-sales-3ainvoices\""), std::string::npos);
  fs::remove_all(dir);
}

TEST(HtmlReportTest, NamesAndValuesAreTextNotMarkup) {
  WIDEN_REQUIRE_PG(url);
  WIDEN_REQUIRE_CHROMIUM(chromium);
  const std::string db = FreshPgDatabase(url, "widen_it_html_odd");
  PgQuery(db,
          "CREATE TABLE \"odd <&\"\"> t\" (\"k <&\"\">\" text PRIMARY KEY, \"v<&\"\">\" text);"
          "INSERT INTO \"odd <&\"\"> t\" VALUES ('<script>document.title=\"owned\"</script>', "
          "'<img src=x onerror=alert(1)> & more')");
  const std::string dir = MakeTempDir();
  std::ofstream(dir + "/m.yaml") << "source: ${WIDEN_SOURCE_URL}\n"
                                    "tables:\n"
                                    "  - name: t\n"
                                    "    from: 'odd <&\"> t'\n"
                                    "    families: [d]\n"
                                    "    key:\n"
                                    "      parts: ['k <&\">']\n"
                                    "    columns:\n"
                                    "      - {column: 'v<&\">', to: 'd:q<&\">'}\n";
  CommandResult r =
      RunCommand(fmt::format("cd {} && WIDEN_SOURCE_URL={} {} plan -m m.yaml "
                             "--limit 0 --html report.html",
                             ShellQuote(dir), ShellQuote(db), WidenBinary()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string html = ReadAll(dir + "/report.html");
  EXPECT_EQ(Occurrences(html, "<script"), 1) << "only the page's own script";
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("odd &lt;&amp;&quot;&gt; t"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;document.title=&quot;owned&quot;&lt;/script&gt;"),
            std::string::npos);
  Browsed b = Browse(chromium, dir + "/report.html");
  ASSERT_EQ(b.exit_code, 0) << b.log;
  EXPECT_TRUE(ConsoleLines(b.log).empty()) << "console: " << ConsoleLines(b.log).front();
  EXPECT_NE(b.dom.find("data-loaded=\"yes\""), std::string::npos);
  // The value's script never ran: the page keeps its title.
  EXPECT_NE(b.dom.find("<title>widen plan: m.yaml</title>"), std::string::npos);
  EXPECT_EQ(b.dom.find("<title>owned"), std::string::npos);
  EXPECT_EQ(Occurrences(b.dom, "<script"), 1);
  // As text in the DOM (serialized: &, < and > escaped, " as is).
  EXPECT_NE(b.dom.find("odd &lt;&amp;\"&gt; t"), std::string::npos) << b.dom.substr(0, 3000);
  fs::remove_all(dir);
}

// A plan that fails (a row key that is not unique: later rows replace the
// cells of earlier ones) says so at the top of its page, with the count
// the source gives, and the table's collisions say how many examples they
// show.
TEST(HtmlReportTest, AFailingPlanSaysSoAtTheTop) {
  WIDEN_REQUIRE_PG(url);
  const std::string db = FreshPgDatabase(url, "widen_it_html_collide");
  PgQuery(db,
          "CREATE TABLE item (id int PRIMARY KEY, grp int NOT NULL, v text NOT NULL);"
          "INSERT INTO item SELECT i, i % 7, 'v' || i FROM generate_series(1, 60) AS i");
  // Each row gives one cell (d:v); every row after the first of its group
  // replaces the cell of the one before.
  const std::vector<std::vector<std::string>> want =
      PgQuery(db, "SELECT count(*) - count(DISTINCT grp) FROM item");
  ASSERT_EQ(want.size(), 1u);
  const std::string dir = MakeTempDir();
  std::ofstream(dir + "/m.yaml") << "source: ${WIDEN_SOURCE_URL}\n"
                                    "tables:\n"
                                    "  - name: t\n"
                                    "    from: item\n"
                                    "    families: [d]\n"
                                    "    key:\n"
                                    "      parts: [grp]\n"
                                    "    columns:\n"
                                    "      - {column: v, to: 'd:v'}\n";
  CommandResult r =
      RunCommand(fmt::format("cd {} && WIDEN_SOURCE_URL={} {} plan -m m.yaml --full "
                             "--limit 0 --html report.html",
                             ShellQuote(dir), ShellQuote(db), WidenBinary()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  const std::string html = ReadAll(dir + "/report.html");
  const size_t main_at = html.find("<main>");
  ASSERT_NE(main_at, std::string::npos);
  const std::string header = html.substr(0, main_at);
  EXPECT_NE(header.find("widen plan fails (exit 2)"), std::string::npos) << header;
  EXPECT_NE(header.find(want[0][0] + " key collision(s)"), std::string::npos) << header;
  const std::regex shown(want[0][0] +
                         " cell\\(s\\) would replace another cell \\(the first "
                         "([0-9]+) shown\\)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, shown)) << html.substr(main_at, 4000);
  EXPECT_LT(std::stoi(m[1].str()), std::stoi(want[0][0]));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace widen::testing
