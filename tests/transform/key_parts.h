// Row key parts for codec tests: a column part as the planner makes one
// (transform/plan.h KeyPartPlan), without a mapping.
#pragma once

#include <string>
#include <utility>

#include "transform/plan.h"

namespace widen::testing {

/// Part `name` of column `index`: key type `type`, source type
/// `value_type`, text width `width` (0 = none).
inline KeyPartPlan Part(std::string name, size_t index, KeyType type, ValueType value_type,
                        int width = 0) {
  KeyPartPlan p;
  p.name = std::move(name);
  p.index = index;
  p.type = type;
  p.value_type = value_type;
  p.width = width;
  return p;
}

}  // namespace widen::testing
