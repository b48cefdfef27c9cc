#include "common/table_descriptor.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "common/family_options.h"

namespace widen {

namespace {

constexpr char kDefaultNamespace[] = "default";
// Version of the descriptor's JSON layout (the "format" field). Never change
// what version 1 means; bump it instead.
constexpr int kDescriptorFormat = 1;
// HBase keeps a family's name in one byte of every KeyValue.
constexpr size_t kMaxFamilyNameBytes = 127;

bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Whether `value` is a name in `names` (common/family_options.h).
template <typename E>
bool OneOf(const std::string& value, const NameTable<E>& names) {
  E e;
  return names.Parse(value, &e);
}

// A name as it may appear in a message: printable bytes as they are.
std::string Quoted(std::string_view name) { return "'" + ToStringBinary(name) + "'"; }

// TableName.isLegalNamespaceName: [A-Za-z0-9_]+.
Status ValidateNamespace(const std::string& ns) {
  if (ns.empty()) return Status::InvalidArgument("namespace is empty (use \"default\")");
  for (char c : ns) {
    if (!IsAsciiAlnum(c) && c != '_') {
      return Status::InvalidArgument("namespace " + Quoted(ns) + " may only contain [A-Za-z0-9_]");
    }
  }
  return Status::OK();
}

// TableName.isLegalTableQualifierName: [A-Za-z0-9_.-]+, not starting with '.' or '-'.
Status ValidateTableQualifier(const std::string& table) {
  if (table.empty()) return Status::InvalidArgument("table name is empty");
  if (table[0] == '.' || table[0] == '-') {
    return Status::InvalidArgument("table name " + Quoted(table) +
                                   " may not start with '.' or '-'");
  }
  for (char c : table) {
    if (!IsAsciiAlnum(c) && c != '_' && c != '.' && c != '-') {
      return Status::InvalidArgument("table name " + Quoted(table) +
                                     " may only contain [A-Za-z0-9_.-]");
    }
  }
  return Status::OK();
}

// ColumnFamilyDescriptorBuilder.isLegalColumnFamilyName, restricted to
// printable ASCII: no ':', '\\' or '/', not empty, not starting with '.', not
// "recovered.edits".
Status ValidateFamilyName(const std::string& name) {
  if (name.empty()) return Status::InvalidArgument("column family name is empty");
  if (name[0] == '.') {
    return Status::InvalidArgument("column family " + Quoted(name) + " may not start with '.'");
  }
  if (name.size() > kMaxFamilyNameBytes) {
    return Status::InvalidArgument("column family " + Quoted(name) + " is longer than " +
                                   std::to_string(kMaxFamilyNameBytes) + " bytes");
  }
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e) {
      return Status::InvalidArgument("column family " + Quoted(name) +
                                     " may only contain printable ASCII characters");
    }
    if (c == ':' || c == '\\' || c == '/') {
      return Status::InvalidArgument("column family " + Quoted(name) + " may not contain '" +
                                     std::string(1, c) + "'");
    }
  }
  if (name == "recovered.edits") {
    return Status::InvalidArgument("column family may not be named 'recovered.edits'");
  }
  return Status::OK();
}

Status ValidateFamilyOptions(const FamilyDescriptor& f) {
  const std::string where = "column family " + Quoted(f.name) + ": ";
  if (f.versions < 1) {
    return Status::InvalidArgument(where + "VERSIONS must be at least 1, not " +
                                   std::to_string(f.versions));
  }
  if (f.min_versions < 0 || f.min_versions > f.versions) {
    return Status::InvalidArgument(where + "MIN_VERSIONS must be between 0 and VERSIONS (" +
                                   std::to_string(f.versions) + "), not " +
                                   std::to_string(f.min_versions));
  }
  if (f.ttl_seconds < 0) {
    return Status::InvalidArgument(where + "TTL must be 0 (forever) or positive seconds, not " +
                                   std::to_string(f.ttl_seconds));
  }
  if (!OneOf(f.bloom_filter, kBloomFilterNames)) {
    return Status::InvalidArgument(where + "BLOOMFILTER '" + f.bloom_filter + "' is not one of " +
                                   kBloomFilterNames.List(", "));
  }
  if (!OneOf(f.compression, kCompressionNames)) {
    return Status::InvalidArgument(where + "COMPRESSION '" + f.compression + "' is not one of " +
                                   kCompressionNames.List(", "));
  }
  if (!OneOf(f.data_block_encoding, kDataBlockEncodingNames)) {
    return Status::InvalidArgument(where + "DATA_BLOCK_ENCODING '" + f.data_block_encoding +
                                   "' is not one of " + kDataBlockEncodingNames.List(", "));
  }
  if (f.block_size_bytes <= 0) {
    return Status::InvalidArgument(where + "BLOCKSIZE must be positive, not " +
                                   std::to_string(f.block_size_bytes));
  }
  return Status::OK();
}

using Json = nlohmann::json;

// Reads an optional member of `obj` into `*out`; false if present with another type.
bool ReadString(const Json& obj, const char* key, std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return true;
  if (!it->is_string()) return false;
  *out = it->get<std::string>();
  return true;
}

template <typename Int>
bool ReadInt(const Json& obj, const char* key, Int* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return true;
  if (!it->is_number_integer()) return false;
  const int64_t v = it->get<int64_t>();
  if (v < static_cast<int64_t>(std::numeric_limits<Int>::min()) ||
      v > static_cast<int64_t>(std::numeric_limits<Int>::max())) {
    return false;
  }
  *out = static_cast<Int>(v);
  return true;
}

bool ReadBool(const Json& obj, const char* key, bool* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return true;
  if (!it->is_boolean()) return false;
  *out = it->get<bool>();
  return true;
}

Status Malformed(const std::string& what) {
  return Status::DataLoss("malformed table descriptor: " + what);
}

Result<TableDescriptor> DecodeJson(const Json& doc) {
  if (!doc.is_object()) return Malformed("not a JSON object");
  auto format = doc.find("format");
  if (format == doc.end() || !format->is_number_integer()) {
    return Malformed("no integer \"format\" field");
  }
  if (format->get<int64_t>() != kDescriptorFormat) {
    return Status::FailedPrecondition(
        "table descriptor has format " + std::to_string(format->get<int64_t>()) +
        "; this widen reads format " + std::to_string(kDescriptorFormat));
  }
  TableDescriptor d;
  auto ns = doc.find("namespace");
  auto table = doc.find("table");
  if (ns == doc.end() || !ns->is_string()) return Malformed("no string \"namespace\" field");
  if (table == doc.end() || !table->is_string()) return Malformed("no string \"table\" field");
  d.name_space = ns->get<std::string>();
  d.table = table->get<std::string>();

  auto families = doc.find("families");
  if (families == doc.end() || !families->is_array()) {
    return Malformed("no array \"families\" field");
  }
  for (const Json& f : *families) {
    if (!f.is_object()) return Malformed("a family is not an object");
    FamilyDescriptor fd;
    auto name = f.find("name");
    if (name == f.end() || !name->is_string()) return Malformed("a family has no \"name\"");
    fd.name = name->get<std::string>();
    if (!ReadInt(f, "versions", &fd.versions) || !ReadInt(f, "min_versions", &fd.min_versions) ||
        !ReadInt(f, "ttl_seconds", &fd.ttl_seconds) ||
        !ReadString(f, "compression", &fd.compression) ||
        !ReadString(f, "bloom_filter", &fd.bloom_filter) ||
        !ReadInt(f, "block_size_bytes", &fd.block_size_bytes) ||
        !ReadBool(f, "in_memory", &fd.in_memory) ||
        !ReadString(f, "data_block_encoding", &fd.data_block_encoding)) {
      return Malformed("family '" + fd.name + "' has a field of the wrong type");
    }
    d.families.push_back(std::move(fd));
  }

  auto splits = doc.find("split_points");
  if (splits != doc.end()) {
    if (!splits->is_array()) return Malformed("\"split_points\" is not an array");
    for (const Json& s : *splits) {
      std::string bytes;
      if (!s.is_string() || !FromStringBinary(s.get<std::string>(), &bytes)) {
        return Malformed("a split point is not a string in HBase's printable form");
      }
      d.split_points.push_back(std::move(bytes));
    }
  }

  auto metadata = doc.find("metadata");
  if (metadata != doc.end()) {
    if (!metadata->is_object()) return Malformed("\"metadata\" is not an object");
    for (auto it = metadata->begin(); it != metadata->end(); ++it) {
      if (!it->is_string()) return Malformed("a metadata value is not a string");
      d.metadata[it.key()] = it->get<std::string>();
    }
  }

  Status valid = d.Validate();
  if (!valid.ok()) return Malformed(valid.message());
  return d;
}

std::string FamilyNamesOf(const TableDescriptor& d) {
  std::string out;
  for (const FamilyDescriptor& f : d.families) {
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

// The first difference between the families of two descriptors, or "".
std::string FamilyDifference(const TableDescriptor& stored, const TableDescriptor& wanted) {
  for (const FamilyDescriptor& w : wanted.families) {
    if (stored.Family(w.name) == nullptr) {
      return "column family '" + w.name + "' is not in the stored table (it has " +
             FamilyNamesOf(stored) + ")";
    }
  }
  for (const FamilyDescriptor& s : stored.families) {
    if (wanted.Family(s.name) == nullptr) {
      return "the stored table has column family '" + s.name + "', which was not requested";
    }
  }
  for (const FamilyDescriptor& w : wanted.families) {
    const FamilyDescriptor& s = *stored.Family(w.name);
    auto diff = [&](const char* option, const std::string& in_store, const std::string& asked) {
      return "column family '" + w.name + "': " + option + " is " + in_store +
             " in the stored table, " + asked + " requested";
    };
    auto b = [](bool v) { return std::string(v ? "true" : "false"); };
    if (s.versions != w.versions) {
      return diff("VERSIONS", std::to_string(s.versions), std::to_string(w.versions));
    }
    if (s.min_versions != w.min_versions) {
      return diff("MIN_VERSIONS", std::to_string(s.min_versions), std::to_string(w.min_versions));
    }
    if (s.ttl_seconds != w.ttl_seconds) {
      return diff("TTL", std::to_string(s.ttl_seconds), std::to_string(w.ttl_seconds));
    }
    if (s.compression != w.compression) return diff("COMPRESSION", s.compression, w.compression);
    if (s.bloom_filter != w.bloom_filter) {
      return diff("BLOOMFILTER", s.bloom_filter, w.bloom_filter);
    }
    if (s.block_size_bytes != w.block_size_bytes) {
      return diff("BLOCKSIZE", std::to_string(s.block_size_bytes),
                  std::to_string(w.block_size_bytes));
    }
    if (s.in_memory != w.in_memory) return diff("IN_MEMORY", b(s.in_memory), b(w.in_memory));
    if (s.data_block_encoding != w.data_block_encoding) {
      return diff("DATA_BLOCK_ENCODING", s.data_block_encoding, w.data_block_encoding);
    }
  }
  return "";
}

}  // namespace

std::string TableDescriptor::FullName() const {
  if (name_space.empty() || name_space == kDefaultNamespace) return table;
  std::string full;
  full.reserve(name_space.size() + 1 + table.size());
  full += name_space;
  full += ':';
  full += table;
  return full;
}

const FamilyDescriptor* TableDescriptor::Family(std::string_view name) const {
  for (const FamilyDescriptor& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Status TableDescriptor::Validate() const {
  WIDEN_RETURN_IF_ERROR(ValidateNamespace(name_space));
  WIDEN_RETURN_IF_ERROR(ValidateTableQualifier(table));
  const std::string where = "table " + Quoted(FullName());
  if (families.empty()) {
    return Status::InvalidArgument(where + " has no column family");
  }
  std::set<std::string_view> seen;
  for (const FamilyDescriptor& f : families) {
    WIDEN_RETURN_IF_ERROR(ValidateFamilyName(f.name).WithContext(where));
    WIDEN_RETURN_IF_ERROR(ValidateFamilyOptions(f).WithContext(where));
    if (!seen.insert(f.name).second) {
      return Status::InvalidArgument(where + ": column family " + Quoted(f.name) +
                                     " is declared twice");
    }
  }
  for (size_t i = 0; i < split_points.size(); ++i) {
    if (split_points[i].empty()) {
      return Status::InvalidArgument(where + ": split point " + std::to_string(i) + " is empty");
    }
    if (i > 0 && split_points[i - 1] >= split_points[i]) {
      return Status::InvalidArgument(where + ": split points must be strictly ascending; " +
                                     Quoted(split_points[i]) + " follows " +
                                     Quoted(split_points[i - 1]));
    }
  }
  return Status::OK();
}

std::string FamilyNames(const TableDescriptor& d) { return FamilyNamesOf(d); }

Status CheckSameTable(const TableDescriptor& stored, const TableDescriptor& wanted,
                      const std::string& where) {
  const std::string name = Quoted(wanted.FullName());
  const std::string diff = FamilyDifference(stored, wanted);
  if (!diff.empty()) {
    return Status::FailedPrecondition("table " + name + " already exists in " + where +
                                      " with other families: " + diff);
  }
  for (const auto& [key, value] : wanted.metadata) {
    if (key.rfind(kStateMetadata, 0) == 0) continue;
    auto it = stored.metadata.find(key);
    if (it != stored.metadata.end() && it->second != value) {
      return Status::FailedPrecondition("table " + name + " already exists in " + where +
                                        " with other metadata '" + key +
                                        "' (a different row key layout?): drop the table or "
                                        "write to a new one");
    }
  }
  return Status::OK();
}

void SplitTableName(std::string_view full, std::string* name_space, std::string* table) {
  const size_t colon = full.find(':');
  if (colon == std::string_view::npos) {
    name_space->assign(kDefaultNamespace);
    table->assign(full.data(), full.size());
  } else {
    name_space->assign(full.data(), colon);
    table->assign(full.data() + colon + 1, full.size() - colon - 1);
  }
}

std::string CanonicalTableName(std::string_view full_name) {
  TableDescriptor d;
  SplitTableName(full_name, &d.name_space, &d.table);
  return d.FullName();
}

std::string EncodeTableDescriptor(const TableDescriptor& d) {
  Json doc = Json::object();
  doc["format"] = kDescriptorFormat;
  doc["namespace"] = d.name_space;
  doc["table"] = d.table;
  Json families = Json::array();
  for (const FamilyDescriptor& f : d.families) {
    Json jf = Json::object();
    jf["name"] = f.name;
    jf["versions"] = f.versions;
    jf["min_versions"] = f.min_versions;
    jf["ttl_seconds"] = f.ttl_seconds;
    jf["compression"] = f.compression;
    jf["bloom_filter"] = f.bloom_filter;
    jf["block_size_bytes"] = f.block_size_bytes;
    jf["in_memory"] = f.in_memory;
    jf["data_block_encoding"] = f.data_block_encoding;
    families.push_back(std::move(jf));
  }
  doc["families"] = std::move(families);
  Json splits = Json::array();
  for (const std::string& s : d.split_points) splits.push_back(ToStringBinary(s));
  doc["split_points"] = std::move(splits);
  Json metadata = Json::object();
  for (const auto& [k, v] : d.metadata) metadata[k] = v;
  doc["metadata"] = std::move(metadata);
  // Names of a valid descriptor are ASCII; `replace` keeps dump() from throwing
  // on the bytes of an invalid one.
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<TableDescriptor> DecodeTableDescriptor(std::string_view json) {
  try {
    Json doc = Json::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return Malformed("not valid JSON");
    return DecodeJson(doc);
  } catch (const std::exception& e) {
    return Malformed(e.what());
  }
}

}  // namespace widen
