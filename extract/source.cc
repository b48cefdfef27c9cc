#include "extract/source.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "extract/source_internal.h"
#include "extract/source_stats.h"

namespace widen {

const SourceColumn* SourceTable::FindColumn(const std::string& n) const {
  for (const auto& c : columns) {
    if (c.name == n) return &c;
  }
  return nullptr;
}

const SourceTable* SourceSchema::FindTable(const std::string& n) const {
  for (const auto& t : tables) {
    if (t.name == n) return &t;
  }
  return nullptr;
}

std::vector<size_t> MergeKeyIndexes(const ScanSpec& spec, size_t link) {
  size_t first = spec.columns.size();
  for (size_t i = 0; i < link; ++i) first += spec.merge[i].on.size();
  std::vector<size_t> out;
  for (size_t i = 0; i < spec.merge[link].on.size(); ++i) out.push_back(first + i);
  return out;
}

namespace {

// The first word of a type name, lower case ("bigint" of "BIGINT(20) UNSIGNED"),
// and the number in parentheses right after it (-1 when none).
std::string TypeWord(const std::string& type, int* n) {
  std::string word;
  size_t i = 0;
  for (; i < type.size() && type[i] != '(' && type[i] != ' '; ++i) {
    word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(type[i]))));
  }
  *n = -1;
  if (i < type.size() && type[i] == '(') {
    int v = 0;
    size_t j = i + 1;
    for (; j < type.size() && std::isdigit(static_cast<unsigned char>(type[j])); ++j) {
      v = v * 10 + (type[j] - '0');
    }
    if (j > i + 1 && j < type.size() && type[j] == ')') *n = v;
  }
  return word;
}

bool HasWord(const std::string& type, std::string_view word) {
  std::string lower;
  for (char c : type)
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  for (size_t p = lower.find(word); p != std::string::npos; p = lower.find(word, p + 1)) {
    const bool start = p == 0 || lower[p - 1] == ' ' || lower[p - 1] == ')';
    const bool end = p + word.size() == lower.size() || lower[p + word.size()] == ' ';
    if (start && end) return true;
  }
  return false;
}

}  // namespace

std::optional<IntegerRange> DeclaredIntegerRange(const SourceColumn& c) {
  if (!IsIntegerType(c.type)) return std::nullopt;
  int n = -1;
  const std::string word = TypeWord(c.storage_type(), &n);
  int bits = 0;
  bool is_unsigned = HasWord(c.storage_type(), "unsigned");
  if (word == "tinyint") {
    bits = 8;
  } else if (word == "smallint" || word == "int2" || word == "smallserial") {
    bits = 16;
  } else if (word == "mediumint") {
    bits = 24;
  } else if (word == "int" || word == "integer" || word == "int4" || word == "serial") {
    bits = 32;
  } else if (word == "bigint" || word == "int8" || word == "bigserial") {
    bits = 64;
  } else if (word == "oid") {
    bits = 32;
    is_unsigned = true;
  } else if (word == "bit") {
    bits = n > 0 && n <= 64 ? n : 64;  // MySQL BIT(n); BIT alone is BIT(1), unknown in a query
    is_unsigned = true;
  } else if (word == "year") {
    return IntegerRange{0, 2155};
  } else {
    return std::nullopt;
  }
  if (is_unsigned) {
    return IntegerRange{0, bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1};
  }
  return IntegerRange{bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1)),
                      (uint64_t{1} << (bits - 1)) - 1};
}

bool IsSinglePrecision(const SourceColumn& c) {
  if (c.type != ValueType::kFloat) return false;
  int n = -1;
  const std::string word = TypeWord(c.storage_type(), &n);
  return word == "real" || word == "float4" || word == "float";
}

Result<SourceTable> Source::DescribeQuery(const std::string&) {
  return Status::InvalidArgument("free-form queries are not supported by the " + dialect() +
                                 " source yet");
}

Status Source::CheckScan(const ScanSpec& spec) { return Scan(spec).status(); }

Status Source::CheckTableReadable(const std::string&) { return Status::OK(); }

Source::Source() = default;
Source::~Source() = default;

SourceStats& Source::stats() {
  if (unsupported_stats_ == nullptr)
    unsupported_stats_ = std::make_unique<UnsupportedStats>(dialect());
  return *unsupported_stats_;
}

Result<std::vector<GroupCount>> SourceStats::LargestLinkGroups(const ScanSpec&,
                                                               const std::vector<size_t>&, int) {
  return Status::InvalidArgument("counting rows per nest link is not supported by this source");
}

Result<Value> SourceStats::HighestValue(const ScanSpec& spec, const ColumnExpr& column) {
  WIDEN_ASSIGN_OR_RETURN(ColumnSummary s, SummarizeColumn(spec, column));
  return s.max;
}

Result<std::vector<GroupCount>> UnsupportedStats::LargestGroups(const ScanSpec&,
                                                                const std::vector<ColumnExpr>&,
                                                                int) {
  return Status::InvalidArgument("counting rows per group is not supported by the " + dialect_ +
                                 " source");
}

Result<ColumnSummary> UnsupportedStats::SummarizeColumn(const ScanSpec&, const ColumnExpr&) {
  return Status::InvalidArgument("summarizing a column is not supported by the " + dialect_ +
                                 " source");
}

Result<std::vector<std::unique_ptr<Source>>> Source::OpenSiblings(int, const SourceReads&) {
  return Status::FailedPrecondition(
      fmt::format("the {} source cannot share its snapshot with parallel jobs", dialect()));
}

std::vector<std::pair<size_t, size_t>> PasswordSpans(std::string_view text) {
  std::vector<std::pair<size_t, size_t>> spans;
  // password=VALUE in a query string or a keyword/value connection string.
  for (size_t p = text.find("password="); p != std::string_view::npos;
       p = text.find("password=", p + 1)) {
    const size_t v = p + 9;
    const size_t end = text.find_first_of("& ", v);
    spans.emplace_back(v, (end == std::string_view::npos ? text.size() : end) - v);
  }
  // user:password@ in a URL; the password may itself hold '@' or ':'.
  const size_t scheme = text.find("://");
  if (scheme != std::string_view::npos) {
    const size_t query = text.find('?', scheme + 3);
    const size_t at = text.rfind('@', query == std::string_view::npos ? text.npos : query);
    const size_t colon = text.find(':', scheme + 3);
    if (at != std::string_view::npos && at > scheme + 3 && colon != std::string_view::npos &&
        colon < at) {
      spans.emplace_back(colon + 1, at - colon - 1);
    }
  }
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<size_t, size_t>> merged;
  for (const auto& s : spans) {
    if (!merged.empty() && s.first <= merged.back().first + merged.back().second) {
      auto& m = merged.back();
      m.second = std::max(m.first + m.second, s.first + s.second) - m.first;
    } else {
      merged.push_back(s);
    }
  }
  return merged;
}

std::string MaskUrl(const std::string& url) {
  std::string out = url;
  const auto spans = PasswordSpans(url);
  for (auto it = spans.rbegin(); it != spans.rend(); ++it)
    out.replace(it->first, it->second, "***");
  return out;
}

namespace {

// `s` with %XX escapes decoded (a bad escape is kept as it is).
std::string PercentDecoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    auto hex = [](char c) {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::string WithoutPassword(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme != std::string::npos) {
    std::string out = url;
    // user:password@ (the password may hold '@' or ':').
    size_t query = out.find('?', scheme + 3);
    const size_t at = out.rfind('@', query == std::string::npos ? out.npos : query);
    const size_t colon = out.find(':', scheme + 3);
    if (at != std::string::npos && at > scheme + 3 && colon != std::string::npos && colon < at) {
      out.erase(colon, at - colon);
    }
    query = out.find('?', scheme + 3);
    if (query == std::string::npos) return out;
    const size_t end = std::min(out.find('#', query), out.size());
    std::vector<std::string> kept;
    const std::string params = out.substr(query + 1, end - query - 1);
    for (size_t p = 0; p <= params.size();) {
      size_t amp = params.find('&', p);
      if (amp == std::string::npos) amp = params.size();
      const std::string param = params.substr(p, amp - p);
      if (PercentDecoded(param.substr(0, param.find('='))) != "password" && !param.empty()) {
        kept.push_back(param);
      }
      p = amp + 1;
    }
    return out.substr(0, query) +
           (kept.empty() ? "" : "?" + fmt::format("{}", fmt::join(kept, "&"))) + out.substr(end);
  }
  if (url.find('=') == std::string::npos) return url;
  // Keyword/value: key = value, a value 'quoted' (with \' and \\) or up to white space.
  std::vector<std::string> kept;
  size_t i = 0;
  auto blank = [&](size_t k) {
    return k < url.size() && std::isspace(static_cast<unsigned char>(url[k]));
  };
  while (i < url.size()) {
    while (blank(i)) ++i;
    if (i >= url.size()) break;
    const size_t start = i;
    while (i < url.size() && url[i] != '=' && !blank(i)) ++i;
    const std::string key = url.substr(start, i - start);
    while (blank(i)) ++i;
    if (i < url.size() && url[i] == '=') {
      ++i;
      while (blank(i)) ++i;
      if (i < url.size() && url[i] == '\'') {
        for (++i; i < url.size() && url[i] != '\''; ++i) {
          if (url[i] == '\\') ++i;
        }
        if (i < url.size()) ++i;
      } else {
        while (i < url.size() && !blank(i)) ++i;
      }
    }
    if (key != "password") kept.push_back(url.substr(start, i - start));
  }
  return fmt::format("{}", fmt::join(kept, " "));
}

std::string ScrubSecrets(std::string message, const std::string& url) {
  const std::string masked = MaskUrl(url);
  for (size_t p = message.find(url); !url.empty() && p != std::string::npos;
       p = message.find(url, p + masked.size())) {
    message.replace(p, url.size(), masked);
  }
  // The password itself, wherever a library echoed it.
  for (const auto& [offset, length] : PasswordSpans(url)) {
    if (length < 3) continue;  // too short to scrub without mangling the text
    const std::string secret = url.substr(offset, length);
    for (size_t p = message.find(secret); p != std::string::npos; p = message.find(secret, p + 3)) {
      message.replace(p, secret.size(), "***");
    }
  }
  return message;
}

namespace source_internal {

ScanSpec Unordered(const ScanSpec& spec, std::vector<ColumnExpr> columns) {
  ScanSpec s = spec;
  s.columns = std::move(columns);
  s.order_by.clear();
  s.unique_key.clear();
  s.merge.clear();
  return s;
}

ScanSpec OverQuery(std::string sql, const std::vector<std::string>& names) {
  ScanSpec s;
  s.query = std::move(sql);
  s.alias = "widen_q";
  for (const auto& n : names) s.columns.push_back(ColumnExpr{s.alias, n, false});
  return s;
}

Result<std::vector<GroupCount>> ReadGroups(RowStream* rows) {
  std::vector<GroupCount> groups;
  for (; rows->Valid(); rows->Next()) {
    const Row& r = rows->row();
    GroupCount g;
    g.key.values.assign(r.values.begin(), r.values.end() - 1);
    g.rows = r.values.back().as_int();
    groups.push_back(std::move(g));
  }
  WIDEN_RETURN_IF_ERROR(rows->status());
  return groups;
}

Result<ColumnSummary> ReadSummary(RowStream* rows) {
  ColumnSummary s;
  if (rows->Valid()) {
    const Row& r = rows->row();
    s.min = r[0];
    s.max = r[1];
    s.rows = r[2].as_int();
    s.non_null = r[3].as_int();
  }
  WIDEN_RETURN_IF_ERROR(rows->status());
  return s;
}

std::string SqlForMessage(const std::string& sql) {
  if (sql.size() <= kSqlInMessageBytes) return sql;
  size_t cut = kSqlInMessageBytes;
  // Not inside a UTF-8 sequence: back to the byte that starts one.
  while (cut > 0 && (static_cast<unsigned char>(sql[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("{}... ({} bytes in all)", sql.substr(0, cut), sql.size());
}

}  // namespace source_internal

}  // namespace widen
