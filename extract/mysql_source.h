// MySqlSource: a Source (and its SourceStats) on MySQL or MariaDB through
// MySQL Connector/C++ 1.1 (the JDBC-style API), opened from
// `mysql://USER[:PASSWORD]@HOST[:PORT]/DB` (or `mariadb://`). The password comes from the URL, else
// the environment variable WIDEN_SOURCE_PASSWORD, else MYSQL_PWD, else the option files' [client]
// or [widen] group (~/.my.cnf); it never appears in a message (URLs are printed masked).
//
// Session settings are pinned right after connecting, so results never depend
// on the server's defaults (docs/types.md):
//   SET NAMES utf8mb4                 every text column arrives as UTF-8
//                                     (latin1 and other charsets converted)
//   time_zone = '+00:00'              TIMESTAMP values read as UTC instants
//   sql_mode = 'STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'
//                                     no PAD_CHAR_TO_FULL_LENGTH, ANSI_QUOTES,
//                                     PIPES_AS_CONCAT or NO_BACKSLASH_ESCAPES
//                                     changing values or a mapping's `where`;
//                                     no NO_ZERO_DATE, so zero dates compare
//   sql_select_limit = 18446744073709551615, net_write_timeout = 3600,
//   wait_timeout = 604800 (idle parallel-job connections stay open),
//   max_sort_length = 8388608 (ORDER BY compares whole keys),
//   max_statement_time / max_execution_time = 0 where the server has it
// then one snapshot for the whole run:
//   SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ;
//   START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY
// widen never writes to the source.
//
// Queries are built by SelectBuilder with the MySQL dialect
// (extract/mysql_dialect_internal.h). Values are read with the text protocol: each value exactly as
// the server prints it (DECIMAL digits, zero dates, TIME beyond 24 h), decoded by the column's
// information_schema type. FLOAT columns are selected as CAST(x AS DOUBLE), the float widened
// exactly (the text protocol would print FLOAT with 6 digits). ScanSpec::order_by text sorts by
// CAST(CONVERT(x USING utf8mb4) AS BINARY): unsigned UTF-8 bytes, the order
// of widen's CompareValues, whatever the column's charset or collation. Nest
// links (ScanSpec::merge) order text in the collation the server's `=` uses
// for the two columns and carry WEIGHT_STRING(x AS CHAR(n)) in it as the
// merge key (docs/types.md, "Reading order and paging"); unique keys are
// ordered and compared in the column's own collation, as its index orders them.
//
// Streaming: several streams are open at once on the one connection (nesting
// merges a parent stream with child streams), so a scan with a unique key
// (ScanSpec::unique_key, the table's primary key) reads in pages of
// `fetch_rows` rows by keyset pagination:
//   ... WHERE <filters> AND k1 >= @p1 AND ((k1 > @p1) OR (k1 = @p1 AND k2 >= @p2))
//   ORDER BY k1, k2 LIMIT n
// where the @ variables are set from the previous page's last row by a
// prepared `SET @widen_p1 = ?, ...` (values are bound, never spliced into SQL
// text; range and bound values the same way). All
// pages run inside the snapshot transaction, so together they are one
// consistent read; memory holds one page per stream. A table without a
// primary key pages by its narrowest UNIQUE index of NOT NULL columns. A scan
// without any unique key (or whose key has a type that cannot be compared
// exactly) is one unbuffered result: only one such stream may be open at a
// time and no other query can run while it is (Scan returns
// FailedPrecondition), until it has been read to its end or destroyed. The
// previous page's last row is read again (">=" on the last key column), so a
// join that repeats rows is reported (InvalidArgument) instead of losing rows
// at a page edge.
//
// Thread safety: not thread safe; one thread uses the source and its streams.
// The first Open in a process initialises Connector/C++'s driver singleton,
// which is not thread safe either.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "extract/source.h"
#include "extract/source_stats.h"

namespace widen {

class MySqlSource : public Source, public SourceStats {
 public:
  /// Connects, pins the session and starts the snapshot. InvalidArgument:
  /// malformed URL. Unavailable: the server cannot be reached.
  /// Unauthenticated: credentials refused. NotFound: no such database.
  static Result<std::unique_ptr<MySqlSource>> Open(const std::string& url,
                                                   const SourceOptions& options);
  ~MySqlSource() override;

  /// Base tables and views of the URL's database, from information_schema.
  /// estimated_rows is InnoDB's estimate (TABLE_ROWS), -1 for views.
  Result<SourceSchema> Introspect() override;
  /// The columns of a free-form SELECT, from the server's result metadata
  /// (MariaDB's JSON columns are text there). InvalidArgument when it does not run.
  Result<SourceTable> DescribeQuery(const std::string& sql) override;
  /// Reads no row: `SELECT 1 FROM table LIMIT 0`; PermissionDenied on
  /// ER_TABLEACCESS_DENIED_ERROR (1142) or ER_COLUMNACCESS_DENIED_ERROR (1143),
  /// which MySQL also gives for a missing table to a user without a
  /// database-wide privilege (the message says both).
  Status CheckTableReadable(const std::string& table) override;
  /// EXPLAINs the first page's SELECT: names and the `where` text are checked
  /// without reading rows.
  Status CheckScan(const ScanSpec& spec) override;
  /// The first page's SELECT (later pages add the keyset predicate).
  std::string SelectSql(const ScanSpec& spec) const override;
  /// REQUIRES: every stream of this source is used by one thread.
  /// FailedPrecondition while an unbuffered stream is open (see above).
  Result<std::unique_ptr<RowStream>> Scan(const ScanSpec& spec) override;
  SourceStats& stats() override { return *this; }
  /// One GROUP BY on the server; text groups by its UTF-8 bytes.
  Result<std::vector<GroupCount>> LargestLinkGroups(const ScanSpec& spec,
                                                    const std::vector<size_t>& links,
                                                    int limit) override;
  Result<std::vector<GroupCount>> LargestGroups(const ScanSpec& spec,
                                                const std::vector<ColumnExpr>& group_by,
                                                int limit) override;
  /// One aggregate query on the server; text min/max by UTF-8 bytes.
  Result<ColumnSummary> SummarizeColumn(const ScanSpec& spec, const ColumnExpr& column) override;
  /// MAX() alone, which an index on the column answers.
  Result<Value> HighestValue(const ScanSpec& spec, const ColumnExpr& column) override;
  /// MySQL cannot share a snapshot between connections, so a further
  /// connection holds writes back for a moment (FLUSH TABLES WITH READ LOCK,
  /// or when RELOAD is not granted, LOCK TABLES `reads.tables` READ) while
  /// this connection and `n` new ones each start START TRANSACTION WITH
  /// CONSISTENT SNAPSHOT, READ ONLY. With `reads.sql_text` (SQL text from
  /// the mapping, which may read tables not named) only the global lock
  /// will do. The lock request waits at most 10 s (lock_wait_timeout;
  /// other sessions' writes queue behind it meanwhile): Unavailable after.
  Result<std::vector<std::unique_ptr<Source>>> OpenSiblings(int n,
                                                            const SourceReads& reads) override;
  std::string dialect() const override { return "mysql"; }
  /// Scans are read in pages by keyset: an order no index serves would be
  /// sorted again for every page (and a nested scan's order through its
  /// parent's table is never an index's).
  std::string LeadOrderLimit() const override {
    return "MySQL reads each scan in pages by its primary key; ordering the rows by the row "
           "key's columns instead, which no index serves, would sort the table again for every "
           "page";
  }

  /// Quotes an identifier: `name` with embedded backticks doubled.
  static std::string QuoteIdent(const std::string& name);

  struct Session;  // the connection, the schema cache; internal

 private:
  MySqlSource(std::string url, SourceOptions options);

  // Scan, with `inner_params` bound to the placeholders of spec.query (a
  // query built around another scan's; spec itself then has none).
  Result<std::unique_ptr<RowStream>> ScanWith(const ScanSpec& spec,
                                              std::vector<Value> inner_params);

  std::string url_;
  SourceOptions options_;
  std::unique_ptr<Session> session_;
};

}  // namespace widen
