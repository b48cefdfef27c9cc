// Access patterns proven by `widen plan` (transform/access_plan.h), checked
// on a migrated store: for every key form (text, binary, desc, reverse,
// salt, hash prefix), every value of each pattern's `by` columns in the
// source is read back by scanning the store with the prefixes the proof
// gives (merging the salt buckets by the key after the salt), and the rows
// must be exactly those of the SQL `WHERE by = ... ORDER BY ...` on the
// source, in that order. Patterns a key cannot serve are NOT SERVED in
// `widen plan` (exit 2, with the fix) and E122 in `widen lint`, at the
// pattern's file:line:col. Both engines.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmd/run.h"
#include "common/bytes.h"
#include "store/store.h"
#include "tests/integration/test_env.h"
#include "transform/access_plan.h"

namespace widen::testing {
namespace {

// 90 orders of 6 customers: amounts negative, equal and with cents; times
// that repeat within a customer (ties broken by order_id, the last key
// part); regions whose byte order differs from a case-insensitive one.
std::vector<std::string> Schema(bool pg) {
  std::vector<std::string> sql = {
      pg ? "CREATE TABLE orders (order_id int PRIMARY KEY, customer_id int NOT NULL, placed_at "
           "timestamp NOT NULL, amount numeric(10,2) NOT NULL, region varchar(10) NOT NULL)"
         : "CREATE TABLE orders (order_id int PRIMARY KEY, customer_id int NOT NULL, placed_at "
           "datetime NOT NULL, amount decimal(10,2) NOT NULL, region varchar(10) NOT NULL) "
           "CHARACTER SET utf8mb4"};
  const char* regions[] = {"b", "B", "a", "\xc3\xa9t\xc3\xa9", "Z", "ab", "a b"};
  std::string insert = "INSERT INTO orders VALUES ";
  for (int i = 1; i <= 90; ++i) {
    const int customer = (i * 7) % 6 + 1;
    const int hours = (i * 37) % 23;  // repeats: ties within a customer
    const int cents = ((i * 1301) % 8001) - 4000;
    const std::string amount = fmt::format("{}{}.{:02d}", cents < 0 ? "-" : "",
                                           std::abs(cents) / 100, std::abs(cents) % 100);
    insert += fmt::format("{}({}, {}, '2024-01-0{} {:02d}:{:02d}:00', {}, '{}')",
                          i == 1 ? "" : ", ", i, customer, 1 + i % 3, hours, (i * 11) % 60, amount,
                          regions[static_cast<size_t>(i) % std::size(regions)]);
  }
  sql.push_back(insert);
  sql.push_back(pg ? "ANALYZE orders" : "ANALYZE TABLE orders");
  return sql;
}

// The key forms, each with the patterns it serves. `{sql}` marks the SQL
// ORDER BY each pattern's rows must follow (after WHERE by = values).
constexpr const char* kMapping = R"YAML(
source: ${WIDEN_SOURCE_URL}
timestamp_ms: 1700000000000
tables:
  - name: a:text
    from: orders
    families: [d]
    key:
      parts:
        - {column: customer_id, width: 5}
        - placed_at
        - {column: order_id, width: 8}
    columns: [amount]
    access:
      - {name: text_scan, by: [customer_id], order: [placed_at]}
      - {name: text_get, by: [customer_id, placed_at, order_id]}
  - name: a:binary
    from: orders
    families: [d]
    key:
      form: binary
      parts: [customer_id, region, amount, order_id]
    columns: [placed_at]
    access:
      - {name: binary_by_customer, by: [customer_id], order: [region]}
      - {name: binary_by_region, by: [customer_id, region], order: [amount]}
  - name: a:desc
    from: orders
    families: [d]
    key:
      form: binary
      parts: [customer_id, {column: amount, desc: true}, order_id]
    columns: [region]
    access:
      - {name: desc_scan, by: [customer_id], order: [amount desc]}
  - name: a:reverse
    from: orders
    families: [d]
    key:
      parts:
        - {column: customer_id, width: 5}
        - {column: placed_at, reverse: true}
        - {column: order_id, width: 8}
    columns: [amount]
    access:
      - {name: reverse_scan, by: [customer_id], order: [placed_at desc]}
  - name: a:salt
    from: orders
    families: [d]
    key:
      parts:
        - {column: customer_id, width: 5}
        - {column: order_id, width: 8}
      salt: {buckets: 4, parts: [order_id]}
    columns: [amount]
    access:
      - {name: salt_scan, by: [customer_id], order: [order_id]}
  - name: a:salt_lead
    from: orders
    families: [d]
    key:
      form: binary
      parts: [customer_id, placed_at, order_id]
      salt: {buckets: 8, parts: [customer_id]}
    columns: [amount]
    access:
      - {name: salt_lead_scan, by: [customer_id], order: [placed_at]}
  - name: a:hash
    from: orders
    families: [d]
    key:
      form: binary
      parts: [customer_id, order_id]
      hash_prefix: {bytes: 2, parts: [customer_id]}
    columns: [amount]
    access:
      - {name: hash_scan, by: [customer_id], order: [order_id]}
)YAML";

struct Expected {
  AccessKind kind;
  int buckets;
  std::string order_by;  // the SQL ORDER BY of the pattern's rows
};

class AccessPatternTest : public ::testing::TestWithParam<std::string> {
 protected:
  bool pg() const { return GetParam() == "pg"; }

  void SetUp() override {
    url_ = pg() ? PgUrl() : MySqlUrl();
    if (url_.empty()) {
      if (InCi()) FAIL() << "the " << GetParam() << " test server is not set under CI";
      GTEST_SKIP() << "no " << GetParam() << " test server (run through scripts/with-servers.sh)";
    }
    db_ = pg() ? FreshPgDatabase(url_, "widen_it_access")
               : FreshMySqlDatabase(url_, "widen_it_access");
    if (pg()) {
      for (const auto& s : Schema(true)) PgQuery(db_, s);
    } else {
      MySqlQuery(db_, Schema(false));
    }
    dir_ = MakeTempDir();
  }

  std::vector<std::vector<std::string>> Sql(const std::string& q) {
    return pg() ? PgQuery(db_, q) : MySqlQuery(db_, q);
  }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  // `text` as a SQL literal.
  static std::string Literal(const Value& v) {
    if (v.type() == ValueType::kInt || v.type() == ValueType::kDecimal) return v.ToText();
    std::string s = v.ToText();
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  }

  std::string url_, db_, dir_;
};

TEST_P(AccessPatternTest, EveryKeyFormReadsTheRowsTheSqlOrderGives) {
  const std::string mapping = Write("m.yaml", kMapping);
  const std::string store = "leveldb:" + dir_ + "/store";
  const std::string env = "WIDEN_SOURCE_URL=" + ShellQuote(db_) + " ";
  const CommandResult migrate =
      RunCommand(env + WidenBinary() + " migrate -q -m " + mapping + " --target " + store);
  ASSERT_EQ(migrate.exit_code, 0) << migrate.output;
  // Every pattern is proven as the key forms promise, and plan says so.
  const CommandResult plan =
      RunCommand(env + WidenBinary() + " plan --limit 1 --format json -m " + mapping);
  ASSERT_EQ(plan.exit_code, 0) << plan.output;

  // In the binary collation: the store orders text as bytes.
  const std::string bytes_region = pg() ? "region COLLATE \"C\"" : "CAST(region AS BINARY)";
  const std::map<std::string, Expected> expected = {
      {"text_scan", {AccessKind::kScan, 0, "placed_at, order_id"}},
      {"text_get", {AccessKind::kGet, 0, "order_id"}},
      {"binary_by_customer", {AccessKind::kScan, 0, bytes_region + ", amount, order_id"}},
      {"binary_by_region", {AccessKind::kScan, 0, "amount, order_id"}},
      {"desc_scan", {AccessKind::kScan, 0, "amount DESC, order_id"}},
      {"reverse_scan", {AccessKind::kScan, 0, "placed_at DESC, order_id"}},
      {"salt_scan", {AccessKind::kBucketScan, 4, "order_id"}},
      {"salt_lead_scan", {AccessKind::kScan, 0, "placed_at, order_id"}},
      {"hash_scan", {AccessKind::kScan, 0, "order_id"}},
  };

  setenv("WIDEN_SOURCE_URL", db_.c_str(), 1);
  DesignRequest r;
  r.mapping_path = mapping;
  auto design = LoadDesign(r);
  ASSERT_TRUE(design.ok()) << design.status().ToString();
  const Design& d = **design;
  const std::vector<AccessProof> proofs = ProveAccessPatterns(d.tables, d.schema);
  StoreOptions so;
  so.create_if_missing = false;
  auto target = Store::Open(store, so);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  ASSERT_EQ(proofs.size(), expected.size());
  const auto json = nlohmann::json::parse(plan.output.substr(plan.output.find('{')));
  // The order_ids of the rows one read of `proof` returns: each prefix
  // scanned in the store's order, the buckets merged by the key after the
  // salt.
  auto read_ids = [&](const AccessProof& proof, const std::vector<std::string>& prefixes) {
    const TablePlan& tp = *proof.served_by;
    const size_t salt_bytes =
        tp.key.salt().size == 0 ? 0
        : tp.key.form() == KeyForm::kBinary
            ? 1
            : std::to_string(tp.key.salt().size - 1).size() + tp.key.separator().size();
    std::vector<std::string> keys;
    for (const std::string& prefix : prefixes) {
      std::vector<std::string> bucket;
      ReadOptions ro;
      ro.row_prefix = prefix;
      auto reader = (*target)->NewReader(tp.descriptor.FullName(), ro);
      EXPECT_TRUE(reader.ok()) << reader.status().ToString();
      if (!reader.ok()) return std::vector<std::string>();
      for (; (*reader)->Valid(); (*reader)->Next()) {
        const std::string_view row = (*reader)->cell().row;
        if (bucket.empty() || bucket.back() != row) bucket.emplace_back(row);
      }
      EXPECT_TRUE((*reader)->status().ok());
      EXPECT_TRUE(std::is_sorted(bucket.begin(), bucket.end()));
      keys.insert(keys.end(), bucket.begin(), bucket.end());
    }
    if (proof.kind == AccessKind::kBucketScan) {
      std::sort(keys.begin(), keys.end(), [&](const std::string& a, const std::string& b) {
        return a.substr(salt_bytes) < b.substr(salt_bytes);
      });
    }
    std::vector<std::string> ids;
    for (const std::string& k : keys) {
      auto row = tp.key.DecodeRow(k);
      EXPECT_TRUE(row.ok()) << row.status().ToString();
      if (row.ok()) ids.push_back((*row)[tp.key.parts().back().index].ToText());
    }
    return ids;
  };
  auto sql_ids = [&](const std::string& condition, const std::string& order_by) {
    std::vector<std::string> ids;
    for (const auto& line : Sql(fmt::format("SELECT order_id FROM orders WHERE {} ORDER BY {}",
                                            condition, order_by))) {
      ids.push_back(line.front());
    }
    return ids;
  };
  for (const AccessProof& proof : proofs) {
    const std::string name = proof.pattern->name;
    SCOPED_TRACE(name);
    const Expected& e = expected.at(name);
    ASSERT_EQ(proof.kind, e.kind) << proof.problem;
    EXPECT_EQ(proof.buckets, e.buckets);
    EXPECT_EQ(proof.served_by, proof.declared_on);
    // plan's JSON gives the same verdict.
    bool in_json = false;
    for (const auto& t : json["tables"]) {
      for (const auto& a : t["access"]) {
        if (a["name"] != name) continue;
        in_json = true;
        EXPECT_EQ(a["served"], std::string(AccessKindNames().Name(e.kind)));
        ASSERT_FALSE(a["example"].is_null()) << a.dump();
        // The read plan gives as its example returns the SQL's rows.
        std::vector<std::string> prefixes, where;
        for (const auto& p : a["example"]["prefixes"]) {
          std::string bytes;
          ASSERT_TRUE(FromStringBinary(p.get<std::string>(), &bytes));
          prefixes.push_back(bytes);
        }
        for (const auto& [column, value] : a["example"]["by"].items()) {
          where.push_back(
              fmt::format("{}{} = {}", !pg() && column == "region" ? "BINARY " : "", column,
                          Literal(Value::Str(ValueType::kText, value.get<std::string>()))));
        }
        const std::string condition = fmt::format("{}", fmt::join(where, " AND "));
        const std::vector<std::string> want = sql_ids(condition, e.order_by);
        EXPECT_FALSE(want.empty());
        EXPECT_EQ(read_ids(proof, prefixes), want) << condition;
      }
    }
    EXPECT_TRUE(in_json);

    // Every distinct `by` value of the source rows, with its prefixes.
    const TablePlan& tp = *proof.served_by;
    auto stream = d.source->Scan(tp.scan);
    ASSERT_TRUE(stream.ok()) << stream.status().ToString();
    std::map<std::string, std::pair<std::vector<std::string>, std::string>> reads;
    for (; (*stream)->Valid(); (*stream)->Next()) {
      const Row& row = (*stream)->row();
      std::vector<std::string> where;
      for (size_t i = 0; i < proof.by_indexes.size(); ++i) {
        const Value& v = row[proof.by_indexes[i]];
        // Text compared as bytes, as the store tells keys apart (MySQL's
        // collations would match 'b' with 'B').
        const bool bytes = !pg() && v.type() == ValueType::kText;
        where.push_back(fmt::format("{}{} = {}", bytes ? "BINARY " : "",
                                    proof.pattern->by[i].column.column, Literal(v)));
      }
      const std::string condition = fmt::format("{}", fmt::join(where, " AND "));
      if (reads.count(condition) > 0) continue;
      std::vector<std::string> prefixes;
      ASSERT_TRUE(AccessPrefixes(proof, row, &prefixes).ok());
      ASSERT_EQ(prefixes.size(), e.kind == AccessKind::kBucketScan ? 4u : 1u);
      reads[condition] = {prefixes, ""};
    }
    ASSERT_TRUE((*stream)->status().ok());
    ASSERT_GE(reads.size(), 6u);
    for (const auto& [condition, read] : reads) {
      const std::vector<std::string> got = read_ids(proof, read.first);
      const std::vector<std::string> want = sql_ids(condition, e.order_by);
      EXPECT_EQ(got, want) << condition;
      if (e.kind == AccessKind::kGet) {
        EXPECT_EQ(got.size(), 1u);
      }
    }
  }
}

// Patterns no key serves: plan says NOT SERVED with the key that would
// serve it (exit 2), lint reports E122 at the pattern; a pattern its own
// table does not serve but a duplicate of the same rows does is served.
TEST_P(AccessPatternTest, UnservedPatternsAreErrorsWithTheFix) {
  const std::string mapping = Write("bad.yaml", R"YAML(source: ${WIDEN_SOURCE_URL}
tables:
  - name: a:by_customer
    from: orders
    families: [d]
    key:
      form: binary
      parts: [customer_id, order_id]
      hash_prefix: {bytes: 2, parts: [order_id]}
    columns: [amount]
    access:
      - {name: hashed_away, by: [customer_id]}
      - {name: newest_first, by: [customer_id], order: [placed_at desc]}
      - {name: by_region, by: [region]}
  - name: a:by_region
    from: orders
    families: [d]
    key: {form: binary, parts: [region, order_id]}
    columns: [amount]
)YAML");
  const std::string env = "WIDEN_SOURCE_URL=" + ShellQuote(db_) + " ";
  const CommandResult plan = RunCommand(env + WidenBinary() + " plan --limit 1 -m " + mapping);
  EXPECT_EQ(plan.exit_code, 2) << plan.output;
  EXPECT_NE(plan.output.find("hashed_away (" + mapping +
                             ":12:9): ERROR: NOT SERVED: the key's hash prefix hashes 'order_id'"),
            std::string::npos)
      << plan.output;
  EXPECT_NE(plan.output.find("newest_first (" + mapping + ":13:9): ERROR: NOT SERVED"),
            std::string::npos);
  // int holds 10 digits (2147483647): the text form pads to them.
  EXPECT_NE(plan.output.find("fix: a table keyed by key: {parts: [{column: customer_id, width: "
                             "10}, {column: placed_at, reverse: true}, {column: order_id, width: "
                             "10}]} serves it: change this table's key, or add a table with that "
                             "key (duplication: {name: a:by_customer_by_customer_id, from: "
                             "orders, ...}"),
            std::string::npos)
      << plan.output;
  EXPECT_NE(plan.output.find("by_region (" + mapping +
                             ":14:9): SCAN: one prefix Scan of the "
                             "prefix (region) — in table a:by_region"),
            std::string::npos)
      << plan.output;
  EXPECT_NE(plan.output.find("2 access pattern(s) not served"), std::string::npos);

  const CommandResult lint = RunCommand(env + WidenBinary() + " lint -m " + mapping);
  EXPECT_EQ(lint.exit_code, 2) << lint.output;
  EXPECT_NE(lint.output.find(mapping + ":12:9: error E122: a:by_customer: access pattern "
                                       "'hashed_away' is not served"),
            std::string::npos)
      << lint.output;
  EXPECT_NE(lint.output.find(mapping + ":13:9: error E122"), std::string::npos) << lint.output;
  EXPECT_EQ(lint.output.find("'by_region' is not served"), std::string::npos) << lint.output;
}

INSTANTIATE_TEST_SUITE_P(Engines, AccessPatternTest, ::testing::Values("pg", "mysql"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace widen::testing
