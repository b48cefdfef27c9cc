// Plan: a mapping resolved against the live source schema — for each target
// table, the queries to run, where each needed column lands in the streamed
// rows, and how keys, qualifiers and values are encoded.
//
// Plan::Make checks everything a mapping refers to before any row is read:
// tables, columns (with "did you mean"), types that must be integers for
// zero-padding, and that nests can be merged. Every error names the mapping's
// file:line:col, the target table and the source table/column.
//
// Thread safety: immutable after Make; plans point into the Mapping they were
// made from, which must outlive them.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "extract/source.h"
#include "mapping/mapping.h"
#include "store/table_descriptor.h"
#include "transform/key_codec.h"

namespace widen {

/// One plain cell: the value at `index` of the driving row.
struct CellPlan {
  size_t index = 0;
  std::string family;
  std::string qualifier;
  NullPolicy on_null = NullPolicy::kOmit;
  std::string column;  // "alias.column", for messages
};

/// One nested child entity.
struct NestPlan {
  const NestSpec* spec = nullptr;
  ScanSpec scan;                   // child rows ordered by child_key
  std::vector<size_t> parent_key;  // indexes into the driving row
  std::vector<size_t> child_key;   // indexes into the child row
  std::string family;
  std::string prefix;  // qualifier = prefix + qualifier codec output
  KeyCodec qualifier;  // over the child row
  std::vector<std::pair<std::string, size_t>> value_columns;  // JSON name -> child index
};

struct TablePlan {
  const TableMapping* mapping = nullptr;
  TableDescriptor descriptor;
  ScanSpec scan;  // driving rows (ordered by the nests' parent key, if any)
  KeyCodec key;   // over the driving row
  std::vector<CellPlan> cells;
  std::vector<NestPlan> nests;
  /// Driving-table primary key (name, index), to name a row in messages.
  std::vector<std::pair<std::string, size_t>> identity;
};

struct Plan {
  std::vector<TablePlan> tables;

  /// Resolves `mapping` against `schema`. InvalidArgument/NotFound with the
  /// mapping location, target table and source table/column.
  static Result<Plan> Make(const Mapping& mapping, const SourceSchema& schema);
};

}  // namespace widen
