#include "store/leveldb_repair.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>

#include "common/table_descriptor.h"
#include "store/leveldb_create_internal.h"
#include "store/leveldb_files_internal.h"
#include "store/leveldb_ingest_internal.h"
#include "store/leveldb_format_internal.h"
#include "store/leveldb_marker_internal.h"
#include "store/leveldb_store.h"
#include "store/table_state.h"

namespace widen {

namespace {

namespace fs = std::filesystem;
namespace lf = leveldb_format;
namespace lfiles = leveldb_files;
namespace lmarker = leveldb_marker;
using leveldb_store_internal::SiblingDirectory;

constexpr char kRepairedState[] = "repaired";

// Holds the old store against every other widen (and LevelDB) process: the
// directory's flock, as an open store takes it, and LevelDB's LOCK file.
class OldStoreLock {
 public:
  ~OldStoreLock() {
    if (lock_file_fd_ >= 0) ::close(lock_file_fd_);
    if (dir_fd_ >= 0) ::close(dir_fd_);
  }
  Status Take(const std::string& dir) {
    auto busy = [&dir] {
      return "repairing store '" + dir + "': the store is in use by another widen process" +
             leveldb_files::FlockHolder(dir) +
             " (one process at a time may open it); run again when that one has ended";
    };
    dir_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd_ < 0) {
      return LocalIoError("cannot open '" + dir + "'", errno);
    }
    if (::flock(dir_fd_, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
      return Status::Aborted(busy());
    }
    const std::string lock_file = (fs::path(dir) / "LOCK").string();
    lock_file_fd_ = ::open(lock_file.c_str(), O_RDWR | O_CLOEXEC);
    if (lock_file_fd_ >= 0) {
      struct flock l {};
      l.l_type = F_WRLCK;
      l.l_whence = SEEK_SET;
      if (::fcntl(lock_file_fd_, F_SETLK, &l) != 0 && (errno == EAGAIN || errno == EACCES)) {
        return Status::Aborted(busy());
      }
    }
    return Status::OK();
  }

 private:
  int dir_fd_ = -1;
  int lock_file_fd_ = -1;
};

// A failed LevelDB call on the copy being repaired: an I/O error (a full
// disk where the new store is built) is LocalIo, anything else DataLoss.
Status CopyError(const std::string& what, const leveldb::Status& s) {
  if (s.IsIOError()) return Status::LocalIo(what + ": " + s.ToString());
  return Status::DataLoss(what + ": " + s.ToString());
}

bool IsStoreFile(const std::string& name) {
  return lfiles::KindOf(name) != lfiles::FileKind::kOther;
}

// Copies the LevelDB files of `from` into `to`.
Status CopyStoreFiles(const std::string& from, const std::string& to) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(from, ec)) {
    const std::string name = e.path().filename().string();
    if (!IsStoreFile(name) || !e.is_regular_file(ec)) continue;
    fs::copy_file(e.path(), fs::path(to) / name, ec);
    if (ec) {
      return LocalIoError("copying '" + e.path().string() + "' to '" + to + "'", ec.value());
    }
  }
  if (ec) return LocalIoError("listing '" + from + "'", ec.value());
  return Status::OK();
}

// Looks at every file of the copy before RepairDB changes it: which are
// damaged, and whether the damage loses cells (a log or table file) or only
// what RepairDB rebuilds (MANIFEST, CURRENT).
Status FindDamage(const std::string& from, const std::string& copy, RepairReport* report) {
  std::map<std::string, uint64_t> sealed_table_sizes;
  Result<std::string> text = lmarker::ReadText(from);
  if (text.ok()) {
    Result<lmarker::Marker> marker =
        lmarker::Decode(*text, (fs::path(from) / lmarker::kMarkerFile).string());
    if (!marker.ok()) {
      report->damage.push_back(marker.status().message() + ": written again");
    } else if (marker->closed) {
      bool stale = false;
      WIDEN_ASSIGN_OR_RETURN(std::vector<lmarker::Difference> differences,
                             lmarker::Compare(from, *marker, &stale));
      for (const lmarker::Difference& d : differences) {
        const lfiles::FileKind kind = lfiles::KindOf(d.name);
        const bool holds_cells = kind == lfiles::FileKind::kLog || kind == lfiles::FileKind::kTable;
        report->damage.push_back("file '" + (fs::path(from) / d.name).string() + "' " + d.what +
                                 (holds_cells ? "" : ": rebuilt from the table files"));
        report->lost_cells = report->lost_cells || holds_cells;
      }
      if (!stale) {
        for (const lmarker::SealedFile& f : marker->files) {
          if (lfiles::KindOf(f.name) == lfiles::FileKind::kTable) {
            sealed_table_sizes[f.name] = f.size_bytes;
          }
        }
      }
    }
  }
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(copy, ec)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string path = (fs::path(copy) / name).string();
    const std::string shown = (fs::path(from) / name).string();
    const auto already = [&]() {
      for (const std::string& d : report->damage) {
        if (d.find("'" + shown + "'") != std::string::npos) return true;
      }
      return false;
    };
    switch (lfiles::KindOf(name)) {
      case lfiles::FileKind::kLog: {
        // RepairDB reads logs without checking their checksums: it gets
        // only the records that read back whole.
        const std::string salvaged = path + ".salvaged";
        WIDEN_ASSIGN_OR_RETURN(lfiles::LogSalvage salvage, lfiles::SalvageLogFile(path, salvaged));
        fs::rename(salvaged, path, ec);
        if (ec) return LocalIoError("replacing '" + path + "'", ec.value());
        if (salvage.records_dropped > 0) {
          if (!already()) {
            report->damage.push_back("file '" + shown + "': " + salvage.first_problem + " (" +
                                     std::to_string(salvage.records_dropped) +
                                     " write(s) unreadable, " +
                                     std::to_string(salvage.bytes_dropped) + " bytes skipped; " +
                                     std::to_string(salvage.records_kept) + " kept)");
          }
          report->lost_cells = true;
        }
        break;
      }
      case lfiles::FileKind::kManifest: {
        WIDEN_ASSIGN_OR_RETURN(std::optional<std::string> problem, lfiles::CheckLogFile(path));
        if (problem && !already()) {
          report->damage.push_back("file '" + shown + "': " + *problem +
                                   ": rebuilt from the table files");
        }
        break;
      }
      case lfiles::FileKind::kTable: {
        uint64_t entries = 0;
        auto sealed = sealed_table_sizes.find(name);
        std::optional<std::string> problem = lfiles::CheckTableFile(
            nullptr, path, sealed == sealed_table_sizes.end() ? 0 : sealed->second, &entries);
        if (problem && sealed != sealed_table_sizes.end() &&
            problem->find("store recorded") != std::string::npos) {
          // Cut short: read what is left.
          problem = lfiles::CheckTableFile(nullptr, path, 0, &entries);
          if (!problem) problem = "cut short";
        }
        if (problem && !already()) {
          report->damage.push_back("file '" + shown + "': " + *problem + " (" +
                                   std::to_string(entries) +
                                   " entries read from its other blocks; the cells of the "
                                   "damaged ones are lost)");
        }
        report->lost_cells = report->lost_cells || problem.has_value();
        break;
      }
      default:
        break;
    }
  }
  return Status::OK();
}

// After RepairDB: writes the header again when it was lost, and finds the
// tables whose cells remain without a descriptor.
Status FixHeaderAndFindOrphans(const std::string& dir, RepairReport* report) {
  leveldb::Options lo = lf::StoreOptions(nullptr);
  leveldb::DB* raw = nullptr;
  leveldb::Status s = leveldb::DB::Open(lo, dir, &raw);
  if (!s.ok()) {
    return CopyError("the repaired copy in '" + dir + "' does not open", s);
  }
  std::unique_ptr<leveldb::DB> db(raw);
  const leveldb::Slice header(lf::kHeaderKey.data(), lf::kHeaderKey.size());
  std::string value;
  s = db->Get(lf::VerifiedReads(), header, &value);
  if (s.IsNotFound()) {
    const char version = static_cast<char>(lf::kFormatVersion);
    leveldb::WriteOptions sync;
    sync.sync = true;
    s = db->Put(sync, header, leveldb::Slice(&version, 1));
    report->header_rewritten = true;
  }
  if (!s.ok()) {
    return CopyError("the repaired copy in '" + dir + "': its header", s);
  }
  // Cell keys: 0x02 + table + 0x00 + ...; one seek per table.
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator(lf::VerifiedReads()));
  for (it->Seek(std::string(1, lf::kCellTag)); it->Valid();) {
    const leveldb::Slice k = it->key();
    if (k.empty() || k[0] != lf::kCellTag) break;
    const std::string_view key(k.data(), k.size());
    const size_t end = key.find('\0', 1);
    if (end == std::string_view::npos) break;
    const std::string name(key.substr(1, end - 1));
    std::string descriptor;
    leveldb::Status d = db->Get(lf::VerifiedReads(), lf::TableKey(name), &descriptor);
    if (d.IsNotFound()) report->tables_without_descriptor.push_back(name);
    std::string next(1, lf::kCellTag);
    next += name;
    next.push_back('\x01');
    it->Seek(next);
  }
  if (!it->status().ok()) {
    return CopyError("the repaired copy in '" + dir + "' does not read back", it->status());
  }
  return Status::OK();
}

// Counts the repaired tables and, when cells may be lost, marks them.
Status CountAndMark(const std::string& dir, RepairReport* report) {
  StoreOptions so;
  so.create_if_missing = false;
  WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<LevelDbStore> store, LevelDbStore::Open(dir, so));
  WIDEN_ASSIGN_OR_RETURN(std::vector<TableDescriptor> tables, store->ListTables());
  for (const TableDescriptor& d : tables) {
    RepairedTable t;
    t.name = d.FullName();
    auto state = d.metadata.find(kStateMetadata);
    if (state != d.metadata.end()) t.previous = state->second;
    {
      WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<StateStore> states, store->NewStateStore());
      WIDEN_ASSIGN_OR_RETURN(std::optional<TableState> recorded, states->Get(t.name));
      if (recorded) t.previous = std::string(TableStatusName(recorded->status));
    }
    ReadOptions ro;
    ro.max_versions = INT_MAX;
    WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<CellReader> reader, store->NewReader(t.name, ro));
    std::string last_row;
    for (; reader->Valid(); reader->Next()) {
      const CellView c = reader->cell();
      if (t.cells == 0 || c.row != last_row) {
        ++t.rows;
        last_row.assign(c.row.data(), c.row.size());
      }
      ++t.cells;
    }
    WIDEN_RETURN_IF_ERROR(reader->status());
    if (report->lost_cells) {
      WIDEN_RETURN_IF_ERROR(store->SetTableMetadata(t.name, kStateMetadata, kRepairedState));
      t.marked = true;
    }
    report->tables.push_back(std::move(t));
  }
  if (report->lost_cells) {
    WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<StateStore> states, store->NewStateStore());
    WIDEN_ASSIGN_OR_RETURN(auto recorded, states->List());
    for (auto& [name, state] : recorded) {
      TableState failed = state;
      failed.status = TableStatus::kFailed;
      failed.watermarks.clear();
      failed.finished_ranges.clear();
      // Rows may have lost cells their digests still describe.
      failed.extensions.erase(kDigestsExtension);
      failed.extensions.erase(kSyncIndexExtension);
      WIDEN_RETURN_IF_ERROR(states->Put(name, state.version, failed).status());
    }
  }
  return store->Close();
}

}  // namespace

Result<RepairReport> RepairLevelDbStore(const std::string& from, const std::string& into) {
  std::error_code ec;
  // A store whose marker was lost (deleted, or left out of a copy) is still
  // repaired when it holds a LevelDB database with widen's header: the seal
  // cannot be checked, so LevelDB's own checks are all there is.
  const bool no_marker = !fs::exists(fs::path(from) / lmarker::kMarkerFile, ec);
  if (!fs::is_directory(from, ec) || (no_marker && !fs::exists(fs::path(from) / "CURRENT", ec))) {
    return Status::FailedPrecondition("'" + from + "' is not a widen store (no " +
                                      lmarker::kMarkerFile + " file in it)");
  }
  const fs::path from_real = fs::canonical(from, ec);
  const fs::path into_real = fs::weakly_canonical(into, ec);
  const std::string rel = into_real.lexically_relative(from_real).string();
  if (into_real == from_real || (!rel.empty() && rel.substr(0, 2) != "..")) {
    return Status::InvalidArgument("repair writes a new store: --into '" + into +
                                   "' must be outside the damaged store '" + from + "'");
  }
  if (fs::exists(into, ec) && (!fs::is_directory(into, ec) || !fs::is_empty(into, ec))) {
    return Status::FailedPrecondition("'" + into +
                                      "' exists and is not an empty directory; repair writes a "
                                      "new store: give a new path");
  }

  OldStoreLock lock;
  WIDEN_RETURN_IF_ERROR(lock.Take(from));
  WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<SiblingDirectory> temp,
                         SiblingDirectory::Make(into, std::chrono::seconds(10)));
  WIDEN_RETURN_IF_ERROR(CopyStoreFiles(from, temp->path()));

  RepairReport report;
  if (no_marker) {
    report.damage.push_back("file '" + (fs::path(from) / lmarker::kMarkerFile).string() +
                            "' is missing: the store's seal could not be checked; written again");
  }
  // When the MANIFEST reads back, the table files it does not list are not
  // the store's (LevelDB removes them when it opens the store): a
  // compaction's or a table-file load's that was cut short. RepairDB would
  // take them in; they are set aside instead, as the store holds them.
  Result<std::vector<std::string>> unlisted =
      leveldb_ingest::UnlistedTables(leveldb::Env::Default(), temp->path());
  if (unlisted.ok() && !unlisted->empty()) {
    const fs::path lost = fs::path(temp->path()) / "lost";
    fs::create_directories(lost, ec);
    if (ec) return LocalIoError("creating '" + lost.string() + "'", ec.value());
    for (const std::string& name : *unlisted) {
      fs::rename(fs::path(temp->path()) / name, lost / name, ec);
      if (ec) return LocalIoError("setting aside '" + name + "'", ec.value());
    }
  }
  WIDEN_RETURN_IF_ERROR(FindDamage(from, temp->path(), &report));

  leveldb::Options lo = lf::StoreOptions(nullptr);  // paranoid: damaged blocks are skipped
  leveldb::Status s = leveldb::RepairDB(temp->path(), lo);
  if (!s.ok()) {
    return CopyError("LevelDB's repair of a copy of '" + from + "' failed", s);
  }
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(temp->path()) / "lost", ec)) {
    report.set_aside.push_back(e.path().filename().string());
  }
  std::sort(report.set_aside.begin(), report.set_aside.end());
  WIDEN_RETURN_IF_ERROR(FixHeaderAndFindOrphans(temp->path(), &report));
  if (no_marker && report.header_rewritten) {
    return Status::FailedPrecondition(
        "'" + from + "' holds a LevelDB database that is not a widen store (no " +
        lmarker::kMarkerFile + " file and no widen header in it); nothing was written");
  }
  if (report.header_rewritten) report.lost_cells = true;

  lmarker::Marker open_marker;
  open_marker.format = lf::kFormatVersion;
  WIDEN_RETURN_IF_ERROR(lmarker::WriteText(temp->path(), lmarker::Encode(open_marker)));
  temp->Unlock();  // the store's own open takes the directory's lock
  WIDEN_RETURN_IF_ERROR(CountAndMark(temp->path(), &report));

  bool taken = false;
  WIDEN_RETURN_IF_ERROR(temp->Publish(&taken));
  if (taken) {
    return Status::FailedPrecondition("'" + into +
                                      "' was filled by another process during the repair; "
                                      "nothing was written there");
  }
  return report;
}

}  // namespace widen
