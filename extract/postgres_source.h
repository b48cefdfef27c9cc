// PostgresSource: a Source (and its SourceStats) on PostgreSQL through
// libpqxx. Its SQL is built by SelectBuilder with the PostgreSQL dialect
// (extract/postgres_dialect_internal.h); range and bound values are bound
// parameters of the extended protocol. Errors are coded by their SQLSTATE
// (extract/pg_errors_internal.h), connection errors included.
//
// The password comes from the URL, else WIDEN_SOURCE_PASSWORD, else libpq's
// own PGPASSWORD and ~/.pgpass; messages show the URL masked.
//
// Session settings are pinned so results never depend on server defaults:
// client_encoding UTF8, TimeZone UTC, DateStyle ISO, bytea_output hex,
// extra_float_digits 3 (shortest exact floats), IntervalStyle iso_8601,
// lc_monetary C, idle_in_transaction_session_timeout 0 (docs/types.md). Domains read as their base
// type, enum types as text (their labels). All reads happen in one `REPEATABLE READ READ ONLY`
// transaction (one snapshot for the whole run). A scan without bound values streams through
// `COPY (SELECT ...) TO STDOUT` (text format) on a reader connection whose transaction imports
// that snapshot (pg_export_snapshot / SET TRANSACTION SNAPSHOT), received by a thread of its own
// (extract/pg_copy_internal.h) so that the server's work overlaps widen's; reader connections are
// kept for the next scan. A scan with bound values (COPY takes no parameters), or every scan once
// a reader connection could not be opened, streams through a server-side cursor, `fetch_rows` at
// a time. Memory does not grow with table size either way. Text ORDER BY uses COLLATE "C"
// (bytewise). A nest's child rows (ScanSpec::merge) are read LEFT JOINed to the parent table on
// the nest's `=` and carry the parent's values as merge keys, so that the database matches them
// whatever the collation (docs/types.md, "Reading order and paging").
//
// Thread safety: not thread safe; one thread uses the source and its streams (a COPY
// stream's own thread uses only its reader connection).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "extract/source.h"
#include "extract/source_stats.h"

namespace widen {

namespace pg_internal {
class PostgresDialect;
struct ReaderConn;
}  // namespace pg_internal

class PostgresSource : public Source, public SourceStats {
 public:
  static Result<std::unique_ptr<PostgresSource>> Open(const std::string& url,
                                                      const SourceOptions& options);
  ~PostgresSource() override;

  Result<SourceSchema> Introspect() override;
  Result<SourceTable> DescribeQuery(const std::string& sql) override;
  /// Runs EXPLAIN on the query (inside a savepoint), reading no rows.
  Status CheckScan(const ScanSpec& spec) override;
  std::string SelectSql(const ScanSpec& spec) const override;
  Result<std::unique_ptr<RowStream>> Scan(const ScanSpec& spec) override;
  SourceStats& stats() override { return *this; }
  Result<std::vector<GroupCount>> LargestLinkGroups(const ScanSpec& spec,
                                                    const std::vector<size_t>& links,
                                                    int limit) override;
  Result<std::vector<GroupCount>> LargestGroups(const ScanSpec& spec,
                                                const std::vector<ColumnExpr>& group_by,
                                                int limit) override;
  Result<ColumnSummary> SummarizeColumn(const ScanSpec& spec, const ColumnExpr& column) override;
  /// max() alone, which an index on the column answers.
  Result<Value> HighestValue(const ScanSpec& spec, const ColumnExpr& column) override;
  /// Exports this transaction's snapshot (pg_export_snapshot) and opens `n`
  /// connections whose REPEATABLE READ transactions import it (SET
  /// TRANSACTION SNAPSHOT), so all read the same data.
  Result<std::vector<std::unique_ptr<Source>>> OpenSiblings(int n,
                                                            const SourceReads& reads) override;
  std::string dialect() const override { return "postgresql"; }

  /// Quotes an identifier: "name" with embedded quotes doubled.
  static std::string QuoteIdent(const std::string& name);

 private:
  PostgresSource(std::string url, SourceOptions options);

  // InvalidArgument naming both columns when `spec`'s SQL compares text of
  // two different collations, neither the default, which PostgreSQL cannot
  // do (a nest link, a second-level nest's join to its parent, a join).
  Status CheckLinkCollations(const ScanSpec& spec);

  // A reader connection on this transaction's snapshot: an idle one of the
  // pool, else a new one (the snapshot exported on first use).
  Result<pg_internal::ReaderConn> OpenReader();

  // How ScanWith reads the rows.
  enum class ReadPath {
    kBulk,  // COPY on a reader connection of the snapshot (else a cursor)
    kFew,   // a cursor on this transaction: a query of a few rows (an
            // aggregate), which a reader connection would only slow down
  };

  // Scan, with `inner_params` bound to the placeholders of spec.query (a
  // query built around another scan's; spec itself then has none).
  Result<std::unique_ptr<RowStream>> ScanWith(const ScanSpec& spec, std::vector<Value> inner_params,
                                              ReadPath path = ReadPath::kBulk);

  std::string url_;
  SourceOptions options_;
  struct Session;  // the libpqxx connection and its transaction
  std::unique_ptr<Session> session_;
  std::unique_ptr<pg_internal::PostgresDialect> dialect_;
  int next_cursor_ = 0;
};

}  // namespace widen
