#include "mapping/yaml_internal.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/suggest.h"
#include "mapping/fields.h"

namespace widen::mapping_internal {

SourceLocation YamlContext::Loc(const YAML::Node& node) const {
  SourceLocation loc;
  loc.file = file_;
  YAML::Mark m = node.Mark();
  if (m.line >= 0) {
    loc.line = m.line + 1;
    loc.column = m.column + 1;
  }
  return loc;
}

Status YamlContext::Error(const YAML::Node& node, const std::string& what) const {
  return Status::InvalidArgument(fmt::format("{}: {}", Loc(node).ToString(), what));
}

Status YamlContext::CheckMap(const YAML::Node& node, std::string_view what,
                             std::span<const std::string_view> allowed) const {
  std::vector<std::string> names(allowed.begin(), allowed.end());
  if (!node.IsMap()) {
    std::string fields;
    for (size_t i = 0; i < names.size(); ++i) fields += (i ? ", " : "") + names[i];
    return Error(node, fmt::format("{} must be a map of fields (of: {})", what, fields));
  }
  std::vector<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar())
      return Error(it->first, fmt::format("{}: a field name must be text", what));
    const std::string key = it->first.Scalar();
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return Error(it->first,
                   fmt::format("duplicate field '{}' in {} (YAML would keep only one)", key, what));
    }
    seen.push_back(key);
    if (std::find(names.begin(), names.end(), key) != names.end()) continue;
    std::string hint = ClosestName(key, names);
    std::string expected;
    for (size_t i = 0; i < names.size(); ++i) expected += (i ? ", " : "") + names[i];
    return Error(
        it->first,
        fmt::format("unknown field '{}' in {}{} (expected one of: {})", key, what,
                    hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint), expected));
  }
  return Status::OK();
}

Status YamlContext::CheckMap(const YAML::Node& node, std::string_view what,
                             std::string_view kind) const {
  return CheckMap(node, what, MappingFields(kind));
}

Status YamlContext::CheckSequence(const YAML::Node& node, std::string_view what) const {
  if (!node.IsSequence()) return Error(node, fmt::format("{} must be a list", what));
  return Status::OK();
}

Status YamlContext::RequiredString(const YAML::Node& map, const char* key, std::string* out) const {
  YAML::Node n = map[key];
  if (!n) return Error(map, fmt::format("missing required field '{}'", key));
  if (!n.IsScalar()) return Error(n, fmt::format("'{}' must be text", key));
  *out = n.Scalar();
  if (out->empty()) return Error(n, fmt::format("'{}' must not be empty", key));
  return Status::OK();
}

Status YamlContext::OptionalString(const YAML::Node& map, const char* key, std::string* out) const {
  YAML::Node n = map[key];
  if (!n) return Status::OK();
  if (!n.IsScalar()) return Error(n, fmt::format("'{}' must be text", key));
  *out = n.Scalar();
  return Status::OK();
}

Status YamlContext::OptionalInt(const YAML::Node& map, const char* key, int64_t min, int64_t max,
                                int64_t* out) const {
  YAML::Node n = map[key];
  if (!n) return Status::OK();
  const std::string text = n.IsScalar() ? n.Scalar() : std::string();
  size_t used = 0;
  long long v = 0;
  bool parsed = false;
  try {
    v = std::stoll(text, &used);
    parsed = used == text.size();
  } catch (const std::exception&) {
    parsed = false;
  }
  if (!parsed) return Error(n, fmt::format("'{}' must be a whole number, got '{}'", key, text));
  // A quoted scalar is text (YAML's tag "!"), as a JSON Schema reads it.
  if (n.Tag() == "!") {
    return Error(n, fmt::format("'{}' must be a whole number, got the text \"{}\" (without the "
                                "quotes it is one)",
                                key, text));
  }
  if (v < min || v > max) {
    return Error(n, fmt::format("'{}' must be between {} and {}, got {}", key, min, max, v));
  }
  *out = v;
  return Status::OK();
}

Status YamlContext::OptionalBool(const YAML::Node& map, const char* key, bool* out) const {
  YAML::Node n = map[key];
  if (!n) return Status::OK();
  // YAML 1.2's booleans, unquoted: what editors and JSON Schemas read as
  // true and false (yes/no/on/off are text there).
  const std::string t = n.IsScalar() && n.Tag() != "!" ? n.Scalar() : std::string();
  if (t == "true" || t == "True" || t == "TRUE") {
    *out = true;
  } else if (t == "false" || t == "False" || t == "FALSE") {
    *out = false;
  } else {
    return Error(n, fmt::format("'{}' must be true or false, got {}", key,
                                n.IsScalar() ? (n.Tag() == "!" ? "the text \"" + n.Scalar() + "\""
                                                               : "'" + n.Scalar() + "'")
                                             : std::string("a list or map")));
  }
  return Status::OK();
}

}  // namespace widen::mapping_internal
