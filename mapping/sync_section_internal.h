// The loader of the mapping's `sync:` section. Internal to mapping/.
#pragma once

#include <yaml-cpp/yaml.h>

#include <vector>

#include "common/status.h"
#include "mapping/mapping.h"
#include "mapping/yaml_internal.h"

namespace widen::mapping_internal {

/// Reads `node`, the value of `sync:`, into *out: nothing (null: no
/// entries) or a list of entries, each
/// naming one source table that `mapping`'s tables read (at most one entry
/// per table) with its mode and, in watermark mode, its watermark, tiebreak,
/// lookback and deletes. InvalidArgument with file:line:col for every
/// problem. REQUIRES: mapping.tables are loaded.
Status LoadSyncSection(const YamlContext& ctx, const YAML::Node& node, const Mapping& mapping,
                       std::vector<SyncSpec>* out);

}  // namespace widen::mapping_internal
