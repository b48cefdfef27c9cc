// Shared by the commands' output: error lines and human-readable sizes.
#pragma once

#include <string>

#include "common/status.h"

namespace widen {

/// "widen: <message>" on stderr; the exit code for the status.
int FailWith(const Status& status);

/// 1536 -> "1.5 KiB".
std::string HumanBytes(double bytes);

/// `word` as one word of a POSIX shell command line: as it is when it holds
/// only [A-Za-z0-9_./:@%+=,-] (and is not empty), else single-quoted, a
/// quote in it written '\''.
std::string ShellWord(const std::string& word);

}  // namespace widen
