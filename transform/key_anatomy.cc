#include "transform/key_anatomy.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include <fmt/format.h>

#include "common/bytes.h"

namespace widen {

namespace {

using Kind = KeyPieceAnatomy::Kind;

bool IsIntKey(KeyType t) {
  return t == KeyType::kInt8 || t == KeyType::kInt16 || t == KeyType::kInt32 ||
         t == KeyType::kInt64 || t == KeyType::kUInt64;
}

// Most characters of an integer of key type `t` in decimal, sign included.
int MaxDigits(KeyType t) {
  switch (t) {
    case KeyType::kInt8:
      return 4;
    case KeyType::kInt16:
      return 6;
    case KeyType::kInt32:
      return 11;
    case KeyType::kUInt64:
      return 20;
    default:
      return 20;
  }
}

// (precision) of "numeric(p,s)" / "decimal(p)"; -1 when not declared.
int DeclaredPrecision(const std::string& t) {
  if (t.rfind("numeric(", 0) != 0 && t.rfind("decimal(", 0) != 0) return -1;
  return std::atoi(t.c_str() + 8);
}

std::string BinaryEncoding(const KeyPartPlan& p) {
  std::string e;
  if (p.reverse) {
    e = "Long.MAX_VALUE - ms, big-endian";
  } else {
    switch (p.type) {
      case KeyType::kString:
      case KeyType::kBytes:
        e = p.width > 0 ? fmt::format("padded with 00 to {} bytes", p.width)
                        : "00 escaped as 00 FF, terminated by 00 01";
        break;
      case KeyType::kInt8:
      case KeyType::kInt16:
      case KeyType::kInt32:
      case KeyType::kInt64:
        e = "big-endian, sign bit flipped";
        break;
      case KeyType::kUInt64:
        e = "big-endian";
        break;
      case KeyType::kFloat32:
      case KeyType::kFloat64:
        e = "IEEE bits, sign-flipped (negatives inverted)";
        break;
      case KeyType::kDecimal:
        e = "sign byte, exponent, digits, 00";
        break;
      case KeyType::kBool:
        e = "00 false, 01 true";
        break;
      case KeyType::kDate:
        e = "days since 1970 as int32, sign bit flipped";
        break;
      case KeyType::kTimestamp:
        e = "ms since 1970 as int64, sign bit flipped";
        break;
      case KeyType::kTime:
        e = "microseconds as int64, sign bit flipped";
        break;
    }
  }
  if (p.null_marker) e += "; NULL = 00, a value = 01 + encoding";
  if (p.desc) e += "; every byte inverted (desc)";
  return e;
}

// Bounds of a binary part's bytes.
void BinaryBounds(const KeyPartPlan& p, const SourceColumn* c, int* min, int* max) {
  const int fixed = KeyTypeBytes(p.type);
  if ((p.type == KeyType::kString || p.type == KeyType::kBytes) && p.width > 0) {
    *min = *max = p.width;
  } else if (fixed > 0) {
    *min = *max = fixed;
  } else if (p.type == KeyType::kDecimal) {
    const int prec = c == nullptr ? -1 : DeclaredPrecision(c->source_type);
    *min = 1;
    *max = prec < 0 ? -1 : 1 + 4 + prec + 1;
  } else {
    const int n = c == nullptr ? -1 : DeclaredLength(c->source_type);
    *min = 2;
    *max = n < 0 ? -1 : n + 2;
  }
  if (p.null_marker) {
    *min = 1;
    if (*max >= 0) *max += 1;
  }
}

// Bounds of a text part's characters.
void TextBounds(const KeyPartPlan& p, const SourceColumn* c, int* min, int* max,
                std::string* encoding) {
  if (p.reverse) {
    *min = *max = 19;
    *encoding = "Long.MAX_VALUE - ms, 19 digits";
    return;
  }
  const bool integer = c != nullptr ? IsIntegerType(c->type) : IsIntKey(p.type);
  if (integer) {
    const int digits = MaxDigits(p.type);
    *min = std::max(1, p.width);
    *max = std::max(p.width, digits);
    *encoding = p.width > 0 ? fmt::format("decimal, zero-padded to {} digits", p.width)
                            : "decimal, not padded (sorts as text: 10 < 9)";
    return;
  }
  *encoding = "text";
  switch (p.type) {
    case KeyType::kTimestamp:
      *min = 19;
      *max = 26;
      *encoding = "YYYY-MM-DD HH:MM:SS[.ffffff]";
      return;
    case KeyType::kDate:
      *min = *max = 10;
      *encoding = "YYYY-MM-DD";
      return;
    case KeyType::kTime:
      *min = 8;
      *max = 15;
      return;
    case KeyType::kBool:
      *min = 4;
      *max = 5;
      return;
    case KeyType::kFloat32:
    case KeyType::kFloat64:
      *min = 1;
      *max = 24;
      return;
    case KeyType::kDecimal: {
      const int prec = c == nullptr ? -1 : DeclaredPrecision(c->source_type);
      *min = 1;
      *max = prec < 0 ? -1 : prec + 2;
      return;
    }
    default: {
      const int n = c == nullptr ? -1 : DeclaredLength(c->source_type);
      *min = 0;
      *max = n;
      *encoding = "UTF-8 text";
      return;
    }
  }
}

}  // namespace

const char* KeyAnatomy::KindName(KeyPieceAnatomy::Kind kind) {
  switch (kind) {
    case Kind::kSalt:
      return "salt";
    case Kind::kHash:
      return "hash";
    case Kind::kLiteral:
      return "literal";
    case Kind::kColumn:
      return "column";
    case Kind::kSeparator:
      return "separator";
  }
  return "?";
}

int DeclaredLength(const std::string& t) {
  size_t open = t.find('(');
  if (open == std::string::npos) return -1;
  const std::string_view base(t.data(), open);
  if (base != "character varying" && base != "varchar" && base != "character" && base != "char" &&
      base != "bit varying" && base != "varbinary" && base != "binary") {
    return -1;
  }
  if (open + 1 >= t.size() || !std::isdigit(static_cast<unsigned char>(t[open + 1]))) return -1;
  return std::atoi(t.c_str() + open + 1);
}

const SourceColumn* KeyPartColumn(const TablePlan& plan, const KeyPartPlan& part,
                                  const SourceSchema& schema, std::string* table) {
  if (part.is_literal || part.index >= plan.scan.columns.size()) return nullptr;
  const ColumnExpr& e = plan.scan.columns[part.index];
  std::string name;
  if (e.alias == plan.scan.alias) {
    name = plan.scan.table;  // empty for a free-form query
  } else {
    for (const auto& j : plan.scan.joins) {
      if (j.alias == e.alias) name = j.table;
    }
  }
  if (name.empty()) return nullptr;
  const SourceTable* t = schema.FindTable(name);
  if (t == nullptr) return nullptr;
  if (table != nullptr) *table = t->name;
  return t->FindColumn(e.column);
}

KeyAnatomy DescribeRowKey(const TablePlan& plan, const SourceSchema& schema) {
  const KeyCodec& k = plan.key;
  KeyAnatomy a;
  a.form = k.form();
  a.separator = k.separator();
  a.compact = k.Anatomy();
  const bool text = k.form() == KeyForm::kText;
  auto separator = [&] {
    if (!text || k.separator().empty()) return;
    KeyPieceAnatomy s;
    s.kind = Kind::kSeparator;
    s.name = ToStringBinary(k.separator());
    s.encoding = "separator";
    s.min_bytes = s.max_bytes = static_cast<int>(k.separator().size());
    a.pieces.push_back(std::move(s));
  };
  if (k.salt().size > 0) {
    KeyPieceAnatomy s;
    s.kind = Kind::kSalt;
    s.name = "salt";
    if (text) {
      const int digits = static_cast<int>(std::to_string(k.salt().size - 1).size());
      s.encoding = fmt::format("FNV-1a-32 mod {}, {} decimal digits", k.salt().size, digits);
      s.min_bytes = s.max_bytes = digits;
    } else {
      s.encoding = fmt::format("FNV-1a-32 mod {}, one byte", k.salt().size);
      s.min_bytes = s.max_bytes = 1;
    }
    a.pieces.push_back(std::move(s));
    separator();
  }
  if (k.hash_prefix().size > 0) {
    KeyPieceAnatomy s;
    s.kind = Kind::kHash;
    s.name = "hash";
    const int n = k.hash_prefix().size;
    s.encoding = text ? fmt::format("first {} bytes of FNV-1a-64, {} hex digits", n, 2 * n)
                      : fmt::format("first {} bytes of FNV-1a-64", n);
    s.min_bytes = s.max_bytes = text ? 2 * n : n;
    a.pieces.push_back(std::move(s));
    separator();
  }
  for (size_t i = 0; i < k.parts().size(); ++i) {
    const KeyPartPlan& p = k.parts()[i];
    if (i > 0) separator();
    KeyPieceAnatomy s;
    if (p.is_literal) {
      s.kind = Kind::kLiteral;
      s.name = ToStringBinary(p.literal);
      s.encoding = "constant bytes";
      s.min_bytes = s.max_bytes = static_cast<int>(p.literal.size());
      a.pieces.push_back(std::move(s));
      continue;
    }
    std::string table;
    const SourceColumn* c = KeyPartColumn(plan, p, schema, &table);
    s.kind = Kind::kColumn;
    s.name = p.name;
    if (c != nullptr) {
      s.column = table + "." + c->name;
      s.source_type = c->source_type;
    }
    s.type = std::string(KeyTypeName(p.type));
    if (text) {
      TextBounds(p, c, &s.min_bytes, &s.max_bytes, &s.encoding);
    } else {
      BinaryBounds(p, c, &s.min_bytes, &s.max_bytes);
      s.encoding = BinaryEncoding(p);
    }
    a.pieces.push_back(std::move(s));
  }
  // Offsets hold while every earlier piece has a fixed size.
  int offset = 0;
  for (auto& s : a.pieces) {
    s.offset = offset;
    a.min_bytes += s.min_bytes;
    if (a.max_bytes >= 0) a.max_bytes = s.max_bytes < 0 ? -1 : a.max_bytes + s.max_bytes;
    if (offset >= 0) offset = s.min_bytes == s.max_bytes ? offset + s.min_bytes : -1;
  }
  return a;
}

int FractionDigits(const std::string& source_type) {
  std::string t = source_type;
  for (char& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const std::string word = t.substr(0, t.find_first_of("( "));
  if (word != "timestamp" && word != "datetime" && word != "time" && word != "timetz" &&
      word != "timestamptz") {
    return -1;
  }
  const size_t open = t.find('(');
  if (open != std::string::npos) {
    int digits = 0;
    size_t i = open + 1;
    for (; i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])); ++i) {
      digits = digits * 10 + (t[i] - '0');
    }
    return i > open + 1 ? digits : -1;
  }
  // PostgreSQL names its types with the time zone (format_type), and
  // defaults to microseconds; MySQL's default precision is whole seconds.
  if (t.find("time zone") != std::string::npos || word == "timetz" || word == "timestamptz") {
    return 6;
  }
  return 0;
}

std::string TextWidthProblem(const KeyPartPlan& p, const std::string& separator) {
  if (p.is_literal || p.reverse) return "";
  const std::string sep = separator.empty() ? "the next part" : "'" + separator + "'";
  // `shorter` starts `longer`, whose next byte meets the separator.
  auto starts = [&](const char* shorter, const char* longer) {
    const std::string_view l(longer);
    const char next = l[std::string_view(shorter).size()];
    const bool after = !separator.empty() &&
                       static_cast<unsigned char>(separator[0]) > static_cast<unsigned char>(next);
    return fmt::format(
        "'{}' ({}) has no fixed width in a text key and another part follows it: one value can "
        "start another ('{}' starts '{}'), and the shorter one's separator {} then meets the "
        "longer one's '{}'{}",
        p.name, p.source_type.empty() ? ValueTypeName(p.value_type) : p.source_type, shorter,
        longer, sep, next,
        after ? ", which it sorts after: the longer value comes first"
              : ": a value with a byte below the separator there sorts the wrong way");
  };
  switch (p.value_type) {
    case ValueType::kInt:
    case ValueType::kUInt:
      return p.width > 0 ? "" : starts("1", "10");
    case ValueType::kBool:
    case ValueType::kDate:
      return "";
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz:
      return FractionDigits(p.source_type) == 0
                 ? ""
                 : starts("2020-01-01 00:00:00", "2020-01-01 00:00:00.5");
    case ValueType::kTime:
      return FractionDigits(p.source_type) == 0 ? "" : starts("12:00:00", "12:00:00.5");
    case ValueType::kOther: {
      std::string t = p.source_type;
      for (char& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      const std::string word = t.substr(0, t.find_first_of("( "));
      if (word == "uuid" || word == "macaddr" || word == "macaddr8" ||
          (word == "bit" && t.find("varying") == std::string::npos)) {
        return "";
      }
      return starts("10", "101");
    }
    default:
      return starts("a", "a b");
  }
}

std::string KeyOrderProblem(const KeyPartPlan& p, const SourceColumn& c, bool text) {
  if (p.is_literal || p.reverse || IsIntegerType(c.type)) return "";
  if (c.is_enum) {
    return fmt::format(
        "{} is an enum: the key sorts its labels as text, the database's ORDER BY in the "
        "order the labels were declared",
        c.name);
  }
  if (!text) return "";
  switch (c.type) {
    case ValueType::kDecimal:
    case ValueType::kFloat:
      return fmt::format(
          "{} is {}: numbers as text do not sort numerically (10.5 < 9.5, "
          "-1 < -2)",
          c.name, c.source_type);
    case ValueType::kTimestampTz:
      return fmt::format(
          "{} is {}: instants as text end in 'Z', which sorts after a fraction's '.', so a "
          "whole second sorts after its fractions (...:00Z > ...:00.5Z)",
          c.name, c.source_type);
    case ValueType::kTime:
      if (c.storage_type().find("time zone") != std::string::npos) return "";
      return fmt::format(
          "{} is {}: times that can be negative or beyond 99 hours do not sort "
          "as text (-00:00:02 > -00:00:01, 100:00:00 < 99:00:00)",
          c.name, c.source_type);
    case ValueType::kOther:
    case ValueType::kJson:
      if (TextSortsLikeValues(c)) return "";
      return fmt::format("{} is {}, whose text form does not sort like its values", c.name,
                         c.storage_type());
    default:
      return "";
  }
}

}  // namespace widen
