// kill -9 at seeded random moments of `widen migrate` into the embedded
// store, on both engines, including while the store is being created: the
// run after the kills converges to the store of a clean run, every version
// of every cell of both target tables (one nested with versioned cells, one
// written through the external sort), compared as `widen scan --versions`
// prints them. After each kill the store opens (never "damaged", never "not
// a widen store") and a table being written says it is incomplete.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "tests/integration/fault_env.h"

namespace widen::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kPeople = 25000;
constexpr int kChains = 4;             // stores, each killed kKillsPerChain times, then run whole
constexpr int kKillsPerChain = 4;      // the first while the store is being created
constexpr int kMaxKillsPerChain = 12;  // more kills until one lands mid-write
constexpr unsigned kSeed = 202613;     // std::mt19937: the delays of every trial

// The hidden directories of creations of `name` in `parent`
// (store/leveldb_create_internal.h: PARENT/.NAME.widen-new-XXXXXXXX).
std::set<std::string> Creations(const std::string& parent, const std::string& name) {
  std::set<std::string> out;
  std::error_code ec;
  const std::string prefix = "." + name + ".widen-new-";
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0) out.insert(n);
  }
  return out;
}

class MigrateKillTest : public PeopleTest {
 protected:
  MigrateKillTest() : PeopleTest("widen_it_kill", kPeople) {}
  std::string MappingFor(const std::string& store) {
    const std::string path = store + ".yaml";
    std::ofstream(path) << PeopleMapping(db_, store);
    return path;
  }
};

TEST_P(MigrateKillTest, KilledAnywhereIncludingCreationTheNextRunConverges) {
  const auto test_start = Clock::now();
  // The reference: one clean run, and when it begins writing and ends here:
  // the later kills land in between.
  const std::string reference = dir_ + "/reference";
  const std::string ref_mapping = MappingFor(reference);
  WidenProcess ref = WidenProcess::Start("migrate -q -m " + ref_mapping, dir_ + "/reference.out");
  const auto t0 = Clock::now();
  while (!fs::exists(reference) && ref.Running()) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const auto store_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  ASSERT_EQ(ref.Wait(std::chrono::seconds(60)), 0) << ref.Output();
  const auto full_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  const int64_t window_ms = std::max<int64_t>(1, full_ms - store_ms);
  CommandResult r;
  const long people = std::stol(Query(GetParam(), db_, "SELECT count(*) FROM person")[0][0]);
  const CommandResult ref_people = ScanAll(reference, "f:people");
  const CommandResult ref_by_city = ScanAll(reference, "f:by_city");
  ASSERT_EQ(RowsOf(ref_people.output), people);
  ASSERT_EQ(RowsOf(ref_by_city.output), people);
  // Every answer's three versions are there (the family keeps 3).
  const long answers = std::stol(Query(GetParam(), db_, "SELECT count(*) FROM answer")[0][0]);
  size_t answer_cells = 0;
  for (size_t p = ref_people.output.find(" column=a:"); p != std::string::npos;
       p = ref_people.output.find(" column=a:", p + 1)) {
    ++answer_cells;
  }
  ASSERT_EQ(static_cast<long>(answer_cells), answers);

  std::mt19937 rng(kSeed);
  int kills = 0, ended_first = 0, in_creation = 0, mid_write = 0, converged = 0;
  // The load of the machine moves the phases of a run against the clean
  // run's: while fewer than 4 kills landed mid-write, up to two more chains.
  int chains = 0;
  for (int chain = 0; chain < kChains || (mid_write < kChains && chain < kChains + 2); ++chain) {
    ++chains;
    const std::string name = "s" + std::to_string(chain);
    const std::string store = dir_ + "/" + name;
    const std::string mapping = MappingFor(store);
    const int jobs = chain % 2 == 0 ? 1 : 2;
    const std::string args = fmt::format("migrate -q -m {} --jobs {}", mapping, jobs);
    // Each chain kills kKillsPerChain times, and more (up to kMaxKillsPerChain)
    // until one of its kills landed while cells were being written: how many
    // land there depends on the machine's speed, not on widen.
    int chain_mid_write = 0;
    for (int k = 0; k < kKillsPerChain || (chain_mid_write == 0 && k < kMaxKillsPerChain); ++k) {
      SCOPED_TRACE(fmt::format("chain {} kill {}", chain, k));
      // Hidden directories of creations killed before (removed by a later
      // creation once 10 s old).
      const std::set<std::string> before = Creations(dir_, name);
      WidenProcess w = WidenProcess::Start(args, fmt::format("{}/out{}_{}", dir_, chain, k));
      if (k == 0) {
        // Wait for the creation to begin, then kill within 1.5 ms of it.
        const auto limit = Clock::now() + std::chrono::seconds(20);
        while (Creations(dir_, name) == before && !fs::exists(store) && Clock::now() < limit &&
               w.Running()) {
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 1500));
      } else {
        // In the first 4/5 of the clean run's writing (a run with --jobs 2,
        // or into a store created before, ends sooner than the clean run);
        // the third and fourth kill of a chain in its second and third
        // fifths: the first cells reach the store once a write batch is
        // full, and a run that reads fast (PostgreSQL's COPY) spends the
        // first fifths reading.
        const int64_t from = k == 1 ? 0 : window_ms * 2 / 5;
        std::this_thread::sleep_for(std::chrono::milliseconds(
            store_ms + from + rng() % std::max<int64_t>(1, window_ms * 4 / 5 - from)));
      }
      if (w.pid > 0) kill(w.pid, SIGKILL);
      const int rc = w.Wait(std::chrono::seconds(10));
      if (rc == 128 + SIGKILL) {
        ++kills;
      } else {
        ++ended_first;
        EXPECT_EQ(rc, 0) << w.Output();
      }
      if (!fs::exists(store)) {
        // A creation cut short leaves no store at the path, only its hidden
        // directory.
        const std::set<std::string> after = Creations(dir_, name);
        if (!std::includes(before.begin(), before.end(), after.begin(), after.end())) {
          ++in_creation;
        }
        continue;
      }
      // The store opens; a table the run did not finish says so. A kill
      // landed mid-write when a table says so and holds rows, or when the
      // run left table files it was writing (named widen-ingest-...; the
      // next open removes them: docs/format.md, "Table files written
      // directly").
      bool written_part = false;
      {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(store, ec)) {
          written_part |= e.path().filename().string().rfind("widen-ingest-", 0) == 0;
        }
      }
      for (const std::string table : {"f:people", "f:by_city"}) {
        const CommandResult scan =
            RunCommand(WidenBinary() + " scan " + table + " --limit 1 --target leveldb:" + store);
        // (Tables are created one after the other before any is written.)
        const bool not_created =
            scan.exit_code == 2 &&
            scan.output.find("table '" + table + "' does not exist") != std::string::npos;
        EXPECT_TRUE(scan.exit_code == 0 || not_created) << scan.output.substr(0, 2000);
        if (scan.output.find("table '" + table + "' is incomplete") != std::string::npos &&
            RowsOf(scan.output) == 1) {
          written_part = true;
        }
      }
      if (written_part) {
        ++mid_write;
        ++chain_mid_write;
      }
    }
    r = RunCommand(WidenBinary() + " " + args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const CommandResult got_people = ScanAll(store, "f:people");
    const CommandResult got_by_city = ScanAll(store, "f:by_city");
    EXPECT_EQ(got_people.exit_code, 0);
    EXPECT_EQ(got_by_city.exit_code, 0);
    const bool same =
        got_people.output == ref_people.output && got_by_city.output == ref_by_city.output;
    EXPECT_TRUE(same) << "chain " << chain << ": the store differs from a clean run's ("
                      << RowsOf(got_people.output) << " and " << RowsOf(got_by_city.output)
                      << " rows)\n"
                      << got_people.output.substr(0, 500);
    if (same) ++converged;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - test_start).count();
  std::printf(
      "%s: clean run %lld ms (store created after %lld ms); %d kills (%d in store creation, %d "
      "mid-write with the table "
      "incomplete), %d runs ended before their kill; %d of %d stores converged; %.1f s\n",
      EngineName(GetParam()).c_str(), static_cast<long long>(full_ms),
      static_cast<long long>(store_ms), kills, in_creation, mid_write, ended_first, converged,
      chains, seconds);
  EXPECT_GE(kills, 11);
  EXPECT_GE(in_creation, 1) << "no kill landed while the store was being created";
  EXPECT_GE(mid_write, kChains) << "a chain of kills never landed while cells were being written";
  EXPECT_EQ(converged, chains);
}

INSTANTIATE_TEST_SUITE_P(Engines, MigrateKillTest,
                         ::testing::Values(Engine::kPostgres, Engine::kMySql),
                         [](const ::testing::TestParamInfo<Engine>& i) {
                           return EngineName(i.param);
                         });

}  // namespace
}  // namespace widen::testing
