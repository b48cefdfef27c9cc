// Passwords given in URL arguments are gone from the process's arguments
// (what `ps` shows, read from /proc/PID/cmdline) while the run still goes:
// each widen command is started against a source table another session
// holds locked, so the run waits on the server, deterministically, until the
// test lets it go.
#include <gtest/gtest.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pqxx/pqxx>

#include <fcntl.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cmd/hidden_args.h"
#ifdef WIDEN_WITH_MYSQL
#include "extract/mysql_text_internal.h"
#endif
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

constexpr char kSecret[] = "s3cr3tPW";

// `url` with USER replaced by USER:PASSWORD.
std::string WithPassword(const std::string& url, const std::string& password) {
  const size_t scheme = url.find("://");
  const size_t at = url.find('@', scheme + 3);
  return url.substr(0, at) + ":" + password + url.substr(at);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Starts `args` with stdout and stderr into `log`; returns the child's pid.
pid_t Spawn(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// The child's exit code, waiting up to `seconds`; -1 if it had not ended
// (it is then killed).
int WaitExit(pid_t pid, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    int st = 0;
    const pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -2;
    if (r < 0) return -3;  // already reaped
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

bool Running(pid_t pid) {
  int st = 0;
  return waitpid(pid, &st, WNOHANG) == 0;
}

class HiddenArgsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

// A mapping of table `item`; its source and target come from the command line.
constexpr char kMapping[] = R"(source: postgresql://nobody@127.0.0.1:1/none
target: leveldb:{dir}/unused
tables:
  - name: t
    from: item
    families: [d]
    key:
      parts: [id]
    columns: [label]
)";

struct Case {
  const char* command;
  const char* form;  // how the password is given
  int expected_exit;
};

TEST_F(HiddenArgsTest, PasswordLeavesTheArgumentsWhileTheRunWaitsOnTheServer) {
  WIDEN_REQUIRE_PG(server);
  const std::string db = FreshPgDatabase(server, "widen_it_hidden");
  PgQuery(db, "CREATE TABLE item (id int PRIMARY KEY, label text)");
  PgQuery(db, "INSERT INTO item SELECT g, 'x' || g FROM generate_series(1, 50) g");
  const std::string mapping = Write("m.yaml", fmt::format(kMapping, fmt::arg("dir", dir_)));
  // verify compares with a store migrate wrote before, without the lock.
  const std::string verified = "leveldb:" + dir_ + "/verified";
  CommandResult first = RunCommand(WidenBinary() + " migrate -q -m " + ShellQuote(mapping) +
                                   " --source " + ShellQuote(db) + " --target " + verified);
  ASSERT_EQ(first.exit_code, 0) << first.output;

  const Case cases[] = {
      {"migrate", "user", 0}, {"migrate", "query", 0}, {"migrate", "user=", 0},
      {"sync", "user", 0},    {"verify", "query", 0},  {"plan", "user", 0},
  };
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{} with the password as {}", c.command, c.form));
    const std::string form = c.form;
    const std::string source =
        form == "query" ? db + "?password=" + kSecret : WithPassword(db, kSecret);
    const std::string target = std::string(c.command) == "verify"
                                   ? verified
                                   : fmt::format("leveldb:{}/store{}", dir_, n++);
    std::vector<std::string> args{WidenBinary(), c.command, "-m", mapping};
    if (form == "user=") {
      args.push_back("--source=" + source);
    } else {
      args.insert(args.end(), {"--source", source});
    }
    if (std::string(c.command) != "plan") args.insert(args.end(), {"--target", target});

    pqxx::connection locker(db);
    pqxx::work lock(locker);
    lock.exec("LOCK TABLE item IN ACCESS EXCLUSIVE MODE");
    const std::string log = dir_ + "/log" + std::to_string(n);
    const pid_t pid = Spawn(args, log);
    ASSERT_GT(pid, 0);
    // Wait until widen's session waits for the lock: the run is under way.
    bool waiting = false;
    for (int i = 0; i < 600 && !waiting && Running(pid); ++i) {
      waiting = PgQuery(db,
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND wait_event_type = 'Lock'")[0][0] != "0";
      if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const std::string cmdline = ReadFile(fmt::format("/proc/{}/cmdline", pid));
    const bool still_running = Running(pid);
    lock.abort();
    const int exit_code = WaitExit(pid, 60);
    ASSERT_TRUE(waiting) << "widen never waited on the lock: " << ReadFile(log);
    ASSERT_TRUE(still_running);
    EXPECT_EQ(cmdline.find(kSecret), std::string::npos) << cmdline;
    // The rest of the argument is still there, the password shown as ***.
    const std::string shown = form == "query" ? "?password=***" : ":***@";
    EXPECT_NE(cmdline.find(shown), std::string::npos) << cmdline;
    EXPECT_NE(cmdline.find(c.command), std::string::npos) << cmdline;
    EXPECT_EQ(exit_code, c.expected_exit) << ReadFile(log);
    EXPECT_EQ(ReadFile(log).find(kSecret), std::string::npos) << ReadFile(log);
  }
  // The runs read the source with the parsed (unmasked) URL: the rows are there.
  const auto rows = PgQuery(db, "SELECT count(*) FROM item");
  EXPECT_EQ(std::to_string(ReadTable("leveldb:" + dir_ + "/store0", "t").size()), rows[0][0]);
}

#ifdef WIDEN_WITH_MYSQL
// MySQL checks the password (the PostgreSQL harness trusts local users): a
// run given the password in its URL waits on a table a client holds locked
// with the password gone from its arguments, then gets in and copies the
// rows — the password reached the server intact.
TEST_F(HiddenArgsTest, MySqlPasswordLeavesTheArgumentsAndStillAuthenticates) {
  WIDEN_REQUIRE_MYSQL(server);
  const std::string db = FreshMySqlDatabase(server, "widen_it_hidden");
  const std::string dbname = db.substr(db.rfind('/') + 1);
  MySqlQuery(
      db,
      std::vector<std::string>{
          "CREATE TABLE item (id int PRIMARY KEY, label text)",
          "INSERT INTO item VALUES (1, 'a'), (2, 'b'), (3, 'c')",
          "DROP USER IF EXISTS 'widen_hidden'@'127.0.0.1'",
          fmt::format("CREATE USER 'widen_hidden'@'127.0.0.1' IDENTIFIED BY '{}'", kSecret),
          fmt::format("GRANT SELECT ON `{}`.* TO 'widen_hidden'@'127.0.0.1'", dbname), "SELECT 1"});
  const size_t scheme = db.find("://"), at = db.find('@');
  const std::string url = db.substr(0, scheme + 3) + "widen_hidden:" + kSecret + db.substr(at);
  const std::string mapping = Write("m.yaml", fmt::format(kMapping, fmt::arg("dir", dir_)));
  const std::string target = "leveldb:" + dir_ + "/store";

  // A client holds the table locked until its input closes.
  auto u = mysql_internal::ParseMySqlUrl(db);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  std::string client;
  for (const char* c : {"/usr/bin/mariadb", "/usr/bin/mysql"}) {
    if (client.empty() && access(c, X_OK) == 0) client = c;
  }
  ASSERT_FALSE(client.empty()) << "no mariadb client";
  FILE* locker = popen(
      (client + " --no-defaults -h " + ShellQuote(u->host) + " -P " + std::to_string(u->port) +
       " -u " + ShellQuote(u->user) + " " + ShellQuote(dbname) + " >/dev/null")
          .c_str(),
      "we");  // close-on-exec: widen must not hold the client's input open
  ASSERT_NE(locker, nullptr);
  std::fputs("LOCK TABLES item WRITE;\n", locker);
  std::fflush(locker);
  bool locked = false;
  for (int i = 0; i < 600 && !locked; ++i) {
    const auto in_use = MySqlQuery(db, "SHOW OPEN TABLES FROM `" + dbname + "` LIKE 'item'");
    locked = !in_use.empty() && in_use[0][2] != "0";
    if (!locked) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(locked);

  const std::string log = dir_ + "/log";
  const pid_t pid = Spawn(
      {WidenBinary(), "migrate", "-q", "-m", mapping, "--source", url, "--target", target}, log);
  ASSERT_GT(pid, 0);
  bool waiting = false;
  for (int i = 0; i < 600 && !waiting && Running(pid); ++i) {
    waiting =
        MySqlQuery(server,
                   "SELECT count(*) FROM information_schema.PROCESSLIST WHERE USER = "
                   "'widen_hidden' AND STATE = 'Waiting for table metadata lock'")[0][0] != "0";
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string cmdline = ReadFile(fmt::format("/proc/{}/cmdline", pid));
  const bool still_running = Running(pid);
  pclose(locker);
  const int exit_code = WaitExit(pid, 60);
  ASSERT_TRUE(waiting) << "widen never waited on the lock: " << ReadFile(log);
  ASSERT_TRUE(still_running);
  EXPECT_EQ(cmdline.find(kSecret), std::string::npos) << cmdline;
  EXPECT_NE(cmdline.find("widen_hidden:***@"), std::string::npos) << cmdline;
  EXPECT_EQ(exit_code, 0) << ReadFile(log);
  const auto rows = MySqlQuery(db, "SELECT count(*) FROM item");
  EXPECT_EQ(std::to_string(ReadTable(target, "t").size()), rows[0][0]);

  // A wrong password is refused (exit 4): the server does check it.
  const std::string wrong = db.substr(0, scheme + 3) + "widen_hidden:wrong" + db.substr(at);
  CommandResult r =
      RunCommand(WidenBinary() + " migrate -q -m " + ShellQuote(mapping) + " --source " +
                 ShellQuote(wrong) + " --target leveldb:" + dir_ + "/other");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  MySqlQuery(server, std::vector<std::string>{"DROP USER 'widen_hidden'@'127.0.0.1'", "SELECT 1"});
}
#endif  // WIDEN_WITH_MYSQL

// The argument memory as the kernel lays it out (one block, NUL-separated):
// no byte of a password is left in it, and the copies keep them.
TEST(HidePasswordsInArgsTest, OverwritesEveryPasswordInPlaceAndKeepsTheCopies) {
  const std::vector<std::string> given{
      "widen",
      "migrate",
      "--source",
      "postgresql://u:s3cr3tPW@h:5432/db",
      "--target=postgresql://u@h/db?sslmode=disable&password=an0ther&x=1",
      "--source=mysql://u:p@ss:w@rd@h/db",
      "-m",
      "m.yaml",
      "--prefix",
      "postgresql://u:ab@h/db"};
  std::string block;
  std::vector<size_t> starts;
  for (const auto& a : given) {
    starts.push_back(block.size());
    block += a;
    block.push_back('\0');
  }
  std::vector<char*> argv;
  for (size_t s : starts) argv.push_back(block.data() + s);
  const std::string before = block;

  const std::vector<std::string> copy =
      HidePasswordsInArgs(static_cast<int>(argv.size()), argv.data());
  EXPECT_EQ(copy, given);
  EXPECT_EQ(block.size(), before.size());
  for (const char* secret : {"s3cr3tPW", "an0ther", "p@ss:w@rd"}) {
    EXPECT_EQ(block.find(secret), std::string::npos) << secret;
  }
  EXPECT_STREQ(argv[3], "postgresql://u:***@h:5432/db");
  EXPECT_STREQ(argv[4], "--target=postgresql://u@h/db?sslmode=disable&password=***&x=1");
  EXPECT_STREQ(argv[5], "--source=mysql://u:***@h/db");
  EXPECT_STREQ(argv[7], "m.yaml");
  // A password shorter than the mask is not lengthened.
  EXPECT_STREQ(argv[9], "postgresql://u:**@h/db");
  // Arguments without a password are left byte for byte.
  for (size_t i : {0, 1, 2, 6, 7, 8}) EXPECT_STREQ(argv[i], given[i].c_str());
  // The bytes freed by a shorter argument are NUL, and the next argument
  // starts where it did.
  EXPECT_EQ(std::string(argv[4] + std::strlen(argv[4]), argv[5] - argv[4] - std::strlen(argv[4])),
            std::string(argv[5] - argv[4] - std::strlen(argv[4]), '\0'));
}

TEST(HidePasswordsInArgsTest, MasksArgumentsEchoedInMessages) {
  const std::vector<std::string> args{"widen", "--source=postgresql://u:s3cr3tPW@h/db"};
  EXPECT_EQ(MaskArgsIn("unexpected: --source=postgresql://u:s3cr3tPW@h/db", args),
            "unexpected: --source=postgresql://u:***@h/db");
}

}  // namespace
}  // namespace widen::testing
