#include "cmd/design_util.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string_view>

#include <fmt/format.h>

#include "cmd/exit_codes.h"

namespace widen {

int FailWith(const Status& s) {
  std::fprintf(stderr, "widen: %s\n", s.message().c_str());
  return ExitCodeFor(s);
}

std::string HumanBytes(double b) {
  if (b < 1024) return fmt::format("{:.0f} B", b);
  if (b < 1024.0 * 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  if (b < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (b < 1024.0 * 1024 * 1024 * 1024) {
    return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  }
  return fmt::format("{:.2f} TiB", b / (1024.0 * 1024 * 1024 * 1024));
}

std::string ShellWord(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_./:@%+=,-").find(c) != std::string_view::npos;
  });
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace widen
