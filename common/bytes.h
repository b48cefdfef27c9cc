// Byte helpers shared by the codecs and stores: big-endian fixed-width
// integers (LevelDB's util/coding.h, but big-endian so byte order is numeric
// order) and HBase's printable form of binary strings.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace widen {

/// Appends v as 8 bytes, most significant first.
void PutFixed64BE(std::string* dst, uint64_t v);
/// Appends v as 4 bytes, most significant first.
void PutFixed32BE(std::string* dst, uint32_t v);
/// Appends v as 2 bytes, most significant first.
void PutFixed16BE(std::string* dst, uint16_t v);
/// Reads 8 big-endian bytes. REQUIRES: p points at 8 readable bytes.
uint64_t DecodeFixed64BE(const char* p);
uint32_t DecodeFixed32BE(const char* p);
uint16_t DecodeFixed16BE(const char* p);

/// Appends `bytes` as HBase's Bytes.toStringBinary prints them: ASCII letters,
/// digits, space and `~!@#$%^&*()-_=+[]{}|;:'",.<>/? as they are, every other
/// byte as \xNN (upper-case hex). Source: org.apache.hadoop.hbase.util.Bytes.
void AppendStringBinary(std::string* out, std::string_view bytes);
std::string ToStringBinary(std::string_view bytes);

/// Parses HBase's printable form back into bytes (\xNN escapes; other
/// characters as they are). Returns false on a malformed escape.
bool FromStringBinary(std::string_view text, std::string* out);

}  // namespace widen
