// A full disk (a real tmpfs, mounted in a private mount namespace of the
// test process) under every file widen writes, through the widen binary:
// the embedded store (while it is created, and while cells are written),
// the `--jobs` spool and the external sort's runs under $TMPDIR, the
// --rejects file, plan's --diagram and --html files, the --metrics-file of
// migrate (exit 10: the run did its work), and sync, verify, ddl --apply and
// repair. Each ends with exit code 11 (README "Exit codes"), a message
// naming the path and "No space left on device", never 3 (a server) or 6
// (damage); nothing is recorded as done (the tables say they are
// incomplete); once the space is free the same command converges to what a
// run on a roomy disk writes. A --diagram into a missing folder names the
// folder, not Graphviz.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "tests/integration/fault_env.h"

namespace widen::testing {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kDiskBytes = 64ull << 20;
constexpr char kNoSpace[] = "No space left on device";

#define REQUIRE_PRIVATE_MOUNTS()                                                                 \
  if (const std::string why = EnterPrivateMountNamespace(); !why.empty()) {                      \
    if (InCi()) FAIL() << "cannot mount a small file system under CI: " << why;                  \
    GTEST_SKIP() << "cannot mount a small file system (needs root or user namespaces): " << why; \
  }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Names in `dir` other than the filler.
std::vector<std::string> Leftovers(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n != "filler" && n != "lost+found") out.push_back(n);
  }
  return out;
}

class LocalFaultsTest : public PeopleTest {
 protected:
  LocalFaultsTest() : PeopleTest("widen_it_disk", 3000) {}
  std::string MappingFor(const std::string& store, const std::string& name) {
    const std::string path = dir_ + "/" + name + ".yaml";
    std::ofstream(path) << PeopleMapping(db_, store);
    return path;
  }
  CommandResult Widen(const std::string& args, const std::string& env = "") {
    return RunCommand(env + (env.empty() ? "" : " ") + WidenBinary() + " " + args);
  }
  // The reference store (a roomy disk) and its scans of both tables.
  void MakeReference(const std::string& extra_args = "") {
    const std::string ref = dir_ + "/reference";
    CommandResult r = Widen("migrate -q -m " + MappingFor(ref, "reference") + extra_args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ref_people_ = ScanAll(ref, "f:people").output;
    ref_by_city_ = ScanAll(ref, "f:by_city").output;
    const long people = std::stol(Query(GetParam(), db_, "SELECT count(*) FROM person")[0][0]);
    ASSERT_EQ(RowsOf(ref_people_), people);
  }
  // Both tables of `store` read as the reference's, every version.
  void ExpectAsReference(const std::string& store) {
    const CommandResult people = ScanAll(store, "f:people");
    const CommandResult by_city = ScanAll(store, "f:by_city");
    EXPECT_EQ(people.exit_code, 0) << people.output.substr(0, 1000);
    EXPECT_TRUE(people.output == ref_people_)
        << RowsOf(people.output) << " rows, not " << RowsOf(ref_people_) << "\n"
        << people.output.substr(0, 1000);
    EXPECT_TRUE(by_city.output == ref_by_city_)
        << RowsOf(by_city.output) << " rows, not " << RowsOf(ref_by_city_) << "\n"
        << by_city.output.substr(0, 1000);
  }
  // The table `table` of `store` opens and warns that it is incomplete.
  void ExpectIncomplete(const std::string& store, const std::string& table) {
    const CommandResult r = Widen("scan " + table + " --limit 1 --target leveldb:" + store);
    EXPECT_EQ(r.exit_code, 0) << r.output.substr(0, 1000);
    EXPECT_NE(r.output.find("table '" + table + "' is incomplete"), std::string::npos)
        << r.output.substr(0, 1000);
  }
  void ExpectLocalWriteFailed(const CommandResult& r, const std::string& path) {
    EXPECT_EQ(r.exit_code, 11) << r.output;
    EXPECT_NE(r.output.find(path), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(kNoSpace), std::string::npos) << r.output;
  }

  std::string ref_people_, ref_by_city_;
};

TEST_P(LocalFaultsTest, StoreOnAFullDiskExits11ThenConverges) {
  REQUIRE_PRIVATE_MOUNTS();
  MakeReference();
  SmallDisk disk(dir_ + "/disk", kDiskBytes);
  ASSERT_TRUE(disk.mounted());
  const std::string store = disk.dir() + "/store";
  const std::string m = MappingFor(store, "m");

  // Full while the store is being created: no store, no hidden leftover.
  disk.Fill(0);
  CommandResult r = Widen("migrate -q -m " + m);
  ExpectLocalWriteFailed(r, disk.dir() + "/");
  EXPECT_EQ(r.output.find("damaged"), std::string::npos) << r.output;
  EXPECT_TRUE(Leftovers(disk.dir()).empty()) << Leftovers(disk.dir()).front();

  // Full while cells are written.
  disk.Free();
  disk.Fill(256 << 10);
  r = Widen("migrate -q -m " + m);
  ExpectLocalWriteFailed(r, store + "/");
  // Still full: the store opens or says the disk is full, never "damaged".
  const CommandResult full_scan = Widen("scan f:people --limit 1 --target leveldb:" + store);
  EXPECT_TRUE(full_scan.exit_code == 0 || full_scan.exit_code == 11) << full_scan.output;

  disk.Free();
  ExpectIncomplete(store, "f:people");
  ExpectIncomplete(store, "f:by_city");
  r = Widen("migrate -q -m " + m);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectAsReference(store);
}

TEST_P(LocalFaultsTest, SpoolAndSortFilesOnAFullTmpdirExit11ThenConverge) {
  REQUIRE_PRIVATE_MOUNTS();
  MakeReference();
  SmallDisk tmp(dir_ + "/tmp", kDiskBytes);
  ASSERT_TRUE(tmp.mounted());
  const std::string env = "TMPDIR=" + tmp.dir();
  const std::string store = dir_ + "/store";
  const std::string m = MappingFor(store, "m");
  tmp.Fill(64 << 10);

  // --jobs 2 on a key that follows the split: the second job spools.
  CommandResult r = Widen("migrate -q --jobs 2 --table f:people -m " + m, env);
  ExpectLocalWriteFailed(r, "temporary spool file " + tmp.dir() + "/widen-spool-");
  // A re-run into a table that holds cells goes through the external sort
  // (so that replaced cells are counted): its runs.
  r = Widen("migrate -q --table f:by_city -m " + m);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Widen("migrate -q --table f:by_city -m " + m, env);
  ExpectLocalWriteFailed(r, "temporary sort file " + tmp.dir() + "/widen-sort-");
  EXPECT_TRUE(Leftovers(tmp.dir()).empty()) << Leftovers(tmp.dir()).front();
  ExpectIncomplete(store, "f:people");
  ExpectIncomplete(store, "f:by_city");

  tmp.Free();
  r = Widen("migrate -q --jobs 2 -m " + m, env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectAsReference(store);
}

TEST_P(LocalFaultsTest, RejectsFileOnAFullDiskExits11AndTheTableIsNotDone) {
  REQUIRE_PRIVATE_MOUNTS();
  // Rows without a city cannot have a by_city row key: they are rejected.
  Query(GetParam(), db_, "UPDATE person SET city = NULL WHERE id % 97 = 0");
  const long rejected =
      std::stol(Query(GetParam(), db_, "SELECT count(*) FROM person WHERE city IS NULL")[0][0]);
  ASSERT_GT(rejected, 10);
  MakeReference(" --rejects " + dir_ + "/reference.rejects");
  SmallDisk disk(dir_ + "/disk", kDiskBytes);
  ASSERT_TRUE(disk.mounted());
  const std::string store = dir_ + "/store";
  const std::string m = MappingFor(store, "m");
  const std::string rejects = disk.dir() + "/rejects.jsonl";
  disk.Fill(0);

  CommandResult r = Widen("migrate -q -m " + m + " --rejects " + rejects);
  ExpectLocalWriteFailed(r, "--rejects " + rejects);
  ExpectIncomplete(store, "f:by_city");

  disk.Free();
  r = Widen("migrate -q -m " + m + " --rejects " + rejects);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string lines = ReadFile(rejects);
  EXPECT_EQ(static_cast<long>(std::count(lines.begin(), lines.end(), '\n')), rejected) << lines;
  ExpectAsReference(store);
}

TEST_P(LocalFaultsTest, SyncVerifyDdlAndRepairOnAFullDiskExit11) {
  REQUIRE_PRIVATE_MOUNTS();
  SmallDisk disk(dir_ + "/disk", kDiskBytes);
  SmallDisk tmp(dir_ + "/tmp", kDiskBytes);
  ASSERT_TRUE(disk.mounted() && tmp.mounted());
  const std::string store = disk.dir() + "/store";
  const std::string m = MappingFor(store, "m");
  CommandResult r = Widen("migrate -q -m " + m);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // sync: every answer changed, the disk full.
  Query(GetParam(), db_, "UPDATE answer SET text = CONCAT(text, '!') WHERE person_id % 3 = 0");
  disk.Fill(64 << 10);
  r = Widen("sync -q -m " + m);
  ExpectLocalWriteFailed(r, store + "/");
  disk.Free();
  r = Widen("sync -q -m " + m);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  MakeReference();  // a migrate of the source as it is now
  ExpectAsReference(store);

  // verify: its external sort under a full $TMPDIR.
  tmp.Fill(0);
  r = Widen("verify -m " + m, "TMPDIR=" + tmp.dir());
  ExpectLocalWriteFailed(r, "temporary sort file " + tmp.dir() + "/");
  tmp.Free();
  r = Widen("verify -m " + m, "TMPDIR=" + tmp.dir());
  EXPECT_EQ(r.exit_code, 0) << r.output;

  // ddl --apply and repair create stores on a full disk: nothing is left.
  disk.Fill(0);
  r = Widen("ddl -m " + m + " --apply --target leveldb:" + disk.dir() + "/ddl");
  ExpectLocalWriteFailed(r, disk.dir() + "/");
  r = Widen("repair --target leveldb:" + store + " --into leveldb:" + disk.dir() + "/repaired");
  ExpectLocalWriteFailed(r, disk.dir() + "/");
  EXPECT_EQ(Leftovers(disk.dir()), std::vector<std::string>{"store"});
  disk.Free();
  r = Widen("repair --target leveldb:" + store + " --into leveldb:" + disk.dir() + "/repaired");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ExpectAsReference(disk.dir() + "/repaired");
}

TEST_P(LocalFaultsTest, DiagramIntoAMissingFolderOrAFullDiskExits11NamingIt) {
  const std::string m = MappingFor(dir_ + "/unused", "m");
  for (const std::string name : {"d.svg", "d.dot"}) {
    const std::string path = dir_ + "/no/such/" + name;
    CommandResult r = Widen("plan -m " + m + " --limit 0 --diagram " + path);
    EXPECT_EQ(r.exit_code, 11) << r.output;
    EXPECT_NE(r.output.find("the folder '" + dir_ + "/no/such' does not exist"), std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("Graphviz"), std::string::npos) << r.output;
  }
  CommandResult r = Widen("plan -m " + m + " --limit 0 --diagram " + dir_ + "/x.svg/");
  EXPECT_EQ(r.exit_code, 2) << r.output;  // no file name
  fs::create_directories(dir_ + "/folder.svg");
  r = Widen("plan -m " + m + " --limit 0 --diagram " + dir_ + "/folder.svg");
  EXPECT_EQ(r.exit_code, 11) << r.output;
  EXPECT_NE(r.output.find(dir_ + "/folder.svg"), std::string::npos) << r.output;

  REQUIRE_PRIVATE_MOUNTS();
  SmallDisk disk(dir_ + "/disk", kDiskBytes);
  ASSERT_TRUE(disk.mounted());
  const std::string old_dot = disk.dir() + "/old.dot";
  std::ofstream(old_dot) << "digraph old {}\n";
  disk.Fill(0);
  for (const std::string name : {"d.svg", "old.dot"}) {
    r = Widen("plan -m " + m + " --limit 0 --diagram " + disk.dir() + "/" + name);
    ExpectLocalWriteFailed(r, "--diagram " + disk.dir() + "/" + name);
  }
  EXPECT_EQ(Leftovers(disk.dir()), std::vector<std::string>{"old.dot"});
  EXPECT_EQ(ReadFile(old_dot), "digraph old {}\n") << "a failed diagram replaced the old one";
  disk.Free();
  r = Widen("plan -m " + m + " --limit 0 --diagram " + disk.dir() + "/d.svg");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(ReadFile(disk.dir() + "/d.svg").find("<svg"), std::string::npos);
}

TEST_P(LocalFaultsTest, HtmlReportAndMetricsFileOnAFullDiskLeaveTheOldOnes) {
  const std::string m = MappingFor(dir_ + "/store", "m");
  REQUIRE_PRIVATE_MOUNTS();
  SmallDisk disk(dir_ + "/disk", kDiskBytes);
  ASSERT_TRUE(disk.mounted());
  const std::string html = disk.dir() + "/r.html", prom = disk.dir() + "/m.prom";
  std::ofstream(html) << "old page\n";
  std::ofstream(prom) << "# old figures\n";
  disk.Fill(0);
  CommandResult r = Widen("plan -m " + m + " --limit 0 --html " + html);
  ExpectLocalWriteFailed(r, "--html " + html);
  // The store is on a roomy disk: the migrate did its work, only its
  // figures are missing (exit 10, as for stdout).
  r = Widen("migrate -q -m " + m + " --metrics-file " + prom);
  EXPECT_EQ(r.exit_code, 10) << r.output;
  EXPECT_NE(r.output.find("--metrics-file " + prom), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(kNoSpace), std::string::npos) << r.output;
  std::vector<std::string> left = Leftovers(disk.dir());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"m.prom", "r.html"})) << "no temporary file is left";
  EXPECT_EQ(ReadFile(html), "old page\n");
  EXPECT_EQ(ReadFile(prom), "# old figures\n");
  disk.Free();
  r = Widen("plan -m " + m + " --limit 0 --html " + html);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadFile(html).rfind("<!DOCTYPE html>", 0), 0u);
  r = Widen("migrate -q -m " + m + " --metrics-file " + prom);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(ReadFile(prom).find("\nwiden_exit_status{command=\"migrate\""), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Engines, LocalFaultsTest,
                         ::testing::Values(Engine::kPostgres, Engine::kMySql),
                         [](const ::testing::TestParamInfo<Engine>& i) {
                           return EngineName(i.param);
                         });

}  // namespace
}  // namespace widen::testing
