// Plan: a mapping resolved against the live source schema — for each target
// table, the queries to run, where each needed column lands in the streamed
// rows, and how keys, qualifiers, values and timestamps are encoded.
//
// Plan::Make checks everything a mapping refers to before any row is read:
// tables, columns (with "did you mean"), types (a width on a non-integer, an
// unknown key or codec type), nullable key columns without an on_null rule,
// that joins are many-to-one and nest parent columns a key of their table
// (from the schema: a view's or query's rows are checked as they are read),
// and that nests can be merged (link columns of types widen compares like the
// database); and the mapping's `sync:` entries of the tables read
// (transform/sync_plan.h). Every scan leaves out the rows a soft delete of
// that section marks, on its own table and its joined tables
// (ScanSpec::exclude), so that every command reads the source as if they
// were not there. Scans of a table with nests are marked
// ScanSpec::shared; a table without a declared key gets the columns that
// place its cells as its ScanSpec::unique_key. It chooses how each table's
// cells reach the store in row key order (KeyOrder): the scans' own order,
// the database's ORDER BY of the key's columns (ScanSpec::lead; nested scans
// joined to the driving table as widen_lead), or widen's external sort.
// Every error names the mapping's file:line:col, the target table and the
// source table/column.
//
// Thread safety: immutable after Make; plans point into the Mapping they were
// made from, which must outlive them.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/table_descriptor.h"
#include "extract/source.h"
#include "mapping/mapping.h"
#include "transform/key_codec.h"
#include "transform/sync_plan.h"
#include "transform/value_codec.h"

namespace widen {

/// The metadata key under which a table's row key layout is stored.
inline constexpr char kKeyLayoutMetadata[] = "widen.key";

/// One plain cell: the value at `index` of the driving row.
struct CellPlan {
  size_t index = 0;
  std::string family;
  std::string qualifier;
  NullPolicy on_null = NullPolicy::kOmit;
  ValueCodecPlan codec;
  int version_index = -1;  // column giving the cell's timestamp; -1 = the row's
  std::string column;      // "alias.column", for messages
};

/// How one merge key compares in the order the rows come: descending or
/// not, NULLs first or last.
struct KeyDirection {
  bool desc = false;
  bool nulls_first = true;
};

/// One nested child entity (and, recursively, its own children).
struct NestPlan {
  const NestSpec* spec = nullptr;
  /// Child rows; scan.merge[0] links them to the top-level parent rows (a
  /// second-level child's scan.merge[1] to its parent child rows), the
  /// links after it (if any) to this nest's children.
  ScanSpec scan;
  /// Merge keys (MergeKeyIndexes) compared to match a child row to its
  /// parent row: indexes into the parent's row and into the child row. With
  /// KeyOrder::kDatabase they start with the `lead` key columns of the
  /// driving row (the child's from its join to the driving table).
  std::vector<size_t> parent_key;
  std::vector<size_t> child_key;
  /// How many of the keys are lead columns (never NULL-checked: a NULL key
  /// part is a value), and how each key compares in the order the rows
  /// come (shorter than the keys: the rest ascend, NULLs first).
  size_t lead = 0;
  std::vector<KeyDirection> key_order;
  /// The `on` columns' own values, for messages: into the parent's row, into
  /// the child row (a second-level nest: its parent's link first).
  std::vector<size_t> parent_values;
  std::vector<size_t> child_values;
  std::string family;
  std::string prefix;  // qualifier = parent's qualifier + prefix + id
  KeyCodec qualifier;  // the id parts, over the child row
  std::vector<std::pair<std::string, size_t>> value_columns;  // attribute -> child index
  NestLayout layout = NestLayout::kJson;  // a JSON cell, a cell per attribute, or a bare value
  std::string attribute_separator;
  int version_index = -1;          // child column giving the cells' timestamp
  std::vector<NestPlan> children;  // second level
  std::vector<size_t> link_key;    // the first child's parent_key (into the child row)
  /// The child table's primary key (name, index into the child row), to
  /// name a nested row in messages and rejects; empty for a view.
  std::vector<std::pair<std::string, size_t>> identity;
};

/// How a table's cells reach the store in row key order, which keeps the
/// store from rewriting them (shown by `widen plan`).
enum class KeyOrder : uint8_t {
  /// The scans' own order (the nest link, MySQL's primary key) is the row
  /// key's order.
  kRead,
  /// The database orders the driving rows by the key's columns (ScanSpec::
  /// lead), and each nested scan the same way through its parent's table.
  kDatabase,
  /// widen sorts the cells in temporary runs and merges them into the store
  /// (common/cell_runs.h): a salt or hash prefix, a part whose bytes do not
  /// sort like its column, or a source that cannot order the scans cheaply.
  kSort,
};

/// "read", "database" or "sort".
std::string_view KeyOrderName(KeyOrder order);

/// The planner's choice of KeyOrder, and what decided it (for people).
struct KeyOrderPlan {
  KeyOrder how = KeyOrder::kSort;
  std::string why;
};

struct TablePlan {
  const TableMapping* mapping = nullptr;
  TableDescriptor descriptor;
  ScanSpec scan;  // driving rows (scan.merge: one link per nest, ordering the rows)
  KeyCodec key;   // over the driving row
  std::vector<CellPlan> cells;
  std::vector<NestPlan> nests;
  int version_index = -1;  // column giving the row's default cell timestamp
  /// Driving-table primary key (name, index), to name a row in messages.
  std::vector<std::pair<std::string, size_t>> identity;
  /// How the cells reach the store in key order. Whatever it says, a sink
  /// checks the order it gets and sorts cells that do not follow it.
  KeyOrderPlan order;
};

struct Plan {
  std::vector<TablePlan> tables;
  /// How `widen sync` finds the changes of each source table `tables` read.
  SyncPlan sync;

  /// Resolves `mapping` against `schema`; `source` describes free-form
  /// queries (may be null when no table uses one). InvalidArgument/NotFound
  /// with the mapping location, target table and source table/column.
  static Result<Plan> Make(const Mapping& mapping, const SourceSchema& schema,
                           Source* source = nullptr);
};

/// Calls `fn` with each scan of `table` — the driving scan, then every
/// nest's at any depth (depth first) — and the mapping place it comes from;
/// stops at the first non-OK Status and returns it.
Status ForEachScan(const TablePlan& table,
                   const std::function<Status(const ScanSpec&, const SourceLocation&)>& fn);

/// The source tables `tables`' scans read (driving, joined, nested, each
/// named once, in order of first use), and whether any scan runs SQL text
/// from the mapping (a free-form query or a `where`), which may read more.
SourceReads ReadsOf(const std::vector<const TablePlan*>& tables);

/// How a target table reads one source table.
struct SourceUse {
  std::string table;  // the source table; "" for a free-form query (driving)
  bool driving = false;
  bool joined = false;  // by a join of the table or of a nest
  bool nested = false;  // as a nest, at any depth
};

/// The source tables `table` reads, each once, in order of first use: its
/// driving table (or free-form query), joins, nests and their joins.
std::vector<SourceUse> SourceUses(const TablePlan& table);

/// Names a driving source row for messages: "order_id=1042" from the
/// table's primary key, else the row key parts' values.
std::string SourceRowId(const TablePlan& plan, const Row& row);

/// The default binary key type of a source column: from its storage type
/// (domains resolved), the narrowest that holds every value ("smallint" ->
/// int16, "integer" -> int32, MySQL "int unsigned" -> int64, "bigint
/// unsigned" -> uint64, "real" / MySQL FLOAT -> float, ...).
KeyType DefaultKeyType(const SourceColumn& column);

/// Whether a column of a type widen keeps as text (other, JSON) sorts like
/// its values as a string key part: uuid (fixed-width lower-case hex), bit
/// strings ('0'/'1', a prefix first) and MAC addresses do; interval ('P-1D'
/// after 'P10D'), inet, money, timetz, arrays, ranges, geometry, JSON and the
/// rest do not (the planner refuses them as binary parts without `type`).
/// True for every other type (its binary encoding orders its values).
bool TextSortsLikeValues(const SourceColumn& column);

/// The default Java type of the hbase value codec for a source column: from
/// its storage type, the narrowest that holds every value ("smallint" ->
/// short, "integer" -> int, "bigint" -> long, MySQL "mediumint unsigned" ->
/// int, "real" / MySQL FLOAT(5,2) -> float, numeric -> bigdecimal, dates and
/// times -> long).
HBaseType DefaultHBaseType(const SourceColumn& column);

}  // namespace widen
