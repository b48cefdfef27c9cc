// Split points: the row keys at which a target table is pre-split into
// regions when it is created (HBase's SPLITS), so that a bulk migration
// writes to many region servers from the start instead of one.
//
// Where they come from, in this order:
//   salt        one region per salt bucket, or `regions` even groups of
//               buckets (the bucket prefix is all a split point needs);
//   hash prefix `regions` equal ranges of the hash prefix (uniform by
//               construction), without reading the source;
//   quantiles   `regions` - 1 quantiles of the row keys of the driving rows:
//               keys are encoded as migrate encodes them and reservoir-sampled
//               (at most `sample_keys` kept: bounded memory), then each split
//               point is shortened to the shortest prefix that still separates
//               its neighbours in the sample.
// Without a salt and without `regions` there are no split points.
//
// Thread safety: one call per thread; the Source is used by it alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "extract/source.h"
#include "transform/key_codec.h"
#include "transform/plan.h"

namespace widen {

struct SplitOptions {
  int regions = 0;              // regions wanted; 0 = one per salt bucket (salted keys only)
  size_t sample_keys = 100000;  // quantiles: keys kept in the reservoir
  uint64_t max_rows = 0;        // quantiles: driving rows read at most (0 = all)
  uint64_t seed = 42;           // quantiles: the reservoir's random seed (runs are repeatable)
};

struct SplitPlan {
  std::vector<std::string> points;  // ascending row keys (bytes)
  std::string method;               // "none", "salt", "hash", "quantiles"
  uint64_t rows_read = 0;           // quantiles: driving rows read
  uint64_t keys_sampled = 0;        // quantiles: keys in the sample
};

/// Split points at salt bucket boundaries: `regions` (<= buckets; 0 = buckets) regions.
/// REQUIRES: key.salt().size > 0.
std::vector<std::string> SaltSplitPoints(const KeyCodec& key, int regions);

/// Split points dividing the hash prefix range into `regions` equal ranges.
/// REQUIRES: key.hash_prefix().size > 0, regions >= 2.
std::vector<std::string> HashSplitPoints(const KeyCodec& key, int regions);

/// `regions` - 1 split points from a sorted sample of keys (duplicates and
/// empty keys are never split points; fewer come back when the sample has
/// fewer distinct keys).
std::vector<std::string> QuantileSplitPoints(std::vector<std::string> sorted_sample, int regions);

/// Chooses and computes the split points of `plan` (see above). Reads the
/// source only for quantiles. InvalidArgument for regions < 0 or > 10000.
Result<SplitPlan> ComputeSplitPoints(const TablePlan& plan, Source* source,
                                     const SplitOptions& options);

}  // namespace widen
