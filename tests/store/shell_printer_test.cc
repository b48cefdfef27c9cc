// Expected texts are written by hand from the HBase shell's scan and get
// output (formatter.rb: header not inset, two spaces between its columns;
// cell lines inset by one space, one space between columns).
#include "store/shell_printer.h"

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace widen {
namespace {

// A reader over a fixed list of cells (or an error after them).
class VectorReader : public CellReader {
 public:
  VectorReader(std::vector<CellView> cells, Status end) : cells_(std::move(cells)), end_(end) {}
  bool Valid() const override { return i_ < cells_.size(); }
  void Next() override { ++i_; }
  CellView cell() const override { return cells_[i_]; }
  Status status() const override { return Valid() ? Status::OK() : end_; }

 private:
  std::vector<CellView> cells_;
  Status end_;
  size_t i_ = 0;
};

const std::string kNulValue("555\x00", 4);
const std::string kBinaryRow("r\x00\xff", 3);

std::vector<CellView> SampleCells() {
  return {
      CellView{"r1", "d", "name", 1700000000000, CellType::kPut, "Ann"},
      CellView{"r1", "d", "tel", 1700000000001, CellType::kPut, kNulValue},
      CellView{kBinaryRow, "d", "", -5, CellType::kPut, ""},
  };
}

TEST(ShellPrinterTest, ScanLikeHBase) {
  std::ostringstream out;
  ShellPrinter printer(out, ShellFormat::kScan);
  VectorReader reader(SampleCells(), Status::OK());
  ASSERT_TRUE(printer.PrintAll(&reader).ok());
  EXPECT_EQ(out.str(),
            "ROW                         COLUMN+CELL\n"
            " r1                         column=d:name, timestamp=1700000000000, value=Ann\n"
            " r1                         column=d:tel, timestamp=1700000000001, value=555\\x00\n"
            " r\\x00\\xFF                  column=d:, timestamp=-5, value=\n"
            "2 row(s)\n");
  EXPECT_EQ(printer.rows(), 2u);
}

TEST(ShellPrinterTest, ScanWithoutPaddingAsOnAPipe) {
  std::ostringstream out;
  ShellPrinterOptions options;
  options.first_column_width = 0;
  ShellPrinter printer(out, ShellFormat::kScan, options);
  printer.Header();
  printer.Cell(CellView{"row1", "cf", "a", 1421762485768, CellType::kPut, "value1"});
  printer.Footer(0.0123);
  EXPECT_EQ(out.str(),
            "ROW  COLUMN+CELL\n"
            " row1 column=cf:a, timestamp=1421762485768, value=value1\n"
            "1 row(s)\n"
            "Took 0.0123 seconds\n");
}

TEST(ShellPrinterTest, LongRowPushesCellRight) {
  std::ostringstream out;
  ShellPrinterOptions options;
  options.first_column_width = 4;
  ShellPrinter printer(out, ShellFormat::kScan, options);
  printer.Cell(CellView{"abcdef", "d", "q", 1, CellType::kPut, "v"});
  printer.Cell(CellView{"ab", "d", "q", 1, CellType::kPut, "v"});
  EXPECT_EQ(out.str(),
            " abcdef column=d:q, timestamp=1, value=v\n"
            " ab   column=d:q, timestamp=1, value=v\n");
}

TEST(ShellPrinterTest, RowRenderCallback) {
  std::ostringstream out;
  ShellPrinterOptions options;
  options.render_row = [](std::string_view row) {
    return "<" + std::to_string(row.size()) + " bytes>";
  };
  ShellPrinter printer(out, ShellFormat::kScan, options);
  VectorReader reader({SampleCells()[0]}, Status::OK());
  ASSERT_TRUE(printer.PrintAll(&reader).ok());
  EXPECT_EQ(out.str(),
            "ROW                         COLUMN+CELL\n"
            " <2 bytes>                  column=d:name, timestamp=1700000000000, value=Ann\n"
            "1 row(s)\n");
}

TEST(ShellPrinterTest, GetLikeHBase) {
  std::ostringstream out;
  ShellPrinter printer(out, ShellFormat::kGet);
  std::vector<CellView> cells = SampleCells();
  cells.pop_back();
  cells.push_back(CellView{"r1", "e", std::string_view("\x01q", 2), 7, CellType::kPut, "\xe9"});
  VectorReader reader(cells, Status::OK());
  ASSERT_TRUE(printer.PrintAll(&reader).ok());
  EXPECT_EQ(out.str(),
            "COLUMN                      CELL\n"
            " d:name                     timestamp=1700000000000, value=Ann\n"
            " d:tel                      timestamp=1700000000001, value=555\\x00\n"
            " e:\\x01q                    timestamp=7, value=\\xE9\n"
            "1 row(s)\n");
}

TEST(ShellPrinterTest, EmptyGet) {
  std::ostringstream out;
  ShellPrinter printer(out, ShellFormat::kGet);
  VectorReader reader({}, Status::OK());
  ASSERT_TRUE(printer.PrintAll(&reader).ok());
  EXPECT_EQ(out.str(),
            "COLUMN                      CELL\n"
            "0 row(s)\n");
}

TEST(ShellPrinterTest, DeleteMarkersShowTheirType) {
  std::ostringstream out;
  ShellPrinterOptions options;
  options.first_column_width = 0;
  ShellPrinter printer(out, ShellFormat::kScan, options);
  printer.Cell(CellView{"r", "d", "q", 3, CellType::kDeleteColumn, ""});
  printer.Cell(CellView{"r", "d", "", 2, CellType::kDeleteFamily, ""});
  printer.Cell(CellView{"r", "d", "q", 1, CellType::kDelete, ""});
  EXPECT_EQ(out.str(),
            " r column=d:q, timestamp=3, type=DeleteColumn\n"
            " r column=d:, timestamp=2, type=DeleteFamily\n"
            " r column=d:q, timestamp=1, type=Delete\n");
}

TEST(ShellPrinterTest, ReaderErrorSkipsFooter) {
  std::ostringstream out;
  ShellPrinterOptions options;
  options.first_column_width = 0;
  ShellPrinter printer(out, ShellFormat::kScan, options);
  VectorReader reader({SampleCells()[0]}, Status::DataLoss("bad key"));
  EXPECT_EQ(printer.PrintAll(&reader).code(), StatusCode::kDataLoss);
  EXPECT_EQ(out.str(),
            "ROW  COLUMN+CELL\n"
            " r1 column=d:name, timestamp=1700000000000, value=Ann\n");
}

}  // namespace
}  // namespace widen
