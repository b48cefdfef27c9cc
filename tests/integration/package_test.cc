// The Debian package as a user gets it: built by CPack (the ctest fixture
// package_build, tests/integration/package_build.cmake, writes it and
// unpacks it with dpkg-deb -x), then checked from the outside: its file list,
// its control fields against the libraries the binary links, the unpacked
// binary's --version, the man pages rendered by man(1), the completion
// scripts run by bash, the systemd units checked by systemd-analyze and the
// service's command run as systemd would run it, against PostgreSQL.
//
// Expected values come from elsewhere than the code under test: the
// version from CMakeLists.txt's project(), the commit from git, the
// commands and options from `widen --help`, the exit codes from README.md,
// the table names from the mapping files read by python3-yaml, the
// package of each linked library from `dpkg -S`.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(0, 1);
  return s;
}

// The version in CMakeLists.txt's project(widen VERSION x.y.z).
std::string ProjectVersion() {
  const std::string text = ReadFile(SourceDir() + "/CMakeLists.txt");
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(R"(project\(widen VERSION ([0-9.]+))"))) return "";
  return m[1].str();
}

std::string Arch() { return Trim(RunCommand("dpkg --print-architecture").output); }

// The commands `widen --help` lists.
std::vector<std::string> Commands() {
  const CommandResult r = RunCommand(WidenBinary() + " --help");
  std::vector<std::string> out;
  bool in_list = false;
  std::smatch m;
  for (const std::string& line : Lines(r.output)) {
    if (line.rfind("Subcommands:", 0) == 0) {
      in_list = true;
    } else if (in_list && std::regex_match(line, m, std::regex(R"(\s+([a-z]+)\s.*)"))) {
      out.push_back(m[1].str());
    }
  }
  return out;
}

// The long options `widen COMMAND --help` lists.
std::vector<std::string> HelpOptions(const std::string& command) {
  const CommandResult r = RunCommand(WidenBinary() + " " + command + " --help");
  std::vector<std::string> out;
  std::smatch m;
  for (const std::string& line : Lines(r.output)) {
    if (std::regex_match(line, m, std::regex(R"(\s+(?:-\w,)?(--[a-z][a-z-]*)\b.*)"))) {
      out.push_back(m[1].str());
    }
  }
  return out;
}

// The `name:` of each table of a mapping file, read by python3-yaml.
std::vector<std::string> MappingTables(const std::string& mapping) {
  const CommandResult r =
      RunCommand(std::string(WIDEN_SYSTEM_PYTHON3) +
                 " -c 'import sys, yaml; print(\"\\n\".join(t[\"name\"] for t in "
                 "yaml.safe_load(open(sys.argv[1]))[\"tables\"]))' " +
                 ShellQuote(mapping));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::string> out = Lines(r.output);
  std::sort(out.begin(), out.end());
  return out;
}

class PackageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::string(WIDEN_BINARY_DIR) + "/tests/package";
    deb_ = dir_ + "/widen_" + ProjectVersion() + "_" + Arch() + ".deb";
    root_ = dir_ + "/root";
    ASSERT_FALSE(ProjectVersion().empty());
    ASSERT_TRUE(fs::exists(deb_)) << deb_ << " is missing (the ctest fixture package_build "
                                  << "writes it; see " << dir_ << "/cpack.log)";
    ASSERT_TRUE(fs::exists(root_ + "/usr/bin/widen"));
  }

  std::string Field(const std::string& name) {
    return Trim(RunCommand("dpkg-deb -f " + ShellQuote(deb_) + " " + name).output);
  }

  // What the packaged bash completion replies for `line` (the cursor at its
  // end), one reply a line; with COMP_LINE set as bash sets it, or only
  // COMP_WORDS/COMP_CWORD (split at blanks) when `with_line` is false.
  std::string BashComplete(const std::string& line, bool with_line = true) {
    const std::string script =
        "source " + ShellQuote(root_ + "/usr/share/bash-completion/completions/widen") +
        "; line=" + ShellQuote(line) +
        "; read -r -a COMP_WORDS <<<\"$line\"; [[ $line == *' ' ]] && COMP_WORDS+=('');"
        " COMP_CWORD=$((${#COMP_WORDS[@]} - 1));" +
        (with_line ? " COMP_LINE=$line; COMP_POINT=${#line};" : "") +
        " _widen; printf '%s\\n' \"${COMPREPLY[@]}\"";
    const CommandResult r =
        RunCommand("cd " + ShellQuote(SourceDir()) + " && PATH=" + ShellQuote(root_ + "/usr/bin") +
                   ":$PATH bash -c " + ShellQuote(script));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::vector<std::string> lines = Lines(r.output);
    lines.erase(std::remove(lines.begin(), lines.end(), ""), lines.end());
    std::sort(lines.begin(), lines.end());
    std::string out;
    for (const std::string& l : lines) out += l + "\n";
    return out;
  }

  std::string dir_, deb_, root_;
};

TEST_F(PackageTest, ControlFields) {
  EXPECT_EQ(Field("Package"), "widen");
  EXPECT_EQ(Field("Version"), ProjectVersion());
  EXPECT_EQ(Field("Architecture"), Arch());
  EXPECT_EQ(Field("Maintainer"), "widen maintainers");
  EXPECT_EQ(Field("Recommends"), "graphviz");
}

TEST_F(PackageTest, HoldsBinaryManPagesCompletionsExamplesAndUnits) {
  const CommandResult r = RunCommand("dpkg-deb -c " + ShellQuote(deb_));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::set<std::string> files;
  for (const std::string& line : Lines(r.output)) {
    const size_t at = line.find(" ./");
    if (at != std::string::npos) files.insert(line.substr(at + 3));
  }
  std::vector<std::string> expected = {
      "usr/bin/widen",
      "usr/share/man/man1/widen.1",
      "usr/share/bash-completion/completions/widen",
      "usr/share/zsh/vendor-completions/_widen",
      "usr/lib/systemd/system/widen-sync@.service",
      "usr/lib/systemd/system/widen-sync@.timer",
      "usr/share/doc/widen/README.md",
      "usr/share/widen/mapping.schema.json",
  };
  const std::vector<std::string> commands = Commands();
  ASSERT_GE(commands.size(), 10u);
  for (const std::string& c : commands) expected.push_back("usr/share/man/man1/widen-" + c + ".1");
  const fs::path examples = fs::path(SourceDir()) / "examples";
  for (const auto& e : fs::recursive_directory_iterator(examples)) {
    if (e.is_regular_file()) {
      expected.push_back("usr/share/doc/widen/examples/" +
                         fs::relative(e.path(), examples).generic_string());
    }
  }
  for (const std::string& f : expected) EXPECT_TRUE(files.count(f)) << f << " not in " << deb_;
  // Installed, not enabled: no unit links, and no maintainer script starts
  // or enables one.
  for (const std::string& f : files) EXPECT_EQ(f.rfind("etc/systemd", 0), std::string::npos) << f;
  const std::string control = MakeTempDir();
  ASSERT_EQ(RunCommand("dpkg-deb -e " + ShellQuote(deb_) + " " + control).exit_code, 0);
  for (const auto& e : fs::directory_iterator(control)) {
    const std::string text = ReadFile(e.path());
    EXPECT_EQ(text.find("systemctl"), std::string::npos) << e.path();
    EXPECT_EQ(text.find("deb-systemd"), std::string::npos) << e.path();
  }
}

TEST_F(PackageTest, VersionNamesTheSourceCommit) {
  std::string commit = "unknown";
  const CommandResult top =
      RunCommand("git -C " + ShellQuote(SourceDir()) + " rev-parse --show-toplevel");
  if (top.exit_code == 0 && fs::equivalent(Trim(top.output), SourceDir())) {
    commit = Trim(RunCommand("git -C " + ShellQuote(SourceDir()) + " rev-parse HEAD").output)
                 .substr(0, 12);
  }
  const CommandResult r = RunCommand(ShellQuote(root_ + "/usr/bin/widen") + " --version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "widen " + ProjectVersion() + " (commit " + commit + ")\n");
}

TEST_F(PackageTest, DependsNamesThePackageOfEveryLinkedLibrary) {
  const std::string binary = root_ + "/usr/bin/widen";
  const CommandResult rpath = RunCommand("readelf -d " + ShellQuote(binary));
  ASSERT_EQ(rpath.exit_code, 0) << rpath.output;
  EXPECT_EQ(rpath.output.find("RPATH"), std::string::npos) << rpath.output;
  EXPECT_EQ(rpath.output.find("RUNPATH"), std::string::npos) << rpath.output;

  std::set<std::string> depends;
  std::string field = Field("Depends");
  std::smatch m;
  const std::regex name(R"((?:^|[,|])\s*([a-z0-9][a-z0-9+.-]*))");
  for (auto it = field.cbegin(); std::regex_search(it, field.cend(), m, name); it = m[0].second) {
    depends.insert(m[1].str());
  }
  // The libraries the binary needs itself (dpkg-shlibdeps's input; ldd
  // would add theirs), each found where the loader finds it.
  std::set<std::string> needed;
  for (const std::string& line : Lines(rpath.output)) {
    if (std::regex_search(line, m, std::regex(R"(\(NEEDED\).*\[(.+)\])"))) {
      needed.insert(m[1].str());
    }
  }
  const CommandResult ldd = RunCommand("ldd " + ShellQuote(binary));
  ASSERT_EQ(ldd.exit_code, 0) << ldd.output;
  int libraries = 0;
  for (const std::string& line : Lines(ldd.output)) {
    if (!std::regex_search(line, m, std::regex(R"(^\s*(\S+) => (/\S+) \(0x)"))) continue;
    if (!needed.count(m[1].str())) continue;
    const std::string path = m[2].str();
    // dpkg knows a file by the path its package ships (/lib or /usr/lib).
    std::vector<std::string> candidates = {path, fs::canonical(path).string()};
    for (const std::string& p : std::vector<std::string>(candidates)) {
      candidates.push_back(p.rfind("/usr/", 0) == 0 ? p.substr(4) : "/usr" + p);
    }
    std::string package;
    for (const std::string& p : candidates) {
      const CommandResult s = RunCommand("dpkg -S " + ShellQuote(p) + " 2>/dev/null");
      if (s.exit_code == 0 && !s.output.empty()) {
        package = s.output.substr(0, s.output.find(':'));
        break;
      }
    }
    ASSERT_FALSE(package.empty()) << "no package ships " << path;
    ++libraries;
    EXPECT_TRUE(depends.count(package))
        << path << " is in " << package << ", which Depends (" << field << ") does not name";
  }
  EXPECT_EQ(libraries, static_cast<int>(needed.size())) << ldd.output;
  EXPECT_GE(libraries, 8) << rpath.output;
}

TEST_F(PackageTest, ManPagesRenderWithoutWarningsAndListEveryOption) {
  // The exit codes the README documents.
  std::vector<std::string> codes;
  std::smatch m;
  for (const std::string& line : Lines(ReadFile(SourceDir() + "/README.md"))) {
    if (std::regex_match(line, m, std::regex(R"(\| (\d+) \| .*)"))) codes.push_back(m[1].str());
  }
  ASSERT_GE(codes.size(), 13u);
  std::vector<std::string> pages = {"widen"};
  for (const std::string& c : Commands()) pages.push_back("widen-" + c);
  for (const std::string& page : pages) {
    const std::string file = root_ + "/usr/share/man/man1/" + page + ".1";
    // What man (groff -ww) says on stderr; RunCommand adds 2>&1.
    const CommandResult warnings = RunCommand("{ LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l " +
                                              ShellQuote(file) + " >/dev/null; }");
    EXPECT_EQ(warnings.exit_code, 0) << page;
    EXPECT_EQ(warnings.output, "") << page;
    const CommandResult text =
        RunCommand("LC_ALL=C.UTF-8 MANWIDTH=200 man -l " + ShellQuote(file) + " 2>/dev/null");
    ASSERT_EQ(text.exit_code, 0) << page;
    EXPECT_NE(text.output.find("NAME\n       " + page + " - "), std::string::npos) << page << ":\n"
                                                                                   << text.output;
    for (const std::string& code : codes) {
      EXPECT_TRUE(std::regex_search(text.output, std::regex("\n       " + code + " +[A-Za-z]")))
          << page << " does not document exit code " << code;
    }
    if (page == "widen") continue;
    const std::string command = page.substr(6);
    const std::vector<std::string> options = HelpOptions(command);
    EXPECT_GE(options.size(), 2u) << command;
    for (const std::string& o : options) {
      EXPECT_TRUE(std::regex_search(text.output, std::regex("\n       (-\\w, )?" + o + "\\b")))
          << page << " does not list " << o << " (widen " << command << " --help has it)";
    }
  }
}

TEST_F(PackageTest, CompletionScriptsParse) {
  const CommandResult bash =
      RunCommand("bash -n " + ShellQuote(root_ + "/usr/share/bash-completion/completions/widen"));
  EXPECT_EQ(bash.exit_code, 0) << bash.output;
  const CommandResult zsh =
      RunCommand("zsh -n " + ShellQuote(root_ + "/usr/share/zsh/vendor-completions/_widen"));
  EXPECT_EQ(zsh.exit_code, 0) << zsh.output;
  EXPECT_EQ(zsh.output, "");
}

TEST_F(PackageTest, BashCompletesCommandsOptionsAndTableNames) {
  EXPECT_EQ(BashComplete("widen sc"), "scan\n");
  EXPECT_EQ(BashComplete("widen sc", /*with_line=*/false), "scan\n");
  std::string all;
  std::vector<std::string> commands = Commands();
  commands.push_back("--help");
  commands.push_back("--version");
  std::sort(commands.begin(), commands.end());
  for (const std::string& c : commands) all += c + "\n";
  EXPECT_EQ(BashComplete("widen "), all);
  EXPECT_EQ(BashComplete("widen plan --format "), "json\ntext\n");
  EXPECT_EQ(BashComplete("widen verify --fu"), "--full\n");

  for (const char* example : {"bands", "inbox", "service_orders", "chinook"}) {
    const std::string mapping = std::string("examples/") + example + "/mapping.yaml";
    const std::vector<std::string> tables = MappingTables(SourceDir() + "/" + mapping);
    ASSERT_FALSE(tables.empty()) << mapping;
    std::string expected;
    for (const std::string& t : tables) expected += t + "\n";
    EXPECT_EQ(BashComplete("widen scan -m " + mapping + " "), expected) << mapping;
    EXPECT_EQ(BashComplete("widen scan -m " + mapping + " ", false), expected) << mapping;
    EXPECT_EQ(BashComplete("widen get --versions 3 --mapping " + mapping + " "), expected);
    // A flag takes no value: the word after it is not one.
    EXPECT_EQ(BashComplete("widen scan --decode -m " + mapping + " "), expected) << mapping;
    EXPECT_EQ(BashComplete("widen sync -q -m " + mapping + " --table "), expected) << mapping;
    EXPECT_EQ(BashComplete("widen sync -m " + mapping + " --table "), expected) << mapping;
    // bash replaces only what follows the word's last ':' (COMP_WORDBREAKS):
    // the replies for "ns:" are the names without "ns:".
    const std::string ns = tables[0].substr(0, tables[0].find(':') + 1);
    std::string after;
    for (const std::string& t : tables) {
      if (t.rfind(ns, 0) == 0) after += t.substr(ns.size()) + "\n";
    }
    EXPECT_EQ(BashComplete("widen migrate -m " + mapping + " --table " + ns), after);
  }
  // -m takes a file name.
  EXPECT_EQ(BashComplete("widen scan -m examples/ba"), "examples/bands\n");
  // A file name with a blank, typed with a backslash: one reply, and the
  // mapping's tables after it (also when quoted).
  const std::string spaced = MakeTempDir();
  fs::copy_file(SourceDir() + "/examples/bands/mapping.yaml", spaced + "/my map.yaml");
  EXPECT_EQ(BashComplete("widen scan -m " + spaced + "/my\\ ma"), spaced + "/my map.yaml\n");
  const std::vector<std::string> bands =
      MappingTables(SourceDir() + "/examples/bands/mapping.yaml");
  std::string bands_text;
  for (const std::string& t : bands) bands_text += t + "\n";
  EXPECT_EQ(BashComplete("widen scan -m " + spaced + "/my\\ map.yaml "), bands_text);
  EXPECT_EQ(BashComplete("widen scan -m '" + SourceDir() + "/examples/bands/mapping.yaml' "),
            bands_text);
  fs::remove_all(spaced);
  // A mapping that does not load gives no names and no message.
  EXPECT_EQ(BashComplete("widen scan -m /nonexistent.yaml "), "");
  EXPECT_EQ(BashComplete("widen scan -m README.md "), "");
  const CommandResult quiet =
      RunCommand(ShellQuote(root_ + "/usr/bin/widen") + " __complete tables -m README.md");
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.output, "");
}

// cmake/SourceCommit.cmake, as the build runs it: "unknown" outside a git
// work tree (also in a folder inside another work tree), HEAD's first 12
// hex digits in one, a new text after a new commit, and the file left
// untouched (not rewritten) while HEAD stays.
TEST_F(PackageTest, SourceCommitFollowsHead) {
  const std::string tmp = MakeTempDir();
  const std::string header = tmp + "/info.h";
  auto generate = [&](const std::string& source) {
    const CommandResult r =
        RunCommand("cmake -DSOURCE_DIR=" + ShellQuote(source) + " -DOUTPUT=" + ShellQuote(header) +
                   " -DVERSION=9.8.7 -P " + ShellQuote(SourceDir() + "/cmake/SourceCommit.cmake"));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return ReadFile(header);
  };
  fs::create_directories(tmp + "/src/sub");
  std::string text = generate(tmp + "/src");
  EXPECT_NE(text.find("#define WIDEN_VERSION_STRING \"9.8.7\""), std::string::npos) << text;
  EXPECT_NE(text.find("#define WIDEN_SOURCE_COMMIT \"unknown\""), std::string::npos) << text;
  const std::string git = "git -C " + ShellQuote(tmp + "/src") +
                          " -c user.name=t -c user.email=t@t -c commit.gpgsign=false ";
  ASSERT_EQ(RunCommand(git + "init -q && " + git + "commit -q --allow-empty -m one").exit_code, 0);
  auto head = [&] { return Trim(RunCommand(git + "rev-parse HEAD").output).substr(0, 12); };
  EXPECT_NE(generate(tmp + "/src/sub").find("\"unknown\""), std::string::npos)
      << "a folder inside a work tree is not that tree";
  const std::string first = head();
  text = generate(tmp + "/src");
  EXPECT_NE(text.find("#define WIDEN_SOURCE_COMMIT \"" + first + "\""), std::string::npos) << text;
  fs::last_write_time(header, fs::last_write_time(header) - std::chrono::hours(1));
  const auto before = fs::last_write_time(header);
  generate(tmp + "/src");
  EXPECT_EQ(fs::last_write_time(header), before) << "rewritten while HEAD stayed";
  ASSERT_EQ(RunCommand(git + "commit -q --allow-empty -m two").exit_code, 0);
  ASSERT_NE(head(), first);
  text = generate(tmp + "/src");
  EXPECT_NE(text.find("#define WIDEN_SOURCE_COMMIT \"" + head() + "\""), std::string::npos) << text;
}

// The units as systemd reads them: systemd-analyze verify in a root holding
// the package (so ExecStart's `widen` is found in its /usr/bin) and the
// system's own targets and slices.
TEST_F(PackageTest, SystemdUnitsVerify) {
  const std::string root = MakeTempDir();
  const std::string units = root + "/usr/lib/systemd/system";
  ASSERT_EQ(RunCommand("cp -a " + ShellQuote(root_) + "/. " + ShellQuote(root) +
                       " && cp /usr/lib/systemd/system/*.target /usr/lib/systemd/system/*.slice " +
                       ShellQuote(units) + " && cp " + units + "/widen-sync@.service " + units +
                       "/widen-sync@shop.service && cp " + units + "/widen-sync@.timer " + units +
                       "/widen-sync@shop.timer")
                .exit_code,
            0);
  const CommandResult r = RunCommand("systemd-analyze verify --root=" + ShellQuote(root) +
                                     " widen-sync@shop.service widen-sync@shop.timer");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "");
}

// The service's command, run as systemd runs it (the environment file
// read, in the state directory, widen found on PATH) with /etc/widen and
// /var/lib moved into a temporary folder: a sync of the bands example.
TEST_F(PackageTest, ServiceRunsASync) {
  WIDEN_REQUIRE_PG(url);
  const std::string unit = ReadFile(root_ + "/usr/lib/systemd/system/widen-sync@.service");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(unit, m, std::regex("\nExecStart=([^\n]+)")));
  std::string exec = m[1].str();
  ASSERT_TRUE(std::regex_search(unit, m, std::regex("\nEnvironmentFile=([^\n]+)")));
  std::string env_file = m[1].str();
  ASSERT_TRUE(std::regex_search(unit, m, std::regex("\nWorkingDirectory=([^\n]+)")));
  std::string work_dir = m[1].str();
  ASSERT_TRUE(std::regex_search(unit, m, std::regex("\nSuccessExitStatus=([^\n]+)")));
  const std::string success = m[1].str();

  const std::string tmp = MakeTempDir();
  auto place = [&](std::string s) {
    s = std::regex_replace(s, std::regex("%i"), "bands");
    s = std::regex_replace(s, std::regex("%S"), tmp + "/var/lib");
    return std::regex_replace(s, std::regex("/etc/widen/"), tmp + "/etc/widen/");
  };
  exec = place(exec);
  env_file = place(env_file);
  work_dir = place(work_dir);
  fs::create_directories(tmp + "/etc/widen");
  fs::create_directories(work_dir);
  fs::copy_file(SourceDir() + "/examples/bands/mapping.yaml", tmp + "/etc/widen/bands.yaml");
  const std::string db = FreshPgDatabase(url, "widen_it_package_bands");
  RunPsqlFile(db, SourceDir() + "/examples/bands/schema.pg.sql");
  RunPsqlFile(db, SourceDir() + "/examples/bands/data.pg.sql");
  {
    std::ofstream env(env_file);
    env << "WIDEN_SOURCE_URL=" << db << "\n";
  }
  const CommandResult r =
      RunCommand("cd " + ShellQuote(work_dir) + " && set -a && . " + ShellQuote(env_file) +
                 " && set +a && PATH=" + ShellQuote(root_ + "/usr/bin") + ":/usr/bin:/bin " + exec);
  EXPECT_TRUE(r.exit_code == 0 || std::to_string(r.exit_code) == success) << r.output;
  EXPECT_NE(r.output.find("widen sync into leveldb:out/bands"), std::string::npos) << r.output;
  // The mapping's default target, relative: in the state directory.
  const std::string store = "leveldb:" + work_dir + "/out/bands";
  const std::vector<std::vector<std::string>> bands = PgQuery(db, "SELECT count(*) FROM band");
  ASSERT_EQ(bands.size(), 1u);
  const TableCells cells = ReadTable(store, "music:bands");
  EXPECT_EQ(std::to_string(cells.size()), bands[0][0]);
  // The run's figures beside the store, for node_exporter: a success.
  const std::string metrics = ReadFile(work_dir + "/bands-sync.prom");
  EXPECT_NE(metrics.find("\nwiden_exit_status{"), std::string::npos) << metrics;
  EXPECT_TRUE(std::regex_search(metrics, std::regex("\nwiden_exit_status\\{[^}]*\\} 0\n")))
      << metrics;
}

// The crontab line of examples/cron, run as cron runs it: sh -c with
// cron's bare environment (its PATH line, nothing else), the package's
// binary first on PATH, /etc/widen, /var/lib/widen and /var/log/widen
// moved into a temporary folder: the source URL must reach widen from the
// environment file (or widen falls back to the mapping's default URL).
TEST_F(PackageTest, CrontabLineRunsASync) {
  WIDEN_REQUIRE_PG(url);
  std::istringstream crontab(ReadFile(SourceDir() + "/examples/cron/crontab"));
  std::string line, path, command;
  while (std::getline(crontab, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::string first = line.substr(0, line.find_first_of(" \t"));
    if (first.find('=') != std::string::npos) {  // an environment line
      if (first.rfind("PATH=", 0) == 0) path = line.substr(5);
      continue;
    }
    if (command.empty()) {
      // Five schedule fields, then the command.
      std::istringstream fields(line);
      std::string f;
      for (int i = 0; i < 5; ++i) fields >> f;
      std::getline(fields, command);
    }
  }
  ASSERT_FALSE(path.empty()) << "no PATH line";
  ASSERT_FALSE(command.empty()) << "no schedule line";
  const std::string tmp = MakeTempDir();
  auto place = [&](std::string s) {
    for (const char* dir : {"/etc/widen/", "/var/lib/widen", "/var/log/widen"}) {
      s = std::regex_replace(s, std::regex(dir), tmp + dir);
    }
    return std::regex_replace(s, std::regex("shop"), "bands");
  };
  command = place(command);
  for (const char* dir : {"/etc/widen", "/var/lib/widen", "/var/log/widen"}) {
    fs::create_directories(tmp + dir);
  }
  fs::copy_file(SourceDir() + "/examples/bands/mapping.yaml", tmp + "/etc/widen/bands.yaml");
  const std::string db = FreshPgDatabase(url, "widen_it_package_cron");
  RunPsqlFile(db, SourceDir() + "/examples/bands/schema.pg.sql");
  RunPsqlFile(db, SourceDir() + "/examples/bands/data.pg.sql");
  {
    std::ofstream env(tmp + "/etc/widen/bands.env");
    env << "WIDEN_SOURCE_URL=" << db << "\n";
  }
  const CommandResult r = RunCommand("env -i HOME=" + ShellQuote(tmp) +
                                     " PATH=" + ShellQuote(root_ + "/usr/bin:" + path) + " sh -c " +
                                     ShellQuote(command));
  EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.output;
  const std::string log = ReadFile(tmp + "/var/log/widen/bands.log");
  EXPECT_NE(log.find("widen sync into leveldb:out/bands"), std::string::npos) << log;
  const std::string metrics = ReadFile(tmp + "/var/lib/widen/bands-sync.prom");
  EXPECT_TRUE(std::regex_search(metrics, std::regex("\nwiden_exit_status\\{[^}]*\\} 0\n")))
      << metrics;
  const std::vector<std::vector<std::string>> bands = PgQuery(db, "SELECT count(*) FROM band");
  ASSERT_EQ(bands.size(), 1u);
  const TableCells cells = ReadTable("leveldb:" + tmp + "/var/lib/widen/out/bands", "music:bands");
  EXPECT_EQ(std::to_string(cells.size()), bands[0][0]);
}

}  // namespace
}  // namespace widen::testing
