// ASSERT_INVARIANT: an invariant of a fuzz target. When it does not hold, the
// target prints which one and why, and aborts: libFuzzer then keeps the
// input as a crash (scripts/fuzz.sh).
//
// Thread safety: stateless.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

namespace widen::fuzz {

/// Prints "fuzz invariant failed: WHAT" and aborts.
[[noreturn]] inline void InvariantFailed(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", file, line, what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Runs `run` on the input bytes (a target's body) and returns 0, as
/// libFuzzer wants; an exception that escapes `run` is a broken invariant.
template <typename Run>
int RunInput(Run run, const uint8_t* data, size_t size) {
  try {
    run(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const std::exception& e) {
    InvariantFailed(__FILE__, __LINE__, std::string("an exception escaped: ") + e.what());
  } catch (...) {
    InvariantFailed(__FILE__, __LINE__, "an exception escaped");
  }
  return 0;
}

}  // namespace widen::fuzz

/// Aborts with `cond`'s text and `why` (a std::string expression, evaluated
/// only on failure) unless `cond` holds.
#define ASSERT_INVARIANT(cond, why)                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      ::widen::fuzz::InvariantFailed(__FILE__, __LINE__,                              \
                                     std::string(#cond) + " -- " + std::string(why)); \
    }                                                                                 \
  } while (0)
