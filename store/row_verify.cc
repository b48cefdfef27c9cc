#include "store/row_verify.h"

#include <xxhash.h>

#include <limits>

#include <fmt/format.h>

#include "common/bytes.h"
#include "store/read_rules.h"

namespace widen {

namespace {

// A value for a message: printable, cut after 60 bytes.
std::string ShowValue(std::string_view value) {
  constexpr size_t kShown = 60;
  std::string s = "'" + ToStringBinary(value.substr(0, kShown)) + "'";
  if (value.size() > kShown) s += fmt::format("... ({} bytes)", value.size());
  return s;
}

// "family:qualifier @timestamp".
std::string ShowColumn(const CellView& c) {
  return fmt::format("{}:{} @{}", ToStringBinary(c.family), ToStringBinary(c.qualifier),
                     c.timestamp_ms);
}

bool SameCoordinates(const CellView& a, const CellView& b) {
  return a.family == b.family && a.qualifier == b.qualifier && a.timestamp_ms == b.timestamp_ms &&
         a.type == b.type;
}

}  // namespace

bool InVerifySample(std::string_view row, uint64_t every) {
  if (every <= 1) return true;
  return XXH3_64bits(row.data(), row.size()) % every == 0;
}

struct RowVerifySink::State {
  State(CellReader* stored_in, RowVerifyOptions options_in, const std::atomic<bool>* cancel_in,
        RowVerifyStats* stats_in)
      : stored(stored_in),
        options(std::move(options_in)),
        cancel(cancel_in),
        stats(stats_in),
        rules(options.families, std::numeric_limits<int>::max(), options.now_ms) {}

  CellReader* stored;
  const RowVerifyOptions options;
  const std::atomic<bool>* cancel;
  RowVerifyStats* stats;
  ReadRules rules;  // what a read returns of the source's cells

  // The source's current row.
  std::string row_key;
  bool have_row = false;
  bool in_sample = false;
  CellBatch pending;  // the last cell, until the next shows it is not replaced
  // The current row once one of its cells is returned by a read.
  bool row_open = false;
  bool stored_has_row = false;  // the store holds the row too
  uint64_t row_cells = 0;       // its cells returned by a read
  uint64_t row_differences = 0;
  int listed = -1;  // its index in stats->different, when named
  uint64_t steps = 0;
  bool closed = false;

  Status Step() {
    if ((++steps & 0xFFFF) == 0 && cancel != nullptr && cancel->load()) {
      return Status::Cancelled("interrupted");
    }
    return Status::OK();
  }

  bool StoredInRow() const { return stored->Valid() && stored->cell().row == row_key; }

  // Counts the stored rows below `key` (all that are left when null) as
  // extra, those in the sample.
  Status SkipStoredBefore(const std::string* key) {
    std::string row;
    while (stored->Valid()) {
      if (key != nullptr && !(stored->cell().row < std::string_view(*key))) break;
      row.assign(stored->cell().row);
      const bool sampled = InVerifySample(row, options.sample_every);
      uint64_t cells = 0;
      while (stored->Valid() && stored->cell().row == row) {
        ++cells;
        stored->Next();
        WIDEN_RETURN_IF_ERROR(Step());
      }
      WIDEN_RETURN_IF_ERROR(stored->status());
      if (!sampled) continue;
      ++stats->target_rows;
      ++stats->rows_extra;
      stats->target_cells += cells;
      stats->cells_extra += cells;
      if (stats->extra.size() < options.max_listed) {
        stats->extra.push_back(RowMismatch{row, cells, {}});
      }
    }
    return stored->status();
  }

  // A difference in the current row (which the store holds too).
  void Differ(std::string note) {
    ++row_differences;
    if (listed < 0 && row_differences == 1 && stats->different.size() < options.max_listed) {
      listed = static_cast<int>(stats->different.size());
      stats->different.push_back(RowMismatch{row_key, 0, {}});
    }
    if (listed >= 0 && stats->different[listed].differences.size() < options.max_cells_listed) {
      stats->different[listed].differences.push_back(std::move(note));
    }
  }

  // The stored reader is at a cell of the current row that the source does
  // not give: counts it and moves on.
  Status OnlyInTarget() {
    const CellView s = stored->cell();
    ++stats->target_cells;
    ++stats->cells_extra;
    Differ(fmt::format("{}: only in the target ({})", ShowColumn(s), ShowValue(s.value)));
    stored->Next();
    WIDEN_RETURN_IF_ERROR(Step());
    return stored->status();
  }

  // A cell of the current row that a read returns.
  Status Compare(const CellView& e) {
    if (!row_open) {
      WIDEN_RETURN_IF_ERROR(SkipStoredBefore(&row_key));
      row_open = true;
      stored_has_row = StoredInRow();
      row_cells = 0;
      row_differences = 0;
      listed = -1;
    }
    ++stats->source_cells;
    ++row_cells;
    if (!stored_has_row) {
      ++stats->cells_missing;
      return Status::OK();
    }
    while (StoredInRow() && CompareCells(stored->cell(), e) < 0) {
      WIDEN_RETURN_IF_ERROR(OnlyInTarget());
    }
    if (StoredInRow() && SameCoordinates(stored->cell(), e)) {
      const CellView s = stored->cell();
      ++stats->target_cells;
      if (s.value != e.value) {
        ++stats->cells_changed;
        Differ(fmt::format("{}: value {} in the target, {} from the source", ShowColumn(e),
                           ShowValue(s.value), ShowValue(e.value)));
      }
      stored->Next();
      WIDEN_RETURN_IF_ERROR(Step());
      return stored->status();
    }
    ++stats->cells_missing;
    Differ(fmt::format("{}: missing in the target (the source gives {})", ShowColumn(e),
                       ShowValue(e.value)));
    return Status::OK();
  }

  Status Emit(const CellView& c) { return rules.Returns(c) ? Compare(c) : Status::OK(); }

  Status FinishRow() {
    if (!pending.empty()) {
      WIDEN_RETURN_IF_ERROR(Emit(pending.Get(0)));
      pending.Clear();
    }
    // A row no cell of which a read returns is not there: a stored row of
    // that key is found extra with the rows after it.
    if (!row_open) return Status::OK();
    row_open = false;
    ++stats->source_rows;
    if (!stored_has_row) {
      ++stats->rows_missing;
      if (stats->missing.size() < options.max_listed) {
        stats->missing.push_back(RowMismatch{row_key, row_cells, {}});
      }
      return Status::OK();
    }
    while (StoredInRow()) WIDEN_RETURN_IF_ERROR(OnlyInTarget());
    ++stats->target_rows;
    if (row_differences == 0) {
      ++stats->rows_equal;
    } else {
      ++stats->rows_different;
      if (listed >= 0) stats->different[listed].cells = row_differences;
    }
    return Status::OK();
  }

  Status Take(const CellView& c) {
    WIDEN_RETURN_IF_ERROR(Step());
    if (!have_row || c.row != std::string_view(row_key)) {
      WIDEN_RETURN_IF_ERROR(FinishRow());
      row_key.assign(c.row);
      have_row = true;
      in_sample = InVerifySample(row_key, options.sample_every);
    }
    if (!in_sample) return Status::OK();
    if (!pending.empty()) {
      if (SameCoordinates(pending.Get(0), c)) {
        // The same coordinates again: this later cell replaces the pending one.
        ++stats->cells_replaced;
        pending.Clear();
        pending.Add(c);
        return Status::OK();
      }
      WIDEN_RETURN_IF_ERROR(Emit(pending.Get(0)));
      pending.Clear();
    }
    pending.Add(c);
    return Status::OK();
  }

  Status Finish() {
    WIDEN_RETURN_IF_ERROR(FinishRow());
    return SkipStoredBefore(nullptr);
  }
};

RowVerifySink::RowVerifySink(CellReader* stored, RowVerifyOptions options,
                             const std::atomic<bool>* cancel, RowVerifyStats* stats)
    : state_(std::make_unique<State>(stored, std::move(options), cancel, stats)) {}

RowVerifySink::~RowVerifySink() = default;

Status RowVerifySink::Put(const CellView& cell) {
  State& s = *state_;
  if (s.closed) return Status::FailedPrecondition("Put after Close");
  // The pending cell is the one put last, whatever the sample: check the
  // order against it, or against the current row key for rows left out.
  if (s.have_row) {
    const int order = cell.row.compare(s.row_key);
    const bool back =
        order < 0 || (order == 0 && !s.pending.empty() && CompareCells(cell, s.pending.Get(0)) < 0);
    if (back) {
      s.closed = true;  // Close must not finish: the rows after are not known
      return Status::FailedPrecondition(std::string(kOutOfOrder) + ": row " +
                                        ToStringBinary(cell.row));
    }
  }
  ++sink_stats_.cells;
  sink_stats_.bytes +=
      cell.row.size() + cell.family.size() + cell.qualifier.size() + cell.value.size();
  return s.Take(cell);
}

Status RowVerifySink::Close() {
  if (state_->closed) return Status::OK();
  state_->closed = true;
  return state_->Finish();
}

Status VerifyRows(CellRuns* expected, CellReader* stored, const RowVerifyOptions& options,
                  const std::atomic<bool>* cancel, RowVerifyStats* stats) {
  RowVerifySink::State state(stored, options, cancel, stats);
  WIDEN_RETURN_IF_ERROR(
      expected->Merge([&](const CellView& c, bool) { return state.Take(c); }, cancel));
  return state.Finish();
}

}  // namespace widen
