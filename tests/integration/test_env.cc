#include "tests/integration/test_env.h"

#include <pqxx/pqxx>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "store/store.h"

namespace widen::testing {

std::string PgUrl() {
  const char* v = std::getenv("WIDEN_TEST_PG_URL");
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

}  // namespace widen::testing
