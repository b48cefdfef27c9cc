// The mapping model: what a mapping YAML file says, as plain structs, with the
// place in the file each part came from so later checks (against the source
// schema, the design linter) can name file:line:col.
//
// load_mapping() parses and checks the file on its own (syntax, known fields,
// required fields, value ranges, references between parts of the mapping).
// Every choice among fixed words (key forms and types, codecs and their Java
// types, nest layouts, family options, NULL rules) is parsed here once into
// an enum (mapping/encoding.h, common/family_options.h); nothing later
// re-reads the mapping's strings.
// Checks against the live source schema happen in transform/ (Plan), which
// needs a source connection.
//
// Thread safety: plain values; read-only after loading.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/family_options.h"
#include "common/status.h"
#include "mapping/encoding.h"

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
  std::string prefix;  // qualifier prefix, e.g. "o"
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

/// One target table.
struct TableMapping {
  SourceLocation loc;
  std::string name;  // "namespace:table" or "table"
  std::vector<FamilySpec> families;
  std::string from;   // driving source table (or the alias of `query`)
  std::string where;  // optional SQL filter on the driving table
  std::string query;  // free-form SELECT instead of a table (then `from` names it)
  ColumnRef version;  // default timestamp of the row's cells (a column); unset = the run's
  KeySpec key;
  std::vector<JoinSpec> joins;
  std::vector<ColumnSpec> columns;
  std::vector<NestSpec> nests;
};

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

  /// NotFound-free lookup; nullptr when absent.
  const TableMapping* FindTable(const std::string& name) const;
};

/// Reads and checks a mapping file. InvalidArgument for every problem, with
/// "file:line:col: what is wrong (expected ...)"; NotFound if the file is missing.
/// `${VAR}` and `${VAR:-default}` in `source` and `target` are expanded from
/// the environment; an unset variable without default is recorded in
/// source_problem/target_problem rather than failing the load.
Result<Mapping> load_mapping(const std::string& path);

/// Same, from YAML text; `file_name` is used in messages.
Result<Mapping> ParseMapping(const std::string& yaml_text, const std::string& file_name);

}  // namespace widen
