#include "extract/prefetch_stream.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace widen {
namespace {

// Rows 0..n-1 of (int, text of i % 300 bytes, NULL every 7th), then OK or
// `end`.
class Counting : public RowStream {
 public:
  Counting(size_t n, Status end) : n_(n), end_(std::move(end)) {
    schema_ = {{"id", ValueType::kInt, "int8"}, {"t", ValueType::kText, "text"}};
    row_.values.resize(2);
    Set();
  }
  bool Valid() const override { return i_ < n_; }
  void Next() override {
    ++i_;
    Set();
  }
  const Row& row() const override { return row_; }
  const RowSchema& schema() const override { return schema_; }
  Status status() const override { return i_ < n_ ? Status::OK() : end_; }

 private:
  void Set() {
    if (i_ >= n_) return;
    row_.values[0].SetInt(ValueType::kInt, static_cast<int64_t>(i_));
    if (i_ % 7 == 0) {
      row_.values[1].SetNull(ValueType::kText);
    } else {
      row_.values[1].SetBytes(ValueType::kText, std::string(i_ % 300, 'a' + i_ % 26));
    }
  }
  size_t n_, i_ = 0;
  Status end_;
  RowSchema schema_;
  Row row_;
};

void ExpectRow(const Row& r, size_t i) {
  ASSERT_EQ(r.values.size(), 2u);
  EXPECT_EQ(r[0].as_int(), static_cast<int64_t>(i));
  if (i % 7 == 0) {
    EXPECT_TRUE(r[1].is_null()) << i;
  } else {
    EXPECT_EQ(r[1].as_bytes(), std::string(i % 300, 'a' + i % 26)) << i;
  }
}

// Every row comes through once, in order, with its values, across many
// batches; an empty stream and one of exactly one batch too.
TEST(PrefetchStreamTest, EveryRowInOrder) {
  for (size_t n : {size_t{0}, size_t{1}, PrefetchStream::kBatchRows, PrefetchStream::kBatchRows + 1,
                   size_t{20000}}) {
    PrefetchStream s(std::make_unique<Counting>(n, Status::OK()));
    EXPECT_EQ(s.schema().size(), 2u);
    size_t i = 0;
    for (; s.Valid(); s.Next(), ++i) ExpectRow(s.row(), i);
    EXPECT_EQ(i, n);
    EXPECT_TRUE(s.status().ok()) << s.status().ToString();
  }
}

// The inner stream's error comes after every row read before it.
TEST(PrefetchStreamTest, ErrorAfterTheRowsBeforeIt) {
  PrefetchStream s(std::make_unique<Counting>(3001, Status::Unavailable("connection lost")));
  size_t i = 0;
  for (; s.Valid(); s.Next(), ++i) ExpectRow(s.row(), i);
  EXPECT_EQ(i, 3001u);
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(s.status().message().find("connection lost"), std::string::npos);
}

// Destroyed before the end (the reader stopped early): the thread stops.
TEST(PrefetchStreamTest, DestroyedEarly) {
  for (int k = 0; k < 20; ++k) {
    PrefetchStream s(std::make_unique<Counting>(1000000, Status::OK()));
    for (int i = 0; i < k * 100 && s.Valid(); ++i) s.Next();
  }
}

}  // namespace
}  // namespace widen
