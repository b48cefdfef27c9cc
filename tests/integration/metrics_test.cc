// widen migrate and sync --metrics-file against a real PostgreSQL: the file
// is read by the Prometheus client's own text-format parser
// (parse_metrics.py), its figures checked against the source (SQL counts,
// the newest watermarks) and against sync's --format json summary; a failed
// run (an unreachable source, a store held by another process: exit 7)
// writes its exit status and keeps the last success time, Ctrl-C too (130);
// a folder that
// does not exist is named before the source is read, and so is a path that
// is empty, the mapping, another output, inside the target store, or a FIFO;
// a reader never sees a part of the file while runs replace it; a link
// stays a link; a 255-byte name is valid; and label values with control
// and non-UTF-8 bytes keep the file parseable.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMapping = R"YAML(source: ${WIDEN_SOURCE_URL}
target: leveldb:store
tables:
  - name: m:orders
    from: orders
    families: [d]
    key:
      parts: [{column: id, width: 6}]
    columns:
      - {column: status, to: "d:status"}
      - {column: total, to: "d:total"}
  - name: m:customers
    from: customer
    families: [d]
    key:
      parts: [{column: id, width: 6}]
    columns:
      - {column: name, to: "d:name"}
sync:
  - {table: orders, mode: watermark, watermark: updated_at}
  - {table: customer, mode: watermark, watermark: row_version}
)YAML";

// One sample as the parser read it.
struct Sample {
  std::string family;
  std::string type;
  std::map<std::string, std::string> labels;
  double value = 0;
};

class MetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WIDEN_REQUIRE_PG(url);
    db_ = FreshPgDatabase(url, "widen_it_metrics");
    PgQuery(
        db_,
        "CREATE TABLE customer (id int PRIMARY KEY, name text, row_version bigint NOT NULL);"
        "CREATE TABLE orders (id int PRIMARY KEY, status text, total numeric(8,2), "
        "updated_at timestamptz NOT NULL);"
        "INSERT INTO customer SELECT i, 'c' || i, 100 + i FROM generate_series(1, 7) i;"
        "INSERT INTO orders SELECT i, CASE WHEN i % 3 = 0 THEN NULL ELSE 'open' END, i * 1.5, "
        "now() - interval '90 seconds' - i * interval '1 minute' FROM generate_series(1, 40) i");
    dir_ = MakeTempDir();
    std::ofstream(dir_ + "/m.yaml") << kMapping;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  CommandResult Widen(const std::string& args, const std::string& source = "") {
    return RunCommand(fmt::format("cd {} && WIDEN_SOURCE_URL={} {} {}", ShellQuote(dir_),
                                  ShellQuote(source.empty() ? db_ : source), WidenBinary(), args));
  }

  // The file's samples, through the Prometheus client's parser (which
  // must accept the whole file).
  std::vector<Sample> Parse(const std::string& file) {
    CommandResult r =
        RunCommand(std::string(WIDEN_SYSTEM_PYTHON3) + " " + SourceDir() +
                   "/tests/integration/parse_metrics.py " + ShellQuote(file) + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::vector<Sample> out;
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) {
        ADD_FAILURE() << "not a JSON line: " << line;
        continue;
      }
      Sample s;
      s.family = j["family"];
      s.type = j["type"];
      for (auto& [k, v] : j["labels"].items()) s.labels[k] = v;
      s.value = j["value"];
      out.push_back(std::move(s));
    }
    return out;
  }

  // The value of `family` whose labels include `labels`; fails when there
  // is not exactly one.
  static double Value(const std::vector<Sample>& samples, const std::string& family,
                      const std::map<std::string, std::string>& labels = {}) {
    const Sample* found = nullptr;
    int n = 0;
    for (const Sample& s : samples) {
      if (s.family != family) continue;
      bool match = true;
      for (const auto& [k, v] : labels) {
        auto it = s.labels.find(k);
        match = match && it != s.labels.end() && it->second == v;
      }
      if (match) {
        found = &s;
        ++n;
      }
    }
    EXPECT_EQ(n, 1) << family;
    return found == nullptr ? -1 : found->value;
  }
  static bool Has(const std::vector<Sample>& samples, const std::string& family) {
    for (const Sample& s : samples) {
      if (s.family == family) return true;
    }
    return false;
  }

  double Sql(const std::string& query) { return std::stod(PgQuery(db_, query).at(0).at(0)); }

  static double Now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  std::string db_;
  std::string dir_;
};

TEST_F(MetricsTest, MigrateAndSyncFiguresMatchTheSource) {
  const double before = Now();
  CommandResult r = Widen("migrate -q -m m.yaml --metrics-file migrate.prom");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const double after = Now();
  std::vector<Sample> m = Parse(dir_ + "/migrate.prom");
  const std::map<std::string, std::string> job = {{"command", "migrate"}, {"mapping", "m.yaml"}};
  for (const Sample& s : m) {
    EXPECT_EQ(s.type, "gauge") << s.family;
    EXPECT_EQ(s.labels.at("command"), "migrate") << s.family;
    EXPECT_EQ(s.labels.at("mapping"), "m.yaml") << s.family;
  }
  EXPECT_EQ(Value(m, "widen_exit_status", job), 0);
  const double success = Value(m, "widen_last_success_timestamp_seconds", job);
  EXPECT_GE(success, before - 0.001);
  EXPECT_LE(success, after + 0.001);
  EXPECT_EQ(Value(m, "widen_last_run_timestamp_seconds", job), success);
  const double duration = Value(m, "widen_run_duration_seconds", job);
  EXPECT_GT(duration, 0);
  EXPECT_LE(duration, after - before + 0.001);
  const double orders = Sql("SELECT count(*) FROM orders");
  const double customers = Sql("SELECT count(*) FROM customer");
  const std::map<std::string, std::string> o = {{"command", "migrate"}, {"table", "m:orders"}};
  const std::map<std::string, std::string> c = {{"command", "migrate"}, {"table", "m:customers"}};
  EXPECT_EQ(Value(m, "widen_table_rows_read", o), orders);
  EXPECT_EQ(Value(m, "widen_table_rows_read", c), customers);
  EXPECT_EQ(Value(m, "widen_table_rows_written", o), orders);
  // A cell per non-NULL value.
  EXPECT_EQ(Value(m, "widen_table_cells_put", o),
            Sql("SELECT count(status) + count(total) FROM orders"));
  EXPECT_EQ(Value(m, "widen_table_cells_put", c), Sql("SELECT count(name) FROM customer"));
  EXPECT_EQ(Value(m, "widen_run_rows_read", job), orders + customers);
  EXPECT_EQ(Value(m, "widen_run_rows_rejected", job), 0);
  EXPECT_FALSE(Has(m, "widen_watermark_lag_seconds")) << "migrate reads no watermark";

  // The first sync (a full pass) after changes: its figures are the JSON
  // summary's, its watermarks the source's newest.
  PgQuery(db_,
          "UPDATE orders SET status = 'paid', updated_at = now() - interval '30 seconds' WHERE "
          "id <= 5; DELETE FROM orders WHERE id = 40; UPDATE customer SET name = 'x', "
          "row_version = 500 WHERE id = 2");
  r = Widen("sync -m m.yaml --format json --metrics-file sync.prom");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  std::vector<Sample> s = Parse(dir_ + "/sync.prom");
  const std::map<std::string, std::string> sjob = {{"command", "sync"}, {"mapping", "m.yaml"}};
  EXPECT_EQ(Value(s, "widen_exit_status", sjob), 0);
  for (const auto& t : j["tables"]) {
    const std::map<std::string, std::string> l = {{"command", "sync"},
                                                  {"table", t["table"].get<std::string>()}};
    EXPECT_EQ(Value(s, "widen_table_rows_read", l), t["source_rows"].get<double>());
    EXPECT_EQ(Value(s, "widen_table_rows_written", l), t["rows_written"].get<double>());
    EXPECT_EQ(Value(s, "widen_table_rows_deleted", l), t["rows_deleted"].get<double>());
    EXPECT_EQ(Value(s, "widen_table_cells_put", l), t["cells_put"].get<double>());
    EXPECT_EQ(Value(s, "widen_table_cells_deleted", l), t["cells_deleted"].get<double>());
    EXPECT_EQ(Value(s, "widen_table_rows_rejected", l), t["rejected"].get<double>());
  }
  EXPECT_EQ(Value(s, "widen_run_rows_read", sjob), j["source_rows"].get<double>());
  EXPECT_EQ(Value(s, "widen_run_rows_written", sjob), j["rows_written"].get<double>());
  EXPECT_EQ(Value(s, "widen_run_rows_deleted", sjob), 1);  // order 40
  EXPECT_EQ(Value(s, "widen_run_cells_deleted", sjob), j["cells_deleted"].get<double>());
  EXPECT_EQ(Value(s, "widen_run_rows_read", sjob),
            Sql("SELECT (SELECT count(*) FROM orders) + (SELECT count(*) FROM customer)"));
  // Time watermark: the run's end less the newest updated_at; integer
  // watermark: the newest row_version.
  const double newest = Sql("SELECT extract(epoch FROM max(updated_at)) FROM orders");
  const double end = Value(s, "widen_last_run_timestamp_seconds", sjob);
  const double lag =
      Value(s, "widen_watermark_lag_seconds",
            {{"table", "m:orders"}, {"source_table", "orders"}, {"column", "updated_at"}});
  EXPECT_NEAR(lag, end - newest, 1e-3);
  EXPECT_GE(lag, 30);
  EXPECT_EQ(
      Value(s, "widen_watermark_value",
            {{"table", "m:customers"}, {"source_table", "customer"}, {"column", "row_version"}}),
      Sql("SELECT max(row_version) FROM customer"));
  EXPECT_EQ(Value(s, "widen_watermark_value", {{"table", "m:customers"}}), 500);
}

TEST_F(MetricsTest, AFailedRunWritesItsExitStatusAndKeepsTheLastSuccess) {
  CommandResult r = Widen("sync -q -m m.yaml --metrics-file sync.prom");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::map<std::string, std::string> job = {{"command", "sync"}};
  const double success =
      Value(Parse(dir_ + "/sync.prom"), "widen_last_success_timestamp_seconds", job);
  ASSERT_GT(success, 0);

  // A source that cannot be reached: exit 3.
  r = Widen("sync -q -m m.yaml --metrics-file sync.prom", "postgresql://widen@127.0.0.1:1/none");
  ASSERT_EQ(r.exit_code, 3) << r.output;
  std::vector<Sample> s = Parse(dir_ + "/sync.prom");
  EXPECT_EQ(Value(s, "widen_exit_status", job), 3);
  EXPECT_EQ(Value(s, "widen_last_success_timestamp_seconds", job), success);
  EXPECT_GT(Value(s, "widen_last_run_timestamp_seconds", job), success);
  EXPECT_FALSE(Has(s, "widen_run_rows_read")) << "a failed run has no figures";
  EXPECT_FALSE(Has(s, "widen_table_rows_read"));

  // The store held by another process (its LevelDB lock): exit 7.
  const int fd = open((dir_ + "/store/LOCK").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  ASSERT_EQ(fcntl(fd, F_SETLK, &fl), 0);
  r = Widen("sync -q -m m.yaml --metrics-file sync.prom");
  close(fd);
  ASSERT_EQ(r.exit_code, 7) << r.output;
  s = Parse(dir_ + "/sync.prom");
  EXPECT_EQ(Value(s, "widen_exit_status", job), 7);
  EXPECT_EQ(Value(s, "widen_last_success_timestamp_seconds", job), success);

  // Success again: a new last success.
  r = Widen("sync -q -m m.yaml --metrics-file sync.prom");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  s = Parse(dir_ + "/sync.prom");
  EXPECT_EQ(Value(s, "widen_exit_status", job), 0);
  EXPECT_GT(Value(s, "widen_last_success_timestamp_seconds", job), success);

  // Another command's file is not this one's: a migrate never
  // succeeded into migrate.prom, whatever sync.prom says.
  fs::copy_file(dir_ + "/sync.prom", dir_ + "/migrate.prom");
  r = Widen("migrate -q -m m.yaml --metrics-file migrate.prom",
            "postgresql://widen@127.0.0.1:1/none");
  ASSERT_EQ(r.exit_code, 3) << r.output;
  EXPECT_EQ(Value(Parse(dir_ + "/migrate.prom"), "widen_last_success_timestamp_seconds",
                  {{"command", "migrate"}}),
            0);
}

TEST_F(MetricsTest, AnInterruptedRunWrites130) {
  CommandResult r = Widen("sync -q -m m.yaml --metrics-file sync.prom");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::map<std::string, std::string> job = {{"command", "sync"}};
  const double success =
      Value(Parse(dir_ + "/sync.prom"), "widen_last_success_timestamp_seconds", job);
  // The next sync waits on a table another session holds locked; Ctrl-C.
  std::unique_ptr<SqlSession> lock = SqlSession::Open(db_);
  ASSERT_NE(lock, nullptr);
  lock->Exec("BEGIN");
  lock->Exec("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (chdir(dir_.c_str()) != 0) _exit(126);
    setenv("WIDEN_SOURCE_URL", db_.c_str(), 1);
    const std::string bin = WidenBinary();
    execl(bin.c_str(), bin.c_str(), "sync", "-q", "-m", "m.yaml", "--metrics-file", "sync.prom",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Until widen's query waits on the lock.
  bool waiting = false;
  for (int i = 0; i < 200 && !waiting; ++i) {
    waiting = PgQuery(db_,
                      "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
                      "datname = current_database()")
                  .at(0)
                  .at(0) != "0";
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(waiting) << "widen never waited on the lock";
  kill(pid, SIGINT);
  int st = 0;
  waitpid(pid, &st, 0);
  lock->Exec("ROLLBACK");
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 130);
  std::vector<Sample> s = Parse(dir_ + "/sync.prom");
  EXPECT_EQ(Value(s, "widen_exit_status", job), 130);
  EXPECT_EQ(Value(s, "widen_last_success_timestamp_seconds", job), success);
}

TEST_F(MetricsTest, AFolderThatDoesNotExistIsNamedBeforeTheSourceIsRead) {
  // The source cannot be reached either: exit 11 (not 3) shows the file
  // was checked first.
  for (const char* command : {"migrate", "sync"}) {
    CommandResult r = Widen(fmt::format("{} -q -m m.yaml --metrics-file nowhere/x.prom", command),
                            "postgresql://widen@127.0.0.1:1/none");
    EXPECT_EQ(r.exit_code, 11) << r.output;
    EXPECT_NE(r.output.find("--metrics-file nowhere/x.prom: the folder 'nowhere' does not exist"),
              std::string::npos)
        << r.output;
  }
  EXPECT_FALSE(fs::exists(dir_ + "/store")) << "nothing was written";
}

TEST_F(MetricsTest, AReaderSeesTheOldFileOrTheNewOneWhole) {
  CommandResult r = Widen("sync -q -m m.yaml --metrics-file sync.prom");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, partial{0};
  std::string bad;
  std::thread reader([&] {
    while (!done.load()) {
      std::ifstream f(dir_ + "/sync.prom");
      const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      ++reads;
      // Whole: it ends with a line feed after the last family's sample.
      if (text.empty() || text.back() != '\n' ||
          text.find("widen_table_duration_seconds{") == std::string::npos) {
        if (partial++ == 0) bad = text;
      }
    }
  });
  for (int i = 0; i < 6; ++i) {
    PgQuery(db_,
            fmt::format("UPDATE orders SET status = 's{}', updated_at = now() WHERE id = 1", i));
    r = Widen("sync -q -m m.yaml --metrics-file sync.prom");
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  done = true;
  reader.join();
  EXPECT_GT(reads.load(), 6);
  EXPECT_EQ(partial.load(), 0) << "a reader saw:\n" << bad;
  // No temporary file is left beside it.
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().filename().string().find(".sync.prom"), std::string::npos) << e.path();
  }
}

// A TCP port on 127.0.0.1 that nothing listens on just now.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    return 0;
  }
  close(fd);
  return ntohs(a.sin_port);
}

TEST_F(MetricsTest, NodeExporterServesTheFile) {
  const std::string exporter = "/usr/bin/prometheus-node-exporter";
  if (!fs::exists(exporter)) {
    if (InCi()) FAIL() << exporter << " is missing (scripts/deps.sh installs it)";
    GTEST_SKIP() << exporter << " is missing";
  }
  // The collector's folder holds a link to the file, as README's setup.
  fs::create_directories(dir_ + "/textfile");
  CommandResult r = Widen("sync -q -m m.yaml --metrics-file sync.prom");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  fs::create_symlink(dir_ + "/sync.prom", dir_ + "/textfile/widen-sync.prom");
  const int port = FreePort();
  ASSERT_NE(port, 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string listen = fmt::format("--web.listen-address=127.0.0.1:{}", port);
    const std::string folder = "--collector.textfile.directory=" + dir_ + "/textfile";
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    execl(exporter.c_str(), exporter.c_str(), listen.c_str(), "--collector.disable-defaults",
          "--collector.textfile", folder.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // What a Prometheus scrape gets: the exporter's /metrics.
  auto scrape = [&] {
    const std::string get = fmt::format(
        "import sys, urllib.request\n"
        "sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:{}/metrics', "
        "timeout=5).read().decode())",
        port);
    CommandResult c;
    for (int i = 0; i < 50; ++i) {
      c = RunCommand(std::string(WIDEN_SYSTEM_PYTHON3) + " -c " + ShellQuote(get) + " 2>&1");
      if (c.exit_code == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(c.exit_code, 0) << c.output;
    return c.output;
  };
  const std::string labels = "{command=\"sync\",mapping=\"m.yaml\"}";
  std::string page = scrape();
  EXPECT_NE(page.find("node_textfile_scrape_error 0\n"), std::string::npos) << page;
  EXPECT_NE(page.find("widen_exit_status" + labels + " 0\n"), std::string::npos) << page;
  const std::string rows = fmt::format(
      "widen_table_rows_read{{command=\"sync\",mapping=\"m.yaml\",table=\"m:orders\"}} {}\n",
      PgQuery(db_, "SELECT count(*) FROM orders").at(0).at(0));
  EXPECT_NE(page.find(rows), std::string::npos) << page;
  // A failed run replaces the file: the next scrape has its exit status.
  r = Widen("sync -q -m m.yaml --metrics-file sync.prom", "postgresql://widen@127.0.0.1:1/none");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  page = scrape();
  EXPECT_NE(page.find("widen_exit_status" + labels + " 3\n"), std::string::npos) << page;
  EXPECT_NE(page.find("node_textfile_scrape_error 0\n"), std::string::npos) << page;
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
}

std::string FileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(MetricsTest, BadOutputPathsAreRefusedBeforeTheSourceIsRead) {
  // The source cannot be reached: exit 2 or 11 (not 3) shows the paths were
  // checked first; the files named keep their bytes.
  const std::string none = "postgresql://widen@127.0.0.1:1/none";
  fs::create_directory(dir_ + "/store1");
  std::ofstream(dir_ + "/store1/CURRENT") << "MANIFEST-000001\n";
  std::ofstream(dir_ + "/rj.txt") << "old\n";
  struct Case {
    std::string args;
    int exit_code;
    std::string message;
  };
  const Case cases[] = {
      {"migrate -q -m m.yaml --target leveldb:store1 --metrics-file store1/CURRENT", 2,
       "--metrics-file store1/CURRENT: that is inside the target store " + dir_ + "/store1"},
      {"sync -q -m m.yaml --target leveldb:store1 --metrics-file ./store1/../store1/CURRENT", 2,
       "that is inside the target store"},
      {"migrate -q -m m.yaml --metrics-file m.yaml", 2,
       "--metrics-file m.yaml is the same file as -m m.yaml"},
      {"sync -q -m m.yaml --rejects rj.txt --metrics-file ./rj.txt", 2,
       "--metrics-file ./rj.txt is the same file as --rejects rj.txt"},
      {"plan -m m.yaml --html m.yaml", 2, "--html m.yaml is the same file as -m m.yaml"},
      {"plan -m m.yaml --diagram d.svg --html d.svg", 2,
       "--html d.svg is the same file as --diagram d.svg"},
      {"migrate -q -m m.yaml --metrics-file ''", 2, "--metrics-file: an empty path names no file"},
      {"sync -q -m m.yaml --rejects ''", 2, "--rejects: an empty path names no file"},
      {"plan -m m.yaml --html ''", 2, "--html: an empty path names no file"},
      {"plan -m m.yaml --diagram ''", 2, "--diagram: an empty path names no file"},
  };
  for (const Case& c : cases) {
    CommandResult r = Widen(c.args, none);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
  EXPECT_EQ(FileText(dir_ + "/store1/CURRENT"), "MANIFEST-000001\n");
  EXPECT_EQ(FileText(dir_ + "/m.yaml"), kMapping);
  EXPECT_EQ(FileText(dir_ + "/rj.txt"), "old\n");
  EXPECT_FALSE(fs::exists(dir_ + "/d.svg"));
  // The mapping's own target (leveldb:store) counts too, and a hard link is
  // the same file.
  fs::create_directory(dir_ + "/store");
  CommandResult r = Widen("plan -m m.yaml --html store/LOCK", none);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--html store/LOCK: that is inside the target store"), std::string::npos)
      << r.output;
  fs::create_hard_link(dir_ + "/m.yaml", dir_ + "/hard.yaml");
  r = Widen("migrate -q -m m.yaml --metrics-file hard.yaml", none);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(FileText(dir_ + "/m.yaml"), kMapping);
}

TEST_F(MetricsTest, AFifoIsRefusedNotOpened) {
  // Opening a FIFO for reading waits for a writer forever: the run must
  // end (timeout's 124 would show it hung) with exit 11 naming the file.
  ASSERT_EQ(mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  for (const std::string args :
       {"migrate -q -m m.yaml --metrics-file fifo", "sync -q -m m.yaml --metrics-file fifo",
        "plan -m m.yaml --html fifo", "plan -m m.yaml --diagram fifo.dot"}) {
    if (args.find("fifo.dot") != std::string::npos) {
      ASSERT_EQ(mkfifo((dir_ + "/fifo.dot").c_str(), 0600), 0);
    }
    CommandResult r =
        RunCommand(fmt::format("cd {} && WIDEN_SOURCE_URL=postgresql://widen@127.0.0.1:1/none "
                               "timeout 20 {} {}",
                               ShellQuote(dir_), WidenBinary(), args));
    EXPECT_EQ(r.exit_code, 11) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("is not a regular file"), std::string::npos) << args << "\n"
                                                                         << r.output;
  }
}

TEST_F(MetricsTest, ALinkStaysALinkAndLongNamesAreValid) {
  // A link to a file and a dangling link: each keeps being a link, and the
  // file it points to gets the figures.
  fs::create_directory(dir_ + "/real");
  std::ofstream(dir_ + "/real/old.prom") << "# old\n";
  fs::create_symlink("real/old.prom", dir_ + "/link.prom");
  fs::create_symlink("real/new.prom", dir_ + "/dangling.prom");
  const std::string long_name(255 - 5, 'n');
  for (const std::string& file :
       std::vector<std::string>{"link.prom", "dangling.prom", long_name + ".prom"}) {
    CommandResult r = Widen("sync -q -m m.yaml --metrics-file " + file);
    ASSERT_EQ(r.exit_code, 0) << file << "\n" << r.output;
  }
  EXPECT_TRUE(fs::is_symlink(dir_ + "/link.prom"));
  EXPECT_TRUE(fs::is_symlink(dir_ + "/dangling.prom"));
  for (const std::string& file :
       std::vector<std::string>{"real/old.prom", "real/new.prom", long_name + ".prom"}) {
    std::vector<Sample> m = Parse(dir_ + "/" + file);
    EXPECT_EQ(Value(m, "widen_exit_status", {{"command", "sync"}}), 0) << file;
  }
  // No temporary file is left beside them.
  for (const std::string& folder : std::vector<std::string>{dir_, dir_ + "/real"}) {
    for (const auto& e : fs::directory_iterator(folder)) {
      EXPECT_EQ(e.path().filename().string().find(".widen-"), std::string::npos) << e.path();
    }
  }
}

TEST_F(MetricsTest, MappingPathsWithControlAndNonUtf8BytesStayParseable) {
  // A mapping path with bytes that are not UTF-8, a carriage return and a
  // tab: the label value holds them as the text \xNN, so the Prometheus
  // parser reads the whole file (Python reads it as UTF-8, and splits lines
  // at \r as well as \n).
  const std::string name = "bad\xff\xfe\r\t\"q\\\xc3\xa9.yaml";
  std::ofstream(dir_ + "/" + name) << kMapping;
  CommandResult r = Widen("migrate -q -m " + ShellQuote(name) + " --metrics-file m.prom");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<Sample> m = Parse(dir_ + "/m.prom");
  const std::string label = "bad\\xFF\\xFE\\x0D\\x09\"q\\\xc3\xa9.yaml";
  EXPECT_EQ(Value(m, "widen_exit_status", {{"mapping", label}}), 0);
  EXPECT_EQ(Value(m, "widen_run_rows_read", {{"mapping", label}}),
            Sql("SELECT (SELECT count(*) FROM orders) + (SELECT count(*) FROM customer)"));
  // And a second run keeps the last success it wrote (the labels match).
  const double success = Value(m, "widen_last_success_timestamp_seconds", {{"mapping", label}});
  r = Widen("migrate -q -m " + ShellQuote(name) + " --metrics-file m.prom",
            "postgresql://widen@127.0.0.1:1/none");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  m = Parse(dir_ + "/m.prom");
  EXPECT_EQ(Value(m, "widen_last_success_timestamp_seconds", {{"mapping", label}}), success);
}

}  // namespace
}  // namespace widen::testing
