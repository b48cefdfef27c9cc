// widen init on Chinook and on every example's schema, on both engines, as
// a user runs it: the draft it writes loads, `widen lint` finds no error,
// `widen plan --full` finds no collision and proves every access pattern
// it declares, `widen migrate` writes it with no reject and no replaced
// cell, and each target table holds one row per source row of its driving
// table (SQL counts), which every Get pattern finds by its key. On Chinook
// the nesting is checked cell by cell against SQL. A naming policy is
// followed by the draft and enforced by lint (E123 at file:line:col);
// --tables and --root shape the draft.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmd/run.h"
#include "store/store.h"
#include "tests/integration/test_env.h"
#include "transform/access_plan.h"

namespace widen::testing {
namespace {

struct Case {
  std::string engine;   // "pg" or "mysql"
  std::string dataset;  // "chinook" or an example's folder
};

// The namespace of the design's tables (the draft's: the database's name).
std::string Namespace(const Design& d) { return d.tables.front()->descriptor.name_space; }

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return info.param.engine + "_" + info.param.dataset;
}

class InitTest : public ::testing::TestWithParam<Case> {
 protected:
  bool pg() const { return GetParam().engine == "pg"; }

  void SetUp() override {
    url_ = pg() ? PgUrl() : MySqlUrl();
    if (url_.empty()) {
      if (InCi()) FAIL() << "the " << GetParam().engine << " test server is not set under CI";
      GTEST_SKIP() << "no test server (run through scripts/with-servers.sh)";
    }
    const std::string name = "widen_it_init_" + GetParam().dataset;
    db_ = pg() ? FreshPgDatabase(url_, name) : FreshMySqlDatabase(url_, name);
    if (GetParam().dataset == "chinook") {
      if (pg()) {
        RunPsqlScript(db_, DatasetsDir() + "/chinook/postgresql/Chinook_PostgreSql.sql");
      } else {
        RunMySqlFile(db_, DatasetsDir() + "/chinook/mysql/Chinook_MySql.sql", true);
      }
    } else {
      const std::string ex = SourceDir() + "/examples/" + GetParam().dataset + "/";
      if (pg()) {
        RunPsqlFile(db_, ex + "schema.pg.sql");
        RunPsqlFile(db_, ex + "data.pg.sql");
      } else {
        RunMySqlFile(db_, ex + "schema.mysql.sql");
        RunMySqlFile(db_, ex + "data.mysql.sql");
      }
    }
    // The row counts in the draft's comments come from the statistics.
    if (pg()) {
      PgQuery(db_, "ANALYZE");
    } else {
      for (const auto& t : MySqlQuery(db_, "SHOW TABLES")) {
        MySqlQuery(db_, "ANALYZE TABLE `" + t.front() + "`");
      }
    }
    dir_ = MakeTempDir();
  }

  std::vector<std::vector<std::string>> Sql(const std::string& q) {
    return pg() ? PgQuery(db_, q) : MySqlQuery(db_, q);
  }
  std::string Quote(const std::string& name) const {
    return pg() ? "\"" + name + "\"" : "`" + name + "`";
  }

  std::string url_, db_, dir_;
};

TEST_P(InitTest, DraftLintsPlansMigratesAndServesItsAccessPatterns) {
  const std::string draft = dir_ + "/draft.yaml";
  const CommandResult init =
      RunCommand(WidenBinary() + " init --source " + ShellQuote(db_) + " -o " + draft);
  ASSERT_EQ(init.exit_code, 0) << init.output;
  EXPECT_NE(init.output.find("lint: 0 errors"), std::string::npos) << init.output;
  std::ifstream in(draft);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The password-free source of the draft, and comments that explain it.
  EXPECT_NE(text.find("source: \"${WIDEN_SOURCE_URL:-"), std::string::npos);
  EXPECT_NE(text.find("# key: "), std::string::npos);
  EXPECT_NE(text.find("access:"), std::string::npos);

  // The mapping's JSON Schema takes it too, read as PyYAML reads YAML
  // (1.1: a bare `on` would be true); its first line names the schema.
  const CommandResult schema = RunCommand(std::string(WIDEN_SYSTEM_PYTHON3) + " " + SourceDir() +
                                          "/tests/mapping/mapping_schema_check.py " + SourceDir() +
                                          "/docs/mapping.schema.json --yaml11 " + draft);
  EXPECT_EQ(schema.exit_code, 0) << schema.output;
  EXPECT_EQ(
      text.rfind(
          "# yaml-language-server: $schema=" +
              std::filesystem::canonical(SourceDir() + "/docs/mapping.schema.json").string() + "\n",
          0),
      0u)
      << text.substr(0, 200);

  const std::string env = "WIDEN_SOURCE_URL=" + ShellQuote(db_) + " ";
  const CommandResult lint = RunCommand(env + WidenBinary() + " lint -m " + draft);
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
  EXPECT_NE(lint.output.find("\n0 error(s)"), std::string::npos) << lint.output;

  const CommandResult plan =
      RunCommand(env + WidenBinary() + " plan --full --limit 1 --format json -m " + draft);
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  const auto json = nlohmann::json::parse(plan.output.substr(plan.output.find('{')));
  EXPECT_EQ(json["errors"], 0);
  size_t patterns = 0;
  for (const auto& t : json["tables"]) {
    EXPECT_EQ(t["collisions"]["count"], 0) << t["name"];
    EXPECT_EQ(t["rejects"]["count"], 0) << t["name"];
    EXPECT_GE(t["access"].size(), 1u) << t["name"];
    for (const auto& a : t["access"]) {
      EXPECT_NE(a["served"], "not_served") << a.dump();
      ++patterns;
    }
  }
  EXPECT_GE(patterns, json["tables"].size());

  const std::string store = "leveldb:" + dir_ + "/store";
  const CommandResult migrate =
      RunCommand(env + WidenBinary() + " migrate -m " + draft + " --target " + store);
  ASSERT_EQ(migrate.exit_code, 0) << migrate.output;

  // One row per source row of each driving table; every Get finds its row.
  setenv("WIDEN_SOURCE_URL", db_.c_str(), 1);
  DesignRequest r;
  r.mapping_path = draft;
  auto design = LoadDesign(r);
  ASSERT_TRUE(design.ok()) << design.status().ToString();
  const Design& d = **design;
  StoreOptions so;
  so.create_if_missing = false;
  auto target = Store::Open(store, so);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  std::map<const TablePlan*, std::set<std::string>> rows;
  for (const TablePlan* tp : d.tables) {
    auto reader = (*target)->NewReader(tp->descriptor.FullName(), ReadOptions());
    ASSERT_TRUE(reader.ok());
    for (; (*reader)->Valid(); (*reader)->Next()) rows[tp].emplace((*reader)->cell().row);
    const auto count = Sql("SELECT count(*) FROM " + Quote(tp->scan.table));
    EXPECT_EQ(std::to_string(rows[tp].size()), count.front().front()) << tp->scan.table;
  }
  size_t gets = 0;
  for (const AccessProof& proof : ProveAccessPatterns(d.tables, d.schema)) {
    ASSERT_NE(proof.kind, AccessKind::kNotServed) << proof.pattern->name << ": " << proof.problem;
    if (proof.kind != AccessKind::kGet) continue;
    auto stream = d.source->Scan(proof.served_by->scan);
    ASSERT_TRUE(stream.ok());
    for (; (*stream)->Valid(); (*stream)->Next()) {
      std::vector<std::string> prefixes;
      ASSERT_TRUE(AccessPrefixes(proof, (*stream)->row(), &prefixes).ok());
      ASSERT_EQ(prefixes.size(), 1u);
      EXPECT_EQ(rows[proof.served_by].count(prefixes.front()), 1u) << proof.pattern->name;
      ++gets;
    }
  }
  EXPECT_GT(gets, 0u);

  if (GetParam().dataset != "chinook") return;
  // Chinook: customers hold their invoices (family i, qualifier i<id>) and
  // each invoice's lines under it (i<id>l<id>), as SQL counts them.
  const std::string invoice = pg() ? "invoice" : "Invoice";
  const std::string line = pg() ? "invoice_line" : "InvoiceLine";
  const std::string customer = pg() ? "customer" : "Customer";
  std::map<std::string, std::pair<int, int>> per_customer;  // row key -> invoices, lines
  auto reader = (*target)->NewReader(Namespace(d) + ":" + customer, ReadOptions());
  ASSERT_TRUE(reader.ok());
  const std::regex invoice_cell("i[0-9]+"), line_cell("i[0-9]+l[0-9]+");
  for (; (*reader)->Valid(); (*reader)->Next()) {
    const CellView c = (*reader)->cell();
    if (c.family != "i") continue;
    const std::string q(c.qualifier);
    auto& counts = per_customer[std::string(c.row)];
    if (std::regex_match(q, invoice_cell)) ++counts.first;
    if (std::regex_match(q, line_cell)) ++counts.second;
  }
  const auto sql = Sql(fmt::format(
      "SELECT c.{0}, (SELECT count(*) FROM {1} i WHERE i.{0} = c.{0}), (SELECT count(*) FROM {1} "
      "i JOIN {2} l ON l.{3} = i.{3} WHERE i.{0} = c.{0}) FROM {4} c ORDER BY c.{0}",
      pg() ? "customer_id" : "CustomerId", Quote(invoice), Quote(line),
      pg() ? "invoice_id" : "InvoiceId", Quote(customer)));
  ASSERT_EQ(sql.size(), 59u);
  for (const auto& s : sql) {
    const std::string key = fmt::format("{:010d}", std::stoi(s[0]));
    EXPECT_EQ(per_customer[key].first, std::stoi(s[1])) << key;
    EXPECT_EQ(per_customer[key].second, std::stoi(s[2])) << key;
  }
}

INSTANTIATE_TEST_SUITE_P(Datasets, InitTest,
                         ::testing::Values(Case{"pg", "chinook"}, Case{"mysql", "chinook"},
                                           Case{"pg", "applicants"}, Case{"mysql", "applicants"},
                                           Case{"pg", "bands"}, Case{"mysql", "bands"},
                                           Case{"pg", "films"}, Case{"mysql", "films"},
                                           Case{"pg", "inbox"}, Case{"mysql", "inbox"},
                                           Case{"pg", "service_orders"},
                                           Case{"mysql", "service_orders"}),
                         CaseName);

// A service_orders database on PostgreSQL, for the option tests.
class InitOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string url = PgUrl();
    if (url.empty()) {
      if (InCi()) FAIL() << "WIDEN_TEST_PG_URL is not set under CI";
      GTEST_SKIP() << "WIDEN_TEST_PG_URL not set (run through scripts/with-servers.sh)";
    }
    db_ = FreshPgDatabase(url, "widen_it_init_options");
    const std::string ex = SourceDir() + "/examples/service_orders/";
    RunPsqlFile(db_, ex + "schema.pg.sql");
    RunPsqlFile(db_, ex + "data.pg.sql");
    dir_ = MakeTempDir();
  }
  std::string db_, dir_;
};

// -o is checked before the source is read: a missing folder is named
// (exit 11, even with an unreachable source), the policy file cannot be
// the output (exit 2, the policy untouched), and a link to the draft stays
// a link.
TEST_F(InitOptionsTest, OutputIsCheckedBeforeTheSourceIsReadAndWrittenWhole) {
  const std::string unreachable = "postgresql://widen@127.0.0.1:1/nowhere";
  CommandResult r = RunCommand(WidenBinary() + " init --source " + unreachable + " -o " + dir_ +
                               "/missing/draft.yaml");
  EXPECT_EQ(r.exit_code, 11) << r.output;
  EXPECT_NE(r.output.find("-o " + dir_ + "/missing/draft.yaml: the folder '" + dir_ +
                          "/missing' does not exist"),
            std::string::npos)
      << r.output;
  const std::string policy = dir_ + "/policy.yaml";
  std::ofstream(policy) << "tables: {}\n";
  r = RunCommand(WidenBinary() + " init --source " + unreachable + " --policy " + policy + " -o " +
                 policy + " --force");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("-o " + policy + " is the same file as --policy " + policy),
            std::string::npos)
      << r.output;
  std::ifstream in(policy);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()),
            "tables: {}\n");
  std::filesystem::create_directories(dir_ + "/real");
  std::filesystem::create_symlink(dir_ + "/real/draft.yaml", dir_ + "/draft.yaml");
  r = RunCommand(WidenBinary() + " init -q --source " + ShellQuote(db_) + " -o " + dir_ +
                 "/draft.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ + "/draft.yaml"));
  EXPECT_GT(std::filesystem::file_size(dir_ + "/real/draft.yaml"), 0u);
}

// "path:line:col" (1-based) of the byte `skip` bytes into the first line
// of file `path` (not a comment) that holds `needle`.
std::string PlaceOf(const std::string& path, const std::string& needle, size_t skip = 0) {
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const size_t col = line.find(needle);
    if (col != std::string::npos && line.find('#') > col) {
      return fmt::format("{}:{}:{}", path, n, col + skip + 1);
    }
  }
  return "";
}

TEST_F(InitOptionsTest, DraftFollowsANamingPolicyThatLintEnforces) {
  const std::string policy = dir_ + "/policy.yaml";
  std::ofstream(policy) << R"YAML(namespace: {allowed: [shop]}
table: {style: PascalCase}
family: {pattern: "[a-z]", max_bytes: 1}
qualifier: {style: camelCase, max_bytes: 24}
prefix: {pattern: "[a-z]{1,2}"}
reserved_prefixes: [tmp]
)YAML";
  const std::string draft = dir_ + "/draft.yaml";
  const CommandResult init = RunCommand(WidenBinary() + " init --source " + ShellQuote(db_) +
                                        " --policy " + policy + " -o " + draft);
  ASSERT_EQ(init.exit_code, 0) << init.output;
  std::ifstream in(draft);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("- name: shop:ServiceOrder\n"), std::string::npos) << text;
  EXPECT_NE(text.find("to: \"d:productCode\""), std::string::npos) << text;
  EXPECT_NE(text.find("to: \"d:customerName\""), std::string::npos) << text;
  const std::string env = "WIDEN_SOURCE_URL=" + ShellQuote(db_) + " ";
  const CommandResult lint =
      RunCommand(env + WidenBinary() + " lint --policy " + policy + " -m " + draft);
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
  EXPECT_EQ(lint.output.find("E123"), std::string::npos) << lint.output;

  // The example's own names break it: each at its place in the file.
  const std::string example = SourceDir() + "/examples/service_orders/mapping.yaml";
  const CommandResult bad =
      RunCommand(env + WidenBinary() + " lint --no-source --policy " + policy + " -m " + example);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find(PlaceOf(example, "name: shop:orders", 6) +
                            ": error E123: shop:orders: table 'orders' is not PascalCase (" +
                            policy + ":2:8; e.g. 'Orders')"),
            std::string::npos)
      << bad.output;
  EXPECT_NE(bad.output.find(PlaceOf(example, "\"d:cust_name\"") +
                            ": error E123: shop:orders: qualifier 'cust_name' is not camelCase"),
            std::string::npos)
      << bad.output;
  EXPECT_NE(bad.output.find("    fix: rename it 'custName'"), std::string::npos) << bad.output;
  // The same policy as the mapping's own section.
  std::ifstream ex(example);
  std::string mapping((std::istreambuf_iterator<char>(ex)), std::istreambuf_iterator<char>());
  const std::string with_section = dir_ + "/with_policy.yaml";
  std::ofstream(with_section) << mapping << "policy:\n  table: {style: PascalCase}\n";
  const CommandResult section = RunCommand(WidenBinary() + " lint --no-source -m " + with_section);
  EXPECT_EQ(section.exit_code, 2) << section.output;
  EXPECT_NE(section.output.find("error E123: shop:orders: table 'orders' is not PascalCase (" +
                                with_section + ":"),
            std::string::npos)
      << section.output;
}

TEST_F(InitOptionsTest, RootsAndTablesShapeTheDraft) {
  const std::string draft = dir_ + "/draft.yaml";
  const CommandResult init = RunCommand(WidenBinary() + " init --source " + ShellQuote(db_) +
                                        " --root customer --namespace shop -o " + draft);
  ASSERT_EQ(init.exit_code, 0) << init.output;
  EXPECT_NE(init.output.find("widen: not mapped: product: no NOT NULL foreign key leads to a "
                             "table of the draft"),
            std::string::npos)
      << init.output;
  std::ifstream in(draft);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("  - name: shop:customer\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("  - name: shop:service_order\n"), std::string::npos) << text;
  EXPECT_NE(text.find("      - table: service_order\n        \"on\": {customer_id: customer_id}"),
            std::string::npos)
      << text;
  // It migrates: one customer row per customer, one cell per order.
  const std::string env = "WIDEN_SOURCE_URL=" + ShellQuote(db_) + " ";
  const std::string store = "leveldb:" + dir_ + "/store";
  const CommandResult migrate =
      RunCommand(env + WidenBinary() + " migrate -q -m " + draft + " --target " + store);
  ASSERT_EQ(migrate.exit_code, 0) << migrate.output;
  size_t orders = 0;
  std::set<std::string> customers;
  for (const CellRecord& c : ReadCells(store, "shop:customer")) {
    customers.insert(c.row);
    if (c.column.rfind("d:", 0) != 0) ++orders;
  }
  EXPECT_EQ(std::to_string(customers.size()),
            PgQuery(db_, "SELECT count(*) FROM customer").front().front());
  EXPECT_EQ(std::to_string(orders),
            PgQuery(db_, "SELECT count(*) FROM service_order").front().front());

  // A password in the URL stays out of the draft (the server trusts
  // loopback connections, so any password connects).
  const std::string with_password = "postgresql://widen:s3cret@" + db_.substr(db_.find('@') + 1);
  const CommandResult secret =
      RunCommand(WidenBinary() + " init -q --source " + ShellQuote(with_password));
  ASSERT_EQ(secret.exit_code, 0) << secret.output;
  EXPECT_EQ(secret.output.find("s3cret"), std::string::npos) << secret.output;
  EXPECT_NE(secret.output.find("source: \"${WIDEN_SOURCE_URL:-postgresql://widen@"),
            std::string::npos)
      << secret.output;

  const CommandResult typo = RunCommand(WidenBinary() + " init --source " + ShellQuote(db_) +
                                        " --tables customer,custmer");
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_NE(typo.output.find("widen: the source has no table 'custmer' (its tables: customer, "
                             "product, service_order)"),
            std::string::npos)
      << typo.output;
  const CommandResult exists =
      RunCommand(WidenBinary() + " init --source " + ShellQuote(db_) + " -o " + draft);
  EXPECT_EQ(exists.exit_code, 2) << exists.output;
  EXPECT_NE(exists.output.find("the file exists"), std::string::npos) << exists.output;
}

}  // namespace
}  // namespace widen::testing
