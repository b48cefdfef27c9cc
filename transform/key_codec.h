// KeyCodec: turns the key parts of a row into row-key (or qualifier) bytes,
// and back: into typed values (DecodeRow) or named parts for display.
//
// Two forms:
//   text    readable `A100|00001|001042`: each part's text form, integers
//           zero-padded to `width`, parts joined by the separator. A value
//           containing the separator would make keys ambiguous, so such a row
//           is refused (never a silent collision); so is a value a padded
//           part cannot sort right: negative, or wider than `width` digits.
//           `reverse` parts are Long.MAX_VALUE - ms in 19 digits.
//   binary  order-preserving bytes (transform/ordered_bytes.h) concatenated:
//           the unsigned-bytewise order of keys equals the tuple order of the
//           values, `desc` parts reversed. Distinct tuples give distinct keys.
// Either form can start with a salt byte (`hash(parts) mod buckets`) and/or a
// hash prefix of N bytes; see docs/format.md for the hash and every layout.
//
// A NULL part is refused unless its rule is `marker` (binary form only): then
// every value of the part is preceded by 0x01 and NULL is the single byte
// 0x00, so NULL sorts first (last when `desc`).
//
// Thread safety: immutable after construction; Encode may be called from
// several threads with distinct output buffers.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/value.h"
#include "mapping/encoding.h"

namespace widen {

/// The largest column index a stored key layout may give a part: a source
/// row has far fewer columns (PostgreSQL selects at most 1,664, MySQL 4,096).
inline constexpr int64_t kMaxKeyLayoutIndex = 65535;

/// Whether some value of widen type `type` can be a binary part of key type
/// `t` (false: a timestamp as `date`, text as `int32`); the planner refuses
/// such a mapping instead of rejecting every row.
bool KeyTypeAccepts(KeyType t, ValueType type);

/// Fixed size in bytes of a binary part, 0 for variable-length types.
int KeyTypeBytes(KeyType t);

/// One resolved key part: a literal, or a column at `index` of the row.
struct KeyPartPlan {
  std::string name;  // for display and messages ("customer_id")
  bool is_literal = false;
  std::string literal;
  size_t index = 0;  // column index in the row the codec reads
  KeyType type = KeyType::kString;
  int width = 0;             // text: zero-pad integers to this many digits;
                             // binary string/bytes: fixed width in bytes (0 = terminated)
  bool desc = false;         // binary: invert the part's bytes
  bool reverse = false;      // timestamps: Long.MAX_VALUE - ms (newest first)
  bool null_marker = false;  // binary: NULL allowed, encoded as a marker that sorts first
  /// The source column's type (what a text part's value looks like), and the
  /// type it is stored in as the engine names it ("uuid", "smallint",
  /// "int(10) unsigned"; a domain's base type); "" for literals. Neither is
  /// part of the stored layout (ToJson).
  ValueType value_type = ValueType::kText;
  std::string source_type;
};

/// A salt byte or hash prefix over some of the parts (indexes into parts).
struct KeyHashPlan {
  int size = 0;               // salt: number of buckets (0 = none); hash: bytes (0 = none)
  std::vector<size_t> parts;  // which parts feed the hash; empty = all column parts
};

/// 32-bit FNV-1a over `bytes` (offset basis 2166136261, prime 16777619).
uint32_t Fnv1a32(std::string_view bytes);
/// 64-bit FNV-1a (offset basis 14695981039346656037, prime 1099511628211).
uint64_t Fnv1a64(std::string_view bytes);
/// The hash of a key's hash prefix: MurmurHash3's fmix64 finalizer applied to
/// Fnv1a64(bytes), so that every input bit reaches the leading bytes.
uint64_t HashPrefix64(std::string_view bytes);

class KeyCodec {
 public:
  KeyCodec() = default;
  KeyCodec(KeyForm form, std::vector<KeyPartPlan> parts, std::string separator,
           KeyHashPlan salt = {}, KeyHashPlan hash_prefix = {});

  /// Appends the encoded key of `row` to *out. InvalidArgument naming the
  /// part and value when it cannot be encoded (NULL without a marker rule, the
  /// separator inside a text value, a value out of the part type's range);
  /// *out is then unspecified.
  Status Encode(const Row& row, std::string* out) const;

  /// The row key prefixes that hold every key whose first `leading` parts
  /// (literals included) are those of `row`: the parts' encoded bytes,
  /// followed in the text form by the separator when more parts follow (so
  /// that '12|' does not also select '123|'), behind the salt bucket and the
  /// hash prefix. When the salt hashes a part beyond `leading`, the bucket
  /// cannot be known: one prefix per bucket, in bucket order. Errors: the
  /// row's parts do not encode (as Encode); FailedPrecondition when the hash
  /// prefix hashes a part beyond `leading` (the rows are spread over the
  /// whole key range). REQUIRES: leading <= parts().size().
  Status EncodePrefixes(const Row& row, size_t leading, std::vector<std::string>* prefixes) const;

  /// Splits an encoded key into (part name, display text) pairs; the salt and
  /// hash prefix come first as "salt" and "hash". Timestamp parts (also
  /// `reverse` ones, in either form) show as the time they hold. Returns
  /// false when `key` does not have the codec's shape, or a part is not
  /// what Encode writes for some value (see DecodeRow; Decode does not
  /// compare parts of one column).
  bool Decode(std::string_view key, std::vector<std::pair<std::string, std::string>>* parts) const;

  /// Decodes an encoded key back into the values it was made of: a Row laid
  /// out as Encode reads it — each column part's value at its `index`, the
  /// indexes no part reads NULL — so that Encode(DecodeRow(key)) gives the
  /// key back. A value has the part's source type (KeyPartPlan::value_type)
  /// when the part holds it exactly: the same value for every type and form,
  /// but timestamps floored to ms (as encoded) and decimals without
  /// redundant zeros ("12.5" for 12.50; CompareValues finds them equal).
  /// Without a source type (a codec from FromJson: text) a binary part gives
  /// its key type's value (int8..int64 int, uint64 uint, float/double double,
  /// decimal, bool, date, timestamp, time, string text, bytes bytes) and a
  /// text part its text. A NULL marker gives NULL. Literals, the salt and the
  /// hash prefix are checked, not returned. InvalidArgument naming the key,
  /// and the part, its type and byte offset that did not decode (too short,
  /// malformed, not the text of its type, not zero-padded to its width, a
  /// spelling of a value Encode never writes: a NaN but the canonical one, a
  /// decimal digit string with a leading or trailing zero, fixed-width
  /// padding that is not all 00, a reversed timestamp with the top bit set,
  /// the separator inside a text key's last part, a value other than an
  /// earlier part's of the same column), a salt or hash prefix that does not
  /// match the parts, or bytes left over.
  Result<Row> DecodeRow(std::string_view key) const;

  /// The layout as drawn by `widen plan`: "[salt 1B][product_code string]...".
  std::string Anatomy() const;
  /// The layout as JSON (stored in the target table's metadata so readers can
  /// decode keys without the mapping); FromJson reverses it.
  std::string ToJson() const;
  /// Reads a layout ToJson wrote. Stored bytes may be damaged, so DataLoss
  /// ("key layout: ...") for anything a mapping cannot give: malformed JSON,
  /// a missing or mistyped field, an unknown form or type, a width beyond
  /// 0..kMaxKeyPartWidth, a column index beyond kMaxKeyLayoutIndex, a salt
  /// other than 0 or 2..256 buckets, a hash prefix other than 0 or 1..8
  /// bytes, a salt or hash over a part that is no column part, desc or a
  /// NULL marker in the text form, reverse on a non-timestamp part, a width
  /// on a binary part other than string or bytes, desc or reverse on a
  /// literal.
  static Result<KeyCodec> FromJson(std::string_view json);

  KeyForm form() const { return form_; }
  /// The parts, in key order; a view valid as long as the codec.
  std::span<const KeyPartPlan> parts() const { return parts_; }
  const std::string& separator() const { return separator_; }
  const KeyHashPlan& salt() const { return salt_; }
  const KeyHashPlan& hash_prefix() const { return hash_; }

 private:
  Status EncodePartBinary(const KeyPartPlan& p, const Value& v, std::string* out) const;
  Status EncodePartText(const KeyPartPlan& p, const Value& v, std::string* out) const;
  // One binary part at the front of *in as its key type holds it (see
  // DecodeRow; timestamps as kInt milliseconds, NULL markers as NULL);
  // false with *why when the bytes do not hold one.
  bool DecodePartBinary(const KeyPartPlan& p, std::string_view* in, Value* value,
                        std::string* why) const;
  // Long.MAX_VALUE - ms in 19 digits (a text `reverse` part) -> ms.
  static bool ReverseMs(std::string_view digits, int64_t* ms);

  KeyForm form_ = KeyForm::kText;
  std::vector<KeyPartPlan> parts_;
  std::string separator_;
  KeyHashPlan salt_;
  KeyHashPlan hash_;
};

}  // namespace widen
