#include "store/state_store.h"

#include "common/bytes.h"

namespace widen {

namespace {

// The lock of a store that one process at a time opens: holding the store
// is holding every table.
class ProcessLock final : public TableLock {
 public:
  Status status() const override { return Status::OK(); }
};

}  // namespace

Result<std::unique_ptr<TableLock>> StateStore::LockTable(const std::string&) {
  return std::unique_ptr<TableLock>(new ProcessLock());
}

Status StateStore::CheckNotBeingWritten(const std::string&) { return Status::OK(); }

Result<std::unique_ptr<TableLock>> StateStore::LockShard(const std::string&, int, int) {
  return std::unique_ptr<TableLock>(new ProcessLock());
}

std::string EncodeStateValue(uint64_t version, std::string_view record) {
  std::string value;
  value.reserve(8 + record.size());
  PutFixed64BE(&value, version);
  value.append(record.data(), record.size());
  return value;
}

bool DecodeStateValue(std::string_view value, uint64_t* version, std::string_view* record) {
  if (value.size() < 8) return false;
  *version = DecodeFixed64BE(value.data());
  *record = value.substr(8);
  return true;
}

}  // namespace widen
