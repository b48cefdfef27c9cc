// ValueCodec: how a source value becomes the bytes of a cell.
//
//   string  the value's canonical UTF-8 text (Value::AppendText): "119.90",
//           "2024-01-15 14:03:11", "true". Readable in the HBase shell.
//   hbase   the bytes of HBase's org.apache.hadoop.hbase.util.Bytes.toBytes for
//           the Java type (default: from the source column's storage type,
//           the narrowest that holds every value; see plan.h):
//             short 2 B, int 4 B, long 8 B big-endian two's complement;
//             float 4 B / double 8 B IEEE 754 raw bits big-endian;
//             boolean 1 B (0xFF true, 0x00 false);
//             BigDecimal: scale as int (4 B) + unscaledValue().toByteArray()
//             (minimal big-endian two's complement);
//             String: UTF-8 bytes; bytes as they are.
//           A value is written only when the Java value is the same number;
//           otherwise its row is rejected with the reason (never wrapped or
//           rounded):
//             short/int/long  integers in range, also from unsigned, decimal
//                             (42, 42.00) and double (42.0) values; dates
//                             and timestamps as ms since the epoch
//                             (timestamps floored to ms), times as
//                             microseconds; infinite dates refused
//             float/double    integers exactly representable; doubles (float:
//                             when the float holds them exactly); decimals
//                             whose nearest float/double prints back as the
//                             same number (0.1 yes, 0.1234567890123456789
//                             no); NaN and ±Infinity as themselves
//             boolean         true/false, and 0/1 from numbers
//             bigdecimal      integers, finite decimals (scale as written),
//                             finite doubles as the shortest decimal that
//                             reads back as the double, trailing zeros
//                             stripped (100.0 -> unscaled 1, scale -2)
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
#include "mapping/encoding.h"

namespace widen {

struct ValueCodecPlan {
  ValueCodecKind kind = ValueCodecKind::kString;
  HBaseType hbase_type = HBaseType::kAuto;  // kHBase only; resolved by the planner
};

/// Whether some value of widen type `type` can be written as Java type `t`
/// (false: a text column as long, a date as double); the planner refuses
/// such a mapping instead of rejecting every row.
bool HBaseTypeAccepts(HBaseType t, ValueType type);

/// Appends the encoded `value` to *out. REQUIRES: !value.is_null().
/// InvalidArgument naming the value, the Java type and why, when the value
/// does not fit the Java type (70000 as short, a fraction as long, NaN as
/// BigDecimal, 2^63 as long).
Status EncodeValue(const ValueCodecPlan& plan, const Value& value, std::string* out);

/// Appends `value` as a JSON literal (the json codec, and nested JSON values).
void AppendJson(const Value& value, std::string* out);

/// Appends `s` as a JSON string literal (quotes and escapes).
void AppendJsonString(std::string_view s, std::string* out);

/// Decimal text -> HBase's BigDecimal bytes, with the scale as written
/// ("1.50" -> 2, "1.5e3" -> -2). False when `text` is not a finite decimal
/// in plain or exponent notation.
bool AppendHBaseBigDecimal(std::string_view text, std::string* out);

}  // namespace widen
