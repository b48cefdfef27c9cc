// The widen subcommands, each a function from parsed options to an exit code.
// They print results to stdout, progress and errors to stderr.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace widen {

struct MigrateOptions {
  std::string mapping_path;
  std::string source_url;               // overrides the mapping's source when set
  std::string target_url;               // overrides the mapping's target when set
  std::string only_table;               // run one target table only (empty = all)
  std::string rejects_path;             // write rejected rows here (JSON lines) instead of failing
  std::optional<int64_t> timestamp_ms;  // cell timestamp override (unset = mapping or run start)
  bool quiet = false;                   // no progress line and no summary
  int fetch_rows = 5000;
};

struct ReadOptionsCli {
  std::string mapping_path;  // to find the target and decode row keys
  std::string target_url;
  std::string table;
  std::string row;     // get: the row key (HBase printable form, \xNN escapes)
  std::string prefix;  // scan: row prefix (printable form)
  std::string start_row, stop_row;
  uint64_t limit = 0;
  int versions = 1;
  bool decode = false;  // show row keys decoded into named parts (needs -m)
};

int RunMigrate(const MigrateOptions& options);
int RunScan(const ReadOptionsCli& options);
int RunGet(const ReadOptionsCli& options);

}  // namespace widen
