// Status and Result<T>: how every widen function reports an expected failure.
//
// A Status is either OK or carries a code and a one-line message meant for the
// user (it names the file:line:col, table, column or row key involved). Codes
// follow Abseil's guidance:
//   kInvalidArgument    bad mapping or bad data (not retryable as is)
//   kNotFound           a named table, column, row or file does not exist
//   kUnavailable        retryable I/O: a refused connection, a server gone away
//   kFailedPrecondition state that must be fixed first (an incompatible store)
//   kAborted            a resource is held by another process (a store's lock),
//                       or a compare-and-set lost to another writer (a table
//                       state): retry the whole operation once it is released
//                       (after reading the state again)
//   kDataLoss           corruption in persisted bytes
//   kLocalIo            a file or directory on this machine could not be
//                       written or read (a full disk or quota, an I/O error,
//                       a read-only file system, a missing folder); the
//                       message names the path and the reason (strerror)
//   kUnauthenticated    the server refused the credentials
//   kPermissionDenied   the user lacks a privilege the operation needs
//   kInternal           a bug in widen
// Result<T> holds a T or a non-OK Status (Arrow's arrow::Result).
//
// Thread safety: values; safe to copy and to read from several threads.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace widen {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kUnavailable,
  kFailedPrecondition,
  kDataLoss,
  kUnauthenticated,
  kPermissionDenied,
  kInternal,
  kCancelled,
  kAborted,
  kLocalIo,
};

/// Name of a code as printed in messages ("InvalidArgument").
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
  static Status Unauthenticated(std::string m) {
    return {StatusCode::kUnauthenticated, std::move(m)};
  }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
  static Status LocalIo(std::string m) { return {StatusCode::kLocalIo, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  /// "InvalidArgument: message" (or "OK").
  std::string ToString() const;

  /// Returns a copy whose message is `context + ": " + message()`; OK stays OK.
  Status WithContext(std::string_view context) const;

  /// Aborts with the message if not OK; for tests and programmer errors only.
  void Check() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

/// LocalIo with the message `what + ": " + strerror(err)`, e.g.
/// LocalIoError("cannot write '/data/x.log'", ENOSPC) gives "cannot write
/// '/data/x.log': No space left on device". `err` is an errno value.
Status LocalIoError(std::string_view what, int err);

/// A value of type T or an error Status. REQUIRES: the Status given is not OK.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  /// REQUIRES: ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  /// Returns the value, aborting on error; for tests only.
  T ValueOrDie() && {
    status().Check();
    return std::get<T>(std::move(v_));
  }

 private:
  std::variant<T, Status> v_;
};

}  // namespace widen

#define WIDEN_CONCAT_INNER(a, b) a##b
#define WIDEN_CONCAT(a, b) WIDEN_CONCAT_INNER(a, b)

/// Returns the Status from the enclosing function if `expr` is not OK.
#define WIDEN_RETURN_IF_ERROR(expr)        \
  do {                                     \
    ::widen::Status _widen_st = (expr);    \
    if (!_widen_st.ok()) return _widen_st; \
  } while (0)

#define WIDEN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

/// `WIDEN_ASSIGN_OR_RETURN(auto x, MakeX());` declares x from a Result or returns its error.
#define WIDEN_ASSIGN_OR_RETURN(lhs, expr) \
  WIDEN_ASSIGN_OR_RETURN_IMPL(WIDEN_CONCAT(_widen_r_, __LINE__), lhs, expr)
