#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <system_error>

#include <leveldb/db.h>
#include <leveldb/options.h>

#include "store/leveldb_create_internal.h"
#include "store/leveldb_format_internal.h"
#include "store/leveldb_marker_internal.h"

namespace widen {
namespace leveldb_store_internal {

namespace {

namespace fs = std::filesystem;
namespace lf = leveldb_format;
namespace lmarker = leveldb_marker;

Status IoError(const std::string& what, int err) { return LocalIoError(what, err); }

// A failed LevelDB call while building a store: an I/O error (a full disk, a
// read-only file system) is LocalIo; anything else is not expected in a new
// directory.
Status BuildError(const std::string& what, const leveldb::Status& s) {
  if (s.IsIOError()) return Status::LocalIo(what + ": " + s.ToString());
  return Status::Internal(what + ": " + s.ToString());
}

std::string RandomHex8() {
  std::random_device rd;
  char b[9];
  std::snprintf(b, sizeof(b), "%08x", static_cast<unsigned>(rd()));
  return b;
}

// Removes the hidden directories of creations of `name` in `parent` that
// died: unlocked, and untouched for `stale_after`.
void RemoveStaleCreations(const fs::path& parent, const std::string& prefix,
                          std::chrono::seconds stale_after) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(parent, ec)) {
    const std::string n = e.path().filename().string();
    if (n.compare(0, prefix.size(), prefix) != 0 || !e.is_directory(ec)) continue;
    const auto age = fs::file_time_type::clock::now() - e.last_write_time(ec);
    if (ec || age < stale_after) continue;
    const int fd = ::open(e.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) fs::remove_all(e.path(), ec);
    ::close(fd);
  }
}

Status SyncDirectory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open '" + dir.string() + "' to sync it", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return IoError("cannot sync '" + dir.string() + "'", err);
  return Status::OK();
}

// Builds the empty store in `temp`: LevelDB's files, the header, the seal.
Status Build(const fs::path& temp, leveldb::Env* env, const CreationOptions& options) {
  leveldb::Options lo = lf::StoreOptions(nullptr);
  lo.create_if_missing = true;
  lo.error_if_exists = true;
  if (env != nullptr) lo.env = env;
  leveldb::DB* raw = nullptr;
  leveldb::Status s = leveldb::DB::Open(lo, temp.string(), &raw);
  if (!s.ok()) {
    return BuildError("creating a store in '" + temp.string() + "'", s);
  }
  std::unique_ptr<leveldb::DB> db(raw);
  if (options.hook) options.hook(CreationStep::kDatabaseCreated);
  const char version = static_cast<char>(lf::kFormatVersion);
  leveldb::WriteOptions sync;
  sync.sync = true;
  s = db->Put(sync, leveldb::Slice(lf::kHeaderKey.data(), lf::kHeaderKey.size()),
              leveldb::Slice(&version, 1));
  if (!s.ok()) {
    return BuildError("writing the header of a store in '" + temp.string() + "'", s);
  }
  if (options.hook) options.hook(CreationStep::kHeaderWritten);
  db.reset();
  WIDEN_ASSIGN_OR_RETURN(lmarker::Marker seal, lmarker::Seal(temp.string()));
  seal.format = lf::kFormatVersion;
  WIDEN_RETURN_IF_ERROR(lmarker::WriteText(temp.string(), lmarker::Encode(seal)));
  return SyncDirectory(temp);
}

}  // namespace

Result<std::unique_ptr<SiblingDirectory>> SiblingDirectory::Make(const std::string& target_path,
                                                                 std::chrono::seconds stale_after) {
  std::error_code ec;
  fs::path target = fs::absolute(target_path, ec).lexically_normal();
  if (ec) return IoError("cannot resolve path '" + target_path + "'", ec.value());
  if (!target.has_filename()) target = target.parent_path();
  if (fs::exists(target, ec)) target = fs::canonical(target, ec);  // a symlink's directory
  const fs::path parent = target.parent_path();
  fs::create_directories(parent, ec);
  if (ec) return IoError("cannot create directory '" + parent.string() + "'", ec.value());
  const std::string prefix = "." + target.filename().string() + ".widen-new-";
  RemoveStaleCreations(parent, prefix, stale_after);
  const fs::path temp = parent / (prefix + RandomHex8());
  if (::mkdir(temp.c_str(), 0755) != 0) {
    return IoError("cannot create '" + target.string() + "': widen builds it in '" + temp.string() +
                       "' beside it and renames it into place, which needs write access to '" +
                       parent.string() + "'",
                   errno);
  }
  const int fd = ::open(temp.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) (void)::flock(fd, LOCK_EX | LOCK_NB);
  return std::unique_ptr<SiblingDirectory>(
      new SiblingDirectory(temp.string(), target.string(), fd));
}

SiblingDirectory::~SiblingDirectory() {
  if (!published_) {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  if (fd_ >= 0) ::close(fd_);
}

void SiblingDirectory::Unlock() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status SiblingDirectory::Publish(bool* taken) {
  *taken = false;
  if (::rename(path_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    // Another creation came first (or the directory was filled meanwhile).
    if (err == ENOTEMPTY || err == EEXIST) {
      *taken = true;
      return Status::OK();
    }
    if (err == EBUSY) {
      return Status::FailedPrecondition(
          "cannot create '" + target_ +
          "': it is a mount point, and widen creates a store by renaming a new directory into "
          "place; give a directory inside it");
    }
    return IoError("cannot rename '" + path_ + "' to '" + target_ + "'", err);
  }
  published_ = true;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  return SyncDirectory(fs::path(target_).parent_path());
}

Status CreateStore(const std::string& path, leveldb::Env* env, const CreationOptions& options) {
  WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<SiblingDirectory> temp,
                         SiblingDirectory::Make(path, options.stale_after));
  if (options.hook) options.hook(CreationStep::kTempDirectoryMade);
  Status built = Build(temp->path(), env, options);
  if (!built.ok()) return built.WithContext("creating the store '" + path + "'");
  if (options.hook) options.hook(CreationStep::kSealed);
  bool taken = false;
  WIDEN_RETURN_IF_ERROR(temp->Publish(&taken));
  if (!taken && options.hook) options.hook(CreationStep::kRenamed);
  return Status::OK();
}

}  // namespace leveldb_store_internal
}  // namespace widen
