#include "transform/qualifier_check.h"

#include <algorithm>
#include <bitset>
#include <cctype>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "common/bytes.h"
#include "extract/source.h"
#include "transform/qualifier_check_internal.h"

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

// A regular language over bytes, built from pieces as an automaton with
// empty moves (one start, one final state) and compiled into a Dfa: the
// structured text forms of values (dates, uuids, numbers) are written as
// expressions of these. A Dfa is unambiguous, so that the checker's search
// finds only ambiguity between id parts, never inside one.
class Lang {
 public:
  /// The empty string.
  Lang() : states_(1) {}
  /// One byte of `on`.
  static Lang Byte(const ByteSet& on) {
    Lang l;
    l.states_.emplace_back();
    l.states_[0].moves.push_back({on, 1});
    l.final_ = 1;
    return l;
  }
  /// Exactly the bytes of `s`.
  static Lang Text(std::string_view s) {
    Lang l;
    for (unsigned char c : s) l = Seq({l, Byte(One(c))});
    return l;
  }
  /// The concatenation of `parts`, in order.
  static Lang Seq(std::initializer_list<Lang> parts) {
    Lang l;
    for (const Lang& p : parts) l.Then(p);
    return l;
  }
  /// Any one of `choices`.
  static Lang Either(std::initializer_list<Lang> choices) {
    Lang l;
    std::vector<int> ends;
    for (const Lang& c : choices) {
      const int at = l.Embed(c);
      l.states_[0].empty.push_back(at);
      ends.push_back(at + c.final_);
    }
    l.states_.emplace_back();
    l.final_ = static_cast<int>(l.states_.size()) - 1;
    for (int e : ends) l.states_[e].empty.push_back(l.final_);
    return l;
  }
  /// `l` or nothing.
  static Lang Maybe(const Lang& l) { return Either({l, Lang()}); }
  /// `l` from `min` to `max` times; max < 0: unbounded.
  static Lang Repeat(const Lang& l, int min, int max) {
    Lang r;
    for (int i = 0; i < min; ++i) r.Then(l);
    if (max < 0) {
      // l*: a loop through one state.
      Lang star;
      const int at = star.Embed(l);
      star.states_[0].empty.push_back(at);
      star.states_[at + l.final_].empty.push_back(0);
      r.Then(star);
    } else {
      for (int i = min; i < max; ++i) r.Then(Maybe(l));
    }
    return r;
  }

  /// The deterministic automaton of the language (subset construction);
  /// state 0 is the start.
  Dfa Compile() const {
    Dfa d;
    std::map<std::vector<int>, int> index;
    std::vector<std::vector<int>> sets = {Closure({0})};
    index[sets[0]] = 0;
    for (size_t i = 0; i < sets.size(); ++i) {
      const std::vector<int> set = sets[i];  // sets grows below
      if (std::binary_search(set.begin(), set.end(), final_)) {
        d.finals.push_back(static_cast<int>(i));
      }
      std::map<int, ByteSet> to;
      for (int b = 0; b < 256; ++b) {
        std::vector<int> next;
        for (int s : set) {
          for (const auto& m : states_[s].moves) {
            if (m.on.test(b)) next.push_back(m.to);
          }
        }
        if (next.empty()) continue;
        next = Closure(std::move(next));
        auto [it, added] = index.emplace(next, static_cast<int>(sets.size()));
        if (added) {
          sets.push_back(next);
          d.Add();
        }
        to[it->second].set(b);
      }
      for (const auto& [target, on] : to) d.On(static_cast<int>(i), on, target);
    }
    return d;
  }

 private:
  struct Move {
    ByteSet on;
    int to;
  };
  struct State {
    std::vector<Move> moves;
    std::vector<int> empty;  // empty moves
  };

  // Copies `l`'s states in; returns the index of its start.
  int Embed(const Lang& l) {
    const int base = static_cast<int>(states_.size());
    for (const State& s : l.states_) {
      State c = s;
      for (auto& m : c.moves) m.to += base;
      for (int& e : c.empty) e += base;
      states_.push_back(std::move(c));
    }
    return base;
  }
  void Then(const Lang& l) {
    const int at = Embed(l);
    states_[final_].empty.push_back(at);
    final_ = at + l.final_;
  }
  // The states reached from `set` by empty moves, sorted.
  std::vector<int> Closure(std::vector<int> set) const {
    std::vector<bool> in(states_.size(), false);
    std::vector<int> todo = set;
    set.clear();
    while (!todo.empty()) {
      const int s = todo.back();
      todo.pop_back();
      if (in[s]) continue;
      in[s] = true;
      set.push_back(s);
      for (int e : states_[s].empty) todo.push_back(e);
    }
    std::sort(set.begin(), set.end());
    return set;
  }

  std::vector<State> states_;
  int final_ = 0;
};

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

// The text of a value of key part `p` (Value::AppendText; the bytes of a
// text-like value), as docs/types.md gives it for the part's source type,
// when that text has a structure; nullopt for free text (any bytes). Every
// form a reader can give a column of the type is included: MySQL's zero and
// partial dates and PostgreSQL's timestamps beyond 294247 AD come as the
// server's text (other) in the same shape. The forms are exact up to the
// digits (a month is two digits, not 01 to 12), so they never leave out a
// value the source can hold.
std::optional<Lang> ValueText(const KeyPartPlan& p) {
  const Lang digit = Lang::Byte(Digits());
  const Lang digits = Lang::Repeat(digit, 1, -1);
  const Lang sign = Lang::Maybe(Lang::Text("-"));
  auto fixed = [&](int n) { return Lang::Repeat(digit, n, n); };
  // "YYYY-MM-DD": 4 or more year digits, '-' before years before 0.
  const Lang date = Lang::Seq(
      {sign, Lang::Repeat(digit, 4, -1), Lang::Text("-"), fixed(2), Lang::Text("-"), fixed(2)});
  // "HH:MM:SS[.ffffff]"; a time's hours can have more digits.
  auto clock = [&](int min_hour_digits, int max_hour_digits) {
    return Lang::Seq({Lang::Repeat(digit, min_hour_digits, max_hour_digits), Lang::Text(":"),
                      fixed(2), Lang::Text(":"), fixed(2),
                      Lang::Maybe(Lang::Seq({Lang::Text("."), Lang::Repeat(digit, 1, 6)}))});
  };
  const Lang infinities = Lang::Either({Lang::Text("infinity"), Lang::Text("-infinity")});
  switch (p.value_type) {
    case ValueType::kInt:
    case ValueType::kUInt: {
      // "0", or no leading zero; '-' only when the type holds negatives;
      // at most as many digits as the type's widest value.
      SourceColumn c;
      c.type = p.value_type;
      c.source_type = p.source_type;
      const auto range = DeclaredIntegerRange(c);
      const bool negative = p.value_type == ValueType::kInt && (!range || range->min < 0);
      int max_digits = -1;
      if (range) {
        const uint64_t low = range->min < 0 ? 0 - static_cast<uint64_t>(range->min) : 0;
        max_digits = static_cast<int>(std::to_string(std::max(low, range->max)).size());
      }
      return Lang::Either(
          {Lang::Text("0"),
           Lang::Seq({negative ? sign : Lang(), Lang::Byte(Chars("123456789")),
                      Lang::Repeat(digit, 0, max_digits < 0 ? -1 : max_digits - 1)})});
    }
    case ValueType::kBool:
      return Lang::Either({Lang::Text("true"), Lang::Text("false")});
    case ValueType::kFloat:
      // Shortest round trip: 0.1, -0, 1e+20, 1.5e-07; NaN, Infinity.
      return Lang::Either(
          {Lang::Text("NaN"),
           Lang::Seq(
               {sign,
                Lang::Either(
                    {Lang::Text("Infinity"),
                     Lang::Seq({digits, Lang::Maybe(Lang::Seq({Lang::Text("."), digits})),
                                Lang::Maybe(Lang::Seq(
                                    {Lang::Text("e"), Lang::Byte(Chars("+-")), digits}))})})})});
    case ValueType::kDecimal:
      // As the server prints it: -0.50, 0.000; NaN, Infinity.
      return Lang::Either(
          {Lang::Text("NaN"),
           Lang::Seq(
               {sign, Lang::Either({Lang::Text("Infinity"),
                                    Lang::Seq({digits, Lang::Maybe(Lang::Seq(
                                                           {Lang::Text("."), digits}))})})})});
    case ValueType::kDate:
      return Lang::Either({date, infinities});
    case ValueType::kTimestamp:
      return Lang::Either({Lang::Seq({date, Lang::Text(" "), clock(2, 2)}), infinities});
    case ValueType::kTimestampTz: {
      // The instant in UTC, "...T...Z"; MySQL's zero TIMESTAMP and
      // PostgreSQL's beyond 294247 AD as the server prints them
      // ("... HH:MM:SS", "...+00").
      const Lang offset = Lang::Seq({Lang::Byte(Chars("+-")), fixed(2),
                                     Lang::Repeat(Lang::Seq({Lang::Text(":"), fixed(2)}), 0, 2)});
      return Lang::Either({Lang::Seq({date, Lang::Text("T"), clock(2, 2), Lang::Text("Z")}),
                           Lang::Seq({date, Lang::Text(" "), clock(2, 2), Lang::Maybe(offset)}),
                           infinities});
    }
    case ValueType::kTime:
      return Lang::Seq({sign, clock(2, -1)});
    default:
      break;
  }
  std::string type = p.source_type;
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (p.value_type == ValueType::kOther && type == "uuid") {
    // Lower-case 8-4-4-4-12 hex (PostgreSQL uuid, MariaDB UUID).
    const Lang hex = Lang::Byte(Chars("0123456789abcdef"));
    auto group = [&](int n) { return Lang::Repeat(hex, n, n); };
    return Lang::Seq({group(8), Lang::Text("-"), group(4), Lang::Text("-"), group(4),
                      Lang::Text("-"), group(4), Lang::Text("-"), group(12)});
  }
  return std::nullopt;
}

// The bytes a text key part's value can be written as (KeyCodec: the text
// above, zero-padded integers, reversed timestamps).
Dfa TextPart(const KeyPartPlan& p, std::string_view separator) {
  if (p.is_literal) return Literal(p.literal);
  if (p.reverse) return Repeat(Digits(), 19, false);
  // Zero-padded: exactly `width` digits (the codec refuses negative and
  // wider values there).
  if (p.width > 0 && IsIntegerType(p.value_type)) return Repeat(Digits(), p.width, false);
  if (auto text = ValueText(p)) return text->Compile();
  // Free text: any bytes without the separator (the codec refuses values
  // holding it).
  return WithoutSeparator(separator);
}

// The bytes of a binary key part (transform/ordered_bytes.h), `desc` applied.
Dfa BinaryPart(const KeyPartPlan& p) {
  if (p.is_literal) return Literal(p.literal);
  Dfa d;
  switch (p.type) {
    case KeyType::kString:
    case KeyType::kBytes:
      if (p.width > 0) {
        d = Repeat(All(), p.width, false);
      } else if (auto text = ValueText(p)) {
        // A structured text holds no 0x00: its bytes, then the terminator.
        d = Lang::Seq({*text, Lang::Text(std::string_view("\x00\x01", 2))}).Compile();
      } else {
        d = BinaryString();
      }
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

namespace qualifier_internal {

bool IdCanWrite(const KeyCodec& codec, std::string_view bytes) {
  Nfa nfa;
  std::vector<int> at = {nfa.Start(0)};
  std::vector<int> tails = at;
  AppendId(codec, &nfa, &tails);
  nfa.Accept(tails, 0);
  for (unsigned char b : bytes) {
    std::vector<int> next;
    for (int s : at) {
      for (const auto& e : nfa.state(s).edges) {
        if (e.on.test(b)) next.push_back(e.to);
      }
    }
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    at = std::move(next);
  }
  for (int s : at) {
    if (nfa.state(s).accept >= 0) return true;
  }
  return false;
}

}  // namespace qualifier_internal

}  // namespace widen
