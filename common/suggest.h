// "Did you mean" suggestions for misspelt names in messages.
//
// Thread safety: pure functions.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace widen {

/// Levenshtein distance between two short strings.
size_t EditDistance(std::string_view a, std::string_view b);

/// The candidate that differs from `word` only in ASCII case, else the
/// closest of `candidates` to `word` within edit distance 2, or "".
std::string ClosestName(std::string_view word, std::span<const std::string> candidates);

/// "; did you mean 'x'?" for the closest candidate, or "" when none is close.
std::string DidYouMean(std::string_view word, std::span<const std::string> candidates);

}  // namespace widen
