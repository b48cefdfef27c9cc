// CrashEnv: a leveldb::Env for tests that can show a directory as a crash
// of the machine would leave it (RocksDB's FaultInjectionTestFS, smaller):
// it forwards every call to LevelDB's default Env and remembers, for every
// file written through it, how many bytes were synced. CopyAfterCrash
// copies the directory with each such file cut to its synced length — the
// bytes a power loss keeps. Renames and deletions are taken as durable
// (LevelDB syncs the directory when it matters); files not written through
// the Env are copied whole.
//
// Compiled without RTTI (Debian's LevelDB has none), hence its own library
// and this opaque interface.
//
// Thread safety: the Env may be used by LevelDB's threads at once.
#pragma once

#include <memory>
#include <string>

namespace leveldb {
class Env;
}  // namespace leveldb

namespace widen::testing {

class CrashEnv {
 public:
  CrashEnv();
  ~CrashEnv();
  CrashEnv(const CrashEnv&) = delete;
  CrashEnv& operator=(const CrashEnv&) = delete;

  /// The Env to open a database with; lives as long as this object.
  leveldb::Env* env();

  /// Copies directory `dir` into `to` (created) as it would be after a
  /// crash now. False with *error set when a file cannot be copied.
  bool CopyAfterCrash(const std::string& dir, const std::string& to, std::string* error);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace widen::testing
