#include "transform/qualifier_check.h"

#include <bitset>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "common/bytes.h"

namespace widen {

namespace {

using ByteSet = std::bitset<256>;

ByteSet All() { return ByteSet().set(); }
ByteSet One(unsigned char c) { return ByteSet().set(c); }
ByteSet Chars(std::string_view cs) {
  ByteSet b;
  for (unsigned char c : cs) b.set(c);
  return b;
}
ByteSet Digits() { return Chars("0123456789"); }
ByteSet Inverted(const ByteSet& b) {
  ByteSet r;
  for (int i = 0; i < 256; ++i) {
    if (b.test(i)) r.set(255 - i);
  }
  return r;
}

// A deterministic automaton over bytes, state 0 initial; a fragment that an
// Nfa appends after its current tail states.
struct Dfa {
  struct Move {
    int from;
    ByteSet on;
    int to;
  };
  int states = 1;
  std::vector<Move> moves;
  std::vector<int> finals;

  int Add() { return states++; }
  void On(int from, const ByteSet& on, int to) { moves.push_back(Move{from, on, to}); }

  // Inverts every byte (the `desc` modifier).
  Dfa Inverted() const {
    Dfa d = *this;
    for (auto& m : d.moves) m.on = widen::Inverted(m.on);
    return d;
  }
};

// `c` repeated min times, then any number more when `unbounded`.
Dfa Repeat(const ByteSet& c, int min, bool unbounded) {
  Dfa d;
  int at = 0;
  for (int i = 0; i < min; ++i) {
    const int next = d.Add();
    d.On(at, c, next);
    at = next;
  }
  if (unbounded) {
    if (min == 0) {
      const int loop = d.Add();
      d.On(0, c, loop);
      d.On(loop, c, loop);
      d.finals = {0, loop};
      return d;
    }
    d.On(at, c, at);
  }
  d.finals = {at};
  return d;
}

Dfa Literal(std::string_view s) {
  Dfa d;
  int at = 0;
  for (unsigned char c : s) {
    const int next = d.Add();
    d.On(at, One(c), next);
    at = next;
  }
  d.finals = {at};
  return d;
}

// Any bytes (possibly none) that do not contain `sep` (a text key part: the
// codec refuses values holding the separator). A KMP automaton.
Dfa WithoutSeparator(std::string_view sep) {
  if (sep.empty()) return Repeat(All(), 0, true);
  const int m = static_cast<int>(sep.size());
  std::vector<int> fail(m, 0);
  for (int i = 1, k = 0; i < m; ++i) {
    while (k > 0 && sep[i] != sep[k]) k = fail[k - 1];
    if (sep[i] == sep[k]) ++k;
    fail[i] = k;
  }
  auto step = [&](int k, unsigned char b) {
    while (k > 0 && static_cast<unsigned char>(sep[k]) != b) k = fail[k - 1];
    if (static_cast<unsigned char>(sep[k]) == b) ++k;
    return k;
  };
  Dfa d;
  for (int k = 1; k < m; ++k) d.Add();
  for (int k = 0; k < m; ++k) {
    std::vector<ByteSet> to(m);
    for (int b = 0; b < 256; ++b) {
      const int next = step(k, static_cast<unsigned char>(b));
      if (next < m) to[next].set(b);
    }
    for (int n = 0; n < m; ++n) {
      if (to[n].any()) d.On(k, to[n], n);
    }
    d.finals.push_back(k);
  }
  return d;
}

// ordered::PutString: every 0x00 as 0x00 0xFF, then 0x00 0x01.
Dfa BinaryString() {
  Dfa d;
  const int zero = d.Add(), end = d.Add();
  ByteSet nonzero = All();
  nonzero.reset(0);
  d.On(0, nonzero, 0);
  d.On(0, One(0x00), zero);
  d.On(zero, One(0xff), 0);
  d.On(zero, One(0x01), end);
  d.finals = {end};
  return d;
}

// ordered::PutDecimal: 0x02 (zero); 0x03, 4 exponent bytes, digits, 0x00;
// 0x01, 4 exponent bytes, inverted digits, 0xFF.
Dfa BinaryDecimal() {
  Dfa d;
  const int zero = d.Add();
  d.On(0, One(0x02), zero);
  std::vector<int> finals = {zero};
  for (bool negative : {false, true}) {
    int at = d.Add();
    d.On(0, One(negative ? 0x01 : 0x03), at);
    for (int i = 0; i < 4; ++i) {
      const int next = d.Add();
      d.On(at, All(), next);
      at = next;
    }
    const ByteSet digits = negative ? Inverted(Digits()) : Digits();
    d.On(at, digits, at);
    const int end = d.Add();
    d.On(at, One(negative ? 0xff : 0x00), end);
    finals.push_back(end);
  }
  d.finals = finals;
  return d;
}

// One of several byte strings (layout cells: the attribute names).
Dfa OneOf(const std::vector<std::string>& words) {
  Dfa d;
  std::vector<std::unordered_map<unsigned char, int>> trie(1);
  for (const auto& w : words) {
    int at = 0;
    for (unsigned char c : w) {
      auto it = trie[at].find(c);
      if (it == trie[at].end()) {
        const int next = d.Add();
        trie.emplace_back();
        trie[at][c] = next;
        d.On(at, One(c), next);
        at = next;
      } else {
        at = it->second;
      }
    }
    d.finals.push_back(at);
  }
  return d;
}

// A nondeterministic automaton without empty moves, built by appending
// fragments after a set of tail states; several sources of qualifiers live
// in one Nfa, each from its own start state.
class Nfa {
 public:
  struct Edge {
    ByteSet on;
    int to;
  };
  struct State {
    std::vector<Edge> edges;
    int source = -1;  // which source of qualifiers it belongs to
    int accept = -1;  // when a qualifier may end here: the source's label (>= 0)
  };

  int Start(int source) {
    states_.push_back(State{{}, source, -1});
    return static_cast<int>(states_.size()) - 1;
  }

  // Appends `d` after every state of *tails; *tails becomes its final states.
  void Append(const Dfa& d, std::vector<int>* tails) {
    const int source = states_[tails->front()].source;
    std::vector<int> real(d.states, -1);
    for (int i = 1; i < d.states; ++i) real[i] = Start(source);
    for (const auto& m : d.moves) {
      if (m.to == 0) {
        // Back to the fragment's start: it needs a state of its own.
        if (real[0] < 0) real[0] = Start(source);
      }
    }
    for (const auto& m : d.moves) {
      const int to = real[m.to];
      if (m.from == 0) {
        for (int t : *tails) states_[t].edges.push_back(Edge{m.on, to});
        if (real[0] >= 0) states_[real[0]].edges.push_back(Edge{m.on, to});
      } else {
        states_[real[m.from]].edges.push_back(Edge{m.on, to});
      }
    }
    std::vector<int> next;
    for (int f : d.finals) {
      if (f == 0) {
        next.insert(next.end(), tails->begin(), tails->end());
        if (real[0] >= 0) next.push_back(real[0]);
      } else {
        next.push_back(real[f]);
      }
    }
    *tails = next;
  }

  void Accept(std::span<const int> tails, int label) {
    for (int t : tails) states_[t].accept = label;
  }

  const State& state(int i) const { return states_[i]; }
  size_t size() const { return states_.size(); }

 private:
  std::vector<State> states_;
};

// A source of qualifiers: a plain column, or a nest at some depth.
struct Source {
  std::string family;
  std::string what;  // for messages
  SourceLocation loc;
  int start = -1;
};

// The bytes a text key part's value can be written as (Value::AppendText,
// zero-padded integers, reversed timestamps).
Dfa TextPart(const KeyPartPlan& p, std::string_view separator) {
  if (p.is_literal) return Literal(p.literal);
  if (p.reverse) return Repeat(Digits(), 19, false);
  // An integer: an optional '-' and digits; zero-padded to `width`, exactly
  // `width` digits (the codec refuses negative and wider values there).
  auto digits = [&](bool may_be_negative) {
    if (p.width > 0) return Repeat(Digits(), p.width, false);
    Dfa d;
    const int sign = d.Add();
    if (may_be_negative) d.On(0, One('-'), sign);
    const int body = d.Add();
    d.On(0, Digits(), body);
    d.On(sign, Digits(), body);
    d.On(body, Digits(), body);
    d.finals = {body};
    return d;
  };
  switch (p.value_type) {
    case ValueType::kInt:
      return digits(true);
    case ValueType::kUInt:
      return digits(false);
    case ValueType::kBool:
      return OneOf({"true", "false"});
    case ValueType::kFloat:
      return Repeat(Chars("0123456789.eE+-NaInfity"), 1, true);
    case ValueType::kDecimal:
      return Repeat(Chars("0123456789.-NaInfity"), 1, true);
    case ValueType::kDate:
    case ValueType::kTime:
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz:
      return Repeat(Chars("0123456789-:. TZ+infty"), 1, true);
    default:
      return WithoutSeparator(separator);
  }
}

// The bytes of a binary key part (transform/ordered_bytes.h), `desc` applied.
Dfa BinaryPart(const KeyPartPlan& p) {
  if (p.is_literal) return Literal(p.literal);
  Dfa d;
  switch (p.type) {
    case KeyType::kString:
    case KeyType::kBytes:
      d = p.width > 0 ? Repeat(All(), p.width, false) : BinaryString();
      break;
    case KeyType::kDecimal:
      d = BinaryDecimal();
      break;
    case KeyType::kBool:
      d = Repeat(Chars(std::string_view("\x00\x01", 2)), 1, false);
      break;
    default:
      d = Repeat(All(), KeyTypeBytes(p.type), false);
  }
  return p.desc ? d.Inverted() : d;
}

// Appends the qualifier bytes of `codec` (a nest's id) after *tails.
void AppendId(const KeyCodec& codec, Nfa* nfa, std::vector<int>* tails) {
  const bool text = codec.form() == KeyForm::kText;
  for (size_t i = 0; i < codec.parts().size(); ++i) {
    const KeyPartPlan& p = codec.parts()[i];
    if (text && i > 0) nfa->Append(Literal(codec.separator()), tails);
    if (!text && p.null_marker && !p.is_literal) {
      // 0x00 for NULL, or 0x01 and the value (both inverted when desc).
      std::vector<int> null_tails = *tails;
      nfa->Append(Literal(std::string(1, p.desc ? '\xff' : '\x00')), &null_tails);
      nfa->Append(Literal(std::string(1, p.desc ? '\xfe' : '\x01')), tails);
      nfa->Append(BinaryPart(p), tails);
      tails->insert(tails->end(), null_tails.begin(), null_tails.end());
      continue;
    }
    nfa->Append(text ? TextPart(p, codec.separator()) : BinaryPart(p), tails);
  }
}

class Checker {
 public:
  explicit Checker(const TablePlan& plan) : plan_(plan) {}

  Status Run() {
    const TableMapping& t = *plan_.mapping;
    for (size_t i = 0; i < plan_.cells.size() && i < t.columns.size(); ++i) {
      const CellPlan& c = plan_.cells[i];
      const int s =
          NewSource(c.family, fmt::format("column '{}:{}'", c.family, ToStringBinary(c.qualifier)),
                    t.columns[i].loc);
      std::vector<int> tails = {sources_[s].start};
      nfa_.Append(Literal(c.qualifier), &tails);
      nfa_.Accept(tails, s);
    }
    for (const NestPlan& n : plan_.nests) AddNest(n, nullptr, {});
    return Search();
  }

 private:
  int NewSource(const std::string& family, std::string what, const SourceLocation& loc) {
    const int index = static_cast<int>(sources_.size());
    sources_.push_back(Source{family, std::move(what), loc, -1});
    sources_.back().start = nfa_.Start(index);
    return index;
  }

  // Adds the qualifiers of nest `n`; `outer` builds its parent's qualifier
  // (prefix + id) after a start state, for a nest at the second level.
  void AddNest(const NestPlan& n, const NestPlan* parent, std::span<const NestPlan* const> up) {
    std::string what =
        fmt::format("the nest of '{}' (prefix '{}'", n.spec->table, ToStringBinary(n.prefix));
    if (parent != nullptr) what += fmt::format(", under the nest of '{}'", parent->spec->table);
    what += n.layout == NestLayout::kCells ? ", layout cells)" : ")";
    const int s = NewSource(n.family, what, n.spec->loc);
    std::vector<int> tails = {sources_[s].start};
    for (const NestPlan* u : up) {
      nfa_.Append(Literal(u->prefix), &tails);
      AppendId(u->qualifier, &nfa_, &tails);
    }
    nfa_.Append(Literal(n.prefix), &tails);
    AppendId(n.qualifier, &nfa_, &tails);
    if (n.layout == NestLayout::kCells) {
      std::vector<std::string> names;
      for (const auto& [name, index] : n.value_columns) names.push_back(name);
      nfa_.Append(Literal(n.attribute_separator), &tails);
      nfa_.Append(OneOf(names), &tails);
    }
    nfa_.Accept(tails, s);
    std::vector<const NestPlan*> path(up.begin(), up.end());
    path.push_back(&n);
    for (const NestPlan& g : n.children) AddNest(g, &n, path);
  }

  // A state of the product of the automaton with itself: two runs over
  // one input, and whether they have parted.
  struct Pair {
    int a, b;
    bool parted;
  };
  static uint64_t Key(const Pair& p) {
    return (static_cast<uint64_t>(p.a) << 33) | (static_cast<uint64_t>(p.b) << 1) |
           (p.parted ? 1 : 0);
  }

  // A readable byte of `on` for the example: a digit, a letter, else the lowest.
  static unsigned char Pick(const ByteSet& on) {
    for (unsigned char c : std::string_view("1a2b0xyz")) {
      if (on.test(c)) return c;
    }
    for (int c = 0x21; c < 0x7f; ++c) {
      if (on.test(c)) return static_cast<unsigned char>(c);
    }
    for (int c = 0; c < 256; ++c) {
      if (on.test(c)) return static_cast<unsigned char>(c);
    }
    return 0;
  }

  Status Search() {
    struct Seen {
      uint64_t parent;
      unsigned char byte;
      bool root;
    };
    std::unordered_map<uint64_t, Seen> seen;
    std::deque<Pair> todo;
    for (size_t i = 0; i < sources_.size(); ++i) {
      for (size_t j = i; j < sources_.size(); ++j) {
        if (sources_[i].family != sources_[j].family) continue;
        Pair p{sources_[i].start, sources_[j].start, i != j};
        if (seen.emplace(Key(p), Seen{0, 0, true}).second) todo.push_back(p);
      }
    }
    while (!todo.empty()) {
      const Pair p = todo.front();
      todo.pop_front();
      const auto& sa = nfa_.state(p.a);
      const auto& sb = nfa_.state(p.b);
      if (p.parted && sa.accept >= 0 && sb.accept >= 0) {
        std::string example;
        for (uint64_t k = Key(p);;) {
          const Seen& s = seen.at(k);
          if (s.root) break;
          example.insert(example.begin(), static_cast<char>(s.byte));
          k = s.parent;
        }
        return Collision(sa.accept, sb.accept, example);
      }
      for (const auto& ea : sa.edges) {
        for (const auto& eb : sb.edges) {
          const ByteSet on = ea.on & eb.on;
          if (on.none()) continue;
          Pair next{ea.to, eb.to, p.parted || ea.to != eb.to};
          if (seen.emplace(Key(next), Seen{Key(p), Pick(on), false}).second) {
            todo.push_back(next);
          }
        }
      }
    }
    return Status::OK();
  }

  Status Collision(int a, int b, const std::string& example) const {
    const Source& x = sources_[std::min(a, b)];
    const Source& y = sources_[std::max(a, b)];
    const std::string& table = plan_.mapping->name;
    if (a == b) {
      return Status::InvalidArgument(fmt::format(
          "{}: table '{}': family '{}': {} can write one qualifier for two different ids, e.g. "
          "'{}' (its id parts run into each other), so one nested cell would replace another; "
          "separate them: a prefix for the inner nest that its parent's id cannot end in, an "
          "id_separator, or a width that pads every id to one length",
          x.loc.ToString(), table, x.family, x.what, ToStringBinary(example)));
    }
    return Status::InvalidArgument(fmt::format(
        "{}: table '{}': family '{}': {} and {} ({}) can write the same qualifier, e.g. '{}', so "
        "a cell of one would replace a cell of the other; give the nest a prefix that the other's "
        "qualifiers cannot start with, or put one of them in another family",
        y.loc.ToString(), table, x.family, y.what, x.what, x.loc.ToString(),
        ToStringBinary(example)));
  }

  const TablePlan& plan_;
  Nfa nfa_;
  std::vector<Source> sources_;
};

}  // namespace

Status CheckQualifierCollisions(const TablePlan& plan) { return Checker(plan).Run(); }

}  // namespace widen
