// CompactionRaceEnv: a leveldb::Env for tests that makes one race happen
// every time: a table file removed by LevelDB's background compaction
// while the opener of the store checks the table files it just listed. It
// forwards to LevelDB's default Env, but the first size query of a table
// file (*.ldb, *.sst) waits until a table file has been removed, and a
// removal of a table file waits until such a query has begun — so the
// removal lands between the listing and the query. Each wait gives up
// after 3 s (then the calls go on in whatever order they come).
//
// Compiled without RTTI (Debian's LevelDB has none), hence its library and
// this opaque interface (as CrashEnv).
//
// Thread safety: the Env may be used by LevelDB's threads at once.
#pragma once

#include <memory>

namespace leveldb {
class Env;
}  // namespace leveldb

namespace widen::testing {

class CompactionRaceEnv {
 public:
  CompactionRaceEnv();
  ~CompactionRaceEnv();
  CompactionRaceEnv(const CompactionRaceEnv&) = delete;
  CompactionRaceEnv& operator=(const CompactionRaceEnv&) = delete;

  /// The Env to give LevelDB; lives as long as this object.
  leveldb::Env* env();
  /// Whether a table file was removed while a size query waited for it.
  bool raced() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace widen::testing
