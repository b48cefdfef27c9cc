// Shared by the commands' output: error lines and human-readable sizes.
#pragma once

#include <string>

#include "common/status.h"

namespace widen {

/// "widen: <message>" on stderr; the exit code for the status.
int FailWith(const Status& status);

/// 1536 -> "1.5 KiB".
std::string HumanBytes(double bytes);

}  // namespace widen
