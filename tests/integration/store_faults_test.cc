// A damaged or contended embedded store through the widen binary: a store
// migrated from PostgreSQL, then damaged — `scan` and `get` exit 6 naming
// the file and never print other data; `widen repair` recovers the rest into
// a new store and a migrate into it restores it; two migrates creating one
// new store at once: one writes it, the other exits 7 ("in use").
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kMapping[] = R"(source: {source}
target: leveldb:{store}
tables:
  - name: t
    from: item
    families: [d]
    key:
      parts: [{{column: id, width: 7}}]
    columns: [label, note]
)";

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void CopyDir(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::remove_all(to, ec);
  fs::copy(from, to, fs::copy_options::recursive);
}

// The largest file of `dir` whose name ends with `suffix`.
std::string FileEndingWith(const std::string& dir, const std::string& suffix) {
  std::string best;
  uintmax_t best_size = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.size() >= suffix.size() &&
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        e.file_size() > best_size) {
      best = n;
      best_size = e.file_size();
    }
  }
  return best;
}

std::string FileStartingWith(const std::string& dir, const std::string& prefix) {
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.compare(0, prefix.size(), prefix) == 0) return n;
  }
  return "";
}

class StoreFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string MappingFor(const std::string& db, const std::string& store) {
    const std::string path = dir_ + "/m_" + fs::path(store).filename().string() + ".yaml";
    std::ofstream(path) << fmt::format(kMapping, fmt::arg("source", db), fmt::arg("store", store));
    return path;
  }
  CommandResult Scan(const std::string& store) {
    return RunCommand(WidenBinary() + " scan t --target leveldb:" + store);
  }
  std::string dir_;
};

TEST_F(StoreFaultsTest, DamagedStoreExits6NamingTheFileThenRepairAndMigrateRestoreIt) {
  WIDEN_REQUIRE_PG(url);
  const std::string db = FreshPgDatabase(url, "widen_it_damage");
  PgQuery(db,
          "CREATE TABLE item (id int PRIMARY KEY, label text, note text); INSERT INTO item "
          "SELECT g, md5(g::text), repeat(chr(65 + g % 26), g % 300) FROM generate_series(1, "
          "3000) g");
  const std::string pristine = dir_ + "/pristine";
  CommandResult r = RunCommand(WidenBinary() + " migrate -q -m " + MappingFor(db, pristine));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string rows = PgQuery(db, "SELECT count(*) FROM item")[0][0];

  // The undamaged output, from a copy (opening a store rewrites its files).
  CopyDir(pristine, dir_ + "/reference");
  const CommandResult reference = Scan(dir_ + "/reference");
  ASSERT_EQ(reference.exit_code, 0) << reference.output;
  ASSERT_NE(reference.output.find("\n" + rows + " row(s)"), std::string::npos)
      << reference.output.substr(reference.output.size() - 200);

  struct Damage {
    std::string file;  // in the pristine store
    std::string how;   // "flip" at the middle, "cut" to half
  };
  const std::vector<Damage> damages = {
      {FileEndingWith(pristine, ".log"), "flip"},
      {FileEndingWith(pristine, ".ldb"), "flip"},
      {FileEndingWith(pristine, ".ldb"), "cut"},
      {FileStartingWith(pristine, "MANIFEST-"), "flip"},
      {"CURRENT", "flip"},
      {"WIDEN_STORE", "flip"},
  };
  const std::string trial = dir_ + "/trial";
  for (const Damage& d : damages) {
    ASSERT_FALSE(d.file.empty());
    CopyDir(pristine, trial);
    const std::string path = trial + "/" + d.file;
    std::string bytes = ReadBytes(path);
    if (d.how == "flip") {
      bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x04);
    } else {
      bytes.resize(bytes.size() / 2);
    }
    WriteBytes(path, bytes);
    for (const std::string& cmd : {std::string(" scan t"), std::string(" get t 0001500")}) {
      r = RunCommand(WidenBinary() + cmd + " --target leveldb:" + trial);
      const std::string context = d.file + " " + d.how + ":" + cmd;
      if (cmd == " get t 0001500" && r.exit_code == 0) {
        // A get that does not reach the damaged block reads the row whole.
        EXPECT_NE(r.output.find("1 row(s)"), std::string::npos) << context << ": " << r.output;
        continue;
      }
      EXPECT_EQ(r.exit_code, 6) << context << ": " << r.output.substr(0, 2000);
      EXPECT_NE(r.output.find(trial + "/" + d.file), std::string::npos)
          << context << ": " << r.output;
      EXPECT_NE(r.output.find("widen repair"), std::string::npos) << context << ": " << r.output;
      EXPECT_EQ(r.output.find("row(s)"), std::string::npos) << context << ": printed rows";
      EXPECT_EQ(ReadBytes(path), bytes) << context << ": the damaged file was changed";
    }
  }

  // Seeded random damage through the binary: the undamaged output or exit 6.
  std::mt19937 rng(613);
  const std::vector<std::string> files = {FileEndingWith(pristine, ".log"),
                                          FileEndingWith(pristine, ".ldb"),
                                          FileStartingWith(pristine, "MANIFEST-"), "CURRENT"};
  for (int i = 0; i < 12; ++i) {
    CopyDir(pristine, trial);
    const std::string name = files[i % files.size()];
    std::string bytes = ReadBytes(trial + "/" + name);
    const size_t at = rng() % bytes.size();
    bytes[at] = static_cast<char>(bytes[at] ^ (1 + rng() % 255));
    WriteBytes(trial + "/" + name, bytes);
    r = Scan(trial);
    if (r.exit_code == 0) {
      EXPECT_EQ(r.output, reference.output) << name << " byte " << at;
    } else {
      EXPECT_EQ(r.exit_code, 6) << name << " byte " << at << ": " << r.output;
      EXPECT_NE(r.output.find(name), std::string::npos) << r.output;
    }
  }

  // Repair a damaged table file into a new store, then migrate into it.
  CopyDir(pristine, trial);
  const std::string table = FileEndingWith(trial, ".ldb");
  std::string bytes = ReadBytes(trial + "/" + table);
  bytes[bytes.size() / 3] = static_cast<char>(bytes[bytes.size() / 3] ^ 0x01);
  WriteBytes(trial + "/" + table, bytes);
  const std::string repaired = dir_ + "/repaired";
  r = RunCommand(WidenBinary() + " repair --target leveldb:" + trial +
                 " --into leveldb:" + repaired);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("damaged: file '" + trial + "/" + table + "'"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("repaired (was complete)"), std::string::npos) << r.output;
  EXPECT_EQ(ReadBytes(trial + "/" + table), bytes) << "the damaged store is left as it was";
  r = Scan(repaired);
  EXPECT_EQ(r.exit_code, 0) << r.output.substr(0, 2000);
  EXPECT_NE(r.output.find("was repaired (widen repair) and may lack cells"), std::string::npos);
  EXPECT_EQ(r.output.find("\n" + rows + " row(s)"), std::string::npos) << "rows were lost";
  r = RunCommand(WidenBinary() + " migrate -q -m " + MappingFor(db, repaired));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Scan(repaired);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output.substr(0, 500);
  // The same rows and values; cell timestamps are each run's start time.
  auto strip_ts = [](std::string s) {
    std::string out;
    size_t p = 0;
    while (p < s.size()) {
      size_t ts = s.find("timestamp=", p);
      if (ts == std::string::npos) {
        out += s.substr(p);
        break;
      }
      out += s.substr(p, ts - p);
      p = s.find(',', ts);
    }
    return out;
  };
  EXPECT_EQ(strip_ts(r.output), strip_ts(reference.output));
}

TEST_F(StoreFaultsTest, TwoMigratesCreatingOneStoreAtOnceTheLoserIsInUse) {
  WIDEN_REQUIRE_PG(url);
  const std::string db = FreshPgDatabase(url, "widen_it_race");
  PgQuery(db,
          "CREATE TABLE item (id int PRIMARY KEY, label text, note text); INSERT INTO item "
          "SELECT g, md5(g::text), 'n' FROM generate_series(1, 200000) g");
  for (int round = 0; round < 3; ++round) {
    const std::string store = dir_ + "/race" + std::to_string(round);
    const std::string m = MappingFor(db, store);
    const std::string w = WidenBinary() + " migrate -q -m " + m;
    const std::string o = dir_ + "/out" + std::to_string(round);
    CommandResult r = RunCommand("(" + w + " >" + o + "a 2>&1; echo $? >" + o + "a.rc) & (" + w +
                                 " >" + o + "b 2>&1; echo $? >" + o + "b.rc) & wait");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::vector<std::pair<int, std::string>> runs = {
        {std::stoi(ReadBytes(o + "a.rc")), ReadBytes(o + "a")},
        {std::stoi(ReadBytes(o + "b.rc")), ReadBytes(o + "b")}};
    std::sort(runs.begin(), runs.end());
    EXPECT_EQ(runs[0].first, 0) << runs[0].second;
    EXPECT_EQ(runs[1].first, 7) << runs[1].second;
    EXPECT_NE(runs[1].second.find("in use by another widen process"), std::string::npos)
        << runs[1].second;
    EXPECT_EQ(runs[1].second.find("not a widen store"), std::string::npos) << runs[1].second;
    r = RunCommand(WidenBinary() + " scan t --target leveldb:" + store + " | tail -1");
    EXPECT_EQ(r.output, "200000 row(s)\n") << "round " << round;
  }
}

}  // namespace
}  // namespace widen::testing
