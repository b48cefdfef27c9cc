#include <poll.h>

#include <thrift/TApplicationException.h>
#include <thrift/TOutput.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TProtocolException.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSocket.h>
#include <thrift/transport/TTransportException.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "store/hbase_client_internal.h"

namespace widen {
namespace hbase_internal {

namespace {

using apache::thrift::TApplicationException;
using apache::thrift::protocol::TProtocolException;
using apache::thrift::transport::TTransportException;

bool Contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

// The first line of a Java exception's message (the gateway sends the whole
// stack of causes).
std::string FirstLine(const std::string& s) {
  const size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

Status FromIOError(const thrift2::TIOError& e, const std::string& what) {
  const std::string m = e.__isset.message ? FirstLine(e.message) : "unknown error";
  std::string text = what + ": HBase: " + m;
  // A refusal inside a batch (a cell over the region server's size limit)
  // reaches the gateway wrapped in a retryable "retries exhausted" error:
  // the DoNotRetryIOException in its text is what decides.
  if (e.__isset.canRetry && e.canRetry && !Contains(m, "DoNotRetryIOException")) {
    return Status::Unavailable(std::move(text));
  }
  if (Contains(m, "TableNotFoundException") || Contains(m, "NamespaceNotFoundException")) {
    return Status::NotFound(std::move(text));
  }
  if (Contains(m, "TableExistsException") || Contains(m, "NamespaceExistException")) {
    return Status::FailedPrecondition(std::move(text));
  }
  return Status::InvalidArgument(std::move(text));
}

// A TSocket that keeps the first bytes it reads, so that an answer that is
// no Thrift answer can be shown.
class RecordingSocket : public apache::thrift::transport::TSocket {
 public:
  static constexpr size_t kKept = 48;
  RecordingSocket(const std::string& host, int port, std::shared_ptr<std::string> kept)
      : TSocket(host, port), kept_(std::move(kept)) {}
  uint32_t read(uint8_t* buf, uint32_t len) override {
    const uint32_t n = TSocket::read(buf, len);
    if (kept_->size() < kKept) {
      kept_->append(reinterpret_cast<const char*>(buf), std::min<size_t>(n, kKept - kept_->size()));
    }
    return n;
  }

 private:
  std::shared_ptr<std::string> kept_;
};

// `bytes` with printable ASCII as it is and the rest as \xNN.
std::string Printable(const std::string& bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// What widen needs, for the messages about a peer that is something else.
constexpr const char* kNeeds =
    "widen needs an HBase Thrift2 gateway in its default wire format, binary protocol "
    "without framing (hbase thrift2 start -p PORT, without -f/--framed or -c/--compact)";

}  // namespace

HBaseConnection::HBaseConnection(std::string host, int port, const ConnectionOptions& options)
    : host_(std::move(host)),
      port_(port),
      options_(options),
      first_bytes_(std::make_shared<std::string>()) {
  // Thrift prints its own diagnostics to stderr; every error reaches the
  // caller as a Status instead.
  static std::once_flag quiet;
  std::call_once(quiet, [] { apache::thrift::GlobalOutput.setOutputFunction([](const char*) {}); });
}

HBaseConnection::~HBaseConnection() { Disconnect(); }

std::string HBaseConnection::address() const { return host_ + ":" + std::to_string(port_); }

void HBaseConnection::Disconnect() {
  if (transport_ != nullptr) {
    try {
      transport_->close();
    } catch (const std::exception&) {
      // Closing a broken socket may throw; it is closed either way.
    }
  }
  client_.reset();
  transport_.reset();
  socket_fd_ = -1;
}

bool HBaseConnection::PeerClosed() const {
  if (socket_fd_ < 0) return false;
  pollfd p{};
  p.fd = socket_fd_;
  p.events = POLLIN;
  // Nothing is due between requests: readable means an end of stream, a
  // reset, or bytes out of step.
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

Status HBaseConnection::Connect() {
  if (client_ != nullptr && transport_ != nullptr && transport_->isOpen() && !PeerClosed()) {
    return Status::OK();
  }
  Disconnect();
  try {
    first_bytes_->clear();
    auto socket = std::make_shared<RecordingSocket>(host_, port_, first_bytes_);
    socket->setConnTimeout(options_.connect_timeout_ms);
    socket->setRecvTimeout(options_.rpc_timeout_ms);
    socket->setSendTimeout(options_.rpc_timeout_ms);
    socket->setNoDelay(true);
    auto transport = std::make_shared<apache::thrift::transport::TBufferedTransport>(socket);
    auto protocol = std::make_shared<apache::thrift::protocol::TBinaryProtocol>(transport);
    transport->open();
    socket_fd_ = static_cast<int>(socket->getSocketFD());
    transport_ = std::move(transport);
    client_ = std::make_unique<thrift2::THBaseServiceClient>(protocol);
  } catch (const std::exception& e) {
    Disconnect();
    return Status::Unavailable("cannot connect to the HBase Thrift2 gateway at " + address() +
                               ": " + e.what());
  }
  return Status::OK();
}

Status HBaseConnection::Call(const std::string& what, const Request& request) {
  WIDEN_RETURN_IF_ERROR(Connect().WithContext(what));
  try {
    request(*client_);
    return Status::OK();
  } catch (const thrift2::TIOError& e) {
    return FromIOError(e, what);
  } catch (const thrift2::TIllegalArgument& e) {
    return Status::InvalidArgument(
        what + ": HBase: " + (e.__isset.message ? FirstLine(e.message) : "illegal argument"));
  } catch (const TTransportException& e) {
    Disconnect();
    return Status::Unavailable(what + ": connection to the HBase Thrift2 gateway at " + address() +
                               " failed: " + e.what());
  } catch (const TApplicationException& e) {
    if (e.getType() == TApplicationException::INTERNAL_ERROR) {
      // An unchecked Java exception in the gateway while it handled the
      // request: the request is refused as it is (e.g. a cell over the
      // gateway's hbase.client.keyvalue.maxsize). The stream is intact.
      return Status::InvalidArgument(what + ": the HBase Thrift2 gateway at " + address() +
                                     " failed on the request (" + e.what() +
                                     "); its log names the reason");
    }
    Disconnect();
    return Status::FailedPrecondition(what + ": " + address() +
                                      " does not answer as an HBase Thrift2 gateway in binary "
                                      "protocol without framing does: " +
                                      e.what());
  } catch (const TProtocolException& e) {
    Disconnect();
    return Status::Unavailable(what + ": malformed answer from " + address() +
                               " (is it an HBase Thrift2 gateway, in binary protocol without "
                               "framing?): " +
                               e.what());
  } catch (const std::exception& e) {
    Disconnect();
    return Status::Unavailable(what + ": " + e.what());
  }
}

Status HBaseConnection::Probe(thrift2::TThriftServerType::type* type) {
  const std::string what = "opening hbase://" + address();
  constexpr int kTries = 3;
  int backoff_ms = 200;
  for (int attempt = 1;; ++attempt) {
    WIDEN_RETURN_IF_ERROR(Connect().WithContext(what));
    try {
      *type = client_->getThriftServerType();
      return Status::OK();
    } catch (const TTransportException& e) {
      const std::string got = *first_bytes_;
      Disconnect();
      if (e.getType() != TTransportException::END_OF_FILE) {
        // Timed out, reset, interrupted: the server may be there and busy.
        return Status::Unavailable(what + ": connection to " + address() + " failed: " + e.what());
      }
      if (!got.empty()) {
        // Bytes that end no Thrift message ("MaxMessageSize reached": their
        // first four read as a length).
        std::string hint;
        if (got.size() > 5 && got[3] == '\0' && got[4] == '\x0a') {
          hint = " (a MySQL or MariaDB server's greeting)";
        }
        return Status::FailedPrecondition(what + ": " + address() +
                                          " answered, but not as an HBase Thrift2 gateway: it "
                                          "sent \"" +
                                          Printable(got) + "\"" + hint + "; " + kNeeds);
      }
      if (attempt == kTries) {
        return Status::FailedPrecondition(
            what + ": " + address() + " accepted the connection and closed it without answering " +
            "widen's first request (" + std::to_string(kTries) +
            " times): it is no HBase Thrift2 gateway (a PostgreSQL or ZooKeeper port, or a "
            "framed or compact gateway, closes the connection so); " +
            kNeeds);
      }
    } catch (const TProtocolException& e) {
      const std::string got = *first_bytes_;
      Disconnect();
      return Status::FailedPrecondition(
          what + ": " + address() + " answered, but not as an HBase Thrift2 gateway (" + e.what() +
          "): it sent \"" + Printable(got) + "\"; " + kNeeds);
    } catch (const TApplicationException& e) {
      Disconnect();
      return Status::FailedPrecondition(what + ": " + address() +
                                        " does not answer as an HBase Thrift2 gateway (" +
                                        e.what() + "); " + kNeeds);
    } catch (const std::exception& e) {
      Disconnect();
      return Status::Unavailable(what + ": " + e.what());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
    backoff_ms *= 2;
  }
}

Status HBaseConnection::Retry(const std::string& what, const Request& request, uint64_t* retries) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.retry_budget_ms);
  int backoff_ms = options_.first_backoff_ms;
  for (;;) {
    Status s = Call(what, request);
    if (s.code() != StatusCode::kUnavailable) return s;
    if (std::chrono::steady_clock::now() + std::chrono::milliseconds(backoff_ms) > deadline) {
      return Status::Unavailable(s.message() + " (gave up after retrying for " +
                                 std::to_string(options_.retry_budget_ms / 1000) + " s)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
    backoff_ms = std::min(backoff_ms * 2, options_.max_backoff_ms);
    if (retries != nullptr) ++*retries;
  }
}

}  // namespace hbase_internal
}  // namespace widen
