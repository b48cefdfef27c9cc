#include "store/row_sync.h"

#include <xxhash.h>

#include <fmt/format.h>

#include "common/bytes.h"

namespace widen {

namespace {

// Big-endian, written at once (the framing is per cell, on every row a sync
// reads).
void AppendU32(std::string* s, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>(v >> (8 * (3 - i)));
  s->append(b, 4);
}

void AppendU64(std::string* s, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * (7 - i)));
  s->append(b, 8);
}

// Whether two cells have the same coordinates (all but the value).
bool SameCoordinates(const CellView& a, const CellView& b) {
  return a.timestamp_ms == b.timestamp_ms && a.type == b.type && a.qualifier == b.qualifier &&
         a.family == b.family && a.row == b.row;
}

}  // namespace

namespace {

// XXH3-128 of the cells framed as docs/format.md "Row digests" says, with
// or without their values, high half first, each half big-endian. The
// framed cells go into one buffer, hashed at once (the same digest as
// hashing them piece by piece); the buffer is kept for the next row.
std::string FramedDigest(const CellBatch& cells, bool with_values) {
  thread_local std::string buf;
  buf.clear();
  for (size_t i = 0; i < cells.size(); ++i) {
    const CellView c = cells.Get(i);
    AppendU32(&buf, static_cast<uint32_t>(c.family.size()));
    buf.append(c.family);
    AppendU32(&buf, static_cast<uint32_t>(c.qualifier.size()));
    buf.append(c.qualifier);
    AppendU64(&buf, static_cast<uint64_t>(c.timestamp_ms));
    buf.push_back(static_cast<char>(c.type));
    if (with_values) {
      AppendU32(&buf, static_cast<uint32_t>(c.value.size()));
      buf.append(c.value);
    }
  }
  const XXH128_hash_t h = XXH3_128bits(buf.data(), buf.size());
  if (buf.capacity() > (1u << 20)) std::string().swap(buf);  // a wide row's buffer goes
  std::string out;
  AppendU64(&out, h.high64);
  AppendU64(&out, h.low64);
  return out;
}

}  // namespace

std::string RowDigest(const CellBatch& cells) { return FramedDigest(cells, true); }

std::string RowKeysDigest(const CellBatch& cells) { return FramedDigest(cells, false); }

// The row-by-row comparison shared by SyncRows and RowSyncSink.
struct RowSyncSink::State {
  RowDigestReader* stored;
  RowWriter* writer;
  const std::atomic<bool>* cancel;
  RowSyncStats* stats;
  RowWriterStats before;  // the writer's figures when this sync began
  CellBatch row;          // the current row's cells, deduplicated (its last may still be replaced)
  std::string row_key;
  CellBatch empty;
  uint64_t seen = 0;
  bool closed = false;

  // Removes the stored rows below `key` (all of them when `key` is null).
  Status RemoveBefore(const std::string* key) {
    while (stored->Valid() && (key == nullptr || stored->row() < std::string_view(*key))) {
      WIDEN_RETURN_IF_ERROR(writer->ReplaceRow(stored->row(), empty, ""));
      stored->Next();
    }
    return stored->status();
  }

  Status FinishRow() {
    if (row.empty()) return Status::OK();
    ++stats->rows;
    WIDEN_RETURN_IF_ERROR(RemoveBefore(&row_key));
    std::string digest = RowDigest(row);
    std::string keys;  // only for a row to write: most rows of a sync are unchanged
    bool same_keys = false;
    if (stored->Valid() && stored->row() == row_key) {
      const std::string_view old = stored->digest();
      const bool same = old.substr(0, kRowDigestBytes) == digest;
      if (!same) {
        keys = RowKeysDigest(row);
        same_keys = old.size() == 2 * kRowDigestBytes && old.substr(kRowDigestBytes) == keys;
      }
      stored->Next();
      WIDEN_RETURN_IF_ERROR(stored->status());
      if (same) {
        ++stats->rows_unchanged;
        row.Clear();
        return Status::OK();
      }
    } else {
      keys = RowKeysDigest(row);
    }
    digest += keys;
    WIDEN_RETURN_IF_ERROR(writer->ReplaceRow(row_key, row, digest, same_keys));
    ++stats->rows_written;
    row.Clear();
    return Status::OK();
  }

  Status Take(const CellView& c) {
    if ((++seen & 0xFFFF) == 0 && cancel != nullptr && cancel->load()) {
      return Status::Cancelled("interrupted");
    }
    if (!row.empty()) {
      const CellView last = row.Get(row.size() - 1);
      if (SameCoordinates(last, c)) {
        // The same coordinates again: this later cell replaces the last one.
        if (stats->overwritten++ == 0) {
          stats->first_overwritten =
              fmt::format("row {} column {}:{} timestamp {}", ToStringBinary(c.row),
                          ToStringBinary(c.family), ToStringBinary(c.qualifier), c.timestamp_ms);
        }
        row.PopBack();
      } else if (c.row != last.row) {
        WIDEN_RETURN_IF_ERROR(FinishRow());
        row_key.assign(c.row);
      }
    } else {
      row_key.assign(c.row);
    }
    row.Add(c);
    return Status::OK();
  }

  Status Finish() {
    WIDEN_RETURN_IF_ERROR(FinishRow());
    WIDEN_RETURN_IF_ERROR(RemoveBefore(nullptr));
    // A writer may learn what it removed only when it writes (HBase reads
    // the rows it replaces then): its figures are whole after a Flush.
    WIDEN_RETURN_IF_ERROR(writer->Flush());
    const RowWriterStats& after = writer->stats();
    stats->cells_put += after.cells_put - before.cells_put;
    stats->cells_deleted += after.cells_deleted - before.cells_deleted;
    stats->rows_deleted += after.rows_deleted - before.rows_deleted;
    stats->bytes_put += after.bytes_put - before.bytes_put;
    return Status::OK();
  }
};

RowSyncSink::RowSyncSink(RowDigestReader* stored, RowWriter* writer,
                         const std::atomic<bool>* cancel, RowSyncStats* stats)
    : state_(new State{stored, writer, cancel, stats, writer->stats(), {}, {}, {}, 0, false}) {}

RowSyncSink::~RowSyncSink() = default;

Status RowSyncSink::Put(const CellView& cell) {
  State& s = *state_;
  // The row's last cell is the one put before this one.
  if (!s.row.empty() && CompareCells(cell, s.row.Get(s.row.size() - 1)) < 0) {
    s.closed = true;  // Close must not finish: the rows after are not known
    return Status::FailedPrecondition(std::string(kOutOfOrder) + ": row " +
                                      ToStringBinary(cell.row));
  }
  ++sink_stats_.cells;
  sink_stats_.bytes +=
      cell.row.size() + cell.family.size() + cell.qualifier.size() + cell.value.size();
  return s.Take(cell);
}

Status RowSyncSink::Close() {
  if (state_->closed) return Status::OK();
  state_->closed = true;
  return state_->Finish();
}

Status SyncRows(CellRuns* cells, RowDigestReader* stored, RowWriter* writer,
                const std::atomic<bool>* cancel, RowSyncStats* stats) {
  RowSyncSink::State state{stored, writer, cancel, stats, writer->stats(), {}, {}, {}, 0, false};
  WIDEN_RETURN_IF_ERROR(
      cells->Merge([&](const CellView& c, bool) { return state.Take(c); }, cancel));
  return state.Finish();
}

void RowSyncStats::Add(const RowSyncStats& s) {
  rows += s.rows;
  rows_unchanged += s.rows_unchanged;
  rows_written += s.rows_written;
  rows_deleted += s.rows_deleted;
  cells_put += s.cells_put;
  cells_deleted += s.cells_deleted;
  bytes_put += s.bytes_put;
  overwritten += s.overwritten;
  if (first_overwritten.empty()) first_overwritten = s.first_overwritten;
}

}  // namespace widen
