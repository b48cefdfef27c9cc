// MySqlDialect: the SqlDialect of MySQL and MariaDB, with what it knows of
// the source's columns (MySqlCatalog). Internal to extract/.
//
//   identifiers   `name`, embedded backticks doubled
//   placeholders  @widen_p1, @widen_p2, ...: session variables, set right
//                 before the query by one prepared `SET @widen_p1 = ?, ...`
//                 whose parameters are bound with Connector/C++'s setters
//                 (MySqlBindingFor). The query itself then runs on the text
//                 protocol, whose values are the server's exact text
//                 (DECIMAL digits, zero dates, TIME beyond 24 h), and may
//                 stream unbuffered, which a prepared SELECT cannot.
//   parameters    compared through a cast to the column's type
//                 (MySqlParamForm): CAST(@v AS DATETIME(6)),
//                 CAST(@v AS BINARY) for text as bytes, CONVERT(@v USING cs)
//                 COLLATE c for text in a collation
//   text order    CAST(CONVERT(expr USING utf8mb4) AS BINARY) (unsigned bytes)
//   read casts    FLOAT as CAST(x AS DOUBLE): the float widened exactly
//   nulls         ORDER BY puts NULLs first
//   bounds        expanded: (a > ?) OR (a = ? AND b > ?), led by a >= ?
//   merge keys    WEIGHT_STRING in the collation of the link's `=`
//                 (docs/types.md, "Reading order and paging")
//
// Thread safety: const; the catalog must not change while a dialect reads it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/value.h"
#include "extract/mysql_text_internal.h"
#include "extract/sql_dialect.h"

namespace widen::mysql_internal {

/// What the reader knows about one source column.
struct ColumnMeta {
  ColumnKind kind = ColumnKind::kOther;
  int precision = 0;  // DECIMAL(p, s)
  int scale = 0;
  std::string source_type;
  bool nullable = true;
  /// Text columns: character set and collation ("" when unknown), the
  /// declared length in characters (-1 when unknown), and whether it is an
  /// ENUM or SET (which ORDER BY sorts by the members' numbers, not as text).
  std::string charset;
  std::string collation;
  int64_t max_chars = -1;
  bool enum_or_set = false;
};

/// One side of a nest's `=`: a column of a table or of a free-form query.
struct LinkSide {
  std::string table;
  std::string query;
  std::string column;
  /// Identifies the side in MySqlCatalog maps.
  std::string Id() const { return (query.empty() ? "t:" + table : "q:" + query) + '\x1f' + column; }
};

/// The side of column `c` of a scan: its table (the driving one or a joined
/// one, by alias) or the scan's free-form query.
LinkSide SideOf(const ScanSpec& spec, const ColumnExpr& c);

/// How the server's `=` compares two text columns of a nest: in the
/// collation it derives for them (which the merge keys use), padded to
/// `pad_chars` characters; `error` when it cannot compare them.
struct TextCompare {
  std::string collation;
  std::string charset;
  int64_t pad_chars = 1;
  std::string error;
};

/// The columns of the source's tables and queries, as the reader found them.
struct MySqlCatalog {
  std::map<std::string, std::map<std::string, ColumnMeta>> tables;   // table -> column -> meta
  std::map<std::string, std::map<std::string, ColumnMeta>> queries;  // query -> column -> meta
  /// LinkSide::Id() of the parent + '\x1e' + of the child -> how they compare.
  std::map<std::string, TextCompare> text_compare;

  /// nullptr when unknown.
  const ColumnMeta* Find(const std::string& table, const std::string& column) const;
  const ColumnMeta* Meta(const LinkSide& side) const;
  /// Column `c` of `spec` (by its alias: the driving table or query, or a
  /// joined table); nullptr when unknown.
  const ColumnMeta* Of(const ScanSpec& spec, const ColumnExpr& c) const;
};

/// How a merge key of one `on` pair is selected and ordered, and the kind of
/// the selected value.
struct MergeForm {
  std::string select;
  OrderTerm order;
  ColumnKind kind = ColumnKind::kOther;
  std::string error;  // the pair cannot be compared (a message), else ""
};

class MySqlDialect : public SqlDialect {
 public:
  /// `catalog` must outlive the dialect.
  explicit MySqlDialect(const MySqlCatalog& catalog) : catalog_(catalog) {}

  std::string_view name() const override { return "mysql"; }
  std::string QuoteIdent(std::string_view name) const override;
  std::string Placeholder(size_t index) const override;
  std::string TextByteOrder(const std::string& expr) const override;
  std::string NullsFirst() const override { return ""; }
  bool RowValueBounds() const override { return false; }
  std::string SelectColumn(const ScanSpec& spec, const ColumnExpr& c) const override;
  /// Text and JSON columns as unsigned bytes; others natively.
  OrderTerm OrderBy(const ScanSpec& spec, const ColumnExpr& c) const override;
  /// Text in the column's own collation (an index on it serves the order).
  OrderTerm KeyOrder(const ScanSpec& spec, const ColumnExpr& c) const override;
  /// `NOT (c <=> @widen_pN)`, the variable in the column's character set
  /// and collation for text (a user variable's own collation could not be
  /// mixed with the column's) and as DECIMAL(65,30) for decimals (a string
  /// would compare as a double).
  std::string NotHolding(const ScanSpec& spec, const ColumnExpr& c,
                         const std::string& placeholder) const override;
  /// `c IN (...)`, each parameter as NotHolding writes it.
  std::string InValues(const ScanSpec& spec, const ColumnExpr& c,
                       const std::vector<std::string>& placeholders) const override;
  MergeKeys Merge(const ScanSpec& spec, size_t link) const override;

  /// The merge key of pair `pair` of spec.merge[link].
  MergeForm MergeKey(const ScanSpec& spec, size_t link, size_t pair) const;
  /// The meta of column `c` of `spec`; for an unknown column, a text (when
  /// c.is_text) or other column, and *known false.
  ColumnMeta MetaOf(const ScanSpec& spec, const ColumnExpr& c, bool* known) const;

 private:
  const MySqlCatalog& catalog_;
};

/// The form a parameter takes to be compared exactly with a column of
/// `meta`'s type, "{}" standing for the placeholder.
std::string MySqlParamForm(const ColumnMeta& meta);

/// How a non-NULL value is bound to a prepared statement's parameter.
struct MySqlBinding {
  enum class Setter : uint8_t { kInt64, kUInt64, kDouble, kString };
  Setter setter = Setter::kString;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;
};

/// Booleans and integers as integers, doubles as doubles, dates and times
/// as the server's text (timestamps with a time zone in UTC, the session's
/// zone), decimals, text, bytes and other values as their bytes.
MySqlBinding MySqlBindingFor(const Value& value);

}  // namespace widen::mysql_internal
