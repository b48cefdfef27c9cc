// The embedded store's key layout, as functions: the encoders the LevelDB sink
// uses and the decoders its reader uses. The layout itself is drawn in
// store/leveldb_store.h and docs/format.md; every constant here is persisted:
// never change one, bump kFormatVersion instead.
//
// Internal to store/ (and its tests).
//
// Thread safety: constants and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <leveldb/options.h>

#include "common/cell.h"

namespace widen {
namespace leveldb_format {

/// The one-byte value of the store header.
inline constexpr uint8_t kFormatVersion = 0x01;

/// Leading byte of each kind of key.
inline constexpr char kHeaderTag = '\x00';
inline constexpr char kTableTag = '\x01';
inline constexpr char kCellTag = '\x02';
inline constexpr char kStateTag = '\x03';
inline constexpr char kRowDigestTag = '\x04';
inline constexpr char kSyncIndexTag = '\x05';

/// A key above every key a store holds (no tag is 0xFF): the empty key
/// range a sink's Sync compacts to make LevelDB write out its memtable.
inline constexpr std::string_view kPastEveryKey{"\xff", 1};

/// The store header's key: 0x00 'f' 'o' 'r' 'm' 'a' 't'.
inline constexpr std::string_view kHeaderKey{"\0format", 7};

/// Bytes after a cell key's qualifier terminator: 8 of timestamp, 1 of type.
inline constexpr size_t kCellKeyTrailerBytes = 9;

/// Table meta key: 0x01 + full table name.
std::string TableKey(std::string_view full_name);

/// Table state key: 0x03 + full table name (its value: the state value of
/// store/state_store.h).
std::string StateKey(std::string_view full_name);

/// Appends a table's row digest key prefix, 0x04 + full table name + 0x00;
/// a row's digest key is the prefix + the row key's bytes as they are.
void AppendRowDigestPrefix(std::string* dst, std::string_view full_name);

/// Appends a table's sync index key prefix, 0x05 + full table name + 0x00;
/// an entry's key is the prefix + the entry's key bytes as they are.
void AppendSyncIndexPrefix(std::string* dst, std::string_view full_name);

/// Appends a table's cell key prefix, 0x02 + full table name + 0x00. Every
/// cell key of the table starts with these bytes and no other key does
/// (table names contain no 0x00).
void AppendCellKeyPrefix(std::string* dst, std::string_view full_name);

/// Appends `bytes` with each 0x00 written as 0x00 0xFF, then the terminator
/// 0x00 0x01 (so a string sorts before every longer string it is a prefix of).
void AppendEscapedTerminated(std::string* dst, std::string_view bytes);

/// Appends `escaped` (an escaped string without its terminator) unescaped.
/// REQUIRES: every 0x00 in `escaped` is followed by 0xFF.
void AppendUnescaped(std::string* dst, std::string_view escaped);

/// Timestamp as 8 big-endian bytes that sort newest first:
/// ~(uint64(timestamp_ms) ^ 0x8000000000000000).
inline uint64_t EncodeTimestamp(int64_t timestamp_ms) {
  return ~(static_cast<uint64_t>(timestamp_ms) ^ 0x8000000000000000ULL);
}
inline int64_t DecodeTimestamp(uint64_t encoded) {
  return static_cast<int64_t>(~encoded ^ 0x8000000000000000ULL);
}

/// Type byte 0xFF - HBase type code, so higher codes sort first.
inline uint8_t EncodeType(CellType type) {
  return static_cast<uint8_t>(0xFF - static_cast<uint8_t>(type));
}
/// False when `b` is not the byte of a known CellType.
bool DecodeType(uint8_t b, CellType* type);

/// Appends everything after the table prefix: ESC(row) 0x00 0x01 family 0x00
/// ESC(qualifier) 0x00 0x01 timestamp(8) type(1).
/// REQUIRES: the family contains no 0x00 byte.
void AppendCellKeySuffix(std::string* dst, const CellView& cell);

/// Appends the part after the row's terminator: family 0x00 ESC(qualifier)
/// 0x00 0x01 timestamp(8) type(1) (cells of one row share everything before).
/// REQUIRES: the family contains no 0x00 byte.
void AppendCellKeyAfterRow(std::string* dst, const CellView& cell);

/// The parts of a cell key after the table prefix, as views into the key.
/// `row` and `qualifier` are still escaped (without their terminators);
/// `*_escaped` says whether they hold any escaped 0x00 (else they equal the
/// plain bytes).
struct CellKeyParts {
  std::string_view row;
  std::string_view family;
  std::string_view qualifier;
  bool row_escaped = false;
  bool qualifier_escaped = false;
  int64_t timestamp_ms = 0;
  CellType type = CellType::kPut;
};

/// Parses the bytes that follow the table prefix. Returns false when they are
/// not a well-formed cell key (a bad escape, a missing terminator, an empty
/// family, a trailer that is not 9 bytes, an unknown type byte).
bool ParseCellKeySuffix(std::string_view suffix, CellKeyParts* parts);

/// A whole cell key decoded into owned bytes (for tests and tools).
struct DecodedCellKey {
  std::string table;
  std::string row;
  std::string family;
  std::string qualifier;
  int64_t timestamp_ms = 0;
  CellType type = CellType::kPut;
};

/// Decodes 0x02 + table + 0x00 + suffix. False when `key` is not a cell key.
bool DecodeCellKey(std::string_view key, DecodedCellKey* out);

/// The block cache every store gets (bytes).
constexpr size_t kBlockCacheBytes = 16 << 20;

/// Memtable size (bytes). A bulk load fills it, LevelDB writes it out as a
/// table file while a second one fills: two of them bound the memory LevelDB
/// takes while writing. 16 MiB measured lower in both CPU and peak RSS than
/// 64 MiB and 4 MiB on bench/shop.yaml (bench/RESULTS.md).
constexpr size_t kWriteBufferBytes = 16 << 20;

/// Table files kept open (and memory-mapped) at once. LevelDB's default,
/// 1000, lets the pages of every file a long load touched count in the
/// process's memory; 64 keeps that bounded whatever the store's size.
constexpr int kMaxOpenFiles = 64;

/// The leveldb::Options every store is opened with: LevelDB's default
/// bytewise comparator (the cell order is in the key bytes), snappy blocks,
/// a kWriteBufferBytes memtable, kMaxOpenFiles, `cache` (borrowed; may be
/// null) as the block cache, and paranoid_checks: a damaged log or MANIFEST
/// makes the open fail instead of being skipped (and the log then deleted),
/// and compactions verify the blocks they read. Every other option is
/// LevelDB's default.
leveldb::Options StoreOptions(leveldb::Cache* cache);

/// The leveldb::ReadOptions of every read of a store: every block's
/// checksum verified (a damaged block is an error, never served).
leveldb::ReadOptions VerifiedReads();

}  // namespace leveldb_format
}  // namespace widen
