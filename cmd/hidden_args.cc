#include "cmd/hidden_args.h"

#include <algorithm>
#include <cstring>

#include "extract/source.h"

namespace widen {

std::vector<std::string> HidePasswordsInArgs(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (int i = 1; i < argc; ++i) {
    const std::string& arg = args[static_cast<size_t>(i)];
    const auto spans = PasswordSpans(arg);
    if (spans.empty()) continue;
    std::string shown;
    size_t from = 0;
    for (const auto& [offset, length] : spans) {
      shown.append(arg, from, offset - from);
      shown.append(std::min<size_t>(length, 3), '*');
      from = offset + length;
    }
    shown.append(arg, from, std::string::npos);
    // `shown` is never longer than `arg`: write it over the argument and
    // clear what is left, so no byte of a password stays behind.
    std::memcpy(argv[i], shown.data(), shown.size());
    std::memset(argv[i] + shown.size(), '\0', arg.size() - shown.size());
  }
  return args;
}

std::string MaskArgsIn(std::string message, const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (!PasswordSpans(args[i]).empty()) message = ScrubSecrets(std::move(message), args[i]);
  }
  return message;
}

}  // namespace widen
