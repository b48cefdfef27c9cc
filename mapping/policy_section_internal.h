// The loader of a naming policy: a mapping's `policy:` section, or a policy
// file's top level. Internal to mapping/.
#pragma once

#include <yaml-cpp/yaml.h>

#include "common/status.h"
#include "mapping/naming_policy.h"
#include "mapping/yaml_internal.h"

namespace widen::mapping_internal {

/// Reads `node` (a map of the policy's fields) into *out, which starts as
/// NamingPolicy::Default() and gets what the map gives. InvalidArgument
/// with file:line:col for every problem.
Status LoadPolicySection(const YamlContext& ctx, const YAML::Node& node, NamingPolicy* out);

}  // namespace widen::mapping_internal
