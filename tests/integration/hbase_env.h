// Test helpers for the HBase that scripts/with-servers.sh --hbase starts:
// its URL from the environment, and a raw client of its Thrift2 gateway made
// of the generated Thrift code only (none of widen's HBase code), so tests
// check tables through HBase's own view of them and can drop what they made.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSocket.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "THBaseService.h"

namespace widen::testing {

namespace thrift2 = ::apache::hadoop::hbase::thrift2;

/// WIDEN_TEST_HBASE_URL (hbase://127.0.0.1:PORT), or "" when unset; callers
/// use WIDEN_REQUIRE_HBASE.
/// A tag for the names of this process's HBase namespaces and tables:
/// its pid and a random part, fixed for the process. The pid alone comes
/// back in a long test run (pid_max is 32768 here and there), and what a
/// run records beside its tables (widen:state, widen:sync) outlives the
/// namespace a test drops: a later test with the same names would start
/// from an earlier one's state.
inline const std::string& UniqueTag() {
  static const std::string tag = [] {
    std::random_device rd;
    char hex[9];
    std::snprintf(hex, sizeof(hex), "%08x", rd());
    return std::to_string(getpid()) + "r" + hex;
  }();
  return tag;
}

inline std::string HBaseUrl() {
  const char* v = std::getenv("WIDEN_TEST_HBASE_URL");
  return v == nullptr ? "" : v;
}

/// The test gateway's idle timeout (WIDEN_TEST_HBASE_IDLE_TIMEOUT_MS; HBase's
/// default 60000 when unset).
inline int HBaseIdleTimeoutMs() {
  const char* v = std::getenv("WIDEN_TEST_HBASE_IDLE_TIMEOUT_MS");
  return v == nullptr ? 60000 : std::atoi(v);
}

/// A connection to the gateway of `url` through the generated client alone.
/// Throws what Thrift throws (a test failure).
class RawHBase {
 public:
  explicit RawHBase(const std::string& url) {
    const std::string hostport = url.substr(url.find("//") + 2);
    const size_t colon = hostport.rfind(':');
    socket_ = std::make_shared<apache::thrift::transport::TSocket>(
        hostport.substr(0, colon), std::stoi(hostport.substr(colon + 1)));
    socket_->setRecvTimeout(120000);
    transport_ = std::make_shared<apache::thrift::transport::TBufferedTransport>(socket_);
    client_ = std::make_unique<thrift2::THBaseServiceClient>(
        std::make_shared<apache::thrift::protocol::TBinaryProtocol>(transport_));
    transport_->open();
  }
  ~RawHBase() {
    try {
      transport_->close();
    } catch (...) {
    }
  }

  thrift2::THBaseServiceClient* operator->() { return client_.get(); }

  static thrift2::TTableName Name(const std::string& full) {
    thrift2::TTableName t;
    const size_t colon = full.find(':');
    t.__set_ns(colon == std::string::npos ? "default" : full.substr(0, colon));
    t.__set_qualifier(colon == std::string::npos ? full : full.substr(colon + 1));
    return t;
  }

  /// Disables and deletes the table if it exists (also when its namespace
  /// does not).
  void DropTable(const std::string& full) {
    const thrift2::TTableName t = Name(full);
    if (!TableExists(full)) return;
    if (client_->isTableEnabled(t)) client_->disableTable(t);
    client_->deleteTable(t);
  }

  /// Whether the table exists; false also when its namespace does not (the
  /// gateway then fails the call).
  bool TableExists(const std::string& full) {
    std::vector<std::string> namespaces;
    client_->listNamespaces(namespaces);
    const thrift2::TTableName t = Name(full);
    if (std::find(namespaces.begin(), namespaces.end(), t.ns) == namespaces.end()) return false;
    return client_->tableExists(t);
  }

  /// HBase's descriptor of the table.
  thrift2::TTableDescriptor Describe(const std::string& full) {
    thrift2::TTableDescriptor d;
    client_->getTableDescriptor(d, Name(full));
    return d;
  }

  /// The start keys of the table's regions, ascending, the first ("") left out.
  std::vector<std::string> RegionStartKeys(const std::string& full) {
    std::vector<thrift2::THRegionLocation> regions;
    client_->getAllRegionLocations(regions, full);
    std::vector<std::string> keys;
    for (const auto& r : regions) {
      if (!r.regionInfo.startKey.empty()) keys.push_back(r.regionInfo.startKey);
    }
    std::sort(keys.begin(), keys.end());
    return keys;
  }

 private:
  std::shared_ptr<apache::thrift::transport::TSocket> socket_;
  std::shared_ptr<apache::thrift::transport::TTransport> transport_;
  std::unique_ptr<thrift2::THBaseServiceClient> client_;
};

/// A copy of the mapping at `path`, written into folder `dir` under the same
/// file name, whose target tables' namespaces start with `prefix`
/// (`- name: music:artists` becomes `- name: PREFIXmusic:artists`): tests
/// that run at the same time against the one HBase then write distinct
/// tables. Returns the copy's path; `tables`, if given, gets the new names.
inline std::string PrefixedMapping(const std::string& path, const std::string& prefix,
                                   const std::string& dir,
                                   std::vector<std::string>* tables = nullptr) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::regex name(R"(^(\s*- name: )([A-Za-z0-9_]+):([A-Za-z0-9_.-]+))");
  std::string out, line;
  std::istringstream lines(text.str());
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, name)) {
      const std::string table = prefix + m[2].str() + ":" + m[3].str();
      if (tables != nullptr) tables->push_back(table);
      line = m[1].str() + table + m.suffix().str();
    }
    out += line + "\n";
  }
  const std::string copy = dir + "/" + std::filesystem::path(path).filename().string();
  std::ofstream(copy) << out;
  return copy;
}

}  // namespace widen::testing

#define WIDEN_REQUIRE_HBASE(url)                                                          \
  std::string url = ::widen::testing::HBaseUrl();                                         \
  if (url.empty()) {                                                                      \
    if (std::getenv("CI") != nullptr && std::string(std::getenv("CI")) == "true")         \
      FAIL() << "WIDEN_TEST_HBASE_URL is not set under CI";                               \
    GTEST_SKIP() << "WIDEN_TEST_HBASE_URL not set (run through scripts/with-servers.sh)"; \
  }
