// The JSON Schema of the mapping (docs/mapping.schema.json) against the
// loader, so that the two cannot drift apart: each kind of map has exactly
// the loader's fields (mapping/fields.h), each with a description; each
// word chosen from a fixed list has the loader's names; the loader reads
// every example and tests/mapping/every_field.yaml (which the schema check,
// mapping_schema_check.py, validates too) and refuses each of its maps with
// an unknown field added, as the schema does.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "common/family_options.h"
#include "mapping/fields.h"
#include "mapping/mapping.h"

namespace widen {
namespace {

using Json = nlohmann::json;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const Json& Schema() {
  static const Json* schema =
      new Json(Json::parse(Read(std::string(WIDEN_SOURCE_DIR) + "/docs/mapping.schema.json")));
  return *schema;
}

template <typename E>
std::set<std::string> Names(const NameTable<E>& table) {
  const std::vector<std::string> v = table.Names();
  return std::set<std::string>(v.begin(), v.end());
}

std::set<std::string> Enum(const std::string& kind, const std::string& field) {
  std::set<std::string> out;
  for (const auto& v : Schema()["definitions"][kind]["properties"][field]["enum"]) {
    out.insert(v.get<std::string>());
  }
  return out;
}

TEST(MappingSchemaTest, EveryKindHasTheLoadersFieldsWithDescriptions) {
  const Json& defs = Schema()["definitions"];
  std::set<std::string> kinds;
  for (const MappingObject& o : MappingObjects()) {
    SCOPED_TRACE(std::string(o.kind));
    kinds.insert(std::string(o.kind));
    ASSERT_TRUE(defs.contains(std::string(o.kind)));
    const Json& d = defs[std::string(o.kind)];
    EXPECT_EQ(d["additionalProperties"], false);
    EXPECT_TRUE(d["description"].is_string());
    std::set<std::string> schema_fields, loader_fields(o.fields.begin(), o.fields.end());
    for (const auto& [name, p] : d["properties"].items()) {
      schema_fields.insert(name);
      EXPECT_TRUE(p.contains("description") || p.contains("$ref")) << name;
    }
    EXPECT_EQ(schema_fields, loader_fields);
  }
  std::set<std::string> schema_kinds;
  for (const auto& [name, d] : defs.items()) schema_kinds.insert(name);
  EXPECT_EQ(schema_kinds, kinds);
}

TEST(MappingSchemaTest, FixedWordsAreTheLoadersNames) {
  EXPECT_EQ(Enum("key", "form"), Names(KeyFormNames()));
  EXPECT_EQ(Enum("nest", "form"), Names(KeyFormNames()));
  EXPECT_EQ(Enum("key_part", "type"), Names(KeyTypeNames()));
  EXPECT_EQ(Enum("column", "codec"), Names(ValueCodecNames()));
  EXPECT_EQ(Enum("column", "type"), Names(HBaseTypeNames()));
  EXPECT_EQ(Enum("nest", "layout"), Names(NestLayoutNames()));
  EXPECT_EQ(Enum("sync", "mode"), Names(SyncModeNames()));
  EXPECT_EQ(Enum("policy_rule", "style"), Names(NameStyleNames()));
  // Family options are read in any case: the schema lists upper and lower.
  auto both = [](const std::set<std::string>& upper) {
    std::set<std::string> out = upper;
    for (std::string s : upper) {
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out.insert(s);
    }
    return out;
  };
  EXPECT_EQ(Enum("family", "compression"), both(Names(kCompressionNames)));
  EXPECT_EQ(Enum("family", "bloom_filter"), both(Names(kBloomFilterNames)));
  EXPECT_EQ(Enum("family", "data_block_encoding"), both(Names(kDataBlockEncodingNames)));
}

TEST(MappingSchemaTest, LoaderReadsTheFilesTheSchemaValidates) {
  const std::string dir = std::string(WIDEN_SOURCE_DIR);
  for (const char* file :
       {"/tests/mapping/every_field.yaml", "/examples/service_orders/mapping.yaml",
        "/examples/chinook/mapping.yaml", "/examples/chinook/mapping.mysql.yaml",
        "/examples/bands/mapping.yaml", "/examples/applicants/mapping.yaml",
        "/examples/inbox/mapping.yaml", "/examples/films/mapping.yaml"}) {
    auto m = load_mapping(dir + file);
    EXPECT_TRUE(m.ok()) << file << ": " << m.status().ToString();
  }
  auto every = load_mapping(dir + "/tests/mapping/every_field.yaml");
  ASSERT_TRUE(every.ok());
  EXPECT_TRUE(every->policy.given);
  EXPECT_EQ(every->tables.front().access.front().order.front().desc, true);
}

// Each map of every_field.yaml with an unknown field is refused, naming the
// field and its place: what the schema check finds for the same copies.
TEST(MappingSchemaTest, LoaderRefusesAnUnknownFieldInEveryKindOfMap) {
  const std::string text = Read(std::string(WIDEN_SOURCE_DIR) + "/tests/mapping/every_field.yaml");
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  auto indent = [](const std::string& l) { return l.find_first_not_of(' '); };
  // Copies with the field added: at (line, column) of the text, inserted
  // into a flow map or as a line of its own into a block map.
  struct Copy {
    std::vector<std::string> lines;
    size_t line, column;  // 1-based place of the added field
  };
  std::vector<Copy> copies;
  size_t first = 0;
  while (lines[first].empty() || lines[first][0] == '#') ++first;
  {
    Copy c{lines, first + 1, 1};
    c.lines.insert(c.lines.begin() + static_cast<long>(first), "bogus_field: 1");
    copies.push_back(c);
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.empty() || l[indent(l)] == '#') continue;
    // Flow maps: after each '{' outside a quoted text.
    bool quoted = false;
    for (size_t col = 0; col < l.size(); ++col) {
      if (l[col] == '"') quoted = !quoted;
      if (l[col] != '{' || quoted || (col > 0 && l[col - 1] == '$')) continue;  // ${VAR}
      if (col >= 4 && l.compare(col - 4, 4, "on: ") == 0) continue;  // keys are column names
      Copy c{lines, i + 1, col + 2};
      c.lines[i].insert(col + 1, "bogus_field: 1, ");
      copies.push_back(c);
    }
    // A block map opened by "- key: value" (its keys at the item's column)
    // or by "key:" with the map on the lines below.
    const size_t at = indent(l);
    if (l.compare(at, 2, "- ") == 0 && l.find(": ", at) != std::string::npos &&
        l.find('{') == std::string::npos) {
      Copy c{lines, i + 2, at + 3};
      c.lines.insert(c.lines.begin() + static_cast<long>(i) + 1,
                     std::string(at + 2, ' ') + "bogus_field: 1");
      copies.push_back(c);
    } else if (l.back() == ':' && i + 1 < lines.size() && indent(lines[i + 1]) > at &&
               lines[i + 1].compare(indent(lines[i + 1]), 2, "- ") != 0) {
      Copy c{lines, i + 2, indent(lines[i + 1]) + 1};
      c.lines.insert(c.lines.begin() + static_cast<long>(i) + 1,
                     std::string(indent(lines[i + 1]), ' ') + "bogus_field: 1");
      copies.push_back(c);
    }
  }
  for (const Copy& c : copies) {
    std::string yaml;
    for (const auto& l : c.lines) yaml += l + "\n";
    auto m = ParseMapping(yaml, "m.yaml");
    ASSERT_FALSE(m.ok()) << c.lines[c.line - 1];
    EXPECT_NE(m.status().message().find(
                  fmt::format("m.yaml:{}:{}: unknown field 'bogus_field'", c.line, c.column)),
              std::string::npos)
        << m.status().message();
  }
  // Every map of the file: the schema check counts the same 30.
  EXPECT_EQ(copies.size(), 30u);
}

// The loader finds each case of schema_cases.yaml valid or invalid as the
// case says, as the schema does (mapping_schema_check.py --cases).
TEST(MappingSchemaTest, LoaderAgreesWithTheSchemaOnEachCase) {
  const YAML::Node cases =
      YAML::LoadFile(std::string(WIDEN_SOURCE_DIR) + "/tests/mapping/schema_cases.yaml");
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    auto field = [&](const char* name, const char* fallback) {
      return c[name] ? c[name].Scalar() : std::string(fallback);
    };
    const std::string yaml = fmt::format(
        "source: x\ntables:\n  - name: {}\n    from: {}\n    families: [d]\n    key: {}\n"
        "    columns: [v]\n    access:\n      - {}\n",
        field("table_name", "t"), field("from", "o"), field("key", "{parts: [id]}"),
        field("access", "{name: a, by: [id]}"));
    auto m = ParseMapping(yaml, "m.yaml");
    EXPECT_EQ(m.ok(), c["valid"].as<bool>())
        << c["name"].Scalar() << ": " << (m.ok() ? "loads" : m.status().message()) << "\n"
        << yaml;
  }
}

}  // namespace
}  // namespace widen
