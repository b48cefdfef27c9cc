// The record layout of CellSpool's temporary files (common/cell_spool.h;
// CellRuns' sorted runs have a more compact one of their own): one
// record per cell, back to back, private to one process and never persisted
// (host byte order):
//
//   +---------+---------+---------+---------+--------------+------+-----+--------+-----------+-------+
//   | row len | fam len | qual len| val len | timestamp_ms | type | row | family | qualifier |
//   value | | u32     | u32     | u32     | u32     | i64          | u8   |     |        | | |
//   +---------+---------+---------+---------+--------------+------+-----+--------+-----------+-------+
//
// Internal to common/ (and its tests).
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/cell.h"

namespace widen::cell_record {

/// Bytes of a record's head: four lengths, the timestamp, the type.
inline constexpr size_t kHeadBytes = 4 * 4 + 8 + 1;

/// Appends the record of `c` to `out`.
inline void Append(const CellView& c, std::string* out) {
  char head[kHeadBytes];
  const uint32_t lens[4] = {
      static_cast<uint32_t>(c.row.size()), static_cast<uint32_t>(c.family.size()),
      static_cast<uint32_t>(c.qualifier.size()), static_cast<uint32_t>(c.value.size())};
  std::memcpy(head, lens, sizeof lens);
  std::memcpy(head + 16, &c.timestamp_ms, 8);
  head[24] = static_cast<char>(c.type);
  out->append(head, sizeof head);
  out->append(c.row).append(c.family).append(c.qualifier).append(c.value);
}

/// The bytes after the head of the record whose head is at `head`.
/// REQUIRES: kHeadBytes readable bytes at `head`.
inline size_t BodyBytes(const char* head) {
  uint32_t lens[4];
  std::memcpy(lens, head, sizeof lens);
  return size_t{lens[0]} + lens[1] + lens[2] + lens[3];
}

/// Views the record at `head` as a cell (views into the record's bytes).
/// REQUIRES: kHeadBytes + BodyBytes(head) readable bytes at `head`.
inline CellView Parse(const char* head) {
  uint32_t lens[4];
  std::memcpy(lens, head, sizeof lens);
  CellView cell;
  std::memcpy(&cell.timestamp_ms, head + 16, 8);
  cell.type = static_cast<CellType>(static_cast<unsigned char>(head[24]));
  const char* p = head + kHeadBytes;
  cell.row = std::string_view(p, lens[0]);
  p += lens[0];
  cell.family = std::string_view(p, lens[1]);
  p += lens[1];
  cell.qualifier = std::string_view(p, lens[2]);
  p += lens[2];
  cell.value = std::string_view(p, lens[3]);
  return cell;
}

}  // namespace widen::cell_record
