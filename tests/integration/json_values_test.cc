// JSON values on both engines (docs/types.md, "JSON"): a PostgreSQL array
// and a MySQL SET are JSON arrays — alike on both engines — with `codec:
// json` and inside nested JSON; in a nested child's JSON object a SQL NULL
// is no attribute, so that `null` is only ever a JSON column's JSON null.
// Expected values come from SQL on the source.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

using Json = nlohmann::json;

enum class Engine { kPostgres, kMySql };

class JsonValuesTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    // The same labels on both engines: a text[] / a SET, and JSON documents.
    if (pg()) {
      WIDEN_REQUIRE_PG(url);
      db_ = FreshPgDatabase(url, "widen_it_json_values");
      PgQuery(db_, R"SQL(
        CREATE TABLE film (id int PRIMARY KEY, features text[], doc jsonb);
        CREATE TABLE note (id int PRIMARY KEY, film_id int NOT NULL, doc json, body text,
                           features text[]);
        INSERT INTO film VALUES
          (1, '{Trailers,"Deleted Scenes"}', '{"a": [1, null]}'),
          (2, '{}', 'null'), (3, NULL, NULL);
        INSERT INTO note VALUES (1, 1, 'null', NULL, '{Commentaries}'),
          (2, 1, NULL, 'x', NULL), (3, 1, '{"k": null}', '', '{}');
      )SQL");
    } else {
      WIDEN_REQUIRE_MYSQL(url);
      db_ = FreshMySqlDatabase(url, "widen_it_json_values");
      MySqlQuery(db_, std::vector<std::string>{
                          "CREATE TABLE film (id INT PRIMARY KEY, features SET('Trailers', "
                          "'Commentaries', 'Deleted Scenes'), doc JSON)",
                          "CREATE TABLE note (id INT PRIMARY KEY, film_id INT NOT NULL, doc JSON, "
                          "body TEXT, features SET('Trailers', 'Commentaries', 'Deleted Scenes'))",
                          "INSERT INTO film VALUES (1, 'Trailers,Deleted Scenes', "
                          "'{\"a\": [1, null]}'), (2, '', 'null'), (3, NULL, NULL)",
                          "INSERT INTO note VALUES (1, 1, 'null', NULL, 'Commentaries'), "
                          "(2, 1, NULL, 'x', NULL), (3, 1, '{\"k\": null}', '', '')",
                          "SELECT 1"});
    }
    dir_ = MakeTempDir();
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  bool pg() const { return GetParam() == Engine::kPostgres; }
  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    return pg() ? PgQuery(db_, sql) : MySqlQuery(db_, sql);
  }
  // The labels of a list column as a JSON array, by SQL: PostgreSQL's
  // to_json of the array; MySQL's SET text split at its commas.
  std::string ListJson(const std::string& column) {
    return pg() ? fmt::format("to_json({})::text", column)
                : fmt::format(
                      "CASE WHEN {0} = '' THEN '[]' ELSE CONCAT('[\"', REPLACE({0}, ',', "
                      "'\",\"'), '\"]') END",
                      column);
  }

  std::string db_, dir_;
};

INSTANTIATE_TEST_SUITE_P(Engines, JsonValuesTest,
                         ::testing::Values(Engine::kPostgres, Engine::kMySql),
                         [](const auto& info) {
                           return info.param == Engine::kPostgres ? "PostgreSQL" : "MySQL";
                         });

TEST_P(JsonValuesTest, ListsAreArraysAndSqlNullIsNoAttribute) {
  std::ofstream(dir_ + "/m.yaml") << "source: " << db_ << "\ntarget: leveldb:" << dir_ << "/store\n"
                                  << R"(tables:
  - name: films
    from: film
    families: [d, n]
    key: {parts: [{column: id, width: 3}]}
    columns: [{column: features, codec: json}, {column: doc, codec: json},
              {column: features, to: "d:text"}]
    nest:
      - {table: note, on: {id: film_id}, family: n, prefix: n, id: [id],
         columns: [doc, body, features]}
)";
  CommandResult r = RunCommand(fmt::format("{} migrate -q --timestamp-ms 1 -m {}", WidenBinary(),
                                           ShellQuote(dir_ + "/m.yaml")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TableCells cells = ReadTable("leveldb:" + dir_ + "/store", "films");

  // codec: json on a list column: a JSON array; the string codec keeps the text.
  const auto films = Query("SELECT id, " + ListJson("features") + ", " +
                           std::string(pg() ? "features::text" : "features") +
                           ", doc IS NULL FROM film ORDER BY id");
  ASSERT_EQ(films.size(), 3u);
  for (const auto& f : films) {
    const std::string row = fmt::format("{:03d}", std::stoi(f[0]));
    SCOPED_TRACE(row);
    if (f[1] == "<NULL>") {
      EXPECT_EQ(cells[row].count("d:features"), 0u);
    } else {
      EXPECT_EQ(Json::parse(cells[row].at("d:features")), Json::parse(f[1]));
      EXPECT_EQ(cells[row].at("d:features"), Json::parse(f[1]).dump());
      EXPECT_EQ(cells[row].at("d:text"), f[2]);
    }
    // SQL NULL: no cell; JSON null: the cell "null".
    EXPECT_EQ(cells[row].count("d:doc"), f[3] == "t" || f[3] == "1" ? 0u : 1u);
  }
  EXPECT_EQ(cells["002"].at("d:doc"), "null");
  EXPECT_EQ(cells["001"].at("d:features"), "[\"Trailers\",\"Deleted Scenes\"]");
  EXPECT_EQ(cells["002"].at("d:features"), "[]");

  // Nested JSON: SQL NULL attributes are left out; JSON null stays null.
  const auto notes =
      Query("SELECT id, doc IS NULL, " + std::string(pg() ? "doc::text" : "CAST(doc AS CHAR)") +
            ", body, " + ListJson("features") + " FROM note ORDER BY id");
  ASSERT_EQ(notes.size(), 3u);
  for (const auto& n : notes) {
    SCOPED_TRACE("note " + n[0]);
    Json expected = Json::object();
    if (!(n[1] == "t" || n[1] == "1")) expected["doc"] = Json::parse(n[2]);
    if (n[3] != "<NULL>") expected["body"] = n[3];
    if (n[4] != "<NULL>") expected["features"] = Json::parse(n[4]);
    EXPECT_EQ(Json::parse(cells["001"].at("n:n" + n[0])), expected)
        << cells["001"].at("n:n" + n[0]);
  }
  EXPECT_EQ(cells["001"].at("n:n1"), "{\"doc\":null,\"features\":[\"Commentaries\"]}");
  EXPECT_EQ(cells["001"].at("n:n2"), "{\"body\":\"x\"}");
}

// PostgreSQL arrays of every element kind, also two-dimensional, of a
// domain, and with bounds: elements as their JSON (to_json on the server
// says which), NULL elements null; the text form is unchanged.
TEST(PgArrayJsonTest, ArraysOfEveryElementKind) {
  WIDEN_REQUIRE_PG(url);
  const std::string db = FreshPgDatabase(url, "widen_it_pg_arrays");
  PgQuery(db, R"SQL(
    CREATE DOMAIN small_d AS smallint;
    CREATE TYPE mood AS ENUM ('sad', 'happy');
    CREATE TABLE a (id int PRIMARY KEY, i int[], g int[][], b boolean[], t text[], d small_d[],
                    n numeric[], f float8[], m mood[], j jsonb[], z int[]);
    INSERT INTO a VALUES (1, '{1,NULL,-3}', '{{1,2},{3,4}}', '{t,f,NULL}',
      '{"a,b","c\"d",NULL,"","NULL"," x "}', '{7,-1}', '{1.50,NaN}', '{0.1,-0,1e+100}',
      '{happy,sad}', ARRAY['{"k": [1]}'::jsonb, 'null'::jsonb], '[0:1]={5,6}');
  )SQL");
  const std::string dir = MakeTempDir();
  std::ofstream(dir + "/m.yaml") << "source: " << db << "\ntarget: leveldb:" << dir << "/store\n"
                                 << R"(tables:
  - name: t
    from: a
    families: [d, s]
    key: {parts: [id]}
    columns:
      - {column: i, codec: json}
      - {column: g, codec: json}
      - {column: b, codec: json}
      - {column: t, codec: json}
      - {column: d, codec: json}
      - {column: m, codec: json}
      - {column: j, codec: json}
      - {column: z, codec: json}
      - {column: n, codec: json}
      - {column: f, codec: json}
      - {column: t, to: "s:t"}
)";
  CommandResult r = RunCommand(fmt::format("{} migrate -q --timestamp-ms 1 -m {}", WidenBinary(),
                                           ShellQuote(dir + "/m.yaml")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TableCells cells = ReadTable("leveldb:" + dir + "/store", "t");
  const auto& row = cells["1"];
  // The server's own JSON of the arrays whose elements JSON shows alike.
  const auto server =
      PgQuery(db,
              "SELECT to_json(i)::text, to_json(g)::text, to_json(b)::text, to_json(t)::text, "
              "to_json(d)::text, to_json(m)::text, to_json(j)::text, to_json(z)::text, t::text "
              "FROM a");
  const char* columns[] = {"i", "g", "b", "t", "d", "m", "j", "z"};
  for (size_t c = 0; c < 8; ++c) {
    SCOPED_TRACE(columns[c]);
    EXPECT_EQ(Json::parse(row.at(std::string("d:") + columns[c])), Json::parse(server[0][c]));
  }
  EXPECT_EQ(row.at("d:i"), "[1,null,-3]");
  EXPECT_EQ(row.at("d:g"), "[[1,2],[3,4]]");
  EXPECT_EQ(row.at("d:z"), "[5,6]") << "the bounds decoration is dropped";
  // Decimals are JSON strings, as scalar decimals are; doubles numbers.
  EXPECT_EQ(row.at("d:n"), "[\"1.50\",\"NaN\"]");
  EXPECT_EQ(Json::parse(row.at("d:f")), Json::parse("[0.1,-0,1e+100]"));
  EXPECT_EQ(row.at("s:t"), server[0][8]) << "the string codec keeps the array literal";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace widen::testing
