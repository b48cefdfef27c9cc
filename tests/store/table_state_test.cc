// The state record (store/table_state.h): every field round trips, the
// bytes are the layout drawn in the header, and malformed records are
// refused without reading past their end.
#include "store/table_state.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "store/state_store.h"

namespace widen {
namespace {

using namespace std::string_literals;

// Values of every type, NULLs and extremes among them.
std::vector<Value> EveryValue() {
  return {
      Value::Bool(true),
      Value::Bool(false),
      Value::Int(std::numeric_limits<int64_t>::min()),
      Value::Int(-1),
      Value::UInt(std::numeric_limits<uint64_t>::max()),
      Value::Float(-0.0),
      Value::Float(std::numeric_limits<double>::infinity()),
      Value::Float(1.5e-300),
      Value::Str(ValueType::kDecimal, "-12.50"),
      Value::Str(ValueType::kText, ""),
      Value::Str(ValueType::kText, "caf\xc3\xa9"),
      Value::Str(ValueType::kBytes, "\x00\xff\x00"s),
      Value::Temporal(ValueType::kDate, -719162),
      Value::Temporal(ValueType::kTime, -3020399000000),
      Value::Temporal(ValueType::kTimestamp, -1),
      Value::Temporal(ValueType::kTimestampTz, 1700000000123456),
      Value::Str(ValueType::kJson, "{\"a\":[1,null]}"),
      Value::Str(ValueType::kOther, "1 day"),
      Value::Null(ValueType::kInt),
      Value::Null(ValueType::kText),
      Value::Null(ValueType::kTimestampTz),
  };
}

void ExpectSameValues(const std::vector<Value>& got, const std::vector<Value>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].type(), want[i].type()) << "value " << i;
    EXPECT_EQ(got[i].is_null(), want[i].is_null()) << "value " << i;
    if (want[i].is_null()) continue;
    EXPECT_EQ(CompareValues(got[i], want[i]), 0) << "value " << i << ": " << got[i].DebugString();
    if (want[i].type() == ValueType::kFloat) {
      EXPECT_EQ(std::signbit(got[i].as_double()), std::signbit(want[i].as_double()));
    }
  }
}

TableState Full() {
  TableState s;
  s.status = TableStatus::kFailed;
  s.run_id = "run-2024-01-01T00:00:00Z-\x00\xff"s;
  s.started_ms = -5;
  s.finished_ms = std::numeric_limits<int64_t>::max();
  s.mapping_fingerprint = "\x00\x01\xfe\xff"s;
  std::vector<std::string> columns;
  for (size_t i = 0; i < EveryValue().size(); ++i) columns.push_back("c" + std::to_string(i));
  s.watermarks.push_back(Watermark{"public.orders", columns, EveryValue()});
  s.watermarks.push_back(Watermark{"", {}, {}});
  FinishedRange r;
  r.source_table = "orders";
  r.columns = {"updated_at", "id"};
  r.has_lo = true;
  r.lo = {Value::Temporal(ValueType::kTimestamp, 10), Value::Int(3)};
  r.has_hi = true;
  r.hi = {Value::Null(ValueType::kTimestamp), Value::Int(-3)};
  r.with_null = true;
  s.finished_ranges.push_back(r);
  FinishedRange open;
  open.source_table = "items";
  open.columns = {"id"};
  open.has_hi = true;
  open.hi = {Value::UInt(7)};
  s.finished_ranges.push_back(open);
  s.extensions["digests"] = "\x00\x01"s;
  s.extensions[""] = "";
  s.version = 99;  // not part of the record
  return s;
}

TEST(TableStateTest, EveryFieldRoundTrips) {
  const TableState want = Full();
  Result<std::string> bytes = EncodeTableState(want);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  Result<TableState> got = DecodeTableState(*bytes);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->status, TableStatus::kFailed);
  EXPECT_EQ(got->run_id, want.run_id);
  EXPECT_EQ(got->started_ms, -5);
  EXPECT_EQ(got->finished_ms, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(got->mapping_fingerprint, want.mapping_fingerprint);
  ASSERT_EQ(got->watermarks.size(), 2u);
  EXPECT_EQ(got->watermarks[0].source_table, "public.orders");
  EXPECT_EQ(got->watermarks[0].columns, want.watermarks[0].columns);
  ExpectSameValues(got->watermarks[0].values, EveryValue());
  EXPECT_TRUE(got->watermarks[1].columns.empty());
  ASSERT_EQ(got->finished_ranges.size(), 2u);
  const FinishedRange& r = got->finished_ranges[0];
  EXPECT_EQ(r.source_table, "orders");
  EXPECT_EQ(r.columns, (std::vector<std::string>{"updated_at", "id"}));
  EXPECT_TRUE(r.has_lo);
  EXPECT_TRUE(r.has_hi);
  EXPECT_TRUE(r.with_null);
  ExpectSameValues(r.lo, want.finished_ranges[0].lo);
  ExpectSameValues(r.hi, want.finished_ranges[0].hi);
  const FinishedRange& open = got->finished_ranges[1];
  EXPECT_FALSE(open.has_lo);
  EXPECT_TRUE(open.lo.empty());
  EXPECT_TRUE(open.has_hi);
  EXPECT_FALSE(open.with_null);
  ExpectSameValues(open.hi, {Value::UInt(7)});
  EXPECT_EQ(got->extensions, want.extensions);
  EXPECT_EQ(got->version, 0u);
  // Encoding what was decoded gives the same bytes.
  EXPECT_EQ(EncodeTableState(*got).value(), *bytes);
}

// The bytes of a small record, written out by hand from the layout drawn
// in store/table_state.h.
TEST(TableStateTest, BytesAreTheDrawnLayout) {
  TableState s;
  s.status = TableStatus::kComplete;
  s.run_id = "r1";
  s.started_ms = 1;
  s.finished_ms = -2;
  s.mapping_fingerprint = "\xab";
  s.watermarks.push_back(Watermark{"o", {"id"}, {Value::Int(5)}});
  FinishedRange r;
  r.source_table = "o";
  r.columns = {"id"};
  r.has_hi = true;
  r.hi = {Value::Null(ValueType::kText)};
  r.with_null = true;
  s.finished_ranges.push_back(r);
  s.extensions["k"] = "v";
  const std::string want =
      "\x01"                                      // record version
      "\x02"                                      // complete
      "\x00\x00\x00\x02r1"                        // run_id
      "\x00\x00\x00\x00\x00\x00\x00\x01"          // started_ms
      "\xff\xff\xff\xff\xff\xff\xff\xfe"          // finished_ms
      "\x00\x00\x00\x01\xab"                      // fingerprint
      "\x00\x00\x00\x01"                          // one watermark
      "\x00\x00\x00\x01o"                         //   source table
      "\x00\x00\x00\x01\x00\x00\x00\x02id"        //   columns
      "\x00\x00\x00\x01"                          //   tuple of one value:
      "\x02\x01\x00\x00\x00\x00\x00\x00\x00\x05"  // int, not NULL, 5
      "\x00\x00\x00\x01"                          // one finished range
      "\x00\x00\x00\x01o"                         //   source table
      "\x00\x00\x00\x01\x00\x00\x00\x02id"        //   columns
      "\x06"                                      //   flags: hi, with_null
      "\x00\x00\x00\x00"                          //   lo: no values
      "\x00\x00\x00\x01\x06\x00"                  //   hi: text NULL
      "\x00\x00\x00\x01"                          // one extension
      "\x00\x00\x00\x01k\x00\x00\x00\x01v"s;
  Result<std::string> got = EncodeTableState(s);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, want);
}

TEST(TableStateTest, TheStateValueIsTheVersionThenTheRecord) {
  EXPECT_EQ(EncodeStateValue(0x0102030405060708, "rec"), "\x01\x02\x03\x04\x05\x06\x07\x08rec"s);
  uint64_t version = 0;
  std::string_view record;
  ASSERT_TRUE(DecodeStateValue("\x00\x00\x00\x00\x00\x00\x01\x00"s, &version, &record));
  EXPECT_EQ(version, 256u);
  EXPECT_TRUE(record.empty());  // a tombstone
  EXPECT_FALSE(DecodeStateValue("\x00\x01"s, &version, &record));
}

TEST(TableStateTest, ATupleOfAnotherWidthIsNotEncoded) {
  TableState s;
  s.watermarks.push_back(Watermark{"o", {"a", "b"}, {Value::Int(1)}});
  Result<std::string> r = EncodeTableState(s);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("source table 'o' has 1 values for 2 columns"),
            std::string::npos)
      << r.status().message();
}

TEST(TableStateTest, AnotherRecordVersionIsAFailedPrecondition) {
  std::string bytes = EncodeTableState(TableState()).value();
  bytes[0] = '\x02';
  EXPECT_EQ(DecodeTableState(bytes).status().code(), StatusCode::kFailedPrecondition);
}

// Every cut of a valid record, and the record with bytes after it, is
// DataLoss — and never read beyond its end (the sanitizer build checks).
TEST(TableStateTest, MalformedRecordsAreDataLoss) {
  const std::string bytes = EncodeTableState(Full()).value();
  for (size_t n = 0; n < bytes.size(); ++n) {
    Result<TableState> r = DecodeTableState(std::string_view(bytes).substr(0, n));
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << "cut at " << n;
  }
  EXPECT_EQ(DecodeTableState(bytes + "x").status().code(), StatusCode::kDataLoss);
  // An unknown status, type code, NULL flag; a count no record could hold.
  std::string bad = bytes;
  bad[1] = '\x07';
  EXPECT_EQ(DecodeTableState(bad).status().code(), StatusCode::kDataLoss);
  const std::string huge_count =
      "\x01\x01"
      "\x00\x00\x00\x00"
      "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
      "\x00\x00\x00\x00"
      "\xff\xff\xff\xff"s;
  Result<TableState> r = DecodeTableState(huge_count);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("a count beyond the record"), std::string::npos)
      << r.status().message();
  TableState one;
  one.watermarks.push_back(Watermark{"o", {"id"}, {Value::Int(5)}});
  std::string typed = EncodeTableState(one).value();
  const size_t code_at = typed.find("id") + 2 + 4;  // after the column, the tuple's count
  ASSERT_EQ(typed[code_at], '\x02');
  typed[code_at] = '\x0e';  // type code 14: none
  r = DecodeTableState(typed);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("unknown value type code 14"), std::string::npos);
  typed[code_at] = '\x02';
  typed[code_at + 1] = '\x02';  // NULL flag 2
  EXPECT_EQ(DecodeTableState(typed).status().code(), StatusCode::kDataLoss);
}

TEST(TableStateTest, StatusNamesAndHex) {
  EXPECT_EQ(TableStatusName(TableStatus::kLoading), "loading");
  EXPECT_EQ(TableStatusName(TableStatus::kComplete), "complete");
  EXPECT_EQ(TableStatusName(TableStatus::kFailed), "failed");
  EXPECT_EQ(HexBytes("\x00\xab\xff"s), "00abff");
}

}  // namespace
}  // namespace widen
