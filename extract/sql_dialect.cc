#include "extract/sql_dialect.h"

namespace widen {

std::string SqlDialect::Column(const ColumnExpr& c) const {
  return QuoteIdent(c.alias) + "." + QuoteIdent(c.column);
}

std::string SqlDialect::SelectColumn(const ScanSpec&, const ColumnExpr& c) const {
  return Column(c);
}

OrderTerm SqlDialect::OrderBy(const ScanSpec&, const ColumnExpr& c) const {
  OrderTerm t;
  t.expr = c.is_text ? TextByteOrder(Column(c)) : Column(c);
  t.column = c;
  return t;
}

OrderTerm SqlDialect::KeyOrder(const ScanSpec&, const ColumnExpr& c) const {
  OrderTerm t;
  t.expr = Column(c);
  t.column = c;
  return t;
}

}  // namespace widen
