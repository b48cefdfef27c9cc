// Internals of transform/preview: the fingerprint multiset that finds
// repeated row keys in a full dry run with bounded memory.
//
// FingerprintSet keeps 64-bit fingerprints in memory up to `memory_bytes`;
// then it sorts them and appends them as one sorted run to an anonymous
// temporary file under $TMPDIR, else /tmp (unlinked at once, removed when
// closed).
// Duplicates() merges the runs (k-way, each read through a small buffer)
// and reports the fingerprints that occur more than once.
//
// Thread safety: not thread safe.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace widen::preview_internal {

class FingerprintSet {
 public:
  /// `memory_bytes`: in-memory buffer before a spill (at least 8 entries).
  explicit FingerprintSet(size_t memory_bytes);
  ~FingerprintSet();
  FingerprintSet(const FingerprintSet&) = delete;
  FingerprintSet& operator=(const FingerprintSet&) = delete;

  /// Past the buffer, sorted runs go to an unlinked temporary file under
  /// $TMPDIR (else /tmp). LocalIo, naming it, when it cannot be written.
  Status Add(uint64_t fingerprint);

  /// The distinct fingerprints added more than once, ascending, at most
  /// `max_out` of them (*truncated tells whether there were more); *repeats
  /// gets the number of additions beyond the first, over all fingerprints.
  /// REQUIRES: called once, after the last Add.
  Status Duplicates(size_t max_out, std::vector<uint64_t>* out, uint64_t* repeats, bool* truncated);

  uint64_t size() const { return size_; }
  /// Sorted runs written to the temporary file so far.
  size_t spilled_runs() const { return runs_.size(); }

 private:
  Status Spill();

  size_t capacity_;  // entries held in memory before a spill
  std::vector<uint64_t> buffer_;
  std::FILE* file_ = nullptr;
  std::string temp_path_;  // the temporary file's name (unlinked), for messages
  std::vector<std::pair<uint64_t, uint64_t>> runs_;  // (first entry, entries) in the file
  uint64_t file_entries_ = 0;
  uint64_t size_ = 0;
};

/// A 64-bit fingerprint of a row key and a timestamp.
uint64_t RowFingerprint(std::string_view row_key, int64_t timestamp_ms);
/// A 64-bit fingerprint of a column (family, qualifier) at a timestamp.
uint64_t ColumnFingerprint(std::string_view family, std::string_view qualifier,
                           int64_t timestamp_ms);

}  // namespace widen::preview_internal
