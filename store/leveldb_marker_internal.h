// The marker file WIDEN_STORE in an embedded store's directory: it says the
// directory is a widen store, and when widen closed the store cleanly it
// holds the store's seal — each LevelDB file's name and size, and a CRC32C
// of every file but the table files — that the next open checks before
// LevelDB reads anything. A byte changed in a log, MANIFEST or CURRENT, or
// a file cut short, is then found and named, even where LevelDB would take
// it for the end of a crash-interrupted write and drop what follows.
//
// Persisted layout, marker format 1 (text, one item per line, '\n' ends
// each). NEVER CHANGE IT; a new layout gets a new first line.
//
//   widen embedded store, format 1        the first line (store format 1)
//   closed                                or "open": a process has (or had,
//                                         when it died) the store open
//   CURRENT 16 3f0c22a1                   closed only: each file, sorted by
//   MANIFEST-000006 126 0b5ad1e9          name: name, size in bytes, CRC32C
//   000008.log 0 00000000                 (8 lower-case hex digits) or "-"
//   000005.ldb 25013 -                    for a table file
//   end 9a4c0e11                          CRC32C of every byte above
//
// The files listed are CURRENT, MANIFEST-*, *.log, *.ldb and *.sst; LOCK,
// LOG, LOG.old and the marker itself are not. A marker that holds only its
// first line was written by a widen without seals: it reads as "open".
//
// Internal to store/ (and its tests). Thread safety: functions over a
// directory that one process at a time holds (the store's lock).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace widen {
namespace leveldb_marker {

/// The marker's file name in the store directory.
inline constexpr char kMarkerFile[] = "WIDEN_STORE";

/// One file of a seal.
struct SealedFile {
  std::string name;  // a name in the store directory
  uint64_t size_bytes = 0;
  std::optional<uint32_t> crc;  // CRC32C of the whole file; none for table files
};

/// A marker's contents.
struct Marker {
  int format = 1;                 // the store format on the first line
  bool closed = false;            // closed cleanly: `files` is the seal
  std::vector<SealedFile> files;  // sorted by name (closed only)
};

/// The marker's text (layout above).
std::string Encode(const Marker& marker);

/// Parses a marker's text. `path` names the marker file in messages.
/// DataLoss when the text is not a marker of this layout (a changed byte,
/// cut short): the marker is damaged.
Result<Marker> Decode(std::string_view text, const std::string& path);

/// Reads the marker of store directory `dir` as text. NotFound when there is
/// none; DataLoss when it is larger than 64 MiB; LocalIo when it cannot be
/// read.
Result<std::string> ReadText(const std::string& dir);

/// Replaces the marker of `dir` with `text` atomically and durably: written
/// to WIDEN_STORE.tmp, synced, renamed over WIDEN_STORE, the directory
/// synced. LocalIo naming the file and the reason (a full disk, no
/// permission, a read-only file system) on failure, leaving the old marker.
Status WriteText(const std::string& dir, std::string_view text);

/// The seal of `dir` as it is now (closed = true): every LevelDB file with
/// its size and, but for table files, its CRC32C. Each log file is synced
/// first, so the bytes sealed are the bytes a power loss keeps.
/// REQUIRES: no process has the LevelDB database open.
Result<Marker> Seal(const std::string& dir);

/// Checks `dir` against the seal of `marker` (REQUIRES: marker.closed).
/// DataLoss naming the first file that is missing, has another size or
/// other bytes, or a non-empty log file the seal does not list (LevelDB
/// would replay it). Sets *stale (and returns OK) when the seal is older than
/// the store: CURRENT names a newer MANIFEST that exists — the store was
/// opened since by a program that does not keep seals (an older widen, or
/// LevelDB directly), so the seal says nothing about the files now.
Status Verify(const std::string& dir, const Marker& marker, bool* stale);

/// A file that differs from its seal: its name and how.
struct Difference {
  std::string name;
  std::string what;  // "is missing (...)", "is 20000 bytes; it was 25013 ..."
};

/// Every file of `dir` that differs from the seal of `marker` (REQUIRES:
/// marker.closed), CURRENT first. Sets *stale as Verify does (the list is
/// then empty). LocalIo when a file cannot be read.
Result<std::vector<Difference>> Compare(const std::string& dir, const Marker& marker, bool* stale);

}  // namespace leveldb_marker
}  // namespace widen
