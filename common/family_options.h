// The creation options of an HBase column family that take one of a fixed set
// of values (ColumnFamilyDescriptorBuilder's COMPRESSION, BLOOMFILTER and
// DATA_BLOCK_ENCODING), as enums with HBase's own upper-case names. The
// mapping loader parses them (mapping/mapping.h FamilySpec); a table
// descriptor (store/table_descriptor.h) keeps the names, as HBase reports
// them, and is checked against the same tables.
//
// Thread safety: constants and pure functions.
#pragma once

#include <string_view>

#include "common/enum_names.h"

namespace widen {

/// COMPRESSION: NONE, SNAPPY, GZ, LZ4, ZSTD, LZO, BZIP2.
enum class Compression { kNone, kSnappy, kGz, kLz4, kZstd, kLzo, kBzip2 };
/// BLOOMFILTER: NONE, ROW, ROWCOL.
enum class BloomFilter { kNone, kRow, kRowCol };
/// DATA_BLOCK_ENCODING: NONE, PREFIX, DIFF, FAST_DIFF, ROW_INDEX_V1.
enum class DataBlockEncoding { kNone, kPrefix, kDiff, kFastDiff, kRowIndexV1 };

inline constexpr EnumName<Compression> kCompressionEntries[] = {
    {Compression::kNone, "NONE"},  {Compression::kSnappy, "SNAPPY"}, {Compression::kGz, "GZ"},
    {Compression::kLz4, "LZ4"},    {Compression::kZstd, "ZSTD"},     {Compression::kLzo, "LZO"},
    {Compression::kBzip2, "BZIP2"}};
inline constexpr EnumName<BloomFilter> kBloomFilterEntries[] = {
    {BloomFilter::kNone, "NONE"}, {BloomFilter::kRow, "ROW"}, {BloomFilter::kRowCol, "ROWCOL"}};
inline constexpr EnumName<DataBlockEncoding> kDataBlockEncodingEntries[] = {
    {DataBlockEncoding::kNone, "NONE"},
    {DataBlockEncoding::kPrefix, "PREFIX"},
    {DataBlockEncoding::kDiff, "DIFF"},
    {DataBlockEncoding::kFastDiff, "FAST_DIFF"},
    {DataBlockEncoding::kRowIndexV1, "ROW_INDEX_V1"}};

/// The name tables (HBase's names, upper case), in the order above.
inline constexpr NameTable<Compression> kCompressionNames{kCompressionEntries};
inline constexpr NameTable<BloomFilter> kBloomFilterNames{kBloomFilterEntries};
inline constexpr NameTable<DataBlockEncoding> kDataBlockEncodingNames{kDataBlockEncodingEntries};

/// HBase's name of each option value ("SNAPPY", "ROWCOL", "FAST_DIFF").
constexpr std::string_view CompressionName(Compression c) { return kCompressionNames.Name(c); }
constexpr std::string_view BloomFilterName(BloomFilter b) { return kBloomFilterNames.Name(b); }
constexpr std::string_view DataBlockEncodingName(DataBlockEncoding e) {
  return kDataBlockEncodingNames.Name(e);
}

}  // namespace widen
