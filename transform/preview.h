// Preview: a dry run of one target table. It runs the assembler's full
// transform (key and value encoding, joins, nesting) over a sample of the
// driving rows, or over all of them, and keeps the cells in memory instead of
// writing them anywhere: the first rows for display, statistics (rows, cells
// per row, key/qualifier/value sizes, bytes, widest rows, salt buckets),
// rows that would be rejected, and key collisions.
//
// A key collision is a cell that would silently replace another: two source
// rows that give the same row key and write the same column at the same
// timestamp (the later one wins in HBase and in the embedded store), or one
// source row that writes the same column twice (two nested children with the
// same id). Rows that share a row key but write different timestamps are
// versions (a `version` column), not collisions; rows that share a key but no
// column are counted as merged rows.
//
// Memory is bounded whatever the table size:
//   - the shown rows, the widest rows, and at most `max_examples` collision
//     and reject examples;
//   - a sample (`sample_rows` > 0) keeps, per target row, its key, source id
//     and column fingerprints, so collisions are found exactly in one pass;
//   - a full run (`sample_rows` == 0) keeps 8 bytes per target row (a 64-bit
//     fingerprint of row key + timestamp). Past `fingerprint_memory_bytes`
//     the fingerprints are sorted and spilled to an anonymous temporary file
//     (tmpfile(3): already unlinked, gone when closed; 8 bytes per row on
//     disk). Fingerprints seen twice are suspects; a second pass over the
//     same snapshot re-checks at most `max_suspects` of them exactly and
//     names both source rows. Beyond that the count is a lower bound
//     (`collisions_exact` is false).
//
// Nothing is written to the target: no store is opened.
//
// Thread safety: one PreviewTable call per thread; the Source is used by it alone.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/cell.h"
#include "common/status.h"
#include "extract/source.h"
#include "transform/assembler.h"
#include "transform/plan.h"

namespace widen {

struct PreviewOptions {
  uint64_t sample_rows = 1000;                   // driving rows read; 0 = all (a full run)
  size_t show_rows = 10;                         // rows whose cells are kept for display
  size_t widest_rows = 5;                        // widest rows kept (by cells, then bytes)
  size_t max_examples = 10;                      // collision and reject examples kept
  size_t fingerprint_memory_bytes = 256u << 20;  // full run: before spilling (8 B per row)
  size_t max_suspects = 1u << 20;                // full run: suspects re-checked exactly
  int64_t timestamp_ms = 0;                      // timestamp of every cell (ms)
  /// The driving table's row estimate (SourceTable::estimated_rows; -1 =
  /// unknown), to extrapolate the bytes of a sample.
  int64_t estimated_rows = -1;
};

/// min/avg/max of a size over rows or cells, and its histogram in
/// powers of two.
struct SizeStats {
  uint64_t count = 0;
  uint64_t min = 0;
  uint64_t max = 0;
  double sum = 0;
  /// log2_buckets[0] counts the values 0; log2_buckets[b] (b >= 1) the
  /// values in [2^(b-1), 2^b) (std::bit_width(v) == b).
  std::array<uint64_t, 65> log2_buckets{};
  void Add(uint64_t v);
  double avg() const { return count == 0 ? 0 : sum / static_cast<double>(count); }
};

struct FamilyStats {
  std::string name;
  uint64_t cells = 0;
  uint64_t bytes = 0;  // row + family + qualifier + value bytes of its cells
};

/// A target row and the source row it came from.
struct PreviewRow {
  std::string key;        // row key bytes
  std::string source_id;  // the driving row's primary key ("order_id=1042")
  uint64_t cells = 0;
  uint64_t bytes = 0;
};

struct KeyCollision {
  std::string row_key;  // bytes
  std::string column;   // "family:qualifier" written twice
  int64_t timestamp_ms = 0;
  std::string first_source;      // primary key of the source row written first
  std::string second_source;     // ... and of the one that replaces it
  bool same_source_row = false;  // both from one source row (nested ids repeat)
};

struct PreviewReject {
  std::string source_id;
  std::string reason;
};

struct TablePreview {
  TableStats run;             // the assembler's counters (first pass)
  uint64_t driving_rows = 0;  // driving rows read
  bool complete = false;      // every driving row was read
  int64_t estimated_rows = -1;
  CellBatch shown;                     // cells of the first rows, sorted in HBase order
  std::vector<PreviewRow> shown_rows;  // those rows, in source order
  SizeStats cells_per_row, row_bytes, key_bytes, qualifier_bytes, value_bytes;
  std::vector<FamilyStats> families;   // in the descriptor's order
  std::vector<PreviewRow> widest;      // most cells first
  std::vector<uint64_t> salt_buckets;  // rows per salt bucket; empty without salt
  /// Bytes of every target row: exact when `complete`, else the sample's
  /// bytes per driving row times the row estimate (-1 when unknown).
  int64_t estimated_total_bytes = -1;

  uint64_t collisions = 0;       // cells that would replace another cell
  bool collisions_exact = true;  // false: more suspects than max_suspects (a lower bound)
  uint64_t merged_rows = 0;      // rows sharing a key with an earlier row, no common column
  /// Distinct row keys of the rows read (fewer than the rows written when
  /// source rows share a key), and cells of a column beyond its family's
  /// VERSIONS (older versions that reads will not return), over every row
  /// read: what a store would count.
  uint64_t row_keys = 0;
  uint64_t beyond_versions = 0;
  std::vector<KeyCollision> collision_examples;
  std::vector<PreviewReject> reject_examples;  // run.rejected counts them all
};

/// Runs the dry run of `plan` on `source` (see above).
Result<TablePreview> PreviewTable(const TablePlan& plan, Source* source,
                                  const PreviewOptions& options);

}  // namespace widen
