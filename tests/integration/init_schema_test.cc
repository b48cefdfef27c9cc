// widen init on schemas built to be awkward, on both engines: passwords in
// every URL form stay out of the draft; names that clash, repeat or hold
// spaces, new lines or non-ASCII letters; foreign keys in a cycle;
// PostgreSQL partitions. Each draft that is written loads, lints without
// errors and migrates; each refusal names the option or table at fault.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "store/store.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

class InitSchemaTest : public ::testing::TestWithParam<std::string> {
 protected:
  bool pg() const { return GetParam() == "pg"; }

  void SetUp() override {
    url_ = pg() ? PgUrl() : MySqlUrl();
    if (url_.empty()) {
      if (InCi()) FAIL() << "the " << GetParam() << " test server is not set under CI";
      GTEST_SKIP() << "no test server (run through scripts/with-servers.sh)";
    }
    db_ = pg() ? FreshPgDatabase(url_, "widen_it_init_schema")
               : FreshMySqlDatabase(url_, "widen_it_init_schema");
    dir_ = MakeTempDir();
  }

  // Runs each statement on the test database.
  void Exec(const std::vector<std::string>& sql) {
    if (pg()) {
      for (const auto& q : sql) PgQuery(db_, q);
    } else {
      MySqlQuery(db_, sql);
    }
  }

  // The first cell of the first row of `sql`.
  std::string One(const std::string& sql) {
    const auto rows = pg() ? PgQuery(db_, sql) : MySqlQuery(db_, sql);
    return rows.empty() || rows.front().empty() ? "" : rows.front().front();
  }

  // widen init on the test database (or `url`), with `args`.
  CommandResult Init(const std::string& args, const std::string& url = "") {
    return RunCommand(WidenBinary() + " init --source " + ShellQuote(url.empty() ? db_ : url) +
                      " " + args + " 2>&1");
  }

  // The draft of `args` written to `name` in the test folder: init succeeds,
  // lint finds no error, migrate writes it without rejects. Returns its text.
  std::string DraftThatMigrates(const std::string& name, const std::string& args = "") {
    const std::string path = dir_ + "/" + name;
    const CommandResult r = Init(args + " -o " + path);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (r.exit_code != 0) return text;
    const std::string env = "WIDEN_SOURCE_URL=" + ShellQuote(db_) + " ";
    const CommandResult lint = RunCommand(env + WidenBinary() + " lint -m " + path + " 2>&1");
    EXPECT_EQ(lint.exit_code, 0) << lint.output << text;
    const CommandResult migrate =
        RunCommand(env + WidenBinary() + " migrate -q -m " + path + " --target leveldb:" + dir_ +
                   "/store_" + name + " 2>&1");
    EXPECT_EQ(migrate.exit_code, 0) << migrate.output << text;
    return text;
  }

  std::string url_, db_, dir_;
};

// A password in the URL, in every form the engine takes, never reaches the
// draft; the user and the rest of the URL do.
TEST_P(InitSchemaTest, PasswordInEveryUrlFormStaysOutOfTheDraft) {
  Exec({"CREATE TABLE item (id int PRIMARY KEY, label varchar(20) NOT NULL)",
        "INSERT INTO item VALUES (1, 'a')"});
  const std::string host_db = db_.substr(db_.find('@') + 1);  // HOST:PORT/DB
  const std::string scheme = db_.substr(0, db_.find("://") + 3);
  std::vector<std::string> urls;
  std::string user = "widen";
  if (pg()) {
    // The test server trusts loopback connections: any password connects.
    urls = {scheme + "widen:S3cr3tPW%21@" + host_db,
            scheme + "widen@" + host_db + "?password=S3cr3tPW%21",
            scheme + "widen@" + host_db + "?sslmode=disable&password=S3cr3tPW%21",
            scheme + host_db + "?user=widen&password=S3cr3tPW%21&sslmode=disable"};
  } else {
    // MySQL URLs take no parameters: a user with that password.
    const std::string name = host_db.substr(host_db.rfind('/') + 1);
    user = "widen_sec";
    Exec({"DROP USER IF EXISTS 'widen_sec'@'127.0.0.1'",
          "CREATE USER 'widen_sec'@'127.0.0.1' IDENTIFIED BY 'S3cr3tPW!'",
          fmt::format("GRANT SELECT ON `{}`.* TO 'widen_sec'@'127.0.0.1'", name)});
    urls = {scheme + "widen_sec:S3cr3tPW%21@" + host_db};
  }
  for (const std::string& url : urls) {
    const CommandResult r = Init("-q", url);
    ASSERT_EQ(r.exit_code, 0) << url << "\n" << r.output;
    EXPECT_EQ(r.output.find("S3cr3tPW"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("password"), std::string::npos) << r.output;
    const std::string source = "source: \"${WIDEN_SOURCE_URL:-" + scheme;
    EXPECT_NE(r.output.find(source), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(host_db.substr(0, host_db.find('/'))), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(user), std::string::npos) << r.output;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, InitSchemaTest, ::testing::Values("pg", "mysql"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace widen::testing
