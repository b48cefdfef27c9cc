#include "common/table_descriptor.h"

#include <string>

#include <gtest/gtest.h>

namespace widen {
namespace {

TableDescriptor Valid() {
  TableDescriptor d;
  d.name_space = "shop";
  d.table = "orders.v2";
  FamilyDescriptor f;
  f.name = "d";
  d.families.push_back(f);
  return d;
}

TEST(TableDescriptorTest, FullNameAndSplit) {
  TableDescriptor d = Valid();
  EXPECT_EQ(d.FullName(), "shop:orders.v2");
  d.name_space = "default";
  EXPECT_EQ(d.FullName(), "orders.v2");

  std::string ns, table;
  SplitTableName("shop:orders", &ns, &table);
  EXPECT_EQ(ns, "shop");
  EXPECT_EQ(table, "orders");
  SplitTableName("orders", &ns, &table);
  EXPECT_EQ(ns, "default");
  EXPECT_EQ(table, "orders");
}

TEST(TableDescriptorTest, FamilyLookup) {
  TableDescriptor d = Valid();
  ASSERT_NE(d.Family("d"), nullptr);
  EXPECT_EQ(d.Family("d")->name, "d");
  EXPECT_EQ(d.Family("e"), nullptr);
}

TEST(TableDescriptorTest, ValidNamesPass) {
  EXPECT_TRUE(Valid().Validate().ok()) << Valid().Validate().ToString();
  TableDescriptor d = Valid();
  d.table = "a_b-c.d9";
  d.name_space = "Ns_1";
  d.families[0].name = "f x-1.y";
  EXPECT_TRUE(d.Validate().ok()) << d.Validate().ToString();
}

TEST(TableDescriptorTest, InvalidTableNames) {
  for (const char* bad : {"", ".t", "-t", "t:x", "t/x", "t x", "t\xc3\xa9"}) {
    TableDescriptor d = Valid();
    d.table = bad;
    EXPECT_EQ(d.Validate().code(), StatusCode::kInvalidArgument) << bad;
  }
  for (const char* bad : {"", "a.b", "a-b", "a:b", "a b"}) {
    TableDescriptor d = Valid();
    d.name_space = bad;
    EXPECT_EQ(d.Validate().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(TableDescriptorTest, InvalidFamilyNames) {
  for (std::string bad :
       {std::string(""), std::string(".d"), std::string("a:b"), std::string("a/b"),
        std::string("a\\b"), std::string("a\tb"), std::string("a\x00", 2),
        std::string("recovered.edits"), std::string(128, 'f')}) {
    TableDescriptor d = Valid();
    d.families[0].name = bad;
    EXPECT_EQ(d.Validate().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(TableDescriptorTest, FamiliesRequiredAndUnique) {
  TableDescriptor d = Valid();
  d.families.clear();
  EXPECT_EQ(d.Validate().code(), StatusCode::kInvalidArgument);
  d = Valid();
  d.families.push_back(d.families[0]);
  Status s = d.Validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("twice"), std::string::npos) << s.message();
}

TEST(TableDescriptorTest, OptionRanges) {
  auto check = [](auto mutate, StatusCode want) {
    TableDescriptor d = Valid();
    mutate(&d.families[0]);
    return d.Validate().code() == want;
  };
  const auto kBad = StatusCode::kInvalidArgument;
  const auto kOk = StatusCode::kOk;
  EXPECT_TRUE(check([](FamilyDescriptor* f) { f->versions = 0; }, kBad));
  EXPECT_TRUE(check([](FamilyDescriptor* f) { f->min_versions = -1; }, kBad));
  EXPECT_TRUE(check(
      [](FamilyDescriptor* f) {
        f->versions = 2;
        f->min_versions = 3;
      },
      kBad));
  EXPECT_TRUE(check(
      [](FamilyDescriptor* f) {
        f->versions = 3;
        f->min_versions = 3;
      },
      kOk));
  EXPECT_TRUE(check([](FamilyDescriptor* f) { f->ttl_seconds = -1; }, kBad));
  EXPECT_TRUE(check([](FamilyDescriptor* f) { f->ttl_seconds = 86400; }, kOk));
  EXPECT_TRUE(check([](FamilyDescriptor* f) { f->bloom_filter = "ROWPREFIX"; }, kBad));
  EXPECT_TRUE(check([](FamilyDescriptor* f) { f->bloom_filter = "ROWCOL"; }, kOk));
  EXPECT_TRUE(check([](FamilyDescriptor* f) { f->compression = "snappy"; }, kBad));
  for (const char* c : {"NONE", "SNAPPY", "GZ", "LZ4", "ZSTD", "LZO", "BZIP2"}) {
    EXPECT_TRUE(check([c](FamilyDescriptor* f) { f->compression = c; }, kOk)) << c;
  }
  EXPECT_TRUE(check([](FamilyDescriptor* f) { f->data_block_encoding = "GZ"; }, kBad));
  for (const char* e : {"NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1"}) {
    EXPECT_TRUE(check([e](FamilyDescriptor* f) { f->data_block_encoding = e; }, kOk)) << e;
  }
  EXPECT_TRUE(check([](FamilyDescriptor* f) { f->block_size_bytes = 0; }, kBad));
}

TEST(TableDescriptorTest, SplitPointsAscendingAndNotEmpty) {
  TableDescriptor d = Valid();
  d.split_points = {"b", "c"};
  EXPECT_TRUE(d.Validate().ok());
  d.split_points = {"c", "b"};
  EXPECT_EQ(d.Validate().code(), StatusCode::kInvalidArgument);
  d.split_points = {"b", "b"};
  EXPECT_EQ(d.Validate().code(), StatusCode::kInvalidArgument);
  d.split_points = {""};
  EXPECT_EQ(d.Validate().code(), StatusCode::kInvalidArgument);
}

TEST(TableDescriptorTest, EncodeDecodeRoundTrip) {
  TableDescriptor d = Valid();
  FamilyDescriptor h;
  h.name = "h";
  h.versions = 5;
  h.min_versions = 2;
  h.ttl_seconds = 3600;
  h.compression = "ZSTD";
  h.bloom_filter = "ROWCOL";
  h.block_size_bytes = 8192;
  h.in_memory = true;
  h.data_block_encoding = "FAST_DIFF";
  d.families.push_back(h);
  d.split_points = {std::string("\x00\x01", 2), "m", std::string("\xff\\x", 3)};

  const std::string json = EncodeTableDescriptor(d);
  EXPECT_NE(json.find("\"format\":1"), std::string::npos) << json;
  Result<TableDescriptor> back = DecodeTableDescriptor(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->name_space, d.name_space);
  EXPECT_EQ(back->table, d.table);
  EXPECT_EQ(back->split_points, d.split_points);
  ASSERT_EQ(back->families.size(), 2u);
  const FamilyDescriptor& g = back->families[1];
  EXPECT_EQ(g.name, "h");
  EXPECT_EQ(g.versions, 5);
  EXPECT_EQ(g.min_versions, 2);
  EXPECT_EQ(g.ttl_seconds, 3600);
  EXPECT_EQ(g.compression, "ZSTD");
  EXPECT_EQ(g.bloom_filter, "ROWCOL");
  EXPECT_EQ(g.block_size_bytes, 8192);
  EXPECT_TRUE(g.in_memory);
  EXPECT_EQ(g.data_block_encoding, "FAST_DIFF");
  EXPECT_EQ(EncodeTableDescriptor(*back), json);
}

TEST(TableDescriptorTest, DecodeMalformedIsDataLoss) {
  for (const char* bad : {
           "",
           "{",
           "[]",
           "42",
           "{\"format\":1}",
           "{\"format\":\"1\",\"namespace\":\"a\",\"table\":\"t\",\"families\":[{\"name\":\"d\"}]}",
           "{\"format\":1,\"namespace\":\"a\",\"table\":\"t\",\"families\":{}}",
           "{\"format\":1,\"namespace\":\"a\",\"table\":\"t\",\"families\":[{\"name\":1}]}",
           "{\"format\":1,\"namespace\":\"a\",\"table\":\"t\",\"families\":[{\"name\":\"d\","
           "\"versions\":\"3\"}]}",
           "{\"format\":1,\"namespace\":\"a\",\"table\":\"t\",\"families\":[{\"name\":\"d\","
           "\"versions\":99999999999}]}",
           "{\"format\":1,\"namespace\":\"a\",\"table\":\"t\",\"families\":[]}",  // invalid
           "{\"format\":1,\"namespace\":\"a\",\"table\":\"t\",\"families\":[{\"name\":\"d\"}],"
           "\"split_points\":[\"\\\\xZZ\"]}",
       }) {
    Result<TableDescriptor> r = DecodeTableDescriptor(bad);
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << bad;
  }
}

TEST(TableDescriptorTest, DecodeOtherFormatIsFailedPrecondition) {
  Result<TableDescriptor> r = DecodeTableDescriptor(
      "{\"format\":2,\"namespace\":\"a\",\"table\":\"t\",\"families\":[{\"name\":\"d\"}]}");
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
}

TEST(TableDescriptorTest, DecodeFillsHBaseDefaults) {
  Result<TableDescriptor> r = DecodeTableDescriptor(
      "{\"format\":1,\"namespace\":\"default\",\"table\":\"t\",\"families\":[{\"name\":\"d\"}]}");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const FamilyDescriptor& f = r->families[0];
  EXPECT_EQ(f.versions, 1);
  EXPECT_EQ(f.ttl_seconds, 0);
  EXPECT_EQ(f.bloom_filter, "ROW");
  EXPECT_EQ(f.block_size_bytes, 65536);
}

}  // namespace
}  // namespace widen
