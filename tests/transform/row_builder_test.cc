// The row builder with plain values, no source and no store: which cells a
// driving row, its joined columns and its nested rows give, which rows are
// rejected and why, the cells one row gives twice, and replace mode's delete
// markers. The plans come from mappings over the shop fixture's schema
// (tests/transform/shop_fixture.h); the rows are written here by hand.
// Expected bytes follow docs/format.md (text keys: zero-padded digits and the
// separator; nested qualifiers: prefix + id) and docs/mapping.md (layouts,
// on_null, version columns, replace mode).
#include "transform/row_builder.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/transform/shop_fixture.h"

namespace widen {
namespace {

using namespace widen::testing;

constexpr int64_t kTs = 1700000000000;  // the run's timestamp in these tests
constexpr int64_t kDayMs = 86400000;

// The row a scan of `scan` gives for the named values: each column (and
// each merge key after them) from `values` by "alias.column", else by its
// bare column name; NULL text when not named.
Row RowOf(const ScanSpec& scan, const std::map<std::string, Value>& values) {
  auto find = [&](const ColumnExpr& c) {
    auto it = values.find(c.alias + "." + c.column);
    if (it == values.end()) it = values.find(c.column);
    return it == values.end() ? Value::Null(ValueType::kText) : it->second;
  };
  Row row;
  for (const ColumnExpr& c : scan.columns) row.values.push_back(find(c));
  for (const MergeLink& link : scan.merge) {
    for (const auto& on : link.on) row.values.push_back(find(on.first));
  }
  return row;
}

// A cell as "family:qualifier@timestamp=value", delete markers as
// "family:qualifier@timestamp DeleteFamily".
std::string Show(const RowCell& c) {
  std::string s = c.family + ":" + c.qualifier + "@" + std::to_string(c.timestamp_ms);
  if (c.type == CellType::kPut) return s + "=" + c.value;
  if (c.type == CellType::kDeleteFamily) return s + " DeleteFamily";
  return s + " type " + std::to_string(static_cast<int>(c.type));
}

std::vector<std::string> Show(const std::vector<RowCell>& cells) {
  std::vector<std::string> out;
  for (const RowCell& c : cells) out.push_back(Show(c));
  return out;
}

class RowBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override { source_ = ShopSource(); }

  const TablePlan& Plan(const std::string& yaml) {
    planned_ = PlanTables(yaml, source_.get());
    return planned_->plan.tables.front();
  }

  std::unique_ptr<FakeSource> source_;
  std::unique_ptr<Planned> planned_;
};

// Orders keyed product|customer|order, the customer's columns copied in by a
// join (denormalization).
constexpr char kOrders[] = R"(
  - name: shop:orders
    from: service_order
    families: [d]
    key:
      separator: "|"
      parts: [product_code, {column: customer_id, width: 5}, {column: order_id, width: 6}]
    joins:
      - table: customer
        on: {customer_id: customer_id}
    columns:
      - {column: amount, to: "d:amount"}
      - {column: ordered_at, to: "d:at"}
      - {column: customer.name, to: "d:cust_name"}
      - {column: customer.region, to: "d:cust_region"}
)";

TEST_F(RowBuilderTest, DrivingAndJoinedColumnsBecomeCellsInCellOrder) {
  const TablePlan& plan = Plan(kOrders);
  const Row row = RowOf(plan.scan, {{"order_id", I(1042)},
                                    {"customer_id", I(7)},
                                    {"product_code", T("A100")},
                                    {"amount", D("89.90")},
                                    {"ordered_at", Ts(1000 * kDayMs + 3723000)},
                                    {"customer.name", T("Ana Souza")},
                                    {"customer.region", T("south")}});
  const BuiltRow b = BuildRow(plan, {kTs, false}, row, {});
  ASSERT_EQ(b.reject, "");
  EXPECT_EQ(b.row_key, "A100|00007|001042");
  EXPECT_EQ(b.timestamp_ms, kTs);
  // Qualifiers ascending, whatever the mapping's order; 1000 days after the
  // epoch is 1972-09-27.
  EXPECT_EQ(Show(b.cells),
            (std::vector<std::string>{
                "d:amount@1700000000000=89.90", "d:at@1700000000000=1972-09-27 01:02:03",
                "d:cust_name@1700000000000=Ana Souza", "d:cust_region@1700000000000=south"}));
  EXPECT_TRUE(b.replaced.empty());
}

TEST_F(RowBuilderTest, NullColumnsFollowOnNull) {
  const std::string yaml = R"(
  - name: shop:customers
    from: customer
    families: [c]
    key:
      parts: [{column: customer_id, width: 5}]
    columns:
      - {column: name, to: "c:name"}
      - {column: region, to: "c:region_omitted"}
      - {column: region, to: "c:region_empty", on_null: empty}
)";
  const TablePlan& plan = Plan(yaml);
  const BuiltRow b = BuildRow(
      plan, {kTs, false},
      RowOf(plan.scan,
            {{"customer_id", I(2)}, {"name", T("Bo")}, {"region", Null(ValueType::kText)}}),
      {});
  ASSERT_EQ(b.reject, "");
  EXPECT_EQ(b.row_key, "00002");
  EXPECT_EQ(Show(b.cells),
            (std::vector<std::string>{"c:name@1700000000000=Bo", "c:region_empty@1700000000000="}));
}

TEST_F(RowBuilderTest, RowsThatCannotBeEncodedAreRejectedWithTheReason) {
  const TablePlan& plan = Plan(kOrders);
  auto reject = [&](std::map<std::string, Value> values) {
    std::map<std::string, Value> row = {{"order_id", I(1)},          {"customer_id", I(7)},
                                        {"product_code", T("A100")}, {"amount", D("1.00")},
                                        {"ordered_at", Ts(0)},       {"customer.name", T("Ana")}};
    for (auto& [k, v] : values) row[k] = v;
    return BuildRow(plan, {kTs, false}, RowOf(plan.scan, row), {});
  };
  // The separator inside a text key part would make keys ambiguous.
  BuiltRow b = reject({{"product_code", T("A|100")}});
  EXPECT_EQ(b.reject,
            "key part 'product_code' value 'A|100' contains the key separator '|' (keys would be "
            "ambiguous)");
  EXPECT_TRUE(b.cells.empty());
  // Six digits do not fit a width of 5: they would sort out of order.
  b = reject({{"customer_id", I(123456)}});
  EXPECT_EQ(b.reject,
            "key part 'customer_id' value '123456' has 6 digits, more than the part's width 5: it "
            "would sort out of order (100000 before 99999); raise the width");
  // A negative number in a zero-padded part.
  b = reject({{"order_id", I(-3)}});
  EXPECT_EQ(b.reject.substr(0, 50), "key part 'order_id' value '-3' is negative: in a t");
  // A NULL key part.
  b = reject({{"product_code", Null(ValueType::kText)}});
  EXPECT_EQ(b.reject, "key part 'product_code' is NULL");
}

TEST_F(RowBuilderTest, OnNullRejectAndVersionColumnsRejectTheRow) {
  const std::string yaml = R"(
  - name: shop:orders
    from: service_order
    families: [d]
    version: ordered_at
    key:
      parts: [{column: order_id, width: 6}]
    joins:
      - table: customer
        on: {customer_id: customer_id}
    columns:
      - {column: customer.region, to: "d:region", on_null: reject}
)";
  const TablePlan& plan = Plan(yaml);
  // The version column is the timestamp of every cell of the row.
  BuiltRow b = BuildRow(plan, {kTs, false},
                        RowOf(plan.scan, {{"order_id", I(5)},
                                          {"ordered_at", Ts(1004 * kDayMs)},
                                          {"customer.region", T("north")}}),
                        {});
  ASSERT_EQ(b.reject, "");
  EXPECT_EQ(b.timestamp_ms, 1004 * kDayMs);
  EXPECT_EQ(Show(b.cells), (std::vector<std::string>{"d:region@86745600000=north"}));

  b = BuildRow(plan, {kTs, false},
               RowOf(plan.scan, {{"order_id", I(5)},
                                 {"ordered_at", Ts(1004 * kDayMs)},
                                 {"customer.region", Null(ValueType::kText)}}),
               {});
  EXPECT_EQ(b.reject, "column customer.region is NULL");
  EXPECT_TRUE(b.cells.empty());

  // 1969-12-31 is before the first cell timestamp HBase takes.
  b = BuildRow(
      plan, {kTs, false},
      RowOf(plan.scan,
            {{"order_id", I(5)}, {"ordered_at", Ts(-kDayMs)}, {"customer.region", T("north")}}),
      {});
  EXPECT_EQ(b.reject.substr(0, 32), "version column ordered_at is 196");
  EXPECT_TRUE(b.cells.empty());
}

// Customers with their orders nested (JSON cells), and each order's lines
// nested under it (one cell per attribute).
constexpr char kCustomers[] = R"(
  - name: shop:customers
    from: customer
    families: [c, o]
    key:
      parts: [{column: customer_id, width: 5}]
    columns:
      - {column: name, to: "c:name"}
    nest:
      - table: service_order
        on: {customer_id: customer_id}
        family: o
        prefix: o
        id: [{column: order_id, width: 3}]
        columns: [product_code, amount]
        nest:
          - table: order_line
            on: {order_id: order_id}
            prefix: l
            id: [{column: line_id, width: 2}]
            layout: cells
            columns: [sku, qty]
)";

TEST_F(RowBuilderTest, NestedRowsBecomeCellsUnderTheirParentsQualifier) {
  const TablePlan& plan = Plan(kCustomers);
  ASSERT_EQ(plan.nests.size(), 1u);
  const NestPlan& orders = plan.nests[0];
  ASSERT_EQ(orders.children.size(), 1u);
  const NestPlan& lines = orders.children[0];
  auto order = [&](int64_t id, const std::string& product, const std::string& amount,
                   std::vector<NestedRow> line_rows) {
    NestedRow r;
    r.row = RowOf(orders.scan, {{"order_id", I(id)},
                                {"customer_id", I(1)},
                                {"product_code", T(product)},
                                {"amount", D(amount)}});
    r.nested = {std::move(line_rows)};
    return r;
  };
  auto line = [&](int64_t id, int64_t order_id, const std::string& sku, Value qty) {
    return NestedRow{RowOf(lines.scan, {{"line_id", I(id)},
                                        {"order_id", I(order_id)},
                                        {"customer_id", I(1)},
                                        {"sku", T(sku)},
                                        {"qty", qty}}),
                     {}};
  };
  std::vector<std::vector<NestedRow>> nested = {
      {order(1, "A100", "10.00", {line(1, 1, "x", I(1)), line(2, 1, "y", Null(ValueType::kInt))}),
       order(5, "A100", "12.00", {line(4, 5, "z", I(4))})}};
  const BuiltRow b = BuildRow(
      plan, {kTs, false}, RowOf(plan.scan, {{"customer_id", I(1)}, {"name", T("Ana")}}), nested);
  ASSERT_EQ(b.reject, "");
  EXPECT_EQ(b.row_key, "00001");
  // layout json: an object of the attributes; layout cells: qualifier +
  // '.' + attribute, a NULL attribute gives no cell.
  EXPECT_EQ(Show(b.cells),
            (std::vector<std::string>{
                "c:name@1700000000000=Ana",
                "o:o001@1700000000000={\"product_code\":\"A100\",\"amount\":\"10.00\"}",
                "o:o001l01.qty@1700000000000=1", "o:o001l01.sku@1700000000000=x",
                "o:o001l02.sku@1700000000000=y",
                "o:o005@1700000000000={\"product_code\":\"A100\",\"amount\":\"12.00\"}",
                "o:o005l04.qty@1700000000000=4", "o:o005l04.sku@1700000000000=z"}));
  EXPECT_TRUE(b.nested_rejects.empty());
  EXPECT_EQ(b.all_null_nested, 0u);
}

TEST_F(RowBuilderTest, ANestedRowThatCannotBeEncodedIsRejectedAlone) {
  const TablePlan& plan = Plan(kCustomers);
  const NestPlan& orders = plan.nests[0];
  const NestPlan& lines = orders.children[0];
  NestedRow bad;  // a NULL id: its cell, and its own nested rows, are left out
  bad.row = RowOf(
      orders.scan,
      {{"order_id", Null(ValueType::kInt)}, {"product_code", T("B200")}, {"amount", D("1.00")}});
  bad.nested = {{NestedRow{RowOf(lines.scan, {{"line_id", I(9)}, {"sku", T("q")}}), {}}}};
  NestedRow wide;  // 1000 does not fit the id's 3 digits
  wide.row = RowOf(orders.scan, {{"order_id", I(1000)}, {"amount", D("2.00")}});
  wide.nested = {{}};
  NestedRow empty;  // every value column NULL: a cell of nulls
  empty.row = RowOf(orders.scan, {{"order_id", I(7)},
                                  {"product_code", Null(ValueType::kText)},
                                  {"amount", Null(ValueType::kDecimal)}});
  empty.nested = {{}};
  std::vector<std::vector<NestedRow>> nested = {{bad, wide, empty}};
  const BuiltRow b = BuildRow(plan, {kTs, false},
                              RowOf(plan.scan, {{"customer_id", I(3)}, {"name", T("Cy")}}), nested);
  ASSERT_EQ(b.reject, "");
  EXPECT_EQ(Show(b.cells),
            (std::vector<std::string>{"c:name@1700000000000=Cy", "o:o007@1700000000000={}"}));
  ASSERT_EQ(b.nested_rejects.size(), 2u);
  EXPECT_EQ(b.nested_rejects[0], "key part 'order_id' is NULL");
  EXPECT_EQ(b.nested_rejects[1],
            "key part 'order_id' value '1000' has 4 digits, more than the part's width 3: it "
            "would sort out of order (1000 before 999); raise the width");
  EXPECT_EQ(b.all_null_nested, 1u);
}

TEST_F(RowBuilderTest, CellsOverTheTargetsLimitRejectTheirRowOrNestedRowAlone) {
  const TablePlan& plan = Plan(kCustomers);
  const NestPlan& orders = plan.nests[0];
  // HBase counts row + family + qualifier + value + 24 bytes; the limit
  // here is 100.
  const RowBuilderOptions limited{kTs, false, 100};
  NestedRow big;
  big.row = RowOf(orders.scan, {{"order_id", I(7)}, {"product_code", T(std::string(60, 'p'))}});
  big.nested = {{}};
  NestedRow small;
  small.row = RowOf(orders.scan, {{"order_id", I(8)}, {"product_code", T("B")}});
  small.nested = {{}};
  const std::vector<std::vector<NestedRow>> nested = {{big, small}};
  const Row customer = RowOf(plan.scan, {{"customer_id", I(3)}, {"name", T("Cy")}});
  const BuiltRow unlimited = BuildRow(plan, {kTs, false}, customer, nested);
  ASSERT_EQ(unlimited.cells.size(), 3u);
  ASSERT_EQ(unlimited.cells[1].qualifier, "o007");
  const size_t big_bytes = 5 + 1 + 4 + unlimited.cells[1].value.size() + 24;
  ASSERT_GT(big_bytes, 100u);
  ASSERT_LE(5 + 1 + 4 + unlimited.cells[2].value.size() + 24, 100u);

  // The nested row with the big cell is left out, with its reason; the row
  // and its other nested rows are written.
  BuiltRow b = BuildRow(plan, limited, customer, nested);
  ASSERT_EQ(b.reject, "");
  ASSERT_EQ(b.cells.size(), 2u);
  EXPECT_EQ(Show(b.cells[0]), "c:name@1700000000000=Cy");
  EXPECT_EQ(b.cells[1].qualifier, "o008");
  ASSERT_EQ(b.nested_rejects.size(), 1u);
  EXPECT_EQ(b.nested_rejects[0],
            "the cell o:o007 is " + std::to_string(big_bytes) +
                " bytes as HBase counts it (row + family + qualifier + value + 24), over the "
                "target's largest, 100 (hbase.server.keyvalue.maxsize)");

  // A column's cell over the limit rejects the whole row: 5 + 1 + 4 + 71 +
  // 24 = 105 bytes.
  b = BuildRow(plan, limited,
               RowOf(plan.scan, {{"customer_id", I(3)}, {"name", T(std::string(71, 'n'))}}),
               nested);
  EXPECT_EQ(b.reject,
            "column customer.name: the cell c:name is 105 bytes as HBase counts it (row + "
            "family + "
            "qualifier + value + 24), over the target's largest, 100 "
            "(hbase.server.keyvalue.maxsize)");
  // One byte less fits.
  b = BuildRow(plan, limited,
               RowOf(plan.scan, {{"customer_id", I(3)}, {"name", T(std::string(66, 'n'))}}), {});
  EXPECT_EQ(b.reject, "");
}

// Answer history: a nest whose cells take their timestamp from a column, so
// that two nested rows with one id are two versions of one cell.
constexpr char kOrdersByDate[] = R"(
  - name: shop:customers
    from: customer
    families: [{name: c}, {name: p, versions: 5}]
    key:
      parts: [{column: customer_id, width: 5}]
    columns:
      - {column: name, to: "c:name"}
    nest:
      - table: service_order
        on: {customer_id: customer_id}
        family: p
        prefix: ""
        id: [product_code]
        version: ordered_at
        layout: value
        columns: [amount]
)";

TEST_F(RowBuilderTest, VersionColumnsStampNestedCellsAndRepeatsReplace) {
  const TablePlan& plan = Plan(kOrdersByDate);
  const NestPlan& orders = plan.nests[0];
  auto order = [&](const std::string& product, int64_t day, const std::string& amount) {
    return NestedRow{RowOf(orders.scan, {{"product_code", T(product)},
                                         {"ordered_at", Ts(day * kDayMs)},
                                         {"amount", D(amount)}}),
                     {}};
  };
  // A100 on day 1000 and 1004 are versions; A100 on day 1004 twice is one
  // cell given twice: the last is kept, the first replaced.
  std::vector<std::vector<NestedRow>> nested = {
      {order("A100", 1000, "10.00"), order("A100", 1004, "12.00"), order("A100", 1004, "12.50"),
       order("B200", 1001, "20.50")}};
  const BuiltRow b = BuildRow(
      plan, {kTs, false}, RowOf(plan.scan, {{"customer_id", I(1)}, {"name", T("Ana")}}), nested);
  ASSERT_EQ(b.reject, "");
  EXPECT_EQ(Show(b.cells),
            (std::vector<std::string>{"c:name@1700000000000=Ana", "p:A100@86745600000=12.50",
                                      "p:A100@86400000000=10.00", "p:B200@86486400000=20.50"}));
  EXPECT_EQ(Show(b.replaced), (std::vector<std::string>{"p:A100@86745600000=12.00"}));

  // A version before 1970 rejects that nested row alone.
  nested = {{order("A100", -1, "1.00"), order("B200", 1001, "20.50")}};
  const BuiltRow r = BuildRow(
      plan, {kTs, false}, RowOf(plan.scan, {{"customer_id", I(1)}, {"name", T("Ana")}}), nested);
  ASSERT_EQ(r.reject, "");
  EXPECT_EQ(Show(r.cells),
            (std::vector<std::string>{"c:name@1700000000000=Ana", "p:B200@86486400000=20.50"}));
  ASSERT_EQ(r.nested_rejects.size(), 1u);
  EXPECT_EQ(r.nested_rejects[0].substr(0, 32), "version column ordered_at is 196");
}

TEST_F(RowBuilderTest, ReplaceModePutsDeleteMarkersJustBelowTheNewCells) {
  const TablePlan& plan = Plan(kCustomers);
  const NestPlan& orders = plan.nests[0];
  NestedRow o;
  o.row =
      RowOf(orders.scan, {{"order_id", I(2)}, {"product_code", T("B200")}, {"amount", D("20.50")}});
  o.nested = {{}};
  const std::vector<std::vector<NestedRow>> nested = {{o}};
  const BuiltRow b = BuildRow(
      plan, {kTs, true}, RowOf(plan.scan, {{"customer_id", I(1)}, {"name", T("Ana")}}), nested);
  ASSERT_EQ(b.reject, "");
  // One DeleteFamily per family of the table (also one the row has no cell
  // in), at the new cells' timestamp - 1: it masks what the row held at
  // earlier timestamps and none of the new cells. In cell order the marker
  // (empty qualifier) leads its family.
  EXPECT_EQ(Show(b.cells),
            (std::vector<std::string>{
                "c:@1699999999999 DeleteFamily", "c:name@1700000000000=Ana",
                "o:@1699999999999 DeleteFamily",
                "o:o002@1700000000000={\"product_code\":\"B200\",\"amount\":\"20.50\"}"}));
  for (const RowCell& c : b.cells) {
    if (c.type != CellType::kPut) {
      EXPECT_EQ(c.value, "");
    }
  }

  // A row with no put (no mapped value, no nested row): the markers alone
  // delete the target row.
  const BuiltRow gone =
      BuildRow(plan, {kTs, true},
               RowOf(plan.scan, {{"customer_id", I(4)}, {"name", Null(ValueType::kText)}}), {});
  ASSERT_EQ(gone.reject, "");
  EXPECT_EQ(gone.row_key, "00004");
  EXPECT_EQ(Show(gone.cells), (std::vector<std::string>{"c:@1699999999999 DeleteFamily",
                                                        "o:@1699999999999 DeleteFamily"}));

  // Without replace mode the same row gives no cell at all.
  EXPECT_TRUE(BuildRow(plan, {kTs, false},
                       RowOf(plan.scan, {{"customer_id", I(4)}, {"name", Null(ValueType::kText)}}),
                       {})
                  .cells.empty());
}

TEST_F(RowBuilderTest, ReplaceModeMarkersGoBelowTheOldestVersionColumnCell) {
  const TablePlan& plan = Plan(kOrdersByDate);
  const NestPlan& orders = plan.nests[0];
  auto order = [&](const std::string& product, int64_t ms) {
    return NestedRow{
        RowOf(orders.scan,
              {{"product_code", T(product)}, {"ordered_at", Ts(ms)}, {"amount", D("1")}}),
        {}};
  };
  std::vector<std::vector<NestedRow>> nested = {
      {order("A100", 1004 * kDayMs), order("B200", 1000 * kDayMs)}};
  BuiltRow b = BuildRow(plan, {kTs, true},
                        RowOf(plan.scan, {{"customer_id", I(1)}, {"name", T("Ana")}}), nested);
  ASSERT_EQ(b.reject, "");
  // The oldest new cell is B200's, on day 1000 (86400000000 ms).
  EXPECT_EQ(Show(b.cells),
            (std::vector<std::string>{"c:@86399999999 DeleteFamily", "c:name@1700000000000=Ana",
                                      "p:@86399999999 DeleteFamily", "p:A100@86745600000=1",
                                      "p:B200@86400000000=1"}));
  for (const RowCell& c : b.cells) {
    if (c.type == CellType::kPut) {
      EXPECT_GT(c.timestamp_ms, 86399999999);
    }
  }

  // A new cell at timestamp 0 leaves no timestamp for the markers: the row
  // is rejected rather than written without them or with a masked cell.
  nested = {{order("A100", 0)}};
  b = BuildRow(plan, {kTs, true}, RowOf(plan.scan, {{"customer_id", I(1)}, {"name", T("Ana")}}),
               nested);
  EXPECT_EQ(b.reject,
            "replace mode: the row's oldest cell has timestamp 0, which leaves no timestamp below "
            "it for the delete markers (HBase refuses negative timestamps)");
  EXPECT_TRUE(b.cells.empty());
  // Replace mode with the run's timestamp 0: the same.
  b = BuildRow(plan, {0, true}, RowOf(plan.scan, {{"customer_id", I(1)}, {"name", T("Ana")}}), {});
  EXPECT_EQ(b.reject.substr(0, 54), "replace mode: the row's oldest cell has timestamp 0, w");
}

TEST_F(RowBuilderTest, TheIncrementalBuilderLetsTheCallerTakeCellsOut) {
  // What the assembler does with a very large row: it empties RowCells
  // between nested rows (spilling them); the markers still go below every
  // cell taken out.
  const TablePlan& plan = Plan(kOrdersByDate);
  const NestPlan& orders = plan.nests[0];
  RowBuilder builder(plan, {kTs, true});
  RowCells cells;
  std::string reason, qualifier;
  ASSERT_TRUE(builder.StartRow(RowOf(plan.scan, {{"customer_id", I(1)}, {"name", T("Ana")}}),
                               &cells, &reason));
  EXPECT_EQ(builder.row_key(), "00001");
  EXPECT_EQ(cells.size(), 1u);
  bool all_null = true;
  ASSERT_TRUE(builder.AddNested(
      orders,
      RowOf(orders.scan, {{"product_code", T("A100")}, {"ordered_at", Ts(5)}, {"amount", D("1")}}),
      "", &cells, &qualifier, &all_null, &reason));
  EXPECT_EQ(qualifier, "A100");
  EXPECT_FALSE(all_null);
  EXPECT_GT(cells.bytes(), 2 * RowCells::kCellOverheadBytes);
  cells.Clear();  // taken out
  EXPECT_EQ(cells.bytes(), 0u);
  ASSERT_TRUE(builder.AddNested(
      orders,
      RowOf(orders.scan, {{"product_code", T("B200")}, {"ordered_at", Ts(9)}, {"amount", D("2")}}),
      "", &cells, &qualifier, &all_null, &reason));
  ASSERT_TRUE(builder.FinishRow(&cells, &reason));
  EXPECT_EQ(builder.puts(), 3u);
  std::vector<std::string> shown;
  for (size_t i : cells.Sorted()) shown.push_back(Show(cells[i]));
  EXPECT_EQ(shown,
            (std::vector<std::string>{"c:@4 DeleteFamily", "p:@4 DeleteFamily", "p:B200@9=2"}));
}

TEST(RowCellsTest, SortsInCellOrderAndKeepsTheLastOfEqualCells) {
  RowCells cells;
  auto add = [&](std::string f, std::string q, int64_t ts, std::string v,
                 CellType t = CellType::kPut) {
    RowCell* c = cells.Add(f, ts, t);
    c->qualifier = q;
    c->value = v;
  };
  add("b", "x", 5, "1");
  add("a", "y", 5, "2");
  add("a", "y", 7, "3");  // newer version first
  add("a", "", 7, "", CellType::kDeleteFamily);
  add("a", "y", 5, "4");    // replaces "2"
  add("a", "", 7, "5");     // a put at the marker's coordinates sorts after it
  add("\xff", "", 1, "6");  // families compare as unsigned bytes
  std::vector<std::string> put, replaced;
  Status s = cells.Emit(
      [&](const RowCell& c) {
        put.push_back(Show(c));
        return Status::OK();
      },
      [&](const RowCell& c) { replaced.push_back(Show(c)); });
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(put, (std::vector<std::string>{"a:@7 DeleteFamily", "a:@7=5", "a:y@7=3", "a:y@5=4",
                                           "b:x@5=1", "\xff:@1=6"}));
  EXPECT_EQ(replaced, (std::vector<std::string>{"a:y@5=2"}));
  // Clear keeps the buffers; the next row starts empty.
  cells.Clear();
  EXPECT_TRUE(cells.empty());
  EXPECT_TRUE(cells.Sorted().empty());
}

// Cells added in cell order already, equal cells among them, come out as
// added; one out of place at the end is still put where it belongs.
TEST(RowCellsTest, CellsAddedInOrderKeepItAndOneOutOfPlaceIsMoved) {
  RowCells cells;
  auto add = [&](std::string q, int64_t ts, std::string v) {
    RowCell* c = cells.Add("d", ts, CellType::kPut);
    c->qualifier = q;
    c->value = v;
  };
  add("a", 9, "1");
  add("a", 9, "2");  // equal coordinates: the later is kept
  add("a", 3, "3");
  add("b", 9, "4");
  std::vector<size_t> order(cells.Sorted().begin(), cells.Sorted().end());
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3}));
  add("a", 5, "5");  // between the two versions of a
  const std::span<const size_t> sorted = cells.Sorted();
  order.assign(sorted.begin(), sorted.end());
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 4, 2, 3}));
}

}  // namespace
}  // namespace widen
