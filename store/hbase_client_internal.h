// HBaseConnection: one connection to an HBase Thrift2 gateway — a TSocket,
// TBufferedTransport and TBinaryProtocol (the gateway's default: binary
// protocol, unframed) under the generated THBaseServiceClient — and the one
// place where Thrift's exceptions become Status:
//
//   TTransportException (refused, reset, timed out, closed by the gateway's
//                        idle timeout)               Unavailable; reconnects
//   TIOError with canRetry (region moving, server busy, retries exhausted
//                        inside the gateway)         Unavailable
//   TIOError without canRetry, or whose text names a DoNotRetryIOException
//                        (a batch in which the region server refused a
//                        cell arrives as a retryable "retries exhausted")
//                        TableNotFound/NamespaceNotFound: NotFound;
//                        TableExists/NamespaceExist: FailedPrecondition;
//                        otherwise InvalidArgument (the request is refused)
//   TIllegalArgument     InvalidArgument
//   TApplicationException INTERNAL_ERROR (a Java exception the gateway did
//                        not expect, e.g. a cell over its client's size
//                        limit)                      InvalidArgument
//   other TApplicationException (the peer is no Thrift2 gateway)
//                                                    FailedPrecondition
//   TProtocolException (a corrupt stream)           Unavailable; reconnects
//
// Probe() is the first request of a store (getThriftServerType), and the
// one place that tells "no server here" from "another kind of server here":
// a refused or unreachable port, or a peer that does not answer in time, is
// Unavailable; a peer that accepted the connection and then closed it
// without an answer (three times: PostgreSQL, ZooKeeper, a framed or compact
// gateway), or answered with bytes that are no Thrift answer (a MySQL or
// MariaDB greeting), is FailedPrecondition naming the first bytes it sent.
//
// Before each request a socket the gateway closed meanwhile (its idle
// timeout) is found (it is readable between requests) and replaced, so a
// request that is not idempotent does not fail only because the
// connection sat idle.
//
// Call() runs one request; Retry() repeats an idempotent one while it fails
// with Unavailable, reconnecting, with exponential back-off, until a time
// budget is spent. Only requests whose repetition cannot change the result
// may go through Retry (puts and delete markers with explicit timestamps,
// reads, describe); a non-idempotent one (creating a table) uses Call and
// checks what happened after a failure.
//
// Thread safety: a connection is used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "THBaseService.h"
#include "common/status.h"

namespace widen {
namespace hbase_internal {

namespace thrift2 = ::apache::hadoop::hbase::thrift2;

/// How a connection talks to the gateway. Defaults suit a gateway on a LAN.
struct ConnectionOptions {
  int connect_timeout_ms = 10000;
  /// Per request (send and receive). The gateway retries region moves
  /// internally for a while before it answers: keep this above that.
  int rpc_timeout_ms = 300000;
  /// Retry(): total time spent retrying one request before giving up.
  int retry_budget_ms = 120000;
  int first_backoff_ms = 50;  // doubled after each retry ...
  int max_backoff_ms = 5000;  // ... up to this
};

class HBaseConnection {
 public:
  /// Does no I/O: the socket opens on the first request.
  HBaseConnection(std::string host, int port, const ConnectionOptions& options);
  ~HBaseConnection();
  HBaseConnection(const HBaseConnection&) = delete;
  HBaseConnection& operator=(const HBaseConnection&) = delete;

  using Request = std::function<void(thrift2::THBaseServiceClient&)>;

  /// Runs `request` once (opening the socket first if needed). `what` names
  /// it in messages ("creating table 'ns:t'"). After a transport or
  /// protocol error the socket is closed, so the next request reconnects.
  Status Call(const std::string& what, const Request& request);

  /// Asks the peer which gateway it is (see above); sets `*type` on
  /// success. Closed-without-answer is tried three times within about a
  /// second (a gateway whose queue is full closes new connections too).
  Status Probe(thrift2::TThriftServerType::type* type);

  /// Runs an idempotent `request`, repeating it while it fails with
  /// Unavailable (see above). `retries`, if given, counts the repetitions.
  Status Retry(const std::string& what, const Request& request, uint64_t* retries = nullptr);

  /// "HOST:PORT", for messages.
  std::string address() const;

  /// Closes the socket (the next request reconnects).
  void Disconnect();

  /// Whether a socket is open (it may still have been closed by the peer).
  bool connected() const { return client_ != nullptr; }

 private:
  Status Connect();
  // Whether the open socket has something to read between requests: the
  // gateway closed it (its idle timeout, 60 s by default) or the stream is
  // out of step. Either way no request may go out on it.
  bool PeerClosed() const;

  const std::string host_;
  const int port_;
  const ConnectionOptions options_;
  std::shared_ptr<apache::thrift::transport::TTransport> transport_;
  int socket_fd_ = -1;  // the open socket's descriptor (for PeerClosed)
  // The first bytes the peer sent on the open socket (at most 48), written
  // by the socket as it reads.
  std::shared_ptr<std::string> first_bytes_;
  std::unique_ptr<thrift2::THBaseServiceClient> client_;
};

}  // namespace hbase_internal
}  // namespace widen
