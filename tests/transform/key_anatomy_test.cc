#include "transform/key_anatomy.h"

#include <gtest/gtest.h>

#include "tests/transform/shop_fixture.h"
#include "transform/diagram.h"

namespace widen {
namespace {

using namespace widen::testing;
using Kind = KeyPieceAnatomy::Kind;

TEST(KeyAnatomyTest, DeclaredLengths) {
  EXPECT_EQ(DeclaredLength("character varying(20)"), 20);
  EXPECT_EQ(DeclaredLength("varchar(7)"), 7);
  EXPECT_EQ(DeclaredLength("char(3)"), 3);
  EXPECT_EQ(DeclaredLength("text"), -1);
  EXPECT_EQ(DeclaredLength("numeric(10,2)"), -1);
}

TEST(KeyAnatomyTest, BinaryKeyOffsetsAndSizes) {
  auto src = ShopSource();
  auto p = PlanTables(R"(
  - name: shop:orders
    from: service_order
    families: [d]
    key:
      form: binary
      parts: [customer_id, {column: ordered_at, desc: true}, product_code, order_id]
      salt: {buckets: 16}
    columns: [{column: amount, to: "d:widen_test"}]
)",
                      src.get());
  auto schema = src->Introspect();
  const KeyAnatomy a = DescribeRowKey(p->plan.tables[0], *schema);
  ASSERT_EQ(a.pieces.size(), 5u);
  EXPECT_EQ(a.pieces[0].kind, Kind::kSalt);
  EXPECT_EQ(a.pieces[0].offset, 0);
  EXPECT_EQ(a.pieces[0].max_bytes, 1);
  EXPECT_EQ(a.pieces[1].name, "customer_id");
  EXPECT_EQ(a.pieces[1].column, "service_order.customer_id");
  EXPECT_EQ(a.pieces[1].source_type, "integer");
  EXPECT_EQ(a.pieces[1].type, "int32");
  EXPECT_EQ(a.pieces[1].offset, 1);
  EXPECT_EQ(a.pieces[1].max_bytes, 4);
  EXPECT_EQ(a.pieces[2].offset, 5);
  EXPECT_EQ(a.pieces[2].max_bytes, 8);
  EXPECT_NE(a.pieces[2].encoding.find("inverted (desc)"), std::string::npos);
  // varchar(10): 2..12 bytes with its terminator; the next offset varies.
  EXPECT_EQ(a.pieces[3].offset, 13);
  EXPECT_EQ(a.pieces[3].min_bytes, 2);
  EXPECT_EQ(a.pieces[3].max_bytes, 12);
  EXPECT_EQ(a.pieces[4].offset, -1);
  EXPECT_EQ(a.min_bytes, 1 + 4 + 8 + 2 + 4);
  EXPECT_EQ(a.max_bytes, 1 + 4 + 8 + 12 + 4);
  EXPECT_EQ(a.compact, p->plan.tables[0].key.Anatomy());
}

TEST(KeyAnatomyTest, TextKeySeparatorsAndUnboundedParts) {
  auto src = ShopSource();
  auto p = PlanTables(R"(
  - name: shop:names
    from: customer
    families: [d]
    key:
      parts: [{column: customer_id, width: 5}, name]
    columns: [{column: name, to: "d:widen_test"}]
)",
                      src.get());
  auto schema = src->Introspect();
  const KeyAnatomy a = DescribeRowKey(p->plan.tables[0], *schema);
  ASSERT_EQ(a.pieces.size(), 3u);
  EXPECT_EQ(a.pieces[0].min_bytes, 5);
  EXPECT_EQ(a.pieces[0].max_bytes, 11);
  EXPECT_EQ(a.pieces[1].kind, Kind::kSeparator);
  EXPECT_EQ(a.pieces[1].name, "|");
  EXPECT_EQ(a.pieces[1].offset, -1);  // after a part of varying width
  EXPECT_EQ(a.pieces[2].max_bytes, -1);
  EXPECT_EQ(a.max_bytes, -1);
  EXPECT_EQ(a.min_bytes, 6);
}

TEST(DiagramTest, DrawsKeyFamiliesNestsAndSources) {
  auto src = ShopSource();
  auto p = PlanTables(R"(
  - name: shop:orders
    from: service_order
    families: [d, l]
    joins:
      - table: customer
        on: {customer_id: customer_id}
    key:
      parts: [{column: customer_id, width: 5}, {column: order_id, width: 6}]
    columns:
      - {column: customer.name, to: "d:cust<name>"}
    nest:
      - table: order_line
        on: {order_id: order_id}
        family: l
        prefix: l
        id: [{column: line_id, width: 6}]
        columns: [sku, qty]
  - name: shop:lines
    from: order_line
    families: [d]
    key:
      parts: [{column: line_id, width: 6}]
    columns: [{column: qty, to: "d:q"}]
)",
                      src.get());
  const std::string dot = DesignDiagramDot({&p->plan.tables[0], &p->plan.tables[1]});
  EXPECT_EQ(dot.rfind("digraph widen {", 0), 0u);
  EXPECT_NE(dot.find("shop:orders"), std::string::npos);
  EXPECT_NE(dot.find("customer_id : int32, 5 digits"), std::string::npos);
  EXPECT_NE(dot.find("PORT=\"f_l\""), std::string::npos);
  EXPECT_NE(dot.find("'l' + &lt;line_id&gt;(6)"), std::string::npos);
  EXPECT_NE(dot.find("{sku, qty}"), std::string::npos);
  EXPECT_NE(dot.find("cust&lt;name&gt;"), std::string::npos);  // escaped
  EXPECT_NE(dot.find("source_service_order -> target0 [label=\"one row per row\""),
            std::string::npos);
  EXPECT_NE(dot.find("source_customer -> target0 [label=\"joined: copied in\""), std::string::npos);
  EXPECT_NE(dot.find("source_order_line -> target0:f_l"), std::string::npos);
  // order_line feeds both tables: one node, two edges.
  EXPECT_EQ(dot.find("source_order_line ["), dot.rfind("source_order_line ["));
  EXPECT_NE(dot.find("source_order_line -> target1"), std::string::npos);
  EXPECT_EQ(dot.back(), '\n');
}

}  // namespace
}  // namespace widen
