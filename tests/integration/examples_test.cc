// examples/bands, examples/applicants and examples/inbox end to end: load
// each example into a fresh PostgreSQL database, run `widen migrate` with its
// mapping.yaml (examples/cron/shop.yaml: `widen sync` on both engines), and compare the target tables' layout (row keys, nested
// qualifiers, values, order, versions) with what SQL says about the source.
// Expected values always come from the source database, never from widen.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <regex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

constexpr int64_t kRunTimestampMs = 1700000000000;
constexpr const char* kNull = "<NULL>";  // PgQuery's NULL

using SqlRows = std::vector<std::vector<std::string>>;

// `bytes` bytes of `v`, big-endian.
std::string BigEndian(uint64_t v, int bytes) {
  std::string out(bytes, '\0');
  for (int i = bytes - 1; i >= 0; --i, v >>= 8) out[i] = static_cast<char>(v & 0xFF);
  return out;
}

// Binary key parts as docs/format.md draws them.
std::string Int32Part(const std::string& decimal) {
  return BigEndian(static_cast<uint32_t>(std::stol(decimal)) ^ 0x80000000u, 4);
}
std::string Int64Part(const std::string& decimal) {
  return BigEndian(static_cast<uint64_t>(std::stoll(decimal)) ^ (uint64_t{1} << 63), 8);
}
// `reversed` is Long.MAX_VALUE - ms, computed by SQL.
std::string ReversedTimestampPart(const std::string& reversed) {
  return BigEndian(static_cast<uint64_t>(std::stoll(reversed)), 8);
}

// Every byte as \xNN: the form `widen scan --prefix` and `widen get` take.
std::string HexEscaped(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("\\x{:02X}", c);
  return out;
}

// The lines of `text` that match `pattern` (ECMAScript) entirely, capture
// group 1 of each, in order.
std::vector<std::string> Captures(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::smatch m;
    std::string line = text.substr(start, end - start);
    if (std::regex_match(line, m, re)) out.push_back(m[1].str());
    start = end + 1;
  }
  return out;
}

// The distinct rows of `cells`, in the order read.
std::vector<std::string> Rows(const std::vector<CellRecord>& cells) {
  std::vector<std::string> rows;
  for (const auto& c : cells) {
    if (rows.empty() || rows.back() != c.row) rows.push_back(c.row);
  }
  return rows;
}

// One example loaded into its own fresh database, migrated into a new store.
class ExampleTest : public ::testing::Test {
 protected:
  void Load(const std::string& example) {
    WIDEN_REQUIRE_PG(url);
    example_ = example;
    db_url_ = FreshPgDatabase(url, "widen_it_examples_" + example);
    const std::string dir = SourceDir() + "/examples/" + example + "/";
    RunPsqlFile(db_url_, dir + "schema.pg.sql");
    RunPsqlFile(db_url_, dir + "data.pg.sql");
    store_dir_ = MakeTempDir();
    target_ = "leveldb:" + store_dir_ + "/store";
  }

  std::string MappingPath() const {
    return SourceDir() + "/examples/" + example_ + "/mapping.yaml";
  }

  // `widen migrate` with the example's mapping; every cell whose timestamp
  // does not come from the data gets kRunTimestampMs.
  CommandResult Migrate() {
    return RunCommand(
        fmt::format("WIDEN_SOURCE_URL={} {} migrate -q -m {} --target {} "
                    "--timestamp-ms {}",
                    ShellQuote(db_url_), WidenBinary(), ShellQuote(MappingPath()),
                    ShellQuote(target_), kRunTimestampMs));
  }

  // `widen ARGS --target <store>`.
  CommandResult Widen(const std::string& args) {
    return RunCommand(fmt::format("{} {} --target {}", WidenBinary(), args, ShellQuote(target_)));
  }

  SqlRows Sql(const std::string& sql) { return PgQuery(db_url_, sql); }

  std::string example_, db_url_, store_dir_, target_;
};

// ---------------------------------------------------------------- bands

class ExamplesBandsTest : public ExampleTest {
 protected:
  void SetUp() override { Load("bands"); }
};

// Every nested qualifier of music:bands (family c), per band, in the store's
// order: shows s<show>, albums a<album> each followed by its tracks
// a<album>t<position>, members m<member>.
TEST_F(ExamplesBandsTest, BandRowsNestShowsAlbumsTracksAndMembers) {
  CommandResult r = Migrate();
  ASSERT_EQ(r.exit_code, 0) << r.output;

  auto bands = Sql(R"SQL(
    SELECT lpad(band_id::text, 3, '0'), name, formed_year::text, country,
           (SELECT count(*) FROM band_show s WHERE s.band_id = b.band_id),
           (SELECT count(*) FROM album a WHERE a.band_id = b.band_id),
           (SELECT count(*) FROM track t JOIN album a USING (album_id) WHERE a.band_id = b.band_id),
           (SELECT count(*) FROM band_member m WHERE m.band_id = b.band_id)
    FROM band b ORDER BY band_id)SQL");
  TableCells cells = ReadTable(target_, "music:bands");
  ASSERT_EQ(cells.size(), bands.size()) << "one row per band";
  for (const auto& b : bands) {
    SCOPED_TRACE("band " + b[0]);
    ASSERT_EQ(cells.count(b[0]), 1u);
    const auto& row = cells[b[0]];
    EXPECT_EQ(row.at("b:name"), b[1]);
    for (auto [col, v] : {std::pair{"b:formed", b[2]}, std::pair{"b:country", b[3]}}) {
      if (v == kNull) {
        EXPECT_EQ(row.count(col), 0u) << col << ": a NULL is omitted";
      } else {
        EXPECT_EQ(row.at(col), v) << col;
      }
    }
    std::map<std::string, int> per_entity;
    for (const auto& [col, v] : row) {
      if (std::regex_match(col, std::regex("c:s\\d{3}"))) ++per_entity["shows"];
      if (std::regex_match(col, std::regex("c:a\\d{3}"))) ++per_entity["albums"];
      if (std::regex_match(col, std::regex("c:a\\d{3}t\\d{2}"))) ++per_entity["tracks"];
      if (std::regex_match(col, std::regex("c:m\\d{3}"))) ++per_entity["members"];
    }
    EXPECT_EQ(std::to_string(per_entity["shows"]), b[4]);
    EXPECT_EQ(std::to_string(per_entity["albums"]), b[5]);
    EXPECT_EQ(std::to_string(per_entity["tracks"]), b[6]);
    EXPECT_EQ(std::to_string(per_entity["members"]), b[7]);
  }

  // The exact qualifiers in the store's order (a track right after its album).
  auto expected = Sql(R"SQL(
    SELECT lpad(band_id::text, 3, '0') AS k, q FROM (
      SELECT band_id, 's' || lpad(show_id::text, 3, '0') AS q FROM band_show
      UNION ALL SELECT band_id, 'a' || lpad(album_id::text, 3, '0') FROM album
      UNION ALL SELECT a.band_id, 'a' || lpad(a.album_id::text, 3, '0') || 't' ||
                                  lpad(t.position::text, 2, '0')
                FROM track t JOIN album a USING (album_id)
      UNION ALL SELECT band_id, 'm' || lpad(member_id::text, 3, '0') FROM band_member) x
    ORDER BY k, q COLLATE "C")SQL");
  std::vector<std::pair<std::string, std::string>> want, got;
  for (const auto& e : expected) want.emplace_back(e[0], "c:" + e[1]);
  for (const auto& c : ReadCells(target_, "music:bands")) {
    if (c.column.rfind("c:", 0) == 0) got.emplace_back(c.row, c.column);
  }
  EXPECT_EQ(got, want);
}

TEST_F(ExamplesBandsTest, NestedValuesAreJsonOfTheChildsAttributes) {
  CommandResult r = Migrate();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TableCells cells = ReadTable(target_, "music:bands");

  auto shows =
      Sql("SELECT lpad(band_id::text, 3, '0'), 'c:s' || lpad(show_id::text, 3, '0'), venue_id, "
          "show_date::text, tickets_sold FROM band_show");
  ASSERT_FALSE(shows.empty());
  for (const auto& s : shows) {
    SCOPED_TRACE(s[0] + " " + s[1]);
    auto j = nlohmann::json::parse(cells[s[0]].at(s[1]));
    EXPECT_EQ(j.size(), s[4] == kNull ? 2u : 3u);
    EXPECT_EQ(j.at("venue_id"), std::stoi(s[2]));
    EXPECT_EQ(j.at("show_date"), s[3]) << "dates are JSON strings";
    if (s[4] == kNull) {
      // SQL NULL is no attribute (JSON null is a JSON column's null), never 0.
      EXPECT_FALSE(j.contains("tickets_sold"));
    } else {
      EXPECT_EQ(j.at("tickets_sold"), std::stoi(s[4]));
    }
  }

  auto albums =
      Sql("SELECT lpad(band_id::text, 3, '0'), 'c:a' || lpad(album_id::text, 3, '0'), title, "
          "release_year, label FROM album");
  for (const auto& a : albums) {
    SCOPED_TRACE(a[0] + " " + a[1]);
    auto j = nlohmann::json::parse(cells[a[0]].at(a[1]));
    EXPECT_EQ(j.size(), a[4] == kNull ? 2u : 3u);
    EXPECT_EQ(j.at("title"), a[2]);
    EXPECT_EQ(j.at("release_year"), std::stoi(a[3]));
    if (a[4] == kNull) {
      EXPECT_FALSE(j.contains("label"));
    } else {
      EXPECT_EQ(j.at("label"), a[4]);
    }
  }

  auto tracks =
      Sql("SELECT lpad(a.band_id::text, 3, '0'), 'c:a' || lpad(a.album_id::text, 3, '0') || 't' || "
          "lpad(t.position::text, 2, '0'), t.track_id, t.title, t.duration_s "
          "FROM track t JOIN album a USING (album_id)");
  for (const auto& t : tracks) {
    SCOPED_TRACE(t[0] + " " + t[1]);
    auto j = nlohmann::json::parse(cells[t[0]].at(t[1]));
    EXPECT_EQ(j.size(), 3u);
    EXPECT_EQ(j.at("track_id"), std::stoi(t[2]));
    EXPECT_EQ(j.at("title"), t[3]) << "UTF-8 (an emoji in track 12) survives";
    EXPECT_EQ(j.at("duration_s"), std::stoi(t[4]));
  }

  auto members =
      Sql("SELECT lpad(band_id::text, 3, '0'), 'c:m' || lpad(member_id::text, 3, '0'), name, "
          "instrument, joined_year FROM band_member");
  for (const auto& m : members) {
    SCOPED_TRACE(m[0] + " " + m[1]);
    auto j = nlohmann::json::parse(cells[m[0]].at(m[1]));
    EXPECT_EQ(j.size(), m[4] == kNull ? 2u : 3u);
    EXPECT_EQ(j.at("name"), m[2]);
    EXPECT_EQ(j.at("instrument"), m[3]);
    if (m[4] == kNull) {
      EXPECT_FALSE(j.contains("joined_year"));
    } else {
      EXPECT_EQ(j.at("joined_year"), std::stoi(m[4]));
    }
  }

  for (const auto& c : ReadCells(target_, "music:bands")) {
    EXPECT_EQ(c.timestamp_ms, kRunTimestampMs) << c.row << " " << c.column;
  }
}

// Duplication: the same shows keyed venue|date|show, venue and band copied in.
TEST_F(ExamplesBandsTest, ShowsByVenueTableDenormalizesVenueAndBand) {
  CommandResult r = Migrate();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto shows = Sql(R"SQL(
    SELECT lpad(s.venue_id::text, 3, '0') || '|' || s.show_date::text || '|' ||
             lpad(s.show_id::text, 3, '0'),
           v.name, v.city, s.band_id::text, b.name, s.tickets_sold::text
    FROM band_show s JOIN venue v USING (venue_id) JOIN band b USING (band_id)
    ORDER BY s.venue_id, s.show_date, s.show_id)SQL");
  std::vector<CellRecord> read = ReadCells(target_, "music:shows");
  std::vector<std::string> want_rows;
  for (const auto& s : shows) want_rows.push_back(s[0]);
  EXPECT_EQ(Rows(read), want_rows) << "rows sort by venue, then date";

  TableCells cells = ReadTable(target_, "music:shows");
  ASSERT_EQ(cells.size(), shows.size());
  for (const auto& s : shows) {
    SCOPED_TRACE(s[0]);
    const auto& row = cells[s[0]];
    EXPECT_EQ(row.at("d:venue"), s[1]);
    EXPECT_EQ(row.at("d:city"), s[2]);
    EXPECT_EQ(row.at("d:band_id"), s[3]);
    EXPECT_EQ(row.at("d:band"), s[4]);
    if (s[5] == kNull) {
      EXPECT_EQ(row.count("d:tickets"), 0u);
    } else {
      EXPECT_EQ(row.at("d:tickets"), s[5]) << "0 is a value, unlike NULL";
    }
    EXPECT_EQ(row.size(), s[5] == kNull ? 4u : 5u);
  }
}

// The README's access path: "shows at venue 3 in 2024" is a prefix scan.
TEST_F(ExamplesBandsTest, ScanPrefixFindsShowsOfOneVenueInOneYear) {
  ASSERT_EQ(Migrate().exit_code, 0);
  auto want =
      Sql("SELECT '003|' || show_date::text || '|' || lpad(show_id::text, 3, '0'), b.name "
          "FROM band_show JOIN band b USING (band_id) "
          "WHERE venue_id = 3 AND extract(year FROM show_date) = 2024 ORDER BY show_date, show_id");
  ASSERT_FALSE(want.empty());
  CommandResult scan = Widen("scan music:shows --prefix '003|2024'");
  ASSERT_EQ(scan.exit_code, 0) << scan.output;
  std::vector<std::string> want_rows;
  for (const auto& w : want) want_rows.push_back(w[0]);
  EXPECT_EQ(Captures(scan.output, R"( (\S+) +column=d:band, .*)"), want_rows) << scan.output;
  EXPECT_NE(scan.output.find(fmt::format("{} row(s)", want.size())), std::string::npos)
      << scan.output;
}

// ---------------------------------------------------------------- applicants

class ExamplesApplicantsTest : public ExampleTest {
 protected:
  void SetUp() override { Load("applicants"); }

  // Per (applicant, question) the newest three answers, newest first, in the
  // store's order: row, qualifier, then timestamp descending.
  SqlRows NewestThreeAnswers() {
    return Sql(R"SQL(
      SELECT k, q, answer, ms FROM (
        SELECT lpad(applicant_id::text, 4, '0') AS k, 'a:' || question_id AS q, answer,
               (extract(epoch FROM answered_at) * 1000)::bigint AS ms,
               row_number() OVER (PARTITION BY applicant_id, question_id
                                  ORDER BY answered_at DESC) AS n
        FROM answer) x
      WHERE n <= 3
      ORDER BY k, q COLLATE "C", ms DESC)SQL");
  }

  // The answer cells (family a) of every version read back, as
  // (row, column, timestamp, answer text).
  std::vector<std::vector<std::string>> AnswerVersions(int max_versions) {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : ReadCells(target_, "hr:applicants", max_versions)) {
      if (c.column.rfind("a:", 0) != 0) continue;
      auto j = nlohmann::json::parse(c.value);
      EXPECT_EQ(j.size(), 1u) << c.value;
      out.push_back(
          {c.row, c.column, j.at("answer").get<std::string>(), std::to_string(c.timestamp_ms)});
    }
    return out;
  }
};

TEST_F(ExamplesApplicantsTest, OneRowPerApplicantWithTheLatestAnswerPerQuestion) {
  CommandResult r = Migrate();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto applicants = Sql(
      "SELECT lpad(applicant_id::text, 4, '0'), name, email, "
      "(SELECT count(DISTINCT question_id) FROM answer a WHERE a.applicant_id = p.applicant_id) "
      "FROM applicant p");
  TableCells cells = ReadTable(target_, "hr:applicants");
  ASSERT_EQ(cells.size(), applicants.size());
  for (const auto& a : applicants) {
    SCOPED_TRACE(a[0]);
    const auto& row = cells[a[0]];
    EXPECT_EQ(row.at("p:name"), a[1]);
    if (a[2] == kNull) {
      EXPECT_EQ(row.count("p:email"), 0u);
    } else {
      EXPECT_EQ(row.at("p:email"), a[2]);
    }
    size_t answers = 0;
    for (const auto& [col, v] : row) answers += col.rfind("a:", 0) == 0;
    EXPECT_EQ(std::to_string(answers), a[3]) << "one cell per question answered";
  }
  auto latest =
      Sql("SELECT DISTINCT ON (applicant_id, question_id) lpad(applicant_id::text, 4, '0'), "
          "'a:' || question_id, answer FROM answer "
          "ORDER BY applicant_id, question_id, answered_at DESC");
  for (const auto& l : latest) {
    SCOPED_TRACE(l[0] + " " + l[1]);
    auto j = nlohmann::json::parse(cells[l[0]].at(l[1]));
    EXPECT_EQ(j.at("answer"), l[2]) << "a plain read returns the newest version";
  }
}

TEST_F(ExamplesApplicantsTest, AnswerHistoryIsCellVersionsNewestFirst) {
  CommandResult r = Migrate();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(AnswerVersions(3), NewestThreeAnswers())
      << "versions capped at 3, newest first, timestamp = answered_at in ms";
  // Cells that are not from the history carry the run's timestamp.
  for (const auto& c : ReadCells(target_, "hr:applicants")) {
    if (c.column.rfind("p:", 0) == 0) {
      EXPECT_EQ(c.timestamp_ms, kRunTimestampMs) << c.row;
    }
  }
}

// The data holds at most 3 revisions per answer; add more so that the
// family's VERSIONS (3) has to cut the history.
TEST_F(ExamplesApplicantsTest, FamilyVersionsCapTheHistoryAtThree) {
  Sql("INSERT INTO answer VALUES "
      "(3, 2, '2024-03-11 09:00:00', 'fourth revision'), "
      "(3, 2, '2024-03-12 09:00:00', 'fifth revision')");
  auto counts = Sql("SELECT count(*) FROM answer WHERE applicant_id = 3 AND question_id = 2");
  ASSERT_EQ(counts[0][0], "5");
  CommandResult r = Migrate();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto versions = AnswerVersions(10);
  EXPECT_EQ(versions, NewestThreeAnswers());
  size_t n = 0;
  for (const auto& v : versions) n += v[0] == "0003" && v[1] == "a:2";
  EXPECT_EQ(n, 3u);
}

TEST_F(ExamplesApplicantsTest, RerunWritesTheSameCells) {
  ASSERT_EQ(Migrate().exit_code, 0);
  auto first = AnswerVersions(3);
  ASSERT_EQ(Migrate().exit_code, 0);
  EXPECT_EQ(AnswerVersions(3), first) << "timestamps from the data: no new versions";
}

// The README's excerpt: `widen scan --versions 3` shows the history.
TEST_F(ExamplesApplicantsTest, ScanWithVersionsShowsTheHistory) {
  ASSERT_EQ(Migrate().exit_code, 0);
  auto want =
      Sql("SELECT (extract(epoch FROM answered_at) * 1000)::bigint FROM answer "
          "WHERE applicant_id = 6 AND question_id = 4 ORDER BY answered_at DESC LIMIT 3");
  ASSERT_EQ(want.size(), 3u);
  CommandResult scan = Widen("scan hr:applicants --versions 3 --start-row 0006 --stop-row 0007");
  ASSERT_EQ(scan.exit_code, 0) << scan.output;
  std::vector<std::string> want_ts;
  for (const auto& w : want) want_ts.push_back(w[0]);
  EXPECT_EQ(Captures(scan.output, R"( 0006 +column=a:4, timestamp=(\d+), value=.*)"), want_ts)
      << scan.output;
  CommandResult plain = Widen("scan hr:applicants --start-row 0006 --stop-row 0007");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(Captures(plain.output, R"( 0006 +column=a:4, timestamp=(\d+), value=.*)"),
            std::vector<std::string>{want[0][0]})
      << plain.output;
}

// ---------------------------------------------------------------- inbox

class ExamplesInboxTest : public ExampleTest {
 protected:
  void SetUp() override { Load("inbox"); }

  // recipient_id | Long.MAX_VALUE - sent_at ms | message_id, binary.
  static std::string InboxKey(const std::string& recipient, const std::string& reversed,
                              const std::string& message) {
    return Int32Part(recipient) + ReversedTimestampPart(reversed) + Int64Part(message);
  }
};

TEST_F(ExamplesInboxTest, OneRowPerRecipientWithMessageAndSenderCopiedIn) {
  CommandResult r = Migrate();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto rows = Sql(R"SQL(
    SELECT r.recipient_id, 9223372036854775807 - (extract(epoch FROM m.sent_at) * 1000)::bigint,
           r.message_id, m.subject, s.handle, s.display_name,
           to_char(m.sent_at, 'YYYY-MM-DD HH24:MI:SS'), m.body, r.read_flag::text
    FROM message_recipient r JOIN message m USING (message_id)
         JOIN app_user s ON s.user_id = m.sender_id)SQL");
  TableCells cells = ReadTable(target_, "mail:inbox");
  ASSERT_EQ(cells.size(), rows.size()) << "one row per (message, recipient)";
  for (const auto& e : rows) {
    SCOPED_TRACE("message " + e[2] + " to " + e[0]);
    std::string key = InboxKey(e[0], e[1], e[2]);
    ASSERT_EQ(cells.count(key), 1u) << HexEscaped(key);
    const auto& row = cells[key];
    size_t n = 0;
    for (auto [col, v] :
         {std::pair{"m:subject", e[3]}, std::pair{"m:from", e[4]}, std::pair{"m:from_name", e[5]},
          std::pair{"m:sent_at", e[6]}, std::pair{"m:body", e[7]}, std::pair{"m:read", e[8]}}) {
      if (v == kNull) {
        EXPECT_EQ(row.count(col), 0u) << col << ": a NULL is omitted";
      } else {
        EXPECT_EQ(row.at(col), v) << col;
        ++n;
      }
    }
    EXPECT_EQ(row.size(), n);
  }
  for (const auto& c : ReadCells(target_, "mail:inbox")) {
    EXPECT_EQ(c.timestamp_ms, kRunTimestampMs);
  }
}

TEST_F(ExamplesInboxTest, EachUsersInboxComesNewestFirst) {
  CommandResult r = Migrate();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto users = Sql("SELECT user_id FROM app_user ORDER BY user_id");
  ASSERT_FALSE(users.empty());
  for (const auto& u : users) {
    SCOPED_TRACE("user " + u[0]);
    auto inbox = Sql(
        fmt::format("SELECT r.message_id, 9223372036854775807 - (extract(epoch FROM m.sent_at) * "
                    "1000)::bigint FROM message_recipient r JOIN message m USING (message_id) "
                    "WHERE r.recipient_id = {} ORDER BY m.sent_at DESC, r.message_id",
                    u[0]));
    std::vector<std::string> want;
    for (const auto& m : inbox) want.push_back(InboxKey(u[0], m[1], m[0]));
    std::vector<std::string> got = Rows(ReadCells(target_, "mail:inbox", 1, Int32Part(u[0])));
    EXPECT_EQ(got.size(), want.size());
    EXPECT_TRUE(got == want) << "a prefix scan on the user returns the inbox newest first";
  }
}

TEST_F(ExamplesInboxTest, SentItemsAreKeyedBySenderWithRecipientsNested) {
  CommandResult r = Migrate();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto messages = Sql(R"SQL(
    SELECT sender_id, 9223372036854775807 - (extract(epoch FROM sent_at) * 1000)::bigint,
           message_id, subject, to_char(sent_at, 'YYYY-MM-DD HH24:MI:SS'), body,
           (SELECT count(*) FROM message_recipient r WHERE r.message_id = m.message_id)
    FROM message m ORDER BY sender_id, sent_at DESC, message_id)SQL");
  std::vector<std::string> want_rows;
  for (const auto& m : messages) want_rows.push_back(InboxKey(m[0], m[1], m[2]));
  EXPECT_TRUE(Rows(ReadCells(target_, "mail:sent")) == want_rows)
      << "rows sort by sender, newest first";

  TableCells cells = ReadTable(target_, "mail:sent");
  ASSERT_EQ(cells.size(), messages.size());
  std::map<std::string, std::string> key_of;  // message_id -> row key
  for (const auto& m : messages) {
    SCOPED_TRACE("message " + m[2]);
    std::string key = InboxKey(m[0], m[1], m[2]);
    key_of[m[2]] = key;
    ASSERT_EQ(cells.count(key), 1u);
    const auto& row = cells[key];
    EXPECT_EQ(row.count("m:subject"), m[3] == kNull ? 0u : 1u);
    if (m[3] != kNull) {
      EXPECT_EQ(row.at("m:subject"), m[3]);
    }
    EXPECT_EQ(row.at("m:sent_at"), m[4]);
    EXPECT_EQ(row.count("m:body"), m[5] == kNull ? 0u : 1u);
    if (m[5] != kNull) {
      EXPECT_EQ(row.at("m:body"), m[5]);
    }
    size_t recipients = 0;
    for (const auto& [col, v] : row) recipients += col.rfind("m:r", 0) == 0;
    EXPECT_EQ(std::to_string(recipients), m[6]);
  }
  auto recipients =
      Sql("SELECT message_id, 'm:r' || recipient_id, read_flag::text FROM message_recipient");
  for (const auto& rc : recipients) {
    SCOPED_TRACE(rc[0] + " " + rc[1]);
    auto j = nlohmann::json::parse(cells[key_of[rc[0]]].at(rc[1]));
    EXPECT_EQ(j.size(), 1u);
    EXPECT_EQ(j.at("read_flag").dump(), rc[2]) << "booleans are JSON true/false";
  }
}

// The README's excerpt: a prefix scan on one user, keys decoded into parts.
TEST_F(ExamplesInboxTest, ScanDecodeShowsOneUsersInboxNewestFirst) {
  ASSERT_EQ(Migrate().exit_code, 0);
  auto want =
      Sql("SELECT 'recipient_id=6 sent_at=' || to_char(m.sent_at, 'YYYY-MM-DD HH24:MI:SS') || "
          "' message_id=' || m.message_id FROM message_recipient r JOIN message m USING "
          "(message_id) WHERE r.recipient_id = 6 ORDER BY m.sent_at DESC, m.message_id");
  ASSERT_FALSE(want.empty());
  CommandResult scan = Widen(fmt::format("scan mail:inbox --prefix '{}' --decode -m {}",
                                         HexEscaped(Int32Part("6")), ShellQuote(MappingPath())));
  ASSERT_EQ(scan.exit_code, 0) << scan.output;
  std::vector<std::string> want_rows;
  for (const auto& w : want) want_rows.push_back(w[0]);
  EXPECT_EQ(Captures(scan.output, R"( (recipient_id=.*) column=m:from, .*)"), want_rows)
      << scan.output;
}

// `widen get --decode` (in `widen get --help`) shows the row key split into
// its parts. With cmd/read.cc as committed (checked at 39d41c4) it fails
// with exit code 3 and "opening store ...: IO error: lock .../LOCK: already
// held by process": RunGet opens the reader, then KeyLayout() opens the same
// store again. cmd/read.cc is being reworked (uncommitted at the time of
// writing); this test passes with that working-tree change.
TEST_F(ExamplesInboxTest, GetDecodeShowsTheKeyParts) {
  ASSERT_EQ(Migrate().exit_code, 0);
  auto m =
      Sql("SELECT r.recipient_id, 9223372036854775807 - (extract(epoch FROM m.sent_at) * "
          "1000)::bigint, r.message_id, to_char(m.sent_at, 'YYYY-MM-DD HH24:MI:SS'), m.subject "
          "FROM message_recipient r JOIN message m USING (message_id) "
          "WHERE r.recipient_id = 6 ORDER BY m.sent_at DESC LIMIT 1");
  ASSERT_EQ(m.size(), 1u);
  std::string key = InboxKey(m[0][0], m[0][1], m[0][2]);
  CommandResult get = Widen(fmt::format("get mail:inbox '{}' --decode", HexEscaped(key)));
  ASSERT_EQ(get.exit_code, 0) << get.output;
  EXPECT_NE(
      get.output.find(fmt::format("recipient_id=6 sent_at={} message_id={}", m[0][3], m[0][2])),
      std::string::npos)
      << get.output;
  EXPECT_NE(get.output.find("m:subject timestamp=1700000000000, value=" + m[0][4]),
            std::string::npos)
      << get.output;
}

// ---------------------------------------------------------------- cron

// examples/cron/shop.yaml with its schema on both engines: the first sync
// is a full load; updates (raised by the schema's trigger or ON UPDATE, not
// by the statements), a soft delete, a moved line and a changed joined row
// each reach the store through the next sync, which then equals the source
// (widen verify) and holds the new values the source gives.
class ExamplesCronTest : public ::testing::TestWithParam<bool> {
 protected:
  bool pg() const { return GetParam(); }

  void SetUp() override {
    const std::string dir = SourceDir() + "/examples/cron/";
    if (pg()) {
      WIDEN_REQUIRE_PG(url);
      db_ = FreshPgDatabase(url, "widen_it_examples_cron");
      RunPsqlFile(db_, dir + "shop.pg.sql");
    } else {
      WIDEN_REQUIRE_MYSQL(url);
      db_ = FreshMySqlDatabase(url, "widen_it_examples_cron");
      RunMySqlFile(db_, dir + "shop.mysql.sql");
    }
    target_ = "leveldb:" + MakeTempDir() + "/store";
    mapping_ = dir + "shop.yaml";
  }

  CommandResult Widen(const std::string& command) {
    return RunCommand(fmt::format("WIDEN_SOURCE_URL={} {} {} -m {} --target {}", ShellQuote(db_),
                                  WidenBinary(), command, ShellQuote(mapping_),
                                  ShellQuote(target_)));
  }

  void Sql(const std::string& sql) {
    if (pg()) {
      PgQuery(db_, sql);
    } else {
      MySqlQuery(db_, sql);
    }
  }
  std::string One(const std::string& sql) {
    auto rows = pg() ? PgQuery(db_, sql) : MySqlQuery(db_, sql);
    return rows.empty() || rows[0].empty() ? "" : rows[0][0];
  }

  std::string db_, target_, mapping_;
};

TEST_P(ExamplesCronTest, EachSyncBringsTheChangesTheSchemaMarks) {
  CommandResult r = Widen("sync --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Statements that do not set updated_at: the schema raises it. The
  // watermark has microseconds, so a pause makes the new values higher.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Sql("UPDATE orders SET deleted = true WHERE order_id = 104");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Sql("UPDATE orders SET status = 'shipped' WHERE order_id = 102");
  Sql("UPDATE order_line SET order_id = 103 WHERE order_id = 101 AND line_no = 2");
  Sql("UPDATE customer SET city = 'York' WHERE customer_id = 1");
  // The order updated last has the highest watermark.
  ASSERT_EQ(One("SELECT order_id FROM orders ORDER BY updated_at DESC, order_id DESC LIMIT 1"),
            "102")
      << "the schema did not raise updated_at";
  r = Widen("sync --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output.substr(r.output.find('{')), nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r.output;
  EXPECT_EQ(doc["tables"][0]["mode"], "watermark") << r.output;
  r = Widen("verify -q");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const TableCells cells = ReadTable(target_, "shop:orders");
  const std::string k102 = "00000102", k101 = "00000101", k103 = "00000103", k104 = "00000104";
  ASSERT_TRUE(cells.count(k102)) << "order 102 is missing";
  EXPECT_EQ(cells.at(k102).at("d:status"), One("SELECT status FROM orders WHERE order_id = 102"));
  EXPECT_EQ(cells.at(k102).at("d:city"), One("SELECT city FROM customer WHERE customer_id = 1"));
  EXPECT_FALSE(cells.count(k104)) << "a soft-deleted order is still in the store";
  ASSERT_TRUE(cells.count(k101) && cells.count(k103));
  EXPECT_FALSE(cells.at(k101).count("l:l002")) << "the moved line is still under order 101";
  EXPECT_TRUE(cells.at(k103).count("l:l002")) << "the moved line is not under order 103";
}

INSTANTIATE_TEST_SUITE_P(Engines, ExamplesCronTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return std::string(i.param ? "Postgres" : "MySql");
                         });

}  // namespace
}  // namespace widen::testing
