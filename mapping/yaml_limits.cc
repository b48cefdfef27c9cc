#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <sstream>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "mapping/yaml_limits_internal.h"

namespace widen::mapping_internal {
namespace {

// Thrown by the handler to stop the parser at the first limit passed.
struct LimitPassed {
  Status status;
};

// Counts depth, expanded nodes and aliases as the events arrive.
class LimitCounter : public YAML::EventHandler {
 public:
  explicit LimitCounter(const std::string& file) : file_(file) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) {
      Fail(mark, "a second YAML document ('---'): a mapping file holds one document");
    }
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { Leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    Leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (++aliases_ > kMaxYamlAliases) {
      Fail(mark, fmt::format("more than {} aliases ('*name'): a limit of widen's mapping reader",
                             kMaxYamlAliases));
    }
    const auto it = anchor_nodes_.find(anchor);
    if (it == anchor_nodes_.end()) {
      // yaml-cpp reports an undefined anchor itself; a known one that is not
      // finished yet is a node being defined: the alias would be a cycle.
      for (const Frame& f : open_) {
        if (f.anchor == anchor) Fail(mark, "an alias refers to a node that contains it (a cycle)");
      }
      return;
    }
    Add(mark, it->second);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Start(mark, anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Start(mark, anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    YAML::anchor_t anchor;  // 0 = none
    uint64_t nodes_before;  // nodes_ when the collection started
  };

  [[noreturn]] void Fail(const YAML::Mark& mark, const std::string& what) const {
    throw LimitPassed{Status::InvalidArgument(
        fmt::format("{}:{}:{}: {}", file_, mark.line + 1, mark.column + 1, what))};
  }
  void Add(const YAML::Mark& mark, uint64_t n) {
    nodes_ += n;
    if (nodes_ > kMaxYamlNodes) {
      Fail(mark, fmt::format("the mapping holds more than {} YAML nodes (each alias counts the "
                             "nodes it repeats): a limit of widen's mapping reader",
                             kMaxYamlNodes));
    }
  }
  void Leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    Add(mark, 1);
    if (anchor != YAML::NullAnchor) anchor_nodes_[anchor] = 1;
  }
  void Start(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (static_cast<int>(open_.size()) >= kMaxYamlDepth) {
      Fail(mark, fmt::format("lists and maps nest more than {} deep: a limit of widen's mapping "
                             "reader",
                             kMaxYamlDepth));
    }
    Add(mark, 1);
    open_.push_back(Frame{anchor, nodes_ - 1});
  }
  void Close() {
    if (open_.empty()) return;
    const Frame o = open_.back();
    open_.pop_back();
    if (o.anchor != YAML::NullAnchor) anchor_nodes_[o.anchor] = nodes_ - o.nodes_before;
  }

  const std::string& file_;
  std::vector<Frame> open_;
  std::unordered_map<YAML::anchor_t, uint64_t> anchor_nodes_;  // finished anchors
  uint64_t nodes_ = 0;
  uint64_t aliases_ = 0;
  int documents_ = 0;
};

// The length of the UTF-8 sequence at the front of `in` and its code point,
// or 0 when it is not well-formed UTF-8 (overlong forms, surrogates and
// code points beyond U+10FFFF are not).
size_t Utf8Char(std::string_view in, uint32_t* cp) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(in[i]); };
  const unsigned char c = b(0);
  size_t n;
  uint32_t min;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if ((c & 0xE0) == 0xC0) {
    n = 2, min = 0x80, *cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, min = 0x800, *cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, min = 0x10000, *cp = c & 0x07;
  } else {
    return 0;
  }
  if (in.size() < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
    *cp = (*cp << 6) | (b(i) & 0x3F);
  }
  if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return 0;
  return n;
}

// YAML's printable characters (YAML 1.2, c-printable): tab, line breaks,
// the printable ASCII range and the non-control ranges of Unicode.
bool YamlPrintable(uint32_t cp) {
  return cp == 0x09 || cp == 0x0A || cp == 0x0D || (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 ||
         (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
}

}  // namespace

Status CheckYamlText(std::string_view yaml_text, const std::string& file_name) {
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < yaml_text.size();) {
    uint32_t cp = 0;
    const size_t n = Utf8Char(yaml_text.substr(i), &cp);
    if (n == 0 || !YamlPrintable(cp)) {
      return Status::InvalidArgument(fmt::format(
          "{}:{}:{}: {} {}: a mapping is UTF-8 text of YAML's printable characters (no control "
          "characters but tab and line breaks); is it the right file?",
          file_name, line, i - line_start + 1, n == 0 ? "byte" : "character",
          n == 0 ? fmt::format("0x{:02X} is not UTF-8", static_cast<unsigned char>(yaml_text[i]))
                 : fmt::format("U+{:04X} is not printable", cp)));
    }
    if (cp == '\n') {
      ++line;
      line_start = i + 1;
    }
    i += n;
  }
  return Status::OK();
}

Status CheckYamlLimits(const std::string& yaml_text, const std::string& file_name) {
  if (yaml_text.size() > kMaxMappingBytes) {
    return Status::InvalidArgument(
        fmt::format("{}: the mapping is {} bytes, more than the limit of 1 MiB ({} bytes); is it "
                    "the right file?",
                    file_name, yaml_text.size(), kMaxMappingBytes));
  }
  WIDEN_RETURN_IF_ERROR(CheckYamlText(yaml_text, file_name));
  std::istringstream in(yaml_text);
  LimitCounter counter(file_name);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(counter)) {
    }
  } catch (const LimitPassed& passed) {
    return passed.status;
  } catch (const YAML::Exception&) {
    return Status::OK();  // a syntax error: the tree loader names it
  }
  return Status::OK();
}

}  // namespace widen::mapping_internal
