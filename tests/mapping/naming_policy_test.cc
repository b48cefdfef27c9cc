// The naming policy (mapping/naming_policy.h): its loader's errors at
// file:line:col, each rule's verdict on names written by hand, the styles,
// and the `access:` entries of a table as the loader reads them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "mapping/mapping.h"
#include "mapping/naming_policy.h"

namespace widen {
namespace {

NamingPolicy Policy(const std::string& yaml) {
  auto p = ParsePolicy(yaml, "p.yaml");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : NamingPolicy::Default();
}

TEST(NamingPolicyTest, DefaultIsTodaysLint) {
  const NamingPolicy d = NamingPolicy::Default();
  EXPECT_FALSE(d.given);
  EXPECT_EQ(d.max_families, 3);
  EXPECT_EQ(d.rule(NameKind::kFamily).max_bytes, 2);
  // The default checks no pattern: any name passes but for a family's length.
  EXPECT_EQ(NameProblem(d, NameKind::kTable, "Any-Name.v2"), "");
  EXPECT_EQ(NameProblem(d, NameKind::kFamily, "abc", false), "");
  EXPECT_NE(NameProblem(d, NameKind::kFamily, "abc"), "");
}

TEST(NamingPolicyTest, EachRuleJudgesNames) {
  const NamingPolicy p = Policy(R"YAML(namespace: {allowed: [music, sales]}
table: {style: snake_case, max_bytes: 12, min_bytes: 3}
family: {pattern: "[a-z]"}
qualifier: {style: camelCase, reserved_prefixes: [x_]}
prefix: {pattern: "[a-z]{1,2}"}
attribute: {style: PascalCase}
reserved_prefixes: [tmp]
max_families: 2
)YAML");
  EXPECT_TRUE(p.given);
  EXPECT_EQ(p.max_families, 2);
  EXPECT_EQ(p.rule(NameKind::kFamily).max_bytes, 2);  // the default's, not given
  EXPECT_EQ(NameProblem(p, NameKind::kNamespace, "music"), "");
  EXPECT_EQ(NameProblem(p, NameKind::kNamespace, "shop"),
            "namespace 'shop' is not one the policy allows (music, sales; p.yaml:1:12)");
  EXPECT_EQ(NameProblem(p, NameKind::kTable, "order_line"), "");
  EXPECT_EQ(NameProblem(p, NameKind::kTable, "OrderLine"),
            "table 'OrderLine' is not snake_case (p.yaml:2:8; e.g. 'order_line')");
  EXPECT_EQ(NameProblem(p, NameKind::kTable, "order__line"),
            "table 'order__line' is not snake_case (p.yaml:2:8; e.g. 'order_line')");
  EXPECT_EQ(NameProblem(p, NameKind::kTable, "invoice_lines"),
            "table 'invoice_lines' has 13 bytes, more than the policy's max_bytes 12 (p.yaml:2:8)");
  EXPECT_EQ(NameProblem(p, NameKind::kTable, "ab"),
            "table 'ab' has 2 bytes, fewer than the policy's min_bytes 3 (p.yaml:2:8)");
  EXPECT_EQ(NameProblem(p, NameKind::kTable, "tmp_orders"),
            "table 'tmp_orders' starts with 'tmp', a prefix the policy reserves (the policy's "
            "reserved_prefixes)");
  EXPECT_EQ(NameProblem(p, NameKind::kFamily, "d"), "");
  EXPECT_EQ(NameProblem(p, NameKind::kFamily, "D"),
            "family 'D' does not match the pattern '[a-z]' (p.yaml:3:9)");
  EXPECT_EQ(NameProblem(p, NameKind::kQualifier, "custName"), "");
  EXPECT_EQ(NameProblem(p, NameKind::kQualifier, "x_cust"),
            "qualifier 'x_cust' starts with 'x_', a prefix the policy reserves (p.yaml:4:12)");
  EXPECT_EQ(NameProblem(p, NameKind::kPrefix, "abc"),
            "prefix 'abc' does not match the pattern '[a-z]{1,2}' (p.yaml:5:9)");
  EXPECT_EQ(NameProblem(p, NameKind::kAttribute, "firstName"),
            "attribute 'firstName' is not PascalCase (p.yaml:6:12; e.g. 'FirstName')");
}

TEST(NamingPolicyTest, StylesRewriteWords) {
  EXPECT_EQ(ApplyNameStyle(NameStyle::kCamelCase, "invoice_line"), "invoiceLine");
  EXPECT_EQ(ApplyNameStyle(NameStyle::kPascalCase, "invoice_line"), "InvoiceLine");
  EXPECT_EQ(ApplyNameStyle(NameStyle::kSnakeCase, "InvoiceLine"), "invoice_line");
  EXPECT_EQ(ApplyNameStyle(NameStyle::kSnakeCase, "billingAddress2"), "billing_address2");
  EXPECT_EQ(ApplyNameStyle(NameStyle::kLowerCase, "MediaType"), "mediatype");
  EXPECT_EQ(ApplyNameStyle(NameStyle::kUpperCase, "d"), "D");
  EXPECT_EQ(ApplyNameStyle(NameStyle::kAny, "As_Is"), "As_Is");
}

TEST(NamingPolicyTest, LoaderErrorsNameThePlace) {
  auto bad = [](const std::string& yaml) {
    auto p = ParsePolicy(yaml, "p.yaml");
    EXPECT_FALSE(p.ok());
    return p.ok() ? std::string() : p.status().message();
  };
  EXPECT_EQ(bad("table: {stlye: snake_case}\n"),
            "p.yaml:1:9: unknown field 'stlye' in the policy's 'table'; did you mean 'style'? "
            "(expected one of: pattern, style, min_bytes, max_bytes, allowed, reserved_prefixes)");
  EXPECT_EQ(bad("table: {style: snakecase}\n"),
            "p.yaml:1:16: 'style' must be any, snake_case, camelCase, PascalCase, lowercase or "
            "UPPERCASE, got 'snakecase'; did you mean 'snake_case'?");
  EXPECT_EQ(
      bad("family: {pattern: \"[a-\"}\n")
          .rfind(
              "p.yaml:1:19: 'pattern' is not a regular expression (RE2 syntax: no backreferences "
              "or lookaround): ",
              0),
      0u);
  EXPECT_EQ(bad("table: {min_bytes: 9, max_bytes: 3}\n"),
            "p.yaml:1:20: 'min_bytes' (9) exceeds 'max_bytes' (3)");
  EXPECT_EQ(bad("colum: {}\n").rfind("p.yaml:1:1: unknown field 'colum' in the policy", 0), 0u);
  EXPECT_EQ(load_policy("/nonexistent/p.yaml").status().code(), StatusCode::kNotFound);
}

// Patterns match in time linear in the name (RE2): a long name, a nested
// repetition and a pattern that backtracking matchers take exponential time
// over all get their answer at once, and without deep recursion.
TEST(NamingPolicyTest, PatternsMatchLongNamesAndHostilePatterns) {
  auto problem = [](const std::string& pattern, const std::string& name) {
    auto p = ParsePolicy("qualifier: {pattern: \"" + pattern + "\"}\n", "p.yaml");
    EXPECT_TRUE(p.ok()) << pattern << ": " << p.status().ToString();
    return p.ok() ? NameProblem(*p, NameKind::kQualifier, name) : std::string("not loaded");
  };
  EXPECT_EQ(problem("[a-z]*", std::string(50000, 'a')), "");
  EXPECT_NE(problem("[a-z]*", std::string(50000, 'a') + "B"), "");
  EXPECT_EQ(problem("(a|b)*", std::string(20000, 'a') + std::string(20000, 'b')), "");
  // Exponential for a backtracking matcher on a name that does not match.
  const std::string name = "tbl_" + std::string(59, 'a');
  EXPECT_EQ(problem("tbl_(a|aa)*c", name),
            "qualifier '" + name + "' does not match the pattern 'tbl_(a|aa)*c' (p.yaml:1:12)");
  EXPECT_EQ(problem("tbl_(a|aa)*c", "tbl_aaac"), "");
  // Whole-name matches, as before.
  EXPECT_NE(problem("[a-z]", "ab"), "");
  EXPECT_EQ(problem("[a-z]{1,2}", "ab"), "");
  // What RE2 cannot match in linear time, and programs too large, are refused.
  for (const char* pattern : {"(a)\\\\1", "(?=a)a", "((a{1000}){1000}){1000}"}) {
    auto p = ParsePolicy(std::string("qualifier: {pattern: \"") + pattern + "\"}\n", "p.yaml");
    ASSERT_FALSE(p.ok()) << pattern;
    EXPECT_EQ(p.status().message().rfind("p.yaml:1:22: 'pattern' is not a regular expression", 0),
              0u)
        << p.status().message();
  }
}

constexpr const char* kTable = R"YAML(source: postgresql://x@h:1/db
tables:
  - name: shop:orders
    from: service_order
    families: [d]
    key: {parts: [customer_id, ordered_at]}
    joins: [{table: customer, on: {customer_id: customer_id}}]
    columns: [status]
    access:
      - {name: a1, by: [customer_id], order: [ordered_at desc, customer.name]}
      - {name: a2, by: customer.region}
)YAML";

TEST(AccessPatternLoadTest, ByAndOrderAreRead) {
  auto m = ParseMapping(kTable, "m.yaml");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto& a = m->tables.front().access;
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].name, "a1");
  EXPECT_EQ(a[0].loc.ToString(), "m.yaml:10:9");
  ASSERT_EQ(a[0].by.size(), 1u);
  EXPECT_EQ(a[0].by[0].column.ToString(), "customer_id");
  ASSERT_EQ(a[0].order.size(), 2u);
  EXPECT_EQ(a[0].order[0].column.ToString(), "ordered_at");
  EXPECT_TRUE(a[0].order[0].desc);
  EXPECT_EQ(a[0].order[1].column.ToString(), "customer.name");
  EXPECT_FALSE(a[0].order[1].desc);
  ASSERT_EQ(a[1].by.size(), 1u);
  EXPECT_EQ(a[1].by[0].column.ToString(), "customer.region");
}

TEST(AccessPatternLoadTest, MistakesNameThePlace) {
  auto bad = [](const std::string& from, const std::string& to) {
    std::string yaml = kTable;
    yaml.replace(yaml.find(from), from.size(), to);
    auto m = ParseMapping(yaml, "m.yaml");
    EXPECT_FALSE(m.ok()) << to;
    return m.ok() ? std::string() : m.status().message();
  };
  EXPECT_EQ(bad("ordered_at desc", "ordered_at down"),
            "m.yaml:10:47: an 'order' entry is \"column\", \"column asc\" or \"column desc\" (one "
            "space between), got 'ordered_at down'; a column whose name holds white space is "
            "written {column: NAME, desc: false}");
  EXPECT_EQ(bad("by: customer.region", "by: cust.region"),
            "m.yaml:11:24: 'cust' is neither the driving table nor a join of table "
            "'shop:orders'");
  EXPECT_EQ(bad("name: a2", "name: a1"),
            "m.yaml:11:9: access pattern 'a1' is declared twice (first at m.yaml:10:9)");
  EXPECT_EQ(bad("order: [ordered_at desc, customer.name]", "order: [ordered_at, ordered_at desc]"),
            "m.yaml:10:59: access pattern 'a1' names column 'ordered_at' twice in 'order'");
  // A `by` column in `order` is free (one value); "DESC" in capitals is desc;
  // a name with a space is the map form.
  for (const char* order : {"order: [customer_id]", "order: [ordered_at DESC]",
                            "order: [{column: Part B, desc: true}]"}) {
    std::string yaml = kTable;
    const std::string from = "order: [ordered_at desc, customer.name]";
    yaml.replace(yaml.find(from), from.size(), order);
    auto m = ParseMapping(yaml, "m.yaml");
    ASSERT_TRUE(m.ok()) << order << ": " << m.status().ToString();
    const bool desc = std::string(order).find("customer_id") == std::string::npos;
    EXPECT_EQ(m->tables.front().access.front().order.front().desc, desc) << order;
  }
  EXPECT_EQ(bad("{name: a2, by", "{nmae: a2, by"),
            "m.yaml:11:10: unknown field 'nmae' in an access pattern; did you mean 'name'? "
            "(expected one of: name, by, order)");
}

// A mapping's `policy:` may name a policy file, relative to the mapping.
TEST(NamingPolicyTest, MappingNamesAPolicyFile) {
  const std::string dir = ::testing::TempDir() + "/policy_file_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/house.yaml") << "table: {style: PascalCase}\nmax_families: 2\n";
  std::ofstream(dir + "/m.yaml") << "source: x\npolicy: house.yaml\ntables:\n  - name: t\n"
                                    "    from: o\n    families: [d]\n    key: {parts: [id]}\n"
                                    "    columns: [v]\n";
  auto m = load_mapping(dir + "/m.yaml");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->policy.given);
  EXPECT_EQ(m->policy.max_families, 2);
  EXPECT_EQ(m->policy.rule(NameKind::kTable).style, NameStyle::kPascalCase);
  EXPECT_EQ(m->policy.rule(NameKind::kTable).file, dir + "/house.yaml");
  std::ofstream(dir + "/bad.yaml") << "source: x\npolicy: nowhere.yaml\ntables:\n  - name: t\n"
                                      "    from: o\n    families: [d]\n    key: {parts: [id]}\n"
                                      "    columns: [v]\n";
  auto bad = load_mapping(dir + "/bad.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            dir + "/bad.yaml:2:9: 'policy': " + dir + "/nowhere.yaml: no such policy file");
}

}  // namespace
}  // namespace widen
