// Exact conversions between the numbers of source values and the fixed-size
// numbers of the codecs (HBase's Java types, binary key parts): a conversion
// either keeps the number exactly or says why it cannot. Shared by the value
// and key codecs; internal to transform/.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/value.h"

namespace widen::exact {

/// A number written in decimal: (-1)^negative x digits x 10^exponent, with
/// `digits` free of leading and trailing zeros ("" for zero, never negative).
struct DecimalNumber {
  bool negative = false;
  std::string digits;
  int64_t exponent = 0;
};

/// Parses "[-+]digits[.digits][(e|E)[-+]digits]"; false for anything else
/// (NaN, Infinity, empty, junk).
bool ParseDecimalNumber(std::string_view text, DecimalNumber* out);

/// An exact integer as sign and magnitude: every int64 and uint64 fits.
struct Integer {
  bool negative = false;  // never true for zero
  uint64_t magnitude = 0;

  static Integer Of(int64_t v);
  /// min <= value <= max.
  bool Within(int64_t min, int64_t max) const;
  /// REQUIRES: Within(INT64_MIN, INT64_MAX).
  int64_t AsInt64() const;
};

/// The integer a number value is: kBool (0/1), kInt, kUInt, a kDecimal
/// without a fraction ("42", "42.00", within 64 bits), a kFloat without a
/// fraction (within 64 bits). False, with *why ("it has a fraction"), for
/// any other value or type.
bool ToInteger(const Value& v, Integer* out, std::string* why);

/// The IEEE double (or, with `single`, float widened exactly) a number value
/// is: a kFloat as it is (single: when the float holds it exactly), kInt and
/// kUInt when exactly representable, a kDecimal when the nearest
/// double/float prints back (shortest round trip, as Java's
/// Double.toString) as the same number; "NaN", "Infinity", "-Infinity" are
/// themselves. False, with *why, otherwise.
bool ToFloating(const Value& v, bool single, double* out, std::string* why);

/// The shortest decimal text that reads back as `d` ("0.1", "1e+38").
std::string Shortest(double d);

}  // namespace widen::exact
