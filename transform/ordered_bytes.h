// Order-preserving byte encodings of single values: the unsigned-bytewise
// order of the encodings equals the order of the values, and every encoding
// decodes back. Row keys and nested qualifiers in binary form are built from
// them. The ideas follow HBase's OrderedBytes and Phoenix's row keys; the
// exact bytes are widen's own and are drawn in docs/format.md ("Binary key
// parts"). NEVER CHANGE an encoding: stored keys depend on it.
//
//   signed int, N bytes   big-endian two's complement with the sign bit flipped
//   uint64                8 bytes big-endian
//   float64 / float32     IEEE bits big-endian; positive: sign bit flipped,
//                         negative: all bits inverted. Order = Java's
//                         Double.compare: -inf < ... < -0.0 < +0.0 < ... < +inf < NaN
//                         (every NaN is written as the canonical quiet NaN)
//   decimal               header 0x01 negative, 0x02 zero, 0x03 positive; then for
//                         non-zero: exponent E (value = 0.d1d2... x 10^E) as int32
//                         sign-flipped big-endian, then the significant digits as
//                         ASCII '0'..'9', then 0x00. Negative: exponent and digits
//                         (terminator included) inverted. |E| <= 131072
//                         (kMaxDecimalExponent: PostgreSQL's numeric holds
//                         131072 digits before the point, 16383 after).
//   string / bytes        every 0x00 written as 0x00 0xFF, then the terminator
//                         0x00 0x01: a string sorts before its extensions and the
//                         next part cannot run into it
//   string, fixed width W the bytes padded with 0x00 to exactly W (no terminator);
//                         longer values, or values containing 0x00, are refused
//   bool                  0x00 false, 0x01 true
//
// `desc` inverts every byte of a part's encoding (terminator included), which
// reverses its order. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace widen::ordered {

/// The largest |E| of a decimal (value = 0.d1d2... x 10^E) that PutDecimal
/// writes and GetDecimal reads: a key part never decodes to more than about
/// 128 Ki digits, whatever its exponent bytes say.
inline constexpr int64_t kMaxDecimalExponent = 131072;

void PutInt(std::string* out, int64_t v, int width_bytes);  // width 1, 2, 4 or 8
void PutUInt64(std::string* out, uint64_t v);
void PutDouble(std::string* out, double v);
void PutFloat(std::string* out, float v);
void PutBool(std::string* out, bool v);
/// `text` is a decimal in plain notation ("-12.50", "0", "1e5" is not accepted).
/// Returns false when it is not a decimal, or its exponent is beyond
/// kMaxDecimalExponent.
bool PutDecimal(std::string* out, std::string_view text);
/// Escaped and terminated.
void PutString(std::string* out, std::string_view bytes);
/// Padded to `width` bytes; false when longer or containing 0x00.
bool PutFixedString(std::string* out, std::string_view bytes, int width);

/// Inverts bytes [from, out->size()) (the `desc` modifier).
void Invert(std::string* out, size_t from);

// Decoders read from the front of *in and advance it. They accept only what
// the matching Put* writes for some value, so that a decoded value encodes
// back to the same bytes: false on malformed input and on other spellings
// of a value (a NaN other than the canonical one, a decimal digit string
// with a leading or trailing zero, fixed-width padding that is not all 00).
bool GetInt(std::string_view* in, int width_bytes, int64_t* v);
bool GetUInt64(std::string_view* in, uint64_t* v);
bool GetDouble(std::string_view* in, double* v);
bool GetFloat(std::string_view* in, float* v);
bool GetBool(std::string_view* in, bool* v);
/// Produces plain notation without redundant zeros ("-12.5", "0", "1000").
/// False unless the bytes are exactly what PutDecimal writes for some value
/// (digits '1'..'9' first and last, '0'..'9' between; |E| within the bound).
bool GetDecimal(std::string_view* in, std::string* text);
bool GetString(std::string_view* in, std::string* bytes);
bool GetFixedString(std::string_view* in, int width, std::string* bytes);

/// Length of the encoded part at the front of `in` for variable-length
/// encodings (string, decimal), honouring `desc`; 0 when malformed.
size_t StringLength(std::string_view in, bool desc);
size_t DecimalLength(std::string_view in, bool desc);

}  // namespace widen::ordered
