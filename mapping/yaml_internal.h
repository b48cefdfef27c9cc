// Helpers for reading yaml-cpp nodes with file:line:col in every error.
// Internal to mapping/.
#pragma once

#include <yaml-cpp/yaml.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "mapping/mapping.h"

namespace widen::mapping_internal {

/// Reads one YAML file; every error carries the file name and the node's mark.
class YamlContext {
 public:
  explicit YamlContext(std::string file) : file_(std::move(file)) {}

  SourceLocation Loc(const YAML::Node& node) const;
  Status Error(const YAML::Node& node, const std::string& what) const;

  /// InvalidArgument unless `node` is a map whose keys are all in `allowed`
  /// (names the unknown key and suggests the closest allowed one).
  Status CheckMap(const YAML::Node& node, std::string_view what,
                  std::span<const std::string_view> allowed) const;
  /// The same with the fields of `kind` (mapping/fields.h).
  Status CheckMap(const YAML::Node& node, std::string_view what, std::string_view kind) const;
  Status CheckSequence(const YAML::Node& node, std::string_view what) const;

  /// A required scalar string field.
  Status RequiredString(const YAML::Node& map, const char* key, std::string* out) const;
  /// An optional scalar; *out unchanged when absent.
  Status OptionalString(const YAML::Node& map, const char* key, std::string* out) const;
  Status OptionalInt(const YAML::Node& map, const char* key, int64_t min, int64_t max,
                     int64_t* out) const;
  Status OptionalBool(const YAML::Node& map, const char* key, bool* out) const;

 private:
  std::string file_;
};

}  // namespace widen::mapping_internal
