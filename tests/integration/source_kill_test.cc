// The source server killed (kill -9) while `widen migrate` reads it, on both
// engines: a private server of this test (scripts/with-servers.sh run
// inside it; the servers other tests use are never touched). widen ends at
// once with exit 3 and "the connection to the source was lost", nothing is
// recorded as done (the table says it is incomplete), and once the server
// is started again the same command converges to a clean run's store,
// every version.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/integration/fault_env.h"

namespace widen::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class SourceKillTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    // The harness's server says the engine is there to test.
    if (EngineUrl(GetParam()).empty()) {
      if (InCi()) FAIL() << "no " << EngineName(GetParam()) << " server under CI";
      GTEST_SKIP() << "no " << EngineName(GetParam()) << " server (run through scripts/test.sh)";
    }
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  std::string dir_;
};

TEST_P(SourceKillTest, ServerKilledMidRunExits3ThenTheRunAfterItsRestartConverges) {
  const auto start = Clock::now();
  PrivateServer server(GetParam());
  ASSERT_FALSE(server.url().empty()) << "the private server did not start:\n" << server.Log();
  const std::string db = GetParam() == Engine::kPostgres
                             ? FreshPgDatabase(server.url(), "widen_it_srckill")
                             : FreshMySqlDatabase(server.url(), "widen_it_srckill");
  LoadPeople(GetParam(), db, 20000);

  const std::string reference = dir_ + "/reference";
  const std::string ref_mapping = dir_ + "/reference.yaml";
  std::ofstream(ref_mapping) << PeopleMapping(db, reference);
  CommandResult r = RunCommand(WidenBinary() + " migrate -q -m " + ref_mapping);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string ref_people = ScanAll(reference, "f:people").output;
  const std::string ref_by_city = ScanAll(reference, "f:by_city").output;
  ASSERT_EQ(RowsOf(ref_people), 20000);

  const std::string store = dir_ + "/store";
  const std::string mapping = dir_ + "/m.yaml";
  std::string m = PeopleMapping(db, store);
  if (GetParam() == Engine::kPostgres) {
    // PostgreSQL streams the rows through COPY, whatever --fetch-rows: a
    // sleep on every tenth row (the filter holds for every row; a volatile
    // call in the row's own expression, or the server would run it once;
    // each pg_sleep waits about 1 ms) keeps the run reading f:people for
    // about 2 s.
    const std::string from = "    from: person\n";
    m.insert(m.find(from) + from.size(),
             "    where: \"(CASE WHEN person.id % 10 = 0 THEN pg_sleep(0.0001)::text ELSE '' END) "
             "= ''\"\n");
  }
  std::ofstream(mapping) << m;
  // Small fetches: the run reads for a while, the store already written to.
  WidenProcess w =
      WidenProcess::Start("migrate -q --fetch-rows 20 -m " + mapping, dir_ + "/widen.out");
  const auto limit = Clock::now() + std::chrono::seconds(30);
  while (!fs::exists(store) && Clock::now() < limit && w.Running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(w.Running()) << "the run ended before the server was killed:\n" << w.Output();
  const int killed = server.KillHard();
  ASSERT_GE(killed, 1);
  std::chrono::milliseconds took{0};
  const int rc = w.Wait(std::chrono::seconds(20), &took);
  const std::string out = w.Output();
  EXPECT_EQ(rc, 3) << out;
  EXPECT_NE(out.find("the connection to the source was lost"), std::string::npos) << out;
  EXPECT_LT(took.count(), 5000) << out;

  // Nothing recorded as done: the table being written says so.
  r = RunCommand(WidenBinary() + " scan f:people --limit 1 --target leveldb:" + store);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("table 'f:people' is incomplete"), std::string::npos) << r.output;

  // The server back (crash recovery), the same command again.
  ASSERT_TRUE(server.Restart()) << server.Log();
  r = RunCommand(WidenBinary() + " migrate -q -m " + mapping);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const bool people_same = ScanAll(store, "f:people").output == ref_people;
  const bool by_city_same = ScanAll(store, "f:by_city").output == ref_by_city;
  EXPECT_TRUE(people_same);
  EXPECT_TRUE(by_city_same);
  std::printf(
      "%s: %d server process(es) killed mid-run; widen exit %d after %lld ms; re-run %s; "
      "%.1f s\n",
      EngineName(GetParam()).c_str(), killed, rc, static_cast<long long>(took.count()),
      people_same && by_city_same ? "converged" : "DIFFERS",
      std::chrono::duration<double>(Clock::now() - start).count());
}

INSTANTIATE_TEST_SUITE_P(Engines, SourceKillTest,
                         ::testing::Values(Engine::kPostgres, Engine::kMySql),
                         [](const ::testing::TestParamInfo<Engine>& i) {
                           return EngineName(i.param);
                         });

}  // namespace
}  // namespace widen::testing
