// Table files written directly: the embedded store's bulk load.
//
// Cells that reach a sink in key order, into a key range of the database
// that holds no entry yet, are written straight into LevelDB table files
// (TableFileWriter) and then added to the database's MANIFEST while the
// database is closed (AddTables), as HBase's bulk load hands finished HFiles
// to a region. Such cells skip LevelDB's write-ahead log, its memtable and
// the table file a memtable flush writes: each is encoded, compressed and
// written once. The files are the ones LevelDB itself would write (the same
// builder, options and key order), so nothing reading the store can tell
// them apart, and LevelDB moves and compacts them as its own.
//
// The LevelDB formats written here (LevelDB 1.23, db/dbformat.h,
// db/version_edit.cc, doc/table_format.md, doc/log_format.md; every LevelDB
// database on disk is in them, unchanged since LevelDB 1.0):
//
//   internal key  +----------------+--------------------------------------+
//                 | user key       | (sequence << 8) | type, 8 bytes LE   |
//                 +----------------+--------------------------------------+
//                 type 1 a value, 0 a deletion. Entries written here have
//                 sequence 0 and type 1: AddTables takes them only where no
//                 other entry of their user keys exists, and every later
//                 write of one of those keys has a higher sequence and wins.
//   table file    doc/table_format.md, built by leveldb::TableBuilder in
//                 LevelDB's internal key order (InternalKeyOrder)
//   MANIFEST      a log (doc/log_format.md) of version edits, each a run of
//                 fields that start with a varint32 tag:
//                   1 comparator name           length-prefixed bytes
//                   2 log number                varint64
//                   9 previous log number       varint64
//                   3 next file number          varint64
//                   4 last sequence             varint64
//                   5 compact pointer           level varint32, internal key
//                                               length-prefixed
//                   6 deleted file              level varint32, number varint64
//                   7 new file                  level varint32, number varint64,
//                                               size varint64, smallest and
//                                               largest internal keys,
//                                               length-prefixed
//   CURRENT       the live MANIFEST's name and a newline, replaced by rename
//
// Internal to store/ (and its tests). Thread safety: a TableFileWriter is
// used by one thread at a time; AddTables requires that nothing has the
// database open.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <leveldb/options.h>

#include "common/status.h"

namespace leveldb {
class Comparator;
class Env;
class TableBuilder;
class WritableFile;
}  // namespace leveldb

namespace widen {
namespace leveldb_ingest {

/// LevelDB's levels (config::kNumLevels).
inline constexpr int kLevels = 7;

/// Bytes of the tag after an internal key's user key.
inline constexpr size_t kTagBytes = 8;

/// The prefix of a table file's name while it is written, before AddTables
/// gives it its number; a store opened finds such files only when a run
/// that wrote them ended before adding them, and removes them.
inline constexpr std::string_view kPendingPrefix = "widen-ingest-";

/// LevelDB's order of internal keys (its InternalKeyComparator over the
/// bytewise order of user keys): user keys ascending, then tags descending.
/// Its separators are LevelDB's own, so a table built with it has the index
/// LevelDB would give it. The database's own order stays LevelDB's bytewise
/// comparator; this one only builds and reads table files. Never deleted.
const leveldb::Comparator* InternalKeyOrder();

/// Appends the tag of a value at sequence 0 (the 8 bytes 0x01 0x00 ... 0x00)
/// to the user key in *key, making it an internal key.
void AppendValueTag(std::string* key);

/// The user key of internal key `internal` (its bytes but the last 8).
/// REQUIRES: internal.size() >= kTagBytes.
inline std::string_view UserKey(std::string_view internal) {
  return internal.substr(0, internal.size() - kTagBytes);
}

/// One table file TableFileWriter finished (synced and closed).
struct BuiltTable {
  std::string path;  // in the store directory, named kPendingPrefix...
  uint64_t size_bytes = 0;
  std::string smallest;  // internal keys of its first and last entry
  std::string largest;
  uint64_t entries = 0;
};

/// Writes entries in internal key order into table files of about
/// `file_bytes` each, in directory `dir`, through `env` (borrowed), with
/// `options`' block size, restart interval and compression (the store's;
/// the comparator and filter policy are replaced by InternalKeyOrder and
/// none). A file that ends is synced and closed on a thread of its own
/// (at most kSyncsInFlight at once), so that writing the next one goes on
/// meanwhile; TakeFinished waits for them. Files not yet taken when the
/// writer is destroyed are removed.
class TableFileWriter {
 public:
  TableFileWriter(leveldb::Env* env, std::string dir, const leveldb::Options& options,
                  uint64_t file_bytes);
  ~TableFileWriter();
  TableFileWriter(const TableFileWriter&) = delete;
  TableFileWriter& operator=(const TableFileWriter&) = delete;

  /// Adds one entry. REQUIRES: `internal_key` sorts after the one added
  /// before, in InternalKeyOrder (a file may end after any entry). LocalIo
  /// when a file cannot be created or written; the writer then refuses
  /// every later call.
  Status Add(std::string_view internal_key, std::string_view value);
  /// The first write error of the file being written (LevelDB's builder
  /// reports one only at the end otherwise); the writer then refuses every
  /// later call.
  Status CheckWrites();
  /// Ends the file being written, if any; it is synced and closed in the
  /// background.
  Status EndFile();
  /// Waits until every ended file is synced and closed, then hands them
  /// over: the caller adds them (AddTables) or removes them. LocalIo when
  /// one could not be synced (the writer then refuses every later call,
  /// and removes its files when destroyed).
  Result<std::vector<BuiltTable>> TakeFinished();
  /// Whether an entry was added since the last EndFile.
  bool file_open() const { return builder_ != nullptr; }

  /// Ended files being synced at most at once.
  static constexpr size_t kSyncsInFlight = 4;

 private:
  Status Fail(const std::string& what, const std::string& detail);
  // Waits for the oldest sync in flight; its error becomes status_.
  void WaitOldestSync();

  leveldb::Env* const env_;
  const std::string dir_;
  leveldb::Options options_;
  const uint64_t file_bytes_;
  std::unique_ptr<leveldb::WritableFile> file_;
  std::unique_ptr<leveldb::TableBuilder> builder_;
  BuiltTable current_;
  std::vector<BuiltTable> finished_;  // ended; the last `syncs_` of them syncing
  std::deque<std::future<Status>> syncs_;
  Status status_;
};

/// Writes entries in internal key order into table files on `threads`
/// threads of its own: entries are gathered into segments (copied), and
/// each segment, handed over by EndSegment, is written by one thread into
/// table files of its own (TableFileWriter's), so that several segments are
/// compressed and written at once. Segments follow each other in key order.
/// Memory: the segment being filled and at most 2 x `threads` more.
/// Used by one thread at a time (its own threads aside).
class ParallelTableWriter {
 public:
  ParallelTableWriter(leveldb::Env* env, std::string dir, const leveldb::Options& options,
                      uint64_t file_bytes, int threads);
  /// Stops the threads; the files not taken are removed.
  ~ParallelTableWriter();
  ParallelTableWriter(const ParallelTableWriter&) = delete;
  ParallelTableWriter& operator=(const ParallelTableWriter&) = delete;

  /// Adds one entry to the segment being filled. REQUIRES: `internal_key`
  /// sorts after every entry added before, in InternalKeyOrder.
  void Add(std::string_view internal_key, std::string_view value);
  /// Hands the segment being filled (if it holds any entry) to a thread;
  /// waits while 2 x `threads` segments are waiting or being written.
  /// Returns the first error of a thread so far (LocalIo); after one, the
  /// writer refuses every later call.
  Status EndSegment();
  /// EndSegment, waits until every segment is written, then hands over the
  /// files in key order (as AddTables takes them).
  Result<std::vector<BuiltTable>> TakeFinished();
  /// Bytes (keys and values) of the segment being filled.
  size_t filling_bytes() const { return filling_.bytes.size(); }

 private:
  struct Segment {
    std::string bytes;                                 // keys and values back to back
    std::vector<std::pair<uint32_t, uint32_t>> sizes;  // (key bytes, value bytes) of each entry
  };
  struct Worker;
  void Loop(Worker* w);

  leveldb::Env* const env_;
  Segment filling_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Segment> queue_;   // guarded by mu_
  std::vector<Segment> spare_;  // written segments, emptied, kept for their buffers; guarded by mu_
  size_t busy_ = 0;             // segments being written; guarded by mu_
  bool stop_ = false;           // guarded by mu_
  Status status_;               // the first error of a thread; guarded by mu_
  size_t limit_;                // queue_.size() + busy_ at most
};

/// A live table file as the MANIFEST records it.
struct LiveFile {
  uint64_t number = 0;
  uint64_t size_bytes = 0;
  std::string smallest;  // internal keys
  std::string largest;
};

/// The live state of a closed database, from its MANIFEST.
struct ManifestState {
  std::string manifest_name;  // "MANIFEST-000005", as CURRENT names it
  std::string comparator;     // the user comparator's name
  uint64_t log_number = 0;
  uint64_t prev_log_number = 0;
  uint64_t next_file = 0;
  uint64_t last_sequence = 0;
  std::vector<LiveFile> levels[kLevels];  // each level's files, by smallest key
};

/// Reads the MANIFEST that CURRENT names in database directory `dir`
/// through `env` and applies its version edits, as LevelDB does when it
/// opens the database (a last record cut short by the end of the file is
/// left out). DataLoss, naming the file, when CURRENT or a record is
/// damaged or an edit does not decode; LocalIo when a file cannot be read.
Result<ManifestState> ReadManifest(leveldb::Env* env, const std::string& dir);

/// Encodes `state` as one version edit that describes the whole database
/// (what LevelDB writes first into a new MANIFEST).
std::string EncodeSnapshot(const ManifestState& state);

/// What AddTables did with each table, in the order given.
struct AddedTable {
  uint64_t number = 0;
  int level = 0;
};

/// Adds `tables` (built by TableFileWriter; in key order, none overlapping
/// another) to the closed LevelDB database in `dir`: each gets a file
/// number above every file in the directory and the deepest level where
/// no live file's key range meets its own (level 0 when every level from 1
/// has one), and a new MANIFEST (a snapshot of the live files with the new
/// ones) becomes the live one through CURRENT. The directory is synced.
/// FailedPrecondition, with nothing changed, when a live file holds an
/// entry whose user key lies within one of the tables' key ranges (their
/// entries at sequence 0 would then not be the newest), or a log LevelDB
/// would replay holds any write (write the memtable out before closing the
/// database). After any other
/// error the database is as it was (files renamed but not yet listed are
/// removed by LevelDB when it next opens the database), unless
/// `*previous_manifest` is set: it gets the name of the MANIFEST that was
/// live before once CURRENT names the new one (an error after that, the
/// directory's sync, leaves the tables added), so that a caller that
/// cannot reopen the database can switch back (RestoreCurrent); empty while
/// nothing was switched.
Result<std::vector<AddedTable>> AddTables(leveldb::Env* env, const std::string& dir,
                                          const std::vector<BuiltTable>& tables,
                                          std::string* previous_manifest);

/// Calls `fn` with the user key and value of every entry of `table`, in
/// order (what a caller writes through LevelDB instead when AddTables
/// refuses the table). DataLoss naming the file when it does not read back.
Status ForEachEntry(leveldb::Env* env, const BuiltTable& table,
                    const std::function<Status(std::string_view key, std::string_view value)>& fn);

/// Makes `manifest_name` the live MANIFEST of `dir` again (CURRENT
/// replaced by rename, the directory synced).
Status RestoreCurrent(leveldb::Env* env, const std::string& dir, const std::string& manifest_name);

/// Removes what an add cut short leaves in database directory `dir` (a
/// run killed, or a machine that stopped): the files named
/// kPendingPrefix..., and a MANIFEST numbered above the one CURRENT names
/// (LevelDB would keep it for good). REQUIRES: nothing has the database
/// open. Returns how many files were removed.
int RemoveLeftovers(leveldb::Env* env, const std::string& dir);

/// The table files of `dir` (names) that the MANIFEST CURRENT names does
/// not list: not the database's (LevelDB removes them when it opens it),
/// written by a compaction or an add that was cut short. ReadManifest's
/// errors when the MANIFEST does not read back.
Result<std::vector<std::string>> UnlistedTables(leveldb::Env* env, const std::string& dir);

}  // namespace leveldb_ingest
}  // namespace widen
