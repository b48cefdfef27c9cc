#include "common/cell.h"

#include <gtest/gtest.h>

namespace widen {
namespace {

TEST(CellTest, HBaseOrder) {
  CellView a{"r1", "f", "q", 10, CellType::kPut, "v"};
  CellView b = a;
  b.timestamp_ms = 20;  // newer sorts first
  EXPECT_LT(CompareCells(b, a), 0);
  CellView d = a;
  d.type = CellType::kDelete;  // a delete precedes the put at the same timestamp
  EXPECT_LT(CompareCells(d, a), 0);
  CellView prefix{"r", "f", "q", 1, CellType::kPut, ""};
  EXPECT_LT(CompareCells(prefix, a), 0);  // a row that is a prefix sorts first
  CellView hi{std::string_view("r1\xff", 3), "a", "", 1, CellType::kPut, ""};
  EXPECT_LT(CompareCells(a, hi), 0);  // unsigned bytes
}

TEST(CellTest, BatchOwnsBytesAndSorts) {
  CellBatch batch;
  {
    std::string row = "row2", value = "x";
    batch.Add(row, "f", "b", 1, value);
    row = "row1";
    batch.Add(row, "f", "z", 1, value);
    batch.Add(row, "f", "a", 5, value);
    batch.Add(row, "f", "a", 9, value);
  }
  batch.Sort();
  ASSERT_EQ(batch.size(), 4u);
  EXPECT_EQ(batch.Get(0).row, "row1");
  EXPECT_EQ(batch.Get(0).qualifier, "a");
  EXPECT_EQ(batch.Get(0).timestamp_ms, 9);
  EXPECT_EQ(batch.Get(1).timestamp_ms, 5);
  EXPECT_EQ(batch.Get(2).qualifier, "z");
  EXPECT_EQ(batch.Get(3).row, "row2");
  EXPECT_EQ(batch.Get(3).value, "x");
  batch.Clear();
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(batch.bytes(), 0u);
}

}  // namespace
}  // namespace widen
