// The embedded store's key layout: bytewise order of encoded keys must equal
// HBase's cell order, and every key must decode back to its cell.
#include "store/leveldb_format_internal.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/cell.h"

namespace widen {
namespace {

namespace lf = leveldb_format;

int Sign(int v) { return (v > 0) - (v < 0); }

// LevelDB's default comparator: memcmp, then length.
int CompareBytes(const std::string& a, const std::string& b) {
  const size_t n = std::min(a.size(), b.size());
  if (int c = std::memcmp(a.data(), b.data(), n)) return Sign(c);
  return Sign(static_cast<int>(a.size() > b.size()) - static_cast<int>(a.size() < b.size()));
}

struct OwnedCell {
  std::string table;
  std::string row;
  std::string family;
  std::string qualifier;
  int64_t timestamp_ms = 0;
  CellType type = CellType::kPut;

  CellView View() const { return CellView{row, family, qualifier, timestamp_ms, type, {}}; }
};

std::string KeyOf(const OwnedCell& c) {
  std::string key;
  lf::AppendCellKeyPrefix(&key, c.table);
  lf::AppendCellKeySuffix(&key, c.View());
  return key;
}

// Random bytes biased towards the interesting ones: 0x00, 0xFF, 0x01, and
// strings that are prefixes of each other.
class CellGenerator {
 public:
  explicit CellGenerator(uint64_t seed) : rng_(seed) {}

  std::string Bytes(size_t max_len) {
    static const unsigned char kSpecial[] = {0x00, 0xFF, 0x01, 0x00, 0xFE, 'a', 'b', 0x7F, 0x80};
    std::string s;
    const size_t n = Uniform(max_len + 1);
    for (size_t i = 0; i < n; ++i) {
      if (Uniform(2) == 0) {
        s.push_back(static_cast<char>(kSpecial[Uniform(sizeof(kSpecial))]));
      } else {
        s.push_back(static_cast<char>(Uniform(256)));
      }
    }
    return s;
  }

  // Often an extension or a truncation of an earlier value, so prefixes occur.
  std::string FromPool(std::vector<std::string>* pool, size_t max_len, bool allow_empty) {
    std::string s;
    if (!pool->empty() && Uniform(3) != 0) {
      s = (*pool)[Uniform(pool->size())];
      switch (Uniform(3)) {
        case 0:
          s += Bytes(2);
          break;
        case 1:
          s.resize(Uniform(s.size() + 1));
          break;
        default:
          break;
      }
    } else {
      s = Bytes(max_len);
    }
    if (s.empty() && !allow_empty) s = "r";
    pool->push_back(s);
    return s;
  }

  int64_t Timestamp() {
    static const int64_t kEdges[] = {std::numeric_limits<int64_t>::min(),
                                     std::numeric_limits<int64_t>::min() + 1,
                                     -1000,
                                     -1,
                                     0,
                                     1,
                                     1700000000000,
                                     std::numeric_limits<int64_t>::max() - 1,
                                     std::numeric_limits<int64_t>::max()};
    switch (Uniform(3)) {
      case 0:
        return kEdges[Uniform(sizeof(kEdges) / sizeof(kEdges[0]))];
      case 1:
        return static_cast<int64_t>(rng_());  // any 64-bit value
      default:
        return static_cast<int64_t>(Uniform(5)) - 2;  // many equal timestamps
    }
  }

  CellType Type() {
    static const CellType kTypes[] = {CellType::kPut, CellType::kDelete, CellType::kDeleteColumn,
                                      CellType::kDeleteFamily};
    return kTypes[Uniform(4)];
  }

  OwnedCell Cell(const std::vector<std::string>& tables) {
    static const char* kFamilies[] = {"d", "d1", "e", "D", "d.x", "d d"};
    OwnedCell c;
    c.table = tables[Uniform(tables.size())];
    c.row = FromPool(&rows_, 5, /*allow_empty=*/false);
    c.family = kFamilies[Uniform(sizeof(kFamilies) / sizeof(kFamilies[0]))];
    c.qualifier = FromPool(&qualifiers_, 4, /*allow_empty=*/true);
    c.timestamp_ms = Timestamp();
    c.type = Type();
    return c;
  }

  size_t Uniform(size_t n) { return static_cast<size_t>(rng_() % n); }

 private:
  std::mt19937_64 rng_;
  std::vector<std::string> rows_;
  std::vector<std::string> qualifiers_;
};

// HBase's order within a table, preceded by the table name's byte order.
int CompareOwned(const OwnedCell& a, const OwnedCell& b) {
  if (int c = CompareBytes(a.table, b.table)) return c;
  return Sign(CompareCells(a.View(), b.View()));
}

TEST(LevelDbFormatTest, KeyOrderEqualsHBaseCellOrder) {
  CellGenerator gen(20240601);
  const std::vector<std::string> tables = {"t"};
  std::vector<OwnedCell> cells;
  for (int i = 0; i < 1500; ++i) cells.push_back(gen.Cell(tables));
  std::vector<std::string> keys;
  for (const OwnedCell& c : cells) keys.push_back(KeyOf(c));

  for (size_t i = 0; i < cells.size(); ++i) {
    for (size_t j = 0; j < cells.size(); ++j) {
      const int want = Sign(CompareCells(cells[i].View(), cells[j].View()));
      const int got = CompareBytes(keys[i], keys[j]);
      ASSERT_EQ(want, got) << "cells " << i << " and " << j;
    }
  }
}

TEST(LevelDbFormatTest, TablesNeverInterleave) {
  CellGenerator gen(7);
  // "t" is a prefix of the others; ':' and '-' and '.' sort around letters.
  const std::vector<std::string> tables = {"t", "t.x", "t-1", "ns:t", "t_", "ns:t.x", "a"};
  std::vector<OwnedCell> cells;
  for (int i = 0; i < 800; ++i) cells.push_back(gen.Cell(tables));
  std::vector<std::string> keys;
  for (const OwnedCell& c : cells) keys.push_back(KeyOf(c));
  for (size_t i = 0; i < cells.size(); ++i) {
    for (size_t j = 0; j < cells.size(); ++j) {
      ASSERT_EQ(CompareOwned(cells[i], cells[j]), CompareBytes(keys[i], keys[j]))
          << "cells " << i << " and " << j;
    }
  }
}

TEST(LevelDbFormatTest, SortedKeysAreSortedCells) {
  CellGenerator gen(99);
  const std::vector<std::string> tables = {"t"};
  std::vector<OwnedCell> cells;
  for (int i = 0; i < 20000; ++i) cells.push_back(gen.Cell(tables));
  std::vector<size_t> by_key(cells.size());
  for (size_t i = 0; i < by_key.size(); ++i) by_key[i] = i;
  std::vector<std::string> keys;
  for (const OwnedCell& c : cells) keys.push_back(KeyOf(c));
  std::sort(by_key.begin(), by_key.end(),
            [&](size_t a, size_t b) { return CompareBytes(keys[a], keys[b]) < 0; });
  for (size_t i = 1; i < by_key.size(); ++i) {
    ASSERT_LE(CompareCells(cells[by_key[i - 1]].View(), cells[by_key[i]].View()), 0) << i;
  }
}

TEST(LevelDbFormatTest, DecodeInvertsEncode) {
  CellGenerator gen(12345);
  const std::vector<std::string> tables = {"t", "ns:table.v2", "a-b"};
  for (int i = 0; i < 5000; ++i) {
    const OwnedCell c = gen.Cell(tables);
    const std::string key = KeyOf(c);
    lf::DecodedCellKey d;
    ASSERT_TRUE(lf::DecodeCellKey(key, &d)) << i;
    EXPECT_EQ(d.table, c.table);
    EXPECT_EQ(d.row, c.row);
    EXPECT_EQ(d.family, c.family);
    EXPECT_EQ(d.qualifier, c.qualifier);
    EXPECT_EQ(d.timestamp_ms, c.timestamp_ms);
    EXPECT_EQ(d.type, c.type);
  }
}

// One line per part of the key.
// clang-format off
TEST(LevelDbFormatTest, ExactBytes) {
  OwnedCell c;
  c.table = "ns:t";
  c.row = std::string("a\x00" "b", 3);
  c.family = "d";
  c.qualifier = std::string("\x00", 1);
  c.timestamp_ms = 1;
  c.type = CellType::kPut;
  const std::string want = std::string(
      "\x02" "ns:t" "\x00"                // table prefix
      "a\x00\xff" "b" "\x00\x01"          // ESC(row) + terminator
      "d" "\x00"                          // family
      "\x00\xff" "\x00\x01"               // ESC(qualifier) + terminator
      "\x7f\xff\xff\xff\xff\xff\xff\xfe"  // ~(1 ^ sign bit)
      "\xfb",                             // 0xFF - 4
      6 + 6 + 2 + 4 + 8 + 1);
  EXPECT_EQ(KeyOf(c), want);
  EXPECT_EQ(lf::TableKey("ns:t"), std::string("\x01" "ns:t"));
  EXPECT_EQ(lf::kHeaderKey, std::string_view("\x00" "format", 7));
}
// clang-format on

TEST(LevelDbFormatTest, TimestampEncodingIsNewestFirst) {
  const int64_t ts[] = {std::numeric_limits<int64_t>::min(), -2, -1, 0, 1, 2,
                        std::numeric_limits<int64_t>::max()};
  for (size_t i = 0; i + 1 < sizeof(ts) / sizeof(ts[0]); ++i) {
    EXPECT_GT(lf::EncodeTimestamp(ts[i]), lf::EncodeTimestamp(ts[i + 1])) << ts[i];
  }
  for (int64_t t : ts) EXPECT_EQ(lf::DecodeTimestamp(lf::EncodeTimestamp(t)), t);
  EXPECT_EQ(lf::EncodeTimestamp(0), 0x7fffffffffffffffULL);
}

TEST(LevelDbFormatTest, TypeBytePutsMarkersFirst) {
  EXPECT_LT(lf::EncodeType(CellType::kDeleteFamily), lf::EncodeType(CellType::kDeleteColumn));
  EXPECT_LT(lf::EncodeType(CellType::kDeleteColumn), lf::EncodeType(CellType::kDelete));
  EXPECT_LT(lf::EncodeType(CellType::kDelete), lf::EncodeType(CellType::kPut));
  CellType t;
  EXPECT_FALSE(lf::DecodeType(0xFF - 5, &t));
  EXPECT_TRUE(lf::DecodeType(0xFF - 14, &t));
  EXPECT_EQ(t, CellType::kDeleteFamily);
}

TEST(LevelDbFormatTest, MalformedSuffixesAreRejected) {
  OwnedCell c;
  c.table = "t";
  c.row = "r";
  c.family = "d";
  c.qualifier = "q";
  const std::string good = KeyOf(c);
  lf::DecodedCellKey d;
  ASSERT_TRUE(lf::DecodeCellKey(good, &d));
  // Every truncation is malformed.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(lf::DecodeCellKey(good.substr(0, n), &d)) << n;
  }
  EXPECT_FALSE(lf::DecodeCellKey(good + "x", &d));  // long trailer
  std::string bad_escape = good;
  bad_escape[3] = '\x00';  // the row becomes a bare 0x00 (neither 0x00 0xFF nor 0x00 0x01)
  EXPECT_FALSE(lf::DecodeCellKey(bad_escape, &d));
  std::string bad_type = good;
  bad_type.back() = '\x00';
  EXPECT_FALSE(lf::DecodeCellKey(bad_type, &d));
  std::string empty_family = std::string(
                                 "\x02"
                                 "t\x00"
                                 "r\x00\x01"
                                 "\x00"
                                 "q\x00\x01",
                                 10) +
                             std::string(9, '\x7f');
  empty_family.back() = static_cast<char>(lf::EncodeType(CellType::kPut));
  EXPECT_FALSE(lf::DecodeCellKey(empty_family, &d));
}

TEST(LevelDbFormatTest, EscapeRoundTrip) {
  CellGenerator gen(3);
  for (int i = 0; i < 2000; ++i) {
    const std::string s = gen.Bytes(12);
    std::string escaped;
    lf::AppendEscapedTerminated(&escaped, s);
    ASSERT_GE(escaped.size(), 2u);
    std::string back;
    lf::AppendUnescaped(&back, std::string_view(escaped).substr(0, escaped.size() - 2));
    EXPECT_EQ(back, s);
  }
}

}  // namespace
}  // namespace widen
