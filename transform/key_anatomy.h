// KeyAnatomy: the row key of a planned target table taken apart — each part
// (salt, hash prefix, literals, columns, separators) with its source column,
// encoding, byte offset and size bounds. `widen plan` prints it; `widen lint`
// uses the size bound (long row keys are stored in every cell).
//
// Sizes come from the key types and the source's declared types
// (`varchar(20)` is at most 20 bytes if ASCII; `text` has no bound). They are
// estimates for design review, not guarantees: a UTF-8 character may take up
// to 4 bytes, and the binary string escape adds one byte per 0x00 in a value.
//
// Thread safety: plain values.
#pragma once

#include <string>
#include <vector>

#include "extract/source.h"
#include "transform/key_codec.h"
#include "transform/plan.h"

namespace widen {

/// One piece of a row key.
struct KeyPieceAnatomy {
  enum class Kind { kSalt, kHash, kLiteral, kColumn, kSeparator };
  Kind kind = Kind::kColumn;
  std::string name;         // part name ("customer_id"), "salt", "hash", or the literal
  std::string column;       // source column as "table.column" (kColumn; "" when unknown)
  std::string source_type;  // the source's declared type ("integer"; "" when unknown)
  std::string type;         // key type ("int32", "string"); "" for salt/hash/separator
  std::string encoding;     // how it is written, for people ("zero-padded to 6 digits")
  int offset = -1;          // byte offset in the key when fixed; -1 = varies
  int min_bytes = 0;        // bytes this piece takes at least
  int max_bytes = 0;        // at most; -1 = unbounded
};

struct KeyAnatomy {
  KeyForm form = KeyForm::kText;
  std::string separator;                // text form
  std::vector<KeyPieceAnatomy> pieces;  // in key order
  int min_bytes = 0;
  int max_bytes = 0;    // -1 = unbounded (a part without a declared length)
  std::string compact;  // KeyCodec::Anatomy(): "[salt 1B mod 16][product_code string var+00 01]"

  static const char* KindName(KeyPieceAnatomy::Kind kind);
};

/// Takes apart the row key of `plan`; `schema` gives the declared types of
/// the source columns (parts of a free-form query have unknown bounds).
KeyAnatomy DescribeRowKey(const TablePlan& plan, const SourceSchema& schema);

/// The source column a key part of `plan`'s driving scan reads, or nullptr
/// (a literal, or a column of a free-form query). *table gets its table.
const SourceColumn* KeyPartColumn(const TablePlan& plan, const KeyPartPlan& part,
                                  const SourceSchema& schema, std::string* table = nullptr);

/// Why key part `p` over source column `c` does not sort like its values,
/// or "" when it does (in `text` form when true): decimals, floats,
/// instants, signed times and types kept as text whose text does not sort
/// in the text form; enum labels (which the database orders by declaration)
/// in either. Integers, reversed timestamps and literals give "" (an
/// unpadded integer in a text key is W112's).
std::string KeyOrderProblem(const KeyPartPlan& p, const SourceColumn& c, bool text);

/// The most digits of a fraction of a second the text of a timestamp or
/// time of `source_type` can hold: the declared precision
/// ("timestamp(3) without time zone", MySQL "datetime(6)"), else the
/// engine's default (PostgreSQL's types, which name a time zone: 6; MySQL's
/// DATETIME, TIMESTAMP and TIME: 0); -1 when the type does not say (a
/// query's column known by its type id).
int FractionDigits(const std::string& source_type);

/// Why the text of key part `p` in a text key, where further parts follow
/// it behind `separator`, does not keep the key in the order of its values
/// ("" when it does): its text has no single width (text and bytes,
/// timestamps and times with fractions of a second, bit varying, an
/// integer without `width`), so one value can be the start of another
/// ('a' of 'a b', '...00:00:00' of '...00:00:00.5') and the byte after the
/// shorter one is the separator, not the end of the key: with '|' (0x7C),
/// which sorts after space, '.', digits and letters, the longer value comes
/// first. Integers with a width, reverse timestamps, dates, timestamps and
/// times without fractions, booleans, uuids and other fixed-width types
/// give "". Read from the part's source type (p.value_type, p.source_type).
std::string TextWidthProblem(const KeyPartPlan& p, const std::string& separator);

/// The declared length of a character type ("character varying(20)",
/// "varchar(20)", "char(3)" -> 20, 20, 3); -1 when it has none.
int DeclaredLength(const std::string& source_type);

}  // namespace widen
