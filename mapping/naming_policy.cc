#include "mapping/naming_policy.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <re2/re2.h>

#include "common/suggest.h"
#include "mapping/policy_section_internal.h"
#include "mapping/yaml_internal.h"
#include "mapping/yaml_limits_internal.h"

namespace widen {

namespace {

// The memory RE2 may use for one pattern's program; a larger pattern is
// refused when the policy is read.
constexpr int64_t kPatternMemoryBytes = int64_t{1} << 20;

// A policy's pattern compiled for RE2, which matches in time linear in the
// name whatever the pattern (no backtracking, no recursion): a long name or
// a pattern like (a|aa)*c cannot hang or crash lint. Errors are not logged.
std::unique_ptr<re2::RE2> CompilePattern(const std::string& pattern) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kPatternMemoryBytes);
  return std::make_unique<re2::RE2>(pattern, options);
}

constexpr EnumName<NameKind> kNameKindEntries[] = {
    {NameKind::kNamespace, "namespace"}, {NameKind::kTable, "table"},
    {NameKind::kFamily, "family"},       {NameKind::kQualifier, "qualifier"},
    {NameKind::kPrefix, "prefix"},       {NameKind::kAttribute, "attribute"}};
constexpr NameTable<NameKind> kNameKindTable{kNameKindEntries};

constexpr EnumName<NameStyle> kNameStyleEntries[] = {{NameStyle::kAny, "any"},
                                                     {NameStyle::kSnakeCase, "snake_case"},
                                                     {NameStyle::kCamelCase, "camelCase"},
                                                     {NameStyle::kPascalCase, "PascalCase"},
                                                     {NameStyle::kLowerCase, "lowercase"},
                                                     {NameStyle::kUpperCase, "UPPERCASE"}};
constexpr NameTable<NameStyle> kNameStyleTable{kNameStyleEntries};

bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Whether `name` is written in `style`.
bool FollowsStyle(NameStyle style, std::string_view name) {
  if (name.empty()) return style == NameStyle::kAny;
  switch (style) {
    case NameStyle::kAny:
      return true;
    case NameStyle::kSnakeCase: {
      if (!IsLower(name.front()) || name.back() == '_') return false;
      for (size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if (c == '_') {
          if (name[i - 1] == '_') return false;
        } else if (!IsLower(c) && !IsDigit(c)) {
          return false;
        }
      }
      return true;
    }
    case NameStyle::kCamelCase:
    case NameStyle::kPascalCase:
      if (style == NameStyle::kCamelCase ? !IsLower(name.front()) : !IsUpper(name.front())) {
        return false;
      }
      return std::all_of(name.begin(), name.end(),
                         [](char c) { return IsLower(c) || IsUpper(c) || IsDigit(c); });
    case NameStyle::kLowerCase:
      return std::none_of(name.begin(), name.end(), IsUpper);
    case NameStyle::kUpperCase:
      return std::none_of(name.begin(), name.end(), IsLower);
  }
  return true;
}

// The words of a name: split at '_', '-', '.', ' ' and where a lower-case
// letter or digit is followed by an upper-case one ("invoiceLine").
std::vector<std::string> Words(std::string_view name) {
  std::vector<std::string> words;
  std::string w;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '_' || c == '-' || c == '.' || c == ' ') {
      if (!w.empty()) words.push_back(std::move(w));
      w.clear();
      continue;
    }
    if (IsUpper(c) && !w.empty() && (IsLower(w.back()) || IsDigit(w.back()))) {
      words.push_back(std::move(w));
      w.clear();
    }
    w.push_back(c);
  }
  if (!w.empty()) words.push_back(std::move(w));
  return words;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

const NameTable<NameKind>& NameKindNames() { return kNameKindTable; }
const NameTable<NameStyle>& NameStyleNames() { return kNameStyleTable; }

std::string NameRule::Where() const {
  if (file.empty()) return "the default policy";
  if (line <= 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

NamingPolicy NamingPolicy::Default() {
  NamingPolicy p;
  p.rule(NameKind::kFamily).max_bytes = 2;
  return p;
}

std::string ApplyNameStyle(NameStyle style, std::string_view name) {
  if (style == NameStyle::kAny) return std::string(name);
  if (style == NameStyle::kLowerCase) return Lower(std::string(name));
  if (style == NameStyle::kUpperCase) return Upper(std::string(name));
  std::string out;
  const std::vector<std::string> words = Words(name);
  for (size_t i = 0; i < words.size(); ++i) {
    std::string w = Lower(words[i]);
    if (style == NameStyle::kSnakeCase) {
      if (i > 0) out += '_';
      out += w;
    } else {
      if (i > 0 || style == NameStyle::kPascalCase) w[0] = static_cast<char>(std::toupper(w[0]));
      out += w;
    }
  }
  return out;
}

std::string NameProblem(const NamingPolicy& policy, NameKind kind, std::string_view name,
                        bool check_length) {
  const NameRule& r = policy.rule(kind);
  const std::string_view what = NameKindNames().Name(kind);
  const std::string where = r.Where();
  if (!r.allowed.empty() &&
      std::find(r.allowed.begin(), r.allowed.end(), name) == r.allowed.end()) {
    return fmt::format("{} '{}' is not one the policy allows ({}; {})", what, name,
                       fmt::join(r.allowed, ", "), where);
  }
  for (const auto* list : {&r.reserved_prefixes, &policy.reserved_prefixes}) {
    for (const std::string& p : *list) {
      if (!p.empty() && name.substr(0, p.size()) == p) {
        return fmt::format("{} '{}' starts with '{}', a prefix the policy reserves ({})", what,
                           name, p,
                           list == &r.reserved_prefixes ? where : "the policy's reserved_prefixes");
      }
    }
  }
  if (r.style != NameStyle::kAny && !FollowsStyle(r.style, name)) {
    return fmt::format("{} '{}' is not {} ({}; e.g. '{}')", what, name,
                       NameStyleNames().Name(r.style), where, ApplyNameStyle(r.style, name));
  }
  if (!r.pattern.empty()) {
    const std::unique_ptr<re2::RE2> re = CompilePattern(r.pattern);
    // A pattern that does not compile (the loader refuses those) matches nothing.
    const bool matched =
        re->ok() && re2::RE2::FullMatch(re2::StringPiece(name.data(), name.size()), *re);
    if (!matched) {
      return fmt::format("{} '{}' does not match the pattern '{}' ({})", what, name, r.pattern,
                         where);
    }
  }
  if (check_length && r.max_bytes > 0 && name.size() > static_cast<size_t>(r.max_bytes)) {
    return fmt::format("{} '{}' has {} bytes, more than the policy's max_bytes {} ({})", what, name,
                       name.size(), r.max_bytes, where);
  }
  if (check_length && name.size() < static_cast<size_t>(r.min_bytes)) {
    return fmt::format("{} '{}' has {} bytes, fewer than the policy's min_bytes {} ({})", what,
                       name, name.size(), r.min_bytes, where);
  }
  return "";
}

namespace mapping_internal {

namespace {

Status StringList(const YamlContext& ctx, const YAML::Node& map, const char* key,
                  std::vector<std::string>* out) {
  YAML::Node n = map[key];
  if (!n) return Status::OK();
  if (n.IsScalar()) {
    out->push_back(n.Scalar());
  } else {
    WIDEN_RETURN_IF_ERROR(ctx.CheckSequence(n, fmt::format("'{}'", key)));
    for (const auto& e : n) {
      if (!e.IsScalar() || e.Scalar().empty()) {
        return ctx.Error(e, fmt::format("'{}' holds names (non-empty text)", key));
      }
      out->push_back(e.Scalar());
    }
  }
  return Status::OK();
}

Status LoadRule(const YamlContext& ctx, const YAML::Node& n, NameKind kind, NameRule* r) {
  const std::string what = fmt::format("the policy's '{}'", NameKindNames().Name(kind));
  WIDEN_RETURN_IF_ERROR(ctx.CheckMap(n, what, "policy_rule"));
  const SourceLocation loc = ctx.Loc(n);
  r->file = loc.file;
  r->line = loc.line;
  r->column = loc.column;
  WIDEN_RETURN_IF_ERROR(ctx.OptionalString(n, "pattern", &r->pattern));
  if (!r->pattern.empty()) {
    const std::unique_ptr<re2::RE2> re = CompilePattern(r->pattern);
    if (!re->ok()) {
      return ctx.Error(n["pattern"], fmt::format("'pattern' is not a regular expression "
                                                 "(RE2 syntax: no backreferences or "
                                                 "lookaround): {}",
                                                 re->error()));
    }
  }
  if (n["style"]) {
    std::string style;
    WIDEN_RETURN_IF_ERROR(ctx.OptionalString(n, "style", &style));
    if (!NameStyleNames().Parse(style, &r->style)) {
      return ctx.Error(n["style"],
                       fmt::format("'style' must be {}, got '{}'{}", NameStyleNames().List(" or "),
                                   style, DidYouMean(style, NameStyleNames().Names())));
    }
  }
  int64_t lo = r->min_bytes, hi = r->max_bytes;
  WIDEN_RETURN_IF_ERROR(ctx.OptionalInt(n, "min_bytes", 0, 32767, &lo));
  WIDEN_RETURN_IF_ERROR(ctx.OptionalInt(n, "max_bytes", 1, 32767, &hi));
  if (hi > 0 && lo > hi) {
    return ctx.Error(n["min_bytes"],
                     fmt::format("'min_bytes' ({}) exceeds 'max_bytes' ({})", lo, hi));
  }
  r->min_bytes = static_cast<int>(lo);
  r->max_bytes = static_cast<int>(hi);
  WIDEN_RETURN_IF_ERROR(StringList(ctx, n, "allowed", &r->allowed));
  WIDEN_RETURN_IF_ERROR(StringList(ctx, n, "reserved_prefixes", &r->reserved_prefixes));
  return Status::OK();
}

}  // namespace

Status LoadPolicySection(const YamlContext& ctx, const YAML::Node& node, NamingPolicy* out) {
  WIDEN_RETURN_IF_ERROR(ctx.CheckMap(node, "the policy", "policy"));
  out->given = true;
  out->file = ctx.Loc(node).file;
  for (size_t k = 0; k < kNameKinds; ++k) {
    const NameKind kind = static_cast<NameKind>(k);
    const std::string key(NameKindNames().Name(kind));
    if (YAML::Node r = node[key]) {
      // A family rule without max_bytes keeps the default's 2 (W103).
      WIDEN_RETURN_IF_ERROR(LoadRule(ctx, r, kind, &out->rule(kind)));
    }
  }
  int64_t families = out->max_families;
  WIDEN_RETURN_IF_ERROR(ctx.OptionalInt(node, "max_families", 1, 100, &families));
  out->max_families = static_cast<int>(families);
  WIDEN_RETURN_IF_ERROR(StringList(ctx, node, "reserved_prefixes", &out->reserved_prefixes));
  return Status::OK();
}

}  // namespace mapping_internal

Result<NamingPolicy> ParsePolicy(const std::string& yaml_text, const std::string& file_name) {
  WIDEN_RETURN_IF_ERROR(mapping_internal::CheckYamlLimits(yaml_text, file_name));
  NamingPolicy policy = NamingPolicy::Default();
  try {
    YAML::Node root = YAML::Load(yaml_text);
    if (!root || root.IsNull()) {
      return Status::InvalidArgument(file_name + ": the policy is empty");
    }
    mapping_internal::YamlContext ctx(file_name);
    WIDEN_RETURN_IF_ERROR(mapping_internal::LoadPolicySection(ctx, root, &policy));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}:{}: invalid YAML: {}", file_name,
                                               e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  return policy;
}

Result<NamingPolicy> load_policy(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status::NotFound(fmt::format("{}: no such policy file", path));
  }
  std::ifstream in(path, std::ios::binary);
  std::string text(mapping_internal::kMaxMappingBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return Status::NotFound(fmt::format("{}: cannot read the policy file", path));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > mapping_internal::kMaxMappingBytes) {
    return Status::InvalidArgument(fmt::format("{}: the policy is more than 1 MiB", path));
  }
  return ParsePolicy(text, path);
}

}  // namespace widen
