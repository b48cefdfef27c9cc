// A source server that stops answering or ends the connection, through the
// widen binary on both engines: the server (PostgreSQL: the backend serving widen; MariaDB: the
// whole server) is frozen with SIGSTOP while a migrate reads from it. The
// run ends at the URL's read_timeout with exit 3 naming it, and a SIGINT
// ends it within a second with exit 130, as any interrupt.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kMapping[] = R"(source: {source}
target: leveldb:{dir}/store
tables:
  - name: t
    from: big
    families: [d]
    key:
      parts: [id]
    columns: [label]{where}
)";

// A widen process started in the background, its output in a file.
struct Widen {
  pid_t pid = -1;
  std::string out_path;

  static Widen Start(const std::string& dir, const std::string& args) {
    Widen w;
    w.out_path = dir + "/widen.out";
    const std::string cmd =
        fmt::format("exec {} {} > {} 2>&1", WidenBinary(), args, ShellQuote(w.out_path));
    w.pid = fork();
    if (w.pid == 0) {
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    return w;
  }

  // The exit code, or -1 when it still runs after `limit` (it is then killed).
  int Wait(std::chrono::milliseconds limit, std::chrono::milliseconds* took) {
    const auto start = Clock::now();
    for (;;) {
      int st = 0;
      if (waitpid(pid, &st, WNOHANG) == pid) {
        *took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
      if (Clock::now() - start > limit) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        *took = limit;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  std::string Output() const {
    std::ifstream in(out_path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

// Sends SIGSTOP to a process and SIGCONT when it goes out of scope.
class Frozen {
 public:
  explicit Frozen(pid_t pid) : pid_(pid) { EXPECT_EQ(kill(pid_, SIGSTOP), 0) << pid_; }
  ~Frozen() { kill(pid_, SIGCONT); }

 private:
  pid_t pid_;
};

// Polls `found` every 50 ms for up to 20 s; its last answer.
template <typename F>
auto PollFor(F found) {
  auto v = found();
  for (int i = 0; i < 400 && !v; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    v = found();
  }
  return v;
}

class SourceFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
  }
  // `where`: the driving table's filter (none when empty).
  std::string WriteMapping(const std::string& source, const std::string& where = "") {
    const std::string path = dir_ + "/m.yaml";
    std::ofstream(path) << fmt::format(
        kMapping, fmt::arg("source", source), fmt::arg("dir", dir_),
        fmt::arg("where", where.empty() ? "" : "\n    where: \"" + where + "\""));
    return path;
  }
  // A PostgreSQL database with a table `big` of 200000 rows; *name its name.
  std::string PgSource(const std::string& url, std::string* name) {
    const std::string db = FreshPgDatabase(url, "widen_it_frozen");
    PgQuery(db,
            "CREATE TABLE big (id int PRIMARY KEY, label text); INSERT INTO big SELECT g, "
            "repeat('x', 100) FROM generate_series(1, 200000) g");
    *name = PgQuery(db, "SELECT current_database()")[0][0];
    return db;
  }
  // The pid of the backend sending rows to a widen connection to database
  // `name` (a cursor's FETCH, or the COPY of a reader connection; `like`:
  // only a statement LIKE it) once one has read rows; 0 when none came.
  static pid_t WidenBackend(const std::string& url, const std::string& name,
                            const std::string& like = "") {
    const std::string which =
        like.empty() ? "(query LIKE 'FETCH%' OR query LIKE 'COPY%')" : "query LIKE '" + like + "'";
    return PollFor([&]() -> pid_t {
      auto rows = PgQuery(url, "SELECT pid FROM pg_stat_activity WHERE datname = '" + name +
                                   "' AND pid <> pg_backend_pid() AND " + which);
      return rows.empty() ? 0 : static_cast<pid_t>(std::stol(rows[0][0]));
    });
  }

  std::string MySqlSource(const std::string& url, std::string* name) {
    const std::string db = FreshMySqlDatabase(url, "widen_it_frozen");
    MySqlQuery(db, std::vector<std::string>{
                       "CREATE TABLE big (id int PRIMARY KEY, label text)",
                       "INSERT INTO big SELECT seq, REPEAT('x', 100) FROM seq_1_to_200000"});
    *name = MySqlQuery(db, "SELECT DATABASE()")[0][0];
    return db;
  }
  // The server's pid (from its pid file) once a widen connection to
  // database `name` is there; 0 otherwise.
  static pid_t MySqlServerOnceReading(const std::string& url, const std::string& name) {
    const bool reading = PollFor([&] {
      return !MySqlQuery(url, "SELECT 1 FROM information_schema.processlist WHERE db = '" + name +
                                  "' AND id <> CONNECTION_ID()")
                  .empty();
    });
    if (!reading) return 0;
    const std::string pid_file = MySqlQuery(url, "SELECT @@pid_file")[0][0];
    pid_t pid = 0;
    std::ifstream(pid_file) >> pid;
    return pid;
  }

  // pg_terminate_backend on widen's backend during a migrate: exit 3, and
  // the cause the server gives is in the message. Without `between_queries`
  // the backend streams the rows of a COPY, each after a short sleep (the
  // `where`), so that the server is never blocked sending (PostgreSQL then
  // ends a connection without its reason) and the reason comes as the
  // COPY's result. With `between_queries` the rows come through cursors
  // (--jobs 2: the jobs' ranges are bound values, which COPY does not take)
  // and widen is stopped while its backend ends and let go after, so the
  // server's reason comes as a notice, not as a query's result.
  void ExpectEndedByAdministratorNamed(const std::string& url, bool between_queries) {
    std::string name;
    const std::string db = PgSource(url, &name);
    const std::string m =
        // A sleep whose length depends on the row runs for every row (one
        // that does not is run once: PostgreSQL keeps a function scan's
        // result): the COPY lasts seconds (20 ms at every 1,000th of
        // 200,000 rows), so it is still sending when its backend is ended,
        // however fast widen reads.
        WriteMapping(db, between_queries ? ""
                                         : "(SELECT true FROM pg_sleep(CASE WHEN id % 1000 = 0 "
                                           "THEN 0.02 ELSE 0 END))");
    // --jobs 2 runs two jobs only where the run may use 4 cores (one job
    // per two): WIDEN_CORES says so whatever this machine has.
    if (between_queries) setenv("WIDEN_CORES", "4", 1);
    Widen w = Widen::Start(dir_, std::string("migrate -q --fetch-rows 50 ") +
                                     (between_queries ? "--jobs 2 " : "") + "-m " + m);
    unsetenv("WIDEN_CORES");
    const pid_t backend = WidenBackend(url, name, between_queries ? "FETCH%" : "COPY%");
    ASSERT_NE(backend, 0) << "widen never read";
    {
      std::optional<Frozen> stopped;
      if (between_queries) stopped.emplace(w.pid);
      PgQuery(url, fmt::format("SELECT pg_terminate_backend({})", backend));
      const bool gone = PollFor([&] {
        return PgQuery(url, fmt::format("SELECT 1 FROM pg_stat_activity WHERE pid = {}", backend))
            .empty();
      });
      ASSERT_TRUE(gone) << "the backend was not terminated";
    }
    std::chrono::milliseconds took{0};
    const int rc = w.Wait(std::chrono::seconds(15), &took);
    const std::string out = w.Output();
    EXPECT_EQ(rc, 3) << out;
    EXPECT_NE(out.find("the connection to the source was lost"), std::string::npos) << out;
    EXPECT_NE(out.find("terminating connection due to administrator command"), std::string::npos)
        << out;
    EXPECT_EQ(out.find("client encoding"), std::string::npos) << out;
  }

  std::string dir_;
};

TEST_F(SourceFaultsTest, PostgresFrozenBackendEndsAtReadTimeoutWithExit3) {
  WIDEN_REQUIRE_PG(url);
  std::string name;
  const std::string db = PgSource(url, &name);
  const std::string m = WriteMapping(db + "?read_timeout=2");
  Widen w = Widen::Start(dir_, "migrate -q --fetch-rows 50 -m " + m);
  const pid_t backend = WidenBackend(url, name);
  ASSERT_NE(backend, 0) << "widen never read";
  std::chrono::milliseconds took{0};
  int rc = 0;
  {
    Frozen frozen(backend);
    rc = w.Wait(std::chrono::seconds(15), &took);
  }
  const std::string out = w.Output();
  EXPECT_EQ(rc, 3) << out;
  EXPECT_NE(out.find("the source sent nothing for 2 s"), std::string::npos) << out;
  EXPECT_NE(out.find("read_timeout=2"), std::string::npos) << out;
  EXPECT_LT(took.count(), 8000);
}

TEST_F(SourceFaultsTest, PostgresInterruptWhileBackendFrozenEndsWithin1s) {
  WIDEN_REQUIRE_PG(url);
  std::string name;
  const std::string db = PgSource(url, &name);
  const std::string m = WriteMapping(db);  // the default read timeout: 1 h
  Widen w = Widen::Start(dir_, "migrate -q --fetch-rows 50 -m " + m);
  const pid_t backend = WidenBackend(url, name);
  ASSERT_NE(backend, 0) << "widen never read";
  std::chrono::milliseconds took{0};
  int rc = 0;
  {
    Frozen frozen(backend);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // widen now waits
    kill(w.pid, SIGINT);
    rc = w.Wait(std::chrono::seconds(15), &took);
  }
  const std::string out = w.Output();
  EXPECT_EQ(rc, 130) << out;
  EXPECT_NE(out.find("interrupted"), std::string::npos) << out;
  EXPECT_LT(took.count(), 1500) << out;
  CommandResult scan =
      RunCommand(WidenBinary() + " scan t --limit 1 --target leveldb:" + dir_ + "/store");
  EXPECT_NE(scan.output.find("warning: table 't' is incomplete"), std::string::npos) << scan.output;
}

// A listening socket on 127.0.0.1 that never accepts: a client's connect
// succeeds (the kernel completes it) and then nothing ever comes, as from a
// frozen server. Closed on destruction.
class SilentListener {
 public:
  SilentListener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t n = sizeof(a);
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n), 0);
    port_ = ntohs(a.sin_port);
  }
  ~SilentListener() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// SIGINT while widen is still connecting to a source that does not answer
// (no socket to cut yet; MySQL's connector also reads session variables
// inside its connect): exit 130 within a second, for both engines and each
// command that installs the handler, instead of the connect timeout (10 s)
// or the read timeout (1 h).
TEST_F(SourceFaultsTest, InterruptWhileConnectingEndsWithin1s) {
  SilentListener silent;
  for (const char* scheme : {"postgresql", "mysql"}) {
    for (const char* command : {"migrate", "sync"}) {
      SCOPED_TRACE(std::string(scheme) + " " + command);
      const std::string m =
          WriteMapping(fmt::format("{}://widen@127.0.0.1:{}/db", scheme, silent.port()));
      Widen w = Widen::Start(dir_, std::string(command) + " -q -m " + m);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));  // connecting now
      const auto sent = Clock::now();
      kill(w.pid, SIGINT);
      std::chrono::milliseconds took{0};
      const int rc = w.Wait(std::chrono::seconds(30), &took);
      const auto after = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - sent);
      const std::string out = w.Output();
      EXPECT_EQ(rc, 130) << out;
      EXPECT_NE(out.find("interrupted while connecting to the source"), std::string::npos) << out;
      EXPECT_LT(after.count(), 1000) << out;
    }
  }
}

TEST_F(SourceFaultsTest, PostgresConnectionEndedByAdministratorNamesTheCause) {
  WIDEN_REQUIRE_PG(url);
  ExpectEndedByAdministratorNamed(url, false);
}

TEST_F(SourceFaultsTest, PostgresConnectionEndedBetweenQueriesNamesTheCause) {
  WIDEN_REQUIRE_PG(url);
  ExpectEndedByAdministratorNamed(url, true);
}

TEST_F(SourceFaultsTest, MySqlFrozenServerEndsAtReadTimeoutWithExit3) {
  WIDEN_REQUIRE_MYSQL(url);
  std::string name;
  const std::string db = MySqlSource(url, &name);
  const std::string m = WriteMapping(db + "?read_timeout=2");
  Widen w = Widen::Start(dir_, "migrate -q --fetch-rows 50 -m " + m);
  const pid_t server = MySqlServerOnceReading(url, name);
  ASSERT_NE(server, 0) << "widen never read";
  std::chrono::milliseconds took{0};
  int rc = 0;
  {
    Frozen frozen(server);
    rc = w.Wait(std::chrono::seconds(10), &took);
  }
  const std::string out = w.Output();
  EXPECT_EQ(rc, 3) << out;
  EXPECT_NE(out.find("the source sent nothing for 2 s"), std::string::npos) << out;
  EXPECT_NE(out.find("read_timeout=2"), std::string::npos) << out;
  EXPECT_LT(took.count(), 8000);
}

TEST_F(SourceFaultsTest, MySqlInterruptWhileServerFrozenEndsWithin1s) {
  WIDEN_REQUIRE_MYSQL(url);
  std::string name;
  const std::string db = MySqlSource(url, &name);
  const std::string m = WriteMapping(db);
  Widen w = Widen::Start(dir_, "migrate -q --fetch-rows 50 -m " + m);
  const pid_t server = MySqlServerOnceReading(url, name);
  ASSERT_NE(server, 0) << "widen never read";
  std::chrono::milliseconds took{0};
  int rc = 0;
  {
    Frozen frozen(server);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    kill(w.pid, SIGINT);
    rc = w.Wait(std::chrono::seconds(10), &took);
  }
  const std::string out = w.Output();
  EXPECT_EQ(rc, 130) << out;
  EXPECT_NE(out.find("interrupted"), std::string::npos) << out;
  EXPECT_LT(took.count(), 1500) << out;
}

TEST_F(SourceFaultsTest, BadReadTimeoutIsRefused) {
  WIDEN_REQUIRE_PG(url);
  for (const std::string& source : {url + "?read_timeout=soon", MySqlUrl() + "?read_timeout=-1"}) {
    if (source.rfind("?", 0) == 0) continue;  // no MySQL server
    const std::string m = WriteMapping(source);
    CommandResult r = RunCommand(WidenBinary() + " migrate -q -m " + m);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("read_timeout must be a whole number of seconds"), std::string::npos)
        << r.output;
  }
}

}  // namespace
}  // namespace widen::testing
