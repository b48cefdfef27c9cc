#include "extract/pg_copy_internal.h"

#include <poll.h>

#include <cerrno>
#include <cstring>

#include "extract/server_watch.h"

namespace widen::pg_internal {

namespace {

int OctalDigit(char c) { return c >= '0' && c <= '7' ? c - '0' : -1; }

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Unescapes one field's text (it holds a backslash) into *out.
bool Unescape(std::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (++i == in.size()) return false;
    const char e = in[i];
    switch (e) {
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'v':
        out->push_back('\v');
        break;
      case 'x': {
        int v = i + 1 < in.size() ? HexDigit(in[i + 1]) : -1;
        if (v < 0) {
          out->push_back('x');  // `\x` without digits is an x
          break;
        }
        ++i;
        if (i + 1 < in.size() && HexDigit(in[i + 1]) >= 0) v = v * 16 + HexDigit(in[++i]);
        out->push_back(static_cast<char>(v));
        break;
      }
      default:
        if (OctalDigit(e) >= 0) {
          int v = OctalDigit(e);
          for (int k = 0; k < 2 && i + 1 < in.size() && OctalDigit(in[i + 1]) >= 0; ++k) {
            v = v * 8 + OctalDigit(in[++i]);
          }
          out->push_back(static_cast<char>(v & 0xff));
        } else {
          out->push_back(e);
        }
    }
  }
  return true;
}

}  // namespace

bool SplitCopyRow(std::string_view line, std::vector<std::string_view>* fields,
                  std::vector<bool>* nulls, std::vector<std::string>* scratch) {
  size_t n = 0;
  size_t start = 0;
  for (;;) {
    const void* tab = std::memchr(line.data() + start, '\t', line.size() - start);
    const size_t end = tab == nullptr
                           ? line.size()
                           : static_cast<size_t>(static_cast<const char*>(tab) - line.data());
    if (fields->size() <= n) {
      fields->resize(n + 1);
      nulls->resize(n + 1);
      scratch->resize(n + 1);
    }
    const std::string_view f = line.substr(start, end - start);
    if (f.size() == 2 && f[0] == '\\' && f[1] == 'N') {
      (*nulls)[n] = true;
      (*fields)[n] = std::string_view();
    } else if (std::memchr(f.data(), '\\', f.size()) == nullptr) {
      (*nulls)[n] = false;
      (*fields)[n] = f;
    } else {
      (*nulls)[n] = false;
      if (!Unescape(f, &(*scratch)[n])) return false;
      (*fields)[n] = (*scratch)[n];
    }
    ++n;
    if (tab == nullptr) break;
    start = end + 1;
  }
  fields->resize(n);
  nulls->resize(n);
  if (scratch->size() < n) scratch->resize(n);
  return true;
}

CopyReader::~CopyReader() {
  if (thread_.joinable()) {
    bool done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      done = done_;
      cv_.notify_all();
    }
    if (!done && cancel_ != nullptr) {
      // The server ends the COPY with an error, which wakes the thread's wait.
      char err[256];
      (void)PQcancel(cancel_, err, sizeof err);
    }
    thread_.join();
  }
  if (cancel_ != nullptr) PQfreeCancel(cancel_);
}

namespace {

// The server's error in `r` (may be null) as an Outcome's fields.
void TakeError(PGconn* conn, PGresult* r, std::string* sqlstate, std::string* message) {
  if (r != nullptr) {
    const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    if (s != nullptr && sqlstate->empty()) *sqlstate = s;
    const char* m = PQresultErrorMessage(r);
    if (m != nullptr && *m != '\0' && message->empty()) *message = m;
  }
  if (message->empty()) {
    const char* m = PQerrorMessage(conn);
    *message = m != nullptr ? m : "";
  }
}

}  // namespace

bool CopyReader::Start(const std::string& sql) {
  ServerWatch::Scope wait(watch_);
  if (PQsendQueryParams(conn_, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0) == 0) {
    TakeError(conn_, nullptr, &outcome_.sqlstate, &outcome_.message);
    return false;
  }
  PGresult* r = PQgetResult(conn_);
  if (r != nullptr && PQresultStatus(r) == PGRES_COPY_OUT) {
    PQclear(r);
    cancel_ = PQgetCancel(conn_);
    thread_ = std::thread([this] { Run(); });
    return true;
  }
  TakeError(conn_, r, &outcome_.sqlstate, &outcome_.message);
  PQclear(r);
  while ((r = PQgetResult(conn_)) != nullptr) PQclear(r);
  outcome_.usable = false;  // the transaction is aborted
  outcome_.lost = PQstatus(conn_) != CONNECTION_OK;
  return false;
}

bool CopyReader::Push(std::string* chunk) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return queue_.size() < kQueuedChunks || stop_; });
  if (stop_) return false;
  queue_.push_back(std::move(*chunk));
  if (!spare_.empty()) {
    *chunk = std::move(spare_.back());
    spare_.pop_back();
  } else {
    *chunk = std::string();
    chunk->reserve(kChunkBytes + (64 << 10));
  }
  cv_.notify_all();
  return true;
}

void CopyReader::Run() {
  std::string chunk;
  chunk.reserve(kChunkBytes + (64 << 10));
  bool copy_done = false;
  bool stopped = false;
  for (;;) {
    char* buf = nullptr;
    const int n = PQgetCopyData(conn_, &buf, /*async=*/1);
    if (n > 0) {
      chunk.append(buf, static_cast<size_t>(n));
      PQfreemem(buf);
      if (chunk.size() >= kChunkBytes && !Push(&chunk)) {
        stopped = true;
        break;
      }
      continue;
    }
    if (n == -1) {
      copy_done = true;
      break;
    }
    if (n != 0) break;  // -2: an error; the result says which
    // Nothing buffered: wait for the server (one Scope for the whole wait,
    // so that the watch's read timeout counts from the last row).
    bool readable = false;
    {
      ServerWatch::Scope wait(watch_);
      while (!readable) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          if (stop_) break;
        }
        pollfd p{PQsocket(conn_), POLLIN, 0};
        const int r = poll(&p, 1, 1000);
        if (r < 0 && errno != EINTR) break;
        readable = r > 0;
      }
    }
    if (!readable) {
      std::lock_guard<std::mutex> lock(mu_);
      stopped = stop_;
      if (stopped) break;
    }
    if (PQconsumeInput(conn_) == 0) break;  // the connection failed
  }
  if (!stopped && !chunk.empty()) stopped = !Push(&chunk);
  Finish(copy_done && !stopped);
}

void CopyReader::Finish(bool copy_done) {
  Outcome o;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) {
      // The consumer is gone: the connection is dropped, no result awaited.
      done_ = true;
      cv_.notify_all();
      return;
    }
  }
  {
    ServerWatch::Scope wait(watch_);
    PGresult* r;
    o.ok = copy_done;
    while ((r = PQgetResult(conn_)) != nullptr) {
      if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        o.ok = false;
        TakeError(conn_, r, &o.sqlstate, &o.message);
      }
      PQclear(r);
      if (PQstatus(conn_) != CONNECTION_OK) break;
    }
    if (!o.ok && o.message.empty()) TakeError(conn_, nullptr, &o.sqlstate, &o.message);
    o.lost = PQstatus(conn_) != CONNECTION_OK;
    o.usable =
        o.ok && PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) == PQTRANS_INTRANS;
  }
  std::lock_guard<std::mutex> lock(mu_);
  outcome_ = std::move(o);
  done_ = true;
  cv_.notify_all();
}

bool CopyReader::NextChunk(std::string* chunk) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !queue_.empty() || done_; });
  if (queue_.empty()) return false;
  chunk->clear();
  if (spare_.size() < 2 && chunk->capacity() > 0) spare_.push_back(std::move(*chunk));
  *chunk = std::move(queue_.front());
  queue_.pop_front();
  cv_.notify_all();
  return true;
}

}  // namespace widen::pg_internal
