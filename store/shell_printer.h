// ShellPrinter: prints cells as the HBase shell prints the results of `scan`
// and `get` (hbase-shell's formatter.rb; HBase 2.x, timestamps as integer
// milliseconds), so widen's scan and get output reads — and diffs — like
// HBase's. Row keys, qualifiers and values go through ToStringBinary
// (non-printable bytes as \xNN); family names are printed as they are.
//
//   scan (ShellFormat::kScan):
//     ROW                         COLUMN+CELL
//      r1                         column=d:name, timestamp=1700000000000, value=Ann
//      r1                         column=d:tel, timestamp=1700000000000, value=555\x00
//     1 row(s)
//   get (ShellFormat::kGet):
//     COLUMN                      CELL
//      d:name                     timestamp=1700000000000, value=Ann
//     1 row(s)
//
// A line is " " + first column (left-aligned, padded to first_column_width) +
// " " + the rest; the header has no leading space and two spaces between its
// columns. Where HBase wraps a first column longer than the width onto more
// lines, widen keeps one line per cell and lets the rest move right. A delete
// marker (only seen in raw output) prints "type=Delete" (DeleteColumn,
// DeleteFamily) instead of its value, as HBase does.
//
// Thread safety: a printer is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "common/cell.h"
#include "common/status.h"
#include "store/store.h"

namespace widen {

enum class ShellFormat {
  kScan,  // ROW / COLUMN+CELL: one line per cell, the row key first
  kGet,   // COLUMN / CELL: the cells of one row, the column first
};

struct ShellPrinterOptions {
  /// Width of the first column (ROW or COLUMN) in characters. HBase's shell
  /// uses a quarter of the terminal's width (26 on a 104-column terminal);
  /// 0 = no padding, as HBase prints when stdout is not a terminal.
  size_t first_column_width = 26;
  /// Renders a row key in the ROW column. Empty = ToStringBinary. The caller
  /// may show a decoded key instead (its parts by name).
  std::function<std::string(std::string_view row)> render_row;
};

class ShellPrinter {
 public:
  /// Writes to `out`, which must outlive the printer. Errors of `out` are the
  /// stream's (its state); the printer does not check them.
  ShellPrinter(std::ostream& out, ShellFormat format, ShellPrinterOptions options = {});

  /// Prints the header line.
  void Header();
  /// Prints one line for `cell`. A cell whose row differs from the previous
  /// cell's counts one more row. The view need not outlive the call.
  void Cell(const CellView& cell);
  /// Prints "N row(s)", then "Took S.SSSS seconds" when `took_seconds` is
  /// given (HBase 2's shell prints both).
  void Footer(std::optional<double> took_seconds = std::nullopt);

  /// Header, every cell of `reader`, and the footer (without timing). On a
  /// reader error the footer is not printed and the reader's status returned.
  Status PrintAll(CellReader* reader);

  /// Rows counted so far.
  uint64_t rows() const { return rows_; }

 private:
  void WriteLine(std::string_view first, std::string_view rest, bool header);

  std::ostream& out_;
  const ShellFormat format_;
  const ShellPrinterOptions options_;
  uint64_t rows_ = 0;
  bool have_row_ = false;
  std::string last_row_;  // bytes of the previous cell's row
  std::string first_;     // reused buffers for one line
  std::string rest_;
  std::string line_;
};

}  // namespace widen
