#include "store/store.h"

#include <string_view>
#include <utility>

#include "store/leveldb_store.h"
#ifdef WIDEN_WITH_HBASE
#include "store/hbase_store.h"
#endif

namespace widen {

namespace {

constexpr std::string_view kLevelDbScheme = "leveldb:";
constexpr std::string_view kHBaseScheme = "hbase://";

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

Result<std::unique_ptr<Store>> Store::Open(const std::string& url, const StoreOptions& options) {
  if (StartsWith(url, kLevelDbScheme)) {
    const std::string path = url.substr(kLevelDbScheme.size());
    if (path.empty()) {
      return Status::InvalidArgument("store URL '" + url + "' names no directory (leveldb:PATH)");
    }
    WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<LevelDbStore> store, LevelDbStore::Open(path, options));
    return std::unique_ptr<Store>(std::move(store));
  }
  if (StartsWith(url, kHBaseScheme)) {
#ifdef WIDEN_WITH_HBASE
    HBaseOptions hbase;
    hbase.writers = options.writers;
    hbase.request_cells = options.request_cells;
    hbase.request_bytes = options.request_bytes;
    WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<HBaseStore> store,
                           HBaseStore::Open(url, options, hbase));
    return std::unique_ptr<Store>(std::move(store));
#else
    return Status::InvalidArgument("store URL '" + url +
                                   "': this widen was built without HBase support "
                                   "(-DWIDEN_WITH_HBASE=OFF)");
#endif
  }
  return Status::InvalidArgument("unknown store URL '" + url +
                                 "'; accepted forms: leveldb:PATH (embedded store in directory "
                                 "PATH), hbase://HOST:PORT (HBase Thrift2 gateway)");
}

Result<std::unique_ptr<RowDigestReader>> Store::NewDigestReader(const std::string& full_name,
                                                                bool) {
  return Status::FailedPrecondition("table '" + full_name +
                                    "': widen sync does not write to this kind of store yet");
}

Result<std::unique_ptr<RowWriter>> Store::NewRowWriter(const std::string& full_name) {
  return Status::FailedPrecondition("table '" + full_name +
                                    "': widen sync does not write to this kind of store yet");
}

namespace {
Status NoSyncIndex() {
  return Status::FailedPrecondition("widen sync does not keep a sync index in this kind of store");
}
}  // namespace

Status RowWriter::PutIndex(std::string_view, std::string_view) { return NoSyncIndex(); }
Status RowWriter::DeleteIndex(std::string_view) { return NoSyncIndex(); }
Status RowWriter::ClearIndex() { return NoSyncIndex(); }
Status RowWriter::Flush() { return Status::OK(); }

Result<std::unique_ptr<RowDigestReader>> Store::NewDigestReaderOf(const std::string& full_name,
                                                                  std::vector<std::string>) {
  return Status::FailedPrecondition("table '" + full_name +
                                    "': widen sync does not write to this kind of store yet");
}

Status Store::ScanIndex(const std::string&, const std::vector<std::string>&,
                        const std::function<bool(size_t, std::string_view, std::string_view)>&) {
  return NoSyncIndex();
}

Status Store::ScanIndex(const std::string& full_name, std::string_view prefix,
                        const std::function<bool(std::string_view, std::string_view)>& fn) {
  return ScanIndex(
      full_name, std::vector<std::string>{std::string(prefix)},
      [&fn](size_t, std::string_view key, std::string_view value) { return fn(key, value); });
}

}  // namespace widen
