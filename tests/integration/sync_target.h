// Where the sync tests write: the embedded store in a temp dir, or the test
// HBase (scripts/with-servers.sh --hbase) with a namespace of the test's
// own, so that every change sequence runs against both targets. The
// reference a synced table is compared with is a fresh migrate of the
// source state at that point into a new embedded store (the same cells a
// migrate into HBase writes: hbase_equivalence_test.cc); into HBase the
// last comparison of a test is made again against a fresh migrate into the
// same HBase (another namespace, dropped once compared), by
// ExpectLastInTheTarget — a table created in HBase costs about a second, so
// one per test. The designs name their tables in namespace `s`; Mapping()
// moves them to the target's namespace.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/integration/test_env.h"
#ifdef WIDEN_WITH_HBASE
#include "tests/integration/hbase_env.h"
#endif

namespace widen::testing {

enum class Target { kEmbedded, kHBase };

inline const char* TargetName(Target t) { return t == Target::kEmbedded ? "" : "HBase"; }

class SyncTarget {
 public:
  /// Runs widen with the given arguments (the caller adds the source).
  using Widen = std::function<CommandResult(const std::string& args)>;

  /// The target of kind `t`; temp files under `dir`. For HBase without
  /// WIDEN_TEST_HBASE_URL: a failure under CI, else skipped() is true.
  SyncTarget(Target t, const std::string& dir) : target_(t), dir_(dir) {
    if (t == Target::kEmbedded) {
      url_ = "leveldb:" + dir + "/synced";
      ns_ = "s";
      return;
    }
#ifdef WIDEN_WITH_HBASE
    url_ = HBaseUrl();
#endif
    if (url_.empty()) {
      if (InCi()) ADD_FAILURE() << "WIDEN_TEST_HBASE_URL is not set under CI";
      skipped_ = true;
      return;
    }
    static int count = 0;
    ns_ = fmt::format("wsync{}x{}", UniqueTag(), ++count);
  }

  ~SyncTarget() { DropNamespace(ns_); }

  bool skipped() const { return skipped_; }
  bool hbase() const { return target_ == Target::kHBase; }
  /// The store URL the synced tables are in.
  const std::string& url() const { return url_; }
  /// Table `name` of the design ("s:orders") in the target.
  std::string Table(const std::string& name) const { return Moved(name, ns_); }
  /// The design's text with its tables ("name: s:...") in the target.
  std::string Mapping(const std::string& text) const { return MovedText(text, ns_); }

  /// Migrates `mapping_text` (the design, tables in `s`) into a fresh
  /// embedded store with `--timestamp-ms timestamp_ms` (and `extra_args`),
  /// and expects each of `tables` ("s:orders") to hold cell by cell, every
  /// version, what the synced table holds. Remembered for
  /// ExpectLastInTheTarget.
  void ExpectSameAsAFreshMigrate(const Widen& widen, const std::string& mapping_text,
                                 const std::vector<std::string>& tables, int64_t timestamp_ms,
                                 const std::string& extra_args = "") {
    last_ = Last{widen, mapping_text, tables, timestamp_ms, extra_args};
    Compare(*last_, /*in_target=*/false);
  }

  /// Into HBase: the last ExpectSameAsAFreshMigrate again, against a fresh
  /// migrate into HBase (of the source as it is now: call it before the
  /// source changes again, e.g. in TearDown). Nothing for the embedded
  /// store, or when there was none.
  void ExpectLastInTheTarget() {
    if (hbase() && last_) Compare(*last_, /*in_target=*/true);
  }

 private:
  struct Last {
    Widen widen;
    std::string mapping_text;
    std::vector<std::string> tables;
    int64_t timestamp_ms;
    std::string extra_args;
  };

  void Compare(const Last& l, bool in_target) {
    const Widen& widen = l.widen;
    const std::string& mapping_text = l.mapping_text;
    const std::vector<std::string>& tables = l.tables;
    const int64_t timestamp_ms = l.timestamp_ms;
    const std::string& extra_args = l.extra_args;
    ++fresh_count_;
    const bool in_hbase = in_target && hbase();
    const std::string fresh_ns = in_hbase ? fmt::format("{}f{}", ns_, fresh_count_) : "s";
    const std::string fresh_url =
        in_hbase ? url_ : fmt::format("leveldb:{}/fresh{}", dir_, fresh_count_);
    const std::string mapping = fmt::format("{}/fresh{}.yaml", dir_, fresh_count_);
    {
      std::FILE* f = std::fopen(mapping.c_str(), "w");
      ASSERT_NE(f, nullptr);
      const std::string text = MovedText(mapping_text, fresh_ns);
      std::fwrite(text.data(), 1, text.size(), f);
      std::fclose(f);
    }
    CommandResult r =
        widen(fmt::format("migrate -q -m {} --target {} --timestamp-ms {} {}", ShellQuote(mapping),
                          ShellQuote(fresh_url), timestamp_ms, extra_args));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (const std::string& table : tables) {
      SCOPED_TRACE(table);
      const std::vector<CellRecord> want = ReadCells(fresh_url, Moved(table, fresh_ns), 1000);
      const std::vector<CellRecord> got = ReadCells(url_, Table(table), 1000);
      ASSERT_FALSE(want.empty());
      EXPECT_EQ(got.size(), want.size());
      for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
        if (got[i].row != want[i].row || got[i].column != want[i].column ||
            got[i].timestamp_ms != want[i].timestamp_ms || got[i].value != want[i].value) {
          ADD_FAILURE() << "cell " << i << ": synced " << got[i].row << " " << got[i].column << " @"
                        << got[i].timestamp_ms << " = " << got[i].value << "; fresh " << want[i].row
                        << " " << want[i].column << " @" << want[i].timestamp_ms << " = "
                        << want[i].value;
          break;
        }
      }
    }
    if (in_hbase) DropNamespace(fresh_ns);
  }

  static std::string Moved(const std::string& name, const std::string& ns) {
    return name.rfind("s:", 0) == 0 ? ns + name.substr(1) : name;
  }
  static std::string MovedText(std::string text, const std::string& ns) {
    const std::string from = "name: s:", to = "name: " + ns + ":";
    for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) {
      text.replace(at, from.size(), to);
    }
    return text;
  }

  // Drops the tables of HBase namespace `ns` and the namespace, if any.
  void DropNamespace(const std::string& ns) {
#ifdef WIDEN_WITH_HBASE
    if (!hbase() || url_.empty()) return;
    try {
      RawHBase hbase(url_);
      std::vector<thrift2::TNamespaceDescriptor> all;
      hbase->listNamespaceDescriptors(all);
      bool found = false;
      for (const auto& d : all) found = found || d.name == ns;
      if (!found) return;
      std::vector<thrift2::TTableName> tables;
      hbase->getTableNamesByNamespace(tables, ns);
      for (const auto& t : tables) hbase.DropTable(ns + ":" + t.qualifier);
      hbase->deleteNamespace(ns);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "dropping HBase namespace " << ns << ": " << e.what();
    }
#else
    (void)ns;
#endif
  }

  const Target target_;
  const std::string dir_;
  std::string url_, ns_;
  bool skipped_ = false;
  int fresh_count_ = 0;
  std::optional<Last> last_;
};

}  // namespace widen::testing
