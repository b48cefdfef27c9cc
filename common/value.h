// Value: one typed SQL value as read from a source database, and Row, a
// sequence of them in a stream's column order.
//
// A Value is small and owns its bytes; readers reuse Values across rows so the
// hot path does not allocate (assigning a string keeps its capacity). NULL is a
// flag beside the declared type, so a NULL is never confused with '' or 0.
//
// Representation by type (the field used is in brackets):
//   kBool        [int_]   0 or 1
//   kInt         [int_]   signed 64-bit
//   kUInt        [uint_]  unsigned 64-bit (MySQL BIGINT UNSIGNED)
//   kFloat       [double_] IEEE double (float4 widened exactly)
//   kDecimal     [bytes_] exact decimal text as the server prints it ("-12.50")
//   kText        [bytes_] UTF-8 text
//   kBytes       [bytes_] binary string (bytea, BLOB), may hold 0x00
//   kDate        [int_]   days since 1970-01-01 (proleptic Gregorian)
//   kTime        [int_]   microseconds, may be negative or beyond 24 h (MySQL TIME)
//   kTimestamp   [int_]   microseconds since 1970-01-01 00:00, no time zone
//   kTimestampTz [int_]   microseconds since the epoch, an instant (UTC)
//   kJson        [bytes_] JSON document text
//   kOther       [bytes_] the server's text form of any other type (uuid, interval, ...)
// Arrays and MySQL SETs also say how their text holds the elements
// (list_form(), element_type()), for JSON arrays.
//
// Thread safety: a value type; no shared state.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace widen {

enum class ValueType : uint8_t {
  kBool,
  kInt,
  kUInt,
  kFloat,
  kDecimal,
  kText,
  kBytes,
  kDate,
  kTime,
  kTimestamp,
  kTimestampTz,
  kJson,
  kOther,
};

/// How a text value (kText, kOther) holds a list of values, so that JSON
/// output can show it as an array; the value's text form is unchanged.
enum class ListForm : uint8_t {
  kNone,
  kPgArray,  // a PostgreSQL array literal: {1,NULL,"a,b"}, {{1,2},{3,4}}, [0:1]={1,2}
  kSet,      // a MySQL SET: labels joined by ',' ("" = the empty set)
};

/// Lower-case name as used in mappings and messages ("int", "timestamptz").
std::string_view ValueTypeName(ValueType type);

/// True for kInt, kUInt (the types that can be zero-padded in text keys).
inline bool IsIntegerType(ValueType t) { return t == ValueType::kInt || t == ValueType::kUInt; }

class Value {
 public:
  Value() = default;
  explicit Value(ValueType type) : type_(type), null_(true) {}

  static Value Null(ValueType type) { return Value(type); }
  static Value Bool(bool b) { return Value(ValueType::kBool, b ? 1 : 0); }
  static Value Int(int64_t v) { return Value(ValueType::kInt, v); }
  static Value UInt(uint64_t v) {
    Value x(ValueType::kUInt, 0);
    x.uint_ = v;
    return x;
  }
  static Value Float(double d) {
    Value x(ValueType::kFloat, 0);
    x.double_ = d;
    return x;
  }
  /// For kDecimal, kText, kBytes, kJson and kOther.
  static Value Str(ValueType type, std::string_view s) {
    Value x(type, 0);
    x.bytes_.assign(s.data(), s.size());
    return x;
  }
  /// For kDate (days), kTime, kTimestamp, kTimestampTz (microseconds).
  static Value Temporal(ValueType type, int64_t v) { return Value(type, v); }

  ValueType type() const { return type_; }
  bool is_null() const { return null_; }
  /// For kText and kOther values read from arrays and SETs: the list syntax
  /// of the text, and the widen type of its elements. Readers set it per
  /// column (it survives the setters below); kNone otherwise.
  ListForm list_form() const { return list_; }
  ValueType element_type() const { return element_; }
  void SetList(ListForm form, ValueType element) {
    list_ = form;
    element_ = element;
  }

  bool as_bool() const { return int_ != 0; }
  int64_t as_int() const { return int_; }
  uint64_t as_uint() const { return uint_; }
  double as_double() const { return double_; }
  /// Bytes of a string-like value; a view valid while this Value is unchanged.
  std::string_view as_bytes() const { return bytes_; }

  // Setters that reuse storage; used by readers in their hot loops.
  void SetNull(ValueType type) {
    type_ = type;
    null_ = true;
  }
  void SetInt(ValueType type, int64_t v) {
    type_ = type;
    null_ = false;
    int_ = v;
  }
  void SetUInt(uint64_t v) {
    type_ = ValueType::kUInt;
    null_ = false;
    uint_ = v;
  }
  void SetDouble(double d) {
    type_ = ValueType::kFloat;
    null_ = false;
    double_ = d;
  }
  void SetBytes(ValueType type, std::string_view s) {
    type_ = type;
    null_ = false;
    bytes_.assign(s.data(), s.size());
  }
  /// Mutable buffer for string-like values; marks the value non-NULL.
  std::string* mutable_bytes(ValueType type) {
    type_ = type;
    null_ = false;
    return &bytes_;
  }

  /// Appends the canonical text form (the `string` value codec): integers in
  /// decimal, doubles shortest round-trip ("NaN", "Infinity", "-Infinity"),
  /// booleans "true"/"false", dates "YYYY-MM-DD", timestamps
  /// "YYYY-MM-DD HH:MM:SS[.ffffff]", instants with a "Z" suffix, times
  /// "[-]HH:MM:SS[.ffffff]" (hours may exceed 24), other types as their bytes.
  /// REQUIRES: !is_null().
  void AppendText(std::string* out) const;
  std::string ToText() const {
    std::string s;
    AppendText(&s);
    return s;
  }

  /// For messages: the text form, "NULL", or bytes shown as \xNN escapes.
  std::string DebugString() const;

 private:
  Value(ValueType type, int64_t v) : type_(type), null_(false), int_(v) {}

  ValueType type_ = ValueType::kText;
  bool null_ = true;
  ListForm list_ = ListForm::kNone;
  ValueType element_ = ValueType::kText;
  union {
    int64_t int_ = 0;
    uint64_t uint_;
    double double_;
  };
  std::string bytes_;
};

/// Equality and total order used to merge sorted streams (nesting) and to
/// compare source values. Numbers compare numerically across kInt/kUInt/kFloat;
/// string-like values compare as unsigned bytes (the "C" collation the
/// extractor asks the database to sort with); temporal values by their integer.
/// NULL sorts first. Decimals compare numerically.
int CompareValues(const Value& a, const Value& b);

/// One column of a row stream.
struct ColumnInfo {
  std::string name;         // as the source names it
  ValueType type;           // widen's type
  std::string source_type;  // the server's type name ("numeric(10,2)")
  bool nullable = true;
};

/// The columns of a row stream; shared by every Row it yields.
using RowSchema = std::vector<ColumnInfo>;

/// One row: values in the schema's order.
struct Row {
  std::vector<Value> values;
  const Value& operator[](size_t i) const { return values[i]; }
  size_t size() const { return values.size(); }
};

}  // namespace widen
