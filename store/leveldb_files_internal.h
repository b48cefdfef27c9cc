// The files of an embedded store's directory (a LevelDB database) and checks
// of their bytes that widen makes itself: naming the damaged file when
// LevelDB reports only "checksum mismatch", and the whole-file checksums of
// the store's seal (store/leveldb_marker_internal.h).
//
// LevelDB's file names: CURRENT (the name of the live MANIFEST and a
// newline), MANIFEST-NNNNNN (the list of live table files, a log of version
// edits), NNNNNN.log (the write-ahead log), NNNNNN.ldb or NNNNNN.sst (table
// files, immutable once written), LOCK, LOG and LOG.old (LevelDB's own
// diagnostics), NNNNNN.dbtmp (a CURRENT being replaced).
//
// The log format (LevelDB's doc/log_format.md), read by CheckLogFile: a
// sequence of 32 KiB blocks, each a sequence of records
//   +-----------------+---------------+-----------+-------------+
//   | checksum (4 LE) | length (2 LE) | type (1)  | data        |
//   +-----------------+---------------+-----------+-------------+
// where checksum is the masked CRC32C of type and data, type is FULL 1,
// FIRST 2, MIDDLE 3 or LAST 4, and fewer than 7 bytes left in a block are a
// trailer that is skipped. The MANIFEST uses the same format.
//
// Internal to store/ (and its tests). Thread safety: pure functions over
// files nobody writes meanwhile.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace leveldb {
class Env;
}  // namespace leveldb

namespace widen {
namespace leveldb_files {

/// What a file of a store directory is, by its name.
enum class FileKind {
  kCurrent,   // CURRENT
  kManifest,  // MANIFEST-NNNNNN
  kLog,       // NNNNNN.log
  kTable,     // NNNNNN.ldb, NNNNNN.sst
  kOther,     // LOCK, LOG, LOG.old, *.dbtmp, widen's marker, anything else
};

/// The kind of the file named `name` (a name, not a path).
FileKind KindOf(std::string_view name);

/// The number in a MANIFEST, log or table file's name; 0 for other names.
uint64_t NumberOf(std::string_view name);

/// CRC32C (Castagnoli, RFC 3720) of `data`, continuing from `crc` (0 to
/// start): with SSE 4.2's crc32 instruction where the processor has it,
/// else by table (Crc32cPortable; the same values).
uint32_t Crc32c(std::string_view data, uint32_t crc = 0);
/// Crc32c by table, one byte at a time, on every processor.
uint32_t Crc32cPortable(std::string_view data, uint32_t crc = 0);

/// The CRC32C of the file at `path`, read whole. LocalIo when it cannot be
/// read.
Result<uint32_t> FileCrc32c(const std::string& path);

/// Checks every record of the LevelDB log (or MANIFEST) at `path`, from
/// byte 0 to the end. Returns nullopt when every record is whole with a
/// matching checksum; otherwise what is wrong and at which byte offset
/// ("a record checksum does not match at byte 18690"), including a record
/// cut short by the end of the file. LocalIo when the file cannot be read.
Result<std::optional<std::string>> CheckLogFile(const std::string& path);

/// Calls `fn` with the data of each record of the LevelDB log bytes `bytes`
/// (a MANIFEST), whole and in order, as LevelDB reads a MANIFEST: a record
/// cut short by the end of the bytes (a write a crash interrupted) ends
/// them and is left out, and zero-length records of type 0 (zeroed space)
/// are skipped. DataLoss naming `path` and the byte offset when a record is
/// damaged (its checksum, length or type) or a fragment is missing or
/// stray; the first error of `fn` is returned as it is.
Status ForEachLogRecord(std::string_view bytes, const std::string& path,
                        const std::function<Status(std::string_view record)>& fn);

/// Appends `record` to the log bytes `out`, fragmented over 32 KiB blocks
/// as LevelDB's log writer does (out's size is the offset in the file).
void AppendLogRecord(std::string* out, std::string_view record);

/// What SalvageLogFile kept and dropped.
struct LogSalvage {
  uint64_t records_kept = 0;     // whole records with matching checksums, written out
  uint64_t records_dropped = 0;  // records (or their fragments) that did not read back
  uint64_t bytes_dropped = 0;    // bytes of the input skipped to get past them
  std::string first_problem;     // as CheckLogFile words it; empty when nothing was dropped
};

/// Copies the log at `in` to a new log at `out` (replaced) holding only the
/// records that read back whole with matching checksums, in order. After a
/// damaged physical record the rest of its 32 KiB block is skipped (its
/// length cannot be trusted), and a record whose fragments are not all
/// there is dropped whole. LevelDB's RepairDB reads logs without checking
/// checksums: repair gives it logs salvaged this way. LocalIo on I/O
/// errors.
Result<LogSalvage> SalvageLogFile(const std::string& in, const std::string& out);

/// Reads the table file at `path` whole through `env` (borrowed; null:
/// LevelDB's default) with every block's checksum verified. `expected_size`
/// is the size LevelDB recorded for it (0: unknown). Returns nullopt when
/// the file is whole and every block reads back; otherwise what is wrong
/// ("it is 20000 bytes, but the store recorded 25013: cut short", "block
/// checksum mismatch"). *entries (may be null) gets the number of entries
/// read before the end or the first unreadable block.
std::optional<std::string> CheckTableFile(leveldb::Env* env, const std::string& path,
                                          uint64_t expected_size, uint64_t* entries);

/// One live table file as LevelDB's "leveldb.sstables" property lists it.
struct LiveTable {
  uint64_t number = 0;
  uint64_t size_bytes = 0;
  /// The smallest and largest user keys of the file; valid only when
  /// keys_known (the property prints keys escaped, and a key holding the
  /// property's own punctuation cannot always be read back).
  std::string smallest;
  std::string largest;
  bool keys_known = false;
};

/// The table files listed by the "leveldb.sstables" property text.
/// Lines that do not parse are left out.
std::vector<LiveTable> ParseLiveTables(std::string_view property);

/// "000005.ldb" when that file exists in `dir`, else "000005.sst" when that
/// one does, else "000005.ldb".
std::string TableFileName(const std::string& dir, uint64_t number);

/// Who holds the flock() on directory `dir`, as the kernel lists it in
/// /proc/locks: " (process PID: widen sync)" — the program's file name and
/// its first argument only (later ones may hold a password) — or "" when
/// none is listed there (another machine of a network file system, another
/// PID namespace, or the holder ended meanwhile).
std::string FlockHolder(const std::string& dir);

}  // namespace leveldb_files
}  // namespace widen
