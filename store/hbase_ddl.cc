#include "store/hbase_ddl.h"

#include <set>

#include "common/bytes.h"

namespace widen {

namespace {

// HConstants.FOREVER: the TTL HBase gives a family that never expires.
constexpr int64_t kForever = 2147483647;

std::string Family(const FamilyDescriptor& f) {
  std::string s = "{NAME => " + RubyQuote(f.name);
  s += ", VERSIONS => " + std::to_string(f.versions);
  s += ", MIN_VERSIONS => " + std::to_string(f.min_versions);
  s += ", TTL => " + std::to_string(f.ttl_seconds > 0 ? f.ttl_seconds : kForever);
  s += ", COMPRESSION => " + RubyQuote(f.compression);
  s += ", BLOOMFILTER => " + RubyQuote(f.bloom_filter);
  s += ", BLOCKSIZE => " + std::to_string(f.block_size_bytes);
  s += ", IN_MEMORY => ";
  s += f.in_memory ? "'true'" : "'false'";
  s += ", DATA_BLOCK_ENCODING => " + RubyQuote(f.data_block_encoding);
  s += "}";
  return s;
}

}  // namespace

std::string RubyQuote(std::string_view s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\\' || c == '\'') q.push_back('\\');
    q.push_back(c);
  }
  q.push_back('\'');
  return q;
}

std::string RubyBinaryLiteral(std::string_view bytes) {
  std::string q = "'";
  for (char c : ToStringBinary(bytes)) {
    if (c == '\'') {
      q += "\\x27";  // toBytesBinary decodes it; Ruby keeps it as written
    } else {
      q.push_back(c);
    }
  }
  q.push_back('\'');
  return q;
}

std::string HBaseShellCreate(const TableDescriptor& d, const HBaseDdlOptions& o) {
  std::string s = "create " + RubyQuote(d.FullName());
  for (const auto& f : d.families) s += ",\n  " + Family(f);
  std::string table_options;
  if (!d.split_points.empty()) {
    table_options += "SPLITS => [";
    for (size_t i = 0; i < d.split_points.size(); ++i) {
      if (i > 0) table_options += ", ";
      table_options += RubyBinaryLiteral(d.split_points[i]);
    }
    table_options += "]";
  }
  if (o.metadata && !d.metadata.empty()) {
    if (!table_options.empty()) table_options += ",\n   ";
    table_options += "METADATA => {";
    bool first = true;
    for (const auto& [k, v] : d.metadata) {
      if (!first) table_options += ", ";
      first = false;
      table_options += RubyQuote(k) + " => " + RubyQuote(v);
    }
    table_options += "}";
  }
  if (!table_options.empty()) s += ",\n  {" + table_options + "}";
  return s + "\n";
}

std::string HBaseShellDdl(const std::vector<TableDescriptor>& tables, const HBaseDdlOptions& o) {
  std::string s;
  std::set<std::string> namespaces;
  if (o.create_namespaces) {
    for (const auto& d : tables) {
      if (d.name_space != "default" && namespaces.insert(d.name_space).second) {
        s += "create_namespace " + RubyQuote(d.name_space) + "\n";
      }
    }
  }
  for (const auto& d : tables) s += HBaseShellCreate(d, o);
  return s;
}

}  // namespace widen
