// SelectBuilder: one builder, for every engine, of the SELECT that reads a
// ScanSpec, as SQL text plus the values bound to its placeholders.
//
//   SELECT <columns>, <merge keys>[, <key values>]
//   FROM <table> AS <alias> | (<query>) AS <alias>
//   LEFT JOIN <joined table> AS <alias> ON ... [AND <exclude>] [<merge link joins>]
//   WHERE (<where>) AND <not_null> IS NOT NULL AND <is_null> IS NULL AND <exclude>
//         AND <range> AND <any_of> AND <bound> AND <after>
//   ORDER BY <lead>, <merge keys>, <order_by>[, <page key>]
//   [LIMIT n]
//
// Predicates on values are written with placeholders and the values returned
// in BuiltQuery::params, never spliced into the text:
//   range   (c >= $1 AND c < $2), ((c >= $1) OR c IS NULL) with with_null
//   any_of  ScanSpec::any_of: c IN ($1, ..., $n), the column as it is (the
//           database's `=`, in its collation)
//   bound   ScanSpec::bound, a KeyBound: (a, b) > ($1, $2) where the dialect
//           compares row values and no value is NULL, else the expansion
//           a >= $1 AND ((a > $1) OR (a = $1 AND b > $2)), with IS NULL /
//           IS NOT NULL terms for NULL values (NULL sorts first); with a
//           bound (even an empty one) or pages, ORDER BY puts NULLs first
//           (PostgreSQL: NULLS FIRST on terms that may be NULL)
//   exclude ScanSpec::exclude, rows that count as absent: on the scan's own
//           alias a WHERE term, on a joined alias a term of the join's ON
//           (the join then finds no row); SqlDialect::NotHolding, NULL-safe
//   after   SelectOptions::after, keyset paging: the rows at or after the
//           previous page's last row in the scan's order, the same expansion
//           over every ORDER BY term
// Lead terms (ScanSpec::lead) say their direction and where NULLs go
// (NULLS FIRST / LAST only where the engine would put them elsewhere).
// Identifiers are quoted by the dialect; `where` and free-form `query` text
// come from the mapping and are written as they are.
//
// Thread safety: const; a builder may be shared while its dialect lives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/value.h"
#include "extract/source.h"
#include "extract/sql_dialect.h"

namespace widen {

/// How to build beyond the ScanSpec: paging.
struct SelectOptions {
  /// Columns that complete the order to a total order (the table's primary
  /// key), appended to ORDER BY as SqlDialect::KeyOrder terms unless already
  /// there. Non-empty means the query reads one page (see `limit`).
  std::vector<ColumnExpr> page_key;
  /// Select the value of every ORDER BY term (BuiltQuery::keys), adding a
  /// hidden column where it is not selected already. Implied by page_key.
  bool select_key_values = false;
  /// Only the rows at or after this position in the scan's order: one value
  /// per BuiltQuery::keys term (as a build with the same spec and options
  /// but no `after` lists them), the previous page's last row.
  std::optional<std::vector<Value>> after;
  /// LIMIT (0: none).
  int64_t limit = 0;
};

/// One column of the query's result.
struct SelectItem {
  enum class Role : uint8_t {
    kColumn,    // ScanSpec::columns[i]
    kMergeKey,  // the merge key of pair `pair` of ScanSpec::merge[link]
    kKeyValue,  // hidden: the value of an ORDER BY term, for paging
  };
  std::string expr;
  Role role = Role::kColumn;
  ColumnExpr column;  // kColumn; kKeyValue when the value is a column
  size_t link = 0;    // kMergeKey
  size_t pair = 0;    // kMergeKey
};

/// One ORDER BY term and where its value is in the result.
struct KeyTerm {
  OrderTerm term;
  size_t item = 0;  // index into BuiltQuery::items (valid with select_key_values)
};

/// A query ready to run: send `sql` with `params` bound to its placeholders.
struct BuiltQuery {
  std::string sql;
  /// The values of the placeholders, parameter 0 first (never NULL).
  std::vector<Value> params;
  /// The result's columns: ScanSpec::columns, then the merge keys (the
  /// `visible` ones, the stream's row), then hidden key values.
  std::vector<SelectItem> items;
  size_t visible = 0;
  /// The ORDER BY terms, in order (duplicates dropped).
  std::vector<KeyTerm> keys;
  /// Pieces of `sql`, for queries built around the scan (aggregates):
  /// " FROM ... LEFT JOIN ..." and " WHERE ..." ("" when no predicate).
  std::string from;
  std::string where;
};

class SelectBuilder {
 public:
  /// `dialect` must outlive the builder.
  explicit SelectBuilder(const SqlDialect& dialect) : dialect_(dialect) {}

  /// The query reading `spec`. REQUIRES: spec.bound has one value per
  /// column; options.after, when set, one value per key term.
  BuiltQuery Build(const ScanSpec& spec, const SelectOptions& options = {}) const;

 private:
  const SqlDialect& dialect_;
};

}  // namespace widen
