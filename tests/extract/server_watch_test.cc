// ServerWatch on a real socket pair: a wait is timed from the oldest Scope
// still open, so a Scope opened on a second thread while an older one
// closes (the next MySQL page's query) is timed from its own start; a wait
// longer than the read timeout shuts the socket down (the peer reads EOF).
// Its own binary: a cut is recorded for the whole process (CutStatus).
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <thread>

#include "extract/server_watch.h"

namespace widen {
namespace {

using std::chrono::milliseconds;

class SocketPair {
 public:
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  ~SocketPair() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  int watched() const { return fds_[0]; }
  // True once the watched end was shut down: the peer reads EOF.
  bool Cut() const {
    char c;
    const ssize_t n = ::recv(fds_[1], &c, 1, MSG_DONTWAIT);
    return n == 0;
  }

 private:
  int fds_[2] = {-1, -1};
};

TEST(ServerWatchTest, AScopeOnAnotherThreadIsTimedFromItsOwnStart) {
  SocketPair sp;
  {
    ServerWatch watch(sp.watched(), /*read_timeout_s=*/1);
    std::optional<ServerWatch::Scope> first(std::in_place, &watch);
    std::this_thread::sleep_for(milliseconds(700));
    // The second wait starts on another thread while the first is open,
    // then the first ends: 700 ms + 700 ms since the first began, 700 ms
    // since the second did.
    std::thread second([&] {
      ServerWatch::Scope wait(&watch);
      std::this_thread::sleep_for(milliseconds(700));
    });
    std::this_thread::sleep_for(milliseconds(20));
    first.reset();
    second.join();
    std::this_thread::sleep_for(milliseconds(200));  // the watcher's period is about 50 ms
    EXPECT_FALSE(sp.Cut()) << "a wait of 0.7 s was cut at a 1 s read timeout";
  }
}

TEST(ServerWatchTest, ANestedScopeCountsFromTheOutermostAndALongWaitIsCut) {
  SocketPair sp;
  ServerWatch watch(sp.watched(), /*read_timeout_s=*/1);
  {
    ServerWatch::Scope outer(&watch);
    std::this_thread::sleep_for(milliseconds(700));
    ServerWatch::Scope inner(&watch);
    std::this_thread::sleep_for(milliseconds(700));
  }
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_TRUE(sp.Cut()) << "a wait of 1.4 s was not cut at a 1 s read timeout";
}

}  // namespace
}  // namespace widen
