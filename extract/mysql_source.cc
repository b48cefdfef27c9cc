#include "extract/mysql_source.h"

#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/resultset_metadata.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "extract/mysql_dialect_internal.h"
#include "extract/mysql_text_internal.h"
#include "extract/select_builder.h"
#include "extract/server_watch.h"
#include "extract/source_internal.h"

namespace widen {

using source_internal::OverQuery;
using source_internal::SqlForMessage;
using source_internal::Unordered;

using mysql_internal::ColumnKind;
using mysql_internal::ColumnMeta;
using mysql_internal::LinkSide;
using mysql_internal::MySqlCatalog;
using mysql_internal::MySqlDialect;
using mysql_internal::SideOf;
using mysql_internal::TextCompare;

namespace {

// MySQL/MariaDB client and server error codes that decide a Status code.
enum : int {
  kErAccessDeniedToDb = 1044,      // ER_DBACCESS_DENIED_ERROR
  kErAccessDenied = 1045,          // ER_ACCESS_DENIED_ERROR
  kErBadDb = 1049,                 // ER_BAD_DB_ERROR
  kErServerShutdown = 1053,        // ER_SERVER_SHUTDOWN
  kErTableAccessDenied = 1142,     // ER_TABLEACCESS_DENIED_ERROR
  kErColumnAccessDenied = 1143,    // ER_COLUMNACCESS_DENIED_ERROR
  kErLockWaitTimeout = 1205,       // ER_LOCK_WAIT_TIMEOUT
  kErLockDeadlock = 1213,          // ER_LOCK_DEADLOCK
  kErAccessDeniedNoPw = 1698,      // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
  kErConnectionKilled = 1927,      // ER_CONNECTION_KILLED (MariaDB)
  kErInteractionTimeout = 4031,    // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
  kCrConnectionError = 2002,       // CR_CONNECTION_ERROR (socket)
  kCrConnHostError = 2003,         // CR_CONN_HOST_ERROR (TCP)
  kCrUnknownHost = 2005,           // CR_UNKNOWN_HOST
  kCrServerGone = 2006,            // CR_SERVER_GONE_ERROR
  kCrServerLost = 2013,            // CR_SERVER_LOST
  kCrAuthPluginCannotLoad = 2059,  // CR_AUTH_PLUGIN_CANNOT_LOAD
  kCrServerLostExtended = 2055,    // CR_SERVER_LOST_EXTENDED
};

std::string OneLine(const char* what) {
  std::string msg = what;
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return msg;
}

// The client lost the connection, or the server ends it as it answers (a
// shutdown, KILL CONNECTION, wait_timeout): a retry later may succeed.
bool IsConnectionLost(int code) {
  return code == kCrServerGone || code == kCrServerLost || code == kCrServerLostExtended ||
         code == kCrConnectionError || code == kCrConnHostError || code == kErServerShutdown ||
         code == kErConnectionKilled || code == kErInteractionTimeout;
}

// The process's open sockets (descriptors from /proc/self/fd).
std::set<int> OpenSockets() {
  std::set<int> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    const std::string name = e.path().filename().string();
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc()) continue;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) out.insert(fd);
  }
  return out;
}

// The one socket in `after` not in `before` (the connection Connector/C++
// just made, which it does not expose), or -1 when there is not exactly one.
int NewSocket(const std::set<int>& before, const std::set<int>& after) {
  int found = -1;
  for (int fd : after) {
    if (before.count(fd) != 0) continue;
    if (found >= 0) return -1;
    found = fd;
  }
  return found;
}

// TCP keepalives as widen sets them on PostgreSQL (keepalives_idle=60,
// interval 10, count 6) and a 120 s TCP user timeout; a Unix socket is left
// as it is.
void SetKeepalives(int fd) {
  const int on = 1, idle = 60, interval = 10, count = 6;
  const unsigned user_timeout_ms = 120000;
  if (::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) != 0) return;
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
}

// A failed query: Unavailable when the connection is gone (or the server asks
// for a retry), else InvalidArgument (bad `where` text, a missing table).
Status QueryError(const std::string& context, const std::exception& e) {
  WIDEN_RETURN_IF_ERROR(CutStatus(context));  // the watcher closed the socket
  const auto* se = dynamic_cast<const sql::SQLException*>(&e);
  const int code = se != nullptr ? se->getErrorCode() : 0;
  const std::string msg = OneLine(e.what());
  if (IsConnectionLost(code)) {
    return Status::Unavailable(fmt::format(
        "{}: the connection to the source was lost: {} (MySQL error {})", context, msg, code));
  }
  if (code == kErLockWaitTimeout || code == kErLockDeadlock) {
    return Status::Unavailable(fmt::format("{}: {} (MySQL error {})", context, msg, code));
  }
  if (code != 0)
    return Status::InvalidArgument(fmt::format("{}: {} (MySQL error {})", context, msg, code));
  return Status::InvalidArgument(fmt::format("{}: {}", context, msg));
}

Status ConnectError(const std::string& url, const std::exception& e) {
  const auto* se = dynamic_cast<const sql::SQLException*>(&e);
  const int code = se != nullptr ? se->getErrorCode() : 0;
  std::string m = fmt::format("source {}: {}", MaskUrl(url), OneLine(e.what()));
  if (code != 0) m += fmt::format(" (MySQL error {})", code);
  switch (code) {
    case kErAccessDenied:
    case kErAccessDeniedToDb:
    case kErAccessDeniedNoPw:
    case kCrAuthPluginCannotLoad:
      return Status::Unauthenticated(m);
    case kErBadDb:
      return Status::NotFound(m);
    default:
      return Status::Unavailable(m);
  }
}

// The kind of a result column from Connector/C++'s metadata (free-form
// queries, where information_schema does not apply).
ColumnKind KindForResultColumn(sql::ResultSetMetaData* md, unsigned i) {
  switch (md->getColumnType(i)) {
    case sql::DataType::BIT:
      return ColumnKind::kUInt;
    case sql::DataType::TINYINT:
    case sql::DataType::SMALLINT:
    case sql::DataType::MEDIUMINT:
    case sql::DataType::INTEGER:
    case sql::DataType::YEAR:
      return ColumnKind::kInt;
    case sql::DataType::BIGINT:
      return md->isSigned(i) ? ColumnKind::kInt : ColumnKind::kUInt;
    case sql::DataType::REAL:
      return ColumnKind::kFloat;
    case sql::DataType::DOUBLE:
      return ColumnKind::kDouble;
    case sql::DataType::DECIMAL:
    case sql::DataType::NUMERIC:
      return ColumnKind::kDecimal;
    case sql::DataType::CHAR:
    case sql::DataType::VARCHAR:
    case sql::DataType::LONGVARCHAR:
    case sql::DataType::ENUM:
    case sql::DataType::SET:
      return ColumnKind::kText;
    case sql::DataType::JSON:
      return ColumnKind::kJson;
    case sql::DataType::BINARY:
    case sql::DataType::VARBINARY:
    case sql::DataType::LONGVARBINARY:
      return ColumnKind::kBytes;
    case sql::DataType::GEOMETRY:
      return ColumnKind::kGeometry;
    case sql::DataType::DATE:
      return ColumnKind::kDate;
    case sql::DataType::TIMESTAMP:  // DATETIME and TIMESTAMP both
      return std::string(md->getColumnTypeName(i)).find("TIMESTAMP") != std::string::npos
                 ? ColumnKind::kTimestamp
                 : ColumnKind::kDateTime;
    case sql::DataType::TIME:
      return ColumnKind::kTime;
    default:
      return ColumnKind::kOther;
  }
}

bool IsTextKind(ColumnKind k) { return k == ColumnKind::kText || k == ColumnKind::kJson; }

// True when a keyset predicate on this kind compares exactly what ORDER BY sorts.
bool CanPageOn(ColumnKind k) { return k != ColumnKind::kOther && k != ColumnKind::kGeometry; }

// Declared lengths up to this many characters pad merge keys; longer (TEXT)
// or unknown lengths are measured (the longest value).
constexpr int64_t kMaxDeclaredPadChars = 512;

// A FROM item with the side's columns and no rows, for probes.
std::string EmptyFrom(const LinkSide& side) {
  return side.query.empty() ? MySqlSource::QuoteIdent(side.table)
                            : "(SELECT * FROM (" + side.query + ") AS widen_q LIMIT 0)";
}

// A FROM item with the side's rows.
std::string RowsOf(const LinkSide& side) {
  return side.query.empty() ? MySqlSource::QuoteIdent(side.table)
                            : "(" + side.query + ") AS widen_q";
}

}  // namespace

struct MySqlSource::Session {
  std::unique_ptr<sql::Connection> conn;
  // The connection's socket, watched (server_watch.h), when it was found;
  // reset before conn.
  std::unique_ptr<ServerWatch> watch;
  std::string masked_url;
  bool schema_loaded = false;
  SourceSchema schema;
  // The columns of tables and described queries, and how nest links compare.
  MySqlCatalog catalog;
  // How this server's SQL is written (reads `catalog`).
  MySqlDialect dialect{catalog};
  // Per table without a primary key: the columns of its narrowest UNIQUE
  // index whose columns are all NOT NULL, a total order to page by.
  std::map<std::string, std::vector<std::string>> unique_not_null;
  // The stream holding an open unbuffered result, if any: no other query can
  // run on the connection until it is read to its end or destroyed.
  const void* unbuffered_owner = nullptr;
  std::string unbuffered_table;
  // LinkSide::Id() -> the longest value, in characters (measured once).
  std::map<std::string, int64_t> longest;
  // Prepared `SET @widen_p1 = ?, ...` statements, by their number of parameters.
  std::map<size_t, std::unique_ptr<sql::PreparedStatement>> set_params;
  // Streams' next pages, queried on one thread of the session's, in the
  // order they were asked for, while the streams' caller reads the pages
  // before them (MySqlRowStream::StartPrefetch): the connection runs one
  // query at a time, and a stream that moves to its next page waits only
  // for that page, not for another stream's query queued before it.
  std::thread prefetch;
  std::mutex prefetch_mu;
  std::condition_variable prefetch_cv;
  std::deque<std::function<void()>> prefetch_queue;  // guarded by prefetch_mu
  bool prefetch_busy = false;                        // a task runs; guarded by prefetch_mu
  bool prefetch_stop = false;                        // guarded by prefetch_mu

  /// Queues `task` (a page's query) for the prefetch thread, starting the
  /// thread first when needed. False when no thread could be started: the
  /// caller then runs the query itself. REQUIRES: prefetch_mu held.
  bool EnqueueLocked(std::function<void()> task) {
    if (!prefetch.joinable()) {
      try {
        prefetch = std::thread([this] { PrefetchLoop(); });
      } catch (const std::system_error&) {
        return false;
      }
    }
    prefetch_queue.push_back(std::move(task));
    prefetch_cv.notify_all();
    return true;
  }

  /// Waits until the prefetch thread ran every task queued. Every use of
  /// `conn` (and of `set_params`) on the caller's thread starts with it.
  void Settle() {
    std::unique_lock<std::mutex> lock(prefetch_mu);
    prefetch_cv.wait(lock, [this] { return prefetch_queue.empty() && !prefetch_busy; });
  }

  ~Session() {
    {
      std::lock_guard<std::mutex> lock(prefetch_mu);
      prefetch_stop = true;
      prefetch_cv.notify_all();
    }
    if (prefetch.joinable()) prefetch.join();
  }

  // The prefetch thread: runs the queued tasks in order until stopped with
  // none left.
  void PrefetchLoop() {
    sql::Driver* driver = sql::mysql::get_mysql_driver_instance();
    driver->threadInit();  // the client library's per-thread state
    std::unique_lock<std::mutex> lock(prefetch_mu);
    for (;;) {
      prefetch_cv.wait(lock, [this] { return prefetch_stop || !prefetch_queue.empty(); });
      if (prefetch_queue.empty()) break;  // stopped
      std::function<void()> task = std::move(prefetch_queue.front());
      prefetch_queue.pop_front();
      prefetch_busy = true;
      lock.unlock();
      task();  // sets its stream's `done` under prefetch_mu
      lock.lock();
      prefetch_busy = false;
      prefetch_cv.notify_all();
    }
    lock.unlock();
    driver->threadEnd();
  }

  // Scans read side by side are checked to be paged (ScanSpec::shared), so
  // this is a bug.
  Status Busy(const std::string& table) const {
    return Status::Internal(fmt::format(
        "source {}: cannot query table '{}' while table '{}' is read in one unbuffered result",
        masked_url, table, unbuffered_table));
  }

  Status LoadSchema();
  /// Finds out how `=` compares the text columns `parent` and `child` (the
  /// collation, the padding), once; throws the connector's exceptions.
  void PrepareTextCompare(const LinkSide& parent, const LinkSide& child);
  /// Runs `sql` with LIMIT 0 and records its columns in catalog.queries (and *t).
  Status DescribeQuery(const std::string& sql, SourceTable* t);
  /// Loads the schema and describes spec.query, as far as not done yet.
  Status Prepare(const ScanSpec& spec);
  /// Sets the session variables of the placeholders (@widen_p1, ...) to
  /// `params` through one prepared statement; throws the connector's
  /// exceptions. REQUIRES: no unbuffered result is open.
  void SetParams(const std::vector<Value>& params);
};

namespace {

// A scan's query (SelectBuilder with the MySQL dialect), and how to decode
// and page it.
struct QueryPlan {
  ScanSpec spec;
  SelectOptions options;          // the page key (when paged); every key's value selected
  BuiltQuery first;               // the first page's query
  std::vector<ColumnKind> kinds;  // per selected column (visible, then hidden key columns)
  std::vector<std::string> names;
  std::vector<std::string> source_types;
  std::vector<bool> nullable;
  bool paged = false;
  std::string not_paged_why;         // when !paged: the reason, for messages
  std::vector<std::string> unknown;  // columns missing from the schema
  std::string error;                 // a link the server cannot compare
};

// Keyset: merge keys, order_by, then the unique key's columns in the
// column's own order (not already ordered so). Without a unique key (or with
// a key type that cannot be compared exactly) the scan is one unbuffered
// result ordered by the merge keys and order_by alone. A table without a
// primary key pages by a UNIQUE index of NOT NULL columns when it has one.
// `page_rows` rows per page (the first page's LIMIT).
QueryPlan PlanQuery(const MySqlSource::Session& s, const ScanSpec& spec, int page_rows) {
  const MySqlDialect& d = s.dialect;
  const SelectBuilder builder(d);
  QueryPlan q;
  q.spec = spec;
  bool known = false;
  auto check = [&](const ColumnExpr& c) {
    d.MetaOf(spec, c, &known);
    if (!known) q.unknown.push_back(c.alias + "." + c.column);
  };
  for (const auto& c : spec.columns) check(c);
  for (size_t l = 0; l < spec.merge.size(); ++l) {
    for (size_t i = 0; i < spec.merge[l].on.size(); ++i) {
      check(spec.merge[l].on[i].first);
      const std::string error = d.MergeKey(spec, l, i).error;
      if (!error.empty()) q.error = error;
    }
  }
  std::vector<ColumnExpr> unique_key = spec.unique_key;
  if (unique_key.empty() && spec.query.empty()) {
    auto u = s.unique_not_null.find(spec.table);
    if (u != s.unique_not_null.end()) {
      for (const auto& c : u->second) unique_key.push_back(ColumnExpr{spec.alias, c, false});
    }
  }
  q.options.select_key_values = true;
  q.options.page_key = unique_key;
  q.options.limit = page_rows;
  q.first = builder.Build(spec, q.options);
  q.paged = !unique_key.empty();
  if (!q.paged) q.not_paged_why = "it has no primary key or unique key of NOT NULL columns";
  for (const auto& k : q.first.keys) {
    const ColumnMeta m = d.MetaOf(spec, k.term.column, &known);
    if (q.paged && !CanPageOn(m.kind)) {
      q.paged = false;
      q.not_paged_why = fmt::format(
          "column {}.{} ({}) is part of the key it would be read in pages by, and widen cannot "
          "compare such values exactly",
          k.term.column.alias, k.term.column.column,
          m.source_type.empty() ? "of an unknown type" : m.source_type);
    }
  }
  if (!q.paged) {
    q.options.page_key.clear();
    q.options.limit = 0;
    q.first = builder.Build(spec, q.options);
  }
  for (const SelectItem& item : q.first.items) {
    const ColumnExpr& c = item.role == SelectItem::Role::kMergeKey
                              ? spec.merge[item.link].on[item.pair].first
                              : item.column;
    const ColumnMeta m = d.MetaOf(spec, c, &known);
    if (item.role == SelectItem::Role::kKeyValue && !known) {
      q.unknown.push_back(c.alias + "." + c.column);  // hidden: read for paging only
    }
    if (item.role == SelectItem::Role::kMergeKey) {
      q.kinds.push_back(d.MergeKey(spec, item.link, item.pair).kind);
      q.names.push_back("widen_merge_" + c.column);
    } else {
      q.kinds.push_back(m.kind);
      q.names.push_back(c.column);
    }
    q.source_types.push_back(m.source_type);
    q.nullable.push_back(m.nullable);
  }
  return q;
}

// A scan read side by side with others on the one connection must be read
// in pages: an unpaged result holds the connection until it is read whole.
Status CheckShared(const QueryPlan& q, const ScanSpec& spec, const std::string& name) {
  if (!spec.shared || q.paged) return Status::OK();
  return Status::InvalidArgument(fmt::format(
      "table {} cannot be read in pages ({}); with nesting, MySQL/MariaDB reads every table of "
      "the target table on one connection at once, in pages ordered by a key; nest (or drive "
      "from) a table with a primary key of numbers, text, dates or bytes",
      name, q.not_paged_why));
}

class MySqlRowStream : public RowStream {
 public:
  MySqlRowStream(MySqlSource::Session* s, std::string table, int fetch_rows)
      : s_(s), table_(std::move(table)), fetch_rows_(fetch_rows < 1 ? 1 : fetch_rows) {}

  ~MySqlRowStream() override {
    ServerWatch::Scope wait(s_->watch.get());
    DropPrefetch();
    try {
      rs_.reset();  // an unbuffered result reads its remaining rows here
      stmt_.reset();
    } catch (const std::exception&) {
      // Read-only; the transaction ends with the source.
    }
    ReleaseUnbuffered();
  }

  /// `inner_params`: the values of the placeholders of spec.query (a query
  /// built around another scan's), which then has none of its own.
  Status Start(const ScanSpec& spec, std::vector<Value> inner_params) {
    q_ = PlanQuery(*s_, spec, fetch_rows_);
    inner_params_ = std::move(inner_params);
    from_mapping_ = spec.unique_key_from_mapping;
    for (const auto& j : spec.joins) joins_ += (joins_.empty() ? "" : ", ") + j.table;
    if (!q_.unknown.empty()) {
      return Status::NotFound(fmt::format("source {}: table '{}': no column {} in the schema",
                                          s_->masked_url, table_, q_.unknown.front()));
    }
    if (!q_.error.empty()) {
      return Status::InvalidArgument(
          fmt::format("source {}: table '{}': {}", s_->masked_url, table_, q_.error));
    }
    if (!inner_params_.empty() && !q_.first.params.empty()) {
      return Status::Internal("a scan over a query with parameters has parameters of its own");
    }
    WIDEN_RETURN_IF_ERROR(CheckShared(q_, spec, table_));
    const size_t visible = q_.first.visible;
    schema_.resize(visible);
    for (size_t i = 0; i < visible; ++i) {
      schema_[i].name = q_.names[i];
      schema_[i].type = mysql_internal::TypeForKind(q_.kinds[i]);
      schema_[i].source_type = q_.source_types[i];
      schema_[i].nullable = q_.nullable[i];
    }
    // SET columns: their labels joined by ',' (JSON shows them as an array).
    sets_.assign(visible, false);
    for (size_t i = 0; i < visible; ++i) {
      const std::string& t = q_.source_types[i];  // "set('a','b')"; "set" in a query's result
      sets_[i] = q_.kinds[i] == ColumnKind::kText && (t == "set" || t.rfind("set(", 0) == 0);
    }
    row_.values.resize(visible);
    hidden_.values.resize(q_.kinds.size() - visible);
    last_key_.resize(q_.first.keys.size());
    RunPage(/*first=*/true);
    if (status_.ok()) Advance();
    return status_;
  }

  bool Valid() const override { return valid_; }
  void Next() override { Advance(); }
  const Row& row() const override { return row_; }
  const RowSchema& schema() const override { return schema_; }
  Status status() const override { return status_; }

 private:
  // Later pages carry the previous page's last row again (see Page).
  int Limit(bool first) const { return first ? fetch_rows_ : fetch_rows_ + 1; }

  // The query of the page after the row whose key is `after` (the first
  // page when `first`).
  BuiltQuery Page(bool first, const std::vector<Value>& after) const {
    if (first) return q_.first;
    // The rows at or after the previous page's last row (">="): it comes
    // again, so that a second row with the same key (a join that is not
    // many-to-one) is seen and reported instead of being skipped.
    SelectOptions o = q_.options;
    o.after = after;
    o.limit = Limit(false);
    return SelectBuilder(s_->dialect).Build(q_.spec, o);
  }

  // Waits for this stream's pages queried ahead, if any are in flight, and
  // drops them.
  void DropPrefetch() {
    std::deque<std::unique_ptr<Prefetch>> dropped;
    {
      std::unique_lock<std::mutex> lock(s_->prefetch_mu);
      if (ahead_.empty()) return;
      dropping_ = true;  // no page queues another after it now
      s_->prefetch_cv.wait(lock, [this] {
        for (const auto& p : ahead_) {
          if (!p->done) return false;
        }
        return true;
      });
      dropped.swap(ahead_);
      dropping_ = false;
    }
    try {
      for (auto& p : dropped) {
        p->rs.reset();
        p->stmt.reset();
      }
    } catch (const std::exception&) {
    }
  }

  // The key of the last row of full page `rs` (its cursor is left before
  // the first row), or nullopt when the page is not full or a key value
  // cannot be read (Decode reports that when its turn comes). Throws the
  // connector's exceptions.
  std::optional<std::vector<Value>> LastKey(sql::ResultSet* rs, int limit) const {
    if (rs->rowsCount() < static_cast<size_t>(limit)) return std::nullopt;
    std::vector<Value> key(q_.first.keys.size());
    rs->last();
    for (size_t k = 0; k < key.size(); ++k) {
      if (!DecodeValue(rs, static_cast<unsigned>(q_.first.keys[k].item), &key[k])) {
        rs->beforeFirst();
        return std::nullopt;
      }
    }
    rs->beforeFirst();
    return key;
  }

  // Queues the query of the page after the row whose key is `key` on the
  // session's prefetch thread, behind another stream's page if one is
  // queued (this stream's reader waits for its own pages only, NextPage).
  // When that page comes back full, the page after it is queued in turn,
  // up to kPagesAhead pages ahead of the one being read: the connection
  // then runs queries back to back while widen decodes. False when no
  // prefetch thread could be started (the reader queries the page itself).
  // REQUIRES: prefetch_mu held.
  bool QueueAheadLocked(std::vector<Value> key) {
    auto p = std::make_unique<Prefetch>();
    p->key = std::move(key);
    p->page = Page(false, p->key);
    Prefetch* raw = p.get();
    auto task = [this, raw] {
      std::optional<std::vector<Value>> next_key;
      try {
        ServerWatch::Scope wait(s_->watch.get());
        s_->SetParams(raw->page.params.empty() ? inner_params_ : raw->page.params);
        raw->stmt.reset(s_->conn->createStatement());
        raw->rs.reset(raw->stmt->executeQuery(raw->page.sql));
        next_key = LastKey(raw->rs.get(), Limit(false));
      } catch (...) {
        raw->error = std::current_exception();
        next_key.reset();
      }
      std::lock_guard<std::mutex> lock(s_->prefetch_mu);
      raw->done = true;
      if (next_key && !dropping_ && ahead_.size() < kPagesAhead &&
          QueueAheadLocked(std::move(*next_key))) {
        return;
      }
      raw->next_key = std::move(next_key);  // queued by the reader when it gets there
    };
    if (!s_->EnqueueLocked(std::move(task))) return false;
    ahead_.push_back(std::move(p));
    return true;
  }

  // A new page is being read (rs_): the page after it is queried ahead, if
  // it is not yet. Throws the connector's exceptions.
  void StartPrefetch() {
    if (!q_.paged) return;
    // An unbuffered result holds the connection until it is read to its end.
    if (s_->unbuffered_owner != nullptr) return;
    std::unique_lock<std::mutex> lock(s_->prefetch_mu);
    if (!ahead_.empty()) {
      // The chain stopped kPagesAhead pages ahead of the page before: go on
      // from its last page, once that one came back full.
      Prefetch* last = ahead_.back().get();
      if (last->done && last->next_key && ahead_.size() < kPagesAhead) {
        std::vector<Value> key = std::move(*last->next_key);
        last->next_key.reset();
        QueueAheadLocked(std::move(key));
      }
      return;
    }
    lock.unlock();
    std::optional<std::vector<Value>> key = LastKey(rs_.get(), page_limit_);
    if (!key) return;
    lock.lock();
    QueueAheadLocked(std::move(*key));
  }

  // Moves to the next page: the one queried ahead when it starts where this
  // page ended, else queried now.
  void NextPage() {
    std::unique_ptr<Prefetch> p;
    {
      std::unique_lock<std::mutex> lock(s_->prefetch_mu);
      if (!ahead_.empty()) {
        Prefetch* front = ahead_.front().get();
        s_->prefetch_cv.wait(lock, [front] { return front->done; });
        p = std::move(ahead_.front());
        ahead_.pop_front();
      }
    }
    if (p == nullptr) return RunPage(/*first=*/false);
    bool same = p->key.size() == last_key_.size();
    for (size_t k = 0; same && k < p->key.size(); ++k) {
      same = CompareValues(p->key[k], last_key_[k]) == 0;
    }
    if (!same) {  // not expected: the page's last row is the one read last
      try {
        p->rs.reset();
        p->stmt.reset();
      } catch (const std::exception&) {
      }
      DropPrefetch();  // pages after it start from its rows
      return RunPage(/*first=*/false);
    }
    if (p->error) {
      try {
        std::rethrow_exception(p->error);
      } catch (const std::exception& e) {
        return Fail(PageError(p->page, e));
      }
    }
    stmt_ = std::move(p->stmt);
    rs_ = std::move(p->rs);
    BeginPage(/*first=*/false);
  }

  void ReleaseUnbuffered() {
    if (s_->unbuffered_owner == this) {
      s_->unbuffered_owner = nullptr;
      s_->unbuffered_table.clear();
    }
  }

  void Fail(Status st) {
    status_ = std::move(st);
    valid_ = false;
    DropPrefetch();
    try {
      rs_.reset();
      stmt_.reset();
    } catch (const std::exception&) {
    }
    ReleaseUnbuffered();
  }

  void RunPage(bool first) {
    if (s_->unbuffered_owner != nullptr && s_->unbuffered_owner != this) {
      return Fail(s_->Busy(table_));
    }
    const BuiltQuery page = Page(first, last_key_);
    ServerWatch::Scope wait(s_->watch.get());
    try {
      DropPrefetch();
      s_->Settle();
      rs_.reset();
      stmt_.reset();
      s_->SetParams(page.params.empty() ? inner_params_ : page.params);
      stmt_.reset(s_->conn->createStatement());
      if (!q_.paged) {
        stmt_->setResultSetType(sql::ResultSet::TYPE_FORWARD_ONLY);
        s_->unbuffered_owner = this;
        s_->unbuffered_table = table_;
      }
      rs_.reset(stmt_->executeQuery(page.sql));
      BeginPage(first);
    } catch (const std::exception& e) {
      Fail(PageError(page, e));
    }
  }

  // rs_ holds a new page (the first when `first`): its rows are counted from
  // here, and the page after it is prefetched. Throws the connector's
  // exceptions.
  void BeginPage(bool first) {
    page_rows_ = 0;
    page_limit_ = Limit(first);
    skip_repeat_ = !first;
    StartPrefetch();
  }

  // The error of a page's query that failed.
  Status PageError(const BuiltQuery& page, const std::exception& e) const {
    return QueryError(fmt::format("table {}: query failed ({})", table_, SqlForMessage(page.sql)),
                      e);
  }

  void Advance() {
    valid_ = false;
    if (!status_.ok()) return;
    // A buffered page is in memory: only an unbuffered result waits on the
    // server row by row (a page's query is watched where it is sent).
    ServerWatch::Scope wait(q_.paged ? nullptr : s_->watch.get());
    try {
      while (rs_ != nullptr) {
        if (rs_->next()) {
          ++page_rows_;
          Decode();
          if (skipped_) continue;  // the previous page's last row, read again
          return;
        }
        // A page may be in flight meanwhile: a buffered result is freed
        // without the connection, and an unbuffered one never overlaps a
        // page in flight (StartPrefetch, RunPage).
        rs_.reset();
        stmt_.reset();
        ReleaseUnbuffered();
        if (!q_.paged || page_rows_ < page_limit_) return;  // the end
        NextPage();
      }
    } catch (const std::exception& e) {
      Fail(QueryError(fmt::format("reading table {}", table_), e));
    }
  }

  void Decode() {
    skipped_ = false;
    const unsigned n = static_cast<unsigned>(q_.kinds.size());
    for (unsigned i = 0; i < n; ++i) {
      Value& v = i < q_.first.visible ? row_.values[i] : hidden_.values[i - q_.first.visible];
      if (!DecodeValue(i, &v)) {
        const std::string text = rs_->getString(i + 1);
        return Fail(Status::InvalidArgument(fmt::format(
            "table {}, column {}: cannot read value '{}' as {}", table_, q_.names[i],
            text.substr(0, 80), ValueTypeName(mysql_internal::TypeForKind(q_.kinds[i])))));
      }
    }
    valid_ = true;
    if (!q_.paged) return;
    // Paging needs a total order: equal keys would be cut between pages.
    bool same = have_last_;
    for (size_t k = 0; k < q_.first.keys.size(); ++k) {
      const Value& v = KeyValue(k);
      if (same && CompareValues(v, last_key_[k]) != 0) same = false;
    }
    if (same && skip_repeat_) {
      skip_repeat_ = false;
      skipped_ = true;
      valid_ = false;
      return;
    }
    skip_repeat_ = false;
    if (same && from_mapping_) {
      return Fail(Status::InvalidArgument(fmt::format(
          "table {}: two rows have the same values ({}) of the columns that place their cells "
          "(nest link, row key or nested id, version), so they would give the same cells; {} "
          "has no primary key to tell them apart by: add a column that does to the key or id",
          table_, DescribeKey(), table_)));
    }
    if (same) {
      return Fail(Status::InvalidArgument(fmt::format(
          "table {}: two rows have the same ordering key ({}), so paging would lose rows: the "
          "primary key is not unique, or a join{} matches more than one row (a join must be "
          "many-to-one; a nested table is read joined to its parent's table on their link, "
          "which must name one row of it)",
          table_, DescribeKey(), joins_.empty() ? "" : " (to " + joins_ + ")")));
    }
    for (size_t k = 0; k < q_.first.keys.size(); ++k) last_key_[k] = KeyValue(k);
    have_last_ = true;
  }

  // Reads column `i` (0-based, of every selected column) of the current
  // row into *v; false when its text is not a value of its kind.
  bool DecodeValue(unsigned i, Value* v) const { return DecodeValue(rs_.get(), i, v); }
  // The same from result `rs` (a page queried ahead, on the prefetch thread).
  bool DecodeValue(sql::ResultSet* rs, unsigned i, Value* v) const {
    // One call into the connector per value: getString gives "" for NULL
    // and wasNull tells them apart; the text is parsed where it lies.
    const sql::SQLString text = rs->getString(i + 1);
    if (rs->wasNull()) {
      v->SetNull(mysql_internal::TypeForKind(q_.kinds[i]));
      return true;
    }
    if (!mysql_internal::ParseValue(q_.kinds[i], text.asStdString(), v)) return false;
    if (i < sets_.size() && sets_[i]) v->SetList(ListForm::kSet, ValueType::kText);
    return true;
  }

  const Value& KeyValue(size_t k) const {
    const size_t i = q_.first.keys[k].item;
    return i < q_.first.visible ? row_.values[i] : hidden_.values[i - q_.first.visible];
  }

  std::string DescribeKey() const {
    std::string s;
    for (size_t k = 0; k < q_.first.keys.size(); ++k) {
      s += (k ? ", " : "") + KeyValue(k).DebugString();
    }
    return s;
  }

  MySqlSource::Session* s_;
  std::string table_;
  int fetch_rows_;
  QueryPlan q_;
  std::unique_ptr<sql::Statement> stmt_;
  std::unique_ptr<sql::ResultSet> rs_;
  int page_rows_ = 0;
  int page_limit_ = 0;
  bool skip_repeat_ = false;  // the first row of a later page repeats the last one read
  bool skipped_ = false;      // Decode() read that repeated row
  bool valid_ = false;
  bool have_last_ = false;
  bool from_mapping_ = false;  // the paging key is ScanSpec::unique_key_from_mapping
  std::string joins_;          // the joined tables, for messages
  std::vector<Value> last_key_;
  std::vector<Value> inner_params_;  // of spec.query's placeholders
  // A page queried ahead on the session's prefetch thread (QueueAhead):
  // written by that thread, read here once `done`.
  struct Prefetch {
    bool done = false;       // the query ended; guarded by Session::prefetch_mu
    std::vector<Value> key;  // the last row of the page before it
    BuiltQuery page;
    std::unique_ptr<sql::Statement> stmt;
    std::unique_ptr<sql::ResultSet> rs;
    std::exception_ptr error;
    // Full, but kPagesAhead were queued already: the key the page after it
    // starts at. Guarded by Session::prefetch_mu.
    std::optional<std::vector<Value>> next_key;
  };
  // Pages queried ahead at most (MySQL has no second query in flight on a
  // connection; these are queued back to back).
  static constexpr size_t kPagesAhead = 4;
  // This stream's pages queried ahead, in order; pushed by either thread,
  // popped by the reader. Guarded by Session::prefetch_mu.
  std::deque<std::unique_ptr<Prefetch>> ahead_;
  bool dropping_ = false;  // DropPrefetch waits: nothing more is queued; guarded as ahead_
  RowSchema schema_;
  Row row_, hidden_;
  std::vector<bool> sets_;  // per visible column: a SET
  Status status_;
};

}  // namespace

Status MySqlSource::Session::LoadSchema() {
  // Unloaded until the whole schema is read: a failure part way (a lost
  // connection) leaves no partial catalog that later calls would trust.
  schema_loaded = false;
  schema = SourceSchema();
  catalog.tables.clear();
  Settle();
  std::unique_ptr<sql::Statement> st(conn->createStatement());
  std::unique_ptr<sql::ResultSet> rs;
  // MariaDB's JSON is LONGTEXT with CHECK (json_valid(`col`)).
  std::set<std::pair<std::string, std::string>> json_cols;
  rs.reset(st->executeQuery("SELECT VERSION()"));
  const bool mariadb =
      rs->next() && std::string(rs->getString(1)).find("MariaDB") != std::string::npos;
  if (mariadb) {
    rs.reset(
        st->executeQuery("SELECT TABLE_NAME, CONSTRAINT_NAME, CHECK_CLAUSE FROM "
                         "information_schema.CHECK_CONSTRAINTS "
                         "WHERE CONSTRAINT_SCHEMA = DATABASE()"));
    while (rs->next()) {
      const std::string col(rs->getString(2));
      if (std::string(rs->getString(3)) == "json_valid(" + QuoteIdent(col) + ")") {
        json_cols.emplace(std::string(rs->getString(1)), col);
      }
    }
  }
  std::map<std::string, SourceTable> tables;
  rs.reset(st->executeQuery(
      "SELECT TABLE_NAME, TABLE_ROWS, TABLE_TYPE FROM information_schema.TABLES WHERE "
      "TABLE_SCHEMA = DATABASE() AND TABLE_TYPE IN ('BASE TABLE', 'VIEW', 'SYSTEM VERSIONED')"));
  while (rs->next()) {
    SourceTable t;
    t.name = rs->getString(1);
    t.estimated_rows = rs->isNull(2) ? -1 : static_cast<int64_t>(rs->getUInt64(2));
    t.is_view = std::string(rs->getString(3)) == "VIEW";
    tables.emplace(t.name, std::move(t));
  }
  rs.reset(st->executeQuery(
      "SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, NUMERIC_PRECISION, "
      "NUMERIC_SCALE, CHARACTER_SET_NAME, COLLATION_NAME, CHARACTER_MAXIMUM_LENGTH FROM "
      "information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
      "ORDER BY TABLE_NAME, ORDINAL_POSITION"));
  while (rs->next()) {
    auto it = tables.find(std::string(rs->getString(1)));
    if (it == tables.end()) continue;
    SourceColumn c;
    c.name = rs->getString(2);
    const std::string data_type = rs->getString(3);
    const bool is_json = json_cols.count({it->first, c.name}) > 0;
    ColumnMeta m;
    m.kind = mysql_internal::KindForColumn(data_type, std::string(rs->getString(4)), is_json);
    m.precision = rs->isNull(6) ? 0 : rs->getInt(6);
    m.scale = rs->isNull(7) ? 0 : rs->getInt(7);
    m.charset = rs->isNull(8) ? "" : std::string(rs->getString(8));
    m.collation = rs->isNull(9) ? "" : std::string(rs->getString(9));
    m.max_chars = rs->isNull(10) ? -1 : static_cast<int64_t>(rs->getUInt64(10));
    m.enum_or_set =
        data_type == "enum" || data_type == "set" || data_type == "ENUM" || data_type == "SET";
    c.type = mysql_internal::TypeForKind(m.kind);
    c.source_type = is_json ? "json" : std::string(rs->getString(4));
    c.is_enum = data_type == "enum" || data_type == "set";
    c.nullable = std::string(rs->getString(5)) == "YES";
    m.source_type = c.source_type;
    m.nullable = c.nullable;
    catalog.tables[it->first][c.name] = m;
    it->second.columns.push_back(std::move(c));
  }
  // Keys: (table, constraint) -> columns in ordinal order.
  struct KeyCols {
    std::string ref_table;
    std::map<int, std::pair<std::string, std::string>> cols;  // ordinal -> (column, ref column)
  };
  std::map<std::pair<std::string, std::string>, KeyCols> keys;
  rs.reset(st->executeQuery(
      "SELECT TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, ORDINAL_POSITION, REFERENCED_TABLE_NAME, "
      "REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = "
      "DATABASE() AND (CONSTRAINT_NAME = 'PRIMARY' OR REFERENCED_TABLE_NAME IS NOT NULL)"));
  while (rs->next()) {
    KeyCols& k = keys[{std::string(rs->getString(1)), std::string(rs->getString(2))}];
    const bool fk = !rs->isNull(5);
    if (fk) k.ref_table = std::string(rs->getString(5));
    k.cols[rs->getInt(4)] = {std::string(rs->getString(3)),
                             fk ? std::string(rs->getString(6)) : std::string()};
  }
  // ON DELETE rules of the foreign keys: (table, constraint) -> DELETE_RULE.
  std::map<std::pair<std::string, std::string>, std::string> delete_rules;
  rs.reset(st->executeQuery(
      "SELECT TABLE_NAME, CONSTRAINT_NAME, DELETE_RULE FROM "
      "information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE()"));
  while (rs->next()) {
    delete_rules[{std::string(rs->getString(1)), std::string(rs->getString(2))}] =
        std::string(rs->getString(3));
  }
  for (auto& [id, k] : keys) {
    auto it = tables.find(id.first);
    if (it == tables.end()) continue;
    if (id.second == "PRIMARY" && k.ref_table.empty()) {
      for (auto& [ord, c] : k.cols) it->second.primary_key.push_back(c.first);
    } else {
      ForeignKey fk;
      fk.name = id.second;
      const std::string& rule = delete_rules[id];
      fk.on_delete = rule == "CASCADE"       ? ForeignKeyAction::kCascade
                     : rule == "SET NULL"    ? ForeignKeyAction::kSetNull
                     : rule == "SET DEFAULT" ? ForeignKeyAction::kSetDefault
                                             : ForeignKeyAction::kNoAction;
      fk.ref_table = k.ref_table;
      for (auto& [ord, c] : k.cols) {
        fk.columns.push_back(c.first);
        fk.ref_columns.push_back(c.second);
      }
      it->second.foreign_keys.push_back(std::move(fk));
    }
  }
  // UNIQUE indexes (constraints are indexes in MySQL): unique_keys, and for
  // tables without a primary key the narrowest one of NOT NULL columns, to
  // page by. Uniqueness in any collation implies uniqueness as bytes.
  struct UniqueIndex {
    std::map<int, std::string> cols;  // SEQ_IN_INDEX -> column
    bool not_null = true;
  };
  std::map<std::pair<std::string, std::string>, UniqueIndex> uniques;
  rs.reset(st->executeQuery(
      "SELECT s.TABLE_NAME, s.INDEX_NAME, s.SEQ_IN_INDEX, s.COLUMN_NAME, c.IS_NULLABLE FROM "
      "information_schema.STATISTICS s JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = "
      "s.TABLE_SCHEMA AND c.TABLE_NAME = s.TABLE_NAME AND c.COLUMN_NAME = s.COLUMN_NAME WHERE "
      "s.TABLE_SCHEMA = DATABASE() AND s.NON_UNIQUE = 0 AND s.INDEX_NAME <> 'PRIMARY'"));
  while (rs->next()) {
    UniqueIndex& u = uniques[{std::string(rs->getString(1)), std::string(rs->getString(2))}];
    u.cols[rs->getInt(3)] = std::string(rs->getString(4));
    if (std::string(rs->getString(5)) != "NO") u.not_null = false;
  }
  unique_not_null.clear();
  for (const auto& [id, u] : uniques) {
    auto t = tables.find(id.first);
    if (t == tables.end()) continue;
    std::vector<std::string> cols;
    for (const auto& [seq, c] : u.cols) cols.push_back(c);
    t->second.unique_keys.push_back(cols);
    if (!t->second.primary_key.empty() || !u.not_null) continue;
    auto& best = unique_not_null[id.first];
    if (best.empty() || cols.size() < best.size()) best = cols;
  }
  // Every B-tree index's columns (ORDER BY can use them), up to the first
  // prefix-only column, for lint's check of the nests' paging (W118).
  std::map<std::pair<std::string, std::string>, std::map<int, std::pair<std::string, bool>>>
      indexes;
  rs.reset(st->executeQuery(
      "SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, SUB_PART IS NULL FROM "
      "information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND INDEX_TYPE = 'BTREE'"));
  while (rs->next()) {
    indexes[{std::string(rs->getString(1)), std::string(rs->getString(2))}][rs->getInt(3)] = {
        std::string(rs->getString(4)), rs->getInt(5) != 0};
  }
  for (auto& [name, t] : tables) t.indexes_known = !t.is_view;
  for (const auto& [id, cols] : indexes) {
    auto t = tables.find(id.first);
    if (t == tables.end()) continue;
    std::vector<std::string> index;
    for (const auto& [seq, c] : cols) {
      if (!c.second) break;
      index.push_back(c.first);
    }
    if (!index.empty()) t->second.indexes.push_back(std::move(index));
  }
  for (auto& [name, t] : tables) schema.tables.push_back(std::move(t));
  schema_loaded = true;
  return Status::OK();
}

Status MySqlSource::Session::DescribeQuery(const std::string& sql, SourceTable* t) {
  Settle();
  std::unique_ptr<sql::Statement> st(conn->createStatement());
  std::unique_ptr<sql::ResultSet> rs(
      st->executeQuery("SELECT * FROM (" + sql + ") AS widen_q LIMIT 0"));
  sql::ResultSetMetaData* md = rs->getMetaData();
  std::map<std::string, ColumnMeta> cols;
  t->name = "query";
  t->columns.clear();
  for (unsigned i = 1; i <= md->getColumnCount(); ++i) {
    ColumnMeta m;
    m.kind = KindForResultColumn(md, i);
    m.precision = static_cast<int>(md->getPrecision(i));
    m.scale = static_cast<int>(md->getScale(i));
    std::string type_name(md->getColumnTypeName(i));
    for (char& ch : type_name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    m.source_type = type_name;
    m.nullable = true;
    if (m.kind == ColumnKind::kText) {
      m.charset = md->getColumnCharset(i);
      m.collation = md->getColumnCollation(i);
      m.enum_or_set = type_name == "enum" || type_name == "set";
    }
    SourceColumn c;
    c.name = md->getColumnLabel(i);
    c.type = mysql_internal::TypeForKind(m.kind);
    c.source_type = m.source_type;
    c.nullable = true;
    cols[c.name] = m;
    t->columns.push_back(std::move(c));
  }
  catalog.queries[sql] = std::move(cols);
  return Status::OK();
}

void MySqlSource::Session::PrepareTextCompare(const LinkSide& parent, const LinkSide& child) {
  const std::string id = parent.Id() + '\x1e' + child.Id();
  if (catalog.text_compare.count(id) > 0) return;
  TextCompare tc;
  const std::string a = "widen_a." + QuoteIdent(parent.column);
  const std::string b = "widen_b." + QuoteIdent(child.column);
  const std::string both = "IF(TRUE, " + a + ", " + b + ")";
  auto name = [](const LinkSide& side) {
    return (side.query.empty() ? side.table : "query") + "." + side.column;
  };
  // The collation IF() derives for the two columns is the one `=` compares
  // them in; the WHERE makes the server check that `=` can compare them at
  // all (it refuses two different collations of one character set, say).
  Settle();
  std::unique_ptr<sql::Statement> st(conn->createStatement());
  try {
    std::unique_ptr<sql::ResultSet> rs(st->executeQuery(
        "SELECT COLLATION(" + both + "), CHARSET(" + both + ") FROM (SELECT 1) AS widen_one " +
        "LEFT JOIN " + EmptyFrom(parent) + " AS widen_a ON FALSE LEFT JOIN " + EmptyFrom(child) +
        " AS widen_b ON FALSE WHERE (" + a + " = " + b + ") IS NULL"));
    if (rs->next()) {
      tc.collation = rs->getString(1);
      tc.charset = rs->getString(2);
    }
  } catch (const sql::SQLException& e) {
    if (IsConnectionLost(e.getErrorCode())) throw;
    tc.error = fmt::format(
        "nest on {} = {}: the server cannot compare the two columns ({}); give them one "
        "character set and collation",
        name(parent), name(child), OneLine(e.what()));
    catalog.text_compare[id] = tc;
    return;
  }
  // Pad to the longest value either side can hold (declared), or holds.
  for (const LinkSide* side : {&parent, &child}) {
    const ColumnMeta* m = catalog.Meta(*side);
    int64_t n = m != nullptr ? m->max_chars : -1;
    if (n < 0 || n > kMaxDeclaredPadChars) {
      auto it = longest.find(side->Id());
      if (it == longest.end()) {
        std::unique_ptr<sql::ResultSet> rs(st->executeQuery(
            "SELECT MAX(CHAR_LENGTH(" + QuoteIdent(side->column) + ")) FROM " + RowsOf(*side)));
        n = rs->next() && !rs->isNull(1) ? static_cast<int64_t>(rs->getUInt64(1)) : 0;
        longest[side->Id()] = n;
      } else {
        n = it->second;
      }
    }
    tc.pad_chars = std::max(tc.pad_chars, n);
  }
  catalog.text_compare[id] = tc;
}

Status MySqlSource::Session::Prepare(const ScanSpec& spec) {
  try {
    if (!schema_loaded) WIDEN_RETURN_IF_ERROR(LoadSchema());
    if (!spec.query.empty() && catalog.queries.count(spec.query) == 0) {
      SourceTable t;
      WIDEN_RETURN_IF_ERROR(DescribeQuery(spec.query, &t));
    }
    for (const MergeLink& link : spec.merge) {
      if (!link.peer_query.empty() && catalog.queries.count(link.peer_query) == 0) {
        SourceTable t;
        WIDEN_RETURN_IF_ERROR(DescribeQuery(link.peer_query, &t));
      }
      for (const auto& [c, peer_column] : link.on) {
        const LinkSide self = SideOf(spec, c);
        const LinkSide peer{link.peer_table, link.peer_query, peer_column};
        const ColumnMeta* m = catalog.Meta(self);
        if (m == nullptr || m->kind != ColumnKind::kText) continue;
        if (link.child) {
          PrepareTextCompare(peer, self);
        } else {
          PrepareTextCompare(self, peer);
        }
      }
    }
  } catch (const std::exception& e) {
    return QueryError(fmt::format("source {}: reading the schema", masked_url), e);
  }
  return Status::OK();
}

void MySqlSource::Session::SetParams(const std::vector<Value>& params) {
  if (params.empty()) return;
  auto& st = set_params[params.size()];
  if (st == nullptr) {
    std::string sql = "SET ";
    for (size_t i = 0; i < params.size(); ++i) {
      sql += (i ? ", " : "") + dialect.Placeholder(i) + " = ?";
    }
    st.reset(conn->prepareStatement(sql));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const unsigned p = static_cast<unsigned>(i + 1);
    const mysql_internal::MySqlBinding b = mysql_internal::MySqlBindingFor(params[i]);
    switch (b.setter) {
      case mysql_internal::MySqlBinding::Setter::kInt64:
        st->setInt64(p, b.i);
        break;
      case mysql_internal::MySqlBinding::Setter::kUInt64:
        st->setUInt64(p, b.u);
        break;
      case mysql_internal::MySqlBinding::Setter::kDouble:
        st->setDouble(p, b.d);
        break;
      case mysql_internal::MySqlBinding::Setter::kString:
        st->setString(p, b.s);
        break;
    }
  }
  st->execute();
}

MySqlSource::MySqlSource(std::string url, SourceOptions options)
    : url_(std::move(url)), options_(options), session_(std::make_unique<Session>()) {
  session_->masked_url = MaskUrl(url_);
}

MySqlSource::~MySqlSource() {
  try {
    ServerWatch::Scope wait(session_->watch.get());
    if (session_->conn) {
      session_->Settle();
      std::unique_ptr<sql::Statement> st(session_->conn->createStatement());
      st->execute("ROLLBACK");  // read-only: nothing to keep
    }
  } catch (const std::exception&) {
  }
  try {
    session_->set_params.clear();  // statements of the connection, closed before it
    session_->watch.reset();
    session_->conn.reset();
  } catch (const std::exception&) {
  }
}

std::string MySqlSource::QuoteIdent(const std::string& name) {
  return mysql_internal::QuoteIdent(name);
}

Result<std::unique_ptr<MySqlSource>> MySqlSource::Open(const std::string& url,
                                                       const SourceOptions& options) {
  std::string plain_url = url;  // without widen's read_timeout=
  WIDEN_ASSIGN_OR_RETURN(const int read_timeout_s, TakeReadTimeout(&plain_url));
  WIDEN_ASSIGN_OR_RETURN(mysql_internal::MySqlUrl u, mysql_internal::ParseMySqlUrl(plain_url));
  if (!u.has_password) {
    // widen's own variable first, then the MySQL client's.
    for (const char* var : {"WIDEN_SOURCE_PASSWORD", "MYSQL_PWD"}) {
      const char* p = std::getenv(var);
      if (p != nullptr) {
        u.password = p;
        break;
      }
    }
  }
  std::unique_ptr<MySqlSource> src(new MySqlSource(url, options));
  try {
    sql::ConnectOptionsMap o;
    o["hostName"] = sql::SQLString(u.host);
    o["port"] = u.port;
    o["userName"] = sql::SQLString(u.user);
    o["password"] = sql::SQLString(u.password);
    o["schema"] = sql::SQLString(u.database);
    o["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
    o["OPT_RECONNECT"] = false;  // a new connection would leave the snapshot
    o["OPT_CONNECT_TIMEOUT"] = 10;
    if (read_timeout_s > 0) {
      // Connector/C's own limits, for a wait the watch does not see (a
      // socket it could not find); the watch ends the others first.
      o["OPT_READ_TIMEOUT"] = read_timeout_s + 5;
      o["OPT_WRITE_TIMEOUT"] = read_timeout_s + 5;
    }
    // Option files (/etc/mysql/my.cnf, ~/.my.cnf): groups [client] and
    // [widen]; their password is used when neither the URL nor the
    // environment gives one (host, port, user and database are the URL's).
    o["readDefaultGroup"] = sql::SQLString("widen");
    const std::set<int> before = OpenSockets();
    ConnectScope connecting;  // an interrupt ends the process (no socket to cut yet)
    src->session_->conn.reset(sql::mysql::get_mysql_driver_instance()->connect(o));
    const int fd = NewSocket(before, OpenSockets());
    if (fd >= 0) {
      SetKeepalives(fd);
      src->session_->watch = std::make_unique<ServerWatch>(fd, read_timeout_s);
    }
  } catch (const std::exception& e) {
    return ConnectError(url, e);
  }
  ServerWatch::Scope wait(src->session_->watch.get());
  try {
    std::unique_ptr<sql::Statement> st(src->session_->conn->createStatement());
    st->execute("SET NAMES utf8mb4");
    st->execute("SET time_zone = '+00:00'");
    st->execute(
        "SET SESSION sql_mode = 'STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO,"
        "NO_ENGINE_SUBSTITUTION'");
    st->execute("SET SESSION sql_select_limit = 18446744073709551615");
    st->execute("SET SESSION net_write_timeout = 3600");
    // Parallel jobs' connections wait idle while other tables run.
    st->execute("SET SESSION wait_timeout = 604800");
    // ORDER BY compares only the first max_sort_length bytes of a value:
    // longer keys sharing a prefix would sort in no order while the keyset
    // predicate compares them whole. 8 MiB is the largest both servers take.
    st->execute("SET SESSION max_sort_length = 8388608");
    // A server-wide statement time limit would cut a long read: off where the
    // server has one (MariaDB max_statement_time, MySQL max_execution_time).
    for (const char* limit :
         {"SET SESSION max_statement_time = 0", "SET SESSION max_execution_time = 0"}) {
      try {
        st->execute(limit);
      } catch (const sql::SQLException&) {
        // Not this server's variable.
      }
    }
    st->execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    st->execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
  } catch (const std::exception& e) {
    return QueryError(fmt::format("source {}: setting up the session", MaskUrl(url)), e);
  }
  return src;
}

// How long OpenSiblings waits for its read lock (s).
constexpr int kSnapshotLockWaitSeconds = 10;

Result<std::vector<std::unique_ptr<Source>>> MySqlSource::OpenSiblings(int n,
                                                                       const SourceReads& reads) {
  ServerWatch::Scope wait(session_->watch.get());
  const std::vector<std::string>& tables = reads.tables;
  if (session_->unbuffered_owner != nullptr) return session_->Busy("(parallel jobs)");
  std::vector<std::unique_ptr<MySqlSource>> sources;
  for (int i = 0; i < n; ++i) {
    WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<MySqlSource> s, Open(url_, options_));
    sources.push_back(std::move(s));
  }
  WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<MySqlSource> locker, Open(url_, options_));
  const std::string& masked = session_->masked_url;
  try {
    // Nothing this connection read is reused: end its transaction so that
    // it holds no metadata lock the read lock below would wait for.
    session_->Settle();
    std::unique_ptr<sql::Statement> mine(session_->conn->createStatement());
    mine->execute("COMMIT");
    std::unique_ptr<sql::Statement> st(locker->session_->conn->createStatement());
    st->execute("COMMIT");
    // While the lock request waits, the server queues other sessions'
    // writes behind it: give up soon rather than stall them.
    st->execute(fmt::format("SET SESSION lock_wait_timeout = {}", kSnapshotLockWaitSeconds));
    auto lock_timeout = [&](const sql::SQLException& e) {
      return Status::Unavailable(fmt::format(
          "source {}: parallel jobs need a brief read lock to start one snapshot on every "
          "connection, and it was not granted within {} s ({}): another session holds a lock "
          "or runs a long statement; retry later, or run with --jobs 1",
          masked, kSnapshotLockWaitSeconds, OneLine(e.what())));
    };
    // MySQL cannot share a snapshot between connections: writes are held
    // back for the moment it takes to start every transaction, so all of
    // them see the same data.
    std::string global_error;
    try {
      st->execute("FLUSH TABLES WITH READ LOCK");
    } catch (const sql::SQLException& e) {
      if (e.getErrorCode() == kErLockWaitTimeout) return lock_timeout(e);
      global_error = OneLine(e.what());
    }
    if (!global_error.empty()) {
      if (reads.sql_text || tables.empty()) {
        return Status::PermissionDenied(fmt::format(
            "source {}: parallel jobs need one snapshot for every connection, which MySQL gives "
            "only under a brief read lock: FLUSH TABLES WITH READ LOCK was refused ({}), and "
            "LOCK TABLES covers only the tables the mapping names, not what SQL text in it may "
            "read (a free-form query, a where with a subquery or a function); grant RELOAD to "
            "the user, or run with --jobs 1",
            masked, global_error));
      }
      std::string list;
      for (const auto& t : tables) list += (list.empty() ? "" : ", ") + QuoteIdent(t) + " READ";
      try {
        st->execute("LOCK TABLES " + list);
      } catch (const sql::SQLException& e) {
        if (e.getErrorCode() == kErLockWaitTimeout) return lock_timeout(e);
        return Status::PermissionDenied(fmt::format(
            "source {}: parallel jobs need one snapshot for every connection, which MySQL gives "
            "only under a brief read lock: FLUSH TABLES WITH READ LOCK ({}) and LOCK TABLES ... "
            "READ ({}) were refused; grant RELOAD or LOCK TABLES to the user, or run with "
            "--jobs 1",
            masked, global_error, OneLine(e.what())));
      }
    }
    mine->execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
    for (auto& s : sources) {
      s->session_->Settle();
      std::unique_ptr<sql::Statement> t(s->session_->conn->createStatement());
      t->execute("COMMIT");
      t->execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
    }
    st->execute("UNLOCK TABLES");
  } catch (const std::exception& e) {
    return QueryError(fmt::format("source {}: starting the snapshot of parallel jobs", masked), e);
  }
  std::vector<std::unique_ptr<Source>> out;
  for (auto& s : sources) out.push_back(std::move(s));
  return out;
}

Result<SourceSchema> MySqlSource::Introspect() {
  ServerWatch::Scope wait(session_->watch.get());
  if (session_->unbuffered_owner != nullptr) return session_->Busy("information_schema");
  try {
    WIDEN_RETURN_IF_ERROR(session_->LoadSchema());
  } catch (const std::exception& e) {
    return QueryError(fmt::format("source {}: reading the schema", session_->masked_url), e);
  }
  return session_->schema;
}

std::string MySqlSource::SelectSql(const ScanSpec& spec) const {
  // The merge keys' collations come from the server (errors show in CheckScan).
  if (session_->unbuffered_owner == nullptr) (void)session_->Prepare(spec);
  return PlanQuery(*session_, spec, options_.fetch_rows < 1 ? 1 : options_.fetch_rows).first.sql;
}

Result<SourceTable> MySqlSource::DescribeQuery(const std::string& sql) {
  ServerWatch::Scope wait(session_->watch.get());
  if (session_->unbuffered_owner != nullptr) return session_->Busy("query");
  SourceTable t;
  try {
    WIDEN_RETURN_IF_ERROR(session_->DescribeQuery(sql, &t));
  } catch (const std::exception& e) {
    return QueryError("query", e);
  }
  return t;
}

Status MySqlSource::CheckTableReadable(const std::string& table) {
  ServerWatch::Scope wait(session_->watch.get());
  if (session_->unbuffered_owner != nullptr) return Status::OK();  // not asked now
  try {
    session_->Settle();
    std::unique_ptr<sql::Statement> st(session_->conn->createStatement());
    std::unique_ptr<sql::ResultSet> rs(
        st->executeQuery("SELECT 1 FROM " + QuoteIdent(table) + " LIMIT 0"));
  } catch (const sql::SQLException& e) {
    const int code = e.getErrorCode();
    if (code == kErTableAccessDenied || code == kErColumnAccessDenied) {
      // MySQL answers so for a table that does not exist as well, to a
      // user without a privilege on it: both are said.
      return Status::PermissionDenied(fmt::format(
          "source table '{}' is hidden from this user: it does not exist, or the user may not "
          "read it ({} (MySQL error {})); grant SELECT on it, or correct the name",
          table, OneLine(e.what()), code));
    }
    if (IsConnectionLost(code)) {
      return QueryError(fmt::format("source {}: table '{}'", session_->masked_url, table), e);
    }
  }
  return Status::OK();
}

Status MySqlSource::CheckScan(const ScanSpec& spec) {
  ServerWatch::Scope wait(session_->watch.get());
  const std::string name = spec.query.empty() ? spec.table : spec.alias;
  if (session_->unbuffered_owner != nullptr) return session_->Busy(name);
  WIDEN_RETURN_IF_ERROR(session_->Prepare(spec));
  const QueryPlan q = PlanQuery(*session_, spec, options_.fetch_rows < 1 ? 1 : options_.fetch_rows);
  if (!q.unknown.empty()) {
    return Status::NotFound(fmt::format("source {}: table '{}': no column {} in the schema",
                                        session_->masked_url, name, q.unknown.front()));
  }
  if (!q.error.empty()) {
    return Status::InvalidArgument(
        fmt::format("source {}: table '{}': {}", session_->masked_url, name, q.error));
  }
  WIDEN_RETURN_IF_ERROR(CheckShared(q, spec, name));
  // EXPLAIN checks names and the `where` text without reading rows.
  try {
    session_->Settle();
    session_->SetParams(q.first.params);
    std::unique_ptr<sql::Statement> st(session_->conn->createStatement());
    std::unique_ptr<sql::ResultSet> rs(st->executeQuery("EXPLAIN " + q.first.sql));
  } catch (const std::exception& e) {
    return QueryError(fmt::format("table {}: query failed ({})", name, SqlForMessage(q.first.sql)),
                      e);
  }
  return Status::OK();
}

Result<std::vector<GroupCount>> MySqlSource::LargestGroups(const ScanSpec& spec,
                                                           const std::vector<ColumnExpr>& group_by,
                                                           int limit) {
  ServerWatch::Scope wait(session_->watch.get());
  if (group_by.empty() || limit < 1) {
    return Status::InvalidArgument("LargestGroups needs group columns and a positive limit");
  }
  WIDEN_RETURN_IF_ERROR(session_->Prepare(spec));
  const ScanSpec rows = Unordered(spec, group_by);
  for (const auto& c : group_by) {
    bool known = false;
    session_->dialect.MetaOf(rows, c, &known);
    if (!known) {
      return Status::NotFound(fmt::format("source {}: no column {}.{} in the schema",
                                          session_->masked_url, c.alias, c.column));
    }
  }
  BuiltQuery q = SelectBuilder(session_->dialect).Build(rows);
  // Text marked is_text groups by its bytes, not by the column's collation,
  // which merges 'a' and 'A'; other text as the server compares it.
  std::string inner = "SELECT ", outer = "SELECT ", group;
  std::vector<std::string> names;
  for (size_t i = 0; i < group_by.size(); ++i) {
    const std::string g = fmt::format("widen_g{}", i), b = fmt::format("widen_b{}", i);
    bool known = false;
    const bool text =
        IsTextKind(session_->dialect.MetaOf(rows, group_by[i], &known).kind) && group_by[i].is_text;
    const std::string& item = q.items[i].expr;
    inner += (i ? ", " : "") + item + " AS " + g;
    if (text) inner += ", " + session_->dialect.TextByteOrder(item) + " AS " + b;
    outer += (i ? ", " : "") + (text ? "MIN(" + g + ") AS " + g : g);
    group += (i ? ", " : "") + (text ? b : g);
    names.push_back(g);
  }
  names.push_back("widen_n");
  const std::string sql = fmt::format(
      "{}, COUNT(*) AS widen_n FROM ({}{}{}) AS widen_x GROUP BY {} ORDER BY widen_n "
      "DESC, {} LIMIT {}",
      outer, inner, q.from, q.where, group, group, limit);
  WIDEN_ASSIGN_OR_RETURN(auto out, ScanWith(OverQuery(sql, names), std::move(q.params)));
  return source_internal::ReadGroups(out.get());
}

Result<std::vector<GroupCount>> MySqlSource::LargestLinkGroups(const ScanSpec& spec,
                                                               const std::vector<size_t>& links,
                                                               int limit) {
  ServerWatch::Scope wait(session_->watch.get());
  if (links.empty() || limit < 1) {
    return Status::InvalidArgument("LargestLinkGroups needs links and a positive limit");
  }
  WIDEN_RETURN_IF_ERROR(session_->Prepare(spec));
  std::vector<ColumnExpr> columns;
  std::vector<std::string> keys;  // the merge key of each link column
  for (size_t l : links) {
    if (l >= spec.merge.size()) return Status::InvalidArgument("no such nest link");
    const MergeKeys mk = session_->dialect.Merge(spec, l);
    for (size_t i = 0; i < spec.merge[l].on.size(); ++i) {
      columns.push_back(spec.merge[l].on[i].first);
      keys.push_back(mk.select[i]);
    }
  }
  const ScanSpec rows = Unordered(spec, columns);
  BuiltQuery q = SelectBuilder(session_->dialect).Build(rows);
  std::string inner = "SELECT ", outer = "SELECT ", group;
  std::vector<std::string> names;
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string g = fmt::format("widen_g{}", i), b = fmt::format("widen_b{}", i);
    inner += (i ? ", " : "") + q.items[i].expr + " AS " + g + ", " + keys[i] + " AS " + b;
    outer += (i ? ", " : "") + ("MIN(" + g + ") AS " + g);
    group += (i ? ", " : "") + b;
    names.push_back(g);
  }
  names.push_back("widen_n");
  const std::string sql = fmt::format(
      "{}, COUNT(*) AS widen_n FROM ({}{}{}) AS widen_x GROUP BY {} ORDER BY widen_n DESC, {} "
      "LIMIT {}",
      outer, inner, q.from, q.where, group, group, limit);
  WIDEN_ASSIGN_OR_RETURN(auto out, ScanWith(OverQuery(sql, names), std::move(q.params)));
  return source_internal::ReadGroups(out.get());
}

Result<ColumnSummary> MySqlSource::SummarizeColumn(const ScanSpec& spec, const ColumnExpr& column) {
  ServerWatch::Scope wait(session_->watch.get());
  WIDEN_RETURN_IF_ERROR(session_->Prepare(spec));
  const ScanSpec rows = Unordered(spec, {column});
  bool known = false;
  const ColumnMeta m = session_->dialect.MetaOf(rows, column, &known);
  if (!known) {
    return Status::NotFound(fmt::format("source {}: no column {}.{} in the schema",
                                        session_->masked_url, column.alias, column.column));
  }
  BuiltQuery q = SelectBuilder(session_->dialect).Build(rows);
  // Text: the bytewise smallest and largest, as widen orders it.
  const std::string x = q.items[0].expr;
  const std::string bytes = session_->dialect.TextByteOrder(x);
  const bool text = IsTextKind(m.kind);
  const std::string lo = text ? "CONVERT(MIN(" + bytes + ") USING utf8mb4)" : "MIN(" + x + ")";
  const std::string hi = text ? "CONVERT(MAX(" + bytes + ") USING utf8mb4)" : "MAX(" + x + ")";
  const std::string sql = fmt::format(
      "SELECT {} AS widen_min, {} AS widen_max, COUNT(*) AS widen_rows, COUNT({}) AS "
      "widen_non_null{}{}",
      lo, hi, x, q.from, q.where);
  WIDEN_ASSIGN_OR_RETURN(
      auto out, ScanWith(OverQuery(sql, {"widen_min", "widen_max", "widen_rows", "widen_non_null"}),
                         std::move(q.params)));
  return source_internal::ReadSummary(out.get());
}

Result<Value> MySqlSource::HighestValue(const ScanSpec& spec, const ColumnExpr& column) {
  ServerWatch::Scope wait(session_->watch.get());
  WIDEN_RETURN_IF_ERROR(session_->Prepare(spec));
  const ScanSpec rows = Unordered(spec, {column});
  BuiltQuery q = SelectBuilder(session_->dialect).Build(rows);
  const std::string sql =
      fmt::format("SELECT MAX({}) AS widen_max{}{}", q.items[0].expr, q.from, q.where);
  WIDEN_ASSIGN_OR_RETURN(auto out, ScanWith(OverQuery(sql, {"widen_max"}), std::move(q.params)));
  Value max;
  if (out->Valid()) max = out->row()[0];
  WIDEN_RETURN_IF_ERROR(out->status());
  return max;
}

Result<std::unique_ptr<RowStream>> MySqlSource::Scan(const ScanSpec& spec) {
  return ScanWith(spec, {});
}

Result<std::unique_ptr<RowStream>> MySqlSource::ScanWith(const ScanSpec& spec,
                                                         std::vector<Value> inner_params) {
  ServerWatch::Scope wait(session_->watch.get());
  const std::string name = spec.query.empty() ? spec.table : spec.alias;
  if (session_->unbuffered_owner != nullptr) return session_->Busy(name);
  WIDEN_RETURN_IF_ERROR(session_->Prepare(spec));
  auto stream = std::make_unique<MySqlRowStream>(session_.get(), name, options_.fetch_rows);
  WIDEN_RETURN_IF_ERROR(stream->Start(spec, std::move(inner_params)));
  return std::unique_ptr<RowStream>(std::move(stream));
}

}  // namespace widen
