// A naming policy: a house's rules for the names a design gives — one
// namespace per business domain, patterns and lengths for table and family
// names, a style for qualifiers, prefixes reserved for other uses. `widen
// lint` reports every name that breaks it (rule E123, with the name's
// file:line:col), and `widen init` drafts names that follow it.
//
// A policy is the `policy:` section of a mapping, or a file of its own
// (`widen lint --policy FILE`, `widen init --policy FILE`) holding the same
// fields at its top level (docs/lint.md, "Naming policy"):
//
//   namespace: {allowed: [music, sales]}
//   table:     {style: snake_case, max_bytes: 30}
//   family:    {pattern: "[a-z]", max_bytes: 1}
//   qualifier: {style: snake_case, max_bytes: 24}
//   prefix:    {pattern: "[a-z]{1,2}"}
//   attribute: {style: snake_case}
//   max_families: 2
//   reserved_prefixes: [tmp_, widen]
//
// The default policy (no policy given) is HBase's practice as `lint`
// checked it before policies existed: family names of at most 2 bytes (W103)
// and at most 3 families (W102), both warnings; HBase's own rules for legal
// names are E101 whatever the policy says.
//
// Thread safety: plain values; read-only after loading.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_names.h"
#include "common/status.h"

namespace widen {

/// The kinds of names a policy rules.
enum class NameKind {
  kNamespace,  // "namespace": the part of a target table's name before ':' ("default" without)
  kTable,      // "table": the part after ':'
  kFamily,     // "family": a column family
  kQualifier,  // "qualifier": the qualifier of a plain column (`to`)
  kPrefix,     // "prefix": a nest's qualifier prefix (an empty prefix is not checked)
  kAttribute,  // "attribute": a nested value's attribute (JSON key or layout cells suffix)
};
inline constexpr size_t kNameKinds = 6;

/// "namespace", "table", "family", "qualifier", "prefix", "attribute".
const NameTable<NameKind>& NameKindNames();

/// A style of words in a name.
enum class NameStyle {
  kAny,         // "any" (the default)
  kSnakeCase,   // "snake_case": lower-case words and digits joined by '_' (order_line)
  kCamelCase,   // "camelCase": a lower-case letter first, then letters and digits (orderLine)
  kPascalCase,  // "PascalCase": an upper-case letter first, then letters and digits (OrderLine)
  kLowerCase,   // "lowercase": no upper-case letter
  kUpperCase,   // "UPPERCASE": no lower-case letter
};

/// "any", "snake_case", "camelCase", "PascalCase", "lowercase", "UPPERCASE".
const NameTable<NameStyle>& NameStyleNames();

/// The rules for one kind of name. Every rule given must hold.
struct NameRule {
  std::string file;  // where it is written ("" = the default policy)
  int line = 0;      // of the rule's map (0 = not written)
  int column = 0;
  /// A regular expression (RE2 syntax: no backreferences or lookaround)
  /// the whole name must match, in time linear in the name; "" = any.
  std::string pattern;
  NameStyle style = NameStyle::kAny;
  int min_bytes = 0;
  int max_bytes = 0;  // 0 = no limit
  /// When not empty, the only names allowed (one namespace per domain).
  std::vector<std::string> allowed;
  /// The name may not start with any of these.
  std::vector<std::string> reserved_prefixes;

  /// "file:line:col" of the rule, or "the default policy".
  std::string Where() const;
};

/// A naming policy (see the file comment).
struct NamingPolicy {
  std::string file;                        // where it was read; "" = the default policy
  bool given = false;                      // read from a mapping's `policy:` or a policy file
  std::array<NameRule, kNameKinds> rules;  // by NameKind
  /// W102's threshold: more column families than this warn. Default 3.
  int max_families = 3;
  /// Prefixes no name of any kind may start with.
  std::vector<std::string> reserved_prefixes;

  /// The policy when none is given: family names of at most 2 bytes (W103)
  /// and at most 3 families (W102).
  static NamingPolicy Default();

  const NameRule& rule(NameKind kind) const { return rules[static_cast<size_t>(kind)]; }
  NameRule& rule(NameKind kind) { return rules[static_cast<size_t>(kind)]; }
};

/// Why `name` (of `kind`) breaks `policy`, or "" when it follows it: a
/// pattern not matched, a style not followed, a length out of bounds, a name
/// not among those allowed, a reserved prefix. With `check_length` false the
/// byte limits are not checked (lint reports a family's length as W103).
std::string NameProblem(const NamingPolicy& policy, NameKind kind, std::string_view name,
                        bool check_length = true);

/// `name`'s words (split at '_', '-', '.', spaces and lower-to-upper case
/// changes) written in `style`: "invoice_line" as camelCase is
/// "invoiceLine", "InvoiceLine" as snake_case "invoice_line". kAny returns
/// the name as it is.
std::string ApplyNameStyle(NameStyle style, std::string_view name);

/// Reads a policy file (the fields of a `policy:` section at its top
/// level). InvalidArgument with file:line:col for an unknown field, a
/// pattern that is no regular expression, an unknown style, a bad length;
/// NotFound when the file is missing. Read with the mapping's limits.
Result<NamingPolicy> load_policy(const std::string& path);

/// The same from YAML text; `file_name` is used in messages.
Result<NamingPolicy> ParsePolicy(const std::string& yaml_text, const std::string& file_name);

}  // namespace widen
