// Source: a relational database widen reads from, and RowStream, the rows of
// one query streamed in bounded memory.
//
// A Source is opened from a URL:
//   postgresql://USER[:PASSWORD]@HOST:PORT/DB     (also postgres://)
//   mysql://USER[:PASSWORD]@HOST:PORT/DB          (MySQL or MariaDB)
// It reads inside one read-only transaction on one consistent snapshot, and
// never writes. The SQL it runs is built from a ScanSpec by SelectBuilder
// (extract/select_builder.h) in the engine's SqlDialect: identifiers quoted
// for the engine, values (ranges, bounds, paging keys) bound as parameters,
// never spliced into SQL text. Aggregate queries are its SourceStats
// (extract/source_stats.h).
//
// A RowStream is an iterator like leveldb::Iterator: Valid(), Next(), row(),
// status(). Errors are sticky in status(); row() is a view valid until Next().
//
// Thread safety: a Source and its streams are used by one thread; several
// streams of one Source may be open and advanced in turn (nesting merges them).
// A stream borrows its Source, which must outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/value.h"

namespace widen {

class SourceStats;

/// A column of a table: `alias.column` in a ScanSpec.
struct ColumnExpr {
  std::string alias;
  std::string column;
  /// In order_by: the column holds text, to be sorted as unsigned bytes. In
  /// a MergeLink: the column is compared through its text (see there).
  bool is_text = false;
};

/// A LEFT JOIN of a many-to-one related table.
struct ScanJoin {
  std::string table;
  std::string alias;
  /// (column of an alias already in the scan, column of this joined table).
  std::vector<std::pair<ColumnExpr, std::string>> on;
  /// When not empty, only these columns of the joined table are visible, as
  /// (column, name): the join reads `(SELECT alias.column AS name, ... FROM
  /// table AS alias) AS alias`, so that a `where` naming the scan's own
  /// columns unqualified cannot find them in the joined table too. `on` and
  /// the scan's columns then name the joined columns by `name`; rows an
  /// exclusion of the alias leaves out are left out inside.
  std::vector<std::pair<std::string, std::string>> project = {};

  /// The joined table's column that `name` stands for (`name` itself
  /// without a projection).
  const std::string& ColumnOf(const std::string& name) const {
    for (const auto& [column, shown] : project) {
      if (shown == name) return column;
    }
    return name;
  }
};

/// A half-open range of one column, lo <= column < hi, restricting the rows
/// of a scan: parallel jobs each read one range of the driving table and the
/// matching ranges of its nests. An unset bound is open. The column compares
/// as the database compares it (as ScanSpec::order_by sorts it), and a row
/// whose column is NULL is in no range unless `with_null` (the last job's
/// range takes them). The bounds are typed values of the column's type
/// (integers for job ranges), bound as query parameters, never spliced into
/// SQL text (SelectBuilder).
struct ScanRange {
  ColumnExpr column;
  std::optional<Value> lo;  // REQUIRES: not NULL
  std::optional<Value> hi;  // REQUIRES: not NULL
  bool with_null = false;
};

/// The rows whose `column` equals one of `values` as the database's `=`
/// compares them (in the column's collation): `column IN (...)`, the values
/// bound as query parameters. widen sync rebuilds the target rows of the
/// changed source rows through it.
struct ScanValues {
  ColumnExpr column;
  std::vector<Value> values;  // REQUIRES: non-empty, none NULL
};

/// How a KeyBound compares the row's tuple with its values.
enum class BoundOp : uint8_t {
  kGreater,         // (columns) >  (values)
  kGreaterOrEqual,  // (columns) >= (values)
  kLess,            // (columns) <  (values)
};

/// A bound on a tuple of columns: the rows whose (columns...) compare `op` to
/// (values...), such as (updated_at, id) > ('2024-05-01 10:00:00', 42) for a
/// watermark. Tuples compare lexicographically; each column compares as
/// ScanSpec::order_by sorts it (text with is_text as unsigned bytes, other
/// types natively), and NULL sorts before every value: a NULL in `values`
/// is matched with IS NULL / IS NOT NULL terms, never with `=` or `>`, so
/// rows with NULLs are placed exactly, not dropped (on PostgreSQL, whose
/// ORDER BY puts NULLs last, a scan with a bound orders its keys NULLS FIRST
/// to agree; an empty KeyBound selects every row but orders so: the first
/// page of a scan paged by bounds). Columns listed in ScanSpec::not_null are
/// known not to be NULL. Values are bound as query parameters.
struct KeyBound {
  std::vector<ColumnExpr> columns;
  std::vector<Value> values;  // one per column, of its type (may be NULL)
  BoundOp op = BoundOp::kGreater;
};

/// One side of a nest's `on` (parent columns = child columns) as seen from
/// one of the two scans the transformer merges: the parent rows' scan
/// (`child` false; the peer is the child table) or the child rows' scan
/// (`child` true; the peer holds the parent rows).
///
/// The database's `=` decides which child rows belong to which parent row,
/// whatever the collation, padding or type of the columns. For each `on`
/// pair the source appends to every row a merge key, such that
///   - CompareValues orders the rows' keys as the rows come (see
///     ScanSpec::merge), and
///   - the keys of a child row equal the keys of a parent row exactly when
///     the database's `=` holds between them on every pair.
/// A child row that matches no row of the peer may get NULL keys instead;
/// NULL keys sort first.
struct MergeLink {
  std::string peer_table;  // the other side's table, or
  std::string peer_query;  // the other side's free-form SELECT (a driving `query:`)
  /// (column of this scan, column of the peer), one per `=` of the `on`.
  /// `is_text` marks text-like columns (text, enum, and types read as their
  /// text form), which sources compare through their text.
  std::vector<std::pair<ColumnExpr, std::string>> on;
  bool child = false;
  /// Every pair compares in the database as CompareValues compares the two
  /// columns' values (integers and decimals, one date/time type, booleans,
  /// bytes): a source may use the values themselves as the keys.
  bool by_value = false;
};

/// One leading term of a scan's order (ScanSpec::lead): a column, ascending
/// or descending, NULLs first or last (`nullable` false: the column holds no
/// NULL, either will do). Text columns (`column.is_text`) sort as unsigned
/// bytes, as in order_by.
struct LeadTerm {
  ColumnExpr column;
  bool desc = false;
  bool nulls_first = true;
  bool nullable = true;
};

/// Rows of one table of a scan that count as absent (a soft delete,
/// transform/sync_plan.h): those whose `column` holds `value` as the
/// database's `=` compares them (text in the column's collation). A NULL in
/// the column is not `value`: the row is kept. On the scan's own table
/// (`alias` is ScanSpec::alias) such a row is not read; on a joined table
/// (`alias` is a ScanJoin's) the join finds no row, as if the row were not
/// there: its columns read NULL. The value is bound as a query parameter,
/// never spliced into SQL text (SelectBuilder).
struct ScanExclusion {
  std::string alias;
  std::string column;
  Value value;  // of the column's type; REQUIRES: not NULL
};

/// A query: what to select, from where, in which order.
/// The source tables a run reads, as its plan knows them (ReadsOf,
/// transform/plan.h).
struct SourceReads {
  /// Tables and views the scans name (driving, joined, nested), each once,
  /// as the mapping names them.
  std::vector<std::string> tables;
  /// Some scan runs SQL text from the mapping (a free-form `query`, or a
  /// `where`), which may read tables not in `tables` (a subquery, a
  /// function): only a lock on the whole database covers it.
  bool sql_text = false;
};

struct ScanSpec {
  std::string table;  // driving table (empty when `query` is set)
  std::string query;  // a free-form SELECT read as a derived table named `alias`
  std::string alias;  // its alias in the query
  std::vector<ScanJoin> joins;
  std::vector<ColumnExpr> columns;   // selected, in this order (the stream's schema)
  std::string where;                 // SQL filter from the mapping (trusted text), may be empty
  std::vector<ColumnExpr> not_null;  // rows with NULL in any of these are left out
  /// Rows with a value in any of these are left out: with a joined
  /// table's column, the rows whose join found no row (widen sync
  /// --reconcile finds the rows that joined a deleted row so).
  std::vector<ColumnExpr> is_null;
  /// Terms the rows are ordered by before anything else (the row key's
  /// columns, when the database orders a table's rows in key order:
  /// transform/plan.h KeyOrder). Each term's column must be one of
  /// `columns` (or of a join). Empty: none.
  std::vector<LeadTerm> lead;
  /// Nest links (see MergeLink). The rows come ordered by `lead`, then the
  /// merge keys of merge[0], then of merge[1], ..., then by order_by. Each
  /// row holds the keys after `columns`, link by link (MergeKeyIndexes).
  std::vector<MergeLink> merge;
  /// Ascending order after the merge keys; text sorts as unsigned bytes ("C"
  /// collation) so that the rows can be compared with CompareValues.
  std::vector<ColumnExpr> order_by;
  /// The table's primary key (may be empty). The merge keys and order_by
  /// followed by these columns are a total order of the rows; a source may
  /// use it to read in pages (keyset pagination) instead of one long result,
  /// ordering these columns as the database does (index order).
  std::vector<ColumnExpr> unique_key;
  /// unique_key is not a key the database declares (the table is a view, a
  /// query or has no primary key) but the columns that place each row's
  /// cells (nest link, row key or nested id, version): two rows equal on
  /// them would give the same cells. For messages when two rows are.
  bool unique_key_from_mapping = false;
  /// The rows are read while other scans of the same Source are open and
  /// advanced in turn (a table with nests: its driving and nested scans). A
  /// source that cannot interleave a scan with others (MySQL: a scan that
  /// cannot be read in pages holds the connection) refuses it up front
  /// (InvalidArgument naming the reason) in CheckScan and Scan.
  bool shared = false;
  /// Only the rows in this range (unset: all rows).
  std::optional<ScanRange> range;
  /// Only the rows within this tuple bound (unset: all rows).
  std::optional<KeyBound> bound;
  /// Only the rows whose column holds one of these values (unset: all rows).
  std::optional<ScanValues> any_of;
  /// Rows of the scan's table or of its joined tables that count as absent
  /// (see ScanExclusion); aggregates over the scan (SourceStats) leave them
  /// out too.
  std::vector<ScanExclusion> exclude;
};

/// Where the merge keys of spec.merge[link] are in the rows of `spec`: after
/// the columns and the keys of the links before it, one per `on` pair.
/// REQUIRES: link < spec.merge.size().
std::vector<size_t> MergeKeyIndexes(const ScanSpec& spec, size_t link);

/// One column of a source table, as introspected.
struct SourceColumn {
  std::string name;
  ValueType type;           // of the base type (domains resolved)
  std::string source_type;  // the engine's declared type, e.g. "numeric(10,2)", or a domain's name
  bool nullable = true;
  /// The type the values are stored in: for a column of a PostgreSQL domain
  /// (or a domain over a domain...) the innermost base type with its
  /// modifiers ("numeric(20,0)"); "" when it is source_type itself.
  std::string base_type;
  /// An enum (PostgreSQL, or a domain over one) or MySQL ENUM/SET: its values
  /// are labels, read as text, which the database orders by declaration.
  bool is_enum = false;

  /// base_type, or source_type when there is none.
  const std::string& storage_type() const { return base_type.empty() ? source_type : base_type; }
};

/// The values an integer column's storage type holds, inclusive: smallint
/// -32768..32767, MySQL TINYINT UNSIGNED 0..255, MEDIUMINT -8388608..8388607,
/// BIT(5) 0..31, YEAR 0..2155, PostgreSQL oid 0..4294967295. Names of both
/// engines are understood, with or without a display width or ZEROFILL.
struct IntegerRange {
  int64_t min = 0;
  uint64_t max = 0;
};

/// The range of `column`'s storage type; nullopt when the column is not an
/// integer (kInt, kUInt) or its type name is not one widen knows.
std::optional<IntegerRange> DeclaredIntegerRange(const SourceColumn& column);

/// True when `column` is a floating-point column stored in single precision
/// (PostgreSQL real, MySQL FLOAT in every form: FLOAT(5,2), FLOAT UNSIGNED).
bool IsSinglePrecision(const SourceColumn& column);

/// What a foreign key does to the referencing rows when the referenced row
/// is deleted (its ON DELETE rule).
enum class ForeignKeyAction {
  kNoAction,    // NO ACTION (the default) or RESTRICT: the delete is refused
  kCascade,     // CASCADE: the referencing rows are deleted with it
  kSetNull,     // SET NULL
  kSetDefault,  // SET DEFAULT
};

/// A foreign key of a table (a FOREIGN KEY constraint), as introspected.
struct ForeignKey {
  std::string name;                  // the constraint's name
  std::vector<std::string> columns;  // of the referencing table, in constraint order
  std::string ref_table;
  std::vector<std::string> ref_columns;  // of ref_table, paired with `columns`
  ForeignKeyAction on_delete = ForeignKeyAction::kNoAction;
};

struct SourceTable {
  std::string name;
  std::vector<SourceColumn> columns;
  std::vector<std::string> primary_key;
  std::vector<std::vector<std::string>> unique_keys;  // UNIQUE constraints / indexes
  /// The columns of every index that can serve an ORDER BY (B-tree, the
  /// primary key included), in index order, up to the first column indexed
  /// by a prefix only; `indexes_known` says they were read. Read where a
  /// nested table is paged in its link's order: MySQL/MariaDB base tables
  /// (not views; PostgreSQL sorts each scan once and reads no indexes).
  std::vector<std::vector<std::string>> indexes;
  bool indexes_known = false;
  std::vector<ForeignKey> foreign_keys;
  int64_t estimated_rows = -1;  // from the engine's statistics; -1 = unknown
  /// A view (PostgreSQL: also a materialized view): the database declares no
  /// primary key for it, so nothing is known about which columns are unique.
  bool is_view = false;
  /// A partition (PostgreSQL's declarative partitioning): the partitioned
  /// table it belongs to, whose scans read its rows too; "" = none.
  std::string partition_of;

  /// nullptr when the table has no such column (exact, case-sensitive match).
  const SourceColumn* FindColumn(const std::string& name) const;
};

struct SourceSchema {
  std::vector<SourceTable> tables;
  /// nullptr when absent (exact, case-sensitive match).
  const SourceTable* FindTable(const std::string& name) const;
};

class RowStream {
 public:
  virtual ~RowStream() = default;
  virtual bool Valid() const = 0;
  /// REQUIRES: Valid().
  virtual void Next() = 0;
  /// REQUIRES: Valid(). Valid until Next() or destruction.
  virtual const Row& row() const = 0;
  /// The stream's columns, in ScanSpec::columns order.
  virtual const RowSchema& schema() const = 0;
  /// OK, or the first error (sticky); check after Valid() turns false.
  virtual Status status() const = 0;
};

struct SourceOptions {
  /// Rows fetched per round trip from a server-side cursor.
  int fetch_rows = 5000;
};

class Source {
 public:
  Source();
  virtual ~Source();

  /// Connects and starts the read-only snapshot transaction.
  /// InvalidArgument: malformed or unknown URL scheme. Unavailable: the server
  /// cannot be reached. Unauthenticated: credentials refused. NotFound: no such
  /// database. Messages show the URL with its password masked.
  static Result<std::unique_ptr<Source>> Open(const std::string& url, const SourceOptions& options);

  /// Tables of the connection's current schema (PostgreSQL) or database (MySQL).
  virtual Result<SourceSchema> Introspect() = 0;

  /// The columns a free-form SELECT returns (name "query"; no keys, all
  /// columns nullable). InvalidArgument when the query does not run.
  virtual Result<SourceTable> DescribeQuery(const std::string& sql);

  /// For a table Introspect does not list: PermissionDenied (the server's
  /// words) when the server refuses this user the table — MySQL lists only
  /// the tables a user has a privilege on, and refuses a missing one alike
  /// to a user without a database-wide privilege — else OK (as far as the
  /// server says, it does not exist). The default: OK (PostgreSQL's catalog lists
  /// every table; its privileges are checked with the query).
  virtual Status CheckTableReadable(const std::string& table);

  /// The SELECT this source runs for `spec` (for `plan` and tests): the
  /// first page's on MySQL. Range, bound and exclusion values appear as the dialect's
  /// placeholders (SqlDialect::Placeholder), as the query is sent.
  virtual std::string SelectSql(const ScanSpec& spec) const = 0;

  /// Checks that the query of `spec` would run (names, the `where` text)
  /// without reading rows; the same errors as Scan. The default runs Scan.
  virtual Status CheckScan(const ScanSpec& spec);

  /// Starts streaming `spec`. The stream is positioned on its first row.
  virtual Result<std::unique_ptr<RowStream>> Scan(const ScanSpec& spec) = 0;

  /// The source's aggregate queries (widen lint, job splitting); see
  /// extract/source_stats.h. The default answers every query with
  /// InvalidArgument "... not supported by the <dialect> source". The
  /// returned object is this source's and lives as long as it.
  virtual SourceStats& stats();

  /// Opens `n` more sources on the same database that read the same
  /// snapshot as this one, for parallel jobs: rows read through any of them
  /// agree as if read through one. `reads` says which source tables the run
  /// reads (an engine that must briefly lock them to line the snapshots up
  /// uses it). REQUIRES: no stream of this source is open;
  /// this source's own snapshot may be taken anew (nothing read before it is reused).
  /// PermissionDenied when the engine cannot line the snapshots up for this
  /// user (the message says what to grant); FailedPrecondition from a source
  /// that cannot share its snapshot (the default); the errors of Open
  /// otherwise.
  virtual Result<std::vector<std::unique_ptr<Source>>> OpenSiblings(int n,
                                                                    const SourceReads& reads);

  /// "postgresql" or "mysql".
  virtual std::string dialect() const = 0;

  /// Why a scan ordered by leading terms that no index of its table serves
  /// (ScanSpec::lead: a row key that does not follow the table's keys) would
  /// cost more than the same scan unordered, for the planner's choice of key
  /// order; "" when the database sorts such a scan once (the default:
  /// PostgreSQL reads each scan through one cursor or COPY). MySQL reads
  /// scans in pages by keyset, so each page would sort again.
  virtual std::string LeadOrderLimit() const { return ""; }

 private:
  std::unique_ptr<SourceStats> unsupported_stats_;  // what stats() gives by default
};

/// Where passwords sit in `text` (a URL, a keyword/value connection string,
/// or a command-line argument holding one, such as "--source=URL"), as
/// {offset, length} pairs in bytes, ascending and not overlapping: the
/// user:password@ part of a URL (up to the last '@' before any '?'), and the
/// value of every password= parameter (up to '&' or ' ').
std::vector<std::pair<size_t, size_t>> PasswordSpans(std::string_view text);

/// The URL with any password replaced by "***", for messages: the
/// user:password@ part (up to the last '@'), and password= parameters of a
/// query string or keyword/value connection string.
std::string MaskUrl(const std::string& url);

/// `url` with every password taken out, for text that is kept (a drafted
/// mapping's `source:`): a URL's user:password@ becomes user@, and each
/// password= parameter of its query string (the name percent-decoded, as
/// libpq reads it) is dropped with its '&' (the '?' too when none is left);
/// in a keyword/value connection string ("host=h password='a b' dbname=d")
/// the password entry, quoted value and all, is dropped. Other text is
/// returned as it is.
std::string WithoutPassword(const std::string& url);

/// `message` with `url` and its password(s) replaced by masked text; for
/// messages of libraries that echo what they were given.
std::string ScrubSecrets(std::string message, const std::string& url);

}  // namespace widen
