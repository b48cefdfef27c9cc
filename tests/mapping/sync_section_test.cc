// The mapping's `sync:` section as the loader reads it: every field parsed
// into the model, and each mistake refused with its exact message and
// file:line:col. Checks against a source schema: tests/integration/sync_plan_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "mapping/mapping.h"

namespace widen {
namespace {

// Lines 1-20; the sync section starts on line 21, its first entry on line 22.
const char kTables[] = R"(source: s
tables:
  - name: s:orders
    from: orders
    families: [d]
    key: {parts: [id]}
    joins: [{table: customer, on: {customer_id: id}}]
    columns: [status]
    nest:
      - table: line
        on: {id: order_id}
        family: d
        id: [no]
        joins: [{table: product, on: {product_id: id}}]
  - name: s:report
    from: report
    query: SELECT 1 AS x
    families: [d]
    key: {parts: [x]}
    columns: [x]
sync:
)";

Result<Mapping> Parse(const std::string& sync) {
  return ParseMapping(std::string(kTables) + sync, "m.yaml");
}

// The message of the error loading `sync`, or "" when it loads.
std::string ErrorOf(const std::string& sync) {
  auto m = Parse(sync);
  if (m.ok()) return "";
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument) << m.status().ToString();
  return std::string(m.status().message());
}

TEST(SyncSectionTest, ParsesEveryField) {
  auto m = Parse(R"(  - table: orders
    mode: watermark
    watermark: updated_at
    tiebreak: [id, code]
    lookback: 1h30m
    deletes:
      soft: {column: deleted, value: 'yes'}
      reconcile: true
  - table: customer
    mode: watermark
    watermark: version
    tiebreak: id
    lookback: 500
  - table: line
    mode: digest
  - table: product
)");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->sync.size(), 4u);

  const SyncSpec& o = m->sync[0];
  EXPECT_EQ(o.table, "orders");
  EXPECT_EQ(o.loc.ToString(), "m.yaml:22:5");
  EXPECT_EQ(o.mode, SyncMode::kWatermark);
  EXPECT_EQ(o.watermark.name, "updated_at");
  EXPECT_EQ(o.watermark.loc.ToString(), "m.yaml:24:16");
  ASSERT_EQ(o.tiebreak.size(), 2u);
  EXPECT_EQ(o.tiebreak[0].name, "id");
  EXPECT_EQ(o.tiebreak[1].name, "code");
  EXPECT_EQ(o.tiebreak[1].loc.ToString(), "m.yaml:25:20");
  EXPECT_EQ(o.tiebreak_loc.ToString(), "m.yaml:25:15");
  EXPECT_TRUE(o.lookback.given);
  EXPECT_EQ(o.lookback.unit, LookbackUnit::kMilliseconds);
  EXPECT_EQ(o.lookback.amount, (60 + 30) * 60 * 1000);
  EXPECT_EQ(o.lookback.loc.ToString(), "m.yaml:26:15");
  ASSERT_TRUE(o.soft_delete.has_value());
  EXPECT_EQ(o.soft_delete->column.name, "deleted");
  EXPECT_EQ(o.soft_delete->value, "yes");
  EXPECT_EQ(o.soft_delete->value_loc.ToString(), "m.yaml:28:38");
  EXPECT_TRUE(o.reconcile);

  const SyncSpec& c = m->sync[1];
  EXPECT_EQ(c.mode, SyncMode::kWatermark);
  ASSERT_EQ(c.tiebreak.size(), 1u);  // one column may be written without a list
  EXPECT_EQ(c.tiebreak[0].name, "id");
  EXPECT_EQ(c.lookback.unit, LookbackUnit::kValues);
  EXPECT_EQ(c.lookback.amount, 500);
  EXPECT_FALSE(c.soft_delete.has_value());
  EXPECT_FALSE(c.reconcile);

  EXPECT_EQ(m->sync[2].mode, SyncMode::kDigest);
  EXPECT_EQ(m->sync[3].mode, SyncMode::kDigest);  // the default
  EXPECT_FALSE(m->sync[3].lookback.given);

  EXPECT_EQ(m->FindSync("line"), &m->sync[2]);
  EXPECT_EQ(m->FindSync("report"), nullptr);
  EXPECT_EQ(m->SourceTables(), (std::vector<std::string>{"orders", "customer", "line", "product"}));
}

TEST(SyncSectionTest, NoSectionMeansNoEntries) {
  auto m =
      ParseMapping(std::string(kTables).substr(0, std::string(kTables).find("sync:")), "m.yaml");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->sync.empty());
  EXPECT_EQ(m->FindSync("orders"), nullptr);
}

TEST(SyncSectionTest, AnEmptySectionHasNoEntries) {
  auto m = Parse("");  // `sync:` with every entry left out (or commented out)
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->sync.empty());
}

TEST(SyncSectionTest, DefaultsOfAWatermarkEntry) {
  auto m = Parse("  - {table: orders, mode: watermark, watermark: updated_at}\n");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const SyncSpec& o = m->sync[0];
  EXPECT_TRUE(o.tiebreak.empty());  // the primary key, resolved by the planner
  EXPECT_EQ(o.tiebreak_loc.line, 0);
  EXPECT_FALSE(o.lookback.given);
  EXPECT_FALSE(o.soft_delete.has_value());
  EXPECT_FALSE(o.reconcile);
}

TEST(SyncSectionTest, TheSectionMustBeAListOfEntries) {
  EXPECT_EQ(ErrorOf("  orders: {mode: watermark}\n"), "m.yaml:22:3: 'sync' must be a list");
  EXPECT_EQ(ErrorOf("  - orders\n"),
            "m.yaml:22:5: a sync entry must be a map of fields (of: table, mode, watermark, "
            "tiebreak, lookback, deletes)");
  EXPECT_EQ(ErrorOf("  - {table: orders, mode: watermark, watermark: w, deletes: hard}\n"),
            "m.yaml:22:61: 'deletes' must be a map of fields (of: soft, reconcile)");
  EXPECT_EQ(ErrorOf("  - {mode: digest}\n"), "m.yaml:22:5: missing required field 'table'");
  EXPECT_EQ(ErrorOf("  - {table: orders, watermrk: x}\n"),
            "m.yaml:22:21: unknown field 'watermrk' in a sync entry; did you mean 'watermark'? "
            "(expected one of: table, mode, watermark, tiebreak, lookback, deletes)");
}

TEST(SyncSectionTest, TheTableMustBeOneTheMappingReads) {
  EXPECT_EQ(ErrorOf("  - table: ordres\n"),
            "m.yaml:22:12: sync: 'ordres' is not a source table the mapping reads; did you mean "
            "'orders'? (it reads orders, customer, line, product)");
  EXPECT_EQ(ErrorOf("  - table: report\n"),
            "m.yaml:22:12: sync: 'report' names the free-form query of table 's:report', not a "
            "source table: a query has no watermark, and every sync reads its rows whole (digest "
            "mode); name the tables it reads in the mapping instead");
  EXPECT_EQ(ErrorOf("  - table: line\n  - {table: line, mode: digest}\n"),
            "m.yaml:23:13: sync: source table 'line' has a second entry (the first is at "
            "m.yaml:22:5); one entry per table");
}

TEST(SyncSectionTest, Mode) {
  EXPECT_EQ(ErrorOf("  - {table: orders, mode: watermak}\n"),
            "m.yaml:22:27: sync of 'orders': 'mode' must be digest or watermark, got 'watermak'; "
            "did you mean 'watermark'?");
  // Watermark fields need watermark mode, given or not.
  EXPECT_EQ(ErrorOf("  - {table: orders, watermark: updated_at}\n"),
            "m.yaml:22:32: sync of 'orders': 'watermark' applies to watermark mode, and this "
            "entry's mode is digest (the default): add mode: watermark, or remove 'watermark' "
            "(digest mode reads every row and finds every change and delete itself)");
  EXPECT_EQ(ErrorOf("  - {table: orders, mode: digest, deletes: {reconcile: true}}\n"),
            "m.yaml:22:44: sync of 'orders': 'deletes' applies to watermark mode, and this "
            "entry's mode is digest: add mode: watermark, or remove 'deletes' (digest mode reads "
            "every row and finds every change and delete itself)");
  EXPECT_EQ(ErrorOf("  - {table: orders, mode: watermark, lookback: 5m}\n"),
            "m.yaml:22:5: sync of 'orders': mode: watermark needs 'watermark': the column that "
            "every insert and update of a row raises (a timestamp or an ever-increasing integer)");
}

TEST(SyncSectionTest, WatermarkAndTiebreakColumns) {
  const std::string head = "  - table: orders\n    mode: watermark\n";
  EXPECT_EQ(ErrorOf(head + "    watermark: o.updated_at\n"),
            "m.yaml:24:16: sync of 'orders': 'watermark' 'o.updated_at' must be a column of the "
            "table itself, without an alias");
  EXPECT_EQ(ErrorOf(head + "    watermark: [a, b]\n"),
            "m.yaml:24:16: sync of 'orders': 'watermark' must be a column name");
  const std::string w = head + "    watermark: updated_at\n";
  EXPECT_EQ(ErrorOf(w + "    tiebreak: []\n"),
            "m.yaml:25:15: sync of 'orders': 'tiebreak' is empty: name its columns, or leave it "
            "out for the primary key");
  EXPECT_EQ(ErrorOf(w + "    tiebreak: [id, updated_at]\n"),
            "m.yaml:25:20: sync of 'orders': 'tiebreak' lists the watermark column 'updated_at', "
            "which orders the rows already; name the columns that order rows of one watermark "
            "value");
  EXPECT_EQ(ErrorOf(w + "    tiebreak: [id, id]\n"),
            "m.yaml:25:20: sync of 'orders': 'tiebreak' lists 'id' twice");
  EXPECT_EQ(ErrorOf(w + "    tiebreak: [{column: id}]\n"),
            "m.yaml:25:16: sync of 'orders': a 'tiebreak' entry must be a column name");
}

TEST(SyncSectionTest, Lookback) {
  const std::string w = "  - {table: orders, mode: watermark, watermark: w, lookback: ";
  auto lookback = [&](const std::string& text) {
    auto m = Parse(w + text + "}\n");
    EXPECT_TRUE(m.ok()) << text << ": " << m.status().ToString();
    return m.ok() ? m->sync[0].lookback : SyncLookback{};
  };
  EXPECT_EQ(lookback("30s").amount, 30'000);
  EXPECT_EQ(lookback("5m").amount, 300'000);
  EXPECT_EQ(lookback("2h").amount, 7'200'000);
  EXPECT_EQ(lookback("1d2h3m4s5ms").amount, 93'784'005);
  EXPECT_EQ(lookback("250ms").amount, 250);
  EXPECT_EQ(lookback("0s").amount, 0);
  EXPECT_EQ(lookback("365d").amount, kMaxLookbackMs);
  EXPECT_EQ(lookback("0").unit, LookbackUnit::kValues);
  EXPECT_EQ(lookback("10000").amount, 10000);
  EXPECT_EQ(lookback("10000").unit, LookbackUnit::kValues);

  const std::string rule =
      "'lookback' must be a duration such as 30s, 5m, 2h or 1h30m (units d, h, m, s, ms; at most "
      "365d) for a timestamp watermark, or a whole number of values for an integer watermark; "
      "got ";
  for (const char* bad : {"5 minutes", "5x", "m", "1m1h", "5m5m", "-5m", "1.5h", "366d", "''"}) {
    const std::string shown = std::string(bad) == "''" ? "" : bad;
    EXPECT_EQ(ErrorOf(w + bad + "}\n"),
              "m.yaml:22:62: sync of 'orders': " + rule + "'" + shown + "'")
        << bad;
  }
  EXPECT_EQ(ErrorOf(w + "99999999999999999999}\n"),
            "m.yaml:22:62: sync of 'orders': 'lookback' 99999999999999999999 is more than "
            "31536000000 values");
}

TEST(SyncSectionTest, Deletes) {
  const std::string w = "  - table: orders\n    mode: watermark\n    watermark: w\n    deletes:";
  EXPECT_EQ(ErrorOf(w + " {}\n"),
            "m.yaml:25:14: sync of 'orders': 'deletes' is empty: give soft: {column: C, value: "
            "V}, reconcile: true, or both");
  EXPECT_EQ(ErrorOf(w + " {reconcile: maybe}\n"),
            "m.yaml:25:26: 'reconcile' must be true or false, got 'maybe'");
  EXPECT_EQ(ErrorOf(w + " {hard: true}\n"),
            "m.yaml:25:15: unknown field 'hard' in 'deletes' (expected one of: soft, reconcile)");
  EXPECT_EQ(ErrorOf(w + " {soft: {column: deleted}}\n"),
            "m.yaml:25:21: sync of 'orders': 'soft' needs 'value': the value of 'deleted' that "
            "marks a row deleted");
  EXPECT_EQ(ErrorOf(w + " {soft: {value: 1}}\n"),
            "m.yaml:25:21: sync of 'orders': 'soft' needs 'column': the column that marks a row "
            "deleted");
  EXPECT_EQ(ErrorOf(w + " {soft: {column: deleted, value: null}}\n"),
            "m.yaml:25:46: sync of 'orders': the soft-delete 'value' must be one value, not null "
            "(a NULL marks no row: SQL's = never holds for it)");
  EXPECT_EQ(ErrorOf(w + " {soft: {column: deleted, valeu: 1}}\n"),
            "m.yaml:25:39: unknown field 'valeu' in 'soft'; did you mean 'value'? (expected one "
            "of: column, value)");
  auto m = Parse(w + " {reconcile: false, soft: {column: status, value: ''}}\n");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_FALSE(m->sync[0].reconcile);
  ASSERT_TRUE(m->sync[0].soft_delete.has_value());
  EXPECT_EQ(m->sync[0].soft_delete->value, "");  // an empty string is a value
}

TEST(SyncSectionTest, DurationText) {
  for (int64_t ms : {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{1000}, int64_t{1500},
                     int64_t{60'000}, int64_t{90'000}, int64_t{600'000}, int64_t{5'400'000},
                     int64_t{86'400'000}, int64_t{93'784'005}, kMaxLookbackMs}) {
    int64_t back = -1;
    EXPECT_TRUE(ParseDurationMs(DurationText(ms), &back)) << ms << " " << DurationText(ms);
    EXPECT_EQ(back, ms) << DurationText(ms);
  }
  EXPECT_EQ(DurationText(0), "0s");
  EXPECT_EQ(DurationText(600'000), "10m");
  EXPECT_EQ(DurationText(5'400'000), "1h30m");
  EXPECT_EQ(DurationText(1500), "1s500ms");
}

}  // namespace
}  // namespace widen
