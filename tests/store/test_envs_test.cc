// The test Envs themselves (crash_env.h, full_disk_env.h): the crash copy
// keeps exactly the synced bytes, the full disk fails from the write after
// the allowed ones with "No space left on device". Expected values follow
// from the bytes written here.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <leveldb/env.h>

#include "tests/store/crash_env.h"
#include "tests/store/full_disk_env.h"

namespace widen::testing {
namespace {

std::string TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "widen_env_XXXXXX").string();
  return mkdtemp(tmpl.data()) != nullptr ? tmpl : "";
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TestEnvsTest, ACrashCopyKeepsOnlyTheSyncedBytes) {
  const std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  CrashEnv crash;
  leveldb::WritableFile* raw = nullptr;
  ASSERT_TRUE(crash.env()->NewWritableFile(dir + "/f", &raw).ok());
  std::unique_ptr<leveldb::WritableFile> f(raw);
  ASSERT_TRUE(f->Append("synced").ok());
  ASSERT_TRUE(f->Sync().ok());
  ASSERT_TRUE(f->Append(" lost").ok());
  ASSERT_TRUE(f->Flush().ok());
  EXPECT_EQ(Read(dir + "/f"), "synced lost");  // the live file has both
  std::string error;
  ASSERT_TRUE(crash.CopyAfterCrash(dir, dir + "-after", &error)) << error;
  EXPECT_EQ(Read(dir + "-after/f"), "synced");
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(dir + "-after");
}

TEST(TestEnvsTest, AFullDiskFailsEveryWriteAfterTheAllowedOnes) {
  const std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  FullDiskEnv full(2);  // creating the file and one append
  leveldb::WritableFile* raw = nullptr;
  ASSERT_TRUE(full.env()->NewWritableFile(dir + "/f", &raw).ok());
  std::unique_ptr<leveldb::WritableFile> f(raw);
  EXPECT_TRUE(f->Append("x").ok());
  const leveldb::Status s = f->Append("y");
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find("No space left on device"), std::string::npos) << s.ToString();
  EXPECT_FALSE(f->Sync().ok());
  EXPECT_EQ(full.writes(), 4);

  FullDiskEnv never(-1);
  ASSERT_TRUE(never.env()->NewWritableFile(dir + "/g", &raw).ok());
  std::unique_ptr<leveldb::WritableFile> g(raw);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(g->Append("z").ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace widen::testing
