#include "store/hbase_store.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/bytes.h"
#include "store/hbase_client_internal.h"
#include "store/hbase_sync_internal.h"
#include "store/state_store.h"
#include "store/table_state.h"

namespace widen {

namespace {

using hbase_internal::ConnectionOptions;
using hbase_internal::HBaseConnection;
namespace thrift2 = hbase_internal::thrift2;

constexpr std::string_view kScheme = "hbase://";
// HConstants.FOREVER: the TTL of a family whose cells never expire (seconds).
constexpr int64_t kForeverSeconds = std::numeric_limits<int32_t>::max();
// Reopening a scanner that failed mid-way: at most this many times in a row.
constexpr int kMaxScannerReopens = 5;
// Listing a table's regions while one has no server: attempts (about 60 s).
constexpr int kRegionListAttempts = 40;

std::string Quoted(std::string_view bytes) { return "'" + ToStringBinary(bytes) + "'"; }

thrift2::TTableName ThriftName(const std::string& full_name) {
  thrift2::TTableName t;
  std::string ns, table;
  SplitTableName(full_name, &ns, &table);
  t.__set_ns(ns);
  t.__set_qualifier(table);
  return t;
}

// An enum value by its name in the generated _VALUES_TO_NAMES map.
template <typename Enum>
bool EnumByName(const std::map<int, const char*>& names, const std::string& name, Enum* out) {
  for (const auto& [value, text] : names) {
    if (name == text) {
      *out = static_cast<Enum>(value);
      return true;
    }
  }
  return false;
}

std::string EnumName(const std::map<int, const char*>& names, int value) {
  auto it = names.find(value);
  return it == names.end() ? "UNKNOWN(" + std::to_string(value) + ")" : std::string(it->second);
}

Result<thrift2::TTableDescriptor> ToThrift(const TableDescriptor& d) {
  thrift2::TTableDescriptor t;
  t.__set_tableName(ThriftName(d.FullName()));
  std::vector<thrift2::TColumnFamilyDescriptor> families;
  for (const FamilyDescriptor& f : d.families) {
    const std::string where = "table " + Quoted(d.FullName()) + ", column family '" + f.name + "'";
    if (f.ttl_seconds > kForeverSeconds) {
      return Status::InvalidArgument(where + ": TTL " + std::to_string(f.ttl_seconds) +
                                     " s is above HBase's largest, " +
                                     std::to_string(kForeverSeconds) + " s");
    }
    thrift2::TColumnFamilyDescriptor c;
    c.__set_name(f.name);
    c.__set_maxVersions(f.versions);
    c.__set_minVersions(f.min_versions);
    c.__set_timeToLive(f.ttl_seconds > 0 ? static_cast<int32_t>(f.ttl_seconds)
                                         : static_cast<int32_t>(kForeverSeconds));
    c.__set_blockSize(f.block_size_bytes);
    c.__set_inMemory(f.in_memory);
    thrift2::TCompressionAlgorithm::type compression;
    thrift2::TBloomFilterType::type bloom;
    thrift2::TDataBlockEncoding::type encoding;
    if (!EnumByName(thrift2::_TCompressionAlgorithm_VALUES_TO_NAMES, f.compression, &compression)) {
      return Status::InvalidArgument(where + ": COMPRESSION '" + f.compression +
                                     "' is unknown to HBase");
    }
    if (!EnumByName(thrift2::_TBloomFilterType_VALUES_TO_NAMES, f.bloom_filter, &bloom)) {
      return Status::InvalidArgument(where + ": BLOOMFILTER '" + f.bloom_filter +
                                     "' is unknown to HBase");
    }
    if (!EnumByName(thrift2::_TDataBlockEncoding_VALUES_TO_NAMES, f.data_block_encoding,
                    &encoding)) {
      return Status::InvalidArgument(where + ": DATA_BLOCK_ENCODING '" + f.data_block_encoding +
                                     "' is unknown to HBase");
    }
    c.__set_compressionType(compression);
    c.__set_bloomnFilterType(bloom);  // sic: the IDL's spelling
    c.__set_dataBlockEncoding(encoding);
    families.push_back(std::move(c));
  }
  t.__set_columns(std::move(families));
  std::map<std::string, std::string> attributes(d.metadata.begin(), d.metadata.end());
  t.__set_attributes(std::move(attributes));
  return t;
}

TableDescriptor FromThrift(const thrift2::TTableDescriptor& t) {
  TableDescriptor d;
  d.name_space = t.tableName.__isset.ns && !t.tableName.ns.empty() ? t.tableName.ns : "default";
  d.table = t.tableName.qualifier;
  for (const thrift2::TColumnFamilyDescriptor& c : t.columns) {
    FamilyDescriptor f;
    f.name = c.name;
    if (c.__isset.maxVersions) f.versions = c.maxVersions;
    if (c.__isset.minVersions) f.min_versions = c.minVersions;
    if (c.__isset.timeToLive && c.timeToLive != kForeverSeconds) f.ttl_seconds = c.timeToLive;
    if (c.__isset.blockSize) f.block_size_bytes = c.blockSize;
    if (c.__isset.inMemory) f.in_memory = c.inMemory;
    if (c.__isset.compressionType) {
      f.compression = EnumName(thrift2::_TCompressionAlgorithm_VALUES_TO_NAMES, c.compressionType);
    }
    if (c.__isset.bloomnFilterType) {
      f.bloom_filter = EnumName(thrift2::_TBloomFilterType_VALUES_TO_NAMES, c.bloomnFilterType);
    }
    if (c.__isset.dataBlockEncoding) {
      f.data_block_encoding =
          EnumName(thrift2::_TDataBlockEncoding_VALUES_TO_NAMES, c.dataBlockEncoding);
    }
    d.families.push_back(std::move(f));
  }
  for (const auto& [k, v] : t.attributes) d.metadata[k] = v;
  return d;
}

// REQUIRES: t is a delete marker type.
thrift2::TDeleteType::type DeleteTypeOf(CellType t) {
  switch (t) {
    case CellType::kDelete:
      return thrift2::TDeleteType::DELETE_COLUMN;  // one version
    case CellType::kDeleteColumn:
      return thrift2::TDeleteType::DELETE_COLUMNS;  // versions at or below the timestamp
    default:
      return thrift2::TDeleteType::DELETE_FAMILY;
  }
}

ConnectionOptions ConnectionOptionsOf(const HBaseOptions& o) {
  ConnectionOptions c;
  c.connect_timeout_ms = o.connect_timeout_ms;
  c.rpc_timeout_ms = o.rpc_timeout_ms;
  c.retry_budget_ms = o.retry_budget_ms;
  return c;
}

// The table's split points as HBase has them now: its regions' start keys.
Status RegionStartKeys(HBaseConnection* conn, const std::string& name,
                       std::vector<std::string>* out) {
  std::vector<thrift2::THRegionLocation> regions;
  const std::string what = "listing the regions of table " + Quoted(name);
  // A region with no server at the moment makes HBase 2.6's gateway fail
  // the call (a NullPointerException: an internal error). In a table being
  // enabled or enabled (just created by another client — perhaps one
  // killed since —, a region splitting or moving) it is assigned within
  // seconds, so ask again; a disabled table's regions stay without one
  // (ListTables leaves such a table out).
  for (int attempt = 0;; ++attempt) {
    Status s = conn->Retry(
        what, [&](thrift2::THBaseServiceClient& c) { c.getAllRegionLocations(regions, name); });
    if (s.ok()) break;
    const bool unassigned =
        s.code() == StatusCode::kInvalidArgument &&
        s.message().find("Internal error processing getAllRegionLocations") != std::string::npos;
    if (!unassigned || attempt >= kRegionListAttempts) return s;
    bool disabled = false;
    Status looked = conn->Retry(
        "looking up table " + Quoted(name),
        [&](thrift2::THBaseServiceClient& c) { disabled = c.isTableDisabled(ThriftName(name)); });
    if (!looked.ok() || disabled) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(200 * std::min(attempt + 1, 10)));
  }
  out->clear();
  for (const auto& r : regions) {
    if (r.regionInfo.__isset.startKey && !r.regionInfo.startKey.empty()) {
      out->push_back(r.regionInfo.startKey);
    }
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return Status::OK();
}

Status GetDescriptor(HBaseConnection* conn, const std::string& name,
                     thrift2::TTableDescriptor* out) {
  return conn->Retry("describing table " + Quoted(name), [&](thrift2::THBaseServiceClient& c) {
    c.getTableDescriptor(*out, ThriftName(name));
  });
}

// Creates the namespace when it is missing (or finds it created meanwhile).
Status EnsureNamespace(HBaseConnection* conn, const std::string& name_space) {
  if (name_space == "default") return Status::OK();
  for (int attempt = 0;; ++attempt) {
    std::vector<std::string> names;
    WIDEN_RETURN_IF_ERROR(conn->Retry(
        "listing namespaces", [&](thrift2::THBaseServiceClient& c) { c.listNamespaces(names); }));
    if (std::find(names.begin(), names.end(), name_space) != names.end()) return Status::OK();
    thrift2::TNamespaceDescriptor d;
    d.name = name_space;
    Status s = conn->Call("creating namespace '" + name_space + "'",
                          [&](thrift2::THBaseServiceClient& c) { c.createNamespace(d); });
    // Created, or by someone else meanwhile (FailedPrecondition: it
    // exists); after a lost answer, look again.
    if (s.ok() || s.code() == StatusCode::kFailedPrecondition) return Status::OK();
    if (s.code() != StatusCode::kUnavailable || attempt >= 3) return s;
  }
}

// HBaseStore::CreateTable on `conn` (see there); `url` names HBase in messages.
Status CreateTableOn(HBaseConnection* conn, const std::string& url,
                     const TableDescriptor& descriptor) {
  WIDEN_RETURN_IF_ERROR(descriptor.Validate());
  WIDEN_ASSIGN_OR_RETURN(thrift2::TTableDescriptor wanted, ToThrift(descriptor));
  const std::string name = descriptor.FullName();
  WIDEN_RETURN_IF_ERROR(EnsureNamespace(conn, descriptor.name_space));
  const std::string where = "HBase at '" + url + "'";
  for (int attempt = 0;; ++attempt) {
    bool exists = false;
    WIDEN_RETURN_IF_ERROR(conn->Retry(
        "looking up table " + Quoted(name),
        [&](thrift2::THBaseServiceClient& c) { exists = c.tableExists(wanted.tableName); }));
    if (exists) {
      thrift2::TTableDescriptor stored;
      WIDEN_RETURN_IF_ERROR(GetDescriptor(conn, name, &stored));
      return CheckSameTable(FromThrift(stored), descriptor, where);
    }
    // Not idempotent: after an error the loop looks at what HBase has.
    Status s = conn->Call("creating table " + Quoted(name), [&](thrift2::THBaseServiceClient& c) {
      c.createTable(wanted, descriptor.split_points);
    });
    if (s.ok()) return s;
    // Another client creating the namespace at the same moment (another
    // shard of a sharded load): the master may say it exists before a
    // table can be created in it. Wait a little and try again.
    const bool namespace_pending = s.code() == StatusCode::kNotFound &&
                                   s.message().find("NamespaceNotFound") != std::string::npos;
    if (namespace_pending && attempt < 20) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100 * (attempt + 1)));
      WIDEN_RETURN_IF_ERROR(EnsureNamespace(conn, descriptor.name_space));
      continue;
    }
    const bool may_exist =
        s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kFailedPrecondition;
    if (!may_exist || attempt >= 3) return s;
  }
}

// ---------------------------------------------------------------------------
// Sink: sorted batches become putMultiple (and deleteMultiple) requests,
// sent by a pool of writers, each on its own connection.

// One request: the cells of consecutive rows, in key order.
struct WriteRequest {
  std::vector<thrift2::TPut> puts;
  std::vector<thrift2::TDelete> deletes;  // delete markers of the same rows
  size_t cells = 0;
  std::string first_row, last_row;
};

// Sends `request` on `conn`, re-sending it on retryable errors (every cell
// has its timestamp: a repeat writes the same cells). Puts go first, then
// the delete markers (a marker masks the puts at or below its timestamp
// whenever it arrives).
Status SendRequest(HBaseConnection* conn, const std::string& table, WriteRequest* request) {
  const std::string what = "writing " + std::to_string(request->cells) + " cells to table " +
                           Quoted(table) + " (HBase at " + conn->address() + ")";
  Status s;
  if (!request->puts.empty()) {
    s = conn->Retry(what,
                    [&](thrift2::THBaseServiceClient& c) { c.putMultiple(table, request->puts); });
  }
  while (s.ok() && !request->deletes.empty()) {
    std::vector<thrift2::TDelete> failed;
    s = conn->Retry(what, [&](thrift2::THBaseServiceClient& c) {
      c.deleteMultiple(failed, table, request->deletes);
    });
    if (s.ok() && failed.size() == request->deletes.size()) {
      s = Status::Unavailable(what + ": HBase applied none of " +
                              std::to_string(request->deletes.size()) + " delete markers");
    }
    if (s.ok()) request->deletes = std::move(failed);
  }
  return s;
}

// Up to N requests in flight, one per writer thread and connection. The
// cells of one row keep their order: a request that starts with the row the
// one before it ended with (a row wider than a request) is sent only after
// that one was answered. Requests of distinct rows may be applied in any
// order, which changes nothing in HBase: every cell has its own timestamp,
// and no two requests in flight hold cells of the same row.
class RequestPool {
 public:
  RequestPool(std::vector<std::unique_ptr<HBaseConnection>> conns, std::string table)
      : conns_(std::move(conns)), table_(std::move(table)) {}

  ~RequestPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      queue_.clear();  // requests not sent yet are dropped; those in flight end
      cv_.notify_all();
    }
    for (auto& t : threads_) t.join();
  }

  // Hands `request` to a writer, waiting while every writer is busy (and,
  // for a request that continues the previous one's last row, until that
  // one is answered). Returns the first error of any request so far
  // instead; `request` is then not sent.
  Status Submit(WriteRequest request) {
    std::unique_lock<std::mutex> lock(mu_);
    if (threads_.empty()) {
      for (size_t i = 0; i < conns_.size(); ++i) {
        threads_.emplace_back([this, i] { WriterLoop(conns_[i].get()); });
      }
    }
    const bool continues = submitted_ > 0 && request.first_row == last_row_;
    const uint64_t previous = submitted_;  // the id of the request before this one
    cv_.wait(lock, [&] {
      return !status_.ok() || ((!continues || answered_.count(previous) > 0 || previous <= done_) &&
                               queue_.size() + busy_ < conns_.size());
    });
    if (!status_.ok()) return status_;
    last_row_ = request.last_row;
    queue_.emplace_back(++submitted_, std::move(request));
    cv_.notify_all();
    return Status::OK();
  }

  // Waits until every request submitted was answered; the first error.
  Status Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return queue_.empty() && busy_ == 0; });
    return status_;
  }

 private:
  void WriterLoop(HBaseConnection* conn) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_
      auto [id, request] = std::move(queue_.front());
      queue_.pop_front();
      if (!status_.ok()) {  // after an error nothing more is sent
        MarkAnswered(id);
        continue;
      }
      ++busy_;
      lock.unlock();
      Status s = SendRequest(conn, table_, &request);
      request = WriteRequest();  // its memory goes before the lock is taken
      lock.lock();
      --busy_;
      if (status_.ok() && !s.ok()) status_ = s;
      MarkAnswered(id);
      cv_.notify_all();
    }
  }

  // Records that request `id` was answered. REQUIRES: mu_ held.
  void MarkAnswered(uint64_t id) {
    answered_.insert(id);
    // Every id up to done_ was answered: keep only those above it.
    while (answered_.count(done_ + 1) > 0) answered_.erase(++done_);
  }

  const std::vector<std::unique_ptr<HBaseConnection>> conns_;
  const std::string table_;
  std::vector<std::thread> threads_;
  std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  std::deque<std::pair<uint64_t, WriteRequest>> queue_;  // submitted, not taken yet
  size_t busy_ = 0;                                      // requests being sent
  uint64_t submitted_ = 0;                               // the last request's id (from 1)
  std::string last_row_;                                 // the last request's last row
  uint64_t done_ = 0;                                    // every request up to this id was answered
  std::set<uint64_t> answered_;                          // answered requests above done_
  bool stop_ = false;
  Status status_;  // the first error
};

class HBaseSink final : public BufferedCellSink {
 public:
  HBaseSink(std::vector<std::unique_ptr<HBaseConnection>> conns, std::string name,
            TableDescriptor descriptor, size_t batch_bytes, const HBaseOptions& options)
      : BufferedCellSink(batch_bytes, /*background=*/true),
        name_(std::move(name)),
        descriptor_(std::move(descriptor)),
        options_(options),
        pool_(std::move(conns), name_) {
    CellLimits limits;
    limits.max_cell_bytes = options_.max_cell_bytes;
    limits.negative_timestamps = false;
    SetTable(descriptor_, limits);
  }

  ~HBaseSink() override { StopWriter(); }

 protected:
  // Every cell passed the checks (SetTable) before its batch got here.
  Status WriteSorted(const CellBatch& batch) override {
    for (size_t i = 0; i < batch.size(); ++i) {
      const CellView c = batch.Get(i);
      if (request_.cells == 0) request_.first_row.assign(c.row);
      if (c.type == CellType::kPut) {
        auto& puts = request_.puts;
        if (puts.empty() || puts.back().row != c.row) {
          puts.emplace_back();
          puts.back().row.assign(c.row);
        }
        thrift2::TColumnValue v;
        v.family.assign(c.family);
        v.qualifier.assign(c.qualifier);
        v.value.assign(c.value);
        v.__set_timestamp(c.timestamp_ms);
        puts.back().columnValues.push_back(std::move(v));
      } else {
        thrift2::TDelete d;
        d.row.assign(c.row);
        thrift2::TColumn column;
        column.family.assign(c.family);
        if (c.type != CellType::kDeleteFamily) column.__set_qualifier(std::string(c.qualifier));
        column.__set_timestamp(c.timestamp_ms);
        d.__set_columns({std::move(column)});
        d.__set_timestamp(c.timestamp_ms);
        // The gateway picks the kind of marker from deleteType alone (a
        // column without qualifier under DELETE_COLUMNS deletes the column
        // with the empty qualifier, not the family).
        d.__set_deleteType(DeleteTypeOf(c.type));
        request_.deletes.push_back(std::move(d));
      }
      ++request_.cells;
      bytes_ += c.row.size() + c.family.size() + c.qualifier.size() + c.value.size();
      if (request_.cells >= options_.request_cells || bytes_ >= options_.request_bytes) {
        request_.last_row.assign(c.row);
        WIDEN_RETURN_IF_ERROR(Submit());
      }
    }
    // The rest waits for the next batch (it may continue the last row),
    // or for WaitWritten.
    if (request_.cells > 0) request_.last_row.assign(batch.Get(batch.size() - 1).row);
    return Status::OK();
  }

  // Sends what is left and waits for every request.
  Status WaitWritten() override {
    Status s = request_.cells > 0 ? Submit() : Status::OK();
    Status waited = pool_.Wait();
    return s.ok() ? waited : s;
  }

  // A request HBase acknowledged is durable: the region server wrote its
  // cells to its WAL before answering (a table's default durability,
  // SYNC_WAL, which widen's tables keep).
  Status SyncWritten() override { return Status::OK(); }

 private:
  Status Submit() {
    WriteRequest request = std::move(request_);
    request_ = WriteRequest();
    bytes_ = 0;
    return pool_.Submit(std::move(request));
  }

  const std::string name_;
  const TableDescriptor descriptor_;
  const HBaseOptions options_;
  WriteRequest request_;  // the request being built
  size_t bytes_ = 0;      // its row + family + qualifier + value bytes
  RequestPool pool_;
};

// ---------------------------------------------------------------------------
// Reader: a scanner, its results flattened into cells.

class HBaseReader final : public CellReader {
 public:
  HBaseReader(std::unique_ptr<HBaseConnection> conn, std::string name, thrift2::TScan scan,
              uint64_t limit_rows, const HBaseOptions& options)
      : conn_(std::move(conn)),
        name_(std::move(name)),
        scan_(std::move(scan)),
        limit_rows_(limit_rows),
        options_(options) {}

  ~HBaseReader() override { Close(); }

  // Opens the scanner and moves to the first cell.
  void Start() {
    status_ = Open(scan_);
    if (status_.ok()) Advance();
  }

  bool Valid() const override { return valid_; }

  void Next() override {
    assert(valid_);
    ++column_;
    Advance();
  }

  CellView cell() const override {
    assert(valid_);
    return cell_;
  }

  Status status() const override { return status_; }

 private:
  Status Open(const thrift2::TScan& scan) {
    return conn_->Retry("scanning table " + Quoted(name_), [&](thrift2::THBaseServiceClient& c) {
      scanner_ = c.openScanner(name_, scan);
      open_ = true;
    });
  }

  // Closes the scanner, if its connection is still up (a scanner on a lost
  // connection expires by itself; no reconnecting just to close it).
  void Close() {
    if (!open_) return;
    open_ = false;
    if (!conn_->connected()) return;
    (void)conn_->Call("closing a scanner of table " + Quoted(name_),
                      [&](thrift2::THBaseServiceClient& c) { c.closeScanner(scanner_); });
  }

  // Fetches the next results into results_; false at the end or on error.
  bool Fetch() {
    results_.clear();
    result_ = 0;
    column_ = 0;
    if (done_) return false;
    int reopens = 0;
    for (;;) {
      Status s =
          conn_->Call("scanning table " + Quoted(name_), [&](thrift2::THBaseServiceClient& c) {
            c.getScannerRows(results_, scanner_, options_.scan_rows);
          });
      if (s.ok()) break;
      // The scanner may be gone (connection dropped, scanner expired): open
      // a new one at the row of the last cell returned; Advance skips what
      // was returned already.
      open_ = false;
      if (++reopens > kMaxScannerReopens) {
        status_ = s;
        return false;
      }
      thrift2::TScan again = scan_;
      if (returned_any_) again.__set_startRow(last_.row);
      s = Open(again);
      if (!s.ok()) {
        status_ = s;
        return false;
      }
      results_.clear();
    }
    if (results_.empty()) {
      done_ = true;
      Close();
      return false;
    }
    return true;
  }

  // Moves to the cell at (result_, column_) or the next one after it that is
  // to be returned.
  void Advance() {
    valid_ = false;
    if (!status_.ok()) return;
    for (;;) {
      while (result_ < results_.size() && column_ >= results_[result_].columnValues.size()) {
        ++result_;
        column_ = 0;
      }
      if (result_ >= results_.size()) {
        if (!Fetch()) return;
        continue;
      }
      const thrift2::TResult& r = results_[result_];
      const thrift2::TColumnValue& v = r.columnValues[column_];
      CellView c;
      c.row = r.row;
      c.family = v.family;
      c.qualifier = v.qualifier;
      c.timestamp_ms = v.timestamp;
      c.type = CellType::kPut;
      c.value = v.value;
      if (returned_any_) {
        // After a reopened scanner: skip what was returned already.
        if (c.row == last_.row && CompareCells(c, LastView()) <= 0) {
          ++column_;
          continue;
        }
        if (c.row != last_.row) {
          if (limit_rows_ != 0 && rows_ >= limit_rows_) {
            done_ = true;
            Close();
            return;
          }
          ++rows_;
        }
      } else {
        ++rows_;
      }
      last_.row.assign(c.row);
      last_.family.assign(c.family);
      last_.qualifier.assign(c.qualifier);
      last_.timestamp_ms = c.timestamp_ms;
      returned_any_ = true;
      cell_ = c;
      valid_ = true;
      return;
    }
  }

  CellView LastView() const {
    return CellView{last_.row,          last_.family,   last_.qualifier,
                    last_.timestamp_ms, CellType::kPut, std::string_view()};
  }

  const std::unique_ptr<HBaseConnection> conn_;
  const std::string name_;
  const thrift2::TScan scan_;
  const uint64_t limit_rows_;
  const HBaseOptions options_;
  int32_t scanner_ = 0;
  bool open_ = false;
  bool done_ = false;
  std::vector<thrift2::TResult> results_;
  size_t result_ = 0;  // index into results_
  size_t column_ = 0;  // index into results_[result_].columnValues
  bool returned_any_ = false;
  CellCoordinates last_;  // the last cell returned
  uint64_t rows_ = 0;     // rows returned (begun)
  CellView cell_;
  bool valid_ = false;
  Status status_;
};

// ---------------------------------------------------------------------------
// StateStore: one row per target table in the state table (row key: the
// table's full name), one cell s:v holding the state value
// (store/state_store.h); compare-and-set by checkAndMutate on that cell.

constexpr char kStateFamily[] = "s";
constexpr char kStateQualifier[] = "v";
// State rows fetched per scanner request in List.
constexpr int32_t kStateRowsPerRequest = 1000;

class HBaseStateStore final : public StateStore {
 public:
  HBaseStateStore(std::unique_ptr<HBaseConnection> conn, std::string url, std::string table,
                  std::function<std::unique_ptr<HBaseConnection>()> connect, int lock_lease_ms)
      : conn_(std::move(conn)),
        url_(std::move(url)),
        table_(CanonicalTableName(table)),
        connect_(std::move(connect)),
        lock_lease_ms_(lock_lease_ms) {}

  // A lease in the cell s:l of the table's row (store/hbase_lock.cc), on a
  // connection of its own; then no shard of a sharded load may hold its
  // lease (each side takes its own lease before it looks at the other's,
  // so of a migrate or sync and a shard that start at once, at least one
  // sees the other and stops).
  Result<std::unique_ptr<TableLock>> LockTable(const std::string& table) override {
    const std::string name = CanonicalTableName(table);
    {
      std::lock_guard<std::mutex> lock(mu_);
      WIDEN_RETURN_IF_ERROR(EnsureTable());
    }
    WIDEN_ASSIGN_OR_RETURN(
        std::unique_ptr<TableLock> held,
        hbase_internal::LockTable(connect_(), url_, table_, name, lock_lease_ms_));
    std::lock_guard<std::mutex> lock(mu_);
    WIDEN_RETURN_IF_ERROR(
        hbase_internal::CheckNoLiveLease(conn_.get(), url_, table_, name, /*shards=*/true));
    return held;
  }

  // A lease in the row LockRow(table, "shard I/N"); then the table's own
  // lease must be free (see LockTable).
  Result<std::unique_ptr<TableLock>> LockShard(const std::string& table, int index,
                                               int count) override {
    const std::string name = CanonicalTableName(table);
    {
      std::lock_guard<std::mutex> lock(mu_);
      WIDEN_RETURN_IF_ERROR(EnsureTable());
    }
    WIDEN_ASSIGN_OR_RETURN(
        std::unique_ptr<TableLock> held,
        hbase_internal::LockShard(connect_(), url_, table_, name, index, count, lock_lease_ms_));
    std::lock_guard<std::mutex> lock(mu_);
    WIDEN_RETURN_IF_ERROR(
        hbase_internal::CheckNoLiveLease(conn_.get(), url_, table_, name, /*shards=*/false));
    return held;
  }

  // The table's lease, then every shard's (store/hbase_lock.cc).
  Status CheckNotBeingWritten(const std::string& table) override {
    const std::string name = CanonicalTableName(table);
    std::lock_guard<std::mutex> lock(mu_);
    WIDEN_RETURN_IF_ERROR(EnsureTable());
    WIDEN_RETURN_IF_ERROR(
        hbase_internal::CheckNoLiveLease(conn_.get(), url_, table_, name, /*shards=*/false));
    return hbase_internal::CheckNoLiveLease(conn_.get(), url_, table_, name, /*shards=*/true);
  }

  Result<std::optional<TableState>> Get(const std::string& table) override {
    const std::string name = CanonicalTableName(table);
    std::lock_guard<std::mutex> lock(mu_);
    WIDEN_ASSIGN_OR_RETURN(Stored stored, Read(name));
    if (!stored.found || stored.record.empty()) return std::optional<TableState>();
    WIDEN_ASSIGN_OR_RETURN(TableState state, Decode(name, stored));
    return std::optional<TableState>(std::move(state));
  }

  Result<uint64_t> Put(const std::string& table, std::optional<uint64_t> expected_version,
                       const TableState& state) override {
    const std::string name = CanonicalTableName(table);
    WIDEN_ASSIGN_OR_RETURN(std::string record, EncodeTableState(state));
    std::lock_guard<std::mutex> lock(mu_);
    WIDEN_RETURN_IF_ERROR(EnsureTable());
    WIDEN_ASSIGN_OR_RETURN(Stored stored, Read(name));
    const bool recorded = stored.found && !stored.record.empty();
    if (expected_version.has_value() != recorded ||
        (recorded && stored.version != *expected_version)) {
      return Conflict(name, expected_version, stored);
    }
    const uint64_t version = stored.found ? stored.version + 1 : 1;
    WIDEN_RETURN_IF_ERROR(
        CompareAndSet(name, expected_version, stored, EncodeStateValue(version, record)));
    return version;
  }

  Status Delete(const std::string& table, uint64_t expected_version) override {
    const std::string name = CanonicalTableName(table);
    std::lock_guard<std::mutex> lock(mu_);
    WIDEN_ASSIGN_OR_RETURN(Stored stored, Read(name));
    if (!stored.found || stored.record.empty() || stored.version != expected_version) {
      return Conflict(name, expected_version, stored);
    }
    return CompareAndSet(name, expected_version, stored, EncodeStateValue(stored.version + 1, ""));
  }

  Result<std::vector<std::pair<std::string, TableState>>> List() override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::pair<std::string, TableState>> out;
    WIDEN_ASSIGN_OR_RETURN(bool exists, TableExists());
    if (!exists) return out;
    thrift2::TScan scan;
    thrift2::TColumn column;
    column.family = kStateFamily;
    column.__set_qualifier(kStateQualifier);
    scan.__set_columns({column});
    for (;;) {
      std::vector<thrift2::TResult> rows;
      WIDEN_RETURN_IF_ERROR(conn_->Retry(
          "listing the table states in " + Quoted(table_), [&](thrift2::THBaseServiceClient& c) {
            c.getScannerResults(rows, table_, scan, kStateRowsPerRequest);
          }));
      for (const thrift2::TResult& r : rows) {
        Stored stored;
        WIDEN_RETURN_IF_ERROR(FromResult(r.row, r, &stored));
        if (!stored.found || stored.record.empty()) continue;  // a tombstone
        WIDEN_ASSIGN_OR_RETURN(TableState state, Decode(r.row, stored));
        out.emplace_back(r.row, std::move(state));
      }
      if (rows.size() < static_cast<size_t>(kStateRowsPerRequest)) break;
      scan.__set_startRow(rows.back().row + std::string(1, '\0'));  // the next row key
    }
    return out;
  }

 private:
  // A state value as read: found = the cell exists.
  struct Stored {
    bool found = false;
    std::string value;  // the cell's bytes
    uint64_t version = 0;
    std::string record;  // empty: a tombstone
  };

  std::string Where(const std::string& name) const {
    return "the state of table " + Quoted(name) + " (in " + Quoted(table_) + " of HBase at '" +
           url_ + "')";
  }

  Result<bool> TableExists() {
    if (exists_) return true;
    WIDEN_RETURN_IF_ERROR(conn_->Retry(
        "looking up table " + Quoted(table_),
        [&](thrift2::THBaseServiceClient& c) { exists_ = c.tableExists(ThriftName(table_)); }));
    return exists_;
  }

  // Creates the state table the first time a state is written.
  Status EnsureTable() {
    WIDEN_ASSIGN_OR_RETURN(bool exists, TableExists());
    if (exists) return Status::OK();
    TableDescriptor d;
    SplitTableName(table_, &d.name_space, &d.table);
    FamilyDescriptor f;
    f.name = kStateFamily;
    d.families.push_back(f);
    WIDEN_RETURN_IF_ERROR(CreateTableOn(conn_.get(), url_, d));
    exists_ = true;
    return Status::OK();
  }

  Status FromResult(const std::string& name, const thrift2::TResult& r, Stored* out) const {
    for (const thrift2::TColumnValue& v : r.columnValues) {
      if (v.family != kStateFamily || v.qualifier != kStateQualifier) continue;
      out->found = true;
      out->value = v.value;
      std::string_view record;
      if (!DecodeStateValue(out->value, &out->version, &record)) {
        return Status::DataLoss(Where(name) + " is " + std::to_string(out->value.size()) +
                                " bytes, shorter than its version");
      }
      out->record.assign(record.data(), record.size());
    }
    return Status::OK();
  }

  Result<Stored> Read(const std::string& name) {
    Stored stored;
    WIDEN_ASSIGN_OR_RETURN(bool exists, TableExists());
    if (!exists) return stored;
    thrift2::TGet get;
    get.row = name;
    thrift2::TColumn column;
    column.family = kStateFamily;
    column.__set_qualifier(kStateQualifier);
    get.__set_columns({column});
    thrift2::TResult result;
    WIDEN_RETURN_IF_ERROR(
        conn_->Retry("reading " + Where(name),
                     [&](thrift2::THBaseServiceClient& c) { c.get(result, table_, get); }));
    WIDEN_RETURN_IF_ERROR(FromResult(name, result, &stored));
    return stored;
  }

  Result<TableState> Decode(const std::string& name, const Stored& stored) const {
    Result<TableState> state = DecodeTableState(stored.record);
    if (!state.ok()) return state.status().WithContext(Where(name));
    state->version = stored.version;
    return state;
  }

  // Writes `value` if the cell still holds what `stored` read (no cell:
  // HBase's empty expected value matches a missing cell); a lost answer is
  // settled by CheckAndPutCell (`value` carries its own version).
  Status CompareAndSet(const std::string& name, std::optional<uint64_t> expected,
                       const Stored& stored, const std::string& value) {
    WIDEN_ASSIGN_OR_RETURN(bool applied,
                           hbase_internal::CheckAndPutCell(
                               conn_.get(), table_, name, kStateFamily, kStateQualifier,
                               stored.found ? stored.value : "", value, "writing " + Where(name)));
    if (applied) return Status::OK();
    WIDEN_ASSIGN_OR_RETURN(Stored now, Read(name));
    return Conflict(name, expected, now);
  }

  Status Conflict(const std::string& name, std::optional<uint64_t> expected,
                  const Stored& stored) const {
    const bool recorded = stored.found && !stored.record.empty();
    return Status::Aborted(
        Where(name) + " is " +
        (recorded ? "at version " + std::to_string(stored.version) : std::string("not recorded")) +
        ", not " + (expected ? "at version " + std::to_string(*expected) : std::string("absent")) +
        " as expected: another run changed it; read it again");
  }

  std::mutex mu_;  // guards conn_ and exists_
  const std::unique_ptr<HBaseConnection> conn_;
  const std::string url_;
  const std::string table_;  // the state table's full name
  bool exists_ = false;      // the state table is known to exist
  const std::function<std::unique_ptr<HBaseConnection>()> connect_;  // for locks
  const int lock_lease_ms_;
};

// The first row key after every key that starts with `prefix`, or "" when
// there is none (the prefix is all 0xFF): HBase's Scan.setRowPrefixFilter.
std::string PrefixStop(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xFF) prefix.pop_back();
  if (!prefix.empty())
    prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

Status ParseUrl(const std::string& url, std::string* host, int* port) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("store URL '" + url + "': " + why +
                                   " (expected hbase://HOST:PORT, the Thrift2 gateway)");
  };
  if (url.rfind(kScheme, 0) != 0) return bad("not an hbase:// URL");
  const std::string rest = url.substr(kScheme.size());
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) return bad("no host and port");
  *host = rest.substr(0, colon);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);  // [::1]
  }
  const std::string p = rest.substr(colon + 1);
  int value = 0;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (p.empty() || ec != std::errc() || end != p.data() + p.size() || value < 1 || value > 65535) {
    return bad("port '" + p + "' is not a number from 1 to 65535");
  }
  *port = value;
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<HBaseStore>> HBaseStore::Open(const std::string& url,
                                                     const StoreOptions& options,
                                                     const HBaseOptions& hbase) {
  std::string host;
  int port = 0;
  WIDEN_RETURN_IF_ERROR(ParseUrl(url, &host, &port));
  if (hbase.writers < 1 || hbase.writers > kMaxWriters) {
    return Status::InvalidArgument("writers to HBase: " + std::to_string(hbase.writers) +
                                   " is not from 1 to " + std::to_string(kMaxWriters));
  }
  if (hbase.request_cells < 1 || hbase.request_bytes < 1) {
    return Status::InvalidArgument("a request to HBase must take at least one cell and byte");
  }
  std::unique_ptr<HBaseStore> store(new HBaseStore(url, host, port, options, hbase));
  thrift2::TThriftServerType::type type = thrift2::TThriftServerType::TWO;
  WIDEN_RETURN_IF_ERROR(store->conn_->Probe(&type));
  if (type != thrift2::TThriftServerType::TWO) {
    // Another kind of server: a configuration to fix, not a retry (exit 5).
    return Status::FailedPrecondition(url +
                                      " is HBase's Thrift (1) gateway; widen needs the Thrift2 "
                                      "gateway (hbase thrift2, or hbase-daemon.sh start thrift2)");
  }
  return store;
}

HBaseStore::HBaseStore(std::string url, std::string host, int port, const StoreOptions& options,
                       const HBaseOptions& hbase)
    : url_(std::move(url)),
      host_(std::move(host)),
      port_(port),
      options_(options),
      hbase_(hbase),
      conn_(NewConnection()) {}

HBaseStore::~HBaseStore() = default;

std::unique_ptr<HBaseConnection> HBaseStore::NewConnection() const {
  return std::make_unique<HBaseConnection>(host_, port_, ConnectionOptionsOf(hbase_));
}

Status HBaseStore::CreateTable(const TableDescriptor& descriptor) {
  std::lock_guard<std::mutex> lock(mu_);
  return CreateTableOn(conn_.get(), url_, descriptor);
}

Status HBaseStore::CheckExists(const std::string& name) {
  bool exists = false;
  WIDEN_RETURN_IF_ERROR(conn_->Retry(
      "looking up table " + Quoted(name),
      [&](thrift2::THBaseServiceClient& c) { exists = c.tableExists(ThriftName(name)); }));
  if (exists) return Status::OK();
  return Status::NotFound("table " + Quoted(name) + " does not exist in HBase at '" + url_ + "'");
}

Result<TableDescriptor> HBaseStore::DescribeTable(const std::string& full_name) {
  const std::string name = CanonicalTableName(full_name);
  std::lock_guard<std::mutex> lock(mu_);
  // The gateway's error for a missing table carries only the table's name.
  WIDEN_RETURN_IF_ERROR(CheckExists(name));
  thrift2::TTableDescriptor t;
  WIDEN_RETURN_IF_ERROR(GetDescriptor(conn_.get(), name, &t));
  TableDescriptor d = FromThrift(t);
  WIDEN_RETURN_IF_ERROR(RegionStartKeys(conn_.get(), name, &d.split_points));
  return d;
}

Status HBaseStore::SetTableMetadata(const std::string& full_name, const std::string& key,
                                    const std::string& value) {
  const std::string name = CanonicalTableName(full_name);
  std::lock_guard<std::mutex> lock(mu_);
  WIDEN_RETURN_IF_ERROR(CheckExists(name));
  thrift2::TTableDescriptor t;
  WIDEN_RETURN_IF_ERROR(GetDescriptor(conn_.get(), name, &t));
  auto it = t.attributes.find(key);
  if (it != t.attributes.end() && it->second == value) return Status::OK();
  t.attributes[key] = value;
  t.__isset.attributes = true;
  // Setting a value is idempotent: a repeat leaves the same descriptor.
  return conn_->Retry("altering the metadata of table " + Quoted(name),
                      [&](thrift2::THBaseServiceClient& c) { c.modifyTable(t); });
}

Result<std::vector<TableDescriptor>> HBaseStore::ListTables() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<thrift2::TTableDescriptor> all;
  WIDEN_RETURN_IF_ERROR(conn_->Retry("listing tables", [&](thrift2::THBaseServiceClient& c) {
    c.getTableDescriptorsByPattern(all, ".*", false);
  }));
  std::vector<TableDescriptor> tables;
  for (const auto& t : all) {
    TableDescriptor d = FromThrift(t);
    if (d.name_space == "hbase" || d.FullName() == CanonicalTableName(hbase_.state_table) ||
        d.FullName() == CanonicalTableName(hbase_.sync_table)) {
      continue;
    }
    Status regions = RegionStartKeys(conn_.get(), d.FullName(), &d.split_points);
    if (!regions.ok()) {
      // A table dropped since the listing (by another client), or being
      // dropped (disabled first: the gateway then fails to list its
      // regions), is not listed.
      if (CheckExists(d.FullName()).code() == StatusCode::kNotFound) continue;
      bool enabled = true;
      Status looked = conn_->Retry("looking up table " + Quoted(d.FullName()),
                                   [&](thrift2::THBaseServiceClient& c) {
                                     enabled = c.isTableEnabled(ThriftName(d.FullName()));
                                   });
      if (looked.code() == StatusCode::kNotFound || (looked.ok() && !enabled)) continue;
      return regions;
    }
    tables.push_back(std::move(d));
  }
  std::sort(tables.begin(), tables.end(), [](const TableDescriptor& a, const TableDescriptor& b) {
    return a.FullName() < b.FullName();
  });
  return tables;
}

Result<std::unique_ptr<CellSink>> HBaseStore::NewSink(const std::string& full_name) {
  // The families and their options; listing the regions also fills the
  // gateway's cache of where they are, without which it cannot place a row
  // key of the longest length HBase takes (its lookup in hbase:meta adds to
  // the key and fails: "startRow's length must be less than or equal to
  // 32767").
  WIDEN_ASSIGN_OR_RETURN(TableDescriptor d, DescribeTable(full_name));
  std::string name = d.FullName();
  std::vector<std::unique_ptr<HBaseConnection>> conns;
  for (int i = 0; i < hbase_.writers; ++i) conns.push_back(NewConnection());
  return std::unique_ptr<CellSink>(
      new HBaseSink(std::move(conns), std::move(name), std::move(d), options_.batch_bytes, hbase_));
}

Result<std::unique_ptr<StateStore>> HBaseStore::NewStateStore() {
  return std::unique_ptr<StateStore>(new HBaseStateStore(
      NewConnection(), url_, hbase_.state_table,
      [host = host_, port = port_, o = ConnectionOptionsOf(hbase_)] {
        return std::make_unique<HBaseConnection>(host, port, o);
      },
      hbase_.lock_lease_ms));
}

Result<std::unique_ptr<CellReader>> HBaseStore::NewReader(const std::string& full_name,
                                                          const ReadOptions& options) {
  if (options.max_versions < 1) {
    return Status::InvalidArgument("max_versions must be at least 1, not " +
                                   std::to_string(options.max_versions));
  }
  const std::string name = CanonicalTableName(full_name);
  {
    std::lock_guard<std::mutex> lock(mu_);
    WIDEN_RETURN_IF_ERROR(CheckExists(name));
  }
  // The rows asked for: [max(start, prefix), min(stop, end of prefix)).
  std::string start = options.start_row;
  std::string stop = options.stop_row;
  if (!options.row_prefix.empty()) {
    start = std::max(start, options.row_prefix);
    const std::string prefix_stop = PrefixStop(options.row_prefix);
    if (!prefix_stop.empty() && (stop.empty() || prefix_stop < stop)) stop = prefix_stop;
  }
  thrift2::TScan scan;
  if (!start.empty()) scan.__set_startRow(start);
  if (!stop.empty()) scan.__set_stopRow(stop);
  scan.__set_maxVersions(options.max_versions);
  scan.__set_batchSize(hbase_.scan_cells_per_result);
  scan.__set_caching(hbase_.scan_rows);
  auto reader = std::make_unique<HBaseReader>(NewConnection(), name, std::move(scan),
                                              options.limit_rows, hbase_);
  if (!stop.empty() && start >= stop) return std::unique_ptr<CellReader>(std::move(reader));
  reader->Start();
  return std::unique_ptr<CellReader>(std::move(reader));
}

}  // namespace widen
