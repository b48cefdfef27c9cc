// SyncRows over the embedded store's RowWriter and digest reader: rows
// written, left alone and removed as their digests say; a digest key whose
// row lost its cells (a repair) is still found and removed.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <leveldb/db.h>
#include <leveldb/write_batch.h>
#include <xxhash.h>

#include "common/cell_runs.h"
#include "store/leveldb_format_internal.h"
#include "store/leveldb_store.h"
#include "store/row_sync.h"

namespace widen {
namespace {

namespace lf = leveldb_format;

class RowSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "widen_rowsync_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/store";
    Open();
    CreateTable();
  }
  // Table t, family d of 3 versions.
  void CreateTable() {
    TableDescriptor d;
    d.table = "t";
    FamilyDescriptor f;
    f.name = "d";
    f.versions = 3;
    d.families.push_back(f);
    ASSERT_TRUE(store_->CreateTable(d).ok());
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void Open() {
    store_.reset();
    auto r = LevelDbStore::Open(path_, StoreOptions());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    store_ = std::move(r).value();
  }

  // One sync of `rows` (row -> value of d:v at ts 5, and d:w at ts 5 and 4).
  RowSyncStats Sync(const std::vector<std::pair<std::string, std::string>>& rows, bool from_cells) {
    CellBatch batch;
    for (const auto& [row, value] : rows) {
      batch.Add(row, "d", "v", 5, value);
      batch.Add(row, "d", "w", 5, "new");
      batch.Add(row, "d", "w", 4, "old");
    }
    batch.Sort();
    CellRuns runs;
    EXPECT_TRUE(runs.Add(batch).ok());
    auto reader = store_->NewDigestReader("t", from_cells);
    auto writer = store_->NewRowWriter("t");
    EXPECT_TRUE(reader.ok() && writer.ok());
    RowSyncStats stats;
    Status s = SyncRows(&runs, reader->get(), writer->get(), nullptr, &stats);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE((*writer)->Sync().ok());
    return stats;
  }

  // The table's cells as "row d:q@ts=value", in store order.
  std::vector<std::string> Cells() {
    ReadOptions ro;
    ro.max_versions = 100;
    auto reader = store_->NewReader("t", ro);
    EXPECT_TRUE(reader.ok());
    std::vector<std::string> out;
    for (; (*reader)->Valid(); (*reader)->Next()) {
      const CellView c = (*reader)->cell();
      out.push_back(std::string(c.row) + " " + std::string(c.family) + ":" +
                    std::string(c.qualifier) + "@" + std::to_string(c.timestamp_ms) + "=" +
                    std::string(c.value));
    }
    return out;
  }

  std::vector<std::string> DigestRows(bool from_cells) {
    auto reader = store_->NewDigestReader("t", from_cells);
    EXPECT_TRUE(reader.ok());
    std::vector<std::string> rows;
    for (; (*reader)->Valid(); (*reader)->Next()) rows.emplace_back((*reader)->row());
    return rows;
  }

  std::string dir_, path_;
  std::unique_ptr<LevelDbStore> store_;
};

TEST_F(RowSyncTest, RowsAreWrittenLeftAloneAndRemovedAsTheirDigestsSay) {
  RowSyncStats s = Sync({{"a", "1"}, {"b", "2"}, {std::string("c\0", 2), "3"}}, true);
  EXPECT_EQ(s.rows, 3u);
  EXPECT_EQ(s.rows_written, 3u);
  EXPECT_EQ(s.cells_put, 9u);
  // Unchanged: nothing written.
  s = Sync({{"a", "1"}, {"b", "2"}, {std::string("c\0", 2), "3"}}, false);
  EXPECT_EQ(s.rows_unchanged, 3u);
  EXPECT_EQ(s.rows_written + s.rows_deleted + s.cells_put + s.cells_deleted, 0u);
  // b changes, c goes, d comes: b's three old cells are removed (every
  // version), c's too.
  s = Sync({{"a", "1"}, {"b", "22"}, {"d", "4"}}, false);
  EXPECT_EQ(s.rows_unchanged, 1u);
  EXPECT_EQ(s.rows_written, 2u);
  EXPECT_EQ(s.rows_deleted, 1u);
  EXPECT_EQ(s.cells_deleted, 6u);
  EXPECT_EQ(Cells(), (std::vector<std::string>{"a d:v@5=1", "a d:w@5=new", "a d:w@4=old",
                                               "b d:v@5=22", "b d:w@5=new", "b d:w@4=old",
                                               "d d:v@5=4", "d d:w@5=new", "d d:w@4=old"}));
  EXPECT_EQ(DigestRows(false), (std::vector<std::string>{"a", "b", "d"}));
}

// A repair can lose a row's cells and keep its digest key: listing the rows
// from the cells must still find that key, so a sync rewrites or removes it.
TEST_F(RowSyncTest, ADigestWhoseRowLostItsCellsIsFoundFromTheCells) {
  Sync({{"a", "1"}, {"b", "2"}, {"c", "3"}}, true);
  store_.reset();
  {
    leveldb::DB* raw = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(leveldb::Options(), path_, &raw).ok());
    std::unique_ptr<leveldb::DB> db(raw);
    std::unique_ptr<leveldb::Iterator> it(db->NewIterator(leveldb::ReadOptions()));
    leveldb::WriteBatch lost;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      lf::DecodedCellKey k;
      const std::string key = it->key().ToString();
      if (lf::DecodeCellKey(key, &k) && k.row == "b") lost.Delete(key);
    }
    ASSERT_TRUE(db->Write(leveldb::WriteOptions(), &lost).ok());
  }
  Open();
  EXPECT_EQ(DigestRows(false), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(DigestRows(true), (std::vector<std::string>{"a", "b", "c"}));
  // The source still gives b as it was: from the cells, b is rewritten.
  RowSyncStats s = Sync({{"a", "1"}, {"b", "2"}, {"c", "3"}}, true);
  EXPECT_EQ(s.rows_written, 3u);
  EXPECT_EQ(Cells().size(), 9u);
  // And a digest whose row the source no longer gives goes too.
  s = Sync({{"a", "1"}}, false);
  EXPECT_EQ(s.rows_deleted, 2u);
  EXPECT_EQ(DigestRows(false), (std::vector<std::string>{"a"}));
}

// The streaming comparison: rows in key order are compared as they come; the
// first cell out of order is refused, and Close then removes nothing.
TEST_F(RowSyncTest, TheStreamingSinkComparesRowsInOrderAndStopsAtTheFirstOutOfOrder) {
  Sync({{"a", "1"}, {"b", "2"}, {"c", "3"}}, true);
  {
    auto reader = store_->NewDigestReader("t", false);
    auto writer = store_->NewRowWriter("t");
    ASSERT_TRUE(reader.ok() && writer.ok());
    RowSyncStats stats;
    RowSyncSink sink(reader->get(), writer->get(), nullptr, &stats);
    for (const char* row : {"a", "b"}) {
      const std::string value = row[0] == 'a' ? "1" : "22";
      ASSERT_TRUE(sink.Put(CellView{row, "d", "v", 5, CellType::kPut, value}).ok());
      ASSERT_TRUE(sink.Put(CellView{row, "d", "w", 5, CellType::kPut, "new"}).ok());
      ASSERT_TRUE(sink.Put(CellView{row, "d", "w", 4, CellType::kPut, "old"}).ok());
    }
    ASSERT_TRUE(sink.Close().ok());
    ASSERT_TRUE((*writer)->Sync().ok());
    EXPECT_EQ(stats.rows_unchanged, 1u);  // a
    EXPECT_EQ(stats.rows_written, 1u);    // b
    EXPECT_EQ(stats.rows_deleted, 1u);    // c
  }
  EXPECT_EQ(DigestRows(false), (std::vector<std::string>{"a", "b"}));
  auto reader = store_->NewDigestReader("t", false);
  auto writer = store_->NewRowWriter("t");
  ASSERT_TRUE(reader.ok() && writer.ok());
  RowSyncStats stats;
  RowSyncSink sink(reader->get(), writer->get(), nullptr, &stats);
  ASSERT_TRUE(sink.Put(CellView{"b", "d", "v", 5, CellType::kPut, "x"}).ok());
  Status s = sink.Put(CellView{"a", "d", "v", 5, CellType::kPut, "x"});
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find(RowSyncSink::kOutOfOrder), std::string::npos) << s.message();
  ASSERT_TRUE(sink.Close().ok());
  ASSERT_TRUE((*writer)->Sync().ok());
  EXPECT_EQ(stats.rows_deleted + stats.rows_written, 0u);
  EXPECT_EQ(DigestRows(false), (std::vector<std::string>{"a", "b"}));
}

// The row digest is the one docs/format.md ("Row digests") gives: XXH3-128
// over each cell's family, qualifier, timestamp, type and value, framed as
// the spec says, high half first, each half big-endian; the key digest the
// same without the values.
TEST(RowDigestTest, IsXxh3Of128BitsOverTheFramedCellsAsTheFormatSays) {
  auto u32 = [](std::string* out, uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out->push_back(static_cast<char>((v >> s) & 0xFF));
  };
  auto u64 = [](std::string* out, uint64_t v) {
    for (int s = 56; s >= 0; s -= 8) out->push_back(static_cast<char>((v >> s) & 0xFF));
  };
  struct C {
    std::string family, qualifier;
    int64_t ts;
    std::string value;
  };
  const std::vector<C> cells = {{"d", "name", 1700000000000, "Ann"},
                                {"d", std::string("q\0\xff", 3), 5, std::string(300, 'x')},
                                {"l", "", -1, ""}};
  CellBatch batch;
  std::string framed, keys_framed;
  for (const C& c : cells) {
    batch.Add("row", c.family, c.qualifier, c.ts, c.value);
    std::string coordinates;
    u32(&coordinates, static_cast<uint32_t>(c.family.size()));
    coordinates += c.family;
    u32(&coordinates, static_cast<uint32_t>(c.qualifier.size()));
    coordinates += c.qualifier;
    u64(&coordinates, static_cast<uint64_t>(c.ts));
    coordinates.push_back(static_cast<char>(CellType::kPut));
    framed += coordinates;
    keys_framed += coordinates;
    u32(&framed, static_cast<uint32_t>(c.value.size()));
    framed += c.value;
  }
  auto digest_of = [&](const std::string& bytes) {
    const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
    std::string out;
    u64(&out, h.high64);
    u64(&out, h.low64);
    return out;
  };
  const std::string expected = digest_of(framed);
  EXPECT_EQ(RowDigest(batch), expected);
  // The key digest: the same framing without the values.
  EXPECT_EQ(RowKeysDigest(batch), digest_of(keys_framed));
  EXPECT_EQ(RowDigest(CellBatch()).size(), kRowDigestBytes);
  // One byte more in a value changes it.
  CellBatch other;
  for (const C& c : cells) other.Add("row", c.family, c.qualifier, c.ts, c.value + "!");
  EXPECT_NE(RowDigest(other), expected);
}

// A row's record holds its digest and its key digest (docs/format.md, "Row
// digests"). A rewrite whose cells keep their coordinates puts them over the
// old ones; one whose coordinates change deletes the cells that went; a
// record of an older widen (16 bytes, no key digest) is read first, so its
// stale cells go too.
TEST_F(RowSyncTest, TheKeyDigestSaysWhenARowsCellsKeepTheirCoordinates) {
  auto record = [&](const std::string& row) {
    std::string key;
    lf::AppendRowDigestPrefix(&key, "t");
    key += row;
    return key;
  };
  Sync({{"a", "1"}, {"b", "2"}}, true);
  {
    // The record: RowDigest + RowKeysDigest of the cells Sync wrote.
    CellBatch a;
    a.Add("a", "d", "v", 5, "1");
    a.Add("a", "d", "w", 5, "new");
    a.Add("a", "d", "w", 4, "old");
    a.Sort();
    store_.reset();
    leveldb::DB* raw = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(leveldb::Options(), path_, &raw).ok());
    std::unique_ptr<leveldb::DB> db(raw);
    std::string value;
    ASSERT_TRUE(db->Get(leveldb::ReadOptions(), record("a"), &value).ok());
    EXPECT_EQ(value, RowDigest(a) + RowKeysDigest(a));
    // b: a record as an older widen wrote it, and a cell no sync wrote
    // (d:x), which only a read of the row finds.
    ASSERT_TRUE(db->Get(leveldb::ReadOptions(), record("b"), &value).ok());
    leveldb::WriteBatch older;
    older.Put(record("b"), value.substr(0, kRowDigestBytes));
    std::string stray;
    lf::AppendCellKeyPrefix(&stray, "t");
    lf::AppendEscapedTerminated(&stray, "b");
    lf::AppendCellKeyAfterRow(&stray, CellView{"b", "d", "x", 5, CellType::kPut, "stray"});
    older.Put(stray, "stray");
    ASSERT_TRUE(db->Write(leveldb::WriteOptions(), &older).ok());
  }
  Open();
  // New values, same coordinates: a is put over, b is read (its stray cell
  // counted and removed).
  RowSyncStats s = Sync({{"a", "10"}, {"b", "20"}}, false);
  EXPECT_EQ(s.rows_written, 2u);
  EXPECT_EQ(s.cells_put, 6u);
  EXPECT_EQ(s.cells_deleted, 3u + 4u);
  EXPECT_EQ(Cells(), (std::vector<std::string>{"a d:v@5=10", "a d:w@5=new", "a d:w@4=old",
                                               "b d:v@5=20", "b d:w@5=new", "b d:w@4=old"}));
  // Other coordinates: a loses d:w@4 and gains d:z; the key digest differs,
  // so the row is read and d:w@4 goes.
  {
    CellBatch batch;
    batch.Add("a", "d", "v", 5, "10");
    batch.Add("a", "d", "w", 5, "new");
    batch.Add("a", "d", "z", 5, "z");
    batch.Sort();
    CellRuns runs;
    ASSERT_TRUE(runs.Add(batch).ok());
    auto reader = store_->NewDigestReaderOf("t", {"a"});
    auto writer = store_->NewRowWriter("t");
    ASSERT_TRUE(reader.ok() && writer.ok());
    RowSyncStats stats;
    ASSERT_TRUE(SyncRows(&runs, reader->get(), writer->get(), nullptr, &stats).ok());
    ASSERT_TRUE((*writer)->Sync().ok());
    EXPECT_EQ(stats.rows_written, 1u);
  }
  EXPECT_EQ(Cells(), (std::vector<std::string>{"a d:v@5=10", "a d:w@5=new", "a d:z@5=z",
                                               "b d:v@5=20", "b d:w@5=new", "b d:w@4=old"}));
}

// ReplaceRow leaves exactly the new cells, whatever the old ones were and
// however the writer's batches fall: with every row written at once
// (batch_bytes 1) and with all rows in one batch; a row replaced again after
// its batch was written loses the cells the first replace put.
TEST_F(RowSyncTest, ReplaceRowLeavesExactlyTheNewCellsAcrossBatches) {
  for (size_t batch_bytes : {size_t{1}, size_t{4} << 20}) {
    SCOPED_TRACE(batch_bytes);
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    StoreOptions o;
    o.batch_bytes = batch_bytes;
    auto opened = LevelDbStore::Open(path_, o);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    CreateTable();

    auto replace = [&](RowWriter* w, const std::string& row,
                       const std::vector<std::pair<std::string, std::string>>& cells) {
      CellBatch b;
      for (const auto& [q, v] : cells) b.Add(row, "d", q, 5, v);
      b.Sort();
      Status s = w->ReplaceRow(row, b, cells.empty() ? "" : "digest");
      EXPECT_TRUE(s.ok()) << s.ToString();
    };
    {
      auto w = store_->NewRowWriter("t");
      ASSERT_TRUE(w.ok());
      replace(w->get(), "a", {{"p", "1"}, {"q", "1"}, {"r", "1"}});
      replace(w->get(), "b", {{"q", "1"}});
      ASSERT_TRUE((*w)->Sync().ok());
    }
    auto w = store_->NewRowWriter("t");
    ASSERT_TRUE(w.ok());
    // a: p goes, q changes, r stays, s comes; b: q goes, p comes.
    replace(w->get(), "a", {{"q", "2"}, {"r", "1"}, {"s", "2"}});
    replace(w->get(), "b", {{"p", "2"}});
    ASSERT_TRUE((*w)->Flush().ok());
    // Again after the write: the cells just put are the old ones now.
    replace(w->get(), "a", {{"p", "3"}});
    replace(w->get(), "b", {});
    ASSERT_TRUE((*w)->Sync().ok());
    EXPECT_EQ((*w)->stats().cells_put, 3u + 1u + 1u);
    EXPECT_EQ((*w)->stats().cells_deleted, 3u + 1u + 3u + 1u);
    EXPECT_EQ(Cells(), (std::vector<std::string>{"a d:p@5=3"}));
  }
}

// The sync index: entries under several prefixes come prefix by prefix in
// the order given, in key order under each, once per prefix that holds them;
// false from the callback stops the scan.
TEST_F(RowSyncTest, ScanIndexOfSeveralPrefixes) {
  auto w = store_->NewRowWriter("t");
  ASSERT_TRUE(w.ok());
  for (const char* k : {"a2", "a1", "b1", "c1", "c2"}) ASSERT_TRUE((*w)->PutIndex(k, k).ok());
  ASSERT_TRUE((*w)->Flush().ok());
  auto scan = [&](const std::vector<std::string>& prefixes, size_t stop_after) {
    std::vector<std::string> seen;
    Status s = store_->ScanIndex(
        "t", prefixes, [&](size_t i, std::string_view key, std::string_view value) {
          seen.push_back(std::to_string(i) + ":" + std::string(key) + "=" + std::string(value));
          return seen.size() < stop_after;
        });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return seen;
  };
  EXPECT_EQ(scan({"a", "c", "zz"}, 100),
            (std::vector<std::string>{"0:a1=a1", "0:a2=a2", "1:c1=c1", "1:c2=c2"}));
  EXPECT_EQ(scan({"c2", "a", "a1"}, 100),
            (std::vector<std::string>{"0:c2=c2", "1:a1=a1", "1:a2=a2", "2:a1=a1"}));
  EXPECT_EQ(scan({"a", "c"}, 3), (std::vector<std::string>{"0:a1=a1", "0:a2=a2", "1:c1=c1"}));
  EXPECT_TRUE(scan({}, 100).empty());
  std::vector<std::string> one;
  ASSERT_TRUE(store_
                  ->ScanIndex("t", "b",
                              [&](std::string_view key, std::string_view) {
                                one.emplace_back(key);
                                return true;
                              })
                  .ok());
  EXPECT_EQ(one, (std::vector<std::string>{"b1"}));
  EXPECT_EQ(store_
                ->ScanIndex("nope", {"a"},
                            [](size_t, std::string_view, std::string_view) { return true; })
                .code(),
            StatusCode::kNotFound);
}

// The digests of listed rows: only the listed rows that have one, in order,
// as they were when the reader was made.
TEST_F(RowSyncTest, DigestsOfListedRows) {
  Sync({{"a", "1"}, {"b", "2"}, {"d", "4"}}, true);
  auto w = store_->NewRowWriter("t");
  ASSERT_TRUE(w.ok());
  auto r = store_->NewDigestReaderOf("t", {"a", "c", "d", "e"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE((*w)->ReplaceRow("d", CellBatch(), "").ok());  // after the reader: not seen
  ASSERT_TRUE((*w)->Sync().ok());
  std::vector<std::string> rows;
  std::string first_digest;
  for (; (*r)->Valid(); (*r)->Next()) {
    rows.emplace_back((*r)->row());
    EXPECT_FALSE((*r)->digest().empty());
    if (first_digest.empty()) first_digest = (*r)->digest();
  }
  EXPECT_TRUE((*r)->status().ok());
  EXPECT_EQ(rows, (std::vector<std::string>{"a", "d"}));
  auto all = store_->NewDigestReader("t", false);
  ASSERT_TRUE(all.ok());
  ASSERT_TRUE((*all)->Valid());
  EXPECT_EQ((*all)->row(), "a");
  EXPECT_EQ((*all)->digest(), first_digest);
}

}  // namespace
}  // namespace widen
