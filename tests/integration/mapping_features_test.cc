// Mapping features end to end on a small schema written here: binary keys
// (salt, desc, NULL marker) and their order, the hbase value codec, versions
// from a column, TTL, free-form queries, per-attribute nesting. Expected
// values come from SQL on the source or from the formats' specifications.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

class MappingFeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WIDEN_REQUIRE_PG(url);
    db_ = FreshPgDatabase(url, "widen_it_features");
    PgQuery(db_, R"SQL(
      CREATE TABLE reading (
        sensor_id int NOT NULL,
        taken_at timestamp NOT NULL,
        site text,
        celsius double precision NOT NULL,
        quality numeric(6,3) NOT NULL,
        ok boolean NOT NULL,
        PRIMARY KEY (sensor_id, taken_at));
      INSERT INTO reading VALUES
        (1, '2024-01-01 10:00:00', 'north', 20.5, 0.975, true),
        (1, '2024-01-01 11:00:00', NULL, -3.25, 1.000, false),
        (2, '2024-01-02 09:30:00', 'south', 0, -0.5, true),
        (-7, '1999-12-31 23:59:59', 'w|est', 1e300, 12.125, true),
        (300, '2024-06-01 00:00:00', '', -0.0, 0, false);
      CREATE TABLE sensor (sensor_id int PRIMARY KEY, model text NOT NULL, installed date);
      INSERT INTO sensor VALUES (1, 'T-1000', '2020-02-29'), (2, 'T-2000', NULL),
                                (-7, 'X', '1999-01-01'), (300, 'Z', '2024-05-31');
    )SQL");
    dir_ = MakeTempDir();
    target_ = "leveldb:" + dir_ + "/store";
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  CommandResult Migrate(const std::string& yaml, const std::string& extra = "") {
    std::string path = dir_ + "/m.yaml";
    std::ofstream(path) << "source: " << db_ << "\ntarget: " << target_ << "\n" << yaml;
    return RunCommand(fmt::format("{} migrate -m {} --timestamp-ms 1700000000000 {}", WidenBinary(),
                                  path, extra));
  }

  std::string db_, dir_, target_;
};

TEST_F(MappingFeaturesTest, BinaryKeysSortLikeTheSourceOrder) {
  CommandResult r = Migrate(R"(tables:
  - name: iot:readings
    from: reading
    families: [d]
    key:
      form: binary
      parts:
        - sensor_id
        - {column: taken_at, desc: true}
    columns: [celsius]
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The store's row order (unsigned bytes) must be the SQL order.
  auto expected =
      PgQuery(db_, "SELECT sensor_id, taken_at FROM reading ORDER BY sensor_id, taken_at DESC");
  TableCells cells = ReadTable(target_, "iot:readings");
  ASSERT_EQ(cells.size(), expected.size());
  CommandResult scan = RunCommand(
      fmt::format("{} scan iot:readings --decode --target {}", WidenBinary(), ShellQuote(target_)));
  ASSERT_EQ(scan.exit_code, 0) << scan.output;
  size_t pos = 0;
  for (const auto& e : expected) {
    // taken_at as widen prints it: YYYY-MM-DD HH:MM:SS (ms precision).
    std::string want = fmt::format("sensor_id={} taken_at={} column=", e[0], e[1]);
    size_t at = scan.output.find(want, pos);
    ASSERT_NE(at, std::string::npos) << want << " in order, in\n" << scan.output;
    pos = at;
  }
  // Exact bytes of the first key: int32 -7 sign-flipped, then the inverted
  // int64 ms of 1999-12-31 23:59:59 (946684799000) sign-flipped.
  std::string key;
  PutFixed32BE(&key, static_cast<uint32_t>(-7) ^ 0x80000000u);
  std::string ts;
  PutFixed64BE(&ts, static_cast<uint64_t>(946684799000LL) ^ 0x8000000000000000ull);
  for (char& c : ts) c = static_cast<char>(~c);
  key += ts;
  EXPECT_EQ(cells.begin()->first, key);
}

TEST_F(MappingFeaturesTest, NullableKeyPartNeedsARuleAndMarkerSortsFirst) {
  const char* kYaml = R"(tables:
  - name: iot:by_site
    from: reading
    families: [d]
    key:
      form: binary
      parts:
        - {column: site%s}
        - sensor_id
        - taken_at
    columns: [celsius]
)";
  std::string bare = kYaml;
  bare.replace(bare.find("%s"), 2, "");
  CommandResult r = Migrate(bare);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("can be NULL"), std::string::npos) << r.output;

  std::string yaml = kYaml;
  yaml.replace(yaml.find("%s"), 2, ", on_null: marker");
  r = Migrate(yaml);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TableCells cells = ReadTable(target_, "iot:by_site");
  ASSERT_EQ(cells.size(), 5u);
  // NULL site: the marker byte 0x00 sorts before '' (0x01 then terminator).
  EXPECT_EQ(cells.begin()->first[0], '\0');
  EXPECT_EQ(std::next(cells.begin())->first.substr(0, 3), std::string("\x01\x00\x01", 3));
}

TEST_F(MappingFeaturesTest, SaltSpreadsKeysAndDecodes) {
  CommandResult r = Migrate(R"(tables:
  - name: iot:salted
    from: reading
    families: [d]
    key:
      form: binary
      salt: {buckets: 4, parts: [sensor_id]}
      parts: [sensor_id, taken_at]
    columns: [celsius]
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TableCells cells = ReadTable(target_, "iot:salted");
  ASSERT_EQ(cells.size(), 5u);
  for (const auto& [row, cols] : cells) {
    // bucket = FNV-1a-32(int32 sensor_id encoding) mod 4, per docs/format.md.
    std::string enc = row.substr(1, 4);
    uint32_t h = 2166136261u;
    for (unsigned char c : enc) h = (h ^ c) * 16777619u;
    EXPECT_EQ(static_cast<unsigned char>(row[0]), h % 4);
  }
  CommandResult scan = RunCommand(
      fmt::format("{} scan iot:salted --decode --target {}", WidenBinary(), ShellQuote(target_)));
  EXPECT_NE(scan.output.find("salt="), std::string::npos) << scan.output;
  EXPECT_NE(scan.output.find("sensor_id=300 taken_at=2024-06-01 00:00:00"), std::string::npos)
      << scan.output;
}

TEST_F(MappingFeaturesTest, HBaseCodecWritesJavaBytes) {
  CommandResult r = Migrate(R"(tables:
  - name: iot:typed
    from: reading
    families: [d]
    key:
      parts: [sensor_id, taken_at]
    columns:
      - {column: sensor_id, to: "d:id", codec: hbase}
      - {column: celsius, to: "d:c", codec: hbase}
      - {column: quality, to: "d:q", codec: hbase}
      - {column: ok, to: "d:ok", codec: hbase}
      - {column: sensor_id, to: "d:idl", codec: hbase, type: long}
      - {column: celsius, to: "d:cj", codec: json}
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TableCells cells = ReadTable(target_, "iot:typed");
  const auto& row = cells.at("1|2024-01-01 10:00:00");
  EXPECT_EQ(row.at("d:id"), std::string("\x00\x00\x00\x01", 4));  // Bytes.toBytes(int 1)
  EXPECT_EQ(row.at("d:idl"), std::string("\x00\x00\x00\x00\x00\x00\x00\x01", 8));
  EXPECT_EQ(row.at("d:c"), std::string("\x40\x34\x80\x00\x00\x00\x00\x00", 8));  // 20.5
  // new BigDecimal("0.975"): scale 3, unscaled 975 = 0x03CF.
  EXPECT_EQ(row.at("d:q"), std::string("\x00\x00\x00\x03\x03\xcf", 6));
  EXPECT_EQ(row.at("d:ok"), std::string("\xff", 1));
  EXPECT_EQ(row.at("d:cj"), "20.5");
  const auto& neg = cells.at("2|2024-01-02 09:30:00");
  // new BigDecimal("-0.500"): scale 3, unscaled -500 = 0xFE0C.
  EXPECT_EQ(neg.at("d:q"), std::string("\x00\x00\x00\x03\xfe\x0c", 6));
}

TEST_F(MappingFeaturesTest, VersionsFromAColumnAndTtl) {
  CommandResult r = Migrate(R"(tables:
  - name: iot:history
    from: reading
    version: taken_at
    families:
      - {name: h, versions: 5}
    key:
      parts: [sensor_id]
    columns:
      - {column: celsius, to: "h:c"}
  - name: iot:recent
    from: reading
    version: taken_at
    families:
      - {name: h, versions: 5, ttl: 86400}
    key:
      parts: [sensor_id]
    columns:
      - {column: celsius, to: "h:c"}
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Sensor 1 has two readings: two versions, newest first, timestamps = taken_at.
  CommandResult scan = RunCommand(fmt::format("{} get iot:history 1 --versions 5 --target {}",
                                              WidenBinary(), ShellQuote(target_)));
  ASSERT_EQ(scan.exit_code, 0) << scan.output;
  auto ms = PgQuery(db_,
                    "SELECT (extract(epoch FROM taken_at) * 1000)::bigint, celsius FROM "
                    "reading WHERE sensor_id = 1 ORDER BY taken_at DESC");
  ASSERT_EQ(ms.size(), 2u);
  size_t first = scan.output.find("timestamp=" + ms[0][0] + ", value=-3.25");
  size_t second = scan.output.find("timestamp=" + ms[1][0] + ", value=20.5");
  EXPECT_NE(first, std::string::npos) << scan.output;
  EXPECT_NE(second, std::string::npos) << scan.output;
  EXPECT_LT(first, second) << "newest version first";
  // A one-day TTL hides readings from years ago (the store reads with the real clock).
  EXPECT_EQ(ReadTable(target_, "iot:recent").size(), 0u);
  EXPECT_EQ(ReadTable(target_, "iot:history").size(), 4u);
}

TEST_F(MappingFeaturesTest, FreeFormQueryAndPerAttributeNesting) {
  CommandResult r = Migrate(R"(tables:
  - name: iot:daily
    from: d
    query: >-
      SELECT sensor_id, date_trunc('day', taken_at)::date AS day, count(*) AS n, max(celsius) AS hi
      FROM reading GROUP BY 1, 2
    families: [s]
    key:
      parts: [{column: sensor_id, on_null: reject}, {column: day, on_null: reject}]
    columns: [n, hi]
  - name: iot:sensors
    from: sensor
    families: [d, r]
    key:
      parts: [sensor_id]
    columns: [model]
    nest:
      - table: reading
        on: {sensor_id: sensor_id}
        family: r
        prefix: "t"
        id: [taken_at]
        layout: cells
        attribute_separator: ":"
        columns: [site, celsius]
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TableCells daily = ReadTable(target_, "iot:daily");
  auto q = PgQuery(db_,
                   "SELECT sensor_id || '|' || date_trunc('day', taken_at)::date, count(*) "
                   "FROM reading GROUP BY sensor_id, date_trunc('day', taken_at)");
  ASSERT_EQ(daily.size(), q.size());
  for (const auto& e : q) EXPECT_EQ(daily.at(e[0]).at("s:n"), e[1]) << e[0];

  TableCells sensors = ReadTable(target_, "iot:sensors");
  const auto& s1 = sensors.at("1");
  EXPECT_EQ(s1.at("r:t2024-01-01 10:00:00:site"), "north");
  EXPECT_EQ(s1.at("r:t2024-01-01 10:00:00:celsius"), "20.5");
  EXPECT_EQ(s1.count("r:t2024-01-01 11:00:00:site"), 0u) << "a NULL attribute has no cell";
  EXPECT_EQ(s1.at("r:t2024-01-01 11:00:00:celsius"), "-3.25");
}

TEST_F(MappingFeaturesTest, NestColumnsAreRenamedWithAs) {
  CommandResult r = Migrate(R"(tables:
  - name: iot:named
    from: sensor
    families: [r]
    key:
      parts: [sensor_id]
    nest:
      - {table: reading, on: {sensor_id: sensor_id}, family: r, id: [taken_at],
         columns: [{column: site, as: place}, celsius]}
  - name: iot:named_cells
    from: sensor
    families: [r]
    key:
      parts: [sensor_id]
    nest:
      - {table: reading, on: {sensor_id: sensor_id}, family: r, prefix: t, id: [taken_at],
         layout: cells, attribute_separator: ":", columns: [{column: site, as: place}]}
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TableCells json = ReadTable(target_, "iot:named");
  auto j = nlohmann::json::parse(json.at("1").at("r:2024-01-01 10:00:00"));
  EXPECT_EQ(j.at("place"), "north") << j.dump();
  EXPECT_FALSE(j.contains("site")) << j.dump();
  EXPECT_TRUE(j.contains("celsius")) << j.dump();
  TableCells cells = ReadTable(target_, "iot:named_cells");
  EXPECT_EQ(cells.at("1").at("r:t2024-01-01 10:00:00:place"), "north");
  EXPECT_EQ(cells.at("1").count("r:t2024-01-01 10:00:00:site"), 0u);
}

TEST_F(MappingFeaturesTest, ValueLayoutStoresTheSingleAttributeBare) {
  CommandResult r = Migrate(R"(tables:
  - name: iot:bare
    from: sensor
    families: [r]
    key:
      parts: [sensor_id]
    nest:
      - {table: reading, on: {sensor_id: sensor_id}, family: r, id: [taken_at], layout: value,
         columns: [site]}
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TableCells cells = ReadTable(target_, "iot:bare");
  EXPECT_EQ(cells.at("1").at("r:2024-01-01 10:00:00"), "north");
  EXPECT_EQ(cells.at("1").count("r:2024-01-01 11:00:00"), 0u) << "NULL site: no cell";
  EXPECT_EQ(cells.at("300").at("r:2024-06-01 00:00:00"), "") << "'' is a cell with an empty value";

  r = Migrate(R"(tables:
  - name: iot:bare2
    from: sensor
    families: [r]
    key:
      parts: [sensor_id]
    nest:
      - {table: reading, on: {sensor_id: sensor_id}, family: r, id: [taken_at], layout: value}
)");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("layout: value needs exactly one value column"), std::string::npos)
      << r.output;
}

TEST_F(MappingFeaturesTest, FamilyOptionsAreStoredWithTheTable) {
  CommandResult r = Migrate(R"(tables:
  - name: iot:opts
    from: sensor
    families:
      - {name: d, versions: 3, min_versions: 1, ttl: 600, compression: snappy, bloom_filter: ROWCOL,
         block_size: 16384, in_memory: true, data_block_encoding: FAST_DIFF}
    key:
      parts: [sensor_id]
    columns: [model]
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Re-running with another option must be refused (exit 5) rather than mix layouts.
  r = Migrate(R"(tables:
  - name: iot:opts
    from: sensor
    families:
      - {name: d, versions: 2}
    key:
      parts: [sensor_id]
    columns: [model]
)");
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find("VERSIONS is 3"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace widen::testing
