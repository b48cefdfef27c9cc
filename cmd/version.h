// The version of widen and the source commit it was built from, as
// `widen --version` prints them. The version is the project's (CMake's
// project(VERSION)); the commit is read from git at build time
// (cmake/SourceCommit.cmake): 12 hex digits, or "unknown" when the build was
// not made from a git work tree.
#pragma once

#include <string>

namespace widen {

/// "0.1.0".
const char* WidenVersion();
/// "abcdef123456", or "unknown".
const char* WidenSourceCommit();
/// "widen 0.1.0 (commit abcdef123456)": the line `widen --version` prints.
std::string WidenVersionLine();

}  // namespace widen
