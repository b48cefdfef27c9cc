// Helpers for the fault-injection tests (kill -9, a full disk, a source
// killed mid-run), all through the widen binary against real servers:
//
//   - a source data set on either engine (people with versioned answers)
//     and a mapping with a versioned, nested family and a second table whose
//     row keys need the external sort;
//   - widen started in the background (its pid, to kill it);
//   - a small file system: a tmpfs mounted in a private mount namespace of
//     the test process (so nothing is left mounted whatever happens), with a
//     filler file that leaves a chosen number of bytes free;
//   - a private PostgreSQL or MariaDB server (scripts/with-servers.sh run
//     inside the test) that the test may kill -9 and start again.
//
// Not thread safe; one test per process (gtest_discover_tests runs each test
// in a process of its own).
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/test_env.h"

namespace widen::testing {

enum class Engine { kPostgres, kMySql };

/// "Postgres" / "MySql", for test names.
std::string EngineName(Engine e);

/// The harness server's URL for `e` ("" when not set).
std::string EngineUrl(Engine e);

/// Creates tables `person` (id, name, city) with `people` rows and `answer`
/// (person_id, question, answered_ms, text) with 4 questions x 3 versions
/// per person in the database of `url`, on either engine. The values are a
/// function of the ids, the same on both engines.
void LoadPeople(Engine e, const std::string& url, int people);

/// Runs one SQL statement on the database of `url` (either engine) and
/// returns the rows ("<NULL>" for NULL on MySQL, "" on PostgreSQL).
std::vector<std::vector<std::string>> Query(Engine e, const std::string& url,
                                            const std::string& sql);

/// The mapping for LoadPeople's tables into `store` (a directory), with a
/// fixed timestamp_ms, so that every run writes the same cells:
///   f:people   row key id (7 digits); d:name, d:city; family a (VERSIONS 3)
///              holds each answer's three versions (cell timestamp =
///              answered_ms), qualifier = question (2 digits)
///   f:by_city  row key city|id (keys out of read order: the external sort)
std::string PeopleMapping(const std::string& source_url, const std::string& store);

/// A widen process started in the background with `args` (split on
/// spaces), its stdout and stderr in `out_path`, and `env` added to its
/// environment.
struct WidenProcess {
  pid_t pid = -1;
  std::string out_path;

  static WidenProcess Start(const std::string& args, const std::string& out_path,
                            const std::map<std::string, std::string>& env = {});
  /// The exit code (128 + N when killed by signal N), or -1 when still
  /// running after `limit` (it is then killed). *took (may be null) gets
  /// the time waited.
  int Wait(std::chrono::milliseconds limit, std::chrono::milliseconds* took = nullptr);
  /// True while it runs (not yet reaped).
  bool Running();
  std::string Output() const;

  int exited_status_ = -1;  // once reaped: as Wait returns it
};

/// `widen scan TABLE --versions 10 --target leveldb:STORE`: every version of
/// every cell as the shell prints it.
CommandResult ScanAll(const std::string& store, const std::string& table);

/// The N of the "N row(s)" line of a scan's output; -1 when there is none.
long RowsOf(const std::string& scan_output);

/// Enters a private mount namespace (once per process; mounts made after
/// it vanish with the process and are invisible to every other process but
/// its children). Returns "" on success, else why it cannot.
std::string EnterPrivateMountNamespace();

/// A tmpfs of `size_bytes` mounted at `dir` (created). REQUIRES:
/// EnterPrivateMountNamespace succeeded. The destructor unmounts it.
class SmallDisk {
 public:
  SmallDisk(const std::string& dir, uint64_t size_bytes);
  ~SmallDisk();
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& dir() const { return dir_; }
  /// Fills the disk with a filler file, then shrinks it so that
  /// `free_bytes` stay free.
  void Fill(uint64_t free_bytes);
  /// Removes the filler: the room it took is free again.
  void Free();
  /// Bytes free now (statvfs).
  uint64_t FreeBytes() const;

 private:
  std::string dir_;
  bool mounted_ = false;
};

/// A PostgreSQL or MariaDB server of the test's own, started by
/// scripts/with-servers.sh, that the test may kill -9 and start again
/// without touching the servers other tests use.
class PrivateServer {
 public:
  /// Starts the server (up to 120 s); url() is empty when it failed.
  explicit PrivateServer(Engine e);
  /// Stops it (also when it was started again by Restart).
  ~PrivateServer();
  PrivateServer(const PrivateServer&) = delete;
  PrivateServer& operator=(const PrivateServer&) = delete;

  const std::string& url() const { return url_; }
  /// The log of with-servers.sh (why it failed to start).
  std::string Log() const;
  /// kill -9 of the server: MariaDB's one process; PostgreSQL's postmaster
  /// and every backend and helper it started. Returns how many processes.
  int KillHard();
  /// Starts the killed server again on the same data directory and port,
  /// and waits (up to 60 s) until it answers. False when it does not.
  bool Restart();

 private:
  Engine engine_;
  std::string dir_;  // the test's files: env, hold, logs
  pid_t wrapper_ = -1;
  std::string url_;
  std::map<std::string, std::string> env_;  // WIDEN_TEST_* of the server
  std::vector<std::string> argv_;           // the server's command line (MariaDB)
  std::string exe_;                         // the postmaster's binary (PostgreSQL)
  std::string data_dir_;                    // PostgreSQL's data directory
  pid_t restarted_ = -1;                    // MariaDB started again by us
};

/// A test over LoadPeople's data on each engine: SetUp makes a temporary
/// directory (dir_) and a fresh database named after `db_prefix` (db_, its
/// URL) with `people` people; without the engine's server the test is
/// skipped (failed under CI). TearDown removes dir_.
class PeopleTest : public ::testing::TestWithParam<Engine> {
 protected:
  PeopleTest(std::string db_prefix, int people)
      : db_prefix_(std::move(db_prefix)), people_(people) {}
  void SetUp() override {
    const std::string url = EngineUrl(GetParam());
    if (url.empty()) {
      if (InCi()) FAIL() << "no " << EngineName(GetParam()) << " server under CI";
      GTEST_SKIP() << "no " << EngineName(GetParam()) << " server (run through scripts/test.sh)";
    }
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
    db_ = GetParam() == Engine::kPostgres ? FreshPgDatabase(url, db_prefix_)
                                          : FreshMySqlDatabase(url, db_prefix_);
    LoadPeople(GetParam(), db_, people_);
  }
  void TearDown() override;

  std::string dir_;
  std::string db_;

 private:
  std::string db_prefix_;
  int people_;
};

}  // namespace widen::testing
