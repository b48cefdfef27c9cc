#include "transform/preview.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "common/cell_check.h"
#include "transform/key_codec.h"
#include "transform/preview_internal.h"

namespace widen {

namespace preview_internal {

namespace {

// splitmix64's finaliser: spreads FNV's bits over the whole word.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace

uint64_t RowFingerprint(std::string_view row_key, int64_t timestamp_ms) {
  return Mix(Fnv1a64(row_key) ^ Mix(static_cast<uint64_t>(timestamp_ms)));
}

uint64_t ColumnFingerprint(std::string_view family, std::string_view qualifier,
                           int64_t timestamp_ms) {
  uint64_t h = Fnv1a64(family);
  h = Mix(h) ^ Fnv1a64(qualifier);
  return Mix(h ^ Mix(static_cast<uint64_t>(timestamp_ms)));
}

FingerprintSet::FingerprintSet(size_t memory_bytes)
    : capacity_(std::max<size_t>(8, memory_bytes / sizeof(uint64_t))) {}

FingerprintSet::~FingerprintSet() {
  if (file_ != nullptr) std::fclose(file_);
}

Status FingerprintSet::Add(uint64_t fingerprint) {
  buffer_.push_back(fingerprint);
  ++size_;
  if (buffer_.size() >= capacity_) return Spill();
  return Status::OK();
}

Status FingerprintSet::Spill() {
  if (buffer_.empty()) return Status::OK();
  if (file_ == nullptr) {
    // Unlinked at once: gone when closed, whatever happens.
    const char* env = std::getenv("TMPDIR");
    temp_path_ =
        std::string(env != nullptr && *env != '\0' ? env : "/tmp") + "/widen-fingerprints-XXXXXX";
    const int fd = mkstemp(temp_path_.data());
    if (fd < 0) {
      return LocalIoError(
          "cannot create the temporary file " + temp_path_ + " for key fingerprints", errno);
    }
    unlink(temp_path_.c_str());
    file_ = fdopen(fd, "w+b");
    if (file_ == nullptr) {
      const int err = errno;
      close(fd);
      return LocalIoError("cannot open the temporary file " + temp_path_ + " for key fingerprints",
                          err);
    }
  }
  std::sort(buffer_.begin(), buffer_.end());
  if (std::fseek(file_, 0, SEEK_END) != 0 ||
      std::fwrite(buffer_.data(), sizeof(uint64_t), buffer_.size(), file_) != buffer_.size()) {
    return LocalIoError("cannot write key fingerprints to the temporary file " + temp_path_, errno);
  }
  runs_.emplace_back(file_entries_, buffer_.size());
  file_entries_ += buffer_.size();
  buffer_.clear();
  return Status::OK();
}

Status FingerprintSet::Duplicates(size_t max_out, std::vector<uint64_t>* out, uint64_t* repeats,
                                  bool* truncated) {
  out->clear();
  *repeats = 0;
  *truncated = false;
  // Each value comes out of `next` in ascending order.
  uint64_t prev = 0;
  uint64_t run = 0;  // occurrences of prev so far
  auto take = [&](uint64_t v) {
    if (run > 0 && v == prev) {
      ++run;
      ++*repeats;
      if (run == 2) {
        if (out->size() < max_out) {
          out->push_back(v);
        } else {
          *truncated = true;
        }
      }
      return;
    }
    prev = v;
    run = 1;
  };
  if (runs_.empty()) {
    std::sort(buffer_.begin(), buffer_.end());
    for (uint64_t v : buffer_) take(v);
    buffer_.clear();
    return Status::OK();
  }
  WIDEN_RETURN_IF_ERROR(Spill());
  std::fflush(file_);
  // k-way merge: one small buffer per run.
  struct Reader {
    uint64_t next_entry, end_entry;
    std::vector<uint64_t> buf;
    size_t pos = 0;
  };
  const size_t per_run = std::max<size_t>(512, capacity_ / (runs_.size() + 1));
  std::vector<Reader> readers;
  for (const auto& [first, count] : runs_) readers.push_back(Reader{first, first + count, {}, 0});
  auto refill = [&](Reader* r) -> Status {
    r->buf.resize(std::min<uint64_t>(per_run, r->end_entry - r->next_entry));
    r->pos = 0;
    if (r->buf.empty()) return Status::OK();
    if (std::fseek(file_, static_cast<long>(r->next_entry * sizeof(uint64_t)), SEEK_SET) != 0 ||
        std::fread(r->buf.data(), sizeof(uint64_t), r->buf.size(), file_) != r->buf.size()) {
      return Status::LocalIo("cannot read key fingerprints back from the temporary file " +
                             temp_path_);
    }
    r->next_entry += r->buf.size();
    return Status::OK();
  };
  using Head = std::pair<uint64_t, size_t>;  // (value, reader)
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heap;
  for (size_t i = 0; i < readers.size(); ++i) {
    WIDEN_RETURN_IF_ERROR(refill(&readers[i]));
    if (!readers[i].buf.empty()) heap.emplace(readers[i].buf[0], i);
  }
  while (!heap.empty()) {
    auto [v, i] = heap.top();
    heap.pop();
    take(v);
    Reader& r = readers[i];
    if (++r.pos == r.buf.size()) WIDEN_RETURN_IF_ERROR(refill(&r));
    if (r.pos < r.buf.size()) heap.emplace(r.buf[r.pos], i);
  }
  return Status::OK();
}

}  // namespace preview_internal

using preview_internal::ColumnFingerprint;
using preview_internal::FingerprintSet;
using preview_internal::RowFingerprint;

void SizeStats::Add(uint64_t v) {
  if (count == 0 || v < min) min = v;
  if (count == 0 || v > max) max = v;
  ++count;
  sum += static_cast<double>(v);
  ++log2_buckets[std::bit_width(v)];
}

namespace {

// Keeps the first rejected rows as examples; the assembler counts them all.
class ExampleRejects : public RejectHandler {
 public:
  ExampleRejects(size_t max, std::vector<PreviewReject>* out) : max_(max), out_(out) {}
  Status Reject(const std::string&, const std::string& row_id, const std::string& reason) override {
    if (out_ != nullptr && out_->size() < max_) out_->push_back(PreviewReject{row_id, reason});
    return Status::OK();
  }

 private:
  size_t max_;
  std::vector<PreviewReject>* out_;
};

// Finds cells that replace cells of an earlier row with the same row key and
// timestamp; remembers the first row of each (key, timestamp) it is shown.
class CollisionIndex {
 public:
  CollisionIndex(size_t max_examples, TablePreview* out) : max_examples_(max_examples), out_(out) {}

  // `columns`: the row's cells as (fingerprint, "family:qualifier"), sorted.
  void Observe(uint64_t row_fp, std::string_view key, int64_t ts, const std::string& source_id,
               const std::vector<std::pair<uint64_t, std::string>>& columns) {
    auto& slot = seen_[row_fp];
    for (First& f : slot) {
      if (f.key != key || f.ts != ts) continue;  // a fingerprint false positive
      uint64_t overlap = 0;
      std::vector<uint64_t> merged;
      size_t i = 0, j = 0;
      while (i < f.columns.size() || j < columns.size()) {
        if (j == columns.size() || (i < f.columns.size() && f.columns[i] < columns[j].first)) {
          merged.push_back(f.columns[i++]);
        } else if (i == f.columns.size() || columns[j].first < f.columns[i]) {
          merged.push_back(columns[j++].first);
        } else {
          if (overlap++ == 0) Example(key, columns[j].second, ts, f.source, source_id);
          merged.push_back(columns[j].first);
          ++i;
          ++j;
        }
      }
      if (overlap == 0) ++out_->merged_rows;
      out_->collisions += overlap;
      f.columns = std::move(merged);
      return;
    }
    First f;
    f.key.assign(key);
    f.ts = ts;
    f.source = source_id;
    f.columns.reserve(columns.size());
    for (const auto& c : columns) f.columns.push_back(c.first);
    slot.push_back(std::move(f));
  }

  void Example(std::string_view key, const std::string& column, int64_t ts,
               const std::string& first, const std::string& second, bool same_row = false) {
    if (out_->collision_examples.size() >= max_examples_) return;
    KeyCollision c;
    c.row_key.assign(key);
    c.column = column;
    c.timestamp_ms = ts;
    c.first_source = first;
    c.second_source = second;
    c.same_source_row = same_row;
    out_->collision_examples.push_back(std::move(c));
  }

 private:
  struct First {
    std::string key;
    int64_t ts = 0;
    std::string source;
    std::vector<uint64_t> columns;  // sorted column fingerprints written so far
  };
  size_t max_examples_;
  TablePreview* out_;
  std::unordered_map<uint64_t, std::vector<First>> seen_;
};

// The sink of a dry run: cells stay in memory, rows are measured.
class PreviewSink : public CellSink {
 public:
  enum class Mode {
    kSample,   // stats + exact collision index over every row
    kFull,     // stats + fingerprints (collisions found in a second pass)
    kRecheck,  // second pass: only the suspect fingerprints, exactly
  };

  PreviewSink(const TablePlan& plan, const PreviewOptions& o, TablePreview* out, Mode mode,
              FingerprintSet* fingerprints, const std::unordered_set<uint64_t>* suspects)
      : plan_(plan),
        o_(o),
        out_(out),
        mode_(mode),
        fingerprints_(fingerprints),
        suspects_(suspects),
        index_(o.max_examples, out),
        checker_(plan.descriptor, CellLimits()) {
    std::vector<std::pair<std::string, int>> versions;
    for (const auto& f : plan.descriptor.families) versions.emplace_back(f.name, f.versions);
    counter_.SetVersions(std::move(versions));
  }

  Status OnRow(std::string_view key, int64_t ts, const Row& source) {
    WIDEN_RETURN_IF_ERROR(EndRow());
    in_row_ = true;
    key_.assign(key);
    ts_ = ts;
    cells_ = bytes_ = 0;
    columns_n_ = 0;
    // Only the identity columns are kept, to name the row if needed later.
    identity_.values.resize(source.size());
    for (const auto& [name, idx] : plan_.identity) identity_.values[idx] = source[idx];
    if (plan_.identity.empty()) {  // SourceRowId falls back to the key parts
      for (const auto& p : plan_.key.parts()) {
        if (!p.is_literal) identity_.values[p.index] = source[p.index];
      }
    }
    source_id_.clear();
    shown_ = mode_ != Mode::kRecheck && rows_ < o_.show_rows;
    if (shown_) out_->shown_rows.push_back(PreviewRow{key_, SourceId(), 0, 0});
    ++rows_;
    return Status::OK();
  }

  Status Put(const CellView& cell) override {
    // What every store refuses (common/cell_check.h), the dry run refuses.
    WIDEN_RETURN_IF_ERROR(checker_.Check(cell));
    const uint64_t b =
        cell.row.size() + cell.family.size() + cell.qualifier.size() + cell.value.size();
    ++stats_.cells;
    stats_.bytes += b;
    ++cells_;
    bytes_ += b;
    if (columns_n_ == columns_.size()) columns_.emplace_back();
    auto& col = columns_[columns_n_++];
    col.first = ColumnFingerprint(cell.family, cell.qualifier, cell.timestamp_ms);
    col.second.assign(cell.family);
    col.second.push_back(':');
    col.second.append(cell.qualifier.data(), cell.qualifier.size());
    timestamps_.resize(columns_n_);
    timestamps_[columns_n_ - 1] = cell.timestamp_ms;
    if (mode_ == Mode::kRecheck) return Status::OK();
    WIDEN_RETURN_IF_ERROR(counter_.Put(cell));
    out_->qualifier_bytes.Add(cell.qualifier.size());
    out_->value_bytes.Add(cell.value.size());
    for (auto& f : out_->families) {
      if (f.name == cell.family) {
        ++f.cells;
        f.bytes += b;
      }
    }
    if (shown_) out_->shown.Add(cell);
    return Status::OK();
  }

  // A cell the current source row gives twice (the assembler keeps the last).
  void OnReplaced(std::string_view family, std::string_view qualifier, int64_t ts) {
    if (mode_ == Mode::kRecheck) return;
    ++out_->collisions;
    std::string column(family);
    column.push_back(':');
    column.append(qualifier);
    index_.Example(key_, column, ts, SourceId(), SourceId(), true);
  }

  Status Flush() override { return EndRow(); }
  /// In memory: nothing to make durable.
  Status Sync() override { return EndRow(); }
  Status Close() override {
    WIDEN_RETURN_IF_ERROR(EndRow());
    if (mode_ == Mode::kRecheck) return Status::OK();
    WIDEN_RETURN_IF_ERROR(counter_.Close());
    out_->row_keys = counter_.stats().rows;
    out_->beyond_versions = counter_.stats().beyond_versions;
    return Status::OK();
  }
  const SinkStats& stats() const override { return stats_; }

 private:
  const std::string& SourceId() {
    if (source_id_.empty()) source_id_ = SourceRowId(plan_, identity_);
    return source_id_;
  }

  Status EndRow() {
    if (!in_row_) return Status::OK();
    in_row_ = false;
    // The row's columns, sorted by fingerprint: repeats within the row are
    // cells of one source row that replace each other.
    sorted_.clear();
    for (size_t i = 0; i < columns_n_; ++i) sorted_.push_back(i);
    std::sort(sorted_.begin(), sorted_.end(),
              [&](size_t a, size_t b) { return columns_[a].first < columns_[b].first; });
    row_columns_.clear();
    for (size_t n = 0; n < sorted_.size(); ++n) {
      const auto& c = columns_[sorted_[n]];
      if (!row_columns_.empty() && row_columns_.back().first == c.first) {
        const auto& prev = columns_[sorted_[n - 1]];
        if (mode_ != Mode::kRecheck && prev.second == c.second &&
            timestamps_[sorted_[n - 1]] == timestamps_[sorted_[n]]) {
          ++out_->collisions;
          index_.Example(key_, c.second, timestamps_[sorted_[n]], SourceId(), SourceId(), true);
        }
        continue;
      }
      row_columns_.push_back(c);
    }
    const uint64_t fp = RowFingerprint(key_, ts_);
    switch (mode_) {
      case Mode::kSample:
        index_.Observe(fp, key_, ts_, SourceId(), row_columns_);
        break;
      case Mode::kFull:
        WIDEN_RETURN_IF_ERROR(fingerprints_->Add(fp));
        break;
      case Mode::kRecheck:
        if (suspects_->count(fp) > 0) index_.Observe(fp, key_, ts_, SourceId(), row_columns_);
        return Status::OK();
    }
    if (shown_) {
      out_->shown_rows.back().cells = cells_;
      out_->shown_rows.back().bytes = bytes_;
    }
    out_->cells_per_row.Add(cells_);
    out_->row_bytes.Add(bytes_);
    out_->key_bytes.Add(key_.size());
    if (!out_->salt_buckets.empty()) {
      const size_t bucket = SaltBucket();
      if (bucket < out_->salt_buckets.size()) ++out_->salt_buckets[bucket];
    }
    auto& w = out_->widest;
    auto wider = [](const PreviewRow& a, const PreviewRow& b) {
      return a.cells != b.cells ? a.cells > b.cells : a.bytes > b.bytes;
    };
    PreviewRow row{key_, "", cells_, bytes_};
    if (o_.widest_rows > 0 && (w.size() < o_.widest_rows || wider(row, w.back()))) {
      row.source_id = SourceId();
      w.insert(std::upper_bound(w.begin(), w.end(), row, wider), std::move(row));
      if (w.size() > o_.widest_rows) w.pop_back();
    }
    return Status::OK();
  }

  // The salt bucket a key starts with (binary: its first byte; text: its
  // leading decimal digits).
  size_t SaltBucket() const {
    if (key_.empty()) return SIZE_MAX;
    if (plan_.key.form() == KeyForm::kBinary) return static_cast<unsigned char>(key_[0]);
    size_t v = 0;
    for (char c : key_) {
      if (c < '0' || c > '9') break;
      v = v * 10 + static_cast<size_t>(c - '0');
    }
    return v;
  }

  const TablePlan& plan_;
  const PreviewOptions& o_;
  TablePreview* out_;
  Mode mode_;
  FingerprintSet* fingerprints_;
  const std::unordered_set<uint64_t>* suspects_;
  CollisionIndex index_;
  CellChecker checker_;
  SinkStats stats_;

  bool in_row_ = false;
  bool shown_ = false;
  uint64_t rows_ = 0;
  std::string key_;
  int64_t ts_ = 0;
  uint64_t cells_ = 0, bytes_ = 0;
  Row identity_;
  std::string source_id_;
  std::vector<std::pair<uint64_t, std::string>> columns_;  // reused across rows
  size_t columns_n_ = 0;
  std::vector<int64_t> timestamps_;
  std::vector<size_t> sorted_;
  std::vector<std::pair<uint64_t, std::string>> row_columns_;
  // What a store would count over every row (keys in order, versions,
  // replaced cells), sorted externally when the keys are not in read order.
  class CountingSink final : public BufferedCellSink {
   protected:
    Status WriteSorted(const CellBatch&) override { return Status::OK(); }
    Status SyncWritten() override { return Status::OK(); }
  };
  CountingSink counter_;
};

}  // namespace

Result<TablePreview> PreviewTable(const TablePlan& plan, Source* source, const PreviewOptions& o) {
  TablePreview out;
  out.estimated_rows = o.estimated_rows;
  for (const auto& f : plan.descriptor.families) out.families.push_back(FamilyStats{f.name, 0, 0});
  if (plan.key.salt().size > 0) out.salt_buckets.assign(plan.key.salt().size, 0);

  const bool full = o.sample_rows == 0;
  FingerprintSet fingerprints(o.fingerprint_memory_bytes);
  PreviewSink sink(plan, o, &out, full ? PreviewSink::Mode::kFull : PreviewSink::Mode::kSample,
                   &fingerprints, nullptr);
  ExampleRejects rejects(o.max_examples, &out.reject_examples);
  AssembleOptions ao;
  ao.timestamp_ms = o.timestamp_ms;
  ao.rejects = &rejects;
  ao.max_driving_rows = o.sample_rows;
  ao.on_row = [&sink](std::string_view key, int64_t ts, const Row& row) {
    return sink.OnRow(key, ts, row);
  };
  ao.on_replaced = [&sink](std::string_view, std::string_view family, std::string_view qualifier,
                           int64_t ts) { sink.OnReplaced(family, qualifier, ts); };
  WIDEN_RETURN_IF_ERROR(Assemble(plan, source, &sink, ao, &out.run));
  WIDEN_RETURN_IF_ERROR(sink.Close());
  out.driving_rows = out.run.rows + out.run.rejected + out.run.empty_rows;
  out.complete = full || out.driving_rows < o.sample_rows;
  if (out.complete) {
    out.estimated_total_bytes = static_cast<int64_t>(out.run.bytes);
  } else if (o.estimated_rows > 0 && out.driving_rows > 0) {
    out.estimated_total_bytes = static_cast<int64_t>(static_cast<double>(out.run.bytes) /
                                                     static_cast<double>(out.driving_rows) *
                                                     static_cast<double>(o.estimated_rows));
  }
  out.shown.Sort();

  if (full) {
    std::vector<uint64_t> dups;
    uint64_t repeats = 0;
    bool truncated = false;
    WIDEN_RETURN_IF_ERROR(fingerprints.Duplicates(o.max_suspects, &dups, &repeats, &truncated));
    if (!dups.empty()) {
      // Second pass over the same snapshot: name the rows behind the suspects.
      const std::unordered_set<uint64_t> suspects(dups.begin(), dups.end());
      PreviewSink recheck(plan, o, &out, PreviewSink::Mode::kRecheck, nullptr, &suspects);
      ExampleRejects quiet(0, nullptr);
      AssembleOptions again = ao;
      again.rejects = &quiet;
      again.on_row = [&recheck](std::string_view key, int64_t ts, const Row& row) {
        return recheck.OnRow(key, ts, row);
      };
      again.on_replaced = nullptr;
      TableStats ignored;
      WIDEN_RETURN_IF_ERROR(Assemble(plan, source, &recheck, again, &ignored));
      WIDEN_RETURN_IF_ERROR(recheck.Close());
      out.collisions_exact = !truncated;
    }
  }
  return out;
}

}  // namespace widen
