// Test helpers: open a Source and read a table's rows through Source::Scan,
// as the assembler does (the RowStream level, below the mapping).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/value.h"
#include "extract/source.h"

namespace widen::testing {

struct ScannedTable {
  RowSchema schema;
  std::vector<std::vector<Value>> rows;
};

inline std::unique_ptr<Source> OpenSource(const std::string& url, int fetch_rows = 5000) {
  SourceOptions o;
  o.fetch_rows = fetch_rows;
  auto s = Source::Open(url, o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

/// Reads `columns` of `table` ordered by its primary key `key` (keyset paging
/// on MySQL). With `bounded`, through a range over the integer `key` from
/// -32768 on (every row of a table keyed by ids above that; a bound value
/// that fits a smallint), a scan with bound values: PostgreSQL reads it
/// through a cursor, not COPY. A failure is a test failure and an empty
/// result.
inline ScannedTable ScanTable(Source* source, const std::string& table,
                              const std::vector<std::string>& columns,
                              const std::string& key = "id", bool bounded = false) {
  ScannedTable out;
  ScanSpec spec;
  spec.table = table;
  spec.alias = table;
  for (const auto& c : columns) spec.columns.push_back(ColumnExpr{table, c, false});
  spec.unique_key.push_back(ColumnExpr{table, key, false});
  if (bounded) {
    spec.range = ScanRange{ColumnExpr{table, key, false}, Value::Int(-32768), std::nullopt, true};
  }
  auto stream = source->Scan(spec);
  EXPECT_TRUE(stream.ok()) << stream.status().ToString();
  if (!stream.ok()) return out;
  out.schema = (*stream)->schema();
  for (; (*stream)->Valid(); (*stream)->Next()) out.rows.push_back((*stream)->row().values);
  EXPECT_TRUE((*stream)->status().ok()) << (*stream)->status().ToString();
  return out;
}

/// "type:text" of a value, "NULL" for NULL: what the `string` value codec
/// writes, with the widen type in front.
inline std::string Typed(const Value& v) {
  if (v.is_null()) return std::string(ValueTypeName(v.type())) + ":NULL";
  return std::string(ValueTypeName(v.type())) + ":" + v.ToText();
}

/// The column's values in row order, as Typed().
inline std::vector<std::string> Column(const ScannedTable& t, size_t index) {
  std::vector<std::string> out;
  for (const auto& r : t.rows) out.push_back(Typed(r.at(index)));
  return out;
}

inline std::string Hex(std::string_view bytes) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string s;
  for (unsigned char c : bytes) {
    s.push_back(kHex[c >> 4]);
    s.push_back(kHex[c & 15]);
  }
  return s;
}

}  // namespace widen::testing

namespace widen::testing {

/// A ScanSpec of `table` (aliased as itself) by field name.
inline ScanSpec Spec(const std::string& table, std::vector<ColumnExpr> columns,
                     std::vector<ColumnExpr> order_by, std::vector<ColumnExpr> unique_key,
                     std::vector<ColumnExpr> not_null = {}, std::vector<ScanJoin> joins = {}) {
  ScanSpec s;
  s.table = table;
  s.alias = table;
  s.columns = std::move(columns);
  s.order_by = std::move(order_by);
  s.unique_key = std::move(unique_key);
  s.not_null = std::move(not_null);
  s.joins = std::move(joins);
  return s;
}

}  // namespace widen::testing
