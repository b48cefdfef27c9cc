#include "cmd/report.h"

#include <chrono>

#include <fmt/format.h>

namespace widen {

namespace {

std::string Bytes(uint64_t b) {
  if (b < 1024) return fmt::format("{} B", b);
  if (b < 1024 * 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  if (b < 1024ull * 1024 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
}

}  // namespace

void ProgressLine::Update(const TableStats& s) {
  if (!enabled_) return;
  std::fprintf(stderr, "\r\033[K%s: %llu rows, %llu cells", s.table.c_str(),
               static_cast<unsigned long long>(s.rows), static_cast<unsigned long long>(s.cells));
  std::fflush(stderr);
  shown_ = true;
}

void ProgressLine::Clear() {
  if (!shown_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

void PrintSummary(const std::vector<TableStats>& stats, std::FILE* out) {
  std::string s =
      fmt::format("{:<32} {:>12} {:>10} {:>11} {:>11} {:>8} {:>10} {:>8}\n", "table", "source rows",
                  "rows", "cells", "bytes", "seconds", "rows/s", "rejected");
  TableStats total;
  total.table = "total";
  for (const auto& t : stats) {
    total.source_rows += t.source_rows;
    total.row_keys += t.row_keys;
    total.cells += t.cells;
    total.bytes += t.bytes;
    total.seconds += t.seconds;
    total.rejected += t.rejected;
  }
  std::vector<TableStats> lines = stats;
  if (stats.size() > 1) lines.push_back(total);
  for (const auto& t : lines) {
    double rate = t.seconds > 0 ? t.row_keys / t.seconds : 0;
    s += fmt::format("{:<32} {:>12} {:>10} {:>11} {:>11} {:>8.2f} {:>10.0f} {:>8}\n", t.table,
                     t.source_rows, t.row_keys, t.cells, Bytes(t.bytes), t.seconds, rate,
                     t.rejected);
  }
  std::fputs(s.c_str(), out);
}

void PrintTableNotes(const std::vector<TableStats>& stats, std::FILE* out) {
  std::string s;
  for (const auto& t : stats) {
    if (t.empty_rows > 0) {
      s += fmt::format(
          "{}: {} source row(s) had every mapped value NULL and no nested row, so gave no row "
          "(the first: {})\n",
          t.table, t.empty_rows, t.first_empty_row);
    }
    if (t.empty_children > 0) {
      s += fmt::format(
          "{}: {} nested row(s) had every value column NULL: a cell {{}} with layout json, no "
          "cell with layouts cells and value (the first: {})\n",
          t.table, t.empty_children, t.first_empty_child);
    }
    if (t.rows > t.row_keys && t.overwritten == 0) {
      s += fmt::format(
          "{}: {} source rows gave {} row key{}: rows sharing a key were merged into one row\n",
          t.table, t.rows, t.row_keys, t.row_keys == 1 ? "" : "s");
    }
    if (t.beyond_versions > 0) {
      s += fmt::format(
          "{}: {} cell(s) are older versions beyond their family's VERSIONS: stored, but reads "
          "return only the newest VERSIONS (raise the family's versions to keep them)\n",
          t.table, t.beyond_versions);
    }
    if (t.orphans > 0) {
      s += fmt::format("{}: {} nested row(s) had no parent row and were left out\n", t.table,
                       t.orphans);
    }
    if (t.sort_runs > 0 && t.sorted_all) {
      // Not the key order's doing: this target takes no cells as they come.
      s += fmt::format(
          "{}: every cell was sorted through {} temporary run(s), {} (under $TMPDIR), before it "
          "was written: widen streams cells in key order only into an embedded-store table that "
          "starts empty; an HBase table, or one that held cells, gets them sorted first\n",
          t.table, t.sort_runs, Bytes(t.sort_bytes));
    } else if (t.sort_runs > 0) {
      s += fmt::format(
          "{}: the row keys do not follow the order rows are read in: sorted through {} "
          "temporary run(s), {} (under $TMPDIR)\n",
          t.table, t.sort_runs, Bytes(t.sort_bytes));
    }
  }
  std::fputs(s.c_str(), out);
}

}  // namespace widen
