// CellSpool: a sink that keeps cells, in the order they are put, in one
// unlinked temporary file until they are replayed into another sink — how
// the parallel jobs of a table whose row keys follow their ranges wait for
// their turn, so that the store gets every cell in key order as from one
// job (transform/parallel.h).
//
// The file is created under the directory given, else $TMPDIR, else /tmp,
// and unlinked at once (gone when the spool is destroyed or the process
// ends, whatever happens). It holds records back to back in the layout of
// common/cell_record_internal.h (private to one process, never persisted).
// Memory: a 1 MiB write buffer and a 1 MiB read buffer.
//
// A spool is temporary: nothing in it outlives the process, so Sync and
// Close are Flush. Its cells are not checked (CellChecker) here: the sink
// they are replayed into checks them.
//
// Thread safety: used by one thread at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "common/cell.h"
#include "common/cell_sink.h"
#include "common/status.h"

namespace widen {

class CellSpool final : public CellSink {
 public:
  /// Creates the spool's file under `dir` (else $TMPDIR, else /tmp).
  /// LocalIo naming the file and the system's reason when it cannot.
  static Result<std::unique_ptr<CellSpool>> Open(const std::string& dir = "");

  ~CellSpool() override;
  CellSpool(const CellSpool&) = delete;
  CellSpool& operator=(const CellSpool&) = delete;

  /// Appends a copy of the cell. LocalIo on a write error.
  Status Put(const CellView& cell) override;
  /// Writes the buffered records to the file (not durable: temporary).
  Status Flush() override;
  /// Flush: a spool holds nothing meant to outlive the process.
  Status Sync() override { return Flush(); }
  Status Close() override { return Flush(); }
  /// cells and bytes (row + family + qualifier + value) put.
  const SinkStats& stats() const override { return stats_; }

  /// Puts every spooled cell, in the order put, into `to` (the views are
  /// valid during each Put only); stops at `to`'s first error, or with
  /// Cancelled when *cancel (may be null) turns true. LocalIo on a read
  /// error. The spool may be replayed again afterwards.
  Status Replay(CellSink* to, const std::atomic<bool>* cancel);

 private:
  CellSpool() = default;
  // Puts the records from the file's position on into `to` (Replay).
  Status ReadAll(CellSink* to, const std::atomic<bool>* cancel);
  Status WriteBuffer();
  Status Error(const char* what) const;

  std::FILE* file_ = nullptr;
  std::string path_;    // for messages (the name is unlinked at once)
  std::string buffer_;  // records not yet written to file_
  SinkStats stats_;
};

}  // namespace widen
