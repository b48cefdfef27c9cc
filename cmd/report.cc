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
    total.rows += t.rows;
    total.cells += t.cells;
    total.bytes += t.bytes;
    total.seconds += t.seconds;
    total.rejected += t.rejected;
  }
  std::vector<TableStats> lines = stats;
  if (stats.size() > 1) lines.push_back(total);
  for (const auto& t : lines) {
    double rate = t.seconds > 0 ? t.rows / t.seconds : 0;
    s += fmt::format("{:<32} {:>12} {:>10} {:>11} {:>11} {:>8.2f} {:>10.0f} {:>8}\n", t.table,
                     t.source_rows, t.rows, t.cells, Bytes(t.bytes), t.seconds, rate, t.rejected);
  }
  std::fputs(s.c_str(), out);
}

}  // namespace widen
