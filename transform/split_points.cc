#include "transform/split_points.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

namespace widen {

namespace {

constexpr int kMaxRegions = 10000;

// Decimal digits of the largest salt bucket (text keys write buckets so).
int SaltDigits(int buckets) { return static_cast<int>(std::to_string(buckets - 1).size()); }

}  // namespace

std::vector<std::string> SaltSplitPoints(const KeyCodec& key, int regions) {
  const int buckets = key.salt().size;
  if (regions <= 0 || regions > buckets) regions = buckets;
  std::vector<std::string> points;
  for (int i = 1; i < regions; ++i) {
    const int bucket = static_cast<int>(static_cast<int64_t>(i) * buckets / regions);
    if (key.form() == KeyForm::kText) {
      points.push_back(fmt::format("{:0{}d}", bucket, SaltDigits(buckets)));
    } else {
      points.push_back(std::string(1, static_cast<char>(bucket)));
    }
  }
  return points;
}

std::vector<std::string> HashSplitPoints(const KeyCodec& key, int regions) {
  const bool text = key.form() == KeyForm::kText;
  const int max_digits = text ? 2 * key.hash_prefix().size : key.hash_prefix().size;
  const uint64_t radix = text ? 16 : 256;
  // The fewest leading digits (hex digits or bytes) that tell `regions` apart.
  int digits = 1;
  uint64_t range = radix;
  while (range < static_cast<uint64_t>(regions) && digits < std::min(max_digits, 3)) {
    range *= radix;
    ++digits;
  }
  if (static_cast<uint64_t>(regions) > range) regions = static_cast<int>(range);
  std::vector<std::string> points;
  for (int i = 1; i < regions; ++i) {
    uint64_t v = static_cast<uint64_t>(i) * range / static_cast<uint64_t>(regions);
    std::string p(digits, '\0');
    for (int d = digits - 1; d >= 0; --d) {
      const uint64_t digit = v % radix;
      v /= radix;
      p[d] = text ? "0123456789abcdef"[digit] : static_cast<char>(digit);
    }
    if (points.empty() || points.back() != p) points.push_back(std::move(p));
  }
  return points;
}

std::vector<std::string> QuantileSplitPoints(std::vector<std::string> sample, int regions) {
  sample.erase(std::unique(sample.begin(), sample.end()), sample.end());
  std::vector<std::string> points;
  const size_t n = sample.size();
  if (regions < 2 || n < 2) return points;
  for (int i = 1; i < regions; ++i) {
    const size_t pos = static_cast<size_t>(static_cast<uint64_t>(i) * n / regions);
    if (pos == 0 || pos >= n) continue;
    const std::string& q = sample[pos];
    const std::string& prev = sample[pos - 1];
    // The shortest prefix of q that sorts after prev: it splits the same
    // neighbours and keeps split points (and region names) short.
    size_t len = 1;
    while (len < q.size() && std::string_view(q).substr(0, len) <= prev) ++len;
    std::string p = q.substr(0, len);
    if (p.empty() || (!points.empty() && p <= points.back())) continue;
    points.push_back(std::move(p));
  }
  return points;
}

Result<SplitPlan> ComputeSplitPoints(const TablePlan& plan, Source* source, const SplitOptions& o) {
  if (o.regions < 0 || o.regions > kMaxRegions) {
    return Status::InvalidArgument(fmt::format(
        "--regions {}: expected 2 to {} (or 0: no split points)", o.regions, kMaxRegions));
  }
  SplitPlan out;
  const KeyCodec& key = plan.key;
  if (key.salt().size > 0 && o.regions <= key.salt().size) {
    out.method = "salt";
    out.points = SaltSplitPoints(key, o.regions);
    return out;
  }
  if (o.regions < 2) {
    out.method = "none";
    return out;
  }
  if (key.salt().size == 0 && key.hash_prefix().size > 0) {
    out.method = "hash";
    out.points = HashSplitPoints(key, o.regions);
    return out;
  }
  // Quantiles of the real keys. Read only the columns the key needs, in any
  // order, and encode each row's key as migrate would.
  ScanSpec scan = plan.scan;
  scan.columns.clear();
  scan.order_by.clear();
  scan.merge.clear();
  std::vector<KeyPartPlan> parts(key.parts().begin(), key.parts().end());
  for (auto& p : parts) {
    if (p.is_literal) continue;
    const ColumnExpr& c = plan.scan.columns[p.index];
    size_t i = 0;
    while (i < scan.columns.size() &&
           !(scan.columns[i].alias == c.alias && scan.columns[i].column == c.column)) {
      ++i;
    }
    if (i == scan.columns.size()) scan.columns.push_back(c);
    p.index = i;
  }
  if (scan.columns.empty()) {
    out.method = "none";  // a key of literals only: every row has the same key
    return out;
  }
  const KeyCodec codec(key.form(), std::move(parts), key.separator(), key.salt(),
                       key.hash_prefix());
  WIDEN_ASSIGN_OR_RETURN(auto rows, source->Scan(scan));
  std::mt19937_64 rng(o.seed);
  std::vector<std::string> sample;
  std::string k;
  uint64_t seen = 0;
  for (; rows->Valid(); rows->Next()) {
    if (o.max_rows > 0 && out.rows_read == o.max_rows) break;
    ++out.rows_read;
    k.clear();
    if (!codec.Encode(rows->row(), &k).ok()) continue;  // migrate rejects such rows
    ++seen;
    if (sample.size() < o.sample_keys) {
      sample.push_back(k);
    } else {
      // Algorithm R: keep the new key with probability sample_keys / seen.
      const uint64_t j = std::uniform_int_distribution<uint64_t>(0, seen - 1)(rng);
      if (j < o.sample_keys) sample[j] = k;
    }
  }
  WIDEN_RETURN_IF_ERROR(rows->status());
  std::sort(sample.begin(), sample.end());
  out.keys_sampled = sample.size();
  out.method = "quantiles";
  out.points = QuantileSplitPoints(std::move(sample), o.regions);
  return out;
}

}  // namespace widen
