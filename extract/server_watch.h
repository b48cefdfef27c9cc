// ServerWatch: ends waits on a source server that cannot end by themselves.
//
// A source server that stops answering (frozen, or the network gone without
// a reset) leaves a blocking read waiting forever, and a SIGINT only sets a
// flag the run checks between rows. Each source connection registers its
// socket here; one background thread (started on first use, polling every
// 50 ms) shuts a socket down — the blocked read then fails as a lost
// connection — when
//   - a wait on it marked by a Scope has lasted longer than its read timeout
//     (0: never), or
//   - the interrupt flag given to WatchInterrupts is set (every socket).
// The sources then turn the failure into CutStatus(): Cancelled for an
// interrupt (exit 130, as any interrupt), Unavailable naming the timeout
// for a wait that lasted too long (exit 3).
//
// Thread safety: Scopes of one ServerWatch may be open on several threads at
// once (a source reading its next page on a second thread while the owner
// reads the last one); the registry is guarded by a mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace widen {

/// Seconds a source may send nothing while widen waits for an answer (one
/// query, or one batch of rows), unless the URL's `read_timeout=` says
/// otherwise: one hour (as the net_write_timeout widen sets on MySQL).
inline constexpr int kDefaultReadTimeoutSeconds = 3600;

/// One watched source connection. REQUIRES: destroyed before its socket is
/// closed (so that a reused descriptor is never shut down).
class ServerWatch {
 public:
  /// Watches socket `fd` (not owned); `read_timeout_s` <= 0: no timeout.
  ServerWatch(int fd, int read_timeout_s);
  ~ServerWatch();
  ServerWatch(const ServerWatch&) = delete;
  ServerWatch& operator=(const ServerWatch&) = delete;

  /// Marks a wait for the server's answer, from construction to destruction.
  /// The connection counts as waiting since the oldest Scope still open: a
  /// nested Scope counts as its outermost one, and a Scope opened on another
  /// thread (the next page's query) counts from its own start once the
  /// older ones have closed. `watch` may be null.
  class Scope {
   public:
    explicit Scope(ServerWatch* watch);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ServerWatch* watch_;
    int64_t start_ms_ = 0;  // steady clock
  };

  int read_timeout_s() const { return read_timeout_s_; }

 private:
  friend struct ServerWatchRegistry;
  int fd_;
  int read_timeout_s_;
  std::mutex scopes_mu_;                      // guards open_starts_ and its updates
  std::vector<int64_t> open_starts_;          // start of each open Scope, any thread
  std::atomic<int64_t> waiting_since_ms_{0};  // oldest open start; 0: not waiting
  bool cut_ = false;                          // under the registry's mutex
};

/// Watches `flag` (set by SIGINT/SIGTERM handlers; must outlive the
/// process's threads, e.g. a static): once it is set, every watched socket,
/// present or later, is shut down within about 50 ms; and while a
/// ConnectScope is open the process ends at once with exit 130 and
/// "widen: interrupted while connecting to the source" on stderr.
void WatchInterrupts(const std::atomic<bool>* flag);

/// Marks a connection being made to a source, from construction to
/// destruction: the drivers give no socket to shut down until they are
/// connected (and MySQL's reads its session variables before), so an
/// interrupt then ends the process (as a kill would; the store survives
/// that by design) instead of waiting up to the connect or read timeout.
class ConnectScope {
 public:
  ConnectScope();
  ~ConnectScope();
  ConnectScope(const ConnectScope&) = delete;
  ConnectScope& operator=(const ConnectScope&) = delete;
};

/// OK while no watched connection was cut. Else Cancelled ("<context>:
/// interrupted while waiting for the source") after an interrupt, or
/// Unavailable ("<context>: the source sent nothing for N s ...") after a
/// read timeout.
Status CutStatus(const std::string& context);

/// Parses widen's `read_timeout=SECONDS` from the query string of `url`
/// (kDefaultReadTimeoutSeconds when absent; 0 = none) and removes it from
/// *url. InvalidArgument (naming the masked URL) for a value that is not an
/// integer in 0..604800.
Result<int> TakeReadTimeout(std::string* url);

}  // namespace widen
