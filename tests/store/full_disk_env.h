// FullDiskEnv: a leveldb::Env for tests that behaves as a disk that fills
// up: it forwards to LevelDB's default Env and counts every write call
// (creating a file, appending, flushing, syncing); once `writes_allowed`
// calls have passed, each further one fails with an I/O error "No space
// left on device", as a full disk makes them fail.
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

class FullDiskEnv {
 public:
  /// `writes_allowed`: write calls that succeed before the disk is full
  /// (negative: never full).
  explicit FullDiskEnv(int writes_allowed);
  ~FullDiskEnv();
  FullDiskEnv(const FullDiskEnv&) = delete;
  FullDiskEnv& operator=(const FullDiskEnv&) = delete;

  /// The Env to give LevelDB; lives as long as this object.
  leveldb::Env* env();
  /// Write calls seen so far (failed ones included).
  int writes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace widen::testing
