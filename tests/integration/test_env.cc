#include "tests/integration/test_env.h"

#include <pqxx/pqxx>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "store/store.h"

#ifdef WIDEN_WITH_MYSQL
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

#include "extract/mysql_text_internal.h"
#endif

namespace widen::testing {

std::string PgUrl() {
  const char* v = std::getenv("WIDEN_TEST_PG_URL");
  return v == nullptr ? "" : v;
}

std::string MySqlUrl() {
  const char* v = std::getenv("WIDEN_TEST_MYSQL_URL");
  return v == nullptr ? "" : v;
}

bool InCi() {
  const char* v = std::getenv("CI");
  return v != nullptr && std::string(v) == "true";
}

std::string WithDatabase(const std::string& url, const std::string& db) {
  size_t q = url.find('?');
  std::string base = url.substr(0, q), params = q == std::string::npos ? "" : url.substr(q);
  size_t slash = base.rfind('/');
  return base.substr(0, slash + 1) + db + params;
}

std::string FreshPgDatabase(const std::string& url, const std::string& base) {
  // ctest runs tests as parallel processes: one database per process.
  const std::string db = base + "_" + std::to_string(getpid());
  pqxx::connection c(url);
  pqxx::nontransaction tx(c);
  tx.exec("DROP DATABASE IF EXISTS " + tx.quote_name(db) + " WITH (FORCE)");
  tx.exec("CREATE DATABASE " + tx.quote_name(db) + " ENCODING 'UTF8' TEMPLATE template0");
  return WithDatabase(url, db);
}

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q.push_back(c);
    }
  }
  return q + "'";
}

CommandResult RunCommand(const std::string& command) {
  CommandResult r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

void RunPsqlFile(const std::string& url, const std::string& file) {
  CommandResult r = RunCommand("psql -q -X -v ON_ERROR_STOP=1 " + ShellQuote(url) + " -f " +
                               ShellQuote(file) + " >/dev/null");
  ASSERT_EQ(r.exit_code, 0) << "loading " << file << ": " << r.output;
}

void RunPsqlScript(const std::string& url, const std::string& file) {
  // Leave out the script's own database switching: it loads where we say.
  CommandResult r = RunCommand(
      "sed -e '/^DROP DATABASE/d' -e '/^CREATE DATABASE/d' -e '/^\\\\c /d' " + ShellQuote(file) +
      " | psql -q -X -v ON_ERROR_STOP=1 " + ShellQuote(url) + " >/dev/null");
  ASSERT_EQ(r.exit_code, 0) << "loading " << file << ": " << r.output;
}

std::vector<std::vector<std::string>> PgQuery(const std::string& url, const std::string& sql) {
  pqxx::connection c(url);
  pqxx::nontransaction tx(c);
  pqxx::result res = tx.exec(sql);
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : res) {
    std::vector<std::string> r;
    for (const auto& f : row) r.push_back(f.is_null() ? "<NULL>" : f.c_str());
    rows.push_back(std::move(r));
  }
  return rows;
}

namespace {

// A libpqxx connection; statements through a nontransaction, so BEGIN and
// COMMIT are the test's own.
class PgSession : public SqlSession {
 public:
  explicit PgSession(const std::string& url) : conn_(url) {}
  void Exec(const std::string& sql) override {
    try {
      pqxx::nontransaction tx(conn_);
      tx.exec(sql);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "PostgreSQL statement failed: " << e.what() << "\n  " << sql;
    }
  }

 private:
  pqxx::connection conn_;
};

}  // namespace

#ifdef WIDEN_WITH_MYSQL
namespace {

std::unique_ptr<sql::Connection> MySqlConnect(const std::string& url) {
  auto u = mysql_internal::ParseMySqlUrl(url);
  if (!u.ok()) throw std::runtime_error(u.status().ToString());
  sql::ConnectOptionsMap o;
  o["hostName"] = sql::SQLString(u->host);
  o["port"] = u->port;
  o["userName"] = sql::SQLString(u->user);
  o["password"] = sql::SQLString(u->password);
  o["schema"] = sql::SQLString(u->database);
  o["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
  std::unique_ptr<sql::Connection> c(sql::mysql::get_mysql_driver_instance()->connect(o));
  std::unique_ptr<sql::Statement> st(c->createStatement());
  st->execute("SET NAMES utf8mb4");
  st->execute("SET time_zone = '+00:00'");
  return c;
}

std::string MySqlClient() {
  for (const char* name : {"mariadb", "mysql"}) {
    for (const char* dir : {"/usr/bin/", "/usr/local/bin/"}) {
      std::string p = std::string(dir) + name;
      if (access(p.c_str(), X_OK) == 0) return p;
    }
  }
  return "mysql";
}

}  // namespace

std::string FreshMySqlDatabase(const std::string& url, const std::string& base) {
  const std::string db = base + "_" + std::to_string(getpid());
  MySqlQuery(url,
             std::vector<std::string>{"DROP DATABASE IF EXISTS " + mysql_internal::QuoteIdent(db),
                                      "CREATE DATABASE " + mysql_internal::QuoteIdent(db) +
                                          " CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"});
  return WithDatabase(url, db);
}

void RunMySqlFile(const std::string& url, const std::string& file, bool strip_database_switch) {
  auto u = mysql_internal::ParseMySqlUrl(url);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  std::string client = MySqlClient() + " --no-defaults --default-character-set=utf8mb4 -h " +
                       ShellQuote(u->host) + " -P " + std::to_string(u->port) + " -u " +
                       ShellQuote(u->user) + " " + ShellQuote(u->database);
  if (!u->password.empty()) client = "MYSQL_PWD=" + ShellQuote(u->password) + " " + client;
  std::string cmd = strip_database_switch
                        ? "sed -e '/^DROP DATABASE/d' -e '/^CREATE DATABASE/d' -e '/^USE /d' " +
                              ShellQuote(file) + " | " + client
                        : client + " < " + ShellQuote(file);
  CommandResult r = RunCommand(cmd + " >/dev/null");
  ASSERT_EQ(r.exit_code, 0) << "loading " << file << ": " << r.output;
}

std::vector<std::vector<std::string>> MySqlQuery(const std::string& url,
                                                 const std::vector<std::string>& statements) {
  std::vector<std::vector<std::string>> rows;
  try {
    auto c = MySqlConnect(url);
    std::unique_ptr<sql::Statement> st(c->createStatement());
    for (size_t i = 0; i + 1 < statements.size(); ++i) {
      if (st->execute(statements[i])) std::unique_ptr<sql::ResultSet>(st->getResultSet());
    }
    if (statements.empty() || !st->execute(statements.back())) return rows;
    std::unique_ptr<sql::ResultSet> rs(st->getResultSet());
    const unsigned n = rs->getMetaData()->getColumnCount();
    while (rs->next()) {
      std::vector<std::string> r;
      for (unsigned i = 1; i <= n; ++i) {
        r.push_back(rs->isNull(i) ? "<NULL>" : std::string(rs->getString(i)));
      }
      rows.push_back(std::move(r));
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "MySQL query failed: " << e.what() << "\n  " << statements.back();
  }
  return rows;
}

std::vector<std::vector<std::string>> MySqlQuery(const std::string& url, const std::string& sql) {
  return MySqlQuery(url, std::vector<std::string>{sql});
}

namespace {

class MySqlSession : public SqlSession {
 public:
  explicit MySqlSession(std::unique_ptr<sql::Connection> c) : conn_(std::move(c)) {}
  void Exec(const std::string& sql) override {
    try {
      std::unique_ptr<sql::Statement> st(conn_->createStatement());
      if (st->execute(sql)) std::unique_ptr<sql::ResultSet>(st->getResultSet());
    } catch (const std::exception& e) {
      ADD_FAILURE() << "MySQL statement failed: " << e.what() << "\n  " << sql;
    }
  }

 private:
  std::unique_ptr<sql::Connection> conn_;
};

}  // namespace
#endif  // WIDEN_WITH_MYSQL

std::unique_ptr<SqlSession> SqlSession::Open(const std::string& url) {
  try {
    if (url.rfind("mysql://", 0) == 0) {
#ifdef WIDEN_WITH_MYSQL
      return std::make_unique<MySqlSession>(MySqlConnect(url));
#else
      ADD_FAILURE() << "built without MySQL: " << url;
      return nullptr;
#endif
    }
    return std::make_unique<PgSession>(url);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "cannot connect to " << url << ": " << e.what();
    return nullptr;
  }
}

std::string WidenBinary() { return std::string(WIDEN_BINARY_DIR) + "/cmd/widen"; }
std::string SourceDir() { return WIDEN_SOURCE_DIR; }

std::string DatasetsDir() {
  const char* v = std::getenv("WIDEN_DATASETS");
  if (v != nullptr && *v != '\0') return v;
  return (std::filesystem::path(WIDEN_SOURCE_DIR).parent_path() / "shared" / "datasets").string();
}

std::string MakeTempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "widen-test-XXXXXX").string();
  char* d = mkdtemp(tmpl.data());
  return d == nullptr ? "" : std::string(d);
}

TableCells ReadTable(const std::string& store_url, const std::string& table) {
  TableCells cells;
  StoreOptions so;
  so.create_if_missing = false;
  auto store = Store::Open(store_url, so);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return cells;
  auto reader = (*store)->NewReader(table, ReadOptions());
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return cells;
  for (; (*reader)->Valid(); (*reader)->Next()) {
    CellView c = (*reader)->cell();
    cells[std::string(c.row)][std::string(c.family) + ":" + std::string(c.qualifier)] =
        std::string(c.value);
  }
  EXPECT_TRUE((*reader)->status().ok()) << (*reader)->status().ToString();
  return cells;
}

std::vector<CellRecord> ReadCells(const std::string& store_url, const std::string& table,
                                  int max_versions, const std::string& row_prefix) {
  std::vector<CellRecord> cells;
  StoreOptions so;
  so.create_if_missing = false;
  auto store = Store::Open(store_url, so);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return cells;
  ReadOptions ro;
  ro.max_versions = max_versions;
  ro.row_prefix = row_prefix;
  auto reader = (*store)->NewReader(table, ro);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return cells;
  for (; (*reader)->Valid(); (*reader)->Next()) {
    CellView c = (*reader)->cell();
    cells.push_back(CellRecord{std::string(c.row),
                               std::string(c.family) + ":" + std::string(c.qualifier),
                               c.timestamp_ms, std::string(c.value)});
  }
  EXPECT_TRUE((*reader)->status().ok()) << (*reader)->status().ToString();
  return cells;
}

}  // namespace widen::testing
