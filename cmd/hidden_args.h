// Keeping passwords given on the command line out of the process list.
//
// A URL such as postgresql://USER:PASSWORD@HOST/DB passed as an argument sits
// in the process's argument memory, which `ps` and /proc/PID/cmdline show to
// every user of the machine for the whole run. HidePasswordsInArgs() keeps a
// copy for the option parser and overwrites the passwords in that memory,
// once, at the start of main().
//
// Thread safety: call before any other thread starts (it writes argv).
#pragma once

#include <string>
#include <vector>

namespace widen {

/// Copies the arguments, then overwrites in place every password in
/// argv[1..argc-1] (the spans extract/source.h's PasswordSpans finds: the
/// PASSWORD of scheme://USER:PASSWORD@, and the value of password=): each
/// becomes "***" (fewer stars when it is shorter), the rest of the argument
/// moves up, and the bytes freed at its end become NUL. Returns the
/// arguments as they were given. REQUIRES: argv[0..argc-1] are writable
/// NUL-terminated strings.
std::vector<std::string> HidePasswordsInArgs(int argc, char** argv);

/// `message` with every password of `args` (as HidePasswordsInArgs reads
/// them) replaced by "***": for messages that echo an argument.
std::string MaskArgsIn(std::string message, const std::vector<std::string>& args);

}  // namespace widen
