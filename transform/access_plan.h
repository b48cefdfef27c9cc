// Access patterns proven against a row key: for each read a target table
// declares (`access:` in the mapping — the rows whose `by` columns equal
// given values, in an `order`), which single store operation answers it:
//
//   get          the `by` columns fix every key part: one row, one Get;
//   scan         they fix the leading key parts: one prefix Scan, and the
//                rows come in the wanted order (the next key parts, in the
//                order their bytes sort: ascending, or descending for a
//                `desc` or `reverse` part; in the text form a part others
//                follow needs a text of one width, else a shorter value
//                sorts after the longer ones it starts; NULL markers sort
//                first, last when `desc`; once the parts read tell every
//                row apart, later order columns change nothing);
//   bucket_scan  as scan, but the salt hashes a part the `by` columns do not
//                fix: one prefix Scan per salt bucket (each in key order;
//                merging them by the key after the salt keeps the order);
//   not_served   anything else (a part missing from the leading parts, an
//                order the key's bytes do not give, a hash prefix over a
//                part not given, a table whose rows can have no cell —
//                every mapped value NULL): it would take a full scan, or
//                miss rows. The proof says why, and the fix: the key that
//                would serve it, as a duplicate table named after the
//                source table and not yet in the mapping.
//
// A pattern declared on one table is served when its own table serves it
// or another table holding the same rows does (duplication): the same
// driving table and `where` conditions (but `c IS NOT NULL` of a `by`
// column), the pattern's joined columns matched by a join of the same
// table on the same columns. `widen plan` prints the proofs; `widen lint`
// reports patterns that no table serves (E122).
//
// Thread safety: plain values; proofs point into the plans they were made from.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "common/value.h"
#include "extract/source.h"
#include "mapping/mapping.h"
#include "transform/plan.h"

namespace widen {

/// How a pattern is served.
enum class AccessKind {
  kGet,         // "get"
  kScan,        // "scan"
  kBucketScan,  // "bucket_scan"
  kNotServed,   // "not_served"
};

/// "get", "scan", "bucket_scan", "not_served".
const NameTable<AccessKind>& AccessKindNames();

/// The proof of one access pattern.
struct AccessProof {
  const AccessPattern* pattern = nullptr;
  const TablePlan* declared_on = nullptr;  // the table whose `access:` holds the pattern
  /// The table that serves it: declared_on, or a duplicate; declared_on when not served.
  const TablePlan* served_by = nullptr;
  AccessKind kind = AccessKind::kNotServed;
  /// The key parts the `by` values fix, from the first (literals included):
  /// the prefix of a scan, the whole key of a get.
  size_t leading_parts = 0;
  int buckets = 0;  // bucket_scan: the salt's buckets (one scan each)
  /// Per `by` column, in the pattern's order: the index of its value in the
  /// served table's driving row (the row EncodePrefixes reads).
  std::vector<size_t> by_indexes;
  std::string how;      // what the read is, in one sentence
  std::string problem;  // not_served: why
  std::string fix;      // not_served: which key would serve it
};

/// Proves `pattern` against `table`'s row key alone (declared_on and
/// served_by are `table`).
AccessProof ProveAccess(const TablePlan& table, const AccessPattern& pattern,
                        const SourceSchema& schema);

/// Proves every pattern of every table in `tables`, in mapping order: each
/// against its own table, and when that does not serve it, against the
/// other tables of `tables` that hold the same rows (see above), the first
/// that serves it being served_by. Suggested table names avoid the names
/// of `tables` and each other (one name per suggested key).
std::vector<AccessProof> ProveAccessPatterns(const std::vector<const TablePlan*>& tables,
                                             const SourceSchema& schema);

/// The row key prefixes one read of a served proof scans (one for get and
/// scan — for a get, the whole key —, one per bucket for bucket_scan), for
/// the `by` values in `row`, a row laid out as the served table's driving
/// rows (the values at proof.by_indexes; other columns are not read).
/// FailedPrecondition for a pattern that is not served; the key codec's
/// errors for values that do not encode.
Status AccessPrefixes(const AccessProof& proof, const Row& row, std::vector<std::string>* prefixes);

}  // namespace widen
