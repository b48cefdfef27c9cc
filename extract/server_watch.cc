#include "extract/server_watch.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "extract/source.h"

namespace widen {

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

enum Cut : int { kNotCut = 0, kInterrupted = 1, kTimedOut = 2 };

}  // namespace

// The watched connections and the watcher thread. Never destroyed: the
// detached thread may run while the process exits.
struct ServerWatchRegistry {
  std::mutex mu;
  std::vector<ServerWatch*> watches;
  std::atomic<const std::atomic<bool>*> interrupt{nullptr};
  std::atomic<int> cut{kNotCut};
  std::atomic<int> cut_after_s{0};
  std::atomic<int> connecting{0};  // open ConnectScopes
  std::once_flag started;

  static ServerWatchRegistry& Get() {
    static auto* r = new ServerWatchRegistry();
    std::call_once(r->started, [] { std::thread([] { r->Loop(); }).detach(); });
    return *r;
  }

  void CutLocked(ServerWatch* w, Cut why) {
    if (w->cut_) return;
    w->cut_ = true;
    int expected = kNotCut;
    cut.compare_exchange_strong(expected, why);
    if (why == kTimedOut) cut_after_s.store(w->read_timeout_s_);
    // Wakes the blocked read, which then fails; the owner closes the socket.
    ::shutdown(w->fd_, SHUT_RDWR);
  }

  void Loop() {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const std::atomic<bool>* flag = interrupt.load();
      const bool interrupted = flag != nullptr && flag->load();
      if (interrupted && connecting.load() > 0) {
        static constexpr char kMessage[] = "widen: interrupted while connecting to the source\n";
        (void)!::write(2, kMessage, sizeof(kMessage) - 1);
        ::_exit(130);
      }
      const int64_t now = NowMs();
      std::lock_guard<std::mutex> lock(mu);
      for (ServerWatch* w : watches) {
        if (interrupted) {
          CutLocked(w, kInterrupted);
          continue;
        }
        const int64_t since = w->waiting_since_ms_.load();
        if (w->read_timeout_s_ > 0 && since != 0 &&
            now - since > int64_t{w->read_timeout_s_} * 1000) {
          CutLocked(w, kTimedOut);
        }
      }
    }
  }
};

ServerWatch::ServerWatch(int fd, int read_timeout_s) : fd_(fd), read_timeout_s_(read_timeout_s) {
  ServerWatchRegistry& r = ServerWatchRegistry::Get();
  std::lock_guard<std::mutex> lock(r.mu);
  r.watches.push_back(this);
}

ServerWatch::~ServerWatch() {
  ServerWatchRegistry& r = ServerWatchRegistry::Get();
  std::lock_guard<std::mutex> lock(r.mu);
  std::erase(r.watches, this);
}

ServerWatch::Scope::Scope(ServerWatch* watch) : watch_(watch) {
  if (watch_ == nullptr) return;
  start_ms_ = NowMs();
  std::lock_guard<std::mutex> lock(watch_->scopes_mu_);
  std::vector<int64_t>& starts = watch_->open_starts_;
  starts.push_back(start_ms_);
  watch_->waiting_since_ms_.store(*std::min_element(starts.begin(), starts.end()));
}

ServerWatch::Scope::~Scope() {
  if (watch_ == nullptr) return;
  std::lock_guard<std::mutex> lock(watch_->scopes_mu_);
  std::vector<int64_t>& starts = watch_->open_starts_;
  starts.erase(std::find(starts.begin(), starts.end(), start_ms_));
  watch_->waiting_since_ms_.store(starts.empty() ? 0
                                                 : *std::min_element(starts.begin(), starts.end()));
}

ConnectScope::ConnectScope() { ServerWatchRegistry::Get().connecting.fetch_add(1); }

ConnectScope::~ConnectScope() { ServerWatchRegistry::Get().connecting.fetch_sub(1); }

void WatchInterrupts(const std::atomic<bool>* flag) {
  ServerWatchRegistry::Get().interrupt.store(flag);
}

Status CutStatus(const std::string& context) {
  ServerWatchRegistry& r = ServerWatchRegistry::Get();
  switch (r.cut.load()) {
    case kInterrupted:
      return Status::Cancelled(
          fmt::format("{}: interrupted while waiting for the source", context));
    case kTimedOut: {
      const int s = r.cut_after_s.load();
      return Status::Unavailable(fmt::format(
          "{}: the source sent nothing for {} s while widen waited for its answer (the server is "
          "stopped, overloaded or unreachable); the connection was closed. The limit is the "
          "source URL's read_timeout={} (seconds; 0 = none)",
          context, s, s));
    }
    default:
      return Status::OK();
  }
}

Result<int> TakeReadTimeout(std::string* url) {
  const size_t q = url->find('?');
  if (q == std::string::npos) return kDefaultReadTimeoutSeconds;
  const std::string key = "read_timeout=";
  size_t at = q + 1;
  while (at < url->size()) {
    const size_t end = std::min(url->find('&', at), url->size());
    if (url->compare(at, key.size(), key) == 0) {
      const std::string value = url->substr(at + key.size(), end - at - key.size());
      int s = -1;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), s);
      if (ec != std::errc() || p != value.data() + value.size() || s < 0 || s > 604800) {
        return Status::InvalidArgument(fmt::format(
            "source '{}': read_timeout must be a whole number of seconds in 0..604800 (0 = none), "
            "not '{}'",
            MaskUrl(*url), value));
      }
      // Drop "read_timeout=N" with one separator ('&' after it, else the
      // one before it).
      if (end < url->size()) {
        url->erase(at, end + 1 - at);
      } else {
        url->erase(at - 1);
      }
      return s;
    }
    at = end + 1;
  }
  return kDefaultReadTimeoutSeconds;
}

}  // namespace widen
