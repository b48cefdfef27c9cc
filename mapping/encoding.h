// The encodings a mapping chooses, as enums the loader parses once (with
// file:line:col errors) and everything after it reads: the form of a key and
// the type of each key part, the codec of a cell value and its Java type,
// the layout of a nest's cells. Each enum has one name table, used both to
// parse the mapping's word and to print it (`widen plan`, messages, the key
// layout kept in the table's metadata).
//
// How each is encoded is transform's (transform/key_codec.h,
// transform/value_codec.h); the names are the mapping's, and persisted: a
// key type's name is stored in the key layout (KeyCodec::ToJson), so never
// rename one.
//
// Thread safety: constants and pure functions.
#pragma once

#include <string_view>

#include "common/enum_names.h"

namespace widen {

/// How the parts of a row key (or a nest's id) are put together.
enum class KeyForm {
  kText,    // "text": readable, the parts' text joined by a separator
  kBinary,  // "binary": order-preserving bytes
};

/// The encoding type of a key part.
enum class KeyType {
  kString,
  kBytes,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt64,
  kFloat32,
  kFloat64,
  kDecimal,
  kBool,
  kDate,       // days since 1970-01-01, 4 bytes
  kTimestamp,  // ms since the epoch, 8 bytes (microseconds are floored)
  kTime,       // microseconds, 8 bytes
};

/// The largest `width` of a key part (digits of a text part, bytes of a
/// fixed-width binary string): what the mapping accepts and what a stored
/// key layout may say.
inline constexpr int kMaxKeyPartWidth = 4096;

/// How a source value becomes the bytes of a cell.
enum class ValueCodecKind { kString, kHBase, kJson, kRaw };

/// The Java type of HBase's Bytes.toBytes overload a value is written as.
enum class HBaseType {
  kAuto,  // from the source column's type (the planner resolves it); no name
  kShort,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kBoolean,
  kBigDecimal,
  kString,
  kBytes
};

/// How a nest writes each child.
enum class NestLayout {
  kJson,   // "json": one cell per child, a JSON object of its attributes
  kCells,  // "cells": one cell per attribute (qualifier = prefix+id+sep+attribute)
  kValue,  // "value": one cell per child holding its single attribute's bytes
};

/// The name tables: "text", "binary"; "string", "bytes", "int8", ... "time";
/// "string", "hbase", "json", "raw"; "short", "int", ... "bytes" (kAuto has
/// none); "json", "cells", "value". In the order messages list them.
const NameTable<KeyForm>& KeyFormNames();
const NameTable<KeyType>& KeyTypeNames();
const NameTable<ValueCodecKind>& ValueCodecNames();
const NameTable<HBaseType>& HBaseTypeNames();
const NameTable<NestLayout>& NestLayoutNames();

/// Mapping name of a key type ("int32") and back; false for an unknown name.
std::string_view KeyTypeName(KeyType t);
bool ParseKeyType(std::string_view name, KeyType* t);

/// "string", "hbase", "json", "raw" and back.
std::string_view ValueCodecName(ValueCodecKind kind);
bool ParseValueCodec(std::string_view name, ValueCodecKind* kind);

/// "short", "int", "long", "float", "double", "boolean", "bigdecimal",
/// "string", "bytes" and back; kAuto is "auto" (not parsed).
std::string_view HBaseTypeName(HBaseType type);
bool ParseHBaseType(std::string_view name, HBaseType* type);

/// "json", "cells", "value".
std::string_view NestLayoutName(NestLayout layout);

}  // namespace widen
