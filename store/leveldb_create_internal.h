// Creating an embedded store atomically: the new, empty store is built in a
// hidden sibling directory of its path — LevelDB's files, the store header,
// the sealed marker, all synced — and then renamed onto the path in one
// step (rename(2) also replaces an empty directory). Whatever stops the
// process at any moment (kill -9, a full disk, a power loss) leaves either
// no store at the path or a complete empty one; a second process creating
// the same store at once finds the rename taken (the path is no longer
// empty) and opens the store the first one made.
//
//   PARENT/.NAME.widen-new-XXXXXXXX/   while being built (flock'ed by its
//                                      creator); left behind by a creator
//                                      that died, removed by the next
//                                      creation in PARENT once unlocked and
//                                      untouched for kStaleAfter
//   PARENT/NAME/                       the store, once renamed
//
// Internal to store/ (and its tests). Thread safety: any number of
// processes and threads may create the same path at once.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "common/status.h"

namespace leveldb {
class Env;
}  // namespace leveldb

namespace widen {
namespace leveldb_store_internal {

/// The points of a creation, in order, for tests that stop it at each.
enum class CreationStep {
  kTempDirectoryMade,  // the hidden directory exists, empty
  kDatabaseCreated,    // LevelDB's files are in it
  kHeaderWritten,      // the store header is written (synced)
  kSealed,             // the database is closed and the sealed marker written
  kRenamed,            // the store is at its path
};

/// Options of CreateStore.
struct CreationOptions {
  /// Called at each step (may be null); tests kill the process there.
  std::function<void(CreationStep)> hook;
  /// A leftover hidden directory older than this, and not locked, is
  /// removed by a creation in the same parent directory.
  std::chrono::seconds stale_after{10};
};

/// A new hidden directory beside a target path,
/// PARENT/.NAME.widen-new-XXXXXXXX, flock()ed while this object lives, to
/// build a store in and rename onto the target. The destructor removes it
/// unless Publish succeeded.
class SiblingDirectory {
 public:
  /// Makes the directory (and PARENT when missing), after removing the
  /// leftovers of dead creations of the same target older than
  /// `stale_after`. LocalIo when PARENT cannot be made or written (naming
  /// it and the reason).
  static Result<std::unique_ptr<SiblingDirectory>> Make(const std::string& target,
                                                        std::chrono::seconds stale_after);
  SiblingDirectory(const SiblingDirectory&) = delete;
  SiblingDirectory& operator=(const SiblingDirectory&) = delete;
  ~SiblingDirectory();

  /// The hidden directory.
  const std::string& path() const { return path_; }
  /// The target, absolute.
  const std::string& target() const { return target_; }

  /// Renames the hidden directory onto the target (which must not exist or
  /// be an empty directory) and syncs PARENT. Sets *taken, removing the
  /// hidden directory and returning OK, when the target is no longer empty.
  /// FailedPrecondition when the target is a mount point.
  Status Publish(bool* taken);

  /// Releases the lock early, for a caller about to open the directory as
  /// a store (which takes the same lock itself).
  void Unlock();

 private:
  SiblingDirectory(std::string path, std::string target, int fd)
      : path_(std::move(path)), target_(std::move(target)), fd_(fd) {}

  const std::string path_;
  const std::string target_;
  int fd_;  // the hidden directory, flock()ed; -1 once published
  bool published_ = false;
};

/// Creates an empty store at `path` as described above. REQUIRES: `path`
/// does not exist or is an empty directory. Returns OK also when another
/// process created a store there first (the caller then opens it), and when
/// the path was filled meanwhile by anything else (the caller's open then
/// refuses it). `env` (borrowed; null: LevelDB's default) is LevelDB's Env.
/// LocalIo when a file or directory cannot be written (a full disk, a
/// read-only file system, no write access to the parent directory, where
/// widen creates the hidden sibling), naming the path and the reason;
/// FailedPrecondition when the path is a mount point.
Status CreateStore(const std::string& path, leveldb::Env* env, const CreationOptions& options);

}  // namespace leveldb_store_internal
}  // namespace widen
