#include "cmd/metrics_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "cmd/atomic_file.h"
#include "cmd/design_util.h"
#include "cmd/exit_codes.h"

namespace widen {

namespace {

// The length of the valid UTF-8 sequence `s` starts with at `i` (2 to 4
// bytes; no overlong forms, surrogates or code points past U+10FFFF), 0
// when the bytes there are not one. REQUIRES: s[i] >= 0x80.
size_t Utf8Length(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > s.size() || b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(i + k) < 0x80 || b(i + k) > 0xbf) return 0;
  }
  return n;
}

// A label value as the text format wants it: backslash, double quote and
// line feed escaped (\\, \", \n). Every other control byte (below 0x20,
// 0x7f) and every byte that is not part of valid UTF-8 is written as the
// text \xNN (hex, upper case; its backslash escaped, so the value reads
// back as backslash, x and two digits): the file stays valid UTF-8 with
// one sample per line, which the Prometheus parsers require.
std::string LabelValue(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\\\x{:02X}", c);
    } else if (c >= 0x80) {
      const size_t n = Utf8Length(s, i);
      if (n == 0) {
        out += fmt::format("\\\\x{:02X}", c);
      } else {
        out.append(s, i, n);
        i += n;
        continue;
      }
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  return out;
}

// A sample value: integers as such, others with enough digits.
std::string Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 9e15) return fmt::format("{:.0f}", v);
  return fmt::format("{}", v);
}

// Adds one metric family: its HELP and TYPE lines, then its samples.
class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}
  void Family(const char* name, const char* help) {
    *out_ += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
    name_ = name;
  }
  void Sample(const std::string& labels, double value) {
    *out_ += fmt::format("{}{{{}}} {}\n", name_, labels, Number(value));
  }

 private:
  std::string* out_;
  std::string name_;
};

// The watermark's time in Unix seconds, for the time kinds.
std::optional<double> WatermarkSeconds(const Value& v) {
  if (v.is_null()) return std::nullopt;
  switch (v.type()) {
    case ValueType::kDate:
      return static_cast<double>(v.as_int()) * 86400.0;
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz:
      return static_cast<double>(v.as_int()) / 1e6;
    default:
      return std::nullopt;
  }
}

std::optional<double> WatermarkInteger(const Value& v) {
  if (v.is_null()) return std::nullopt;
  if (v.type() == ValueType::kInt) return static_cast<double>(v.as_int());
  if (v.type() == ValueType::kUInt) return static_cast<double>(v.as_uint());
  return std::nullopt;
}

}  // namespace

double UnixSecondsNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Result<std::unique_ptr<MetricsFile>> MetricsFile::Create(const std::string& path,
                                                         const std::string& command,
                                                         const std::string& mapping) {
  WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> file,
                         AtomicFile::Create(path, "--metrics-file"));
  const std::string labels =
      fmt::format("command=\"{}\",mapping=\"{}\"", LabelValue(command), LabelValue(mapping));
  // The previous file's last success, for the same labels (a file widen
  // wrote: one sample per line, labels in this order).
  std::optional<double> previous;
  // Opened without blocking and read only when it is a regular file: a
  // FIFO put there meanwhile would wait for a writer forever.
  std::string text;
  const int fd = ::open(file->target().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char buf[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      text.append(buf, static_cast<size_t>(n));
    }
  }
  if (fd >= 0) ::close(fd);
  std::istringstream old(text);
  const std::string prefix = "widen_last_success_timestamp_seconds{" + labels + "} ";
  for (std::string line; std::getline(old, line);) {
    if (line.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string value = line.substr(prefix.size());
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (end != value.c_str() && std::isfinite(v) && v > 0) previous = v;
    break;
  }
  return std::unique_ptr<MetricsFile>(new MetricsFile(std::move(file), labels, previous));
}

std::string MetricsFile::Format(const RunMetrics& run) const {
  std::string out;
  Writer w(&out);
  const std::string& l = labels_;
  w.Family("widen_exit_status", "Exit code of the last run (0: success; README, \"Exit codes\").");
  w.Sample(l, run.exit_status);
  w.Family("widen_last_run_timestamp_seconds", "When the last run ended, in Unix time.");
  w.Sample(l, run.end_seconds);
  w.Family("widen_last_success_timestamp_seconds",
           "When the last run that exited 0 ended, in Unix time (0: none known).");
  const double success = run.exit_status == 0 ? run.end_seconds : previous_success_.value_or(0);
  w.Sample(l, success);
  w.Family("widen_run_duration_seconds", "Wall time of the last run.");
  w.Sample(l, std::max(0.0, run.end_seconds - run.start_seconds));
  if (!run.has_figures) return out;

  // The totals, then the same per table.
  struct Figure {
    const char* run_name;
    const char* table_name;
    const char* help;
    uint64_t TableMetrics::*field;
  };
  static const Figure kFigures[] = {
      {"widen_run_rows_read", "widen_table_rows_read",
       "Source rows the last run read (driving and nested rows).", &TableMetrics::rows_read},
      {"widen_run_rows_written", "widen_table_rows_written",
       "Target rows the last run wrote (sync: written or replaced).", &TableMetrics::rows_written},
      {"widen_run_cells_put", "widen_table_cells_put", "Cells the last run wrote.",
       &TableMetrics::cells_put},
      {"widen_run_cells_deleted", "widen_table_cells_deleted",
       "Stored cells the last run removed (sync).", &TableMetrics::cells_deleted},
      {"widen_run_rows_deleted", "widen_table_rows_deleted",
       "Target rows the last run removed because the source no longer gives them (sync).",
       &TableMetrics::rows_deleted},
      {"widen_run_rows_rejected", "widen_table_rows_rejected",
       "Source rows the last run wrote to the rejects file instead of the target.",
       &TableMetrics::rows_rejected},
  };
  for (const Figure& f : kFigures) {
    w.Family(f.run_name, f.help);
    uint64_t total = 0;
    for (const TableMetrics& t : run.tables) total += t.*(f.field);
    w.Sample(l, static_cast<double>(total));
  }
  for (const Figure& f : kFigures) {
    w.Family(f.table_name, f.help);
    for (const TableMetrics& t : run.tables) {
      w.Sample(fmt::format("{},table=\"{}\"", l, LabelValue(t.table)),
               static_cast<double>(t.*(f.field)));
    }
  }
  w.Family("widen_table_duration_seconds", "Wall time the last run spent on the table.");
  for (const TableMetrics& t : run.tables) {
    w.Sample(fmt::format("{},table=\"{}\"", l, LabelValue(t.table)), t.seconds);
  }
  bool lag = false, value = false;
  for (const TableMetrics& t : run.tables) {
    for (const WatermarkMetric& m : t.watermarks) {
      lag = lag || WatermarkSeconds(m.value).has_value();
      value = value || WatermarkInteger(m.value).has_value();
    }
  }
  auto watermark_labels = [&](const TableMetrics& t, const WatermarkMetric& m) {
    return fmt::format("{},table=\"{}\",source_table=\"{}\",column=\"{}\"", l, LabelValue(t.table),
                       LabelValue(m.source_table), LabelValue(m.column));
  };
  if (lag) {
    w.Family("widen_watermark_lag_seconds",
             "The last run's end less the newest time watermark it read from the source table.");
    for (const TableMetrics& t : run.tables) {
      for (const WatermarkMetric& m : t.watermarks) {
        if (auto s = WatermarkSeconds(m.value)) {
          w.Sample(watermark_labels(t, m), run.end_seconds - *s);
        }
      }
    }
  }
  if (value) {
    w.Family("widen_watermark_value",
             "The newest integer watermark the last run read from the source table.");
    for (const TableMetrics& t : run.tables) {
      for (const WatermarkMetric& m : t.watermarks) {
        if (auto v = WatermarkInteger(m.value)) w.Sample(watermark_labels(t, m), *v);
      }
    }
  }
  return out;
}

int RunWithMetrics(const std::string& path, const std::string& command, const std::string& mapping,
                   const std::function<int(RunMetrics*)>& run) {
  RunMetrics metrics;
  if (path.empty()) return run(&metrics);
  auto file = MetricsFile::Create(path, command, mapping);
  if (!file.ok()) {
    std::fprintf(stderr, "widen: %s\n", file.status().message().c_str());
    return ExitCodeFor(file.status());
  }
  metrics.start_seconds = UnixSecondsNow();
  auto finish = [&](int rc) {
    metrics.exit_status = rc;
    metrics.end_seconds = UnixSecondsNow();
    const Status s = (*file)->Commit(metrics);
    if (s.ok()) return rc;
    std::fprintf(stderr, "widen: %s\n", s.message().c_str());
    // The run did its work; only its report is missing (as for stdout).
    return rc == kExitOk ? kExitOutput : rc;
  };
  int rc = kExitInternal;
  try {
    rc = run(&metrics);
  } catch (...) {
    metrics.has_figures = false;
    finish(kExitInternal);
    throw;
  }
  return finish(rc);
}

Status MetricsFile::Commit(const RunMetrics& run) {
  WIDEN_RETURN_IF_ERROR(file_->Write(Format(run)));
  return file_->Commit();
}

int RunWithOutputs(const std::string& command, const std::string& mapping,
                   const std::string& rejects_path, const std::string& metrics_path,
                   const std::string& target_url, const std::function<int(RunMetrics*)>& run) {
  // Before the metrics file is made: it is written on failure too.
  if (Status s = CheckOutputPaths({{"-m", mapping}},
                                  {{"--rejects", rejects_path}, {"--metrics-file", metrics_path}},
                                  mapping, target_url);
      !s.ok()) {
    return FailWith(s);
  }
  return RunWithMetrics(metrics_path, command, mapping, run);
}

}  // namespace widen
