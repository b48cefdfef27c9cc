#include "store/leveldb_marker_internal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "store/leveldb_files_internal.h"

namespace widen {
namespace leveldb_marker {

namespace {

namespace fs = std::filesystem;
namespace lfiles = leveldb_files;

constexpr std::string_view kFirstLinePrefix = "widen embedded store, format ";
constexpr std::string_view kEndPrefix = "end ";
constexpr char kTempFile[] = "WIDEN_STORE.tmp";
// A seal lists one line of about 30 bytes per file: this is far past any
// store's, and bounds what a damaged marker can make widen read.
constexpr uintmax_t kMaxMarkerBytes = 64 << 20;

std::string Hex8(uint32_t v) {
  char b[9];
  std::snprintf(b, sizeof(b), "%08x", v);
  return b;
}

bool ParseHex8(std::string_view s, uint32_t* v) {
  if (s.size() != 8) return false;
  uint32_t r = 0;
  for (char c : s) {
    r <<= 4;
    if (c >= '0' && c <= '9') {
      r |= static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      r |= static_cast<uint32_t>(c - 'a' + 10);
    } else {
      return false;
    }
  }
  *v = r;
  return true;
}

bool ParseDecimal(std::string_view s, uint64_t* v) {
  if (s.empty() || s.size() > 19 || (s.size() > 1 && s[0] == '0')) return false;
  uint64_t r = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    r = r * 10 + static_cast<uint64_t>(c - '0');
  }
  *v = r;
  return true;
}

Status IoError(const std::string& what, int err) { return LocalIoError(what, err); }

// A read of `path` through a stream failed: LocalIo with errno's reason
// when the stream left one.
Status CannotRead(const std::string& path) {
  const int err = errno;
  if (err != 0) return LocalIoError("cannot read '" + path + "'", err);
  return Status::LocalIo("cannot read '" + path + "'");
}

Status SyncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open '" + path + "' to sync it", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return IoError("cannot sync '" + path + "'", err);
  return Status::OK();
}

bool SealedKind(std::string_view name) { return lfiles::KindOf(name) != lfiles::FileKind::kOther; }

std::string Damaged(const std::string& file, const std::string& what) {
  return "file '" + file + "' " + what;
}

}  // namespace

std::string Encode(const Marker& marker) {
  std::string t(kFirstLinePrefix);
  t += std::to_string(marker.format) + "\n";
  t += marker.closed ? "closed\n" : "open\n";
  if (marker.closed) {
    for (const SealedFile& f : marker.files) {
      t += f.name + " " + std::to_string(f.size_bytes) + " " + (f.crc ? Hex8(*f.crc) : "-") + "\n";
    }
  }
  t += std::string(kEndPrefix) + Hex8(lfiles::Crc32c(t)) + "\n";
  return t;
}

Result<Marker> Decode(std::string_view text, const std::string& path) {
  auto damaged = [&](const std::string& why) {
    return Status::DataLoss("the store's marker file '" + path + "' is damaged (" + why + ")");
  };
  Marker m;
  const size_t first_end = text.find('\n');
  if (first_end == std::string_view::npos) return damaged("no complete first line");
  const std::string_view first = text.substr(0, first_end);
  uint64_t format = 0;
  if (first.substr(0, kFirstLinePrefix.size()) != kFirstLinePrefix ||
      !ParseDecimal(first.substr(kFirstLinePrefix.size()), &format) || format == 0 ||
      format > 255) {
    return damaged("its first line is not 'widen embedded store, format N'");
  }
  m.format = static_cast<int>(format);
  if (text.size() == first_end + 1) return m;  // written by a widen without seals: open

  // The last line: "end " + CRC32C of everything before it.
  if (text.back() != '\n') return damaged("it does not end with a newline");
  const size_t last_begin = text.rfind('\n', text.size() - 2) + 1;
  const std::string_view last = text.substr(last_begin, text.size() - 1 - last_begin);
  uint32_t crc = 0;
  if (last.substr(0, kEndPrefix.size()) != kEndPrefix ||
      !ParseHex8(last.substr(kEndPrefix.size()), &crc)) {
    return damaged("its last line is not 'end CRC'");
  }
  if (lfiles::Crc32c(text.substr(0, last_begin)) != crc) return damaged("its checksum differs");

  std::vector<std::string_view> lines;
  for (size_t p = first_end + 1; p < last_begin;) {
    const size_t e = text.find('\n', p);
    lines.push_back(text.substr(p, e - p));
    p = e + 1;
  }
  if (lines.empty() || (lines[0] != "open" && lines[0] != "closed")) {
    return damaged("its second line is neither 'open' nor 'closed'");
  }
  m.closed = lines[0] == "closed";
  if (!m.closed && lines.size() != 1) return damaged("an open marker lists files");
  bool has_current = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string_view l = lines[i];
    const size_t a = l.find(' ');
    const size_t b = a == std::string_view::npos ? a : l.find(' ', a + 1);
    if (b == std::string_view::npos) return damaged("line " + std::to_string(i + 2));
    SealedFile f;
    f.name = std::string(l.substr(0, a));
    const std::string_view crc_text = l.substr(b + 1);
    const bool table = lfiles::KindOf(f.name) == lfiles::FileKind::kTable;
    uint32_t file_crc = 0;
    if (!SealedKind(f.name) || !ParseDecimal(l.substr(a + 1, b - a - 1), &f.size_bytes) ||
        (table ? crc_text != "-" : !ParseHex8(crc_text, &file_crc)) ||
        (!m.files.empty() && m.files.back().name >= f.name)) {
      return damaged("line " + std::to_string(i + 2));
    }
    if (!table) f.crc = file_crc;
    has_current = has_current || f.name == "CURRENT";
    m.files.push_back(std::move(f));
  }
  if (m.closed && !has_current) return damaged("its seal does not list CURRENT");
  return m;
}

Result<std::string> ReadText(const std::string& dir) {
  const std::string path = (fs::path(dir) / kMarkerFile).string();
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return Status::NotFound("no marker file '" + path + "'");
    return CannotRead(path);
  }
  std::error_code ec;
  if (fs::file_size(path, ec) > kMaxMarkerBytes) {
    return Status::DataLoss("the store's marker file '" + path + "' is damaged (larger than " +
                            std::to_string(kMaxMarkerBytes) + " bytes)");
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return CannotRead(path);
  return text;
}

Status WriteText(const std::string& dir, std::string_view text) {
  const std::string tmp = (fs::path(dir) / kTempFile).string();
  const std::string final_path = (fs::path(dir) / kMarkerFile).string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot write '" + tmp + "'", errno);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return IoError("cannot write '" + tmp + "'", err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    return IoError("cannot sync '" + tmp + "'", err);
  }
  if (::close(fd) != 0) return IoError("cannot write '" + tmp + "'", errno);
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
    return IoError("cannot rename '" + tmp + "' to '" + final_path + "'", errno);
  }
  return SyncPath(dir, O_RDONLY | O_DIRECTORY);
}

Result<Marker> Seal(const std::string& dir) {
  Marker m;
  m.closed = true;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!SealedKind(name) || !e.is_regular_file(ec)) continue;
    SealedFile f;
    f.name = name;
    if (lfiles::KindOf(name) != lfiles::FileKind::kTable) {
      // LevelDB closes a log without syncing it (it syncs MANIFEST and
      // CURRENT itself).
      if (lfiles::KindOf(name) == lfiles::FileKind::kLog) {
        WIDEN_RETURN_IF_ERROR(SyncPath(e.path().string(), O_RDONLY));
      }
      WIDEN_ASSIGN_OR_RETURN(uint32_t crc, lfiles::FileCrc32c(e.path().string()));
      f.crc = crc;
    }
    f.size_bytes = fs::file_size(e.path(), ec);
    if (ec) return IoError("cannot read the size of '" + e.path().string() + "'", ec.value());
    m.files.push_back(std::move(f));
  }
  if (ec) return IoError("cannot list '" + dir + "'", ec.value());
  std::sort(m.files.begin(), m.files.end(),
            [](const SealedFile& a, const SealedFile& b) { return a.name < b.name; });
  WIDEN_RETURN_IF_ERROR(SyncPath(dir, O_RDONLY | O_DIRECTORY));
  return m;
}

Result<std::vector<Difference>> Compare(const std::string& dir, const Marker& marker, bool* stale) {
  *stale = false;
  std::vector<Difference> out;
  const auto path_of = [&](const std::string& name) { return (fs::path(dir) / name).string(); };
  const auto check = [&](const SealedFile& f) -> Result<std::optional<std::string>> {
    const std::string path = path_of(f.name);
    std::error_code ec;
    const uint64_t size = fs::file_size(path, ec);
    if (ec) {
      if (!fs::exists(path, ec)) {
        return std::optional<std::string>(
            "is missing (it was there when widen last closed the "
            "store)");
      }
      return IoError("cannot read the size of '" + path + "'", ec.value());
    }
    if (size != f.size_bytes) {
      return std::optional<std::string>(
          "is " + std::to_string(size) + " bytes; it was " + std::to_string(f.size_bytes) +
          " when widen last closed the store" + (size < f.size_bytes ? " (cut short)" : ""));
    }
    if (f.crc) {
      WIDEN_ASSIGN_OR_RETURN(uint32_t crc, lfiles::FileCrc32c(path));
      if (crc != *f.crc) {
        return std::optional<std::string>(
            "has other bytes than when widen last closed the store (CRC32C " + Hex8(crc) +
            ", sealed " + Hex8(*f.crc) + ")");
      }
    }
    return std::optional<std::string>();
  };

  // CURRENT first: a newer MANIFEST named in it means the seal is stale.
  uint64_t sealed_manifest = 0;
  for (const SealedFile& f : marker.files) {
    if (lfiles::KindOf(f.name) == lfiles::FileKind::kManifest) {
      sealed_manifest = std::max(sealed_manifest, lfiles::NumberOf(f.name));
    }
  }
  for (const SealedFile& f : marker.files) {
    if (f.name != "CURRENT") continue;
    WIDEN_ASSIGN_OR_RETURN(std::optional<std::string> problem, check(f));
    if (!problem) break;
    std::ifstream in(path_of("CURRENT"), std::ios::binary);
    std::string current((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!current.empty() && current.back() == '\n') current.pop_back();
    std::error_code ec;
    if (lfiles::KindOf(current) == lfiles::FileKind::kManifest &&
        lfiles::NumberOf(current) > sealed_manifest && fs::exists(path_of(current), ec)) {
      *stale = true;
      return out;
    }
    out.push_back(Difference{f.name, *problem});
  }
  for (const SealedFile& f : marker.files) {
    if (f.name == "CURRENT") continue;
    WIDEN_ASSIGN_OR_RETURN(std::optional<std::string> problem, check(f));
    if (problem) out.push_back(Difference{f.name, *problem});
  }
  // LevelDB replays every log it finds: one that was not there holds writes
  // no widen made. (A failed open may leave an empty one behind.)
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (lfiles::KindOf(name) != lfiles::FileKind::kLog || e.file_size(ec) == 0) continue;
    const bool listed = std::any_of(marker.files.begin(), marker.files.end(),
                                    [&](const SealedFile& f) { return f.name == name; });
    if (!listed) {
      out.push_back(Difference{name, "was not there when widen last closed the store"});
    }
  }
  return out;
}

Status Verify(const std::string& dir, const Marker& marker, bool* stale) {
  WIDEN_ASSIGN_OR_RETURN(std::vector<Difference> differences, Compare(dir, marker, stale));
  if (differences.empty()) return Status::OK();
  const Difference& d = differences.front();
  return Status::DataLoss(Damaged((fs::path(dir) / d.name).string(), d.what));
}

}  // namespace leveldb_marker
}  // namespace widen
