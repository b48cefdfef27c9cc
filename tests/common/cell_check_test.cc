// The cell checks every sink runs (common/cell_check.h). The limits come
// from HBase: a row key is at most Short.MAX_VALUE (32767) bytes; a cell is
// at most hbase.server.keyvalue.maxsize (10485760 by default) as the region
// server counts it, row + family + qualifier + value + 24; no negative
// timestamps; a DeleteFamily marker has no qualifier.
#include "common/cell_check.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/cell_sink.h"

namespace widen {
namespace {

TableDescriptor Table() {
  TableDescriptor d;
  d.name_space = "ns";
  d.table = "t";
  FamilyDescriptor a, b;
  a.name = "d";
  b.name = "a";
  d.families = {a, b};
  return d;
}

CellLimits HBaseLimits() {
  CellLimits l;
  l.max_cell_bytes = 10485760;
  l.negative_timestamps = false;
  return l;
}

CellView Put(std::string_view row, std::string_view family = "d", std::string_view qualifier = "q",
             int64_t ts = 1, std::string_view value = "v") {
  return CellView{row, family, qualifier, ts, CellType::kPut, value};
}

bool Has(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST(CellCheckerTest, RowKeysFromOneToShortMaxValueBytes) {
  CellChecker c(Table(), CellLimits());
  const std::string longest(32767, 'r');
  const std::string too_long(32768, 'r');
  EXPECT_TRUE(c.Check(Put("r")).ok());
  EXPECT_TRUE(c.Check(Put(longest)).ok());
  Status s = c.Check(Put(""));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(s, "table 'ns:t': row key of 0 bytes (HBase takes 1 to 32767)")) << s.message();
  s = c.Check(Put(too_long));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(s, "row key of 32768 bytes")) << s.message();
  EXPECT_LT(s.message().size(), 200u) << "the row is cut short in the message";
}

TEST(CellCheckerTest, FamiliesOfTheTableOnly) {
  CellChecker c(Table(), CellLimits());
  EXPECT_TRUE(c.Check(Put("r", "d")).ok());
  EXPECT_TRUE(c.Check(Put("r", "a")).ok());
  EXPECT_TRUE(c.Check(Put("r", "d")).ok());  // the cached family again
  Status s = c.Check(Put("r\x01", "x"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(s,
                  "table 'ns:t', row 'r\\x01': the table has no column family 'x' "
                  "(families: d, a)"))
      << s.message();
  EXPECT_EQ(c.Check(Put("r", "")).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.Check(Put("r", "dd")).code(), StatusCode::kInvalidArgument);
}

TEST(CellCheckerTest, KnownTypesAndDeleteFamilyWithoutQualifier) {
  CellChecker c(Table(), CellLimits());
  for (CellType t : {CellType::kDelete, CellType::kDeleteColumn}) {
    EXPECT_TRUE(c.Check(CellView{"r", "d", "q", 1, t, ""}).ok());
  }
  EXPECT_TRUE(c.Check(CellView{"r", "d", "", 1, CellType::kDeleteFamily, ""}).ok());
  Status s = c.Check(CellView{"r", "d", "q", 1, CellType::kDeleteFamily, ""});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(s, "a DeleteFamily marker must have an empty qualifier, not 'q'")) << s.message();
  s = c.Check(CellView{"r", "d", "q", 1, static_cast<CellType>(5), ""});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(s, "unknown cell type 5")) << s.message();
}

TEST(CellCheckerTest, NegativeTimestampsOnlyWhereTheStoreTakesThem) {
  CellChecker embedded(Table(), CellLimits());
  EXPECT_TRUE(embedded.Check(Put("r", "d", "q", -1)).ok());
  EXPECT_TRUE(embedded.Check(Put("r", "d", "q", INT64_MIN)).ok());
  CellChecker hbase(Table(), HBaseLimits());
  EXPECT_TRUE(hbase.Check(Put("r", "d", "q", 0)).ok());
  Status s = hbase.Check(Put("r", "d", "q\xff", -1));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(s,
                  "table 'ns:t', row 'r', column d:q\\xFF: negative timestamp -1 (HBase takes 0 "
                  "and above)"))
      << s.message();
}

// row + family + qualifier + value + 24 against the limit, inclusive.
TEST(CellCheckerTest, CellSizeAsTheRegionServerCountsIt) {
  CellChecker hbase(Table(), HBaseLimits());
  const size_t fits = 10485760 - 24 - 1 - 1 - 1;  // row "r", family "d", qualifier "q"
  const std::string value(fits, 'v');
  EXPECT_TRUE(hbase.Check(Put("r", "d", "q", 1, value)).ok());
  const std::string over(fits + 1, 'v');
  Status s = hbase.Check(Put("r", "d", "q", 1, over));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(s, "the cell is 10485761 bytes as HBase counts it, above its limit of 10485760"))
      << s.message();
  CellChecker embedded(Table(), CellLimits());
  EXPECT_TRUE(embedded.Check(Put("r", "d", "q", 1, over)).ok());  // no limit
}

// The buffered sink (the base of every store's sink) checks every cell of a
// batch before it writes any: the batch holding a refused cell is not
// written, nor spilled, and the refusal comes back once.
class Recording : public BufferedCellSink {
 public:
  explicit Recording(size_t batch_bytes) : BufferedCellSink(batch_bytes) {}
  std::vector<std::string> rows;  // rows of the cells written, in order

 protected:
  Status WriteSorted(const CellBatch& batch) override {
    for (size_t i = 0; i < batch.size(); ++i) rows.emplace_back(batch.Get(i).row);
    return Status::OK();
  }
  Status SyncWritten() override { return Status::OK(); }
  // As a table that was empty: batches in key order are written as they come.
  Result<bool> StartsEmpty() override { return true; }
};

TEST(CellCheckerTest, TheBufferedSinkDropsTheBatchHoldingARefusedCell) {
  Recording sink(1 << 20);
  sink.SetTable(Table(), HBaseLimits());
  ASSERT_TRUE(sink.Put(Put("a")).ok());
  ASSERT_TRUE(sink.Put(Put("b", "x")).ok());  // refused when its batch is written
  Status s = sink.Flush();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(s, "no column family 'x'")) << s.message();
  EXPECT_TRUE(sink.rows.empty());
  EXPECT_EQ(sink.stats().cells, 0u);
  ASSERT_TRUE(sink.Put(Put("c")).ok());
  ASSERT_TRUE(sink.Sync().ok());  // reported once; later batches go on
  EXPECT_EQ(sink.rows, (std::vector<std::string>{"c"}));
}

TEST(CellCheckerTest, ARefusedCellIsNeverSpilled) {
  Recording sink(8);  // every cell (11 bytes) fills a batch
  sink.SetTable(Table(), HBaseLimits());
  ASSERT_TRUE(sink.Put(Put("m", "d", "q", 1, "12345678")).ok());
  ASSERT_TRUE(sink.Put(Put("n", "d", "q", 1, "12345678")).ok());
  // Out of key order: this batch would be spilled to a sorted run.
  Status s = sink.Put(Put("a", "d", "q", -5, "12345678"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Has(s, "negative timestamp -5")) << s.message();
  ASSERT_TRUE(sink.Flush().ok());
  EXPECT_EQ(sink.stats().spilled_runs, 0u);
  EXPECT_EQ(sink.rows, (std::vector<std::string>{"m", "n"}));
}

// Without SetTable (a sink that does not know its table) nothing is checked.
TEST(CellCheckerTest, ASinkWithoutItsTableChecksNothing) {
  Recording sink(1 << 20);
  ASSERT_TRUE(sink.Put(Put("r", "anything", "q", -1)).ok());
  ASSERT_TRUE(sink.Flush().ok());
  EXPECT_EQ(sink.rows.size(), 1u);
}

}  // namespace
}  // namespace widen
