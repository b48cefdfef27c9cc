// Progress line and summary table of a run.
#pragma once

#include <cstdio>
#include <vector>

#include "transform/assembler.h"

namespace widen {

/// A one-line progress display on stderr, rewritten in place; does nothing
/// when disabled (output is not a terminal, or --quiet).
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  void Update(const TableStats& s);
  /// Erases the line (before printing anything else).
  void Clear();

 private:
  bool enabled_;
  bool shown_ = false;
};

/// Prints one line per target table — source rows, rows (row keys
/// written), cells, bytes, seconds, rows/s, rejected — and a total line.
void PrintSummary(const std::vector<TableStats>& stats, std::FILE* out);

/// Prints, per table, what the summary's figures do not show: source rows
/// that gave no row (every mapped value NULL), nested rows without any
/// value, source rows that share a row key, versions beyond VERSIONS,
/// orphans, and the external sort when the keys did not follow the read order.
void PrintTableNotes(const std::vector<TableStats>& stats, std::FILE* out);

}  // namespace widen
