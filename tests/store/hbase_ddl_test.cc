#include "store/hbase_ddl.h"

#include <gtest/gtest.h>

#include "common/bytes.h"

namespace widen {
namespace {

TableDescriptor Orders() {
  TableDescriptor d;
  d.name_space = "shop";
  d.table = "orders";
  FamilyDescriptor f;
  f.name = "d";
  d.families.push_back(f);
  return d;
}

TEST(HBaseDdlTest, DefaultFamilyOptionsAreAllWritten) {
  EXPECT_EQ(HBaseShellCreate(Orders()),
            "create 'shop:orders',\n"
            "  {NAME => 'd', VERSIONS => 1, MIN_VERSIONS => 0, TTL => 2147483647, "
            "COMPRESSION => 'NONE', BLOOMFILTER => 'ROW', BLOCKSIZE => 65536, "
            "IN_MEMORY => 'false', DATA_BLOCK_ENCODING => 'NONE'}\n");
}

TEST(HBaseDdlTest, EachFamilyOption) {
  TableDescriptor d = Orders();
  FamilyDescriptor& f = d.families[0];
  f.versions = 3;
  f.min_versions = 1;
  f.ttl_seconds = 2592000;
  f.compression = "SNAPPY";
  f.bloom_filter = "ROWCOL";
  f.block_size_bytes = 16384;
  f.in_memory = true;
  f.data_block_encoding = "FAST_DIFF";
  ASSERT_TRUE(d.Validate().ok());
  const std::string s = HBaseShellCreate(d);
  for (const char* want :
       {"VERSIONS => 3", "MIN_VERSIONS => 1", "TTL => 2592000", "COMPRESSION => 'SNAPPY'",
        "BLOOMFILTER => 'ROWCOL'", "BLOCKSIZE => 16384", "IN_MEMORY => 'true'",
        "DATA_BLOCK_ENCODING => 'FAST_DIFF'"}) {
    EXPECT_NE(s.find(want), std::string::npos) << want << " in " << s;
  }
}

TEST(HBaseDdlTest, SeveralFamiliesInOrder) {
  TableDescriptor d = Orders();
  FamilyDescriptor h;
  h.name = "h";
  h.versions = 5;
  d.families.push_back(h);
  const std::string s = HBaseShellCreate(d);
  const size_t fd = s.find("{NAME => 'd'");
  const size_t fh = s.find("{NAME => 'h', VERSIONS => 5");
  ASSERT_NE(fd, std::string::npos);
  ASSERT_NE(fh, std::string::npos);
  EXPECT_LT(fd, fh);
}

TEST(HBaseDdlTest, BinarySplitPointsAreToBytesBinaryLiterals) {
  TableDescriptor d = Orders();
  d.split_points = {std::string("\x00\x01", 2), "\x7f", "A100|0'5", "\xff\\"};
  const std::string s = HBaseShellCreate(d);
  EXPECT_NE(s.find("{SPLITS => ['\\x00\\x01', '\\x7F', 'A100|0\\x275', '\\xFF\\x5C']}"),
            std::string::npos)
      << s;
}

TEST(HBaseDdlTest, SplitLiteralsRoundTripThroughTheShellsDecoding) {
  // Ruby keeps a single-quoted string as written (\\ and \' aside, never
  // produced here); HBase then applies Bytes.toBytesBinary, which widen's
  // FromStringBinary mirrors.
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const std::string lit = RubyBinaryLiteral(all);
  ASSERT_EQ(lit.front(), '\'');
  ASSERT_EQ(lit.back(), '\'');
  const std::string body = lit.substr(1, lit.size() - 2);
  EXPECT_EQ(body.find('\''), std::string::npos);
  EXPECT_EQ(body.find("\\\\"), std::string::npos);
  std::string back;
  ASSERT_TRUE(FromStringBinary(body, &back));
  EXPECT_EQ(back, all);
}

TEST(HBaseDdlTest, MetadataIsQuoted) {
  TableDescriptor d = Orders();
  d.metadata["widen.key"] = R"({"separator":"|","literal":"it's \\x"})";
  const std::string s = HBaseShellCreate(d);
  EXPECT_NE(s.find(R"(METADATA => {'widen.key' => '{"separator":"|","literal":"it\'s \\\\x"}'})"),
            std::string::npos)
      << s;
  HBaseDdlOptions o;
  o.metadata = false;
  EXPECT_EQ(HBaseShellCreate(d, o).find("METADATA"), std::string::npos);
}

TEST(HBaseDdlTest, SplitsAndMetadataShareTheTableOptions) {
  TableDescriptor d = Orders();
  d.split_points = {"m"};
  d.metadata["k"] = "v";
  const std::string s = HBaseShellCreate(d);
  EXPECT_NE(s.find("  {SPLITS => ['m'],\n   METADATA => {'k' => 'v'}}\n"), std::string::npos) << s;
}

TEST(HBaseDdlTest, NamespacesAreCreatedOnceAndNeverDefault) {
  TableDescriptor a = Orders();
  TableDescriptor b = Orders();
  b.table = "customers";
  TableDescriptor c = Orders();
  c.name_space = "default";
  c.table = "plain";
  const std::string s = HBaseShellDdl({a, b, c});
  EXPECT_EQ(s.rfind("create_namespace 'shop'\ncreate 'shop:orders',", 0), 0u) << s;
  EXPECT_EQ(s.find("create_namespace 'shop'"), s.rfind("create_namespace 'shop'"));
  EXPECT_EQ(s.find("create_namespace 'default'"), std::string::npos);
  EXPECT_NE(s.find("create 'plain',"), std::string::npos);
  HBaseDdlOptions o;
  o.create_namespaces = false;
  EXPECT_EQ(HBaseShellDdl({a}, o).find("create_namespace"), std::string::npos);
}

TEST(HBaseDdlTest, RubyQuoteEscapes) { EXPECT_EQ(RubyQuote("a'b\\c"), "'a\\'b\\\\c'"); }

}  // namespace
}  // namespace widen
