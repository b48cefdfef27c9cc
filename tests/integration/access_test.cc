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
           "timestamp(0) NOT NULL, amount numeric(10,2) NOT NULL, region varchar(10) NOT NULL)"
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
                             "key (duplication: {name: a:orders_by_customer_id2, from: "
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

// Events whose text key parts have no fixed width (timestamps with
// fractions, strings that start one another), NULLs, and unique tails:
// every order plan promises is the order the store gives, compared with
// SQL. A text part followed by others is NOT SERVED when its width varies
// (and lint W116 says why); plan's own fix for it — a duplicate table with
// the key it suggests — is served, and reads the rows in the SQL order.
// NULL markers sort first (desc: last), as the proof says; order columns
// after a unique prefix of the key change nothing and are served.
TEST_P(AccessPatternTest, EveryPromisedOrderIsTheStoresOrder) {
  std::vector<std::string> sql = {
      pg() ? "CREATE TABLE ev (dev int NOT NULL, at timestamp(6) NOT NULL, seq int NOT NULL, id "
             "int NOT NULL UNIQUE, kind varchar(10) NOT NULL, grp int, PRIMARY KEY (dev, at, seq))"
           : "CREATE TABLE ev (dev int NOT NULL, at datetime(6) NOT NULL, seq int NOT NULL, id "
             "int NOT NULL UNIQUE, kind varchar(10) NOT NULL, grp int, PRIMARY KEY (dev, at, "
             "seq)) CHARACTER SET utf8mb4"};
  const char* ats[] = {"00:00:00",    "00:00:00.5",    "00:00:01",
                       "00:00:00.25", "00:00:00.0001", "00:00:00.0005"};
  const char* kinds[] = {"", "B", "a", "a b", "b", "\xc3\xa4", "ab"};
  std::string insert = "INSERT INTO ev VALUES ";
  int id = 0;
  for (int dev = 1; dev <= 2; ++dev) {
    for (const char* at : ats) {
      for (int seq = 1; seq <= 2; ++seq) {
        ++id;
        insert += fmt::format("{}({}, '2020-01-01 {}', {}, {}, '{}', {})", id == 1 ? "" : ", ", dev,
                              at, seq, id, kinds[static_cast<size_t>(id * 5) % std::size(kinds)],
                              id % 3 == 0 ? "NULL" : std::to_string((id * 7) % 4));
      }
    }
  }
  sql.push_back(insert);
  if (pg()) {
    for (const auto& q : sql) PgQuery(db_, q);
  } else {
    MySqlQuery(db_, sql);
  }
  const std::string head = R"YAML(source: ${WIDEN_SOURCE_URL}
timestamp_ms: 1700000000000
tables:
  - name: t:ev
    from: ev
    families: [d]
    key:
      parts: [{column: dev, width: 5}, at, {column: seq, width: 5}]
    columns: [id]
    access:
      - {name: at_text, by: [dev], order: [at]}
      - {name: tail_free, by: [dev, at], order: [seq, grp]}
  - name: t:ev_kind
    from: ev
    families: [d]
    key:
      parts: [{column: dev, width: 5}, kind, {column: id, width: 5}]
    columns: [id]
    access:
      - {name: kind_text, by: [dev], order: [kind]}
  - name: t:ev_grp
    from: ev
    families: [d]
    key: {form: binary, parts: [dev, {column: grp, on_null: marker}, id]}
    columns: [id]
    access:
      - {name: nulls_first, by: [dev], order: [grp]}
  - name: t:ev_grp_desc
    from: ev
    families: [d]
    key: {form: binary, parts: [dev, {column: grp, desc: true, on_null: marker}, id]}
    columns: [id]
    access:
      - {name: nulls_last, by: [dev], order: [grp desc, id]}
  - name: t:ev_id
    from: ev
    families: [d]
    key: {form: binary, parts: [dev, id, kind]}
    columns: [id]
    access:
      - {name: unique_held, by: [dev], order: [id, grp]}
)YAML";
  const std::string env = "WIDEN_SOURCE_URL=" + ShellQuote(db_) + " ";
  const std::string first = Write("first.yaml", head);
  const CommandResult plan =
      RunCommand(env + WidenBinary() + " plan --limit 0 --format json -m " + first);
  EXPECT_EQ(plan.exit_code, 2) << plan.output;
  const size_t open = plan.output.find('{');
  const auto json =
      nlohmann::json::parse(plan.output.substr(open, plan.output.rfind('}') + 1 - open));
  std::map<std::string, nlohmann::json> verdicts;
  for (const auto& t : json["tables"]) {
    for (const auto& a : t["access"]) verdicts[a["name"].get<std::string>()] = a;
  }
  ASSERT_EQ(verdicts.size(), 6u);
  EXPECT_EQ(verdicts["at_text"]["served"], "not_served") << verdicts["at_text"].dump();
  EXPECT_NE(verdicts["at_text"]["problem"].get<std::string>().find(
                "('2020-01-01 00:00:00' starts '2020-01-01 00:00:00.5')"),
            std::string::npos);
  EXPECT_EQ(verdicts["kind_text"]["served"], "not_served") << verdicts["kind_text"].dump();
  EXPECT_NE(verdicts["nulls_first"]["how"].get<std::string>().find("grp ascending, NULLs first"),
            std::string::npos)
      << verdicts["nulls_first"].dump();
  EXPECT_NE(verdicts["nulls_last"]["how"].get<std::string>().find("grp descending (a desc part), "
                                                                  "NULLs last"),
            std::string::npos)
      << verdicts["nulls_last"].dump();
  EXPECT_NE(verdicts["tail_free"]["how"].get<std::string>().find("then grp (no two rows tie"),
            std::string::npos)
      << verdicts["tail_free"].dump();
  EXPECT_EQ(verdicts["unique_held"]["served"], "scan") << verdicts["unique_held"].dump();
  const CommandResult lint = RunCommand(env + WidenBinary() + " lint -m " + first);
  EXPECT_NE(lint.output.find(first + ":8:40: warning W116: t:ev: row key part 'at' does not keep "
                                     "the key in its order"),
            std::string::npos)
      << lint.output;
  EXPECT_NE(lint.output.find(first + ":17:40: warning W116: t:ev_kind: row key part 'kind'"),
            std::string::npos)
      << lint.output;

  // Plan's fixes, as it words them: a table with the key it suggests.
  std::string fixes;
  for (const char* name : {"at_text", "kind_text"}) {
    const std::string fix = verdicts[name]["fix"].get<std::string>();
    const size_t k = fix.find("key: {"), k_end = fix.find("} serves it");
    const size_t n = fix.find("{name: "), n_end = fix.find(", from: ", n);
    ASSERT_NE(k, std::string::npos) << fix;
    ASSERT_NE(n, std::string::npos) << fix;
    fixes +=
        fmt::format("  - name: {}\n    from: ev\n    families: [d]\n    {}}}\n    columns: [id]\n",
                    fix.substr(n + 7, n_end - n - 7), fix.substr(k, k_end - k));
  }
  EXPECT_NE(fixes.find("name: t:ev_by_dev\n"), std::string::npos) << fixes;
  EXPECT_NE(fixes.find("name: t:ev_by_dev2\n"), std::string::npos) << fixes;
  const std::string mapping = Write("fixed.yaml", head + fixes);
  const CommandResult fixed =
      RunCommand(env + WidenBinary() + " plan --limit 0 --format json -m " + mapping);
  ASSERT_EQ(fixed.exit_code, 0) << fixed.output << "\n" << fixes;
  const std::string store = "leveldb:" + dir_ + "/store";
  const CommandResult migrate =
      RunCommand(env + WidenBinary() + " migrate -q -m " + mapping + " --target " + store);
  ASSERT_EQ(migrate.exit_code, 0) << migrate.output;

  // Each read, for every `by` value of the source, against SQL.
  const std::string bytes_kind = pg() ? "kind COLLATE \"C\"" : "CAST(kind AS BINARY)";
  const std::map<std::string, std::string> order_by = {{"at_text", "at, seq"},
                                                       {"tail_free", "seq"},
                                                       {"kind_text", bytes_kind + ", at, seq"},
                                                       {"nulls_first", "grp IS NULL DESC, grp, id"},
                                                       {"nulls_last", "grp IS NULL, grp DESC, id"},
                                                       {"unique_held", "id"}};
  setenv("WIDEN_SOURCE_URL", db_.c_str(), 1);
  DesignRequest r;
  r.mapping_path = mapping;
  auto design = LoadDesign(r);
  ASSERT_TRUE(design.ok()) << design.status().ToString();
  const Design& d = **design;
  size_t reads = 0;
  for (const AccessProof& proof : ProveAccessPatterns(d.tables, d.schema)) {
    const std::string name = proof.pattern->name;
    SCOPED_TRACE(name);
    ASSERT_NE(proof.kind, AccessKind::kNotServed) << proof.problem;
    EXPECT_EQ(proof.served_by != proof.declared_on, name == "at_text" || name == "kind_text");
    auto stream = d.source->Scan(proof.served_by->scan);
    ASSERT_TRUE(stream.ok());
    std::set<std::string> done;
    for (; (*stream)->Valid(); (*stream)->Next()) {
      const Row& row = (*stream)->row();
      std::vector<std::string> where;
      for (size_t i = 0; i < proof.by_indexes.size(); ++i) {
        where.push_back(fmt::format("{} = {}", proof.pattern->by[i].column.column,
                                    Literal(row[proof.by_indexes[i]])));
      }
      const std::string condition = fmt::format("{}", fmt::join(where, " AND "));
      if (!done.insert(condition).second) continue;
      std::vector<std::string> prefixes;
      ASSERT_TRUE(AccessPrefixes(proof, row, &prefixes).ok());
      ASSERT_EQ(prefixes.size(), 1u);
      std::vector<std::string> got, want;
      for (const CellRecord& c :
           ReadCells(store, proof.served_by->descriptor.FullName(), 1, prefixes.front())) {
        got.push_back(c.value);
      }
      for (const auto& line : Sql(fmt::format("SELECT id FROM ev WHERE {} ORDER BY {}", condition,
                                              order_by.at(name)))) {
        want.push_back(line.front());
      }
      EXPECT_FALSE(want.empty());
      EXPECT_EQ(got, want) << condition;
      ++reads;
    }
  }
  EXPECT_GE(reads, 20u);
}

// A duplicate serves a pattern only when it holds the rows the pattern
// reads: a join of the same table on other columns (a message's recipient
// is not its sender), a `where` with another condition, or rows that can
// have no cell (every mapped value NULL) are other rows; a join under
// another alias, or a `where` that only adds IS NOT NULL of a `by` column,
// are the same rows, and the read gives the SQL's rows.
TEST_P(AccessPatternTest, DuplicatesServeOnlyWhenTheyHoldTheSameRows) {
  const std::vector<std::string> sql = {
      "CREATE TABLE person (person_id int PRIMARY KEY, name varchar(20) NOT NULL)",
      "CREATE TABLE msg (id int PRIMARY KEY, sender_id int NOT NULL REFERENCES person "
      "(person_id), recipient_id int NOT NULL REFERENCES person (person_id), amount int NOT NULL, "
      "kind varchar(5) NOT NULL, shelf varchar(5))",
      "INSERT INTO person VALUES (1, 'ann'), (2, 'bob'), (3, 'cy')",
      "INSERT INTO msg VALUES (1, 1, 2, 5, 'a', NULL), (2, 1, 3, -1, 'b', 'x'), (3, 2, 1, 0, 'a', "
      "NULL), (4, 3, 1, 7, 'c', 'y'), (5, 2, 3, 2, 'b', NULL), (6, 3, 2, 9, 'a', 'z')"};
  if (pg()) {
    for (const auto& q : sql) PgQuery(db_, q);
  } else {
    MySqlQuery(db_, sql);
  }
  const std::string mapping = Write("dup.yaml", R"YAML(source: ${WIDEN_SOURCE_URL}
timestamp_ms: 1700000000000
tables:
  - name: t:msg
    from: msg
    families: [d]
    key: {parts: [{column: id, width: 5}]}
    joins:
      - {table: person, as: sender, "on": {sender_id: person_id}}
    columns: [id, amount]
    access:
      - {name: by_sender, by: [sender.name]}
      - {name: by_kind, by: [kind]}
  - name: t:msg_by_recipient
    from: msg
    families: [d]
    joins:
      - {table: person, as: recipient, "on": {recipient_id: person_id}}
    key: {form: binary, parts: [{column: recipient.name, on_null: marker}, id]}
    columns: [id]
  - name: t:msg_positive
    from: msg
    where: "amount > 0 AND kind <> 'c'"
    families: [d]
    key: {form: binary, parts: [kind, id]}
    columns: [id]
  - name: t:msg_shelf
    from: msg
    families: [d]
    key: {form: binary, parts: [kind, id]}
    columns: [shelf]
    access:
      - {name: shelf_by_kind, by: [kind]}
  - name: t:msg_by_kind
    from: msg
    where: kind IS NOT NULL
    families: [d]
    key: {form: binary, parts: [kind, id]}
    columns: [id]
  - name: t:msg_by_sender
    from: msg
    families: [d]
    joins:
      - {table: person, as: s, "on": {sender_id: person_id}}
    key: {form: binary, parts: [{column: s.name, on_null: marker}, id]}
    columns: [id]
)YAML");
  const std::string env = "WIDEN_SOURCE_URL=" + ShellQuote(db_) + " ";
  const CommandResult plan = RunCommand(env + WidenBinary() + " plan --limit 0 -m " + mapping);
  EXPECT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_NE(plan.output.find("by_sender (" + mapping +
                             ":12:9): SCAN: one prefix Scan of the "
                             "prefix (name) — in table t:msg_by_sender"),
            std::string::npos)
      << plan.output;
  EXPECT_NE(plan.output.find("by_kind (" + mapping +
                             ":13:9): SCAN: one prefix Scan of the "
                             "prefix (kind) — in table t:msg_by_kind"),
            std::string::npos)
      << plan.output;
  // Its own table's rows can have no cell; t:msg_by_kind holds them all.
  EXPECT_NE(plan.output.find("shelf_by_kind (" + mapping +
                             ":33:9): SCAN: one prefix Scan of the "
                             "prefix (kind) — in table t:msg_by_kind"),
            std::string::npos)
      << plan.output;

  // Without the right duplicates, neither is served: not by the recipient's
  // table, nor by the one with other conditions or rows without cells.
  std::ifstream in(mapping);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text = text.substr(0, text.find("  - name: t:msg_by_kind"));
  const std::string wrong = Write("wrong.yaml", text);
  const CommandResult lint = RunCommand(env + WidenBinary() + " lint -m " + wrong);
  EXPECT_EQ(lint.exit_code, 2) << lint.output;
  for (const char* at : {":12:9: error E122: t:msg: access pattern 'by_sender' is not served",
                         ":13:9: error E122: t:msg: access pattern 'by_kind' is not served",
                         ":33:9: error E122: t:msg_shelf: access pattern 'shelf_by_kind' is not "
                         "served by any table's row key: every cell a row writes can be left out "
                         "(shelf can be NULL)"}) {
    EXPECT_NE(lint.output.find(wrong + at), std::string::npos) << at << "\n" << lint.output;
  }

  // The rows without a cell are missing from the store indeed; the served
  // reads give the SQL's rows.
  const std::string store = "leveldb:" + dir_ + "/store";
  const CommandResult migrate =
      RunCommand(env + WidenBinary() + " migrate -q -m " + mapping + " --target " + store);
  ASSERT_EQ(migrate.exit_code, 0) << migrate.output;
  std::set<std::string> shelf_rows;
  for (const CellRecord& c : ReadCells(store, "t:msg_shelf")) shelf_rows.insert(c.row);
  EXPECT_EQ(std::to_string(shelf_rows.size()),
            Sql("SELECT count(*) FROM msg WHERE shelf IS NOT NULL").front().front());
  EXPECT_LT(shelf_rows.size(), 6u);
  setenv("WIDEN_SOURCE_URL", db_.c_str(), 1);
  DesignRequest r;
  r.mapping_path = mapping;
  auto design = LoadDesign(r);
  ASSERT_TRUE(design.ok()) << design.status().ToString();
  const Design& d = **design;
  for (const AccessProof& proof : ProveAccessPatterns(d.tables, d.schema)) {
    if (proof.kind == AccessKind::kNotServed) continue;
    const std::string name = proof.pattern->name;
    for (const char* value : {"ann", "bob", "cy", "a", "b", "c"}) {
      Row row;
      row.values.resize(proof.served_by->scan.columns.size());
      row.values[proof.by_indexes.front()] = Value::Str(ValueType::kText, value);
      std::vector<std::string> prefixes;
      ASSERT_TRUE(AccessPrefixes(proof, row, &prefixes).ok());
      std::vector<std::string> got, want;
      for (const CellRecord& c :
           ReadCells(store, proof.served_by->descriptor.FullName(), 1, prefixes.front())) {
        got.push_back(c.value);
      }
      const std::string q =
          name == "by_sender"
              ? fmt::format(
                    "SELECT m.id FROM msg m JOIN person p ON p.person_id = m.sender_id "
                    "WHERE p.name = '{}' ORDER BY m.id",
                    value)
              : fmt::format("SELECT id FROM msg WHERE kind = '{}' ORDER BY id", value);
      for (const auto& line : Sql(q)) want.push_back(line.front());
      EXPECT_EQ(got, want) << name << " " << value;
    }
  }
}

// The columns a pattern names are checked as every other column (E100,
// with "did you mean"; a nested table's column said to be one), and the
// key plan suggests is one the mapping can take: a joined text column in
// the binary form with a NULL marker, a nullable order column with a
// marker, a free-form query's key kept unique by the current key's parts.
TEST_P(AccessPatternTest, PatternColumnsAreCheckedAndSuggestedKeysHold) {
  const std::vector<std::string> sql = {
      "CREATE TABLE cust (customer_id int PRIMARY KEY, email varchar(40), region varchar(10) NOT "
      "NULL)",
      "CREATE TABLE note (order_id int NOT NULL, line int NOT NULL, txt varchar(10), PRIMARY KEY "
      "(order_id, line))",
      "INSERT INTO cust VALUES (1, 'a@x', 'n'), (2, NULL, 'n'), (3, 'b@x', 's'), (4, 'a|b@x', "
      "'s'), "
      "(5, NULL, 'e'), (6, 'c@x', 'e')",
      "INSERT INTO note VALUES (1, 1, 'x'), (1, 2, 'y'), (2, 1, 'z')"};
  if (pg()) {
    for (const auto& q : sql) PgQuery(db_, q);
  } else {
    MySqlQuery(db_, sql);
  }
  const std::string env = "WIDEN_SOURCE_URL=" + ShellQuote(db_) + " ";
  auto mapping = [&](const std::string& name, const std::string& access) {
    return Write(name, R"YAML(source: ${WIDEN_SOURCE_URL}
tables:
  - name: a:orders
    from: orders
    families: [d, n]
    key: {parts: [{column: order_id, width: 8}]}
    joins:
      - {table: cust, as: c, "on": {customer_id: customer_id}}
    columns: [amount]
    nest:
      - {table: note, "on": {order_id: order_id}, family: n, prefix: x, id: [line]}
    access:
      - )YAML" + access + "\n");
  };
  const std::string unknown = mapping("unknown.yaml", "{name: p, by: [customerid]}");
  CommandResult r = RunCommand(env + WidenBinary() + " lint -m " + unknown);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(unknown +
                          ":13:24: error E100: a:orders: source table 'orders' has no "
                          "column 'customerid'; did you mean 'customer_id'? (access pattern 'p')"),
            std::string::npos)
      << r.output;
  const std::string nested = mapping("nested.yaml", "{name: p, by: [line]}");
  r = RunCommand(env + WidenBinary() + " plan --limit 0 -m " + nested);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("has no column 'line'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'line' is a column of the nested table note, whose rows are cells of "
                          "this row, not rows: a pattern reads row keys"),
            std::string::npos)
      << r.output;
  const std::string joined = mapping("joined.yaml", "{name: p, by: [c.email], order: [order_id]}");
  r = RunCommand(env + WidenBinary() + " plan --limit 0 -m " + joined);
  EXPECT_NE(r.output.find("fix: a table keyed by key: {form: binary, parts: [{column: c.email, "
                          "on_null: marker}, order_id]} serves it"),
            std::string::npos)
      << r.output;
  // Its suggestion, as a duplicate with the join: served, and every email
  // (one holds the separator) finds its orders.
  const std::string fixed = Write("fixed.yaml", R"YAML(source: ${WIDEN_SOURCE_URL}
tables:
  - name: a:orders
    from: orders
    families: [d]
    key: {parts: [{column: order_id, width: 8}]}
    joins:
      - {table: cust, as: c, "on": {customer_id: customer_id}}
    columns: [order_id]
    access:
      - {name: p, by: [c.email], order: [order_id]}
  - name: a:orders_by_c_email
    from: orders
    families: [d]
    joins:
      - {table: cust, as: cu, "on": {customer_id: customer_id}}
    key: {form: binary, parts: [{column: cu.email, on_null: marker}, order_id]}
    columns: [order_id]
  - name: a:cust
    from: cust
    families: [d]
    key: {parts: [{column: customer_id, width: 3}]}
    columns: [customer_id]
    access:
      - {name: q, by: [region], order: [email]}
  - name: a:cust_q
    from: c
    query: SELECT customer_id, region FROM cust
    families: [d]
    key: {parts: [{column: customer_id, width: 3, on_null: reject}]}
    columns: [region]
    access:
      - {name: byregion, by: [region], order: [customer_id DESC]}
)YAML");
  r = RunCommand(env + WidenBinary() + " plan --limit 0 -m " + fixed);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("p (" + fixed +
                          ":11:9): SCAN: one prefix Scan of the prefix (email); "
                          "rows come ordered by order_id ascending — in table a:orders_by_c_email"),
            std::string::npos)
      << r.output;
  // A nullable order column: a NULL marker keeps the rows (binary).
  EXPECT_NE(r.output.find("fix: a table keyed by key: {form: binary, parts: [region, {column: "
                          "email, on_null: marker}, customer_id]} serves it"),
            std::string::npos)
      << r.output;
  // A query's key: the current key's part keeps it unique.
  EXPECT_NE(r.output.find("fix: a table keyed by key: {form: binary, parts: [{column: region, "
                          "on_null: marker}, {column: customer_id, desc: true, on_null: reject}]} "
                          "serves it"),
            std::string::npos)
      << r.output;
  const std::string store = "leveldb:" + dir_ + "/store";
  r = RunCommand(env + WidenBinary() + " migrate -q -m " + fixed + " --target " + store +
                 " --table a:orders_by_c_email");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  setenv("WIDEN_SOURCE_URL", db_.c_str(), 1);
  DesignRequest dr;
  dr.mapping_path = fixed;
  auto design = LoadDesign(dr);
  ASSERT_TRUE(design.ok()) << design.status().ToString();
  const AccessProof proof = ProveAccessPatterns((*design)->tables, (*design)->schema).front();
  ASSERT_EQ(proof.kind, AccessKind::kScan) << proof.problem;
  for (const char* email : {"a@x", "b@x", "a|b@x", "c@x"}) {
    Row row;
    row.values.resize(proof.served_by->scan.columns.size());
    row.values[proof.by_indexes.front()] = Value::Str(ValueType::kText, email);
    std::vector<std::string> prefixes;
    ASSERT_TRUE(AccessPrefixes(proof, row, &prefixes).ok());
    std::vector<std::string> got, want;
    for (const CellRecord& c : ReadCells(store, "a:orders_by_c_email", 1, prefixes.front())) {
      got.push_back(c.value);
    }
    for (const auto& line :
         Sql(fmt::format("SELECT o.order_id FROM orders o JOIN cust c ON c.customer_id = "
                         "o.customer_id WHERE c.email = '{}' ORDER BY o.order_id",
                         email))) {
      want.push_back(line.front());
    }
    EXPECT_FALSE(want.empty()) << email;
    EXPECT_EQ(got, want) << email;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, AccessPatternTest, ::testing::Values("pg", "mysql"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace widen::testing
