#include <pqxx/except>

#include <cctype>
#include <vector>

#include "extract/pg_errors_internal.h"

namespace widen::pg_internal {

StatusCode CodeForSqlState(std::string_view s) {
  if (s.size() != 5) return StatusCode::kInvalidArgument;
  const std::string_view cls = s.substr(0, 2);
  if (cls == "08") return StatusCode::kUnavailable;
  if (cls == "28") return StatusCode::kUnauthenticated;
  if (s == "42501") return StatusCode::kPermissionDenied;
  if (s == "3D000") return StatusCode::kNotFound;
  if (cls == "40" || cls == "53" || cls == "57" || cls == "58" || s == "55P03" || s == "55006") {
    return StatusCode::kUnavailable;
  }
  if (cls == "XX") return StatusCode::kInternal;
  return StatusCode::kInvalidArgument;
}

std::string SqlStateOf(const std::exception& e) {
  if (const auto* se = dynamic_cast<const pqxx::sql_error*>(&e)) {
    if (!se->sqlstate().empty()) return se->sqlstate();
    // libpqxx 6 leaves the state out of some of its typed errors.
    if (dynamic_cast<const pqxx::insufficient_privilege*>(&e) != nullptr) return "42501";
    if (dynamic_cast<const pqxx::disk_full*>(&e) != nullptr) return "53100";
    if (dynamic_cast<const pqxx::out_of_memory*>(&e) != nullptr) return "53200";
    if (dynamic_cast<const pqxx::insufficient_resources*>(&e) != nullptr) return "53000";
    if (dynamic_cast<const pqxx::undefined_table*>(&e) != nullptr) return "42P01";
    if (dynamic_cast<const pqxx::undefined_column*>(&e) != nullptr) return "42703";
    if (dynamic_cast<const pqxx::undefined_function*>(&e) != nullptr) return "42883";
    if (dynamic_cast<const pqxx::syntax_error*>(&e) != nullptr) return "42601";
    return "";
  }
  if (dynamic_cast<const pqxx::too_many_connections*>(&e) != nullptr) return "53300";
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) return "08007";
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) return "08006";
  if (dynamic_cast<const pqxx::serialization_failure*>(&e) != nullptr) return "40001";
  if (dynamic_cast<const pqxx::deadlock_detected*>(&e) != nullptr) return "40P01";
  if (dynamic_cast<const pqxx::statement_completion_unknown*>(&e) != nullptr) return "40003";
  if (dynamic_cast<const pqxx::transaction_rollback*>(&e) != nullptr) return "40000";
  return "";
}

namespace {

bool IsStateChar(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'A' && c <= 'Z');
}

// Fields PQERRORS_VERBOSE adds on lines of their own.
constexpr std::string_view kVerboseFields[] = {
    "LOCATION:  ",    "SCHEMA NAME:  ",   "TABLE NAME:  ",
    "COLUMN NAME:  ", "DATATYPE NAME:  ", "CONSTRAINT NAME:  "};

}  // namespace

std::string FromVerboseMessage(std::string_view message, std::string* sqlstate) {
  sqlstate->clear();
  std::string out;
  size_t start = 0;
  while (start < message.size()) {
    size_t end = message.find('\n', start);
    const bool has_newline = end != std::string_view::npos;
    if (!has_newline) end = message.size();
    std::string line(message.substr(start, end - start));
    start = end + 1;
    bool drop = false;
    for (std::string_view f : kVerboseFields) drop = drop || line.rfind(f, 0) == 0;
    if (drop) continue;
    // "SEVERITY:  XXXXX: text": the state follows the first ":  " of a
    // server error (the line may start with libpq's "connection to server
    // at ... failed: ").
    for (size_t p = line.find(":  "); p != std::string::npos; p = line.find(":  ", p + 1)) {
      const size_t s = p + 3;
      if (s + 7 > line.size() || line[s + 5] != ':' || line[s + 6] != ' ') continue;
      // The severity before it: a word of capitals (or of a translation's
      // letters), at the start of the line or after a space.
      size_t w = p;
      while (w > 0 && line[w - 1] != ' ') --w;
      bool severity = w < p;
      for (size_t i = w; i < p; ++i) {
        const unsigned char ch = static_cast<unsigned char>(line[i]);
        severity = severity && ((ch >= 'A' && ch <= 'Z') || ch >= 0x80);
      }
      if (!severity) continue;
      bool state = true;
      for (size_t i = s; i < s + 5; ++i) state = state && IsStateChar(line[i]);
      if (!state) continue;
      if (sqlstate->empty()) *sqlstate = line.substr(s, 5);
      line.erase(s, 7);
      break;
    }
    out += line;
    if (has_newline) out += '\n';
  }
  return out;
}

std::string WithoutQueryPointer(std::string_view message) {
  std::string out;
  size_t start = 0;
  while (start < message.size()) {
    size_t end = message.find('\n', start);
    const bool has_newline = end != std::string_view::npos;
    if (!has_newline) end = message.size();
    const std::string_view line = message.substr(start, end - start);
    start = end + 1;
    // "LINE " digits ":"
    size_t d = 5;
    while (d < line.size() && line[d] >= '0' && line[d] <= '9') ++d;
    const bool pointer_line =
        line.rfind("LINE ", 0) == 0 && d > 5 && d < line.size() && line[d] == ':';
    const size_t caret = line.find_first_not_of(' ');
    const bool caret_line = caret != std::string_view::npos && line[caret] == '^' &&
                            line.find_first_not_of(' ', caret + 1) == std::string_view::npos;
    if (pointer_line || caret_line) continue;
    out += line;
    if (has_newline) out += '\n';
  }
  return out;
}

}  // namespace widen::pg_internal
