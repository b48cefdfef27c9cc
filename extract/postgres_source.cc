#include "extract/postgres_source.h"

#include <libpq-events.h>
#include <libpq-fe.h>
#include <poll.h>
#include <pqxx/pqxx>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "extract/pg_copy_internal.h"
#include "extract/pg_errors_internal.h"
#include "extract/pg_text_internal.h"
#include "extract/postgres_dialect_internal.h"
#include "extract/select_builder.h"
#include "extract/server_watch.h"
#include "extract/source_internal.h"

namespace widen {

namespace pg_internal {

// A connection of a reader pool (PostgresSource::Session::readers): a
// sibling source on the same snapshot, and its libpq handle and watch.
struct ReaderConn {
  std::unique_ptr<PostgresSource> source;
  PGconn* conn = nullptr;
  ServerWatch* watch = nullptr;
};

}  // namespace pg_internal

using pg_internal::CodeForSqlState;
using pg_internal::FromVerboseMessage;
using pg_internal::PgParamText;
using pg_internal::ReaderConn;
using pg_internal::SqlStateOf;
using source_internal::OverQuery;
using source_internal::SqlForMessage;
using source_internal::Unordered;

namespace {

using Txn = pqxx::transaction<pqxx::repeatable_read, pqxx::read_only>;

// The libpq connection VerboseConnect made last on this thread (libpqxx 6
// keeps its handle private), for registering RememberError on it.
thread_local PGconn* last_connected = nullptr;

// A libpq event procedure keeping the error message of the connection's
// last result in the std::string at `pass` ("" after a success): when the
// server ends the connection, its reason ("terminating connection due to
// administrator command") is there, while libpqxx 6 reports only "Could not
// obtain client encoding".
int RememberError(PGEventId id, void* info, void* pass) {
  if (id == PGEVT_RESULTCREATE) {
    std::string* kept = static_cast<std::string*>(pass);
    // A FATAL notice (RememberFatal) is the reason the connection ends:
    // libpq's own words about the closed socket that follow do not replace it.
    if (kept->rfind("FATAL:", 0) == 0) return 1;
    const char* m = PQresultErrorMessage(static_cast<PGEventResultCreate*>(info)->result);
    *kept = m == nullptr ? "" : m;
  }
  return 1;
}

// Keeps a FATAL message that arrives outside a query in the std::string
// RememberError writes: libpq hands an error the server sends while the
// connection is idle ("terminating connection due to administrator
// command", "... due to idle-session timeout", a shutdown) to the notice
// processor, not to the next query's result, which says only that the
// connection was closed.
class RememberFatal final : public pqxx::errorhandler {
 public:
  RememberFatal(pqxx::connection_base& conn, std::string* kept)
      : pqxx::errorhandler(conn), kept_(kept) {}
  bool operator()(const char msg[]) noexcept override {
    if (msg != nullptr && std::string_view(msg).rfind("FATAL:", 0) == 0) {
      try {
        *kept_ = msg;
      } catch (...) {
      }
    }
    return true;
  }

 private:
  std::string* kept_;
};

// A connection failure: libpq's message, and the SQLSTATE the server sent
// ("" when no server answered).
struct ConnectFailure : std::runtime_error {
  ConnectFailure(const std::string& message, std::string state, bool options_invalid)
      : std::runtime_error(message), sqlstate(std::move(state)), invalid(options_invalid) {}
  std::string sqlstate;
  bool invalid;  // libpq refused the connection string before trying
};

// libpq's connection, made like PQconnectdb (connect_timeout per host
// applies) but with verbose error messages while connecting, which carry
// the server's SQLSTATE: libpq gives a failed connection's state nowhere
// else. Messages are then turned back into their default form.
class VerboseConnect : public pqxx::connectionpolicy {
 public:
  explicit VerboseConnect(const std::string& options) : pqxx::connectionpolicy(options) {}

  handle do_startconnect(handle orig) override {
    if (orig != nullptr) return orig;
    PGconn* c = PQconnectStart(options().c_str());
    if (c == nullptr) throw std::bad_alloc();
    PQsetErrorVerbosity(c, PQERRORS_VERBOSE);
    bool at_once = PQstatus(c) == CONNECTION_BAD;
    std::string timeout_message;
    if (!at_once) Complete(c, &timeout_message);
    if (PQstatus(c) != CONNECTION_OK) {
      std::string state;
      std::string message = FromVerboseMessage(PQerrorMessage(c), &state);
      if (!timeout_message.empty()) message = WithTimeout(std::move(message), timeout_message);
      PQfinish(c);
      // Failing before any attempt may be a malformed URL or option value,
      // which libpq reports as "no attempt" (no network is used then).
      const bool invalid = at_once && PQping(options().c_str()) == PQPING_NO_ATTEMPT;
      throw ConnectFailure(message, state, invalid);
    }
    PQsetErrorVerbosity(c, PQERRORS_DEFAULT);
    last_connected = c;
    return c;
  }

 private:
  // libpq's message of a connection whose wait timed out, ended by
  // `timed_out` ("connection to server at ... failed: timeout expired"):
  // when libpq began that sentence already (the attempt it was making), only
  // its end is added.
  static std::string WithTimeout(std::string message, const std::string& timed_out) {
    static constexpr std::string_view kEnd = "timeout expired";
    std::string_view head(timed_out);
    head.remove_suffix(kEnd.size());
    while (!head.empty() && head.back() == ' ') head.remove_suffix(1);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
      message.pop_back();
    }
    if (message.size() >= head.size() &&
        std::string_view(message).substr(message.size() - head.size()) == head) {
      return message + " " + std::string(kEnd);
    }
    return message.empty() ? timed_out : message + "\n" + timed_out;
  }

  // Polls the connection to its end, waiting at most connect_timeout seconds
  // (at least 2, as libpq) for each host; sets *timed_out to libpq's wording
  // when the wait ends.
  static void Complete(PGconn* c, std::string* timed_out) {
    int timeout_s = 0;
    if (PQconninfoOption* opts = PQconninfo(c)) {
      for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
        if (std::string(o->keyword) == "connect_timeout" && o->val != nullptr) {
          timeout_s = std::atoi(o->val);
        }
      }
      PQconninfoFree(opts);
    }
    if (timeout_s > 0 && timeout_s < 2) timeout_s = 2;
    using Clock = std::chrono::steady_clock;
    auto target = [c] { return std::string(PQhost(c)) + ":" + PQport(c); };
    std::string host = target();
    auto deadline = Clock::now() + std::chrono::seconds(timeout_s);
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    while (st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED) {
      pollfd p{PQsocket(c), static_cast<short>(st == PGRES_POLLING_READING ? POLLIN : POLLOUT), 0};
      int wait_ms = -1;
      if (timeout_s > 0) {
        wait_ms = static_cast<int>(std::max<int64_t>(
            0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now())
                   .count()));
      }
      const int r = poll(&p, 1, wait_ms);
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) {
        *timed_out = fmt::format("connection to server at \"{}\", port {} failed: timeout expired",
                                 PQhost(c), PQport(c));
        return;
      }
      st = PQconnectPoll(c);
      if (target() != host) {
        host = target();
        deadline = Clock::now() + std::chrono::seconds(timeout_s);
      }
    }
  }
};

using Connection = pqxx::basic_connection_base<VerboseConnect>;

// `msg` on one line: the server's pointer into the query dropped (its
// "LINE n: ..." and "^" lines, which mean nothing on one line: the message
// names the query), trailing blanks dropped, newlines (and with `tabs`,
// tabs) turned into spaces.
std::string OneLine(std::string msg, bool tabs) {
  msg = pg_internal::WithoutQueryPointer(msg);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  for (char& c : msg) {
    if (c == '\n' || (tabs && c == '\t')) c = ' ';
  }
  return msg;
}

// Turns a failed connection into a Status with a one-line reason, coded by
// the SQLSTATE the server sent (pg_errors_internal.h); without one the
// server was not reached (Unavailable), or the URL is malformed.
Status ConnectError(const std::string& url, const std::exception& e) {
  const std::string msg = ScrubSecrets(OneLine(e.what(), true), url);
  const std::string m = fmt::format("source {}: {}", MaskUrl(url), msg);
  const auto* f = dynamic_cast<const ConnectFailure*>(&e);
  if (f == nullptr || f->sqlstate.empty()) {
    if (f != nullptr && f->invalid) return Status::InvalidArgument(m);  // retrying cannot help
    return Status::Unavailable(m);
  }
  return Status(CodeForSqlState(f->sqlstate), m);
}

// A connection as QueryError reads it after a failure: libpq's handle,
// whose status tells an ended connection from a failed query, and the error
// of its last result (RememberError). Neither is owned; either may be null.
struct ConnFacts {
  const PGconn* pg = nullptr;
  const std::string* server_error = nullptr;

  // True when the connection has ended: libpq saw it close, or the server
  // sent a FATAL error (which it always follows by closing it).
  bool Ended() const {
    return (pg != nullptr && PQstatus(pg) == CONNECTION_BAD) ||
           (server_error != nullptr && server_error->rfind("FATAL:", 0) == 0);
  }
};

// Converts an exception from libpqxx during a query into a Status, coded by
// its SQLSTATE. A lost connection is described by libpq's own message on
// `conn` (the server's reason: "terminating connection due to administrator
// command", "... due to unexpected postmaster exit", a reset): the last
// result's error in `conn`, when there. A connection counts as lost by its
// SQLSTATE (class 08) and also whenever it has ended (ConnFacts::Ended):
// libpqxx closes a transaction whose query failed, so after a loss that a
// best-effort query took in silence (a cursor's CLOSE) the next query fails
// with "transaction ... already closed", which names no cause.
Status QueryError(const std::string& context, const std::exception& e, ConnFacts conn = {}) {
  WIDEN_RETURN_IF_ERROR(CutStatus(context));  // the watcher closed the socket
  std::string msg = OneLine(e.what(), false);
  const std::string state = SqlStateOf(e);
  const std::string* server_error = conn.server_error;
  if (state.rfind("08", 0) == 0 || conn.Ended()) {
    if (server_error != nullptr && !server_error->empty()) {
      msg = OneLine(*server_error, true);
    } else {
      // libpqxx 6 reports what it tried next on the dead connection ("Could
      // not obtain client encoding", "Connection to database failed").
      msg = "the server closed the connection (no reason reached widen)";
    }
    return Status::Unavailable(
        fmt::format("{}: the connection to the source was lost: {}", context, msg));
  }
  return Status(CodeForSqlState(state), fmt::format("{}: {}", context, msg));
}

// Parameters as libpq takes them: text in the server's input syntax.
std::vector<std::string> ParamTexts(const std::vector<Value>& params) {
  std::vector<std::string> out;
  out.reserve(params.size());
  for (const auto& v : params) out.push_back(PgParamText(v));
  return out;
}

// What the streams of both kinds share: the result's columns, described
// from a query's result (types by OID, enums and arrays resolved through the
// catalog of the main connection), and the decoding of one value's text.
class PgStream : public RowStream {
 public:
  PgStream(pqxx::dbtransaction* txn, ConnFacts conn, ServerWatch* watch, std::string table)
      : txn_(txn), conn_(conn), watch_(watch), table_(std::move(table)) {}

  bool Valid() const override { return valid_; }
  const Row& row() const override { return row_; }
  const RowSchema& schema() const override { return schema_; }
  Status status() const override { return status_; }

 protected:
  static constexpr uint32_t kTextOid = 25;

  // Sets up the schema from `r`'s columns.
  Status Describe(const pqxx::result& r) {
    const int n = r.columns();
    schema_.resize(n);
    oids_.resize(n);
    lists_.assign(n, ListForm::kNone);
    elements_.assign(n, ValueType::kText);
    for (int i = 0; i < n; ++i) {
      schema_[i].name = r.column_name(i);
      oids_[i] = r.column_type(i);
      schema_[i].type = pg_internal::TypeForOid(oids_[i]);
      schema_[i].source_type = std::to_string(oids_[i]);
      // Result columns carry a domain's base type; an enum type has its own
      // OID: its values are text (its labels), as Introspect says. Arrays
      // keep their text and say their elements' type, for JSON arrays.
      if (schema_[i].type == ValueType::kOther) {
        const OtherType o = DescribeOther(oids_[i]);
        if (o.is_enum) {
          schema_[i].type = ValueType::kText;
          oids_[i] = kTextOid;
        } else if (o.is_array) {
          lists_[i] = ListForm::kPgArray;
          elements_[i] = o.element;
        }
      }
      if (!status_.ok()) return status_;
    }
    row_.values.resize(n);
    return status_;
  }

  // Decodes the text of column i (not NULL) into the row; false (status_
  // set) when it is not of the column's form.
  bool Decode(size_t i, std::string_view text) {
    Value& v = row_.values[i];
    if (!pg_internal::ParseText(oids_[i], text, &v)) {
      status_ = Status::InvalidArgument(
          fmt::format("table {}, column {}: cannot read value '{}' of type oid {}", table_,
                      schema_[i].name, text.substr(0, 80), oids_[i]));
      valid_ = false;
      return false;
    }
    if (lists_[i] != ListForm::kNone) v.SetList(lists_[i], elements_[i]);
    return true;
  }

  // What a type widen keeps as text is: an enum, or an array (with ','
  // between elements) of elements of which widen type (domains and enums
  // resolved).
  struct OtherType {
    bool is_enum = false;
    bool is_array = false;
    ValueType element = ValueType::kText;
  };
  OtherType DescribeOther(uint32_t oid) {
    ServerWatch::Scope wait(watch_);
    OtherType o;
    try {
      pqxx::result r = txn_->exec_params(
          "SELECT typtype, typcategory, typelem::int8, typdelim FROM pg_type WHERE oid = $1",
          static_cast<int64_t>(oid));
      if (r.empty()) return o;
      o.is_enum = std::string(r[0][0].c_str()) == "e";
      if (std::string(r[0][1].c_str()) != "A" || std::string(r[0][3].c_str()) != ",") return o;
      // The element's base type, through domains.
      int64_t elem = r[0][2].as<int64_t>();
      for (int depth = 0; elem != 0 && depth < 100; ++depth) {
        pqxx::result e = txn_->exec_params(
            "SELECT typtype, typbasetype::int8 FROM pg_type WHERE oid = $1", elem);
        if (e.empty()) return o;
        const std::string type = e[0][0].c_str();
        if (type != "d") {
          o.is_array = true;
          o.element =
              type == "e" ? ValueType::kText : pg_internal::TypeForOid(static_cast<uint32_t>(elem));
          return o;
        }
        elem = e[0][1].as<int64_t>();
      }
    } catch (const std::exception& e) {
      status_ = QueryError(fmt::format("reading table {}", table_), e, conn_);
    }
    return o;
  }

  pqxx::dbtransaction* txn_;
  ConnFacts conn_;      // the connection's
  ServerWatch* watch_;  // the connection's (may be null)
  std::string table_;
  bool valid_ = false;
  RowSchema schema_;
  std::vector<uint32_t> oids_;
  std::vector<ListForm> lists_;      // per column: arrays
  std::vector<ValueType> elements_;  // per column: the arrays' element type
  Row row_;
  Status status_;
};

// Rows through a server-side cursor, `fetch_rows` per FETCH: for scans with
// bound values (COPY takes no parameters).
class PostgresRowStream : public PgStream {
 public:
  PostgresRowStream(pqxx::dbtransaction* txn, ConnFacts conn, ServerWatch* watch,
                    std::string cursor, std::string table, int fetch_rows)
      : PgStream(txn, conn, watch, std::move(table)),
        cursor_(std::move(cursor)),
        fetch_rows_(fetch_rows) {}

  ~PostgresRowStream() override {
    ServerWatch::Scope wait(watch_);
    try {
      if (txn_ != nullptr && status_.ok()) txn_->exec("CLOSE " + cursor_);
    } catch (const std::exception&) {
      // The transaction is read-only and ends with the source; nothing to undo.
    }
  }

  // Fetches the first batch and sets up the schema.
  Status Start() {
    Fetch();
    if (!status_.ok()) return status_;
    WIDEN_RETURN_IF_ERROR(Describe(batch_));
    Position();
    return status_;
  }

  void Next() override {
    ++index_;
    if (index_ >= batch_.size() && !exhausted_) Fetch();
    Position();
  }

 private:
  void Fetch() {
    ServerWatch::Scope wait(watch_);
    try {
      batch_ = txn_->exec(fmt::format("FETCH FORWARD {} FROM {}", fetch_rows_, cursor_));
      index_ = 0;
      exhausted_ = static_cast<int>(batch_.size()) < fetch_rows_;
    } catch (const std::exception& e) {
      status_ = QueryError(fmt::format("reading table {}", table_), e, conn_);
      exhausted_ = true;
      batch_ = pqxx::result();
      index_ = 0;
    }
  }

  void Position() {
    valid_ = status_.ok() && index_ < batch_.size();
    if (!valid_) return;
    // One field iterator per row: each pqxx::field made holds a counted
    // reference to the result, and moving an iterator makes none.
    const pqxx::row r = batch_[static_cast<pqxx::result::size_type>(index_)];
    pqxx::row::const_iterator f = r.begin();
    for (size_t i = 0; i < oids_.size(); ++i, ++f) {
      if (f->is_null()) {
        row_.values[i].SetNull(schema_[i].type);
        continue;
      }
      if (!Decode(i, std::string_view(f->c_str(), f->size()))) return;
    }
  }

  std::string cursor_;
  int fetch_rows_;
  pqxx::result batch_;
  size_t index_ = 0;
  bool exhausted_ = false;
};

// Rows through `COPY (SELECT ...) TO STDOUT` on a connection of its own that
// shares the source's snapshot, received by a thread of its own
// (pg_internal::CopyReader) while this one decodes: the server's work and
// widen's overlap, with no round trip per batch. The schema comes from the
// same SELECT run with LIMIT 0 on the source's connection. The connection
// goes back to `idle` when the COPY ended cleanly, else it is closed.
class PostgresCopyStream : public PgStream {
 public:
  PostgresCopyStream(pqxx::dbtransaction* txn, ConnFacts conn, ServerWatch* watch,
                     std::string table, ReaderConn reader, std::vector<ReaderConn>* idle)
      : PgStream(txn, conn, watch, std::move(table)), reader_(std::move(reader)), idle_(idle) {}

  ~PostgresCopyStream() override {
    const bool usable = copy_ != nullptr && copy_->done_cleanly();
    copy_.reset();  // stops the thread (and the COPY, when unfinished)
    if (usable) idle_->push_back(std::move(reader_));
  }

  // Sets up the schema from `described` and starts the COPY of `sql`.
  Status Start(const pqxx::result& described, const std::string& sql) {
    WIDEN_RETURN_IF_ERROR(Describe(described));
    copy_ = std::make_unique<pg_internal::CopyReader>(reader_.conn, reader_.watch);
    if (!copy_->Start("COPY (\n" + sql + "\n) TO STDOUT")) {
      status_ = Failure(fmt::format("table {}: query failed ({})", table_, SqlForMessage(sql)));
      return status_;
    }
    Position();
    return status_;
  }

  void Next() override { Position(); }

 private:
  // The COPY's failure as a Status coded by its SQLSTATE.
  Status Failure(const std::string& context) const {
    WIDEN_RETURN_IF_ERROR(CutStatus(context));  // the watcher closed the socket
    const pg_internal::CopyReader::Outcome& o = copy_->outcome();
    std::string msg = OneLine(o.message, false);
    if (o.lost || o.sqlstate.empty() || o.sqlstate.rfind("08", 0) == 0) {
      msg = OneLine(o.message, true);
      return Status::Unavailable(fmt::format(
          "{}: the connection to the source was lost: {}", context,
          msg.empty() ? "the server closed the connection (no reason reached widen)" : msg));
    }
    return Status(pg_internal::CodeForSqlState(o.sqlstate), fmt::format("{}: {}", context, msg));
  }

  void Position() {
    valid_ = false;
    if (!status_.ok()) return;
    if (pos_ >= chunk_.size()) {
      if (!copy_->NextChunk(&chunk_)) {
        if (!copy_->outcome().ok) status_ = Failure(fmt::format("reading table {}", table_));
        return;
      }
      pos_ = 0;
    }
    const size_t nl = chunk_.find('\n', pos_);
    const std::string_view line(chunk_.data() + pos_,
                                (nl == std::string::npos ? chunk_.size() : nl) - pos_);
    pos_ = nl == std::string::npos ? chunk_.size() : nl + 1;
    if (!pg_internal::SplitCopyRow(line, &fields_, &nulls_, &scratch_) ||
        fields_.size() != oids_.size()) {
      status_ = Status::Internal(fmt::format(
          "table {}: a row of COPY's output has {} fields where the query has {} columns", table_,
          fields_.size(), oids_.size()));
      return;
    }
    valid_ = true;
    for (size_t i = 0; i < oids_.size(); ++i) {
      if (nulls_[i]) {
        row_.values[i].SetNull(schema_[i].type);
      } else if (!Decode(i, fields_[i])) {
        return;
      }
    }
  }

  ReaderConn reader_;
  std::vector<ReaderConn>* idle_;
  std::unique_ptr<pg_internal::CopyReader> copy_;
  std::string chunk_;  // rows received, each ended by '\n'
  size_t pos_ = 0;     // the next row's offset in chunk_
  std::vector<std::string_view> fields_;
  std::vector<bool> nulls_;
  std::vector<std::string> scratch_;
};

}  // namespace

struct PostgresSource::Session {
  // The error of conn's last result (RememberError); declared before conn,
  // which writes it.
  std::string server_error;
  std::unique_ptr<Connection> conn;
  PGconn* pg = nullptr;  // conn's libpq handle
  // The transaction's snapshot (pg_export_snapshot), once a reader needed it.
  std::string snapshot;
  // Reader connections on the snapshot, idle (PostgresCopyStream).
  std::vector<ReaderConn> readers;
  // No reader connection could be opened: scans use cursors.
  bool no_readers = false;
  // Writes server_error; reset before conn.
  std::unique_ptr<RememberFatal> fatal;
  std::unique_ptr<pqxx::dbtransaction> txn;
  // The connection's socket, watched (server_watch.h); reset before conn.
  std::unique_ptr<ServerWatch> watch;
  // "table\x1fcolumn" -> whether the column is text or varchar in a
  // deterministic collation (see BytesEqual).
  std::map<std::string, bool> plain_text;
  std::map<std::string, std::string> collations;  // Collation's answers

  // conn as QueryError reads it.
  ConnFacts Facts() const { return {pg, &server_error}; }

  // True when `=` on the column is equality of its bytes: text or varchar
  // (not char(n), whose `=` ignores trailing blanks, a domain, citext or
  // another type) in a deterministic collation, for which PostgreSQL
  // compares the bytes whatever the collation. False when unsure.
  bool PlainText(const std::string& table, const std::string& column) {
    const std::string id = table + '\x1f' + column;
    auto it = plain_text.find(id);
    if (it != plain_text.end()) return it->second;
    ServerWatch::Scope wait(watch.get());
    bool plain = false;
    try {
      pqxx::result r = txn->exec_params(
          "SELECT a.atttypid IN ('text'::regtype, 'varchar'::regtype) AND "
          "COALESCE(c.collisdeterministic, TRUE) FROM pg_attribute a LEFT JOIN pg_collation c "
          "ON c.oid = a.attcollation WHERE a.attrelid = $1::regclass AND a.attname = $2 AND "
          "NOT a.attisdropped",
          PostgresSource::QuoteIdent(table), column);
      plain = !r.empty() && std::string(r[0][0].c_str()) == "t";
    } catch (const std::exception&) {
      plain = false;  // the join is right in every case
    }
    plain_text[id] = plain;
    return plain;
  }

  // The collation of a column ("" for a type without one, or when unsure),
  // asked once per session (every scan of a sync's batches asks again).
  std::string Collation(const std::string& table, const std::string& column) {
    const std::string id = table + '\x1f' + column;
    auto it = collations.find(id);
    if (it != collations.end()) return it->second;
    ServerWatch::Scope wait(watch.get());
    std::string name;
    try {
      pqxx::result r = txn->exec_params(
          "SELECT COALESCE(c.collname, '') FROM pg_attribute a LEFT JOIN pg_collation c ON "
          "c.oid = a.attcollation WHERE a.attrelid = $1::regclass AND a.attname = $2 AND NOT "
          "a.attisdropped",
          PostgresSource::QuoteIdent(table), column);
      name = r.empty() ? std::string() : std::string(r[0][0].c_str());
    } catch (const std::exception&) {
      return "";  // not kept: the transaction may have been cut
    }
    collations[id] = name;
    return name;
  }

  // True when every `=` of `link` compares the bytes of two plain text
  // columns (PlainText), so that the child's own values are exact keys.
  bool BytesEqual(const ScanSpec& spec, const MergeLink& link) {
    if (!link.peer_query.empty()) return false;
    for (const auto& [c, peer] : link.on) {
      std::string table = c.alias == spec.alias ? spec.table : c.alias;
      for (const auto& j : spec.joins) {
        if (j.alias == c.alias) table = j.table;
      }
      if (table.empty() || !PlainText(table, c.column) || !PlainText(link.peer_table, peer)) {
        return false;
      }
    }
    return true;
  }
};

PostgresSource::PostgresSource(std::string url, SourceOptions options)
    : url_(std::move(url)), options_(options), session_(std::make_unique<Session>()) {
  Session* session = session_.get();
  dialect_ = std::make_unique<pg_internal::PostgresDialect>(
      [session](const ScanSpec& spec, const MergeLink& link) {
        return session->BytesEqual(spec, link);
      });
}

PostgresSource::~PostgresSource() {
  session_->readers.clear();
  try {
    ServerWatch::Scope wait(session_->watch.get());
    if (session_->txn) session_->txn->abort();  // read-only: nothing to keep
  } catch (const std::exception&) {
  }
  session_->txn.reset();
  session_->watch.reset();
  session_->fatal.reset();
  session_->conn.reset();
}

std::string PostgresSource::QuoteIdent(const std::string& name) {
  return pg_internal::QuoteIdent(name);
}

Result<std::unique_ptr<PostgresSource>> PostgresSource::Open(const std::string& url,
                                                             const SourceOptions& options) {
  std::unique_ptr<PostgresSource> src(new PostgresSource(url, options));
  // widen's own parameter; libpq would refuse it.
  std::string libpq_url = url;
  WIDEN_ASSIGN_OR_RETURN(const int read_timeout_s, TakeReadTimeout(&libpq_url));
  // postgres:// is libpq's other spelling; libpq takes both.
  try {
    ConnectScope connecting;  // an interrupt ends the process (no socket to cut yet)
    src->session_->conn = std::make_unique<Connection>(
        pg_internal::WithConnectionDefaults(pg_internal::WithConnectTimeout(
            pg_internal::WithPassword(libpq_url, std::getenv("WIDEN_SOURCE_PASSWORD")))));
  } catch (const std::exception& e) {
    return ConnectError(url, e);
  }
  src->session_->pg = last_connected;
  // libpqxx 6 reconnects a connection it finds broken on its next query
  // (after PQfinish of the old one): a new session outside the snapshot,
  // without widen's settings, whose loss of the old one's reason (and of
  // `pg`) would hide why the source went away. Kept broken instead, so that
  // every later query fails and QueryError names the cause.
#include <pqxx/internal/ignore-deprecated-pre.hxx>
  src->session_->conn->inhibit_reactivation(true);
#include <pqxx/internal/ignore-deprecated-post.hxx>
  PQregisterEventProc(last_connected, RememberError, "widen", &src->session_->server_error);
  src->session_->fatal =
      std::make_unique<RememberFatal>(*src->session_->conn, &src->session_->server_error);
  src->session_->watch = std::make_unique<ServerWatch>(src->session_->conn->sock(), read_timeout_s);
  ServerWatch::Scope wait(src->session_->watch.get());
  try {
    src->session_->conn->set_client_encoding("UTF8");
    pqxx::nontransaction setup(*src->session_->conn);
    std::string settings =
        "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET bytea_output = 'hex'; "
        "SET extra_float_digits = 3; SET IntervalStyle = 'iso_8601'; SET lc_monetary = 'C'; "
        "SET default_transaction_read_only = on; SET lock_timeout = '60s'; "
        "SET idle_in_transaction_session_timeout = 0; SET statement_timeout = 0";
    // PostgreSQL 11 and later compile a query whose estimated cost passes
    // jit_above_cost: loading the compiler alone costs the server about
    // 20 ms of a fresh session, where widen's scans stream rows and gain
    // nothing from it (docs/types.md).
    if (PQserverVersion(last_connected) >= 110000) settings += "; SET jit = off";
    // PostgreSQL 17's limit on a whole transaction would end the snapshot.
    if (PQserverVersion(last_connected) >= 170000) settings += "; SET transaction_timeout = 0";
    setup.exec(settings);
    setup.commit();
    src->session_->txn = std::make_unique<Txn>(*src->session_->conn, "widen");
  } catch (const std::exception& e) {
    return QueryError(fmt::format("source {}", MaskUrl(url)), e, src->session_->Facts());
  }
  return src;
}

Result<std::vector<std::unique_ptr<Source>>> PostgresSource::OpenSiblings(int n,
                                                                          const SourceReads&) {
  ServerWatch::Scope wait(session_->watch.get());
  std::string snapshot;
  try {
    // The transaction's snapshot, importable while this transaction is open.
    pqxx::result r = session_->txn->exec("SELECT pg_export_snapshot()");
    snapshot = r[0][0].c_str();
  } catch (const std::exception& e) {
    return QueryError(
        fmt::format("source {}: exporting the snapshot for parallel jobs", MaskUrl(url_)), e,
        session_->Facts());
  }
  std::vector<std::unique_ptr<Source>> out;
  for (int i = 0; i < n; ++i) {
    WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<PostgresSource> s, Open(url_, options_));
    try {
      // Must be the first statement of the REPEATABLE READ transaction.
      s->session_->txn->exec("SET TRANSACTION SNAPSHOT " + s->session_->txn->quote(snapshot));
    } catch (const std::exception& e) {
      return QueryError(
          fmt::format("source {}: importing the snapshot of the first connection", MaskUrl(url_)),
          e, s->session_->Facts());
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<SourceSchema> PostgresSource::Introspect() {
  ServerWatch::Scope wait(session_->watch.get());
  SourceSchema schema;
  try {
    // Columns of ordinary tables, views and partitioned tables in the current
    // schema; domains resolve to their base type, through any number of
    // domains over domains (`dom` walks each chain down; the innermost
    // modifier, e.g. numeric(20,0), comes with it).
    pqxx::result cols = session_->txn->exec(R"SQL(
      WITH RECURSIVE dom(oid, base, typmod) AS (
        SELECT t.oid, t.typbasetype, t.typtypmod FROM pg_type t WHERE t.typtype = 'd'
        UNION ALL
        SELECT d.oid, t.typbasetype, CASE WHEN d.typmod >= 0 THEN d.typmod ELSE t.typtypmod END
        FROM dom d JOIN pg_type t ON t.oid = d.base WHERE t.typtype = 'd'),
      base AS (
        SELECT d.oid, d.base, d.typmod FROM dom d JOIN pg_type t ON t.oid = d.base
        WHERE t.typtype <> 'd')
      SELECT c.relname, a.attname,
             COALESCE(b.base, a.atttypid)::int8 AS base_oid,
             format_type(a.atttypid, a.atttypmod) AS declared,
             NOT a.attnotnull AS nullable, bt.typtype,
             c.reltuples::int8,
             format_type(COALESCE(b.base, a.atttypid),
                         CASE WHEN b.base IS NULL THEN a.atttypmod ELSE b.typmod END) AS stored
      FROM pg_attribute a
      JOIN pg_class c ON c.oid = a.attrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN base b ON b.oid = a.atttypid
      JOIN pg_type bt ON bt.oid = COALESCE(b.base, a.atttypid)
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
        AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY c.relname, a.attnum)SQL");
    for (const auto& r : cols) {
      std::string table = r[0].c_str();
      if (schema.tables.empty() || schema.tables.back().name != table) {
        SourceTable t;
        t.name = table;
        t.estimated_rows = r[6].as<int64_t>();
        schema.tables.push_back(std::move(t));
      }
      SourceColumn col;
      col.name = r[1].c_str();
      uint32_t oid = static_cast<uint32_t>(r[2].as<int64_t>());
      col.type = pg_internal::TypeForOid(oid);
      // Enum types (and domains over them): their labels, as text.
      if (std::string(r[5].c_str()) == "e") {
        col.type = ValueType::kText;
        col.is_enum = true;
      }
      col.source_type = r[3].c_str();
      if (std::string(r[7].c_str()) != col.source_type) col.base_type = r[7].c_str();
      col.nullable = std::string(r[4].c_str()) == "t";
      schema.tables.back().columns.push_back(std::move(col));
    }
    pqxx::result keys = session_->txn->exec(R"SQL(
      SELECT c.relname, con.contype, a.attname, rc.relname, ra.attname, con.conname, k.ord,
             con.confdeltype
      FROM pg_constraint con
      JOIN pg_class c ON c.oid = con.conrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
      LEFT JOIN pg_class rc ON rc.oid = con.confrelid
      LEFT JOIN pg_attribute ra ON ra.attrelid = con.confrelid AND ra.attnum = con.confkey[k.ord]
      WHERE n.nspname = current_schema() AND con.contype IN ('p', 'f', 'u')
        -- A foreign key to a partitioned table is cloned for each of its
        -- partitions (conparentid names the original): the original alone.
        AND NOT (con.contype = 'f' AND con.conparentid <> 0)
      ORDER BY c.relname, con.conname, k.ord)SQL");
    std::string last_fk;
    for (const auto& r : keys) {
      SourceTable* t = nullptr;
      for (auto& x : schema.tables) {
        if (x.name == r[0].c_str()) t = &x;
      }
      if (t == nullptr) continue;
      const std::string type = r[1].c_str();
      const std::string id = std::string(r[0].c_str()) + "/" + r[5].c_str();
      if (type == "p") {
        t->primary_key.push_back(r[2].c_str());
      } else if (type == "u") {
        if (id != last_fk) {
          t->unique_keys.emplace_back();
          last_fk = id;
        }
        t->unique_keys.back().push_back(r[2].c_str());
      } else {
        if (id != last_fk) {
          ForeignKey fk;
          fk.name = r[5].c_str();
          fk.ref_table = r[3].c_str();
          // pg_constraint.confdeltype: a no action, r restrict, c cascade, n set null, d set
          // default.
          const std::string rule = r[7].c_str();
          fk.on_delete = rule == "c"   ? ForeignKeyAction::kCascade
                         : rule == "n" ? ForeignKeyAction::kSetNull
                         : rule == "d" ? ForeignKeyAction::kSetDefault
                                       : ForeignKeyAction::kNoAction;
          t->foreign_keys.push_back(std::move(fk));
          last_fk = id;
        }
        t->foreign_keys.back().columns.push_back(r[2].c_str());
        t->foreign_keys.back().ref_columns.push_back(r[4].c_str());
      }
    }
    // Views declare no keys; say so in messages about keys.
    pqxx::result views = session_->txn->exec(R"SQL(
      SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('v', 'm'))SQL");
    for (const auto& r : views) {
      for (auto& t : schema.tables) {
        if (t.name == r[0].c_str()) t.is_view = true;
      }
    }
    // Partitions: their partitioned table reads their rows; its row
    // estimate is theirs summed (a partitioned table has no statistics of
    // its own).
    pqxx::result parts = session_->txn->exec(R"SQL(
      SELECT c.relname, p.relname, c.reltuples::int8
      FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
      JOIN pg_class p ON p.oid = i.inhparent
      JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relispartition
      ORDER BY c.relname)SQL");
    std::map<std::string, int64_t> partition_rows;  // partitioned table -> rows known
    for (const auto& r : parts) {
      const int64_t rows = r[2].as<int64_t>();
      for (auto& t : schema.tables) {
        if (t.name == r[0].c_str()) t.partition_of = r[1].c_str();
      }
      if (rows >= 0) partition_rows[r[1].c_str()] += rows;
    }
    for (auto& t : schema.tables) {
      const auto it = partition_rows.find(t.name);
      if (it != partition_rows.end() && t.estimated_rows <= 0) t.estimated_rows = it->second;
    }
    // Unique indexes that are not constraints also make a join many-to-one.
    pqxx::result idx = session_->txn->exec(R"SQL(
      SELECT c.relname, i.indexrelid::int8, a.attname
      FROM pg_index i
      JOIN pg_class c ON c.oid = i.indrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
      WHERE n.nspname = current_schema() AND i.indisunique AND NOT i.indisprimary
        AND i.indpred IS NULL AND i.indexprs IS NULL
        AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid)
      ORDER BY c.relname, i.indexrelid, k.ord)SQL");
    std::string last_index;
    for (const auto& r : idx) {
      for (auto& t : schema.tables) {
        if (t.name != r[0].c_str()) continue;
        const std::string id = std::string(r[0].c_str()) + "/" + r[1].c_str();
        if (id != last_index) {
          t.unique_keys.emplace_back();
          last_index = id;
        }
        t.unique_keys.back().push_back(r[2].c_str());
      }
    }
  } catch (const std::exception& e) {
    return QueryError(fmt::format("source {}: reading the schema", MaskUrl(url_)), e,
                      session_->Facts());
  }
  return schema;
}

Result<SourceTable> PostgresSource::DescribeQuery(const std::string& sql) {
  ServerWatch::Scope wait(session_->watch.get());
  SourceTable t;
  t.name = "query";
  try {
    session_->txn->exec("SAVEPOINT widen_describe");
    pqxx::result r = session_->txn->exec_params("SELECT * FROM (" + sql + ") AS widen_q LIMIT 0");
    session_->txn->exec("RELEASE SAVEPOINT widen_describe");
    for (pqxx::row::size_type i = 0; i < r.columns(); ++i) {
      SourceColumn c;
      c.name = r.column_name(i);
      const uint32_t oid = r.column_type(i);
      c.type = pg_internal::TypeForOid(oid);
      pqxx::result n = session_->txn->exec("SELECT format_type(" + std::to_string(oid) + ", NULL)");
      c.source_type = n[0][0].c_str();
      c.nullable = true;
      t.columns.push_back(std::move(c));
    }
  } catch (const std::exception& e) {
    try {
      session_->txn->exec("ROLLBACK TO SAVEPOINT widen_describe");
    } catch (const std::exception&) {
    }
    return QueryError("query", e, session_->Facts());
  }
  return t;
}

Status PostgresSource::CheckLinkCollations(const ScanSpec& spec) {
  // PostgreSQL compares text of two different collations only when one of
  // them is the database default (the other one is then used); otherwise it
  // fails when it first hashes or compares a value, after rows were
  // written. Such a comparison in the scan's SQL is refused here: a child
  // read joined to its parents (a link whose `=` is not byte equality), a
  // second-level child joined to its parent's table, a `joins` entry.
  auto table_of = [&](const std::string& alias) {
    std::string table = alias == spec.alias ? spec.table : alias;
    for (const auto& j : spec.joins) {
      if (j.alias == alias) table = j.table;
    }
    return table;
  };
  auto check = [&](const char* what, const std::string& left_table, const std::string& left,
                   const std::string& right_table, const std::string& right) -> Status {
    if (left_table.empty() || right_table.empty()) return Status::OK();
    const std::string a = session_->Collation(left_table, left);
    const std::string b = session_->Collation(right_table, right);
    if (a.empty() || b.empty() || a == b || a == "default" || b == "default") {
      return Status::OK();
    }
    return Status::InvalidArgument(fmt::format(
        "{} on {}.{} (collation {}) = {}.{} (collation {}): PostgreSQL cannot compare text of two "
        "different collations; give both columns one collation (ALTER TABLE ... ALTER COLUMN ... "
        "TYPE <its type> COLLATE ...)",
        what, left_table, left, a, right_table, right, b));
  };
  for (const MergeLink& link : spec.merge) {
    if (!link.child || link.by_value || !link.peer_query.empty() ||
        session_->BytesEqual(spec, link)) {
      continue;
    }
    for (const auto& [c, peer] : link.on) {
      WIDEN_RETURN_IF_ERROR(check("nest", link.peer_table, peer, table_of(c.alias), c.column));
    }
  }
  for (const ScanJoin& j : spec.joins) {
    for (const auto& [c, right] : j.on) {
      // widen's own join of a second-level child to its parent's table, or
      // of a nested scan to the driving table (the order of the keys).
      const std::string& column = j.ColumnOf(right);
      WIDEN_RETURN_IF_ERROR((j.alias == "widen_parent" || j.alias == "widen_lead")
                                ? check("nest", j.table, column, table_of(c.alias), c.column)
                                : check("join", table_of(c.alias), c.column, j.table, column));
    }
  }
  return Status::OK();
}

Status PostgresSource::CheckScan(const ScanSpec& spec) {
  ServerWatch::Scope wait(session_->watch.get());
  WIDEN_RETURN_IF_ERROR(CheckLinkCollations(spec));
  const BuiltQuery q = SelectBuilder(*dialect_).Build(spec);
  try {
    session_->txn->exec("SAVEPOINT widen_check");
    // exec_params uses the extended protocol: one statement, never a batch.
    session_->txn->exec_params("EXPLAIN " + q.sql,
                               pqxx::prepare::make_dynamic_params(ParamTexts(q.params)));
    session_->txn->exec("RELEASE SAVEPOINT widen_check");
  } catch (const std::exception& e) {
    try {
      session_->txn->exec("ROLLBACK TO SAVEPOINT widen_check");
    } catch (const std::exception&) {
    }
    return QueryError(fmt::format("query failed ({})", SqlForMessage(q.sql)), e, session_->Facts());
  }
  return Status::OK();
}

std::string PostgresSource::SelectSql(const ScanSpec& spec) const {
  return SelectBuilder(*dialect_).Build(spec).sql;
}

Result<std::unique_ptr<RowStream>> PostgresSource::Scan(const ScanSpec& spec) {
  return ScanWith(spec, {});
}

Result<ReaderConn> PostgresSource::OpenReader() {
  if (!session_->readers.empty()) {
    ReaderConn r = std::move(session_->readers.back());
    session_->readers.pop_back();
    return r;
  }
  if (session_->snapshot.empty()) {
    try {
      // Importable while this transaction is open, which outlives the readers.
      pqxx::result r = session_->txn->exec("SELECT pg_export_snapshot()");
      session_->snapshot = r[0][0].c_str();
    } catch (const std::exception& e) {
      return QueryError(fmt::format("source {}: exporting the snapshot", MaskUrl(url_)), e,
                        session_->Facts());
    }
  }
  WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<PostgresSource> s, Open(url_, options_));
  try {
    // Must be the first statement of the REPEATABLE READ transaction.
    s->session_->txn->exec("SET TRANSACTION SNAPSHOT " +
                           s->session_->txn->quote(session_->snapshot));
  } catch (const std::exception& e) {
    return QueryError(fmt::format("source {}: importing the snapshot", MaskUrl(url_)), e,
                      s->session_->Facts());
  }
  ReaderConn r;
  r.conn = s->session_->pg;
  r.watch = s->session_->watch.get();
  r.source = std::move(s);
  return r;
}

Result<std::unique_ptr<RowStream>> PostgresSource::ScanWith(const ScanSpec& spec,
                                                            std::vector<Value> inner_params,
                                                            ReadPath path) {
  ServerWatch::Scope wait(session_->watch.get());
  // Every read (plan's sample, a job's range, ...) stops on such a link
  // before its query runs, not on the server's error after rows were used.
  WIDEN_RETURN_IF_ERROR(CheckLinkCollations(spec));
  BuiltQuery q = SelectBuilder(*dialect_).Build(spec);
  if (!inner_params.empty() && !q.params.empty()) {
    return Status::Internal("a scan over a query with parameters has parameters of its own");
  }
  if (q.params.empty()) q.params = std::move(inner_params);
  if (q.params.empty() && !session_->no_readers && path == ReadPath::kBulk) {
    // COPY takes no parameters: scans without bound values only. A source
    // that refuses a further connection (a connection limit) is read
    // through cursors instead, as fast as before.
    Result<ReaderConn> reader = OpenReader();
    if (!reader.ok()) {
      WIDEN_RETURN_IF_ERROR(CutStatus(fmt::format("source {}", MaskUrl(url_))));
      session_->no_readers = true;
    } else {
      pqxx::result described;
      try {
        // The columns: the query run with LIMIT 0 (the extended protocol:
        // one statement, as the COPY's).
        described = session_->txn->exec_params(q.sql + "\nLIMIT 0");
      } catch (const std::exception& e) {
        session_->readers.push_back(std::move(*reader));
        return QueryError(
            fmt::format("table {}: query failed ({})", spec.table, SqlForMessage(q.sql)), e,
            session_->Facts());
      }
      auto stream = std::make_unique<PostgresCopyStream>(session_->txn.get(), session_->Facts(),
                                                         session_->watch.get(), spec.table,
                                                         std::move(*reader), &session_->readers);
      WIDEN_RETURN_IF_ERROR(stream->Start(described, q.sql));
      return std::unique_ptr<RowStream>(std::move(stream));
    }
  }
  std::string cursor = fmt::format("widen_c{}", ++next_cursor_);
  try {
    // exec_params uses the extended protocol: the text is one statement, so a
    // `where` cannot smuggle in a second one (COMMIT; DROP ...). Values are
    // bound parameters.
    session_->txn->exec_params("DECLARE " + cursor + " NO SCROLL CURSOR FOR " + q.sql,
                               pqxx::prepare::make_dynamic_params(ParamTexts(q.params)));
  } catch (const std::exception& e) {
    return QueryError(fmt::format("table {}: query failed ({})", spec.table, SqlForMessage(q.sql)),
                      e, session_->Facts());
  }
  auto stream = std::make_unique<PostgresRowStream>(session_->txn.get(), session_->Facts(),
                                                    session_->watch.get(), cursor, spec.table,
                                                    options_.fetch_rows);
  WIDEN_RETURN_IF_ERROR(stream->Start());
  return std::unique_ptr<RowStream>(std::move(stream));
}

Result<std::vector<GroupCount>> PostgresSource::LargestGroups(
    const ScanSpec& spec, const std::vector<ColumnExpr>& group_by, int limit) {
  ServerWatch::Scope wait(session_->watch.get());
  if (group_by.empty() || limit < 1) {
    return Status::InvalidArgument("LargestGroups needs group columns and a positive limit");
  }
  // The derived table's column list names the group columns, whatever their
  // names in the scan (two aliases may have columns of the same name).
  // Text-like columns (is_text) group by their text's bytes, as the merge
  // compares them: 'abc' and 'ABC' are two groups in a case-insensitive
  // collation too.
  std::string names, select, group, order;
  std::vector<std::string> out;
  for (size_t i = 0; i < group_by.size(); ++i) {
    const std::string g = fmt::format("widen_g{}", i);
    const std::string e = group_by[i].is_text ? dialect_->TextByteOrder("(" + g + ")::text") : g;
    names += (i ? ", " : "") + g;
    select += (i ? ", " : "") + e + " AS " + g;
    group += (i ? ", " : "") + e;
    order += ", " + e;
    out.push_back(g);
  }
  out.push_back("widen_n");
  BuiltQuery inner = SelectBuilder(*dialect_).Build(Unordered(spec, group_by));
  const std::string sql = fmt::format(
      "SELECT {0}, count(*) AS widen_n FROM ({1}) AS widen_g({2}) GROUP BY {3} "
      "ORDER BY widen_n DESC{4} LIMIT {5}",
      select, inner.sql, names, group, order, limit);
  WIDEN_ASSIGN_OR_RETURN(auto rows,
                         ScanWith(OverQuery(sql, out), std::move(inner.params), ReadPath::kFew));
  return source_internal::ReadGroups(rows.get());
}

Result<std::vector<GroupCount>> PostgresSource::LargestLinkGroups(const ScanSpec& spec,
                                                                  const std::vector<size_t>& links,
                                                                  int limit) {
  ServerWatch::Scope wait(session_->watch.get());
  if (links.empty() || limit < 1) {
    return Status::InvalidArgument("LargestLinkGroups needs links and a positive limit");
  }
  // The rows carry their own values as merge keys (the child side's carried
  // parent values are not asked for here): text by its bytes, as the merge
  // compares them.
  std::vector<ColumnExpr> columns;
  for (size_t l : links) {
    if (l >= spec.merge.size()) return Status::InvalidArgument("no such nest link");
    for (const auto& on : spec.merge[l].on) columns.push_back(on.first);
  }
  return LargestGroups(spec, columns, limit);
}

Result<ColumnSummary> PostgresSource::SummarizeColumn(const ScanSpec& spec,
                                                      const ColumnExpr& column) {
  ServerWatch::Scope wait(session_->watch.get());
  BuiltQuery inner = SelectBuilder(*dialect_).Build(Unordered(spec, {column}));
  const std::string sql = fmt::format(
      "SELECT min(widen_c) AS widen_min, max(widen_c) AS widen_max, count(*) AS widen_rows, "
      "count(widen_c) AS widen_non_null FROM ({}) AS widen_s(widen_c)",
      inner.sql);
  WIDEN_ASSIGN_OR_RETURN(
      auto rows,
      ScanWith(OverQuery(sql, {"widen_min", "widen_max", "widen_rows", "widen_non_null"}),
               std::move(inner.params), ReadPath::kFew));
  return source_internal::ReadSummary(rows.get());
}

Result<Value> PostgresSource::HighestValue(const ScanSpec& spec, const ColumnExpr& column) {
  ServerWatch::Scope wait(session_->watch.get());
  BuiltQuery inner = SelectBuilder(*dialect_).Build(Unordered(spec, {column}));
  const std::string sql =
      fmt::format("SELECT max(widen_c) AS widen_max FROM ({}) AS widen_s(widen_c)", inner.sql);
  WIDEN_ASSIGN_OR_RETURN(
      auto rows, ScanWith(OverQuery(sql, {"widen_max"}), std::move(inner.params), ReadPath::kFew));
  Value max;
  if (rows->Valid()) max = rows->row()[0];
  WIDEN_RETURN_IF_ERROR(rows->status());
  return max;
}

}  // namespace widen
