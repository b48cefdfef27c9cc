// Reading a PostgreSQL query through `COPY (SELECT ...) TO STDOUT` in text
// format: CopyReader receives the rows on a thread of its own, so that the
// server produces rows while the caller decodes the ones before; SplitCopyRow
// cuts one row into its fields. Internal to extract/ (and its tests).
//
// COPY's text format (PostgreSQL's "COPY", "Text Format"): one row per line,
// ended by '\n'; fields separated by '\t'; a NULL is the two bytes `\N`; in a
// value a backslash starts an escape: `\\` a backslash, `\b` `\f` `\n` `\r`
// `\t` `\v` the control characters, `\` and 1 to 3 octal digits a byte, `\x`
// and 1 or 2 hex digits a byte, and a backslash before any other character
// that character. Values are otherwise the type's text output, as in a
// query's text result (the session's DateStyle, TimeZone, bytea_output ...
// apply alike).
//
// Thread safety: a CopyReader is driven by one consumer thread; its own
// thread is the only user of the connection from Start until the end of the
// COPY (NextChunk returned false) or the reader's destruction.
#pragma once

#include <libpq-fe.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace widen {

class ServerWatch;

namespace pg_internal {

/// Cuts `line` (one COPY text row, without its '\n') into its fields:
/// (*fields)[i] views the i-th value, into `line` when it holds no escape,
/// else into (*scratch)[i] (unescaped there); (*nulls)[i] is true for `\N`.
/// The three vectors are resized to the field count found. Returns false for
/// a malformed escape (a backslash ending the line).
bool SplitCopyRow(std::string_view line, std::vector<std::string_view>* fields,
                  std::vector<bool>* nulls, std::vector<std::string>* scratch);

/// One COPY ... TO STDOUT on a libpq connection, its rows received by a
/// thread of its own into a bounded queue of chunks (each about kChunkBytes
/// of whole rows; at most kQueuedChunks wait, so memory stays at a few MiB
/// whatever the result's size).
class CopyReader {
 public:
  static constexpr size_t kChunkBytes = 256 << 10;
  static constexpr size_t kQueuedChunks = 4;

  /// How the COPY ended.
  struct Outcome {
    bool ok = false;       // every row received and the command completed
    std::string sqlstate;  // the server's error, when it sent one
    std::string message;   // libpq's message (the server's or its own)
    bool usable = false;   // the connection may run further commands
    bool lost = false;     // the connection ended (the server closed it, or it failed)
  };

  /// REQUIRES: `conn` is idle (no command in flight) and outlives the
  /// reader; `watch` (may be null) is the connection's, marked around every
  /// wait for the server.
  CopyReader(PGconn* conn, ServerWatch* watch) : conn_(conn), watch_(watch) {}
  /// Stops an unfinished COPY (a cancel request to the server; the
  /// connection is then not usable: its transaction is aborted) and joins
  /// the thread.
  ~CopyReader();
  CopyReader(const CopyReader&) = delete;
  CopyReader& operator=(const CopyReader&) = delete;

  /// Sends `sql` (a COPY ... TO STDOUT statement, one statement: the
  /// extended protocol) and waits for the server to start it. Returns false
  /// when it did not start (the reason in outcome()); else the thread runs.
  bool Start(const std::string& sql);

  /// Swaps the next chunk of rows (each ended by '\n') into *chunk, waiting
  /// for it; false when no row is left (outcome() then says why).
  bool NextChunk(std::string* chunk);

  /// Valid once Start or NextChunk returned false.
  const Outcome& outcome() const { return outcome_; }

  /// True when the COPY ended, every row was taken (NextChunk returned
  /// false) and the connection may run further commands.
  bool done_cleanly() {
    std::lock_guard<std::mutex> lock(mu_);
    return done_ && queue_.empty() && outcome_.usable && !stop_;
  }

 private:
  void Run();
  // Queues `chunk` (waits while the queue is full); false when stopping.
  bool Push(std::string* chunk);
  void Finish(bool copy_done);

  PGconn* conn_;
  ServerWatch* watch_;
  PGcancel* cancel_ = nullptr;  // made before the thread starts
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::vector<std::string> spare_;  // emptied chunks, reused
  bool done_ = false;               // the thread queued its last chunk
  bool stop_ = false;               // the consumer went away
  Outcome outcome_;
};

}  // namespace pg_internal
}  // namespace widen
