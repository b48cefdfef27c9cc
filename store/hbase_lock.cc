// Table locks in HBase: a lease cell beside the table's state (see
// store/hbase_sync_internal.h and docs/format.md, "HBase").
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "common/bytes.h"
#include "store/hbase_sync_internal.h"

namespace widen {
namespace hbase_internal {

namespace {

constexpr char kFamily[] = "s";
constexpr char kLeaseQualifier[] = "l";
constexpr char kLeaseFormat = 0x01;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Field 22 of /proc/PID/stat (after the parenthesised name, which may hold
// spaces): the start time in clock ticks after boot; 0 when unknown or when
// the process has ended (field 3, its state: Z, a zombie its parent has not
// reaped yet — as a killed process under an init that reaps none — or X).
uint64_t StartTicks(uint64_t pid) {
  const std::string stat = ReadFirstLine("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return 0;
  if (stat[close + 2] == 'Z' || stat[close + 2] == 'X') return 0;
  size_t at = close + 2;  // field 3
  for (int field = 3; field < 22; ++field) {
    at = stat.find(' ', at);
    if (at == std::string::npos) return 0;
    ++at;
  }
  return std::strtoull(stat.c_str() + at, nullptr, 10);
}

std::string PidNamespace() {
  char buf[128];
  const ssize_t n = readlink("/proc/self/ns/pid", buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

void AppendStr(std::string* out, std::string_view s) {
  PutFixed32BE(out, static_cast<uint32_t>(s.size()));
  out->append(s);
}

bool ReadI64(std::string_view* in, uint64_t* v) {
  if (in->size() < 8) return false;
  *v = DecodeFixed64BE(in->data());
  in->remove_prefix(8);
  return true;
}

bool ReadStr(std::string_view* in, std::string* s) {
  if (in->size() < 4) return false;
  const uint32_t n = DecodeFixed32BE(in->data());
  in->remove_prefix(4);
  if (in->size() < n) return false;
  s->assign(in->substr(0, n));
  in->remove_prefix(n);
  return true;
}

std::string Describe(const LockHolder& h) {
  const auto taken =
      std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(h.taken_ms));
  return fmt::format("process {} on host '{}' since {:%Y-%m-%d %H:%M:%S} UTC", h.pid, h.host,
                     std::chrono::floor<std::chrono::seconds>(taken));
}

// The lease cell s:l of `row` in `state_table`: *found says whether the
// cell exists (an empty value is a free lock).
// Reads the cell family:qualifier of `row` into `*value`; `*found` says
// whether it exists.
Status ReadCell(HBaseConnection* conn, const std::string& table, const std::string& row,
                const std::string& family, const std::string& qualifier, const std::string& what,
                std::string* value, bool* found) {
  thrift2::TGet get;
  get.row = row;
  thrift2::TColumn column;
  column.family = family;
  column.__set_qualifier(qualifier);
  get.__set_columns({column});
  thrift2::TResult result;
  WIDEN_RETURN_IF_ERROR(
      conn->Retry(what, [&](thrift2::THBaseServiceClient& c) { c.get(result, table, get); }));
  *found = false;
  for (const auto& v : result.columnValues) {
    if (v.family == family && v.qualifier == qualifier) {
      *found = true;
      *value = v.value;
    }
  }
  return Status::OK();
}

Status ReadLease(HBaseConnection* conn, const std::string& state_table, const std::string& row,
                 const std::string& what, std::string* value, bool* found) {
  return ReadCell(conn, state_table, row, kFamily, kLeaseQualifier, what, value, found);
}

Status BusyStatus(const std::string& table, const std::string& shard, const LockHolder& h) {
  return Status::Aborted(fmt::format(
      "table '{}'{} is being written by another widen run ({}); run again when it has ended", table,
      shard.empty() ? "" : " (" + shard + " of a sharded load)", Describe(h)));
}

class HBaseTableLock final : public TableLock {
 public:
  HBaseTableLock(std::unique_ptr<HBaseConnection> conn, std::string url, std::string state_table,
                 std::string table, std::string shard, int lease_ms)
      : conn_(std::move(conn)),
        url_(std::move(url)),
        state_table_(std::move(state_table)),
        table_(std::move(table)),
        shard_(std::move(shard)),
        row_(LockRow(table_, shard_)),
        lease_ms_(lease_ms) {}

  ~HBaseTableLock() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    if (renewer_.joinable()) renewer_.join();
    // Given up with a free value (no delete marker, which could mask a
    // later lease in the same millisecond); a lost answer leaves the lease
    // to expire or to be found dead.
    if (status_.ok()) (void)Swap(value_, "");
  }

  Status status() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

  // Takes the lock, or says who holds it.
  Status Take() {
    for (int attempt = 0; attempt < 5; ++attempt) {
      std::string stored;
      bool found = false;
      WIDEN_RETURN_IF_ERROR(Read(&stored, &found));
      LockHolder holder;
      if (found && !stored.empty()) {
        if (!DecodeLockHolder(stored, &holder)) {
          return Status::DataLoss(
              fmt::format("{}: the lock cell s:l is not a lock widen wrote", Where()));
        }
        if (HolderAlive(holder, NowMs())) return Busy(holder);
      }
      const std::string mine = EncodeLockHolder(ThisProcess(NowMs(), lease_ms_));
      WIDEN_ASSIGN_OR_RETURN(bool swapped, Swap(found ? stored : "", mine));
      if (swapped) {
        value_ = mine;
        renewer_ = std::thread([this] { Renew(); });
        return Status::OK();
      }
      // Another run changed it meanwhile: look again.
    }
    return Status::Aborted(fmt::format(
        "{}: other widen runs keep taking the lock; run again when they are done", Where()));
  }

 private:
  std::string Where() const {
    return fmt::format("table '{}'{} (its lock in '{}' of HBase at '{}')", table_,
                       shard_.empty() ? "" : " " + shard_, state_table_, url_);
  }

  Status Busy(const LockHolder& h) const { return BusyStatus(table_, shard_, h); }

  Status Read(std::string* value, bool* found) {
    return ReadLease(conn_.get(), state_table_, row_, "reading the lock of " + Where(), value,
                     found);
  }

  // Puts `next` if the cell holds `expected` ("": a free lock — HBase's
  // empty expected value matches a missing cell and an empty one); a lost
  // answer is settled by CheckAndPutCell.
  Result<bool> Swap(const std::string& expected, const std::string& next) {
    return CheckAndPutCell(conn_.get(), state_table_, row_, kFamily, kLeaseQualifier, expected,
                           next, "taking the lock of " + Where());
  }

  // Every third of the lease: the lease moved on, compared with what this
  // run wrote. Lost when another run changed the cell, or when no renewal
  // got through before the lease ran out.
  void Renew() {
    std::unique_lock<std::mutex> lock(mu_);
    int64_t expires_ms = NowMs() + lease_ms_;
    while (!stop_) {
      wake_.wait_for(lock, std::chrono::milliseconds(std::max(1, lease_ms_ / 3)));
      if (stop_) break;
      lock.unlock();
      const std::string next = EncodeLockHolder(ThisProcess(NowMs(), lease_ms_));
      Result<bool> swapped = Swap(value_, next);
      lock.lock();
      if (swapped.ok() && *swapped) {
        value_ = next;
        expires_ms = NowMs() + lease_ms_;
      } else if (swapped.ok()) {
        status_ = Status::Aborted(fmt::format(
            "{}: another widen run took the lock while this one ran; nothing more is recorded",
            Where()));
        return;
      } else if (NowMs() >= expires_ms) {
        status_ = Status::Aborted(fmt::format(
            "{}: the lock could not be renewed before it ran out ({}); nothing more is recorded",
            Where(), swapped.status().message()));
        return;
      }
    }
  }

  const std::unique_ptr<HBaseConnection> conn_;
  const std::string url_, state_table_, table_;
  const std::string shard_;  // "shard I/N", or empty: the table's own lock
  const std::string row_;    // the lease's row in the state table (LockRow)
  const int lease_ms_;
  mutable std::mutex mu_;  // guards status_, stop_; value_ is the renewer's once it runs
  std::condition_variable wake_;
  Status status_;
  bool stop_ = false;
  std::string value_;  // what this run last wrote into the cell
  std::thread renewer_;
};

}  // namespace

std::string EncodeLockHolder(const LockHolder& h) {
  std::string out(1, kLeaseFormat);
  PutFixed64BE(&out, static_cast<uint64_t>(h.expires_ms));
  PutFixed64BE(&out, static_cast<uint64_t>(h.taken_ms));
  AppendStr(&out, h.host);
  AppendStr(&out, h.boot_id);
  AppendStr(&out, h.pid_ns);
  PutFixed64BE(&out, h.pid);
  PutFixed64BE(&out, h.start_ticks);
  return out;
}

bool DecodeLockHolder(std::string_view in, LockHolder* h) {
  if (in.empty() || in[0] != kLeaseFormat) return false;
  in.remove_prefix(1);
  uint64_t expires = 0, taken = 0;
  if (!ReadI64(&in, &expires) || !ReadI64(&in, &taken) || !ReadStr(&in, &h->host) ||
      !ReadStr(&in, &h->boot_id) || !ReadStr(&in, &h->pid_ns) || !ReadI64(&in, &h->pid) ||
      !ReadI64(&in, &h->start_ticks) || !in.empty()) {
    return false;
  }
  h->expires_ms = static_cast<int64_t>(expires);
  h->taken_ms = static_cast<int64_t>(taken);
  return true;
}

LockHolder ThisProcess(int64_t now_ms, int lease_ms) {
  static const LockHolder self = [] {
    LockHolder h;
    h.host = HostName();
    h.boot_id = ReadFirstLine("/proc/sys/kernel/random/boot_id");
    h.pid_ns = PidNamespace();
    h.pid = static_cast<uint64_t>(getpid());
    h.start_ticks = StartTicks(h.pid);
    h.taken_ms = NowMs();
    return h;
  }();
  LockHolder h = self;
  h.expires_ms = now_ms + lease_ms;
  return h;
}

bool HolderAlive(const LockHolder& h, int64_t now_ms) {
  const LockHolder self = ThisProcess(now_ms, 0);
  const bool here = !h.boot_id.empty() && h.boot_id == self.boot_id && h.host == self.host &&
                    !h.pid_ns.empty() && h.pid_ns == self.pid_ns && h.start_ticks != 0;
  if (here) return h.pid == self.pid || StartTicks(h.pid) == h.start_ticks;
  return now_ms < h.expires_ms;
}

Result<bool> CheckAndPutCell(HBaseConnection* conn, const std::string& table,
                             const std::string& row, const std::string& family,
                             const std::string& qualifier, const std::string& expected,
                             const std::string& value, const std::string& what) {
  thrift2::TPut put;
  put.row = row;
  thrift2::TColumnValue cell;
  cell.family = family;
  cell.qualifier = qualifier;
  cell.value = value;
  put.columnValues.push_back(std::move(cell));
  thrift2::TMutation mutation;
  mutation.__set_put(put);
  thrift2::TRowMutations mutations;
  mutations.row = row;
  mutations.mutations.push_back(std::move(mutation));
  constexpr int kTries = 3;
  for (int attempt = 1;; ++attempt) {
    bool applied = false;
    const Status s = conn->Call(what, [&](thrift2::THBaseServiceClient& c) {
      applied = c.checkAndMutate(table, row, family, qualifier, thrift2::TCompareOp::EQUAL,
                                 expected, mutations);
    });
    if (s.ok() && (applied || attempt == 1)) return applied;
    if (!s.ok() && s.code() != StatusCode::kUnavailable) return s;
    // The answer to an earlier try was lost: the cell says what happened.
    std::string stored;
    bool found = false;
    WIDEN_RETURN_IF_ERROR(ReadCell(conn, table, row, family, qualifier, what, &stored, &found));
    if (found ? stored == value : value.empty()) return true;
    if (s.ok()) return false;  // a repeat refused: the cell is someone else's
    // Sent again only when `expected` is a value no one else writes: a late
    // first request expecting a free cell ("") would still find it free
    // after this one's put was given up, and take it.
    const bool unchanged = found ? stored == expected : expected.empty();
    if (!unchanged || expected.empty() || attempt == kTries) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(100 * attempt));
  }
}

std::string LockRow(const std::string& table, const std::string& shard) {
  if (shard.empty()) return table;
  std::string row = table;
  row.push_back('\0');
  row += shard;
  return row;
}

Result<std::unique_ptr<TableLock>> LockTable(std::unique_ptr<HBaseConnection> conn,
                                             const std::string& url, const std::string& state_table,
                                             const std::string& table, int lease_ms) {
  auto lock =
      std::make_unique<HBaseTableLock>(std::move(conn), url, state_table, table, "", lease_ms);
  WIDEN_RETURN_IF_ERROR(lock->Take());
  return std::unique_ptr<TableLock>(std::move(lock));
}

Result<std::unique_ptr<TableLock>> LockShard(std::unique_ptr<HBaseConnection> conn,
                                             const std::string& url, const std::string& state_table,
                                             const std::string& table, int index, int count,
                                             int lease_ms) {
  auto lock = std::make_unique<HBaseTableLock>(std::move(conn), url, state_table, table,
                                               fmt::format("shard {}/{}", index, count), lease_ms);
  WIDEN_RETURN_IF_ERROR(lock->Take());
  return std::unique_ptr<TableLock>(std::move(lock));
}

Status CheckNoLiveLease(HBaseConnection* conn, const std::string& url,
                        const std::string& state_table, const std::string& table, bool shards) {
  const std::string what = fmt::format("reading the locks of table '{}' (in '{}' of HBase at '{}')",
                                       table, state_table, url);
  const int64_t now = NowMs();
  auto check = [&](const std::string& row, const std::string& value) -> Status {
    if (value.empty()) return Status::OK();
    LockHolder holder;
    const std::string shard = row.size() > table.size() ? row.substr(table.size() + 1) : "";
    if (!DecodeLockHolder(value, &holder)) {
      return Status::DataLoss(
          fmt::format("{}: the lock cell s:l of {} is not a lock widen wrote", what,
                      shard.empty() ? std::string("the table's row") : "the row of its " + shard));
    }
    if (!HolderAlive(holder, now)) return Status::OK();
    return BusyStatus(table, shard, holder);
  };
  if (!shards) {
    std::string value;
    bool found = false;
    WIDEN_RETURN_IF_ERROR(ReadLease(conn, state_table, table, what, &value, &found));
    return found ? check(table, value) : Status::OK();
  }
  thrift2::TScan scan;
  std::string start = table;
  start.push_back('\0');
  scan.__set_startRow(start);
  std::string stop = table;
  stop.push_back('\x01');
  scan.__set_stopRow(stop);
  thrift2::TColumn column;
  column.family = kFamily;
  column.__set_qualifier(kLeaseQualifier);
  scan.__set_columns({column});
  for (;;) {
    std::vector<thrift2::TResult> rows;
    constexpr int32_t kRows = 1000;
    WIDEN_RETURN_IF_ERROR(conn->Retry(what, [&](thrift2::THBaseServiceClient& c) {
      c.getScannerResults(rows, state_table, scan, kRows);
    }));
    for (const thrift2::TResult& r : rows) {
      for (const auto& v : r.columnValues) {
        if (v.family == kFamily && v.qualifier == kLeaseQualifier) {
          WIDEN_RETURN_IF_ERROR(check(r.row, v.value));
        }
      }
    }
    if (rows.size() < static_cast<size_t>(kRows)) break;
    scan.__set_startRow(rows.back().row + std::string(1, '\0'));
  }
  return Status::OK();
}

}  // namespace hbase_internal
}  // namespace widen
