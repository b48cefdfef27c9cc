// Row verify over the embedded store: a stored table compared with the
// cells a source gives — each kind of difference found and named, counts of
// rows and cells, the read rules (VERSIONS, TTL, delete markers) applied to
// the source's cells as the store's reader applies them to its own, the
// sample, and the streamed comparison equal to the sorted one. ReadRules
// is checked against HBase's documented read semantics and against the
// embedded store's reader on random cells.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <xxhash.h>

#include <filesystem>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/cell_runs.h"
#include "store/leveldb_store.h"
#include "store/read_rules.h"
#include "store/row_verify.h"

namespace widen {
namespace {

FamilyDescriptor Family(const std::string& name, int versions = 1, int min_versions = 0,
                        int64_t ttl_seconds = 0) {
  FamilyDescriptor f;
  f.name = name;
  f.versions = versions;
  f.min_versions = min_versions;
  f.ttl_seconds = ttl_seconds;
  return f;
}

// ---------------------------------------------------------------------------
// ReadRules against HBase's read semantics (VERSIONS, MIN_VERSIONS, TTL,
// Delete / DeleteColumn / DeleteFamily), cells given in HBase cell order.

std::vector<std::string> Returned(ReadRules* rules, const std::vector<CellView>& cells) {
  std::vector<std::string> out;
  for (const CellView& c : cells) {
    if (rules->Returns(c)) {
      out.push_back(std::string(c.row) + " " + std::string(c.family) + ":" +
                    std::string(c.qualifier) + "@" + std::to_string(c.timestamp_ms));
    }
  }
  return out;
}

TEST(ReadRulesTest, VersionsKeepTheNewestPerColumn) {
  ReadRules rules({Family("d", 2)}, std::numeric_limits<int>::max(), 0);
  EXPECT_EQ(Returned(&rules, {{"r", "d", "a", 30, CellType::kPut, "x"},
                              {"r", "d", "a", 20, CellType::kPut, "x"},
                              {"r", "d", "a", 10, CellType::kPut, "x"},
                              {"r", "d", "b", 10, CellType::kPut, "x"},
                              {"s", "d", "a", 5, CellType::kPut, "x"}}),
            (std::vector<std::string>{"r d:a@30", "r d:a@20", "r d:b@10", "s d:a@5"}));
  // A read asking for fewer versions gets fewer.
  ReadRules one({Family("d", 2)}, 1, 0);
  EXPECT_EQ(Returned(&one, {{"r", "d", "a", 30, CellType::kPut, "x"},
                            {"r", "d", "a", 20, CellType::kPut, "x"}}),
            (std::vector<std::string>{"r d:a@30"}));
}

TEST(ReadRulesTest, TtlDropsOldVersionsButMinVersionsStay) {
  // TTL 10 s at clock 100 000 ms: cells older than 90 000 ms have expired.
  ReadRules rules({Family("d", 5, 1, 10)}, std::numeric_limits<int>::max(), 100000);
  EXPECT_EQ(Returned(&rules, {{"r", "d", "a", 95000, CellType::kPut, "x"},
                              {"r", "d", "a", 90000, CellType::kPut, "x"},
                              {"r", "d", "a", 89999, CellType::kPut, "x"},
                              // Expired, but the column's newest: MIN_VERSIONS 1 keeps it.
                              {"r", "d", "b", 1000, CellType::kPut, "x"},
                              {"r", "d", "b", 999, CellType::kPut, "x"}}),
            (std::vector<std::string>{"r d:a@95000", "r d:a@90000", "r d:b@1000"}));
}

TEST(ReadRulesTest, DeleteMarkersHideWhatTheyMaskAndAreNeverReturned) {
  ReadRules rules({Family("d", 10), Family("e", 10)}, std::numeric_limits<int>::max(), 0);
  EXPECT_EQ(Returned(&rules,
                     {// DeleteFamily at 20 masks d's cells at or below 20, in every column.
                      {"r", "d", "", 20, CellType::kDeleteFamily, ""},
                      {"r", "d", "a", 30, CellType::kPut, "x"},
                      {"r", "d", "a", 20, CellType::kPut, "x"},
                      {"r", "d", "b", 10, CellType::kPut, "x"},
                      // DeleteColumn at 7 masks e:a at or below 7 only.
                      {"r", "e", "a", 8, CellType::kPut, "x"},
                      {"r", "e", "a", 7, CellType::kDeleteColumn, ""},
                      {"r", "e", "a", 7, CellType::kPut, "x"},
                      {"r", "e", "a", 6, CellType::kPut, "x"},
                      // Delete masks exactly its version.
                      {"r", "e", "b", 5, CellType::kDelete, ""},
                      {"r", "e", "b", 5, CellType::kPut, "x"},
                      {"r", "e", "b", 4, CellType::kPut, "x"},
                      // Another row is not masked.
                      {"s", "d", "a", 1, CellType::kPut, "x"}}),
            (std::vector<std::string>{"r d:a@30", "r e:a@8", "r e:b@4", "s d:a@1"}));
}

TEST(ReadRulesTest, AFamilyTheRulesDoNotKnowIsNotReturned) {
  ReadRules rules({Family("d")}, 1, 0);
  EXPECT_TRUE(Returned(&rules, {{"r", "x", "a", 1, CellType::kPut, "v"}}).empty());
}

// ---------------------------------------------------------------------------
// A store in a temporary directory.

class StoreFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "widen_rowverify_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto r = LevelDbStore::Open(dir_ + "/store", StoreOptions());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    store_ = std::move(r).value();
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void Create(const std::vector<FamilyDescriptor>& families) {
    TableDescriptor d;
    d.table = "t";
    d.families = families;
    families_ = families;
    ASSERT_TRUE(store_->CreateTable(d).ok());
  }

  void Write(const CellBatch& cells) {
    auto sink = store_->NewSink("t");
    ASSERT_TRUE(sink.ok());
    for (size_t i = 0; i < cells.size(); ++i) ASSERT_TRUE((*sink)->Put(cells.Get(i)).ok());
    ASSERT_TRUE((*sink)->Close().ok());
  }

  std::unique_ptr<CellReader> Reader(int64_t now_ms) {
    ReadOptions ro;
    ro.max_versions = std::numeric_limits<int>::max();
    ro.now_ms = now_ms;
    auto r = store_->NewReader("t", ro);
    EXPECT_TRUE(r.ok());
    return std::move(r).value();
  }

  std::string dir_;
  std::unique_ptr<LevelDbStore> store_;
  std::vector<FamilyDescriptor> families_;
};

// ReadRules returns what the embedded store's reader returns, on random
// cells with every kind of delete marker, several versions and TTLs.
class ReadRulesStoreTest : public StoreFixture {};

TEST_F(ReadRulesStoreTest, ReturnsWhatTheStoresReaderReturns) {
  Create({Family("a", 1), Family("b", 3, 1, 50), Family("c", 2, 0, 30)});
  std::mt19937 rng(1313);
  CellBatch cells;
  const CellType types[] = {CellType::kPut,    CellType::kPut,          CellType::kPut,
                            CellType::kDelete, CellType::kDeleteColumn, CellType::kDeleteFamily};
  const std::string fams[] = {"a", "b", "c"};
  const std::string quals[] = {"", "q", std::string("q\0z", 3), "r"};
  for (int i = 0; i < 3000; ++i) {
    const std::string row = "row" + std::to_string(rng() % 40);
    const CellType type = types[rng() % 6];
    const std::string q = type == CellType::kDeleteFamily ? "" : quals[rng() % 4];
    cells.Add(row, fams[rng() % 3], q, static_cast<int64_t>(rng() % 100) * 1000,
              "v" + std::to_string(i), type);
  }
  Write(cells);
  const int64_t now_ms = 100000;
  // What the reader returns.
  std::vector<std::string> got;
  auto reader = Reader(now_ms);
  for (; reader->Valid(); reader->Next()) {
    const CellView c = reader->cell();
    got.push_back(std::string(c.row) + "|" + std::string(c.family) + "|" +
                  std::string(c.qualifier) + "|" + std::to_string(c.timestamp_ms) + "|" +
                  std::string(c.value));
  }
  ASSERT_TRUE(reader->status().ok());
  // The same cells through ReadRules: sorted, the last of equal coordinates kept.
  cells.Sort();
  ReadRules rules(families_, std::numeric_limits<int>::max(), now_ms);
  std::vector<std::string> want;
  for (size_t i = 0; i < cells.size(); ++i) {
    const CellView c = cells.Get(i);
    if (i + 1 < cells.size()) {
      const CellView n = cells.Get(i + 1);
      if (n.row == c.row && n.family == c.family && n.qualifier == c.qualifier &&
          n.timestamp_ms == c.timestamp_ms && n.type == c.type) {
        continue;  // replaced by the next
      }
    }
    if (rules.Returns(c)) {
      want.push_back(std::string(c.row) + "|" + std::string(c.family) + "|" +
                     std::string(c.qualifier) + "|" + std::to_string(c.timestamp_ms) + "|" +
                     std::string(c.value));
    }
  }
  EXPECT_GT(want.size(), 100u);
  EXPECT_EQ(got, want);
}

// ---------------------------------------------------------------------------
// The comparison.

class RowVerifyTest : public StoreFixture {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    Create({Family("d", 1), Family("n", 1)});
  }

  // Rows r1..r5, each with d:v and two nested cells n:c1, n:c2.
  static CellBatch Source() {
    CellBatch b;
    for (int i = 1; i <= 5; ++i) {
      const std::string row = "r" + std::to_string(i);
      b.Add(row, "d", "v", 100, "value" + std::to_string(i));
      b.Add(row, "n", "c1", 100, "{\"qty\":1}");
      b.Add(row, "n", "c2", 100, "{\"qty\":2}");
    }
    b.Sort();
    return b;
  }

  // The comparison of `source` with the stored table, sorted (VerifyRows)
  // and streamed (RowVerifySink), which must agree.
  RowVerifyStats Verify(const CellBatch& source, uint64_t sample_every = 1) {
    RowVerifyOptions o;
    o.families = families_;
    o.now_ms = 1000;
    o.sample_every = sample_every;
    CellBatch sorted = source;
    sorted.Sort();
    CellRuns runs;
    EXPECT_TRUE(runs.Add(sorted).ok());
    RowVerifyStats by_runs;
    auto reader = Reader(o.now_ms);
    Status s = VerifyRows(&runs, reader.get(), o, nullptr, &by_runs);
    EXPECT_TRUE(s.ok()) << s.ToString();

    RowVerifyStats streamed;
    auto reader2 = Reader(o.now_ms);
    RowVerifySink sink(reader2.get(), o, nullptr, &streamed);
    for (size_t i = 0; i < sorted.size(); ++i) EXPECT_TRUE(sink.Put(sorted.Get(i)).ok());
    EXPECT_TRUE(sink.Close().ok());
    EXPECT_EQ(Summary(streamed), Summary(by_runs));
    return by_runs;
  }

  static std::string Summary(const RowVerifyStats& s) {
    std::string out = std::to_string(s.source_rows) + "/" + std::to_string(s.target_rows) + " " +
                      std::to_string(s.rows_equal) + " " + std::to_string(s.rows_missing) + " " +
                      std::to_string(s.rows_extra) + " " + std::to_string(s.rows_different) +
                      " cells " + std::to_string(s.source_cells) + "/" +
                      std::to_string(s.target_cells) + " " + std::to_string(s.cells_missing) + " " +
                      std::to_string(s.cells_extra) + " " + std::to_string(s.cells_changed);
    for (const auto* list : {&s.missing, &s.extra, &s.different}) {
      for (const RowMismatch& m : *list) {
        out += " [" + m.row + " " + std::to_string(m.cells);
        for (const auto& d : m.differences) out += "; " + d;
        out += "]";
      }
    }
    return out;
  }
};

TEST_F(RowVerifyTest, AStoreWrittenWithTheSourcesCellsIsEqual) {
  Write(Source());
  const RowVerifyStats s = Verify(Source());
  EXPECT_TRUE(s.equal());
  EXPECT_EQ(Summary(s), "5/5 5 0 0 0 cells 15/15 0 0 0");
}

TEST_F(RowVerifyTest, EachKindOfDifferenceIsNamedAndCounted) {
  CellBatch stored;
  const CellBatch source = Source();
  for (size_t i = 0; i < source.size(); ++i) {
    CellView c = source.Get(i);
    if (c.row == "r2") continue;                                // a row removed
    if (c.row == "r3" && c.family == "d") c.value = "changed";  // a cell changed
    if (c.row == "r4" && c.qualifier == "c2") continue;         // a nested cell removed
    stored.Add(c);
  }
  stored.Add("r4", "d", "old", 100, "gone from the source");  // a cell only in the target
  stored.Add("r9", "d", "v", 100, "extra");                   // a row only in the target
  stored.Add("r0", "n", "c1", 100, "extra");                  // another, before every row
  Write(stored);

  const RowVerifyStats s = Verify(source);
  EXPECT_FALSE(s.equal());
  EXPECT_EQ(s.rows_missing, 1u);
  EXPECT_EQ(s.rows_extra, 2u);
  EXPECT_EQ(s.rows_different, 2u);
  EXPECT_EQ(s.rows_equal, 2u);          // r1, r5
  EXPECT_EQ(s.cells_missing, 3u + 1u);  // r2's three, r4's n:c2
  EXPECT_EQ(s.cells_extra, 1u + 2u);    // r4's d:old, r9's and r0's cells
  EXPECT_EQ(s.cells_changed, 1u);
  EXPECT_EQ(Summary(s),
            "5/6 2 1 2 2 cells 15/14 4 3 1"
            " [r2 3]"
            " [r0 1] [r9 1]"
            " [r3 1; d:v @100: value 'changed' in the target, 'value3' from the source]"
            " [r4 2; d:old @100: only in the target ('gone from the source');"
            " n:c2 @100: missing in the target (the source gives '{\"qty\":2}')]");
}

TEST_F(RowVerifyTest, AnEmptyTableHasEveryRowMissingAndAnEmptySourceEveryRowExtra) {
  RowVerifyStats s = Verify(Source());
  EXPECT_EQ(Summary(s).rfind("5/0 0 5 0 0 cells 15/0 15 0 0 [r1 3]", 0), 0u) << Summary(s);
  Write(Source());
  s = Verify(CellBatch());
  EXPECT_EQ(s.rows_extra, 5u);
  EXPECT_EQ(s.cells_extra, 15u);
  EXPECT_EQ(s.source_rows, 0u);
}

TEST_F(RowVerifyTest, TheSourcesCellsAreReadAsTheStoreReadsItsOwn) {
  // Three versions of d:v (VERSIONS 1: a read returns the newest), a
  // DeleteFamily marker (replace mode) and one cell given twice (the last
  // counts): the store written with exactly these cells is equal.
  CellBatch source = Source();
  source.Add("r1", "d", "v", 99, "older");
  source.Add("r1", "d", "v", 98, "oldest");
  source.Add("r2", "d", "", 50, "", CellType::kDeleteFamily);
  source.Add("r3", "n", "c1", 100, "first");
  source.Add("r3", "n", "c1", 100, "{\"qty\":1}");
  CellBatch sorted = source;
  sorted.Sort();
  Write(sorted);
  RowVerifyStats s = Verify(source);
  EXPECT_TRUE(s.equal()) << Summary(s);
  EXPECT_EQ(s.source_cells, 15u);
  // The row "r3" n:c1 was given three times (Source, "first", the last).
  EXPECT_EQ(s.cells_replaced, 2u);
}

TEST_F(RowVerifyTest, ASampleComparesTheRowsWhoseKeyHashFallsInIt) {
  CellBatch source;
  for (int i = 0; i < 300; ++i) source.Add("row" + std::to_string(i), "d", "v", 100, "x");
  source.Sort();
  CellBatch stored;
  uint64_t sampled = 0, sampled_missing = 0;
  for (int i = 0; i < 300; ++i) {
    const std::string row = "row" + std::to_string(i);
    // The sample by its definition: XXH3-64 of the row key, a multiple of 7.
    const bool in = XXH3_64bits(row.data(), row.size()) % 7 == 0;
    sampled += in;
    if (i % 2 == 0) {
      stored.Add(row, "d", "v", 100, "x");
    } else {
      sampled_missing += in;
    }
  }
  Write(stored);
  ASSERT_GT(sampled, 20u);
  ASSERT_LT(sampled, 80u);
  const RowVerifyStats s = Verify(source, 7);
  EXPECT_EQ(s.source_rows, sampled);
  EXPECT_EQ(s.rows_missing, sampled_missing);
  EXPECT_EQ(s.rows_equal, sampled - sampled_missing);
  EXPECT_EQ(s.target_rows, sampled - sampled_missing);
  const RowVerifyStats full = Verify(source, 1);
  EXPECT_EQ(full.rows_missing, 150u);
}

TEST_F(RowVerifyTest, OnlyTheFirstRowsAreNamedButEveryRowIsCounted) {
  CellBatch source;
  for (int i = 0; i < 50; ++i) source.Add("row" + std::to_string(100 + i), "d", "v", 1, "x");
  RowVerifyOptions o;
  o.families = families_;
  o.max_listed = 4;
  source.Sort();
  CellRuns runs;
  ASSERT_TRUE(runs.Add(source).ok());
  RowVerifyStats s;
  auto reader = Reader(0);
  ASSERT_TRUE(VerifyRows(&runs, reader.get(), o, nullptr, &s).ok());
  EXPECT_EQ(s.rows_missing, 50u);
  ASSERT_EQ(s.missing.size(), 4u);
  EXPECT_EQ(s.missing[3].row, "row103");
}

TEST_F(RowVerifyTest, TheStreamedComparisonRefusesCellsOutOfOrder) {
  Write(Source());
  RowVerifyStats s;
  RowVerifyOptions o;
  o.families = families_;
  auto reader = Reader(0);
  RowVerifySink sink(reader.get(), o, nullptr, &s);
  ASSERT_TRUE(sink.Put({"r2", "d", "v", 100, CellType::kPut, "x"}).ok());
  Status st = sink.Put({"r1", "d", "v", 100, CellType::kPut, "x"});
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find(RowVerifySink::kOutOfOrder), std::string::npos);
  // Within a row too.
  RowVerifyStats s2;
  auto reader2 = Reader(0);
  RowVerifySink sink2(reader2.get(), o, nullptr, &s2);
  ASSERT_TRUE(sink2.Put({"r2", "n", "b", 100, CellType::kPut, "x"}).ok());
  EXPECT_EQ(sink2.Put({"r2", "n", "a", 100, CellType::kPut, "x"}).code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace widen
