// Creating an embedded store is atomic: a process killed at any moment of a
// creation leaves no store or a complete empty one that the next run
// accepts, and two processes creating the same store at once end with one
// store, the second one told it is in use. Children are forked and killed
// with SIGKILL, at each step of the creation and at random times.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "store/leveldb_create_internal.h"
#include "store/leveldb_marker_internal.h"
#include "store/leveldb_store.h"
#include "tests/store/full_disk_env.h"

namespace widen {
namespace {

namespace fs = std::filesystem;
using leveldb_store_internal::CreateStore;
using leveldb_store_internal::CreationOptions;
using leveldb_store_internal::CreationStep;

class CreationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "widen_create_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Hidden directories of creations left in dir_.
  std::vector<std::string> Leftovers() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string n = e.path().filename().string();
      if (n.find(".widen-new-") != std::string::npos) out.push_back(n);
    }
    return out;
  }

  // After a killed creation of `path`: no store, or an empty store that
  // opens; either way a run then opens (or creates) it and finds it empty.
  void ExpectNoStoreOrAnEmptyOne(const std::string& path, const std::string& context) {
    StoreOptions no_create;
    no_create.create_if_missing = false;
    if (fs::exists(path)) {
      EXPECT_TRUE(fs::exists(path + "/" + leveldb_marker::kMarkerFile)) << context;
      auto store = LevelDbStore::Open(path, no_create);
      ASSERT_TRUE(store.ok()) << context << ": " << store.status().ToString();
      EXPECT_TRUE((*store)->ListTables()->empty()) << context;
      ++complete_;
    } else {
      ++absent_;
      // The next creation removes what the dead one left.
      CreationOptions o;
      o.stale_after = std::chrono::seconds(0);
      ASSERT_TRUE(CreateStore(path, nullptr, o).ok()) << context;
      EXPECT_TRUE(Leftovers().empty()) << context << ": " << Leftovers().front();
    }
    auto store = LevelDbStore::Open(path, StoreOptions());
    ASSERT_TRUE(store.ok()) << context << ": " << store.status().ToString();
    EXPECT_TRUE((*store)->ListTables()->empty()) << context;
  }

  std::string dir_;
  int absent_ = 0;
  int complete_ = 0;
};

// Runs `child` in a forked process; returns its wait status.
template <typename F>
int InChild(F child, pid_t* pid_out = nullptr, int kill_after_us = -1) {
  const pid_t pid = fork();
  if (pid == 0) {
    child();
    _exit(0);
  }
  if (pid_out != nullptr) *pid_out = pid;
  if (kill_after_us >= 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(kill_after_us));
    kill(pid, SIGKILL);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST_F(CreationTest, KilledAtEachStepLeavesNoStoreOrACompleteEmptyOne) {
  const CreationStep steps[] = {CreationStep::kTempDirectoryMade, CreationStep::kDatabaseCreated,
                                CreationStep::kHeaderWritten, CreationStep::kSealed,
                                CreationStep::kRenamed};
  int trial = 0;
  for (int round = 0; round < 3; ++round) {
    for (CreationStep step : steps) {
      const std::string path = dir_ + "/store" + std::to_string(trial++);
      const int status = InChild([&] {
        CreationOptions o;
        o.hook = [step](CreationStep at) {
          if (at == step) raise(SIGKILL);
        };
        (void)CreateStore(path, nullptr, o);
      });
      ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "step " << int(step);
      // Killed before the rename: a hidden directory with LevelDB's files
      // (and no marker, before kSealed) — never at the store's path.
      if (step != CreationStep::kRenamed) {
        EXPECT_FALSE(fs::exists(path)) << "step " << int(step);
        EXPECT_EQ(Leftovers().size(), 1u) << "step " << int(step);
      }
      ExpectNoStoreOrAnEmptyOne(path, "killed at step " + std::to_string(int(step)));
    }
  }
  EXPECT_EQ(absent_, 12);
  EXPECT_EQ(complete_, 3);
}

TEST_F(CreationTest, KilledAtRandomTimesLeavesNoStoreOrACompleteEmptyOne) {
  // How long a creation takes here, from fork to exit.
  const auto t0 = std::chrono::steady_clock::now();
  InChild([&] { (void)LevelDbStore::Open(dir_ + "/calibrate", StoreOptions()); });
  const int span_us = static_cast<int>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
          .count());
  std::mt19937 rng(1306);
  int killed = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const std::string path = dir_ + "/random" + std::to_string(trial);
    const int at_us = static_cast<int>(rng() % static_cast<unsigned>(span_us + 1));
    const int status = InChild(
        [&] {
          bool ok = false;
          {
            auto store = LevelDbStore::Open(path, StoreOptions());
            ok = store.ok();
          }
          _exit(ok ? 0 : 1);
        },
        nullptr, at_us);
    if (WIFSIGNALED(status)) ++killed;
    if (WIFEXITED(status)) {
      EXPECT_EQ(WEXITSTATUS(status), 0) << "trial " << trial;
    }
    ExpectNoStoreOrAnEmptyOne(path, "trial " + std::to_string(trial) + " killed after " +
                                        std::to_string(at_us) + " us of " +
                                        std::to_string(span_us));
  }
  std::printf("creation kills: %d trials, %d killed (%d no store, %d complete), span %d us\n", 24,
              killed, absent_, complete_, span_us);
  EXPECT_GT(killed, 0);
}

// Two processes create the same new store at once and keep it open: one
// gets it, the other is told it is in use (exit 7), never "not a widen
// store".
TEST_F(CreationTest, TwoCreationsAtOnceOneStoreTheOtherInUse) {
  for (int round = 0; round < 5; ++round) {
    const std::string path = dir_ + "/both" + std::to_string(round);
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    std::vector<pid_t> pids;
    for (int c = 0; c < 2; ++c) {
      const pid_t pid = fork();
      if (pid == 0) {
        close(go[1]);
        char b;
        if (read(go[0], &b, 1) != 1) _exit(3);
        auto store = LevelDbStore::Open(path, StoreOptions());
        if (store.ok()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(400));
          _exit(0);
        }
        std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
        _exit(store.status().code() == StatusCode::kAborted ? 7 : 1);
      }
      pids.push_back(pid);
    }
    close(go[0]);
    ASSERT_EQ(write(go[1], "gg", 2), 2);
    close(go[1]);
    std::vector<int> codes;
    for (pid_t pid : pids) {
      int status = 0;
      waitpid(pid, &status, 0);
      ASSERT_TRUE(WIFEXITED(status));
      codes.push_back(WEXITSTATUS(status));
    }
    std::sort(codes.begin(), codes.end());
    EXPECT_EQ(codes, (std::vector<int>{0, 7})) << "round " << round;
    auto store = LevelDbStore::Open(path, StoreOptions());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
  }
  EXPECT_TRUE(Leftovers().empty());
}

// A disk that fills up at each write of a creation: the creation fails
// (LocalIo, naming the store) and leaves nothing, no store and no
// hidden directory; with room again, the store is created.
TEST_F(CreationTest, FullDiskAtEachWriteLeavesNothing) {
  testing::FullDiskEnv unlimited(-1);
  ASSERT_TRUE(CreateStore(dir_ + "/count", unlimited.env(), CreationOptions()).ok());
  const int writes = unlimited.writes();
  ASSERT_GT(writes, 3);
  for (int allowed = 0; allowed < writes; ++allowed) {
    const std::string path = dir_ + "/full" + std::to_string(allowed);
    testing::FullDiskEnv full(allowed);
    Status s = CreateStore(path, full.env(), CreationOptions());
    EXPECT_EQ(s.code(), StatusCode::kLocalIo) << allowed << ": " << s.ToString();
    EXPECT_NE(s.message().find("No space left on device"), std::string::npos) << s.message();
    EXPECT_FALSE(fs::exists(path)) << allowed;
    EXPECT_TRUE(Leftovers().empty()) << allowed << ": " << Leftovers().front();
    auto store = LevelDbStore::Open(path, StoreOptions());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
  }
  std::printf("full disk at each of %d writes of a creation: nothing left\n", writes);
}

// An empty directory made beforehand is taken (renamed over), as before.
TEST_F(CreationTest, AnEmptyDirectoryBecomesTheStore) {
  const std::string path = dir_ + "/empty";
  fs::create_directories(path);
  auto store = LevelDbStore::Open(path, StoreOptions());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_TRUE(fs::exists(path + "/CURRENT"));
  EXPECT_TRUE(Leftovers().empty());
}

}  // namespace
}  // namespace widen
