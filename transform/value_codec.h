// ValueCodec: how a source value becomes the bytes of a cell.
//
//   string  the value's canonical UTF-8 text (Value::AppendText): "119.90",
//           "2024-01-15 14:03:11", "true". Readable in the HBase shell.
//   hbase   the bytes of HBase's org.apache.hadoop.hbase.util.Bytes.toBytes for
//           the Java type (default: from the source type):
//             short 2 B, int 4 B, long 8 B big-endian two's complement;
//             float 4 B / double 8 B IEEE 754 raw bits big-endian;
//             boolean 1 B (0xFF true, 0x00 false);
//             BigDecimal: scale as int (4 B) + unscaledValue().toByteArray()
//             (minimal big-endian two's complement);
//             String: UTF-8 bytes; bytes as they are.
//           Dates and timestamps are written as long ms since the epoch
//           (timestamps floored to ms), times as long microseconds.
//   json    the value as a JSON literal: numbers, true/false, exact decimals
//           and temporal values as strings, JSON columns as they are.
//   raw     bytes as they are (bytea, BLOB); other types as their text.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "common/value.h"

namespace widen {

enum class ValueCodecKind { kString, kHBase, kJson, kRaw };

/// The Java type of HBase's Bytes.toBytes overload a value is written as.
enum class HBaseType {
  kAuto,
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

bool ParseValueCodec(std::string_view name, ValueCodecKind* kind);
/// "short", "int", "long", "float", "double", "boolean", "bigdecimal", "string", "bytes".
bool ParseHBaseType(std::string_view name, HBaseType* type);
std::string_view HBaseTypeName(HBaseType type);

/// The default Java type for a source column of widen type `type` declared as
/// `source_type` ("smallint" -> short, "integer" -> int, "bigint" -> long,
/// "real"/"float4"/"float" -> float, ...).
HBaseType DefaultHBaseType(ValueType type, std::string_view source_type);

struct ValueCodecPlan {
  ValueCodecKind kind = ValueCodecKind::kString;
  HBaseType hbase_type = HBaseType::kAuto;  // kHBase only; resolved by the planner
};

/// Appends the encoded `value` to *out. REQUIRES: !value.is_null().
/// InvalidArgument when the value does not fit the Java type (e.g. 70000 as
/// short, a fraction as long, NaN as BigDecimal).
Status EncodeValue(const ValueCodecPlan& plan, const Value& value, std::string* out);

/// Appends `value` as a JSON literal (the json codec, and nested JSON values).
void AppendJson(const Value& value, std::string* out);

/// Appends `s` as a JSON string literal (quotes and escapes).
void AppendJsonString(std::string_view s, std::string* out);

/// Decimal text -> HBase's BigDecimal bytes. False when `text` is not a
/// finite decimal in plain notation.
bool AppendHBaseBigDecimal(std::string_view text, std::string* out);

}  // namespace widen
