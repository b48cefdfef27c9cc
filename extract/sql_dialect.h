// SqlDialect: how one engine spells the parts of the SELECTs widen builds —
// identifier quoting, parameter placeholders, the expression that orders text
// as unsigned bytes, read casts, and how a scan orders and compares its keys
// (nest links in the collation the database's `=` uses). SelectBuilder
// (extract/select_builder.h) assembles a query from these parts; the engines'
// dialects are extract/postgres_dialect_internal.h and
// extract/mysql_dialect_internal.h.
//
// A dialect only writes text: it runs no query. What it needs to know about
// the source's columns (types, collations) is given to it when it is made.
//
// Thread safety: const methods only; safe to share while the data it was
// made from is unchanged.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "extract/source.h"

namespace widen {

/// One term of a scan's order: what the rows are sorted by, and how a bound
/// value is compared with it.
struct OrderTerm {
  /// Sorted by and compared: `"o"."code" COLLATE "C"`.
  std::string expr;
  /// Written after expr in ORDER BY only: "" or " NULLS FIRST".
  std::string suffix;
  /// A parameter as compared with expr, "{}" standing for the placeholder:
  /// "{}", or "CAST({} AS DATETIME(6))" where the engine must be told the type.
  std::string param = "{}";
  /// The column whose value a bound on this term holds (alias empty when it
  /// is `value` instead, an expression).
  ColumnExpr column;
  /// When column.alias is empty: the select expression of the value.
  std::string value;
};

/// The merge keys of one nest link (ScanSpec::merge), one per `on` pair.
struct MergeKeys {
  /// A FROM item appended after the scan's joins ("" when none): PostgreSQL
  /// reads a child joined to its parents on the link.
  std::string join;
  /// The selected merge key of each pair (the rows' merge key values).
  std::vector<std::string> select;
  /// How the rows are ordered by each pair.
  std::vector<OrderTerm> order;
};

class SqlDialect {
 public:
  virtual ~SqlDialect() = default;

  /// "postgresql" or "mysql", as Source::dialect().
  virtual std::string_view name() const = 0;

  /// `name` quoted as an identifier (PostgreSQL "a""b", MySQL `a``b`).
  virtual std::string QuoteIdent(std::string_view name) const = 0;

  /// alias.column, both quoted.
  std::string Column(const ColumnExpr& c) const;

  /// The text standing for parameter `index` (0-based) in a query:
  /// PostgreSQL `$1`, `$2`, ... (the extended protocol binds them);
  /// MySQL `@widen_p1`, ... (session variables, set by a prepared
  /// statement right before the query: see MySqlDialect). A placeholder
  /// may appear several times in one query.
  virtual std::string Placeholder(size_t index) const = 0;

  /// `expr` ordered and compared as the unsigned bytes of its UTF-8 text
  /// (widen's CompareValues order): PostgreSQL `expr COLLATE "C"`, MySQL
  /// CAST(CONVERT(expr USING utf8mb4) AS BINARY).
  virtual std::string TextByteOrder(const std::string& expr) const = 0;

  /// The ORDER BY suffix that puts NULLs first ("" where the engine does
  /// so anyway): PostgreSQL " NULLS FIRST", MySQL "".
  virtual std::string NullsFirst() const = 0;

  /// True when a row-value comparison `(a, b) > ($1, $2)` serves a tuple
  /// bound well (an index range on the tuple): PostgreSQL. Otherwise bounds
  /// are expanded into `(a > ?) OR (a = ? AND b > ?)` with a leading `a >= ?`.
  virtual bool RowValueBounds() const = 0;

  /// The select-list expression reading column `c` of `spec` (read casts:
  /// MySQL widens FLOAT to DOUBLE, whose text is exact).
  virtual std::string SelectColumn(const ScanSpec& spec, const ColumnExpr& c) const;

  /// How spec.order_by (and ranges and KeyBounds) order column `c`: text
  /// (c.is_text) as unsigned bytes, others natively.
  virtual OrderTerm OrderBy(const ScanSpec& spec, const ColumnExpr& c) const;

  /// How a unique key column `c` completes the order for keyset paging: as
  /// the column's index orders it (MySQL: in its own collation).
  virtual OrderTerm KeyOrder(const ScanSpec& spec, const ColumnExpr& c) const;

  /// The predicate that keeps the rows whose column `c` of `spec` does not
  /// hold the value of `placeholder` (ScanExclusion), NULL-safe: a NULL in
  /// the column is kept. PostgreSQL `c IS DISTINCT FROM $1`; MySQL
  /// `NOT (c <=> @widen_p1)`, text compared in the column's collation and
  /// decimals as decimals.
  virtual std::string NotHolding(const ScanSpec& spec, const ColumnExpr& c,
                                 const std::string& placeholder) const = 0;

  /// The predicate that keeps the rows whose column `c` of `spec` equals
  /// one of the `placeholders`' values as the database's `=` compares them
  /// (ScanValues): PostgreSQL `c IN ($1, $2)`, the parameters taking the
  /// column's type; MySQL the same with text in the column's character set
  /// and collation and decimals as decimals.
  virtual std::string InValues(const ScanSpec& spec, const ColumnExpr& c,
                               const std::vector<std::string>& placeholders) const = 0;

  /// The merge keys of spec.merge[link] (MergeLink): such that CompareValues
  /// orders the selected keys as the rows come and the keys of a child row
  /// equal a parent's exactly when the database's `=` holds.
  /// REQUIRES: link < spec.merge.size().
  virtual MergeKeys Merge(const ScanSpec& spec, size_t link) const = 0;
};

}  // namespace widen
