// widen sync into HBase: row digests and the sync index in the sync table,
// and the RowWriter that replaces rows in rounds of requests (the protocol
// and its reasons are in store/hbase_store.h; the layout in docs/format.md,
// "HBase"):
//
//   sync table row key:  table full name | 0x00 | tag | rest
//     tag 'd' (0x64)  rest = the row key    cell s:v = 0x01 | digest (0, 16 or 32 bytes;
//                                                      0: the row is being written)
//     tag 'i' (0x69)  rest = the index key  cell s:v = 0x01 | the entry's value
//     tag 'c' (0x63)  rest = ""             cell s:c = the table's counter (i64 BE,
//                                                      HBase's increment)
//
// Every cell of the sync table is written, and deleted, at a timestamp of
// the table's counter: (counter << 32) + n, the counter taken by one
// increment per RowWriter (and again after 2^32 - 1 timestamps). So each
// write of a writer is later than every write before it, whatever the
// clocks, and a request HBase applies late (a re-sent one whose first copy
// was still under way) cannot mask or replace a later one.
#include <algorithm>
#include <cassert>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/cell_check.h"
#include "store/hbase_client_internal.h"
#include "store/hbase_store.h"
#include "store/hbase_sync_internal.h"

namespace widen {

namespace {

using hbase_internal::HBaseConnection;
namespace thrift2 = hbase_internal::thrift2;

constexpr char kFamily[] = "s";
constexpr char kValueQualifier[] = "v";
constexpr char kCounterQualifier[] = "c";
constexpr char kDigestTag = 'd';
constexpr char kIndexTag = 'i';
constexpr char kCounterTag = 'c';
constexpr char kValueFormat = 0x01;
// Rows per getMultiple; ranges per MultiRowRangeFilter scan.
constexpr size_t kRowsPerGet = 1000;
constexpr size_t kRangesPerScan = 1000;
// Timestamps one counter value gives: (counter << 32) + 1 .. + kStepsPerCount.
constexpr uint64_t kStepsPerCount = (uint64_t{1} << 32) - 1;
// Sync-table rows per page of a scan.
constexpr int32_t kIndexRowsPerPage = 1000;

std::string Quoted(std::string_view bytes) { return "'" + ToStringBinary(bytes) + "'"; }

thrift2::TTableName ThriftName(const std::string& full_name) {
  thrift2::TTableName t;
  std::string ns, table;
  SplitTableName(full_name, &ns, &table);
  t.__set_ns(ns);
  t.__set_qualifier(table);
  return t;
}

// The first key after every key that starts with `prefix`; "" when none.
std::string PrefixStop(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xFF) prefix.pop_back();
  if (!prefix.empty()) {
    prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  }
  return prefix;
}

std::string SyncPrefix(const std::string& table, char tag) {
  std::string p = table;
  p.push_back('\0');
  p.push_back(tag);
  return p;
}

// The sync table's row key of `rest` under `prefix`, or InvalidArgument
// when it would be longer than HBase takes.
Result<std::string> SyncRowKey(const std::string& prefix, std::string_view rest,
                               const std::string& table, const char* what) {
  if (prefix.size() + rest.size() > kMaxRowKeyBytes) {
    return Status::InvalidArgument(fmt::format(
        "table '{}': the {} of a {}-byte row key does not fit the sync table's row key (at most "
        "{} bytes of row key for this table)",
        table, what, rest.size(), kMaxRowKeyBytes - prefix.size()));
  }
  std::string key = prefix;
  key.append(rest);
  return key;
}

// The 1-byte format, then `bytes`: a sync table value.
std::string SyncValue(std::string_view bytes) {
  std::string v(1, kValueFormat);
  v.append(bytes);
  return v;
}

// ---------------------------------------------------------------------------
// Protocol buffers, for the one filter Thrift2 takes only as bytes.

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void AppendBytesField(std::string* out, int field, std::string_view bytes) {
  AppendVarint(out, static_cast<uint64_t>(field) << 3 | 2);
  AppendVarint(out, bytes.size());
  out->append(bytes);
}

void AppendBoolField(std::string* out, int field, bool v) {
  AppendVarint(out, static_cast<uint64_t>(field) << 3);
  out->push_back(v ? 1 : 0);
}

// HBase's FilterProtos.Filter holding a MultiRowRangeFilter of the ranges
// [start, stop) ("" stop: to the end): what TScan.filterBytes takes.
std::string MultiRowRangeFilter(const std::vector<std::pair<std::string, std::string>>& ranges) {
  std::string list;
  for (const auto& [start, stop] : ranges) {
    std::string range;  // RowRange
    AppendBytesField(&range, 1, start);
    AppendBoolField(&range, 2, true);
    AppendBytesField(&range, 3, stop);
    AppendBoolField(&range, 4, false);
    AppendBytesField(&list, 1, range);  // MultiRowRangeFilter.row_range_list
  }
  std::string filter;  // Filter
  AppendBytesField(&filter, 1, "org.apache.hadoop.hbase.filter.MultiRowRangeFilter");
  AppendBytesField(&filter, 2, list);
  return filter;
}

// ---------------------------------------------------------------------------
// Reading: scans paged with getScannerResults (each page a scanner of its
// own, so a page can be fetched again after any failure).

class Pager {
 public:
  /// Rows of `table` that `scan` selects, `rows` per round trip. `conn` is
  /// borrowed.
  Pager(HBaseConnection* conn, std::string table, thrift2::TScan scan, int32_t rows,
        std::string what)
      : conn_(conn),
        table_(std::move(table)),
        scan_(std::move(scan)),
        rows_(rows),
        what_(std::move(what)) {}

  /// The next row, or null at the end or on an error (status()). The
  /// result is valid until the next call.
  const thrift2::TResult* Next() {
    if (at_ < page_.size()) return &page_[at_++];
    if (done_ || !status_.ok()) return nullptr;
    page_.clear();
    at_ = 0;
    status_ = conn_->Retry(what_, [&](thrift2::THBaseServiceClient& c) {
      c.getScannerResults(page_, table_, scan_, rows_);
    });
    if (!status_.ok()) return nullptr;
    if (page_.size() < static_cast<size_t>(rows_)) done_ = true;
    if (!page_.empty()) scan_.__set_startRow(page_.back().row + std::string(1, '\0'));
    if (page_.empty()) return nullptr;
    return &page_[at_++];
  }

  Status status() const { return status_; }

 private:
  HBaseConnection* const conn_;
  const std::string table_;
  thrift2::TScan scan_;
  const int32_t rows_;
  const std::string what_;
  std::vector<thrift2::TResult> page_;
  size_t at_ = 0;
  bool done_ = false;
  Status status_;
};

thrift2::TColumn ValueColumn() {
  thrift2::TColumn column;
  column.family = kFamily;
  column.__set_qualifier(kValueQualifier);
  return column;
}

// The cell s:v of a sync table row, if it has one.
const std::string* ValueOf(const thrift2::TResult& r) {
  for (const auto& v : r.columnValues) {
    if (v.family == kFamily && v.qualifier == kValueQualifier) return &v.value;
  }
  return nullptr;
}

Status Malformed(const std::string& sync_table, const std::string& table, const std::string& row) {
  return Status::DataLoss(fmt::format(
      "table '{}': the sync table '{}' holds a value of row {} that widen did not write; run "
      "widen sync --full to write the table's digests and index anew",
      table, sync_table, Quoted(row)));
}

// Rows with their recorded digests (the sync table's 'd' rows of the
// table), merged with, from_cells, the table's own rows (digests empty).
class HBaseDigestReader final : public RowDigestReader {
 public:
  HBaseDigestReader(std::unique_ptr<HBaseConnection> conn, std::string sync_table, bool sync_exists,
                    std::string table, bool from_cells, int32_t rows)
      : conn_(std::move(conn)),
        sync_table_(std::move(sync_table)),
        table_(std::move(table)),
        from_cells_(from_cells),
        prefix_(SyncPrefix(table_, kDigestTag)) {
    if (sync_exists) {
      thrift2::TScan scan;
      scan.__set_startRow(prefix_);
      scan.__set_stopRow(PrefixStop(prefix_));
      scan.__set_columns({ValueColumn()});
      digests_ = std::make_unique<Pager>(conn_.get(), sync_table_, scan, rows,
                                         "reading the row digests of table " + Quoted(table_));
    }
    if (from_cells) {
      thrift2::TScan scan;
      scan.__set_filterString("FirstKeyOnlyFilter() AND KeyOnlyFilter()");
      cells_ = std::make_unique<Pager>(conn_.get(), table_, scan, rows,
                                       "listing the rows of table " + Quoted(table_));
    }
    LoadDigest();
    LoadCellRow();
    Pick();
  }

  bool Valid() const override { return valid_; }
  void Next() override {
    assert(valid_);
    if (have_digest_ && digest_row_ == row_) LoadDigest();
    if (have_cell_row_ && cell_row_ == row_) LoadCellRow();
    Pick();
  }
  std::string_view row() const override { return row_; }
  std::string_view digest() const override { return digest_; }
  Status status() const override { return status_; }

 private:
  void LoadDigest() {
    have_digest_ = false;
    if (digests_ == nullptr || !status_.ok()) return;
    const thrift2::TResult* r = digests_->Next();
    if (r == nullptr) {
      status_ = digests_->status();
      return;
    }
    const std::string* v = ValueOf(*r);
    if (r->row.compare(0, prefix_.size(), prefix_) != 0 || v == nullptr || v->empty() ||
        (*v)[0] != kValueFormat) {
      status_ = Malformed(sync_table_, table_, r->row);
      return;
    }
    digest_row_.assign(r->row, prefix_.size());
    digest_value_.assign(*v, 1);
    have_digest_ = true;
  }

  void LoadCellRow() {
    have_cell_row_ = false;
    if (cells_ == nullptr || !status_.ok()) return;
    const thrift2::TResult* r = cells_->Next();
    if (r == nullptr) {
      status_ = cells_->status();
      return;
    }
    cell_row_ = r->row;
    have_cell_row_ = true;
  }

  void Pick() {
    valid_ = false;
    if (!status_.ok() || (!have_digest_ && !have_cell_row_)) return;
    if (have_cell_row_ && (!have_digest_ || cell_row_ <= digest_row_)) {
      row_ = cell_row_;
    } else {
      row_ = digest_row_;
    }
    digest_.clear();
    if (!from_cells_ && have_digest_ && digest_row_ == row_) digest_ = digest_value_;
    valid_ = true;
  }

  const std::unique_ptr<HBaseConnection> conn_;
  const std::string sync_table_, table_;
  const bool from_cells_;
  const std::string prefix_;
  std::unique_ptr<Pager> digests_, cells_;  // null: not read
  bool have_digest_ = false, have_cell_row_ = false;
  std::string digest_row_, digest_value_, cell_row_;
  std::string row_, digest_;
  bool valid_ = false;
  Status status_;
};

// The rows of a list that have a digest entry, each with its digest:
// getMultiple of kRowsPerGet rows at a time.
class HBaseListedDigestReader final : public RowDigestReader {
 public:
  HBaseListedDigestReader(std::unique_ptr<HBaseConnection> conn, std::string sync_table,
                          bool sync_exists, std::string table, std::vector<std::string> rows)
      : conn_(std::move(conn)),
        sync_table_(std::move(sync_table)),
        table_(std::move(table)),
        prefix_(SyncPrefix(table_, kDigestTag)),
        rows_(sync_exists ? std::move(rows) : std::vector<std::string>()) {
    Load();
  }

  bool Valid() const override { return status_.ok() && at_ < found_.size(); }
  void Next() override {
    ++at_;
    if (at_ == found_.size()) Load();
  }
  std::string_view row() const override { return found_[at_].first; }
  std::string_view digest() const override { return found_[at_].second; }
  Status status() const override { return status_; }

 private:
  // Reads chunks of the list until one has a digest entry, or the list ends.
  void Load() {
    found_.clear();
    at_ = 0;
    while (found_.empty() && next_ < rows_.size() && status_.ok()) {
      const size_t end = std::min(rows_.size(), next_ + kRowsPerGet);
      std::vector<thrift2::TGet> gets;
      for (size_t i = next_; i < end; ++i) {
        Result<std::string> key = SyncRowKey(prefix_, rows_[i], table_, "digest");
        if (!key.ok()) {
          status_ = key.status();
          return;
        }
        thrift2::TGet g;
        g.row = std::move(*key);
        g.__set_columns({ValueColumn()});
        gets.push_back(std::move(g));
      }
      std::vector<thrift2::TResult> results;
      status_ = conn_->Retry(
          "reading row digests of table " + Quoted(table_),
          [&](thrift2::THBaseServiceClient& c) { c.getMultiple(results, sync_table_, gets); });
      if (!status_.ok()) return;
      for (size_t i = 0; i < results.size() && next_ + i < end; ++i) {
        const std::string* v = ValueOf(results[i]);
        if (v == nullptr) continue;
        if (v->empty() || (*v)[0] != kValueFormat) {
          status_ = Malformed(sync_table_, table_, gets[i].row);
          return;
        }
        found_.emplace_back(rows_[next_ + i], v->substr(1));
      }
      next_ = end;
    }
  }

  const std::unique_ptr<HBaseConnection> conn_;
  const std::string sync_table_, table_, prefix_;
  const std::vector<std::string> rows_;
  size_t next_ = 0;                                         // the first row not yet read
  std::vector<std::pair<std::string, std::string>> found_;  // of the last chunk read
  size_t at_ = 0;
  Status status_;
};

// ---------------------------------------------------------------------------
// Writing.

// Timestamps of the sync table's cells for one writer (see the top).
class SyncClock {
 public:
  SyncClock(HBaseConnection* conn, std::string sync_table, std::string table)
      : conn_(conn), sync_table_(std::move(sync_table)), table_(std::move(table)) {}

  Result<int64_t> Next() {
    if (steps_ == 0) {
      thrift2::TIncrement inc;
      inc.row = SyncPrefix(table_, kCounterTag);
      thrift2::TColumnIncrement column;
      column.family = kFamily;
      column.qualifier = kCounterQualifier;
      column.__set_amount(1);
      inc.columns.push_back(column);
      thrift2::TResult result;
      // Not idempotent, and need not be: a second increment after a lost
      // answer only skips a range.
      WIDEN_RETURN_IF_ERROR(conn_->Retry(
          "taking timestamps for the sync table of table " + Quoted(table_),
          [&](thrift2::THBaseServiceClient& c) { c.increment(result, sync_table_, inc); }));
      uint64_t counter = 0;
      for (const auto& v : result.columnValues) {
        if (v.qualifier == kCounterQualifier && v.value.size() == 8) {
          counter = DecodeFixed64BE(v.value.data());
        }
      }
      if (counter == 0 || counter >= (uint64_t{1} << 31)) {
        return Status::DataLoss(fmt::format(
            "table '{}': the counter of the sync table '{}' is {}, not one widen counted", table_,
            sync_table_, counter));
      }
      base_ = counter << 32;
      steps_ = kStepsPerCount;
    }
    --steps_;
    return static_cast<int64_t>(base_ + (kStepsPerCount - steps_));
  }

 private:
  HBaseConnection* const conn_;
  const std::string sync_table_, table_;
  uint64_t base_ = 0;
  uint64_t steps_ = 0;  // timestamps left in the range
};

// One stored cell's coordinates as a read gives them.
struct Stored {
  std::string family, qualifier;
  int64_t timestamp_ms = 0;
};

class HBaseRowWriter final : public RowWriter {
 public:
  HBaseRowWriter(std::unique_ptr<HBaseConnection> conn, std::string table,
                 const TableDescriptor& descriptor, std::string sync_table,
                 const HBaseOptions& options, size_t batch_bytes)
      : conn_(std::move(conn)),
        table_(std::move(table)),
        sync_table_(std::move(sync_table)),
        options_(options),
        batch_bytes_(batch_bytes),
        checker_(descriptor, Limits(options)),
        digest_prefix_(SyncPrefix(table_, kDigestTag)),
        index_prefix_(SyncPrefix(table_, kIndexTag)),
        clock_(conn_.get(), sync_table_, table_) {}

  Status ReplaceRow(std::string_view row, const CellBatch& cells, std::string_view digest,
                    bool same_keys) override {
    for (size_t i = 0; i < cells.size(); ++i) {
      const CellView c = cells.Get(i);
      if (c.row != row) {
        return Status::Internal("table " + Quoted(table_) + ": a cell of row " + Quoted(c.row) +
                                " given for row " + Quoted(row));
      }
      WIDEN_RETURN_IF_ERROR(checker_.Check(c));
    }
    WIDEN_RETURN_IF_ERROR(SyncRowKey(digest_prefix_, row, table_, "digest").status());
    if (pending_rows_.count(std::string(row)) > 0) WIDEN_RETURN_IF_ERROR(Flush());
    Pending p;
    p.row.assign(row);
    p.first = cells_.size();
    p.count = cells.size();
    p.digest.assign(digest);
    p.same_keys = same_keys && !cells.empty();
    for (size_t i = 0; i < cells.size(); ++i) {
      const CellView c = cells.Get(i);
      cells_.Add(c);
      stats_.bytes_put += c.row.size() + c.family.size() + c.qualifier.size() + c.value.size();
    }
    stats_.cells_put += cells.size();
    if (!cells.empty()) ++stats_.rows_written;
    if (p.same_keys) stats_.cells_deleted += cells.size();  // put over, one for one
    pending_rows_.insert(p.row);
    rows_.push_back(std::move(p));
    if (rows_.size() >= options_.sync_batch_rows || cells_.size() >= options_.request_cells ||
        cells_.bytes() >= batch_bytes_) {
      return Flush();
    }
    return Status::OK();
  }

  Status Sync() override { return Flush(); }

  const RowWriterStats& stats() const override { return stats_; }

  Status PutIndex(std::string_view key, std::string_view value) override {
    WIDEN_ASSIGN_OR_RETURN(std::string k, SyncRowKey(index_prefix_, key, table_, "index entry"));
    auto it = index_.find(k);
    if (it != index_.end() && !it->second.has_value()) WIDEN_RETURN_IF_ERROR(Flush());
    index_[std::move(k)] = std::string(value);
    return index_.size() >= options_.request_cells ? Flush() : Status::OK();
  }

  Status DeleteIndex(std::string_view key) override {
    WIDEN_ASSIGN_OR_RETURN(std::string k, SyncRowKey(index_prefix_, key, table_, "index entry"));
    auto it = index_.find(k);
    if (it != index_.end() && it->second.has_value()) WIDEN_RETURN_IF_ERROR(Flush());
    index_[std::move(k)] = std::nullopt;
    return index_.size() >= options_.request_cells ? Flush() : Status::OK();
  }

  Status ClearIndex() override {
    WIDEN_RETURN_IF_ERROR(Flush());
    thrift2::TScan scan;
    scan.__set_startRow(index_prefix_);
    scan.__set_stopRow(PrefixStop(index_prefix_));
    scan.__set_columns({ValueColumn()});
    scan.__set_filterString("KeyOnlyFilter()");
    Pager pager(conn_.get(), sync_table_, scan, kIndexRowsPerPage,
                "reading the sync index of table " + Quoted(table_));
    std::vector<std::string> keys;
    for (const thrift2::TResult* r; (r = pager.Next()) != nullptr;) {
      keys.push_back(r->row);
      if (keys.size() >= static_cast<size_t>(kIndexRowsPerPage)) {
        WIDEN_RETURN_IF_ERROR(DeleteSyncRows(keys));
        keys.clear();
      }
    }
    WIDEN_RETURN_IF_ERROR(pager.status());
    return DeleteSyncRows(keys);
  }

  // Sends everything buffered, in rounds (store/hbase_store.h).
  Status Flush() override {
    if (rows_.empty() && index_.empty()) return Status::OK();
    Status s = Round();
    rows_.clear();
    pending_rows_.clear();
    cells_.Clear();
    index_.clear();
    return s;
  }

 private:
  struct Pending {
    std::string row;
    size_t first = 0, count = 0;  // its cells in cells_
    std::string digest;
    bool same_keys = false;
  };

  static CellLimits Limits(const HBaseOptions& o) {
    CellLimits l;
    l.max_cell_bytes = o.max_cell_bytes;
    l.negative_timestamps = false;
    return l;
  }

  std::string What(const char* doing) const {
    return fmt::format("{} table {} (HBase at {})", doing, Quoted(table_), conn_->address());
  }

  Status Round() {
    // What the rows whose coordinates may change hold now, and the requests
    // that give each row its new cells: a row that cannot be written is
    // refused before anything of the round is.
    std::vector<size_t> read;
    for (size_t i = 0; i < rows_.size(); ++i) {
      if (!rows_[i].same_keys) read.push_back(i);
    }
    std::vector<std::vector<Stored>> stored(rows_.size());
    WIDEN_RETURN_IF_ERROR(ReadStored(read, &stored));
    std::vector<thrift2::TDelete> deletes;
    std::vector<thrift2::TPut> puts;
    for (size_t i = 0; i < rows_.size(); ++i) {
      WIDEN_RETURN_IF_ERROR(Plan(rows_[i], stored[i], &deletes, &puts));
    }
    for (size_t i = 0; i < rows_.size(); ++i) {
      stats_.cells_deleted += stored[i].size();
      if (rows_[i].count == 0 && !stored[i].empty()) ++stats_.rows_deleted;
    }

    // (1) New index entries, and every row of the round marked as being
    // written, before any of its cells change.
    std::vector<std::pair<std::string, std::string>> early;
    for (const auto& [key, value] : index_) {
      if (value.has_value()) early.emplace_back(key, SyncValue(*value));
    }
    for (const Pending& p : rows_) early.emplace_back(digest_prefix_ + p.row, SyncValue(""));
    WIDEN_RETURN_IF_ERROR(PutSyncRows(early));

    // (2) Delete markers for what the new rows lack, then (3) the new cells.
    WIDEN_RETURN_IF_ERROR(SendDeletes(std::move(deletes)));
    WIDEN_RETURN_IF_ERROR(SendPuts(puts));

    // (4) The digests, (5) the digests of removed rows and the removed
    // index entries: after the cells they describe.
    std::vector<std::pair<std::string, std::string>> digests;
    std::vector<std::string> gone;
    for (const Pending& p : rows_) {
      if (p.count > 0 && !p.digest.empty()) {
        digests.emplace_back(digest_prefix_ + p.row, SyncValue(p.digest));
      } else {
        gone.push_back(digest_prefix_ + p.row);
      }
    }
    for (const auto& [key, value] : index_) {
      if (!value.has_value()) gone.push_back(key);
    }
    WIDEN_ASSIGN_OR_RETURN(const int64_t late, clock_.Next());
    WIDEN_RETURN_IF_ERROR(PutSyncRows(digests, late));
    return DeleteSyncRows(gone, late);
  }

  // getMultiple (keys only, every version) of the rows `which` of rows_.
  Status ReadStored(const std::vector<size_t>& which, std::vector<std::vector<Stored>>* out) {
    for (size_t from = 0; from < which.size(); from += kRowsPerGet) {
      const size_t end = std::min(which.size(), from + kRowsPerGet);
      std::vector<thrift2::TGet> gets;
      for (size_t i = from; i < end; ++i) {
        thrift2::TGet g;
        g.row = rows_[which[i]].row;
        g.__set_maxVersions(std::numeric_limits<int32_t>::max());
        g.__set_filterString("KeyOnlyFilter()");
        gets.push_back(std::move(g));
      }
      std::vector<thrift2::TResult> results;
      WIDEN_RETURN_IF_ERROR(conn_->Retry(
          What("reading rows of"),
          [&](thrift2::THBaseServiceClient& c) { c.getMultiple(results, table_, gets); }));
      for (size_t i = from; i < end && i - from < results.size(); ++i) {
        std::vector<Stored>& cells = (*out)[which[i]];
        for (const thrift2::TColumnValue& v : results[i - from].columnValues) {
          cells.push_back(Stored{v.family, v.qualifier, v.__isset.timestamp ? v.timestamp : 0});
        }
      }
    }
    return Status::OK();
  }

  // The requests that make `p`'s row hold its new cells, given what it
  // holds (`stored`, in HBase's order: family, qualifier, newest first).
  // A stored column the row no longer has is deleted (a DeleteColumns
  // marker at its newest stored timestamp: every version at or below it);
  // a column whose stored versions the new cells do not all put again is
  // deleted too, before the new versions are put (HBase shows them:
  // NEW_VERSION_BEHAVIOR); a column put again with the same versions is
  // only put over. No DeleteFamily marker: with NEW_VERSION_BEHAVIOR HBase
  // 2.6 does not apply one to the column of the empty qualifier. A marker
  // on the empty qualifier itself would make HBase fail every read of the
  // row once a newer cell of that column is written (the same bug), so a
  // row whose empty-qualifier column would need one is refused
  // (InvalidArgument naming the table, row and column).
  Status Plan(const Pending& p, const std::vector<Stored>& stored,
              std::vector<thrift2::TDelete>* deletes, std::vector<thrift2::TPut>* puts) const {
    std::map<std::pair<std::string_view, std::string_view>, std::set<int64_t>> fresh;
    thrift2::TPut put;
    put.row = p.row;
    for (size_t i = p.first; i < p.first + p.count; ++i) {
      const CellView c = cells_.Get(i);
      if (c.type == CellType::kPut) {
        fresh[{c.family, c.qualifier}].insert(c.timestamp_ms);
        thrift2::TColumnValue v;
        v.family.assign(c.family);
        v.qualifier.assign(c.qualifier);
        v.value.assign(c.value);
        v.__set_timestamp(c.timestamp_ms);
        put.columnValues.push_back(std::move(v));
        continue;
      }
      // A delete marker the row carries (replace mode), as a sink writes it
      // (it masks only the row's old cells, which go anyway).
      thrift2::TDelete d;
      d.row = p.row;
      thrift2::TColumn column;
      column.family.assign(c.family);
      if (c.type != CellType::kDeleteFamily) column.__set_qualifier(std::string(c.qualifier));
      column.__set_timestamp(c.timestamp_ms);
      d.__set_columns({std::move(column)});
      d.__set_deleteType(c.type == CellType::kDelete         ? thrift2::TDeleteType::DELETE_COLUMN
                         : c.type == CellType::kDeleteColumn ? thrift2::TDeleteType::DELETE_COLUMNS
                                                             : thrift2::TDeleteType::DELETE_FAMILY);
      deletes->push_back(std::move(d));
    }
    if (!put.columnValues.empty()) puts->push_back(std::move(put));

    thrift2::TDelete gone;
    gone.row = p.row;
    for (size_t i = 0; i < stored.size();) {
      // One stored column: [i, j).
      size_t j = i + 1;
      while (j < stored.size() && stored[j].family == stored[i].family &&
             stored[j].qualifier == stored[i].qualifier) {
        ++j;
      }
      auto it = fresh.find({stored[i].family, stored[i].qualifier});
      bool kept = it != fresh.end();
      int64_t newest = stored[i].timestamp_ms;
      for (size_t k = i; k < j; ++k) {
        newest = std::max(newest, stored[k].timestamp_ms);
        kept = kept && it->second.count(stored[k].timestamp_ms) > 0;
      }
      if (!kept) {
        if (stored[i].qualifier.empty()) {
          return Status::InvalidArgument(fmt::format(
              "table '{}', row {}: the cells of the empty qualifier '{}:' would have to be "
              "removed, which HBase cannot do safely in a family with NEW_VERSION_BEHAVIOR (which "
              "widen sync needs: HBase 2.6 then fails every read of the row once a newer cell of "
              "that column is written); map the column to a qualifier that is not empty",
              table_, Quoted(p.row), stored[i].family));
        }
        thrift2::TColumn column;
        column.family = stored[i].family;
        column.__set_qualifier(stored[i].qualifier);
        column.__set_timestamp(newest);
        gone.columns.push_back(std::move(column));
      }
      i = j;
    }
    if (!gone.columns.empty()) {
      gone.__isset.columns = true;
      gone.__set_deleteType(thrift2::TDeleteType::DELETE_COLUMNS);
      deletes->push_back(std::move(gone));
    }
    return Status::OK();
  }

  // deleteMultiple of the target's markers, in requests of at most
  // request_cells columns; what HBase did not apply is sent again.
  Status SendDeletes(std::vector<thrift2::TDelete> all) {
    size_t from = 0;
    while (from < all.size()) {
      std::vector<thrift2::TDelete> request;
      size_t columns = 0;
      while (from < all.size() && (request.empty() || columns < options_.request_cells)) {
        columns += all[from].columns.size();
        request.push_back(std::move(all[from++]));
      }
      WIDEN_RETURN_IF_ERROR(DeleteMultiple(table_, std::move(request), "deleting cells of"));
    }
    return Status::OK();
  }

  Status DeleteMultiple(const std::string& table, std::vector<thrift2::TDelete> request,
                        const char* doing) {
    const std::string what = What(doing);
    while (!request.empty()) {
      std::vector<thrift2::TDelete> failed;
      WIDEN_RETURN_IF_ERROR(conn_->Retry(what, [&](thrift2::THBaseServiceClient& c) {
        c.deleteMultiple(failed, table, request);
      }));
      if (failed.size() == request.size()) {
        return Status::Unavailable(
            fmt::format("{}: HBase applied none of {} deletes", what, request.size()));
      }
      request = std::move(failed);
    }
    return Status::OK();
  }

  // putMultiple of the target's new cells, in requests of at most
  // request_cells cells and request_bytes bytes (a row's cells may span
  // requests: each cell has its timestamp, so any order gives the row).
  Status SendPuts(const std::vector<thrift2::TPut>& all) {
    std::vector<thrift2::TPut> request;
    size_t cells = 0, bytes = 0;
    auto send = [&]() -> Status {
      if (request.empty()) return Status::OK();
      WIDEN_RETURN_IF_ERROR(
          conn_->Retry(What(fmt::format("writing {} cells to", cells).c_str()),
                       [&](thrift2::THBaseServiceClient& c) { c.putMultiple(table_, request); }));
      request.clear();
      cells = bytes = 0;
      return Status::OK();
    };
    for (const thrift2::TPut& p : all) {
      thrift2::TPut part;
      part.row = p.row;
      for (const thrift2::TColumnValue& v : p.columnValues) {
        part.columnValues.push_back(v);
        ++cells;
        bytes += p.row.size() + v.family.size() + v.qualifier.size() + v.value.size();
        if (cells >= options_.request_cells || bytes >= options_.request_bytes) {
          request.push_back(std::move(part));
          WIDEN_RETURN_IF_ERROR(send());
          part = thrift2::TPut();
          part.row = p.row;
        }
      }
      if (!part.columnValues.empty()) request.push_back(std::move(part));
    }
    return send();
  }

  // Puts sync-table rows (key, value) at timestamp `ts` (0: a new one).
  Status PutSyncRows(const std::vector<std::pair<std::string, std::string>>& rows, int64_t ts = 0) {
    if (rows.empty()) return Status::OK();
    if (ts == 0) {
      WIDEN_ASSIGN_OR_RETURN(ts, clock_.Next());
    }
    for (size_t from = 0; from < rows.size(); from += options_.request_cells) {
      std::vector<thrift2::TPut> request;
      for (size_t i = from; i < std::min(rows.size(), from + options_.request_cells); ++i) {
        thrift2::TPut p;
        p.row = rows[i].first;
        thrift2::TColumnValue v;
        v.family = kFamily;
        v.qualifier = kValueQualifier;
        v.value = rows[i].second;
        v.__set_timestamp(ts);
        p.columnValues.push_back(std::move(v));
        request.push_back(std::move(p));
      }
      WIDEN_RETURN_IF_ERROR(conn_->Retry(
          What("writing the sync table entries of"),
          [&](thrift2::THBaseServiceClient& c) { c.putMultiple(sync_table_, request); }));
    }
    return Status::OK();
  }

  // Deletes sync-table rows (their cell s:v, every version at or below
  // `ts`; 0: a new timestamp).
  Status DeleteSyncRows(const std::vector<std::string>& keys, int64_t ts = 0) {
    if (keys.empty()) return Status::OK();
    if (ts == 0) {
      WIDEN_ASSIGN_OR_RETURN(ts, clock_.Next());
    }
    for (size_t from = 0; from < keys.size(); from += options_.request_cells) {
      std::vector<thrift2::TDelete> request;
      for (size_t i = from; i < std::min(keys.size(), from + options_.request_cells); ++i) {
        thrift2::TDelete d;
        d.row = keys[i];
        thrift2::TColumn column = ValueColumn();
        column.__set_timestamp(ts);
        d.__set_columns({std::move(column)});
        d.__set_deleteType(thrift2::TDeleteType::DELETE_COLUMNS);
        request.push_back(std::move(d));
      }
      WIDEN_RETURN_IF_ERROR(
          DeleteMultiple(sync_table_, std::move(request), "removing sync table entries of"));
    }
    return Status::OK();
  }

  const std::unique_ptr<HBaseConnection> conn_;
  const std::string table_, sync_table_;
  const HBaseOptions options_;
  const size_t batch_bytes_;
  CellChecker checker_;
  const std::string digest_prefix_, index_prefix_;
  SyncClock clock_;
  RowWriterStats stats_;
  // The round being gathered.
  std::vector<Pending> rows_;
  std::set<std::string> pending_rows_;
  CellBatch cells_;
  std::map<std::string, std::optional<std::string>> index_;  // sync row key -> value, or delete
};

}  // namespace

// ---------------------------------------------------------------------------

Result<bool> HBaseStore::SyncTableExists() {
  std::lock_guard<std::mutex> lock(mu_);
  bool exists = false;
  WIDEN_RETURN_IF_ERROR(conn_->Retry(
      "looking up table " + Quoted(hbase_.sync_table), [&](thrift2::THBaseServiceClient& c) {
        exists = c.tableExists(ThriftName(CanonicalTableName(hbase_.sync_table)));
      }));
  return exists;
}

Result<std::unique_ptr<RowDigestReader>> HBaseStore::NewDigestReader(const std::string& full_name,
                                                                     bool from_cells) {
  const std::string name = CanonicalTableName(full_name);
  {
    std::lock_guard<std::mutex> lock(mu_);
    WIDEN_RETURN_IF_ERROR(CheckExists(name));
  }
  WIDEN_ASSIGN_OR_RETURN(bool exists, SyncTableExists());
  return std::unique_ptr<RowDigestReader>(
      new HBaseDigestReader(NewConnection(), CanonicalTableName(hbase_.sync_table), exists, name,
                            from_cells, std::max(hbase_.scan_rows, 1000)));
}

Result<std::unique_ptr<RowDigestReader>> HBaseStore::NewDigestReaderOf(
    const std::string& full_name, std::vector<std::string> rows) {
  const std::string name = CanonicalTableName(full_name);
  {
    std::lock_guard<std::mutex> lock(mu_);
    WIDEN_RETURN_IF_ERROR(CheckExists(name));
  }
  WIDEN_ASSIGN_OR_RETURN(bool exists, SyncTableExists());
  return std::unique_ptr<RowDigestReader>(new HBaseListedDigestReader(
      NewConnection(), CanonicalTableName(hbase_.sync_table), exists, name, std::move(rows)));
}

Status HBaseStore::ScanIndex(
    const std::string& full_name, const std::vector<std::string>& prefixes,
    const std::function<bool(size_t prefix, std::string_view key, std::string_view value)>& fn) {
  const std::string name = CanonicalTableName(full_name);
  {
    std::lock_guard<std::mutex> lock(mu_);
    WIDEN_RETURN_IF_ERROR(CheckExists(name));
  }
  WIDEN_ASSIGN_OR_RETURN(bool exists, SyncTableExists());
  if (!exists || prefixes.empty()) return Status::OK();
  const std::string sync_table = CanonicalTableName(hbase_.sync_table);
  const std::string base = SyncPrefix(name, kIndexTag);
  auto conn = NewConnection();
  const std::string what = "reading the sync index of table " + Quoted(name);
  // Calls fn for each entry of one scan, prefix `i` moving forward through
  // `order` (indexes into prefixes, sorted); false when fn said stop.
  auto run = [&](thrift2::TScan scan, const std::vector<size_t>& order, bool* more) -> Status {
    Pager pager(conn.get(), sync_table, std::move(scan), std::max(hbase_.scan_rows, 1000), what);
    size_t at = 0;
    for (const thrift2::TResult* r; *more && (r = pager.Next()) != nullptr;) {
      const std::string_view key = std::string_view(r->row).substr(base.size());
      while (at < order.size() &&
             key.substr(0, prefixes[order[at]].size()) != prefixes[order[at]] &&
             std::string_view(prefixes[order[at]]) < key) {
        ++at;
      }
      if (at == order.size()) break;
      if (key.substr(0, prefixes[order[at]].size()) != prefixes[order[at]]) continue;
      const std::string* v = ValueOf(*r);
      if (v == nullptr || v->empty() || (*v)[0] != kValueFormat) {
        return Malformed(sync_table, name, r->row);
      }
      *more = fn(order[at], key, std::string_view(*v).substr(1));
    }
    return pager.status();
  };
  bool sorted = true;
  for (size_t i = 1; i < prefixes.size() && sorted; ++i) {
    sorted = prefixes[i - 1] < prefixes[i] &&
             prefixes[i].compare(0, prefixes[i - 1].size(), prefixes[i - 1]) != 0;
  }
  bool more = true;
  if (!sorted) {
    // Prefix by prefix, as asked: one scan each.
    for (size_t i = 0; i < prefixes.size() && more; ++i) {
      thrift2::TScan scan;
      scan.__set_startRow(base + prefixes[i]);
      const std::string stop = PrefixStop(base + prefixes[i]);
      if (!stop.empty()) scan.__set_stopRow(stop);
      scan.__set_columns({ValueColumn()});
      WIDEN_RETURN_IF_ERROR(run(std::move(scan), {i}, &more));
    }
    return Status::OK();
  }
  for (size_t from = 0; from < prefixes.size() && more; from += kRangesPerScan) {
    const size_t end = std::min(prefixes.size(), from + kRangesPerScan);
    std::vector<size_t> order;
    std::vector<std::pair<std::string, std::string>> ranges;
    for (size_t i = from; i < end; ++i) {
      order.push_back(i);
      ranges.emplace_back(base + prefixes[i], PrefixStop(base + prefixes[i]));
    }
    thrift2::TScan scan;
    scan.__set_startRow(ranges.front().first);
    if (!ranges.back().second.empty()) scan.__set_stopRow(ranges.back().second);
    scan.__set_columns({ValueColumn()});
    if (ranges.size() > 1) scan.__set_filterBytes(MultiRowRangeFilter(ranges));
    WIDEN_RETURN_IF_ERROR(run(std::move(scan), order, &more));
  }
  return Status::OK();
}

Result<std::unique_ptr<RowWriter>> HBaseStore::NewRowWriter(const std::string& full_name) {
  WIDEN_ASSIGN_OR_RETURN(TableDescriptor d, DescribeTable(full_name));
  const std::string name = d.FullName();
  const std::string sync_table = CanonicalTableName(hbase_.sync_table);
  WIDEN_ASSIGN_OR_RETURN(bool exists, SyncTableExists());
  if (!exists) {
    TableDescriptor s;
    SplitTableName(sync_table, &s.name_space, &s.table);
    FamilyDescriptor f;
    f.name = kFamily;
    s.families.push_back(f);
    WIDEN_RETURN_IF_ERROR(CreateTable(s));
  }
  {
    // Delete markers that mask only what was written before them, on every
    // family (tables of an older widen lack it): one modifyTable.
    std::lock_guard<std::mutex> lock(mu_);
    thrift2::TTableDescriptor t;
    WIDEN_RETURN_IF_ERROR(conn_->Retry(
        "describing table " + Quoted(name),
        [&](thrift2::THBaseServiceClient& c) { c.getTableDescriptor(t, ThriftName(name)); }));
    bool changed = false;
    for (thrift2::TColumnFamilyDescriptor& c : t.columns) {
      auto it = c.attributes.find(std::string(hbase_internal::kNewVersionBehavior));
      if (it != c.attributes.end() && it->second == "true") continue;
      c.attributes[std::string(hbase_internal::kNewVersionBehavior)] = "true";
      c.__isset.attributes = true;
      changed = true;
    }
    if (changed) {
      WIDEN_RETURN_IF_ERROR(
          conn_->Retry("setting NEW_VERSION_BEHAVIOR on the families of table " + Quoted(name),
                       [&](thrift2::THBaseServiceClient& c) { c.modifyTable(t); }));
    }
  }
  return std::unique_ptr<RowWriter>(
      new HBaseRowWriter(NewConnection(), name, d, sync_table, hbase_, options_.batch_bytes));
}

}  // namespace widen
