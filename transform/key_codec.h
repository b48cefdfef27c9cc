// KeyCodec: turns the key parts of a row into row-key (or qualifier) bytes,
// and back into named parts for display.
//
// Text form (the readable `A100|00001|001042`): each part's text form (see
// Value::AppendText), integers zero-padded to the part's width, parts joined
// by the separator. A separator inside a value would make two keys ambiguous,
// so such a row is refused (InvalidArgument naming the part and value) rather
// than silently colliding. A NULL part is refused the same way.
//
// Thread safety: immutable after construction; Encode may be called from
// several threads with distinct output buffers.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/value.h"

namespace widen {

/// One resolved key part: a literal, or a column at `index` of the row.
struct KeyPartPlan {
  std::string name;  // for display and messages ("customer_id")
  bool is_literal = false;
  std::string literal;
  size_t index = 0;  // column index in the row the codec reads
  ValueType type = ValueType::kText;
  int width = 0;  // zero-pad integers to this many digits
};

class KeyCodec {
 public:
  KeyCodec() = default;
  KeyCodec(std::vector<KeyPartPlan> parts, std::string separator)
      : parts_(std::move(parts)), separator_(std::move(separator)) {}

  /// Appends the encoded key of `row` to *out. InvalidArgument (naming the
  /// part and the value) when a part is NULL or holds the separator; *out is
  /// then unspecified.
  Status Encode(const Row& row, std::string* out) const;

  /// Splits an encoded key back into (part name, text) pairs. Returns false
  /// when `key` does not have the codec's shape.
  bool Decode(std::string_view key, std::vector<std::pair<std::string, std::string>>* parts) const;

  const std::vector<KeyPartPlan>& parts() const { return parts_; }
  const std::string& separator() const { return separator_; }

 private:
  std::vector<KeyPartPlan> parts_;
  std::string separator_;
};

}  // namespace widen
