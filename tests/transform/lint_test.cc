#include "transform/lint.h"

#include <algorithm>

#include <gtest/gtest.h>

#include <optional>
#include <set>

#include "tests/transform/shop_fixture.h"

namespace widen {
namespace {

using namespace widen::testing;

// 2025-01-01 in ms: the orders of the fixture are from 1972.
constexpr int64_t kNow = 1735689600000;

LintOptions Options() {
  LintOptions o;
  o.now_ms = kNow;
  return o;
}

// A table that breaks no rule: customer-led order keys, padded, two short
// families, its lines nested by their primary key.
constexpr char kClean[] = R"(
  - name: shop:orders
    from: service_order
    families: [d, l]
    key:
      parts: [{column: customer_id, width: 5}, {column: order_id, width: 6}]
    columns:
      - {column: amount, to: "d:amount"}
    nest:
      - table: order_line
        on: {order_id: order_id}
        family: l
        prefix: l
        id: [{column: line_id, width: 6}]
        columns: [sku, qty]
)";

LintReport LintOf(const std::string& tables, FakeSource* source, const LintOptions& o = Options()) {
  Mapping m = ParseTables(tables);
  auto r = Lint(m, source, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r).ValueOrDie();
}

std::vector<std::string> Rules(const LintReport& r) {
  std::vector<std::string> ids;
  for (const auto& f : r.findings) ids.push_back(f.rule);
  return ids;
}

// A copy: the report is often a temporary.
std::optional<LintFinding> Find(const LintReport& r, const std::string& rule) {
  for (const auto& f : r.findings) {
    if (f.rule == rule) return f;
  }
  return std::nullopt;
}

bool Has(const LintReport& r, const std::string& rule) { return Find(r, rule).has_value(); }

TEST(LintTest, ACleanDesignHasNoFindings) {
  auto src = ShopSource();
  LintReport r = LintOf(kClean, src.get());
  EXPECT_TRUE(r.findings.empty()) << ::testing::PrintToString(Rules(r));
  EXPECT_EQ(r.errors(), 0);
  EXPECT_TRUE(r.notes.empty()) << r.notes.front();
}

TEST(LintTest, EveryRuleIsCatalogued) {
  std::set<std::string> ids;
  for (const auto& rule : LintRules()) {
    EXPECT_TRUE(ids.insert(rule.id).second) << rule.id;
    EXPECT_EQ(rule.id[0], rule.severity == Severity::kError     ? 'E'
                          : rule.severity == Severity::kWarning ? 'W'
                                                                : 'I');
  }
  EXPECT_EQ(ids.size(), 24u);
}

TEST(LintTest, E100MappingThatDoesNotResolve) {
  auto src = ShopSource();
  LintReport r = LintOf(R"(
  - name: shop:orders
    from: service_order
    families: [d]
    key:
      parts: [{column: order_idd, width: 6}]
    columns: [{column: amount, to: "d:widen_test"}]
)",
                        src.get());
  std::optional<LintFinding> f = Find(r, "E100");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_NE(f->message.find("order_idd"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("did you mean 'order_id'"), std::string::npos) << f->message;
  EXPECT_EQ(f->loc.line, 8);  // the key part, where the planner points
  // The finding carries the table; the message does not repeat it.
  EXPECT_EQ(f->table, "shop:orders");
  EXPECT_EQ(f->message.find("table 'shop:orders'"), std::string::npos) << f->message;
  EXPECT_EQ(r.errors(), 1);
  EXPECT_FALSE(Has(LintOf(kClean, src.get()), "E100"));
}

TEST(LintTest, E101NamesHBaseRejects) {
  auto src = ShopSource();
  LintReport r = LintOf(R"(
  - name: hbase:orders
    from: service_order
    families: [d]
    key:
      parts: [{column: order_id, width: 6}]
    columns: [{column: amount, to: "d:widen_test"}]
  - name: shop:orders
    from: service_order
    families: [.x]
    key:
      parts: [{column: order_id, width: 6}]
    columns: [{column: amount, to: ".x:widen_test"}]
)",
                        src.get());
  std::vector<const LintFinding*> e;
  for (const auto& f : r.findings) {
    if (f.rule == "E101") e.push_back(&f);
  }
  ASSERT_EQ(e.size(), 2u) << ::testing::PrintToString(Rules(r));
  EXPECT_NE(e[0]->message.find("reserved"), std::string::npos);
  EXPECT_EQ(e[0]->loc.line, 4);
  EXPECT_NE(e[1]->message.find("'.x'"), std::string::npos) << e[1]->message;
  EXPECT_EQ(e[1]->loc.line, 12);
  EXPECT_EQ(r.errors(), 2);
  EXPECT_FALSE(Has(LintOf(kClean, src.get()), "E101"));
}

TEST(LintTest, W102TooManyFamilies) {
  const char* four = R"(
  - name: shop:orders
    from: service_order
    families: [a, b, c, d]
    key:
      parts: [{column: customer_id, width: 5}, {column: order_id, width: 6}]
    columns: [{column: amount, to: "a:widen_test"}]
)";
  LintReport r = LintOf(four, nullptr);
  std::optional<LintFinding> f = Find(r, "W102");
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->message.find("4 column families"), std::string::npos);
  LintOptions o = Options();
  o.max_families = 4;
  EXPECT_FALSE(Has(LintOf(four, nullptr, o), "W102"));
  auto src = ShopSource();
  EXPECT_FALSE(Has(LintOf(kClean, src.get()), "W102"));
}

TEST(LintTest, W103LongFamilyNames) {
  LintReport r = LintOf(R"(
  - name: shop:orders
    from: service_order
    families: [details, dt]
    key:
      parts: [{column: order_id, width: 6}]
    columns: [{column: amount, to: "details:widen_test"}]
)",
                        nullptr);
  std::vector<std::string> rules = Rules(r);
  EXPECT_EQ(std::count(rules.begin(), rules.end(), "W103"), 1);
  std::optional<LintFinding> f = Find(r, "W103");
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->message.find("'details' has 7 bytes"), std::string::npos);
  EXPECT_EQ(f->loc.file, "m.yaml");
  EXPECT_EQ(f->loc.line, 6);
  // Without a source only the mapping rules run, and a note says so.
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("no source"), std::string::npos);
}

TEST(LintTest, W104LongRowKeysAndI104UnboundedParts) {
  auto src = ShopSource();
  const char* product_key = R"(
  - name: shop:orders
    from: service_order
    families: [d]
    key:
      parts: [product_code, {column: customer_id, width: 5}, {column: order_id, width: 6}]
    columns: [{column: amount, to: "d:widen_test"}]
)";
  LintOptions o = Options();
  o.max_key_bytes = 20;  // product_code is varchar(10): up to 10 + 1 + 11 + 1 + 11 bytes
  std::optional<LintFinding> f = Find(LintOf(product_key, src.get(), o), "W104");
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->message.find("34 bytes"), std::string::npos) << f->message;
  EXPECT_FALSE(Has(LintOf(product_key, src.get()), "W104"));

  const char* name_key = R"(
  - name: shop:names
    from: customer
    families: [d]
    key:
      parts: [name, {column: customer_id, width: 5}]
    columns: [{column: name, to: "d:widen_test"}]
)";
  LintReport r = LintOf(name_key, src.get());
  EXPECT_FALSE(Has(r, "W104"));
  f = Find(r, "I104");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_NE(f->message.find("name (text)"), std::string::npos) << f->message;
  EXPECT_FALSE(Has(LintOf(product_key, src.get()), "I104"));
}

TEST(LintTest, W105MonotonicLeadingKeyPart) {
  auto src = ShopSource();
  auto key = [](const std::string& parts, const std::string& extra = "") {
    return "  - name: shop:orders\n    from: service_order\n    families: [d]\n    key:\n"
           "      form: binary\n      parts: " +
           parts + "\n" + extra + "    columns: [{column: amount, to: \"d:a\"}]\n";
  };
  std::optional<LintFinding> f = Find(LintOf(key("[order_id]"), src.get()), "W105");
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->message.find("integer primary key of service_order"), std::string::npos)
      << f->message;
  EXPECT_EQ(f->loc.line, 8);
  f = Find(LintOf(key("[ordered_at, order_id]"), src.get()), "W105");
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->message.find("timestamp"), std::string::npos) << f->message;
  // Not when a salt spreads the writes, nor when a spread column leads.
  EXPECT_FALSE(Has(LintOf(key("[order_id]", "      salt: {buckets: 8}\n"), src.get()), "W105"));
  EXPECT_FALSE(Has(LintOf(key("[customer_id, order_id]"), src.get()), "W105"));
  EXPECT_FALSE(Has(LintOf(key("[{literal: v1}, customer_id, order_id]"), src.get()), "W105"));
  EXPECT_TRUE(Has(LintOf(key("[{literal: v1}, order_id]"), src.get()), "W105"));
}

TEST(LintTest, W106LargeTableWithoutPreSplit) {
  auto src = ShopSource();
  src->table("service_order")->estimated_rows = 50000000;
  LintReport r = LintOf(kClean, src.get());
  std::optional<LintFinding> f = Find(r, "W106");
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->message.find("50000000"), std::string::npos);
  EXPECT_NE(f->fix.find("widen ddl --regions"), std::string::npos);
  EXPECT_FALSE(Has(LintOf(R"(
  - name: shop:orders
    from: service_order
    families: [d]
    key:
      parts: [{column: customer_id, width: 5}, {column: order_id, width: 6}]
      salt: {buckets: 16}
    columns: [{column: amount, to: "d:widen_test"}]
)",
                          src.get()),
                   "W106"));
  src->table("service_order")->estimated_rows = 6;
  EXPECT_FALSE(Has(LintOf(kClean, src.get()), "W106"));
}

TEST(LintTest, E100ASyncEntryOfATableTwoTargetTablesReadIsOneFinding) {
  auto src = ShopSource();
  LintReport r = LintOf(std::string(kClean) + R"(
  - name: shop:by_product
    from: service_order
    families: [d]
    key: {parts: [product_code, {column: order_id, width: 6}]}
    columns: [{column: amount, to: "d:amount"}]
sync:
  - {table: service_order, mode: watermark, watermark: orderd_at}
)",
                        src.get());
  std::vector<LintFinding> e100;
  for (const auto& f : r.findings) {
    if (f.rule == "E100") e100.push_back(f);
  }
  ASSERT_EQ(e100.size(), 1u) << ::testing::PrintToString(Rules(r));
  EXPECT_EQ(e100[0].message,
            "sync of 'service_order': source table 'service_order' has no column 'orderd_at'; "
            "did you mean 'ordered_at'?");
  EXPECT_EQ(e100[0].loc.column, 56);        // the watermark column's name
  EXPECT_EQ(e100[0].table, "shop:orders");  // the first target table that reads it
}

TEST(LintTest, I121LargeTableWithAWatermarkColumnSyncedInDigestMode) {
  auto src = ShopSource();
  SourceTable* order = src->table("service_order");
  order->estimated_rows = 2000000;
  order->columns.push_back(Col("updated_at", ValueType::kTimestampTz, "timestamp with time zone"));
  std::optional<LintFinding> f = Find(LintOf(kClean, src.get()), "I121");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_EQ(f->loc.ToString(), "m.yaml:4:5");  // the target table that drives it
  EXPECT_EQ(f->table, "shop:orders");
  EXPECT_EQ(f->message,
            "source table service_order (about 2000000 rows) has no sync entry, so widen sync "
            "reads every row of it on every run (digest mode); its column updated_at (timestamp "
            "with time zone, NOT NULL) looks like a last-change time, from which watermark mode "
            "would read only the rows changed since the last run");
  EXPECT_NE(f->fix.find("- {table: service_order, mode: watermark, watermark: updated_at}"),
            std::string::npos)
      << f->fix;
  // The joined and nested tables are small: one finding.
  const std::vector<std::string> rules = Rules(LintOf(kClean, src.get()));
  EXPECT_EQ(std::count(rules.begin(), rules.end(), "I121"), 1);

  // An entry, in either mode, is the mapping's choice.
  EXPECT_FALSE(Has(
      LintOf(std::string(kClean) + "sync:\n  - {table: service_order, mode: digest}\n", src.get()),
      "I121"));
  // At the threshold or below; a nullable column; a name that is no last change.
  LintOptions o = Options();
  o.large_sync_rows = 2000000;
  EXPECT_FALSE(Has(LintOf(kClean, src.get(), o), "I121"));
  order->columns.back().nullable = true;
  EXPECT_FALSE(Has(LintOf(kClean, src.get()), "I121"));
  order->columns.back().nullable = false;
  order->columns.back().name = "created_at";
  EXPECT_FALSE(Has(LintOf(kClean, src.get()), "I121"));
}

TEST(LintTest, W107VersionColumnOnASingleVersionFamily) {
  const char* versioned = R"(
  - name: shop:history
    from: service_order
    version: ordered_at
    families: [{name: d, versions: %d}]
    key:
      parts: [{column: customer_id, width: 5}]
    columns:
      - {column: amount, to: "d:amount"}
)";
  char one[512], three[512];
  std::snprintf(one, sizeof one, versioned, 1);
  std::snprintf(three, sizeof three, versioned, 3);
  LintReport r = LintOf(one, nullptr);  // a mapping rule: no source needed
  std::optional<LintFinding> f = Find(r, "W107");
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->message.find("VERSIONS => 1"), std::string::npos);
  EXPECT_NE(f->message.find("service_order.ordered_at"), std::string::npos) << f->message;
  EXPECT_FALSE(Has(LintOf(three, nullptr), "W107"));
  // A nest's version column counts too.
  auto src = ShopSource();
  EXPECT_FALSE(Has(LintOf(kClean, src.get()), "W107"));
}

TEST(LintTest, W108TtlShorterThanTheDataAge) {
  auto src = ShopSource();
  const char* ttl = R"(
  - name: shop:history
    from: service_order
    version: ordered_at
    families: [{name: d, versions: 10, ttl: %d}]
    key:
      parts: [{column: customer_id, width: 5}]
    columns:
      - {column: amount, to: "d:amount"}
)";
  char day[512], forever[512];
  std::snprintf(day, sizeof day, ttl, 86400);
  std::snprintf(forever, sizeof forever, ttl, 0);
  LintReport r = LintOf(day, src.get());
  std::optional<LintFinding> f = Find(r, "W108");
  ASSERT_TRUE(f.has_value()) << ::testing::PrintToString(Rules(r));
  EXPECT_NE(f->message.find("1972-09-27"), std::string::npos) << f->message;  // day 1000
  EXPECT_NE(f->message.find("every value is older"), std::string::npos) << f->message;
  EXPECT_FALSE(Has(LintOf(forever, src.get()), "W108"));
  // Data younger than the TTL: no finding.
  LintOptions o = Options();
  o.now_ms = 1000LL * 86400000 + 3600000;
  EXPECT_FALSE(Has(LintOf(day, src.get(), o), "W108"));
  // A source that cannot summarize a column: the rule is skipped with a note.
  src->unsupported_aggregates = true;
  LintReport skipped = LintOf(day, src.get());
  EXPECT_FALSE(Has(skipped, "W108"));
  EXPECT_TRUE(std::any_of(skipped.notes.begin(), skipped.notes.end(), [](const std::string& n) {
    return n.find("W108 skipped") != std::string::npos;
  })) << ::testing::PrintToString(skipped.notes);
}

// An integer version column reaching back to INT64_MIN ms is older than any
// TTL (the age is compared without overflowing), shown as the number.
TEST(LintTest, W108VersionAtTheInt64Limit) {
  auto src = std::make_unique<FakeSource>();
  SourceTable ev;
  ev.name = "ev";
  ev.columns = {Col("id", ValueType::kInt, "bigint"), Col("v", ValueType::kInt, "bigint")};
  ev.primary_key = {"id"};
  src->AddTable(ev, {{I(1), I(INT64_MIN)}, {I(2), I(kNow)}});
  LintReport r = LintOf(R"(
  - name: e
    from: ev
    version: v
    families: [{name: d, ttl: 86400}]
    key:
      parts: [{column: id, width: 3}]
    columns: [v]
)",
                        src.get());
  std::optional<LintFinding> f = Find(r, "W108");
  ASSERT_TRUE(f.has_value()) << ::testing::PrintToString(Rules(r));
  EXPECT_NE(f->message.find("goes back to -9223372036854775808:"), std::string::npos) << f->message;
  EXPECT_EQ(f->message.find("every value is older"), std::string::npos) << f->message;
}

TEST(LintTest, W109NestingMakesRowsTooWide) {
  auto src = ShopSource();
  LintOptions o = Options();
  o.max_row_cells = 2;  // order 1: 1 cell + 2 lines
  LintReport r = LintOf(kClean, src.get(), o);
  std::optional<LintFinding> f = Find(r, "W109");
  ASSERT_TRUE(f.has_value()) << ::testing::PrintToString(Rules(r));
  EXPECT_NE(f->message.find("about 3 cells"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("2 order_line (order_id=1"), std::string::npos) << f->message;
  EXPECT_FALSE(Has(LintOf(kClean, src.get()), "W109"));
  src->unsupported_aggregates = true;
  LintReport skipped = LintOf(kClean, src.get(), o);
  EXPECT_FALSE(Has(skipped, "W109"));
  ASSERT_FALSE(skipped.notes.empty());
  EXPECT_NE(skipped.notes[0].find("W109 skipped"), std::string::npos);
}

TEST(LintTest, E110NullableKeyPartsWithoutARule) {
  auto src = ShopSource();
  LintReport r = LintOf(R"(
  - name: shop:by_region
    from: customer
    families: [d]
    key:
      parts: [region, customer_id]
    columns:
      - {column: name, to: "d:name"}
)",
                        src.get());
  std::optional<LintFinding> f = Find(r, "E110");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_EQ(f->loc.line, 8);
  EXPECT_NE(f->message.find("customer.region is nullable"), std::string::npos) << f->message;
  // The plan is made anyway, so the rules that need it still run.
  EXPECT_FALSE(Has(r, "E100"));
  EXPECT_TRUE(Has(r, "W112"));
  EXPECT_EQ(r.errors(), 1);

  // A joined column can be NULL too (LEFT JOIN).
  f = Find(LintOf(R"(
  - name: shop:orders
    from: service_order
    families: [d]
    joins:
      - table: customer
        on: {customer_id: customer_id}
    key:
      parts: [customer.name, {column: order_id, width: 6}]
    columns: [{column: amount, to: "d:widen_test"}]
)",
                  src.get()),
           "E110");
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->message.find("LEFT JOIN"), std::string::npos);

  EXPECT_FALSE(Has(LintOf(R"(
  - name: shop:by_region
    from: customer
    families: [d]
    key:
      parts: [{column: region, on_null: reject}, {column: customer_id, width: 5}]
    columns: [{column: name, to: "d:widen_test"}]
)",
                          src.get()),
                   "E110"));
}

TEST(LintTest, W111KeysThatMayNotBeUnique) {
  auto src = ShopSource();
  LintReport r = LintOf(R"(
  - name: shop:by_customer
    from: service_order
    families: [d]
    key:
      parts: [{column: customer_id, width: 5}, product_code]
    columns:
      - {column: amount, to: "d:amount"}
)",
                        src.get());
  std::optional<LintFinding> f = Find(r, "W111");
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->message.find("does not contain order_id"), std::string::npos) << f->message;
  EXPECT_NE(f->fix.find("widen plan --full"), std::string::npos);
  EXPECT_FALSE(Has(LintOf(kClean, src.get()), "W111"));

  // A nested id without the child's primary key.
  f = Find(LintOf(R"(
  - name: shop:orders
    from: service_order
    families: [l]
    key:
      parts: [{column: customer_id, width: 5}, {column: order_id, width: 6}]
    nest:
      - table: order_line
        on: {order_id: order_id}
        family: l
        prefix: l
        id: [sku]
)",
                  src.get()),
           "W111");
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->message.find("nested id of order_line (prefix 'l') does not contain line_id"),
            std::string::npos)
      << f->message;
}

TEST(LintTest, W112UnpaddedIntegersInTextKeys) {
  auto src = ShopSource();
  std::optional<LintFinding> f = Find(LintOf(R"(
  - name: shop:orders
    from: service_order
    families: [d]
    key:
      parts: [{column: customer_id, width: 5}, order_id]
    columns: [{column: amount, to: "d:widen_test"}]
)",
                                             src.get()),
                                      "W112");
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->message.find("'order_id'"), std::string::npos);
  EXPECT_EQ(f->loc.line, 8);
  EXPECT_FALSE(Has(LintOf(R"(
  - name: shop:orders
    from: service_order
    families: [d]
    key:
      form: binary
      parts: [customer_id, order_id]
    columns: [{column: amount, to: "d:widen_test"}]
)",
                          src.get()),
                   "W112"));
  EXPECT_FALSE(Has(LintOf(kClean, src.get()), "W112"));
}

TEST(LintTest, I113UnpaddedIntegersInNestedIds) {
  auto src = ShopSource();
  std::optional<LintFinding> f = Find(LintOf(R"(
  - name: shop:orders
    from: service_order
    families: [l]
    key:
      parts: [{column: customer_id, width: 5}, {column: order_id, width: 6}]
    nest:
      - table: order_line
        on: {order_id: order_id}
        family: l
        prefix: l
        id: [line_id]
)",
                                             src.get()),
                                      "I113");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_NE(f->message.find("l1, l10, l2"), std::string::npos) << f->message;
  EXPECT_FALSE(Has(LintOf(kClean, src.get()), "I113"));
}

// W118: a nested table read in pages by its link (indexes_known, as MySQL
// says) needs an index that starts with the link columns, in their order.
TEST(LintTest, W118NestLinkWithoutAnIndex) {
  auto src = ShopSource();
  SourceTable* line = src->table("order_line");
  line->indexes_known = true;
  line->indexes = {{"line_id"}, {"sku", "order_id"}};
  LintReport r = LintOf(kClean, src.get());
  std::optional<LintFinding> f = Find(r, "W118");
  ASSERT_TRUE(f.has_value()) << ::testing::PrintToString(Rules(r));
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(f->loc.line, 12);  // the nest
  EXPECT_NE(f->message.find("links on order_line.(order_id), which no index of order_line starts "
                            "with"),
            std::string::npos)
      << f->message;
  EXPECT_EQ(f->fix.rfind("CREATE INDEX order_line_order_id ON order_line (order_id);", 0), 0u)
      << f->fix;
  // An index led by the link (then anything) serves the pages.
  line->indexes.push_back({"order_id", "line_id"});
  EXPECT_FALSE(Has(LintOf(kClean, src.get()), "W118"));
  // A source that does not page by indexes (PostgreSQL) says nothing.
  line->indexes.clear();
  line->indexes_known = false;
  EXPECT_FALSE(Has(LintOf(kClean, src.get()), "W118"));
}

TEST(LintTest, DisabledRulesAreNotReported) {
  LintOptions o = Options();
  o.disabled = {"W103"};
  EXPECT_FALSE(Has(LintOf(R"(
  - name: shop:orders
    from: service_order
    families: [details]
    key:
      parts: [{column: order_id, width: 6}]
    columns: [{column: amount, to: "details:widen_test"}]
)",
                          nullptr, o),
                   "W103"));
}

}  // namespace
}  // namespace widen
