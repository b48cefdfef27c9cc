// Chinook (a real database nobody on the team wrote) end to end: load the
// PostgreSQL version into the throwaway server, migrate it with
// examples/chinook/mapping.yaml, and check the target against SQL on the source.
#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

class ChinookTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string url = PgUrl();
    if (url.empty()) return;
    const std::string sql = DatasetsDir() + "/chinook/postgresql/Chinook_PostgreSql.sql";
    if (!std::filesystem::exists(sql)) return;
    db_url_ = new std::string(FreshPgDatabase(url, "widen_it_chinook"));
    RunPsqlScript(*db_url_, sql);
    dir_ = new std::string(MakeTempDir());
    migrate_ = new CommandResult(RunCommand(fmt::format(
        "WIDEN_SOURCE_URL={} {} migrate -m {} --target {} --timestamp-ms 1600000000000",
        ShellQuote(*db_url_), WidenBinary(), SourceDir() + "/examples/chinook/mapping.yaml",
        ShellQuote("leveldb:" + *dir_ + "/store"))));
  }

  void SetUp() override {
    WIDEN_REQUIRE_PG(url);
    const std::string sql = DatasetsDir() + "/chinook/postgresql/Chinook_PostgreSql.sql";
    ASSERT_TRUE(std::filesystem::exists(sql))
        << sql << " is missing: set WIDEN_DATASETS to the shared datasets folder";
    ASSERT_NE(migrate_, nullptr);
    ASSERT_EQ(migrate_->exit_code, 0) << migrate_->output;
  }

  static std::string Target() { return "leveldb:" + *dir_ + "/store"; }

  static std::string* db_url_;
  static std::string* dir_;
  static CommandResult* migrate_;
};

std::string* ChinookTest::db_url_ = nullptr;
std::string* ChinookTest::dir_ = nullptr;
CommandResult* ChinookTest::migrate_ = nullptr;

TEST_F(ChinookTest, ArtistsWithAlbumsNested) {
  TableCells cells = ReadTable(Target(), "music:artists");
  auto artists = PgQuery(*db_url_,
                         "SELECT lpad(artist_id::text, 6, '0'), name, (SELECT count(*) FROM album "
                         "a WHERE a.artist_id = ar.artist_id) FROM artist ar");
  ASSERT_EQ(cells.size(), artists.size());
  for (const auto& a : artists) {
    SCOPED_TRACE(a[0]);
    const auto& row = cells[a[0]];
    if (a[1] == "<NULL>") {
      EXPECT_EQ(row.count("d:name"), 0u);
    } else {
      EXPECT_EQ(row.at("d:name"), a[1]);
    }
    size_t albums = 0;
    for (const auto& [col, v] : row) albums += col.rfind("a:a", 0) == 0;
    EXPECT_EQ(std::to_string(albums), a[2]);
  }
  auto albums = PgQuery(
      *db_url_, "SELECT lpad(artist_id::text, 6, '0'), 'a:a' || album_id, title FROM album");
  size_t nested_total = 0;
  for (const auto& [row, cols] : cells) {
    for (const auto& [col, v] : cols) nested_total += col.rfind("a:a", 0) == 0;
  }
  EXPECT_EQ(nested_total, albums.size());
  for (const auto& al : albums) {
    auto j = nlohmann::json::parse(cells[al[0]].at(al[1]));
    EXPECT_EQ(j, nlohmann::json({{"title", al[2]}}));
  }
}

TEST_F(ChinookTest, InvoicesKeyedByCustomerAndDateWithLinesNested) {
  TableCells cells = ReadTable(Target(), "sales:invoices");
  auto count =
      PgQuery(*db_url_, "SELECT count(*), (SELECT count(*) FROM invoice_line) FROM invoice");
  ASSERT_EQ(std::to_string(cells.size()), count[0][0]);
  size_t lines = 0;
  for (const auto& [row, cols] : cells) {
    for (const auto& [col, v] : cols) lines += col.rfind("l:l", 0) == 0;
  }
  EXPECT_EQ(std::to_string(lines), count[0][1]);

  // Every cell of a sample of invoices (every 7th).
  auto sample = PgQuery(*db_url_, R"SQL(
    SELECT lpad(i.customer_id::text, 5, '0') || '|' ||
             to_char(i.invoice_date, 'YYYY-MM-DD HH24:MI:SS') || '|' ||
             lpad(i.invoice_id::text, 6, '0'),
           c.first_name, c.last_name, c.email, i.billing_city, i.billing_country, i.total::text,
           i.invoice_id
    FROM invoice i JOIN customer c USING (customer_id)
    WHERE i.invoice_id % 7 = 0)SQL");
  ASSERT_GT(sample.size(), 50u);
  for (const auto& s : sample) {
    SCOPED_TRACE(s[0]);
    ASSERT_EQ(cells.count(s[0]), 1u);
    const auto& row = cells[s[0]];
    EXPECT_EQ(row.at("d:first_name"), s[1]);
    EXPECT_EQ(row.at("d:last_name"), s[2]);
    EXPECT_EQ(row.at("d:email"), s[3]);
    EXPECT_EQ(row.at("d:city"), s[4]);
    EXPECT_EQ(row.at("d:country"), s[5]);
    EXPECT_EQ(row.at("d:total"), s[6]);
    auto lines = PgQuery(*db_url_,
                         "SELECT 'l:l' || invoice_line_id, track_id, unit_price::text, "
                         "quantity FROM invoice_line WHERE invoice_id = " +
                             s[7]);
    size_t nested = 0;
    for (const auto& [col, v] : row) nested += col.rfind("l:", 0) == 0;
    EXPECT_EQ(nested, lines.size());
    for (const auto& l : lines) {
      auto j = nlohmann::json::parse(row.at(l[0]));
      EXPECT_EQ(j.at("track_id"), std::stoll(l[1]));
      EXPECT_EQ(j.at("unit_price"), l[2]);
      EXPECT_EQ(j.at("quantity"), std::stoll(l[3]));
    }
  }
}

TEST_F(ChinookTest, SummaryReportsRowsPerTable) {
  auto n =
      PgQuery(*db_url_, "SELECT (SELECT count(*) FROM artist), (SELECT count(*) FROM invoice)");
  // The summary line of each table shows its target rows.
  EXPECT_NE(migrate_->output.find("music:artists"), std::string::npos) << migrate_->output;
  EXPECT_NE(migrate_->output.find(" " + n[0][0] + " "), std::string::npos) << migrate_->output;
  EXPECT_NE(migrate_->output.find(" " + n[0][1] + " "), std::string::npos) << migrate_->output;
}

}  // namespace
}  // namespace widen::testing
