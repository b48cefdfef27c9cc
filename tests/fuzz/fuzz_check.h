// FUZZ_ASSERT: an invariant of a fuzz target. When it does not hold, the
// target prints which one and why, and aborts: libFuzzer then keeps the
// input as a crash (scripts/fuzz.sh).
//
// Thread safety: stateless.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace widen::fuzz {

/// Prints "fuzz invariant failed: WHAT" and aborts.
[[noreturn]] inline void InvariantFailed(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", file, line, what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace widen::fuzz

/// Aborts with `cond`'s text and `why` (a std::string expression, evaluated
/// only on failure) unless `cond` holds.
#define FUZZ_ASSERT(cond, why)                                                        \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      ::widen::fuzz::InvariantFailed(__FILE__, __LINE__,                              \
                                     std::string(#cond) + " -- " + std::string(why)); \
    }                                                                                 \
  } while (0)
