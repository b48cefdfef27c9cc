// The mapping model: what a mapping YAML file says, as plain structs, with the
// place in the file each part came from so later checks (against the source
// schema, the design linter) can name file:line:col.
//
// load_mapping() parses and checks the file on its own (syntax, known fields,
// required fields, value ranges, references between parts of the mapping).
// Every choice among fixed words (key forms and types, codecs and their Java
// types, nest layouts, family options, NULL rules, sync modes) is parsed
// here once into an enum (mapping/encoding.h, common/family_options.h, and
// below); durations into numbers; nothing later re-reads the mapping's
// strings.
// Checks against the live source schema happen in transform/ (Plan), which
// needs a source connection.
//
// Thread safety: plain values; read-only after loading.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/enum_names.h"
#include "common/family_options.h"
#include "common/status.h"
#include "mapping/encoding.h"
#include "mapping/naming_policy.h"

namespace widen {

/// Where a mapping element was written: "mapping.yaml:12:7" (1-based).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string ToString() const;
};

/// A reference to a source column: `column` of the driving table, or
/// `alias.column` of a joined table.
struct ColumnRef {
  std::string alias;  // empty = the table the element belongs to
  std::string column;
  /// "alias.column" or "column".
  std::string ToString() const { return alias.empty() ? column : alias + "." + column; }
  /// "alias.column" (split at the first '.') or "column".
  static ColumnRef Parse(const std::string& text);
};

/// What to do when a value needed for a row key or qualifier is NULL.
enum class KeyNullRule {
  kReject,  // the row is rejected with a reason (default)
  kMarker,  // binary keys: a marker byte that sorts before every value
};

/// One part of a row key or of a nested cell's qualifier.
struct KeyPart {
  SourceLocation loc;
  ColumnRef column;  // the source column (unset for a literal)
  bool is_literal = false;
  std::string literal;  // constant bytes for a literal part
  /// Text form: zero-pad integers to this many digits (0 = as is).
  /// Binary form: fixed width in bytes of a string/bytes part (0 = terminated).
  int width = 0;
  std::optional<KeyType> type;  // `type`; unset = from the source column (DefaultKeyType)
  bool desc = false;            // binary form: invert the part (descending order)
  bool reverse = false;         // timestamps: Long.MAX_VALUE - ms (newest first)
  KeyNullRule on_null = KeyNullRule::kReject;
  bool on_null_given = false;  // on_null was written in the mapping
};

/// A salt byte or hash prefix in front of a key.
struct KeyHashSpec {
  SourceLocation loc;
  int size = 0;                    // salt: buckets (2..256); hash_prefix: bytes (1..8); 0 = none
  std::vector<std::string> parts;  // names of the key parts hashed; empty = all column parts
};

/// The row key: parts joined into bytes.
struct KeySpec {
  SourceLocation loc;
  KeyForm form = KeyForm::kText;
  std::string separator = "|";  // text form: between parts; never inside a value
  std::vector<KeyPart> parts;
  KeyHashSpec salt;
  KeyHashSpec hash_prefix;
};

/// How a NULL source value is written to a cell.
enum class NullPolicy {
  kOmit,    // no cell (HBase's natural sparse form; default)
  kEmpty,   // a cell with an empty value
  kReject,  // the row is rejected with a reason
};

/// One source column written to one cell.
struct ColumnSpec {
  SourceLocation loc;
  ColumnRef column;
  std::string family;
  std::string qualifier;  // defaults to the column's name
  SourceLocation to_loc;  // of the `to` value (the entry's place when there is none)
  NullPolicy on_null = NullPolicy::kOmit;
  ValueCodecKind codec = ValueCodecKind::kString;
  HBaseType type = HBaseType::kAuto;  // hbase codec: the Java type; kAuto = from the source
  ColumnRef version;  // the cell's timestamp comes from this column (unset = the table's)
};

/// Many-to-one join (denormalization): attributes of the referenced row are
/// copied into this row. Rows without a match keep NULLs (a LEFT JOIN).
struct JoinSpec {
  SourceLocation loc;
  std::string table;  // source table
  std::string alias;  // how columns refer to it; defaults to `table`
  /// (this side's column, the joined table's column) pairs, ANDed.
  std::vector<std::pair<ColumnRef, std::string>> on;
};

/// One attribute of a nested child's value (an entry of a nest's `columns`).
struct NestValue {
  SourceLocation loc;  // where the entry is written
  /// "column" of the child or "alias.column" of one of the nest's joins.
  ColumnRef column;
  /// The attribute's name (`as`): its JSON key, or its qualifier suffix
  /// with layout cells; "" = the column's own name (without the alias).
  std::string name;
  /// The attribute's name as written to the cell: `name`, else the column's.
  const std::string& attribute() const { return name.empty() ? column.column : name; }
};

/// One-to-many nesting: each child row becomes one cell of the parent's row,
/// qualifier = prefix + encoded id parts, value = JSON object of the child's
/// other attributes.
struct NestSpec {
  SourceLocation loc;
  std::string table;  // child source table
  /// (parent column, child column) pairs, ANDed.
  std::vector<std::pair<std::string, std::string>> on;
  std::string family;
  std::string prefix;         // qualifier prefix, e.g. "o"
  SourceLocation prefix_loc;  // of the `prefix` value (the nest's place when there is none)
  /// Many-to-one joins from the child row (LEFT JOINs, as a table's): their
  /// columns are named `alias.column` in id, values and version.
  std::vector<JoinSpec> joins;
  std::vector<KeyPart> id;   // qualifier parts after the prefix (child or joined columns)
  std::string id_separator;  // between id parts (text form); default none for one part, "|" else
  /// The attributes of the value, in order; empty = every child column but
  /// the on, id and version columns.
  std::vector<NestValue> values;
  std::string where;                      // optional SQL filter on the child table
  KeyForm form = KeyForm::kText;          // how the id parts are encoded
  NestLayout layout = NestLayout::kJson;  // one JSON cell, a cell per attribute, or a bare value
  std::string attribute_separator = ".";  // layout cells: qualifier = prefix+id+sep+attribute
  ColumnRef version;  // child column (or a join's alias.column) giving the timestamp; unset = none
  std::vector<NestSpec> nests;  // the child's own children (second level)
};

/// One column family of a target table.
struct FamilySpec {
  SourceLocation loc;
  std::string name;
  int versions = 1;
  int min_versions = 0;
  int64_t ttl_seconds = 0;  // 0 = forever
  Compression compression = Compression::kNone;
  BloomFilter bloom_filter = BloomFilter::kRow;
  int block_size_bytes = 65536;
  bool in_memory = false;
  DataBlockEncoding data_block_encoding = DataBlockEncoding::kNone;
};

/// A column an access pattern names, and where it is written.
struct AccessColumn {
  SourceLocation loc;
  ColumnRef column;   // a column of the driving table, or `alias.column` of a join
  bool desc = false;  // in `order`: "column desc" (newest or largest first)
};

/// A read a target table is designed to serve (`access:`): the rows whose
/// `by` columns equal given values, returned in `order`. `widen plan`
/// proves each against the row key (transform/access_plan.h): a Get, one
/// prefix scan, a scan of every salt bucket, or not served.
struct AccessPattern {
  SourceLocation loc;
  std::string name;                 // unique within the mapping
  std::vector<AccessColumn> by;     // equality columns; may be empty (a scan of the whole table)
  std::vector<AccessColumn> order;  // the order the rows are wanted in; empty = any
};

/// How the mapping asks the planner to bring a table's cells to the store in
/// row key order (transform/plan.h KeyOrder; docs/mapping.md `key_order`).
enum class KeyOrderChoice {
  kAuto,      // "auto": the planner's choice (the default)
  kDatabase,  // "database": the database orders the rows by the key's columns where it can
  kSort,      // "sort": widen sorts the cells in temporary runs, whatever the key
};

/// "auto", "database", "sort".
const NameTable<KeyOrderChoice>& KeyOrderChoiceNames();

/// One target table.
struct TableMapping {
  SourceLocation loc;
  std::string name;         // "namespace:table" or "table"
  SourceLocation name_loc;  // of the `name` value
  std::vector<FamilySpec> families;
  std::string from;   // driving source table (or the alias of `query`)
  std::string where;  // optional SQL filter on the driving table
  std::string query;  // free-form SELECT instead of a table (then `from` names it)
  ColumnRef version;  // default timestamp of the row's cells (a column); unset = the run's
  KeyOrderChoice key_order = KeyOrderChoice::kAuto;
  KeySpec key;
  std::vector<JoinSpec> joins;
  std::vector<ColumnSpec> columns;
  std::vector<NestSpec> nests;
  std::vector<AccessPattern> access;  // the reads the table is designed to serve
};

/// How `widen sync` finds the changes of one source table
/// (docs/mapping.md, "Sync").
enum class SyncMode {
  kDigest,     // "digest": every row is read and compared by digest (the default)
  kWatermark,  // "watermark": the rows whose (watermark, tiebreak) passed the last run's
};

/// "digest", "watermark".
const NameTable<SyncMode>& SyncModeNames();

/// A column of a sync entry's own source table, and where it is written.
struct SyncColumn {
  SourceLocation loc;
  std::string name;
};

/// The unit of a lookback.
enum class LookbackUnit {
  kMilliseconds,  // a duration ("5m"): for timestamp watermarks
  kValues,        // a bare number ("500"): watermark values, for integer watermarks
};

/// How far behind the last recorded watermark each run reads again, so that
/// a row written by a transaction that committed after a later one (with an
/// older watermark) is still found.
struct SyncLookback {
  SourceLocation loc;  // of the `lookback` field (line 0 when not given)
  bool given = false;  // false: the default for the watermark's type applies
  LookbackUnit unit = LookbackUnit::kMilliseconds;
  int64_t amount = 0;  // >= 0, in `unit`
};

/// The lookback of a timestamp watermark when none is given: 10 minutes.
/// It must outlast the longest transaction that writes the table (a row's
/// watermark is set when its transaction writes it, but the row is seen only
/// once it commits), plus the clock skew between the writers that set it;
/// 10 minutes covers batch transactions of several minutes, at the cost of
/// reading the last 10 minutes of changes again on each run.
inline constexpr int64_t kDefaultLookbackMs = 10 * 60 * 1000;
/// The lookback of an integer watermark when none is given: 10,000 values,
/// what a sequence hands out in 10 minutes at about 16 writes a second.
inline constexpr int64_t kDefaultLookbackValues = 10000;
/// The longest lookback a mapping may give, either unit: 365 days, or as
/// many values (reading more than that again each run is digest mode's job).
inline constexpr int64_t kMaxLookbackMs = int64_t{365} * 86'400'000;
inline constexpr int64_t kMaxLookbackValues = kMaxLookbackMs;

/// A soft delete: a row whose `column` holds `value` counts as deleted.
struct SoftDeleteSpec {
  SourceLocation loc;  // of the `soft` map
  SyncColumn column;
  std::string value;  // as written; the planner parses it for the column's type
  SourceLocation value_loc;
};

/// One entry of `sync:`: how the changes of one source table are found.
/// The fields after `mode` apply to watermark mode only (the loader refuses
/// them with digest mode).
struct SyncSpec {
  SourceLocation loc;
  std::string table;  // a source table the mapping reads (driving, joined or nested)
  SyncMode mode = SyncMode::kDigest;
  /// The column whose value every insert and update of a row raises: a
  /// timestamp (with or without time zone, MySQL DATETIME or TIMESTAMP) or
  /// an ever-increasing integer.
  SyncColumn watermark;
  std::vector<SyncColumn> tiebreak;  // orders rows of one watermark; empty: the primary key
  SourceLocation tiebreak_loc;       // of the `tiebreak` field (line 0 when not given)
  SyncLookback lookback;
  std::optional<SoftDeleteSpec> soft_delete;  // `deletes: {soft: ...}`
  bool reconcile = false;                     // `deletes: {reconcile: true}`
};

/// Reads a duration: one or more <whole number><unit>, units ms, s, m, h, d
/// from the largest down, each at most once ("500ms", "30s", "5m", "1h30m",
/// "2d") into milliseconds. False for any other text (a bare number, a
/// space, a sign) or a duration longer than kMaxLookbackMs.
bool ParseDurationMs(std::string_view text, int64_t* ms);

/// The shortest text ParseDurationMs reads back as `ms`: "10m", "1h30m",
/// "1500ms", "0s". REQUIRES: ms >= 0.
std::string DurationText(int64_t ms);

/// A whole mapping file.
struct Mapping {
  std::string file;        // path as given
  std::string source_url;  // after ${VAR} expansion ("" when source_problem is set)
  std::string target_url;  // after ${VAR} expansion ("" when absent or target_problem is set)
  /// Why source_url/target_url could not be expanded (an unset variable),
  /// with file:line:col; OK otherwise. Reported only when the URL is needed.
  Status source_problem;
  Status target_problem;
  /// Timestamp of every cell, ms since the epoch; unset = the run's start time.
  std::optional<int64_t> timestamp_ms;
  std::vector<TableMapping> tables;
  /// The `sync:` section, in file order; a source table has at most one
  /// entry, and one without an entry is synced in digest mode.
  std::vector<SyncSpec> sync;
  /// The `policy:` section: house rules for names that `widen lint`
  /// checks (mapping/naming_policy.h); the default when absent.
  NamingPolicy policy;

  /// NotFound-free lookup; nullptr when absent.
  const TableMapping* FindTable(const std::string& name) const;
  /// The sync entry of source table `source_table`; nullptr when it has none.
  const SyncSpec* FindSync(const std::string& source_table) const;
  /// The source tables the target tables read — driving (not a free-form
  /// query's name), joined and nested at any depth, with their joins — each
  /// once, in order of first use.
  std::vector<std::string> SourceTables() const;
};

/// Reads and checks a mapping file. InvalidArgument for every problem, with
/// "file:line:col: what is wrong (expected ...)"; NotFound if the file is missing.
/// `${VAR}` and `${VAR:-default}` in `source` and `target` are expanded from
/// the environment; an unset variable without default is recorded in
/// source_problem/target_problem rather than failing the load.
/// Reading is bounded: a file over 1 MiB, lists and maps over 64 deep, over
/// 100,000 YAML nodes (aliases expanded) or 1,000 aliases is InvalidArgument
/// naming the limit (docs/mapping.md, "Limits").
Result<Mapping> load_mapping(const std::string& path);

/// The largest mapping text load_mapping and ParseMapping read: 1 MiB.
inline constexpr uint64_t kMaxMappingTextBytes = 1 << 20;

/// Same, from YAML text (with the same limits); `file_name` is used in messages.
Result<Mapping> ParseMapping(const std::string& yaml_text, const std::string& file_name);

}  // namespace widen
