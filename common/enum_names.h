// NameTable: the names of an enum's values as a mapping file and widen's
// output spell them, in one table per enum that both parsing and printing
// read, so the two cannot drift apart and messages can list the choices.
//
//   constexpr EnumName<NestLayout> kLayouts[] = {{NestLayout::kJson, "json"}, ...};
//   constexpr NameTable<NestLayout> kLayoutNames{kLayouts};
//   kLayoutNames.Parse("cells", &layout);   kLayoutNames.Name(layout);
//   kLayoutNames.List(" or ")  -> "json, cells or value"
//
// Thread safety: immutable; the table views an array with static storage.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace widen {

/// One value of enum `E` and its name.
template <typename E>
struct EnumName {
  E value;
  std::string_view name;
};

/// A view of an enum's name table, in the order messages list the names.
template <typename E>
class NameTable {
 public:
  /// REQUIRES: `entries` outlives the table (a constexpr array) and names
  /// each value at most once.
  constexpr explicit NameTable(std::span<const EnumName<E>> entries) : entries_(entries) {}

  /// The name of `value`; `fallback` for a value the table does not name.
  constexpr std::string_view Name(E value, std::string_view fallback = "?") const {
    for (const auto& e : entries_) {
      if (e.value == value) return e.name;
    }
    return fallback;
  }

  /// *out = the value named `name` (exact, case-sensitive); false when no
  /// value has that name (*out unchanged).
  constexpr bool Parse(std::string_view name, E* out) const {
    for (const auto& e : entries_) {
      if (e.name == name) {
        *out = e.value;
        return true;
      }
    }
    return false;
  }

  /// Every name, in table order (for "did you mean").
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    names.reserve(entries_.size());
    for (const auto& e : entries_) names.emplace_back(e.name);
    return names;
  }

  /// The names joined by ", ", the last two by `last` (" or " gives
  /// "json, cells or value"; ", " a plain list).
  std::string List(std::string_view last) const {
    std::string s;
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (i > 0) s += i + 1 == entries_.size() ? last : std::string_view(", ");
      s += entries_[i].name;
    }
    return s;
  }

  std::span<const EnumName<E>> entries() const { return entries_; }

 private:
  std::span<const EnumName<E>> entries_;
};

}  // namespace widen
