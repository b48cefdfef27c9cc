#include "store/leveldb_files_internal.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>

namespace widen {
namespace leveldb_files {

namespace {

// A read of `path` through a stream failed: LocalIo with errno's reason
// when the stream left one (callers clear errno before opening).
Status CannotRead(const std::string& path) {
  const int err = errno;
  if (err != 0) return LocalIoError("cannot read '" + path + "'", err);
  return Status::LocalIo("cannot read '" + path + "'");
}

// The reflected Castagnoli polynomial.
constexpr uint32_t kCastagnoli = 0x82F63B78u;

constexpr std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kCastagnoli : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kCrcTable = MakeCrcTable();

// LevelDB's log format (doc/log_format.md).
constexpr size_t kLogBlockBytes = 32768;
constexpr size_t kLogHeaderBytes = 7;
constexpr uint32_t kCrcMaskDelta = 0xa282ead8u;

uint32_t UnmaskCrc(uint32_t masked) {
  const uint32_t rot = masked - kCrcMaskDelta;
  return (rot >> 17) | (rot << 15);
}

struct RecordHeader {
  uint32_t masked_crc;
  size_t length;
  int type;
};

// The log record header at `offset` of `bytes`. REQUIRES: kLogHeaderBytes
// bytes from `offset`.
RecordHeader ParseRecordHeader(std::string_view bytes, size_t offset) {
  const auto* h = reinterpret_cast<const unsigned char*>(bytes.data() + offset);
  return RecordHeader{h[0] | (h[1] << 8) | (h[2] << 16) | (uint32_t{h[3]} << 24),
                      static_cast<size_t>(h[4] | (h[5] << 8)), h[6]};
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Reads `key` escaped as LevelDB's EscapeString writes it (printable bytes
// as they are, others as \xNN).
std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x' &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 3]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 2, 2)), nullptr, 16)));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// `text` is "'KEY' @ SEQ : TYPE"; sets *key. False when it is not.
bool ParseInternalKeyText(std::string_view text, std::string* key) {
  if (text.size() < 2 || text.front() != '\'') return false;
  const size_t at = text.rfind("' @ ");
  if (at == std::string_view::npos || at == 0) return false;
  std::string_view rest = text.substr(at + 4);
  const size_t colon = rest.find(" : ");
  if (colon == std::string_view::npos) return false;
  if (!AllDigits(rest.substr(0, colon)) || !AllDigits(rest.substr(colon + 3))) return false;
  *key = Unescape(text.substr(1, at - 1));
  return true;
}

}  // namespace

FileKind KindOf(std::string_view name) {
  if (name == "CURRENT") return FileKind::kCurrent;
  if (name.substr(0, 9) == "MANIFEST-" && AllDigits(name.substr(9))) return FileKind::kManifest;
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || !AllDigits(name.substr(0, dot))) return FileKind::kOther;
  const std::string_view ext = name.substr(dot + 1);
  if (ext == "log") return FileKind::kLog;
  if (ext == "ldb" || ext == "sst") return FileKind::kTable;
  return FileKind::kOther;
}

uint64_t NumberOf(std::string_view name) {
  std::string_view digits;
  switch (KindOf(name)) {
    case FileKind::kManifest:
      digits = name.substr(9);
      break;
    case FileKind::kLog:
    case FileKind::kTable:
      digits = name.substr(0, name.rfind('.'));
      break;
    default:
      return 0;
  }
  if (digits.size() > 19) return 0;
  return std::stoull(std::string(digits));
}

namespace {

uint32_t Crc32cTable(std::string_view data, uint32_t c) {
  for (unsigned char b : data) c = kCrcTable[(c ^ b) & 0xFF] ^ (c >> 8);
  return c;
}

#if defined(__x86_64__)
// SSE 4.2's crc32 instruction computes CRC32C (the Castagnoli polynomial),
// 8 bytes at a time: a seal or an open's check of a log of many MiB takes
// milliseconds instead of tens of them.
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(std::string_view data, uint32_t c) {
  const char* p = data.data();
  size_t n = data.size();
  uint64_t c64 = c;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c64 = __builtin_ia32_crc32di(c64, word);
    p += 8;
    n -= 8;
  }
  c = static_cast<uint32_t>(c64);
  while (n > 0) {
    c = __builtin_ia32_crc32qi(c, static_cast<unsigned char>(*p));
    ++p;
    --n;
  }
  return c;
}
#endif

}  // namespace

uint32_t Crc32c(std::string_view data, uint32_t crc) {
#if defined(__x86_64__)
  static const bool sse42 = __builtin_cpu_supports("sse4.2");
  if (sse42) return ~Crc32cSse42(data, ~crc);
#endif
  return ~Crc32cTable(data, ~crc);
}

uint32_t Crc32cPortable(std::string_view data, uint32_t crc) { return ~Crc32cTable(data, ~crc); }

Result<uint32_t> FileCrc32c(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) return CannotRead(path);
  uint32_t crc = 0;
  std::string buf(1 << 16, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    crc = Crc32c(std::string_view(buf.data(), static_cast<size_t>(in.gcount())), crc);
  }
  if (in.bad()) return CannotRead(path);
  return crc;
}

Result<std::optional<std::string>> CheckLogFile(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) return CannotRead(path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return CannotRead(path);
  const auto at = [](size_t offset) { return " at byte " + std::to_string(offset); };
  bool in_fragments = false;  // between a FIRST and its LAST
  size_t offset = 0;
  while (offset < bytes.size()) {
    const size_t left_in_block = kLogBlockBytes - offset % kLogBlockBytes;
    if (left_in_block < kLogHeaderBytes) {  // a block trailer
      offset += left_in_block;
      continue;
    }
    if (bytes.size() - offset < kLogHeaderBytes) {
      return std::optional<std::string>("a record header is cut short by the end of the file" +
                                        at(offset));
    }
    const auto [masked, length, type] = ParseRecordHeader(bytes, offset);
    if (kLogHeaderBytes + length > left_in_block) {
      return std::optional<std::string>("a record's length runs past its block" + at(offset));
    }
    if (offset + kLogHeaderBytes + length > bytes.size()) {
      return std::optional<std::string>("a record is cut short by the end of the file" +
                                        at(offset));
    }
    if (type < 1 || type > 4) {
      return std::optional<std::string>("a record has type " + std::to_string(type) + at(offset));
    }
    const std::string_view typed(bytes.data() + offset + 6, 1 + length);
    if (Crc32c(typed) != UnmaskCrc(masked)) {
      return std::optional<std::string>("a record checksum does not match" + at(offset));
    }
    const bool starts = type == 1 || type == 2;
    if (starts == in_fragments) {
      return std::optional<std::string>(std::string(in_fragments ? "a record fragment is missing"
                                                                 : "a record fragment is stray") +
                                        at(offset));
    }
    in_fragments = type == 2 || type == 3;
    offset += kLogHeaderBytes + length;
  }
  if (in_fragments) {
    return std::optional<std::string>("the last record is cut short by the end of the file");
  }
  return std::optional<std::string>();
}

namespace {

uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kCrcMaskDelta; }

}  // namespace

void AppendLogRecord(std::string* out, std::string_view record) {
  bool first = true;
  do {
    size_t left = kLogBlockBytes - out->size() % kLogBlockBytes;
    if (left < kLogHeaderBytes) {
      out->append(left, '\0');  // a block trailer
      left = kLogBlockBytes;
    }
    const size_t n = std::min(record.size(), left - kLogHeaderBytes);
    const bool last = n == record.size();
    const char type = first && last ? 1 : first ? 2 : last ? 4 : 3;
    std::string typed(1, type);
    typed.append(record.data(), n);
    const uint32_t crc = MaskCrc(Crc32c(typed));
    for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(crc >> (8 * i)));
    out->push_back(static_cast<char>(n & 0xFF));
    out->push_back(static_cast<char>(n >> 8));
    out->append(typed);
    record.remove_prefix(n);
    first = false;
  } while (!record.empty());
}

Status ForEachLogRecord(std::string_view bytes, const std::string& path,
                        const std::function<Status(std::string_view record)>& fn) {
  const auto damaged = [&](const std::string& what, size_t offset) {
    return Status::DataLoss("'" + path + "': " + what + " at byte " + std::to_string(offset));
  };
  std::string pending;  // fragments of the record being read
  bool in_fragments = false;
  size_t offset = 0;
  while (offset < bytes.size()) {
    const size_t left_in_block = kLogBlockBytes - offset % kLogBlockBytes;
    if (left_in_block < kLogHeaderBytes) {  // a block trailer
      offset += left_in_block;
      continue;
    }
    if (bytes.size() - offset < kLogHeaderBytes) break;  // cut short by the end
    const auto [masked, length, type] = ParseRecordHeader(bytes, offset);
    if (kLogHeaderBytes + length > left_in_block) {
      return damaged("a record's length runs past its block", offset);
    }
    if (offset + kLogHeaderBytes + length > bytes.size()) break;  // cut short by the end
    if (type == 0 && length == 0) {  // zeroed space, as LevelDB skips it
      offset += kLogHeaderBytes;
      continue;
    }
    if (type < 1 || type > 4) return damaged("a record has type " + std::to_string(type), offset);
    if (Crc32c(std::string_view(bytes.data() + offset + 6, 1 + length)) != UnmaskCrc(masked)) {
      return damaged("a record checksum does not match", offset);
    }
    const bool starts = type == 1 || type == 2;
    if (starts == in_fragments) {
      return damaged(in_fragments ? "a record fragment is missing" : "a record fragment is stray",
                     offset);
    }
    pending.append(bytes.data() + offset + kLogHeaderBytes, length);
    offset += kLogHeaderBytes + length;
    in_fragments = type == 2 || type == 3;
    if (!in_fragments) {
      WIDEN_RETURN_IF_ERROR(fn(pending));
      pending.clear();
    }
  }
  return Status::OK();
}

Result<LogSalvage> SalvageLogFile(const std::string& in_path, const std::string& out_path) {
  errno = 0;
  std::ifstream in(in_path, std::ios::binary);
  if (!in) return CannotRead(in_path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return CannotRead(in_path);
  LogSalvage salvage;
  std::string out;
  std::string pending;  // fragments of the record being read
  bool in_fragments = false;
  const auto drop = [&](size_t offset, size_t skip, const std::string& why) {
    if (salvage.first_problem.empty()) {
      salvage.first_problem = why + " at byte " + std::to_string(offset);
    }
    ++salvage.records_dropped;
    salvage.bytes_dropped += skip;
    pending.clear();
    in_fragments = false;
  };
  size_t offset = 0;
  while (offset < bytes.size()) {
    const size_t left_in_block = kLogBlockBytes - offset % kLogBlockBytes;
    if (left_in_block < kLogHeaderBytes) {
      offset += left_in_block;
      continue;
    }
    const size_t to_block_end = std::min(left_in_block, bytes.size() - offset);
    if (bytes.size() - offset < kLogHeaderBytes) {
      drop(offset, bytes.size() - offset, "a record header is cut short by the end of the file");
      break;
    }
    const auto [masked, length, type] = ParseRecordHeader(bytes, offset);
    const bool fits = kLogHeaderBytes + length <= to_block_end;
    if (!fits || type < 1 || type > 4 ||
        Crc32c(std::string_view(bytes.data() + offset + 6, 1 + length)) != UnmaskCrc(masked)) {
      drop(offset, to_block_end,
           !fits ? "a record is cut short or its length is damaged"
                 : "a record checksum does not match");
      offset += to_block_end;  // the rest of the block cannot be trusted
      continue;
    }
    const std::string_view data(bytes.data() + offset + kLogHeaderBytes, length);
    offset += kLogHeaderBytes + length;
    const bool starts = type == 1 || type == 2;
    if (starts && in_fragments) drop(offset, 0, "a record fragment is missing");
    if (!starts && !in_fragments) {
      drop(offset, length, "a record fragment is stray");
      continue;
    }
    pending.append(data);
    in_fragments = type == 2 || type == 3;
    if (!in_fragments) {
      AppendLogRecord(&out, pending);
      ++salvage.records_kept;
      pending.clear();
    }
  }
  if (in_fragments) drop(bytes.size(), 0, "the last record is cut short by the end of the file");
  errno = 0;
  std::ofstream o(out_path, std::ios::binary | std::ios::trunc);
  o.write(out.data(), static_cast<std::streamsize>(out.size()));
  o.close();
  if (!o) {
    const int err = errno;
    if (err != 0) return LocalIoError("cannot write '" + out_path + "'", err);
    return Status::LocalIo("cannot write '" + out_path + "'");
  }
  return salvage;
}

std::optional<std::string> CheckTableFile(leveldb::Env* env, const std::string& path,
                                          uint64_t expected_size, uint64_t* entries) {
  if (entries != nullptr) *entries = 0;
  if (env == nullptr) env = leveldb::Env::Default();
  uint64_t size = 0;
  leveldb::Status s = env->GetFileSize(path, &size);
  if (!s.ok()) return "it cannot be read (" + s.ToString() + ")";
  if (expected_size != 0 && size != expected_size) {
    return "it is " + std::to_string(size) + " bytes, but the store recorded " +
           std::to_string(expected_size) + (size < expected_size ? ": cut short" : "");
  }
  leveldb::RandomAccessFile* raw_file = nullptr;
  s = env->NewRandomAccessFile(path, &raw_file);
  if (!s.ok()) return "it cannot be read (" + s.ToString() + ")";
  std::unique_ptr<leveldb::RandomAccessFile> file(raw_file);
  leveldb::Options options;
  options.env = env;
  options.paranoid_checks = true;  // the index block's checksum too
  leveldb::Table* raw_table = nullptr;
  s = leveldb::Table::Open(options, file.get(), size, &raw_table);
  if (!s.ok()) return s.ToString();
  std::unique_ptr<leveldb::Table> table(raw_table);
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(ro));
  uint64_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  if (entries != nullptr) *entries = n;
  if (!it->status().ok()) return it->status().ToString();
  return std::nullopt;
}

std::vector<LiveTable> ParseLiveTables(std::string_view property) {
  std::vector<LiveTable> out;
  size_t pos = 0;
  while (pos < property.size()) {
    size_t end = property.find('\n', pos);
    if (end == std::string_view::npos) end = property.size();
    std::string_view line = property.substr(pos, end - pos);
    pos = end + 1;
    // " 7:3844['k1' @ 2001 : 1 .. 'k2' @ 2300 : 1]"
    if (line.empty() || line[0] != ' ') continue;
    line.remove_prefix(1);
    const size_t colon = line.find(':');
    const size_t bracket = line.find('[');
    if (colon == std::string_view::npos || bracket == std::string_view::npos || bracket < colon) {
      continue;
    }
    if (!AllDigits(line.substr(0, colon)) ||
        !AllDigits(line.substr(colon + 1, bracket - colon - 1)) || line.back() != ']') {
      continue;
    }
    LiveTable t;
    t.number = std::stoull(std::string(line.substr(0, colon)));
    t.size_bytes = std::stoull(std::string(line.substr(colon + 1, bracket - colon - 1)));
    const std::string_view keys = line.substr(bracket + 1, line.size() - bracket - 2);
    // The two keys are split at the one " .. '" after which both halves parse.
    int splits = 0;
    for (size_t p = keys.find(" .. '"); p != std::string_view::npos;
         p = keys.find(" .. '", p + 1)) {
      std::string lo, hi;
      if (ParseInternalKeyText(keys.substr(0, p), &lo) &&
          ParseInternalKeyText(keys.substr(p + 4), &hi)) {
        ++splits;
        t.smallest = std::move(lo);
        t.largest = std::move(hi);
      }
    }
    t.keys_known = splits == 1;
    out.push_back(std::move(t));
  }
  return out;
}

std::string TableFileName(const std::string& dir, uint64_t number) {
  char name[32];
  std::snprintf(name, sizeof(name), "%06llu.ldb", static_cast<unsigned long long>(number));
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(dir) / name, ec)) return name;
  std::snprintf(name, sizeof(name), "%06llu.sst", static_cast<unsigned long long>(number));
  if (std::filesystem::exists(std::filesystem::path(dir) / name, ec)) return name;
  std::snprintf(name, sizeof(name), "%06llu.ldb", static_cast<unsigned long long>(number));
  return name;
}

std::string FlockHolder(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return "";
  // "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF": pid, then the file's
  // device (major:minor, hex) and inode.
  std::ifstream locks("/proc/locks");
  std::string line;
  while (std::getline(locks, line)) {
    char kind[16] = {}, mode[16] = {}, access[16] = {};
    long pid = 0;
    unsigned major_no = 0, minor_no = 0;
    unsigned long long inode = 0;
    if (std::sscanf(line.c_str(), "%*d: %15s %15s %15s %ld %x:%x:%llu", kind, mode, access, &pid,
                    &major_no, &minor_no, &inode) != 7) {
      continue;
    }
    if (std::string_view(kind) != "FLOCK" || pid <= 0 || inode != st.st_ino ||
        major_no != major(st.st_dev) || minor_no != minor(st.st_dev)) {
      continue;
    }
    std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    std::string program, first;
    std::getline(cmd, program, '\0');
    std::getline(cmd, first, '\0');
    program = std::filesystem::path(program).filename().string();
    std::string what = program.empty() ? "" : ": " + program + (first.empty() ? "" : " " + first);
    for (char& c : what) {
      if (static_cast<unsigned char>(c) < 0x20) c = '?';
    }
    return " (process " + std::to_string(pid) + what + ")";
  }
  return "";
}

}  // namespace leveldb_files
}  // namespace widen
