#include "extract/postgres_source.h"

#include <pqxx/pqxx>

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "extract/source_internal.h"

#include "extract/pg_text_internal.h"

namespace widen {

using source_internal::OverQuery;
using source_internal::Unordered;

namespace {

using Txn = pqxx::transaction<pqxx::repeatable_read, pqxx::read_only>;

// Turns a libpq connection failure into a Status with a one-line reason.
Status ConnectError(const std::string& url, const std::string& what) {
  std::string msg = what;
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  for (char& c : msg) {
    if (c == '\n') c = ' ';
  }
  for (char& c : msg) {
    if (c == '\t') c = ' ';
  }
  msg = ScrubSecrets(msg, url);
  std::string m = fmt::format("source {}: {}", MaskUrl(url), msg);
  if (msg.find("password authentication failed") != std::string::npos ||
      msg.find("no password supplied") != std::string::npos ||
      msg.find("authentication failed") != std::string::npos ||
      (msg.find("role") != std::string::npos && msg.find("does not exist") != std::string::npos)) {
    return Status::Unauthenticated(m);
  }
  if (msg.find("does not exist") != std::string::npos) return Status::NotFound(m);
  if (msg.find("invalid") != std::string::npos || msg.find("unrecognized") != std::string::npos ||
      msg.find("missing") != std::string::npos) {
    return Status::InvalidArgument(m);  // a malformed URL: retrying cannot help
  }
  return Status::Unavailable(m);
}

// Converts an exception from libpqxx during a query into a Status.
Status QueryError(const std::string& context, const std::exception& e) {
  std::string msg = e.what();
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  for (char& c : msg) {
    if (c == '\n') c = ' ';
  }
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) {
    return Status::Unavailable(
        fmt::format("{}: the connection to the source was lost: {}", context, msg));
  }
  return Status::InvalidArgument(fmt::format("{}: {}", context, msg));
}

class PostgresRowStream : public RowStream {
 public:
  PostgresRowStream(pqxx::dbtransaction* txn, std::string cursor, std::string table, int fetch_rows)
      : txn_(txn), cursor_(std::move(cursor)), table_(std::move(table)), fetch_rows_(fetch_rows) {}

  ~PostgresRowStream() override {
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
    const int n = batch_.columns();
    schema_.resize(n);
    oids_.resize(n);
    lists_.assign(n, ListForm::kNone);
    elements_.assign(n, ValueType::kText);
    for (int i = 0; i < n; ++i) {
      schema_[i].name = batch_.column_name(i);
      oids_[i] = batch_.column_type(i);
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
    Position();
    return status_;
  }

  bool Valid() const override { return valid_; }
  void Next() override {
    ++index_;
    if (index_ >= batch_.size() && !exhausted_) Fetch();
    Position();
  }
  const Row& row() const override { return row_; }
  const RowSchema& schema() const override { return schema_; }
  Status status() const override { return status_; }

 private:
  static constexpr uint32_t kTextOid = 25;

  // What a type widen keeps as text is: an enum, or an array (with ','
  // between elements) of elements of which widen type (domains and enums
  // resolved).
  struct OtherType {
    bool is_enum = false;
    bool is_array = false;
    ValueType element = ValueType::kText;
  };
  OtherType DescribeOther(uint32_t oid) {
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
      status_ = QueryError(fmt::format("reading table {}", table_), e);
    }
    return o;
  }

  void Fetch() {
    try {
      batch_ = txn_->exec(fmt::format("FETCH FORWARD {} FROM {}", fetch_rows_, cursor_));
      index_ = 0;
      exhausted_ = static_cast<int>(batch_.size()) < fetch_rows_;
    } catch (const std::exception& e) {
      status_ = QueryError(fmt::format("reading table {}", table_), e);
      exhausted_ = true;
      batch_ = pqxx::result();
      index_ = 0;
    }
  }

  void Position() {
    valid_ = status_.ok() && index_ < batch_.size();
    if (!valid_) return;
    const pqxx::row r = batch_[static_cast<pqxx::result::size_type>(index_)];
    for (size_t i = 0; i < oids_.size(); ++i) {
      const pqxx::field f = r[static_cast<pqxx::row::size_type>(i)];
      Value& v = row_.values[i];
      if (f.is_null()) {
        v.SetNull(schema_[i].type);
        continue;
      }
      std::string_view text(f.c_str(), f.size());
      if (!pg_internal::ParseText(oids_[i], text, &v)) {
        status_ = Status::InvalidArgument(
            fmt::format("table {}, column {}: cannot read value '{}' of type oid {}", table_,
                        schema_[i].name, text.substr(0, 80), oids_[i]));
        valid_ = false;
        return;
      }
      if (lists_[i] != ListForm::kNone) v.SetList(lists_[i], elements_[i]);
    }
  }

  pqxx::dbtransaction* txn_;
  std::string cursor_;
  std::string table_;
  int fetch_rows_;
  pqxx::result batch_;
  size_t index_ = 0;
  bool exhausted_ = false;
  bool valid_ = false;
  RowSchema schema_;
  std::vector<uint32_t> oids_;
  std::vector<ListForm> lists_;      // per column: arrays
  std::vector<ValueType> elements_;  // per column: the arrays' element type
  Row row_;
  Status status_;
};

}  // namespace

struct PostgresSource::Session {
  std::unique_ptr<pqxx::connection> conn;
  std::unique_ptr<pqxx::dbtransaction> txn;
  // "table\x1fcolumn" -> whether the column is text or varchar in a
  // deterministic collation (see BytesEqual).
  std::map<std::string, bool> plain_text;

  // True when `=` on the column is equality of its bytes: text or varchar
  // (not char(n), whose `=` ignores trailing blanks, a domain, citext or
  // another type) in a deterministic collation, for which PostgreSQL
  // compares the bytes whatever the collation. False when unsure.
  bool PlainText(const std::string& table, const std::string& column) {
    const std::string id = table + '\x1f' + column;
    auto it = plain_text.find(id);
    if (it != plain_text.end()) return it->second;
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
    : url_(std::move(url)), options_(options), session_(std::make_unique<Session>()) {}

PostgresSource::~PostgresSource() {
  try {
    if (session_->txn) session_->txn->abort();  // read-only: nothing to keep
  } catch (const std::exception&) {
  }
  session_->txn.reset();
  session_->conn.reset();
}

std::string PostgresSource::QuoteIdent(const std::string& name) {
  std::string q = "\"";
  for (char c : name) {
    if (c == '"') q.push_back('"');
    q.push_back(c);
  }
  q.push_back('"');
  return q;
}

Result<std::unique_ptr<PostgresSource>> PostgresSource::Open(const std::string& url,
                                                             const SourceOptions& options) {
  std::unique_ptr<PostgresSource> src(new PostgresSource(url, options));
  // postgres:// is libpq's other spelling; libpq takes both.
  try {
    src->session_->conn = std::make_unique<pqxx::connection>(pg_internal::WithConnectTimeout(
        pg_internal::WithPassword(url, std::getenv("WIDEN_SOURCE_PASSWORD"))));
  } catch (const std::exception& e) {
    return ConnectError(url, e.what());
  }
  try {
    src->session_->conn->set_client_encoding("UTF8");
    pqxx::nontransaction setup(*src->session_->conn);
    setup.exec(
        "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET bytea_output = 'hex'; "
        "SET extra_float_digits = 3; SET IntervalStyle = 'iso_8601'; SET lc_monetary = 'C'; "
        "SET default_transaction_read_only = on; SET lock_timeout = '60s'; "
        "SET idle_in_transaction_session_timeout = 0");
    setup.commit();
    src->session_->txn = std::make_unique<Txn>(*src->session_->conn, "widen");
  } catch (const std::exception& e) {
    return QueryError(fmt::format("source {}", MaskUrl(url)), e);
  }
  return src;
}

Result<std::vector<std::unique_ptr<Source>>> PostgresSource::OpenSiblings(
    int n, const std::vector<std::string>&, bool) {
  std::string snapshot;
  try {
    // The transaction's snapshot, importable while this transaction is open.
    pqxx::result r = session_->txn->exec("SELECT pg_export_snapshot()");
    snapshot = r[0][0].c_str();
  } catch (const std::exception& e) {
    return QueryError(
        fmt::format("source {}: exporting the snapshot for parallel jobs", MaskUrl(url_)), e);
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
          e);
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<SourceSchema> PostgresSource::Introspect() {
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
      SELECT c.relname, con.contype, a.attname, rc.relname, ra.attname, con.conname, k.ord
      FROM pg_constraint con
      JOIN pg_class c ON c.oid = con.conrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
      LEFT JOIN pg_class rc ON rc.oid = con.confrelid
      LEFT JOIN pg_attribute ra ON ra.attrelid = con.confrelid AND ra.attnum = con.confkey[k.ord]
      WHERE n.nspname = current_schema() AND con.contype IN ('p', 'f', 'u')
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
          t->foreign_keys.push_back(ForeignKey{{}, r[3].c_str(), {}});
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
    return QueryError(fmt::format("source {}: reading the schema", MaskUrl(url_)), e);
  }
  return schema;
}

Result<SourceTable> PostgresSource::DescribeQuery(const std::string& sql) {
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
    return QueryError("query", e);
  }
  return t;
}

Status PostgresSource::CheckScan(const ScanSpec& spec) {
  const std::string sql = SelectSql(spec);
  try {
    session_->txn->exec("SAVEPOINT widen_check");
    // exec_params uses the extended protocol: one statement, never a batch.
    session_->txn->exec_params("EXPLAIN " + sql);
    session_->txn->exec("RELEASE SAVEPOINT widen_check");
  } catch (const std::exception& e) {
    try {
      session_->txn->exec("ROLLBACK TO SAVEPOINT widen_check");
    } catch (const std::exception&) {
    }
    return QueryError(fmt::format("query failed ({})", sql), e);
  }
  return Status::OK();
}

std::string PostgresSource::SelectSql(const ScanSpec& spec) const {
  auto col = [](const ColumnExpr& c) { return QuoteIdent(c.alias) + "." + QuoteIdent(c.column); };
  // Merge keys. A child row is matched to its parent rows by the database:
  // it is read joined to the parent table on the nest's `=` (whatever the
  // collation: nondeterministic ICU collations, char(n) padding, citext...)
  // and carries the parent's values, NULL when no parent row matches. The
  // parent rows carry their own values. Both sides are then the same
  // column's values, ordered as CompareValues orders them: text-like values
  // by their text as unsigned bytes (COLLATE "C"), others natively. Links
  // whose values compare alike in widen and in the database (by_value, or
  // text whose `=` compares bytes) use the child's own values, without the
  // join.
  std::vector<std::string> keys, order, merge_joins;
  for (size_t l = 0; l < spec.merge.size(); ++l) {
    const MergeLink& m = spec.merge[l];
    const bool carry = m.child && !m.by_value && !session_->BytesEqual(spec, m);
    const std::string alias = QuoteIdent(fmt::format("widen_m{}", l));
    // The peer's columns are renamed in a derived table, so that they
    // cannot make a name in the `where` text ambiguous.
    auto carried = [&](size_t i) { return QuoteIdent(fmt::format("widen_k{}_{}", l, i)); };
    if (carry) {
      std::string peer = "SELECT ";
      for (size_t i = 0; i < m.on.size(); ++i) {
        peer += (i ? ", " : "") + QuoteIdent(m.on[i].second) + " AS " + carried(i);
      }
      peer += m.peer_query.empty() ? " FROM " + QuoteIdent(m.peer_table)
                                   : " FROM (" + m.peer_query + ") AS widen_q";
      std::string j = " LEFT JOIN (" + peer + ") AS " + alias + " ON ";
      for (size_t i = 0; i < m.on.size(); ++i) {
        if (i) j += " AND ";
        j += alias + "." + carried(i) + " = " + col(m.on[i].first);
      }
      merge_joins.push_back(std::move(j));
    }
    for (size_t i = 0; i < m.on.size(); ++i) {
      const ColumnExpr& c = m.on[i].first;
      const std::string value = carry ? alias + "." + carried(i) : col(c);
      const bool text = c.is_text && !m.by_value;
      keys.push_back(text ? "(" + value + ")::text" : value);
      std::string o = text ? keys.back() + " COLLATE \"C\"" : value;
      if (carry) o += " NULLS FIRST";
      if (std::find(order.begin(), order.end(), o) == order.end()) order.push_back(std::move(o));
    }
  }
  std::string sql = "SELECT ";
  for (size_t i = 0; i < spec.columns.size(); ++i) {
    if (i) sql += ", ";
    sql += col(spec.columns[i]);
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    sql += (i || !spec.columns.empty() ? ", " : "") + keys[i];
  }
  if (spec.query.empty()) {
    sql += " FROM " + QuoteIdent(spec.table) + " AS " + QuoteIdent(spec.alias);
  } else {
    sql += " FROM (" + spec.query + ") AS " + QuoteIdent(spec.alias);
  }
  for (const auto& j : spec.joins) {
    sql += " LEFT JOIN " + QuoteIdent(j.table) + " AS " + QuoteIdent(j.alias) + " ON ";
    for (size_t i = 0; i < j.on.size(); ++i) {
      if (i) sql += " AND ";
      sql += QuoteIdent(j.alias) + "." + QuoteIdent(j.on[i].second) + " = " + col(j.on[i].first);
    }
  }
  for (const auto& j : merge_joins) sql += j;
  std::vector<std::string> preds;
  if (!spec.where.empty()) preds.push_back("(" + spec.where + ")");
  for (const auto& c : spec.not_null) preds.push_back(col(c) + " IS NOT NULL");
  if (spec.range) preds.push_back(source_internal::RangePredicate(spec, col));
  for (size_t i = 0; i < preds.size(); ++i) sql += (i ? " AND " : " WHERE ") + preds[i];
  for (const auto& c : spec.order_by) {
    std::string o = col(c);
    if (c.is_text) o += " COLLATE \"C\"";
    if (std::find(order.begin(), order.end(), o) == order.end()) order.push_back(std::move(o));
  }
  for (size_t i = 0; i < order.size(); ++i) sql += (i ? ", " : " ORDER BY ") + order[i];
  return sql;
}

Result<std::unique_ptr<RowStream>> PostgresSource::Scan(const ScanSpec& spec) {
  std::string cursor = fmt::format("widen_c{}", ++next_cursor_);
  std::string sql = SelectSql(spec);
  try {
    // exec_params uses the extended protocol: the text is one statement, so a
    // `where` cannot smuggle in a second one (COMMIT; DROP ...).
    session_->txn->exec_params("DECLARE " + cursor + " NO SCROLL CURSOR FOR " + sql);
  } catch (const std::exception& e) {
    return QueryError(fmt::format("table {}: query failed ({})", spec.table, sql), e);
  }
  auto stream = std::make_unique<PostgresRowStream>(session_->txn.get(), cursor, spec.table,
                                                    options_.fetch_rows);
  WIDEN_RETURN_IF_ERROR(stream->Start());
  return std::unique_ptr<RowStream>(std::move(stream));
}

Result<std::vector<GroupCount>> PostgresSource::LargestGroups(
    const ScanSpec& spec, const std::vector<ColumnExpr>& group_by, int limit) {
  if (group_by.empty() || limit < 1) {
    return Status::InvalidArgument("LargestGroups needs group columns and a positive limit");
  }
  // The derived table's column list names the group columns, whatever their
  // names in the scan (two aliases may have columns of the same name).
  std::string names, order;
  std::vector<std::string> out;
  for (size_t i = 0; i < group_by.size(); ++i) {
    const std::string g = fmt::format("widen_g{}", i);
    names += (i ? ", " : "") + g;
    order += ", " + g;
    out.push_back(g);
  }
  out.push_back("widen_n");
  const std::string sql = fmt::format(
      "SELECT {0}, count(*) AS widen_n FROM ({1}) AS widen_g({0}) GROUP BY {0} "
      "ORDER BY widen_n DESC{2} LIMIT {3}",
      names, SelectSql(Unordered(spec, group_by)), order, limit);
  WIDEN_ASSIGN_OR_RETURN(auto rows, Scan(OverQuery(sql, out)));
  return source_internal::ReadGroups(rows.get());
}

Result<ColumnSummary> PostgresSource::SummarizeColumn(const ScanSpec& spec,
                                                      const ColumnExpr& column) {
  const std::string sql = fmt::format(
      "SELECT min(widen_c) AS widen_min, max(widen_c) AS widen_max, count(*) AS widen_rows, "
      "count(widen_c) AS widen_non_null FROM ({}) AS widen_s(widen_c)",
      SelectSql(Unordered(spec, {column})));
  WIDEN_ASSIGN_OR_RETURN(
      auto rows, Scan(OverQuery(sql, {"widen_min", "widen_max", "widen_rows", "widen_non_null"})));
  return source_internal::ReadSummary(rows.get());
}

}  // namespace widen
