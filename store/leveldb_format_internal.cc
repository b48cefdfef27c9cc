#include "store/leveldb_format_internal.h"

#include <cstring>

#include "common/bytes.h"

namespace widen {
namespace leveldb_format {

namespace {

constexpr char kTerminator[2] = {'\x00', '\x01'};
constexpr char kEscapedZero[2] = {'\x00', '\xff'};

// Finds the terminator 0x00 0x01 of the escaped string starting at `from`.
// Returns its offset, or npos when the bytes are not a well-formed escaped,
// terminated string. Sets *escaped when a 0x00 0xFF pair was seen.
size_t FindTerminator(std::string_view s, size_t from, bool* escaped) {
  size_t i = from;
  while (i < s.size()) {
    const void* z = std::memchr(s.data() + i, 0, s.size() - i);
    if (z == nullptr) return std::string_view::npos;
    const size_t j = static_cast<size_t>(static_cast<const char*>(z) - s.data());
    if (j + 1 >= s.size()) return std::string_view::npos;
    const auto next = static_cast<unsigned char>(s[j + 1]);
    if (next == 0x01) return j;
    if (next != 0xFF) return std::string_view::npos;
    *escaped = true;
    i = j + 2;
  }
  return std::string_view::npos;
}

}  // namespace

std::string TableKey(std::string_view full_name) {
  std::string key;
  key.reserve(1 + full_name.size());
  key.push_back(kTableTag);
  key.append(full_name);
  return key;
}

std::string StateKey(std::string_view full_name) {
  std::string key;
  key.reserve(1 + full_name.size());
  key.push_back(kStateTag);
  key.append(full_name);
  return key;
}

void AppendRowDigestPrefix(std::string* dst, std::string_view full_name) {
  dst->push_back(kRowDigestTag);
  dst->append(full_name);
  dst->push_back('\x00');
}

void AppendSyncIndexPrefix(std::string* dst, std::string_view full_name) {
  dst->push_back(kSyncIndexTag);
  dst->append(full_name);
  dst->push_back('\x00');
}

void AppendCellKeyPrefix(std::string* dst, std::string_view full_name) {
  dst->push_back(kCellTag);
  dst->append(full_name);
  dst->push_back('\x00');
}

void AppendEscapedTerminated(std::string* dst, std::string_view bytes) {
  const char* p = bytes.data();
  const char* end = p + bytes.size();
  while (p < end) {
    const void* z = std::memchr(p, 0, static_cast<size_t>(end - p));
    if (z == nullptr) {
      dst->append(p, static_cast<size_t>(end - p));
      break;
    }
    const char* zero = static_cast<const char*>(z);
    dst->append(p, static_cast<size_t>(zero - p));
    dst->append(kEscapedZero, 2);
    p = zero + 1;
  }
  dst->append(kTerminator, 2);
}

void AppendUnescaped(std::string* dst, std::string_view escaped) {
  const char* p = escaped.data();
  const char* end = p + escaped.size();
  while (p < end) {
    const void* z = std::memchr(p, 0, static_cast<size_t>(end - p));
    if (z == nullptr) {
      dst->append(p, static_cast<size_t>(end - p));
      break;
    }
    const char* zero = static_cast<const char*>(z);
    dst->append(p, static_cast<size_t>(zero - p) + 1);  // keep the 0x00, drop the 0xFF
    p = zero + 2;
  }
}

bool DecodeType(uint8_t b, CellType* type) {
  switch (0xFF - b) {
    case static_cast<int>(CellType::kPut):
    case static_cast<int>(CellType::kDelete):
    case static_cast<int>(CellType::kDeleteColumn):
    case static_cast<int>(CellType::kDeleteFamily):
      *type = static_cast<CellType>(0xFF - b);
      return true;
    default:
      return false;
  }
}

void AppendCellKeySuffix(std::string* dst, const CellView& cell) {
  AppendEscapedTerminated(dst, cell.row);
  AppendCellKeyAfterRow(dst, cell);
}

void AppendCellKeyAfterRow(std::string* dst, const CellView& cell) {
  dst->append(cell.family);
  dst->push_back('\x00');
  AppendEscapedTerminated(dst, cell.qualifier);
  PutFixed64BE(dst, EncodeTimestamp(cell.timestamp_ms));
  dst->push_back(static_cast<char>(EncodeType(cell.type)));
}

bool ParseCellKeySuffix(std::string_view suffix, CellKeyParts* parts) {
  parts->row_escaped = false;
  parts->qualifier_escaped = false;
  const size_t row_end = FindTerminator(suffix, 0, &parts->row_escaped);
  if (row_end == std::string_view::npos) return false;
  const size_t family_begin = row_end + 2;
  const void* z = std::memchr(suffix.data() + family_begin, 0, suffix.size() - family_begin);
  if (z == nullptr) return false;
  const size_t family_end = static_cast<size_t>(static_cast<const char*>(z) - suffix.data());
  if (family_end == family_begin) return false;
  const size_t qualifier_begin = family_end + 1;
  const size_t qualifier_end = FindTerminator(suffix, qualifier_begin, &parts->qualifier_escaped);
  if (qualifier_end == std::string_view::npos) return false;
  const size_t trailer = qualifier_end + 2;
  if (suffix.size() - trailer != kCellKeyTrailerBytes) return false;
  if (!DecodeType(static_cast<uint8_t>(suffix[trailer + 8]), &parts->type)) return false;
  parts->row = suffix.substr(0, row_end);
  parts->family = suffix.substr(family_begin, family_end - family_begin);
  parts->qualifier = suffix.substr(qualifier_begin, qualifier_end - qualifier_begin);
  parts->timestamp_ms = DecodeTimestamp(DecodeFixed64BE(suffix.data() + trailer));
  return true;
}

bool DecodeCellKey(std::string_view key, DecodedCellKey* out) {
  if (key.empty() || key[0] != kCellTag) return false;
  const size_t table_end = key.find('\x00', 1);
  if (table_end == std::string_view::npos) return false;
  CellKeyParts parts;
  if (!ParseCellKeySuffix(key.substr(table_end + 1), &parts)) return false;
  out->table.assign(key.data() + 1, table_end - 1);
  out->row.clear();
  AppendUnescaped(&out->row, parts.row);
  out->family.assign(parts.family.data(), parts.family.size());
  out->qualifier.clear();
  AppendUnescaped(&out->qualifier, parts.qualifier);
  out->timestamp_ms = parts.timestamp_ms;
  out->type = parts.type;
  return true;
}

leveldb::Options StoreOptions(leveldb::Cache* cache) {
  leveldb::Options o;
  o.compression = leveldb::kSnappyCompression;
  o.write_buffer_size = kWriteBufferBytes;
  o.max_open_files = kMaxOpenFiles;
  o.block_cache = cache;
  o.paranoid_checks = true;
  return o;
}

leveldb::ReadOptions VerifiedReads() {
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  return ro;
}

}  // namespace leveldb_format
}  // namespace widen
