// Bounds on what reading a mapping may cost, checked before yaml-cpp builds
// a node tree: the file's size, how deep collections nest, how many nodes
// the document holds once every alias is expanded, and how many aliases it
// uses. A "billion laughs" document (aliases of aliases) or a 10,000-deep
// nesting is refused after a bounded amount of work instead of exhausting
// memory or the stack. Before any of that, the text must be UTF-8 of YAML's
// printable characters: the YAML reader would otherwise guess another
// encoding (UTF-16 or UTF-32 from 0x00 bytes) and name places that are not
// in the file. The figures are documented in docs/mapping.md ("Limits").
// Internal to mapping/.
//
// Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace widen::mapping_internal {

/// The limits; never lower than what docs/mapping.md promises.
inline constexpr uint64_t kMaxMappingBytes = 1 << 20;  // 1 MiB of YAML text (kMaxMappingTextBytes)
inline constexpr int kMaxYamlDepth = 64;               // nested maps/lists
inline constexpr uint64_t kMaxYamlNodes = 100000;      // after alias expansion
inline constexpr uint64_t kMaxYamlAliases = 1000;      // `*name` uses

/// InvalidArgument "FILE:LINE:COL: byte 0x.. is not UTF-8 ..." (or
/// "character U+.... is not printable") at the first byte of `yaml_text`
/// that is not well-formed UTF-8 or not one of YAML 1.2's printable
/// characters (tab, LF, CR, U+0020..U+007E, U+0085, U+00A0..U+D7FF,
/// U+E000..U+FFFD, U+10000..U+10FFFF); LINE counts '\n's, COL bytes.
/// OK otherwise.
Status CheckYamlText(std::string_view yaml_text, const std::string& file_name);

/// Checks `yaml_text` against the limits with yaml-cpp's event parser (no
/// node tree is built; the work stops at the first limit passed).
/// InvalidArgument "FILE:LINE:COL: ..." naming the limit when one is passed,
/// when an alias refers to a node that contains it (a cycle), or when the
/// text holds more than one document, or when it fails CheckYamlText; OK
/// otherwise, and for YAML syntax errors, which the tree loader reports in
/// its own words.
Status CheckYamlLimits(const std::string& yaml_text, const std::string& file_name);

}  // namespace widen::mapping_internal
