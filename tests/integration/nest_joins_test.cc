// A nest's joins (docs/mapping.md, "Nest"): many-to-one LEFT JOINs from the
// child row whose columns go into the nested cells, the id and the version —
// on both engines, at both nest levels, in pages and with --jobs. Expected
// cells come from SQL joins over the same data.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_env.h"

namespace widen::testing {
namespace {

using Json = nlohmann::ordered_json;

class NestJoinsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    if (pg()) {
      std::string url = PgUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_PG_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_PG_URL not set";
      }
      db_ = FreshPgDatabase(url, "widen_it_nestjoin");
    } else {
      std::string url = MySqlUrl();
      if (url.empty()) {
        if (InCi()) FAIL() << "WIDEN_TEST_MYSQL_URL is not set under CI";
        GTEST_SKIP() << "WIDEN_TEST_MYSQL_URL not set";
      }
      db_ = FreshMySqlDatabase(url, "widen_it_nestjoin");
    }
  }

  bool pg() const { return GetParam() == "pg"; }
  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    return pg() ? PgQuery(db_, sql) : MySqlQuery(db_, sql);
  }
  void LoadExample(const std::string& name) {
    const std::string ex = SourceDir() + "/examples/" + name + "/";
    if (pg()) {
      RunPsqlFile(db_, ex + "schema.pg.sql");
      RunPsqlFile(db_, ex + "data.pg.sql");
    } else {
      RunMySqlFile(db_, ex + "schema.mysql.sql");
      RunMySqlFile(db_, ex + "data.mysql.sql");
    }
  }
  std::string Mapping(const std::string& tables) {
    const std::string path = dir_ + "/m.yaml";
    std::ofstream(path) << "source: " << db_ << "\ntables:\n" << tables;
    return path;
  }
  CommandResult Widen(const std::string& args) { return RunCommand(WidenBinary() + " " + args); }

  std::string dir_, db_;
};

std::string Pad(const std::string& id, size_t width) {
  return std::string(width - std::min(width, id.size()), '0') + id;
}
Json Text(const std::string& v) { return v == "<NULL>" ? Json() : Json(v); }
Json Number(const std::string& v) { return v == "<NULL>" ? Json() : Json(std::stoll(v)); }
// A nested JSON value: SQL NULL attributes are left out (docs/types.md, "JSON").
std::string Nested(Json j) {
  for (auto it = j.begin(); it != j.end();) it = it->is_null() ? j.erase(it) : std::next(it);
  return j.dump();
}

// examples/films: a film's actors and categories through their link tables,
// an actor's films with their language and, one level down, their categories.
TEST_P(NestJoinsTest, FilmsExampleNestsTheFarTablesAttributes) {
  LoadExample("films");
  TableCells films, actors;
  for (const auto& r : Query("SELECT f.film_id, f.title, f.release_year, l.name FROM film f JOIN "
                             "language l ON l.language_id = f.language_id")) {
    auto& row = films[Pad(r[0], 4)];
    row["f:title"] = r[1];
    if (r[2] != "<NULL>") row["f:year"] = r[2];
    row["f:language"] = r[3];
  }
  for (const auto& r :
       Query("SELECT fa.film_id, fa.actor_id, a.first_name, a.last_name, fa.billing FROM "
             "film_actor fa JOIN actor a ON a.actor_id = fa.actor_id")) {
    films[Pad(r[0], 4)]["c:a" + Pad(r[1], 4)] =
        Nested(Json{{"first", Text(r[2])}, {"last", Text(r[3])}, {"billing", Number(r[4])}});
  }
  for (const auto& r : Query("SELECT fc.film_id, c.name, fc.category_id FROM film_category fc "
                             "JOIN category c ON c.category_id = fc.category_id")) {
    films[Pad(r[0], 4)]["c:g" + r[1]] = r[2];
  }
  for (const auto& r : Query("SELECT actor_id, first_name, last_name FROM actor")) {
    auto& row = actors[Pad(r[0], 4)];
    row["a:first"] = r[1];
    if (r[2] != "<NULL>") row["a:last"] = r[2];
  }
  for (const auto& r :
       Query("SELECT fa.actor_id, fa.film_id, f.title, f.release_year, l.name FROM film_actor fa "
             "JOIN film f ON f.film_id = fa.film_id JOIN language l ON l.language_id = "
             "f.language_id")) {
    actors[Pad(r[0], 4)]["m:m" + Pad(r[1], 4)] =
        Nested(Json{{"title", Text(r[2])}, {"year", Number(r[3])}, {"language", Text(r[4])}});
  }
  for (const auto& r :
       Query("SELECT fa.actor_id, fa.film_id, c.name FROM film_actor fa JOIN film_category fc ON "
             "fc.film_id = fa.film_id JOIN category c ON c.category_id = fc.category_id")) {
    actors[Pad(r[0], 4)]["m:m" + Pad(r[1], 4) + "g" + r[2]] = Json{{"name", r[2]}}.dump();
  }
  ASSERT_EQ(films.size(), 6u);
  ASSERT_EQ(actors.size(), 8u);

  const std::string m = SourceDir() + "/examples/films/mapping.yaml";
  const std::string env = "WIDEN_SOURCE_URL=" + ShellQuote(db_) + " ";
  CommandResult lint = RunCommand(env + WidenBinary() + " lint -m " + m);
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
  EXPECT_EQ(lint.output.find("W111"), std::string::npos)
      << "category.name, a unique key joined on category_id, names the child: " << lint.output;
  CommandResult plan = RunCommand(env + WidenBinary() + " plan --full -m " + m);
  EXPECT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_NE(plan.output.find("LEFT JOIN"), std::string::npos) << plan.output;
  CommandResult ddl = RunCommand(env + WidenBinary() + " ddl --regions 2 -m " + m);
  EXPECT_EQ(ddl.exit_code, 0) << ddl.output;
  // One job reading a row per page, and three jobs by ranges of the key.
  for (const char* how : {"--fetch-rows 1", "--jobs 3 --fetch-rows 2"}) {
    SCOPED_TRACE(how);
    const std::string target = "leveldb:" + dir_ + "/" + std::to_string(std::strlen(how));
    CommandResult run =
        RunCommand(env + WidenBinary() + " migrate -q " + how + " -m " + m + " --target " + target);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(ReadTable(target, "video:films"), films);
    EXPECT_EQ(ReadTable(target, "video:actors"), actors);
  }
}

// person 99 is missing: the LEFT JOIN gives NULLs, as a table's join does.
const char* kTeamSchema[] = {
    "CREATE TABLE person (id int PRIMARY KEY, name varchar(20), born timestamp NULL)",
    "CREATE TABLE team (id int PRIMARY KEY, title varchar(20))",
    "CREATE TABLE member (team_id int NOT NULL, person_id int NOT NULL, role varchar(10), "
    "PRIMARY KEY (team_id, person_id))",
    "INSERT INTO person VALUES (1, 'Ann', '2001-02-03 04:05:06'), (2, 'Bo', '1999-12-31 "
    "23:59:59'), (3, 'Cy', '2010-01-01 00:00:00')",
    "INSERT INTO team VALUES (1, 'red'), (2, 'blue'), (3, 'empty')",
    "INSERT INTO member VALUES (1, 1, 'lead'), (1, 2, NULL), (2, 3, 'lead'), (2, 99, 'ghost')",
};

TEST_P(NestJoinsTest, JoinsAreLeftJoinsCheckedLikeATablesAndFeedIdValueAndVersion) {
  for (const char* s : kTeamSchema) Query(s);
  const std::string m = Mapping(R"(  - name: by_json
    from: team
    families: [d]
    key: {parts: [id]}
    nest:
      - table: member
        on: {id: team_id}
        joins: [{table: person, as: p, on: {person_id: id}}]
        family: d
        prefix: m
        id: [person_id]
        columns: [{column: p.name, as: who}, role]
  - name: by_cells
    from: team
    families: [d]
    key: {parts: [id]}
    nest:
      - table: member
        on: {id: team_id}
        joins: [{table: person, as: p, on: {person_id: id}}]
        family: d
        prefix: m
        layout: cells
        id: [{column: p.name, on_null: reject}]
        columns: [role, {column: p.id, as: pid}]
  - name: by_version
    from: team
    families: [{name: d, versions: 3}]
    key: {parts: [id]}
    nest:
      - table: member
        on: {id: team_id}
        where: person_id < 99
        joins: [{table: person, as: p, on: {person_id: id}}]
        family: d
        prefix: m
        id: [person_id]
        version: p.born
        layout: value
        columns: [role]
)");
  CommandResult lint = Widen("lint -m " + m);
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
  const std::string target = "leveldb:" + dir_ + "/store";
  const std::string rejects = dir_ + "/rejects.jsonl";
  CommandResult run =
      Widen("migrate -q --fetch-rows 1 -m " + m + " --target " + target + " --rejects " + rejects);
  ASSERT_EQ(run.exit_code, 0) << run.output;

  TableCells json, cells;
  for (const auto& r : Query("SELECT m.team_id, m.person_id, p.name, m.role, p.id FROM member m "
                             "LEFT JOIN person p ON p.id = m.person_id")) {
    json[r[0]]["d:m" + r[1]] = Nested(Json{{"who", Text(r[2])}, {"role", Text(r[3])}});
    if (r[2] == "<NULL>") continue;  // a NULL id part rejects that member alone
    if (r[3] != "<NULL>") cells[r[0]]["d:m" + r[2] + ".role"] = r[3];
    cells[r[0]]["d:m" + r[2] + ".pid"] = r[4];
  }
  EXPECT_EQ(json["2"]["d:m99"], R"({"role":"ghost"})");
  EXPECT_EQ(ReadTable(target, "by_json"), json);
  EXPECT_EQ(ReadTable(target, "by_cells"), cells);
  std::ifstream in(rejects);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  Json reject = Json::parse(line);
  EXPECT_EQ(reject["table"], "by_cells");
  EXPECT_EQ(reject["row"], "member (team_id=2, person_id=99) in source row id=2 of 'team'");
  EXPECT_EQ(reject["reason"], "key part 'name' is NULL");
  EXPECT_FALSE(std::getline(in, line)) << "one reject: " << line;

  // version: p.born, the joined person's birth, as each cell's timestamp.
  const std::string ms_sql =
      pg() ? "SELECT m.team_id, m.person_id, m.role, (extract(epoch FROM p.born) * 1000)::bigint "
             "FROM member m JOIN person p ON p.id = m.person_id"
           : "SELECT m.team_id, m.person_id, m.role, UNIX_TIMESTAMP(p.born) * 1000 FROM member m "
             "JOIN person p ON p.id = m.person_id";
  std::map<std::string, std::pair<std::string, int64_t>> want;
  for (const auto& r : Query(ms_sql)) {
    if (r[2] == "<NULL>") continue;
    want[r[0] + " d:m" + r[1]] = {r[2], std::stoll(r[3])};
  }
  std::map<std::string, std::pair<std::string, int64_t>> got;
  for (const auto& c : ReadCells(target, "by_version", 3)) {
    got[c.row + " " + c.column] = {c.value, c.timestamp_ms};
  }
  EXPECT_EQ(got, want);
}

TEST_P(NestJoinsTest, BadNestJoinsAreRefusedBeforeTheTargetIsTouched) {
  for (const char* s : kTeamSchema) Query(s);
  auto refused = [&](const std::string& nest, const std::string& cause) {
    SCOPED_TRACE(nest);
    const std::string m = Mapping(
        "  - name: t\n    from: team\n    families: [d]\n    key: {parts: [id]}\n    nest:\n"
        "      - table: member\n        on: {id: team_id}\n        family: d\n" +
        nest);
    const std::string target = "leveldb:" + dir_ + "/store";
    for (const std::string& cmd : {"migrate --target " + target, std::string("plan")}) {
      CommandResult r = Widen(cmd + " -m " + m);
      EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.output;
      EXPECT_NE(r.output.find(m + ":"), std::string::npos) << r.output;
      EXPECT_NE(r.output.find(cause), std::string::npos) << r.output;
    }
    CommandResult r = Widen("lint -m " + m);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(cause), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir_ + "/store"));
  };
  // Not many-to-one: person.name is no key of person.
  refused(
      "        joins: [{table: person, on: {role: name}}]\n        id: [person_id]\n"
      "        columns: [person.id]\n",
      "join 'person' matches person.(name) which is not the primary key or a unique key");
  // A joined id part can be NULL (LEFT JOIN): say what a NULL does.
  refused("        joins: [{table: person, as: p, on: {person_id: id}}]\n        id: [p.name]\n",
          "from a LEFT JOIN");
  // An alias that is neither the nested table nor one of its joins.
  refused(
      "        joins: [{table: person, as: p, on: {person_id: id}}]\n        id: [person_id]\n"
      "        columns: [q.name]\n",
      "'q' is neither the nested table nor a join of the nest of 'member'; did you mean 'p'?");
}

INSTANTIATE_TEST_SUITE_P(Engines, NestJoinsTest, ::testing::Values("pg", "mysql"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace widen::testing
