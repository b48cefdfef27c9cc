// PostgresDialect: the SqlDialect of PostgreSQL, and how widen's values are
// sent as query parameters. Internal to extract/.
//
//   identifiers   "name", embedded quotes doubled
//   placeholders  $1, $2, ... bound through the extended protocol as text
//                 in the server's input syntax (PgParamText); the server
//                 gives each the type of the column it is compared with
//   text order    expr COLLATE "C" (unsigned bytes)
//   nulls         ORDER BY puts NULLs last: " NULLS FIRST" where bounds need
//   bounds        row values: (a, b) > ($1, $2)
//   merge keys    a child read joined to its parents on the nest's `=`
//                 (docs/types.md, "Reading order and paging")
//
// Thread safety: const; the `bytes_equal` callback is called from the
// thread that builds.
#pragma once

#include <functional>
#include <string>

#include "common/value.h"
#include "extract/sql_dialect.h"

namespace widen::pg_internal {

class PostgresDialect : public SqlDialect {
 public:
  /// True when every `=` of the link compares the bytes of two plain text
  /// columns (text or varchar in a deterministic collation), so that a
  /// child's own values are exact merge keys. Unset: never.
  using BytesEqualFn = std::function<bool(const ScanSpec&, const MergeLink&)>;

  explicit PostgresDialect(BytesEqualFn bytes_equal = nullptr)
      : bytes_equal_(std::move(bytes_equal)) {}

  std::string_view name() const override { return "postgresql"; }
  std::string QuoteIdent(std::string_view name) const override;
  std::string Placeholder(size_t index) const override;
  std::string TextByteOrder(const std::string& expr) const override;
  std::string NullsFirst() const override { return " NULLS FIRST"; }
  bool RowValueBounds() const override { return true; }
  /// `c IS DISTINCT FROM $n`: the parameter takes the column's type, and
  /// compares in its collation.
  std::string NotHolding(const ScanSpec& spec, const ColumnExpr& c,
                         const std::string& placeholder) const override;
  /// `c IN ($1, ...)`: the parameters take the column's type.
  std::string InValues(const ScanSpec& spec, const ColumnExpr& c,
                       const std::vector<std::string>& placeholders) const override;
  /// A child scan (link.child) that is not by_value and not bytes_equal is
  /// LEFT JOINed to the peer on the link and carries the peer's values (NULL
  /// for orphans, ordered NULLS FIRST); text-like keys as `(v)::text`,
  /// ordered COLLATE "C".
  MergeKeys Merge(const ScanSpec& spec, size_t link) const override;

 private:
  BytesEqualFn bytes_equal_;
};

/// `name` as a quoted identifier: "name" with embedded quotes doubled.
std::string QuoteIdent(std::string_view name);

/// A non-NULL value as a parameter's text, in PostgreSQL's input syntax for
/// the value's type: booleans true/false, integers and decimals in decimal,
/// doubles shortest round-trip (NaN, Infinity, -Infinity), bytes as
/// \x + hex, dates YYYY-MM-DD, timestamps YYYY-MM-DD HH:MM:SS[.ffffff] (with
/// +00 for instants; years before 1 as "... BC"; infinity, -infinity),
/// times HH:MM:SS[.ffffff], text-like values as they are.
std::string PgParamText(const Value& value);

}  // namespace widen::pg_internal
