#include "tests/integration/fault_env.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

namespace widen::testing {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> SplitOn(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p <= s.size()) {
    const size_t e = s.find(sep, p);
    const std::string part = s.substr(p, e == std::string::npos ? std::string::npos : e - p);
    if (!part.empty()) out.push_back(part);
    if (e == std::string::npos) break;
    p = e + 1;
  }
  return out;
}

// The pids whose parent is `parent` (from /proc/PID/stat).
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = ReadFile(e.path().string() + "/stat");
    // pid (comm) state ppid ...: comm may hold spaces; ppid follows the last ')'.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

template <typename F>
bool PollUntil(std::chrono::milliseconds limit, F done) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

}  // namespace

std::string EngineName(Engine e) { return e == Engine::kPostgres ? "Postgres" : "MySql"; }

std::string EngineUrl(Engine e) { return e == Engine::kPostgres ? PgUrl() : MySqlUrl(); }

void LoadPeople(Engine e, const std::string& url, int people) {
  const std::string n = std::to_string(people);
  if (e == Engine::kPostgres) {
    PgQuery(url,
            "CREATE TABLE person (id int PRIMARY KEY, name varchar(80) NOT NULL, city "
            "varchar(16));"
            "CREATE TABLE answer (person_id int NOT NULL, question int NOT NULL, answered_ms "
            "bigint NOT NULL, text varchar(200) NOT NULL, PRIMARY KEY (person_id, question, "
            "answered_ms));"
            "INSERT INTO person SELECT g, 'person ' || g || ' ' || md5(g::text), 'c' || (g % 37) "
            "FROM generate_series(1, " +
                n +
                ") g;"
                "INSERT INTO answer SELECT p, q, 1600000000000 + p * 1000 + q * 10 + v, "
                "repeat(chr(97 + (p + q + v) % 26), 20 + (p * q + v) % 60) FROM "
                "generate_series(1, " +
                n +
                ") p, generate_series(1, 4) q, generate_series(1, 3) v;"
                "ANALYZE person; ANALYZE answer");
    return;
  }
  MySqlQuery(url, std::vector<std::string>{
                      "CREATE TABLE person (id int PRIMARY KEY, name varchar(80) NOT NULL, city "
                      "varchar(16))",
                      "CREATE TABLE answer (person_id int NOT NULL, question int NOT NULL, "
                      "answered_ms bigint NOT NULL, text varchar(200) NOT NULL, PRIMARY KEY "
                      "(person_id, question, answered_ms))",
                      "INSERT INTO person SELECT seq, CONCAT('person ', seq, ' ', MD5(seq)), "
                      "CONCAT('c', seq % 37) FROM seq_1_to_" +
                          n,
                      "INSERT INTO answer SELECT p.seq, q.seq, 1600000000000 + p.seq * 1000 + "
                      "q.seq * 10 + v.seq, REPEAT(CHAR(97 + (p.seq + q.seq + v.seq) % 26), 20 + "
                      "(p.seq * q.seq + v.seq) % 60) FROM seq_1_to_" +
                          n + " p, seq_1_to_4 q, seq_1_to_3 v",
                      "ANALYZE TABLE person, answer"});
}

std::vector<std::vector<std::string>> Query(Engine e, const std::string& url,
                                            const std::string& sql) {
  return e == Engine::kPostgres ? PgQuery(url, sql) : MySqlQuery(url, sql);
}

std::string PeopleMapping(const std::string& source_url, const std::string& store) {
  return fmt::format(R"(source: {}
target: leveldb:{}
timestamp_ms: 1700000000000
tables:
  - name: f:people
    from: person
    families:
      - d
      - {{name: a, versions: 3}}
    key:
      parts: [{{column: id, width: 7}}]
    columns:
      - {{column: name, to: "d:name"}}
      - {{column: city, to: "d:city"}}
    nest:
      - table: answer
        on: {{id: person_id}}
        family: a
        id: [{{column: question, width: 2}}]
        version: answered_ms
        columns: [text]
  - name: f:by_city
    from: person
    families: [d]
    key:
      separator: "|"
      parts: [{{column: city, on_null: reject}}, {{column: id, width: 7}}]
    columns:
      - {{column: name, to: "d:name"}}
)",
                     source_url, store);
}

WidenProcess WidenProcess::Start(const std::string& args, const std::string& out_path,
                                 const std::map<std::string, std::string>& env) {
  WidenProcess w;
  w.out_path = out_path;
  const std::string bin = WidenBinary();
  std::vector<std::string> argv = {bin};
  for (const std::string& a : SplitOn(args, ' ')) argv.push_back(a);
  w.pid = fork();
  if (w.pid == 0) {
    const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> ptrs;
    for (std::string& a : argv) ptrs.push_back(a.data());
    ptrs.push_back(nullptr);
    execv(bin.c_str(), ptrs.data());
    _exit(127);
  }
  return w;
}

bool WidenProcess::Running() {
  if (pid <= 0) return false;
  int st = 0;
  const pid_t r = waitpid(pid, &st, WNOHANG);
  if (r == 0) return true;
  // Reaped (or gone): remember the status for Wait.
  if (r == pid) {
    exited_status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    pid = -1;
  }
  return false;
}

int WidenProcess::Wait(std::chrono::milliseconds limit, std::chrono::milliseconds* took) {
  const auto start = Clock::now();
  auto set_took = [&] {
    if (took != nullptr) {
      *took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    }
  };
  for (;;) {
    if (!Running()) {
      set_took();
      return exited_status_;
    }
    if (Clock::now() - start > limit) {
      kill(pid, SIGKILL);
      int st = 0;
      waitpid(pid, &st, 0);
      pid = -1;
      set_took();
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string WidenProcess::Output() const { return ReadFile(out_path); }

CommandResult ScanAll(const std::string& store, const std::string& table) {
  return RunCommand(WidenBinary() + " scan " + table +
                    " --versions 10 --target leveldb:" + ShellQuote(store));
}

long RowsOf(const std::string& out) {
  const size_t at = out.rfind(" row(s)");
  if (at == std::string::npos) return -1;
  size_t begin = at;
  while (begin > 0 && out[begin - 1] >= '0' && out[begin - 1] <= '9') --begin;
  if (begin == at || (begin > 0 && out[begin - 1] != '\n')) return -1;
  return std::stol(out.substr(begin, at - begin));
}

std::string EnterPrivateMountNamespace() {
  static const std::string why = []() -> std::string {
    if (geteuid() == 0) {
      if (unshare(CLONE_NEWNS) != 0) return std::string("unshare(CLONE_NEWNS): ") + strerror(errno);
    } else {
      // A user namespace where this user is root gives a mount namespace.
      const uid_t uid = geteuid();
      const gid_t gid = getegid();
      if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
        return std::string("unshare(CLONE_NEWUSER | CLONE_NEWNS): ") + strerror(errno);
      }
      std::ofstream("/proc/self/setgroups") << "deny";
      std::ofstream("/proc/self/uid_map") << "0 " << uid << " 1";
      std::ofstream("/proc/self/gid_map") << "0 " << gid << " 1";
    }
    // Nothing mounted from here on reaches the other namespaces.
    if (mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      return std::string("making / private: ") + strerror(errno);
    }
    return "";
  }();
  return why;
}

SmallDisk::SmallDisk(const std::string& dir, uint64_t size_bytes) : dir_(dir) {
  fs::create_directories(dir_);
  const std::string options = "size=" + std::to_string(size_bytes) + ",mode=0755";
  mounted_ = mount("tmpfs", dir_.c_str(), "tmpfs", 0, options.c_str()) == 0;
  EXPECT_TRUE(mounted_) << "mounting a tmpfs at " << dir_ << ": " << strerror(errno);
}

SmallDisk::~SmallDisk() {
  if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
}

void SmallDisk::Fill(uint64_t free_bytes) {
  const std::string filler = dir_ + "/filler";
  const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  ASSERT_GE(fd, 0) << strerror(errno);
  const std::string block(1 << 16, 'f');
  for (;;) {
    const ssize_t n = ::write(fd, block.data(), block.size());
    if (n <= 0) break;
  }
  // The disk is full: give back `free_bytes` (tmpfs counts whole pages).
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  const off_t keep =
      st.st_size > static_cast<off_t>(free_bytes) ? st.st_size - static_cast<off_t>(free_bytes) : 0;
  ASSERT_EQ(ftruncate(fd, keep), 0) << strerror(errno);
  ::close(fd);
}

void SmallDisk::Free() { ::unlink((dir_ + "/filler").c_str()); }

uint64_t SmallDisk::FreeBytes() const {
  struct statvfs v;
  if (statvfs(dir_.c_str(), &v) != 0) return 0;
  return static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
}

PrivateServer::PrivateServer(Engine e) : engine_(e), dir_(MakeTempDir()) {
  const std::string env_file = dir_ + "/env";
  const std::string hold = dir_ + "/hold";
  std::ofstream(hold) << "";
  // The command holds the servers until the hold file goes (or this
  // process ends), having written their variables to the env file.
  const std::string script = fmt::format(
      "env | grep '^WIDEN_TEST_' > {0}.tmp && mv {0}.tmp {0}; "
      "while [ -e {1} ] && kill -0 {2} 2>/dev/null; do sleep 0.2; done",
      ShellQuote(env_file), ShellQuote(hold), getpid());
  const std::string with_servers = SourceDir() + "/scripts/with-servers.sh";
  const std::string log = dir_ + "/servers.log";
  wrapper_ = fork();
  if (wrapper_ == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    for (const char* v :
         {"WIDEN_TEST_PG_URL", "WIDEN_TEST_PG_HOST", "WIDEN_TEST_PG_PORT", "WIDEN_TEST_PG_USER",
          "WIDEN_TEST_MYSQL_URL", "WIDEN_TEST_MYSQL_HOST", "WIDEN_TEST_MYSQL_PORT",
          "WIDEN_TEST_MYSQL_USER", "WIDEN_TEST_MYSQL_SOCKET", "WIDEN_TEST_HBASE_URL"}) {
      unsetenv(v);
    }
    execl("/bin/bash", "bash", with_servers.c_str(), e == Engine::kPostgres ? "--pg" : "--mysql",
          "--", "bash", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const bool ready = PollUntil(std::chrono::seconds(120), [&] {
    int st = 0;
    if (waitpid(wrapper_, &st, WNOHANG) == wrapper_) {
      wrapper_ = -1;  // it ended: the server did not start
      return true;
    }
    return fs::exists(env_file);
  });
  if (!ready || wrapper_ < 0) return;
  for (const std::string& line : SplitOn(ReadFile(env_file), '\n')) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) env_[line.substr(0, eq)] = line.substr(eq + 1);
  }
  url_ = env_[e == Engine::kPostgres ? "WIDEN_TEST_PG_URL" : "WIDEN_TEST_MYSQL_URL"];
  if (url_.empty()) return;
  if (e == Engine::kPostgres) {
    data_dir_ = PgQuery(url_, "SHOW data_directory")[0][0];
    const pid_t pm = static_cast<pid_t>(std::stol(ReadFile(data_dir_ + "/postmaster.pid")));
    exe_ = fs::read_symlink("/proc/" + std::to_string(pm) + "/exe").string();
  } else {
    const std::string pid_file = MySqlQuery(url_, "SELECT @@pid_file")[0][0];
    const pid_t pid = static_cast<pid_t>(std::stol(ReadFile(pid_file)));
    argv_ = SplitOn(ReadFile("/proc/" + std::to_string(pid) + "/cmdline"), '\0');
  }
}

PrivateServer::~PrivateServer() {
  if (restarted_ > 0) {
    kill(restarted_, SIGTERM);
    int st = 0;
    const bool gone = PollUntil(std::chrono::seconds(30),
                                [&] { return waitpid(restarted_, &st, WNOHANG) == restarted_; });
    if (!gone) {
      kill(restarted_, SIGKILL);
      waitpid(restarted_, &st, 0);
    }
  }
  ::unlink((dir_ + "/hold").c_str());
  if (wrapper_ > 0) {
    int st = 0;
    const bool gone = PollUntil(std::chrono::seconds(60),
                                [&] { return waitpid(wrapper_, &st, WNOHANG) == wrapper_; });
    if (!gone) {
      kill(wrapper_, SIGTERM);
      waitpid(wrapper_, &st, 0);
    }
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string PrivateServer::Log() const { return ReadFile(dir_ + "/servers.log"); }

int PrivateServer::KillHard() {
  if (engine_ == Engine::kMySql) {
    const pid_t pid =
        restarted_ > 0
            ? restarted_
            : static_cast<pid_t>(std::stol(ReadFile(MySqlQuery(url_, "SELECT @@pid_file")[0][0])));
    return kill(pid, SIGKILL) == 0 ? 1 : 0;
  }
  // Freeze the postmaster first, so that it neither notices its children
  // dying nor starts new ones; then kill them all.
  const pid_t pm = static_cast<pid_t>(std::stol(ReadFile(data_dir_ + "/postmaster.pid")));
  if (kill(pm, SIGSTOP) != 0) return 0;
  int killed = 0;
  for (pid_t child : ChildrenOf(pm)) killed += kill(child, SIGKILL) == 0 ? 1 : 0;
  killed += kill(pm, SIGKILL) == 0 ? 1 : 0;
  // The postmaster is not our child: wait until it is gone.
  PollUntil(std::chrono::seconds(10), [&] { return kill(pm, 0) != 0; });
  return killed;
}

bool PrivateServer::Restart() {
  if (engine_ == Engine::kPostgres) {
    const std::string pg_ctl = (fs::path(exe_).parent_path() / "pg_ctl").string();
    const std::string parent = fs::path(data_dir_).parent_path().string();
    const std::string as_user = geteuid() == 0 ? "runuser -u postgres -- " : "";
    CommandResult r = RunCommand("cd " + ShellQuote(parent) + " && " + as_user +
                                 ShellQuote(pg_ctl) + " -D " + ShellQuote(data_dir_) + " -l " +
                                 ShellQuote(parent + "/server.log") + " -w -t 60 start </dev/null");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.exit_code == 0;
  }
  if (argv_.empty()) return false;
  const std::string log = dir_ + "/mysqld-restart.log";
  restarted_ = fork();
  if (restarted_ == 0) {
    setsid();
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, 0);
    std::vector<char*> ptrs;
    for (std::string& a : argv_) ptrs.push_back(a.data());
    ptrs.push_back(nullptr);
    execv(ptrs[0], ptrs.data());
    _exit(127);
  }
  const std::string socket = env_["WIDEN_TEST_MYSQL_SOCKET"];
  return PollUntil(std::chrono::seconds(60), [&] {
    return RunCommand("mariadb-admin --no-defaults --socket=" + ShellQuote(socket) +
                      " -u root --connect-timeout=2 ping >/dev/null")
               .exit_code == 0;
  });
}

void PeopleTest::TearDown() {
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

}  // namespace widen::testing
