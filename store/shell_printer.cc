#include "store/shell_printer.h"

#include <cinttypes>
#include <cstdio>
#include <utility>

#include "common/bytes.h"

namespace widen {

namespace {

const char* TypeName(CellType type) {
  switch (type) {
    case CellType::kPut:
      return "Put";
    case CellType::kDelete:
      return "Delete";
    case CellType::kDeleteColumn:
      return "DeleteColumn";
    case CellType::kDeleteFamily:
      return "DeleteFamily";
  }
  return "Unknown";
}

// Appends "timestamp=<ms>, value=<v>" (or ", type=<T>" for a delete marker).
void AppendCellText(std::string* out, const CellView& cell) {
  char ts[32];
  std::snprintf(ts, sizeof(ts), "%" PRId64, cell.timestamp_ms);
  out->append("timestamp=");
  out->append(ts);
  if (cell.type == CellType::kPut) {
    out->append(", value=");
    AppendStringBinary(out, cell.value);
  } else {
    out->append(", type=");
    out->append(TypeName(cell.type));
  }
}

void AppendColumn(std::string* out, const CellView& cell) {
  out->append(cell.family);
  out->push_back(':');
  AppendStringBinary(out, cell.qualifier);
}

}  // namespace

ShellPrinter::ShellPrinter(std::ostream& out, ShellFormat format, ShellPrinterOptions options)
    : out_(out), format_(format), options_(std::move(options)) {}

void ShellPrinter::WriteLine(std::string_view first, std::string_view rest, bool header) {
  line_.clear();
  if (!header) line_.push_back(' ');
  line_.append(first);
  if (first.size() < options_.first_column_width) {
    line_.append(options_.first_column_width - first.size(), ' ');
  }
  if (header) line_.push_back(' ');
  line_.push_back(' ');
  line_.append(rest);
  line_.push_back('\n');
  out_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
}

void ShellPrinter::Header() {
  if (format_ == ShellFormat::kScan) {
    WriteLine("ROW", "COLUMN+CELL", /*header=*/true);
  } else {
    WriteLine("COLUMN", "CELL", /*header=*/true);
  }
}

void ShellPrinter::Cell(const CellView& cell) {
  if (!have_row_ || cell.row != last_row_) {
    ++rows_;
    last_row_.assign(cell.row.data(), cell.row.size());
    have_row_ = true;
  }
  first_.clear();
  rest_.clear();
  if (format_ == ShellFormat::kScan) {
    if (options_.render_row) {
      first_ = options_.render_row(cell.row);
    } else {
      AppendStringBinary(&first_, cell.row);
    }
    rest_.append("column=");
    AppendColumn(&rest_, cell);
    rest_.append(", ");
    AppendCellText(&rest_, cell);
  } else {
    AppendColumn(&first_, cell);
    AppendCellText(&rest_, cell);
  }
  WriteLine(first_, rest_, /*header=*/false);
}

void ShellPrinter::Footer(std::optional<double> took_seconds) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%" PRIu64 " row(s)\n", rows_);
  out_ << buf;
  if (took_seconds.has_value()) {
    std::snprintf(buf, sizeof(buf), "Took %.4f seconds\n", *took_seconds);
    out_ << buf;
  }
}

Status ShellPrinter::PrintAll(CellReader* reader) {
  Header();
  for (; reader->Valid(); reader->Next()) Cell(reader->cell());
  WIDEN_RETURN_IF_ERROR(reader->status());
  Footer();
  return Status::OK();
}

}  // namespace widen
