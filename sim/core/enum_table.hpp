// Closed enumerations named once (STYLE 6.3): one table of rows {enumerator, name, one-line
// description} per enum, from which to_string, from_string, the list of valid names for error
// messages and the help text for CLI flags and listings all come.
//
//   inline constexpr auto kPreemptionModes = enum_table<PreemptionMode>({
//       {PreemptionMode::kRecompute, "recompute", "free the victim's KV; it recomputes ..."},
//       {PreemptionMode::kSwap, "swap", "copy the victim's KV to host memory ..."},
//   });
//   static_assert(covers_every_enumerator(kPreemptionModes));
//
// The rows must list every enumerator, in declaration order, and the enum must count up from 0
// without gaps: covers_every_enumerator checks both at compile time (a new enumerator that no
// row names fails the build), so name_of can index the rows directly.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "sim/core/check.hpp"

namespace vramsim {

/// How parse_name compares a user's text with the names: exactly, or ignoring ASCII case.
enum class NameMatch { kExact, kIgnoreCase };

/// One enumerator: the name users write (stable, lower-kebab) and a one-line description.
template <class E>
struct EnumRow {
  E value;
  std::string_view name;
  std::string_view description;
};

/// A second spelling accepted by parse_name, never printed by to_string ("half" for fp16).
template <class E>
struct EnumAlias {
  std::string_view name;
  E value;
};

template <class E, std::size_t N, std::size_t A>
struct EnumTable {
  static_assert(std::is_enum_v<E>, "an EnumTable names the enumerators of an enum");
  static_assert(N > 0, "an EnumTable needs at least one row");
  std::array<EnumRow<E>, N> rows;
  std::array<EnumAlias<E>, A> aliases;
  NameMatch match = NameMatch::kExact;
};

/// The table of `rows` (every enumerator of E, in declaration order).
template <class E, std::size_t N>
constexpr EnumTable<E, N, 0> enum_table(const EnumRow<E> (&rows)[N],
                                        NameMatch match = NameMatch::kExact) {
  EnumTable<E, N, 0> t{{}, {}, match};
  for (std::size_t i = 0; i < N; ++i) t.rows[i] = rows[i];
  return t;
}

/// The table of `rows` that also accepts the spellings in `aliases`.
template <class E, std::size_t N, std::size_t A>
constexpr EnumTable<E, N, A> enum_table(const EnumRow<E> (&rows)[N],
                                        const EnumAlias<E> (&aliases)[A],
                                        NameMatch match = NameMatch::kExact) {
  EnumTable<E, N, A> t{{}, {}, match};
  for (std::size_t i = 0; i < N; ++i) t.rows[i] = rows[i];
  for (std::size_t i = 0; i < A; ++i) t.aliases[i] = aliases[i];
  return t;
}

namespace enum_detail {

// The compiler's own name for V: "Ns::E::kName" for an enumerator, "(Ns::E)7" for a value that
// names none (GCC and Clang both print it so; the technique of magic_enum).
template <auto V>
constexpr std::string_view pretty_value() {
  std::string_view s = __PRETTY_FUNCTION__;
  const std::size_t at = s.find("V = ");
  if (at == std::string_view::npos) return {};
  s.remove_prefix(at + 4);
  const std::size_t end = s.find_first_of("];");
  return end == std::string_view::npos ? s : s.substr(0, end);
}

// An enumerator prints as a qualified name; a value naming none as a cast, "(Ns::E)7": digits
// after the last ')'. (The enum's own scope may hold parentheses: "(anonymous namespace)::E".)
template <class E, std::size_t I>
constexpr bool names_an_enumerator() {
  const std::string_view v = pretty_value<static_cast<E>(I)>();
  if (v.empty()) return false;
  const std::size_t close = v.rfind(')');
  if (close == std::string_view::npos || close + 1 == v.size()) return true;
  for (const char c : v.substr(close + 1)) {
    if (c < '0' || c > '9') return true;
  }
  return false;
}

constexpr char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

constexpr bool same_name(std::string_view a, std::string_view b, NameMatch match) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool same = match == NameMatch::kExact ? a[i] == b[i] : lower(a[i]) == lower(b[i]);
    if (!same) return false;
  }
  return true;
}

template <class E>
constexpr std::size_t index_of(E v) {
  return static_cast<std::size_t>(static_cast<std::underlying_type_t<E>>(v));
}

}  // namespace enum_detail

/// True when row i holds enumerator i for every row and the value after the last row names no
/// enumerator: the rows cover the whole enum, in order. Use it in a static_assert.
template <class E, std::size_t N, std::size_t A>
constexpr bool covers_every_enumerator(const EnumTable<E, N, A>& t) {
  for (std::size_t i = 0; i < N; ++i) {
    if (enum_detail::index_of(t.rows[i].value) != i) return false;
  }
  return !enum_detail::names_an_enumerator<E, N>();
}

/// True when no two rows or aliases share a name (under the table's NameMatch).
template <class E, std::size_t N, std::size_t A>
constexpr bool names_are_unique(const EnumTable<E, N, A>& t) {
  std::array<std::string_view, N + A> all{};
  for (std::size_t i = 0; i < N; ++i) all[i] = t.rows[i].name;
  for (std::size_t i = 0; i < A; ++i) all[N + i] = t.aliases[i].name;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].empty()) return false;
    for (std::size_t j = i + 1; j < all.size(); ++j) {
      if (enum_detail::same_name(all[i], all[j], t.match)) return false;
    }
  }
  return true;
}

/// The name of `v`. A value outside the enum (a cast gone wrong) is a programming error.
template <class E, std::size_t N, std::size_t A>
constexpr std::string_view name_of(const EnumTable<E, N, A>& t, E v) {
  const std::size_t i = enum_detail::index_of(v);
  if (i >= N) VRAMSIM_UNREACHABLE("enumerator outside its EnumTable");
  return t.rows[i].name;
}

/// The description of `v`.
template <class E, std::size_t N, std::size_t A>
constexpr std::string_view description_of(const EnumTable<E, N, A>& t, E v) {
  const std::size_t i = enum_detail::index_of(v);
  if (i >= N) VRAMSIM_UNREACHABLE("enumerator outside its EnumTable");
  return t.rows[i].description;
}

/// The enumerator that `text` names (a row's name or an alias), or nullopt.
template <class E, std::size_t N, std::size_t A>
constexpr std::optional<E> parse_name(const EnumTable<E, N, A>& t, std::string_view text) {
  for (const EnumRow<E>& r : t.rows) {
    if (enum_detail::same_name(r.name, text, t.match)) return r.value;
  }
  for (const EnumAlias<E>& a : t.aliases) {
    if (enum_detail::same_name(a.name, text, t.match)) return a.value;
  }
  return std::nullopt;
}

/// The names joined: "a, b, c" (or "a, b or c" with last_separator " or "). Aliases are left
/// out.
template <class E, std::size_t N, std::size_t A>
std::string join_names(const EnumTable<E, N, A>& t, std::string_view separator = ", ",
                       std::string_view last_separator = {}) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) out += (i + 1 == N && !last_separator.empty()) ? last_separator : separator;
    out += t.rows[i].name;
  }
  return out;
}

/// The names joined "a, b (b2, b3), c": each name followed by its aliases in parentheses.
template <class E, std::size_t N, std::size_t A>
std::string join_names_with_aliases(const EnumTable<E, N, A>& t) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) out += ", ";
    out += t.rows[i].name;
    std::string_view open = " (";
    for (const EnumAlias<E>& a : t.aliases) {
      if (a.value != t.rows[i].value) continue;
      out += open;
      out += a.name;
      open = ", ";
    }
    if (open == ", ") out += ')';
  }
  return out;
}

/// One line per row, "<indent><name padded to the longest><two spaces><description>\n".
template <class E, std::size_t N, std::size_t A>
std::string help_text(const EnumTable<E, N, A>& t, std::string_view indent = "  ") {
  std::size_t width = 0;
  for (const EnumRow<E>& r : t.rows) width = r.name.size() > width ? r.name.size() : width;
  std::string out;
  for (const EnumRow<E>& r : t.rows) {
    out += indent;
    out += r.name;
    out.append(width - r.name.size() + 2, ' ');
    out += r.description;
    out += '\n';
  }
  return out;
}

namespace enum_detail {

template <const auto& Table>
constexpr std::size_t joined_size() {
  std::size_t n = 0;
  for (const auto& r : Table.rows) n += r.name.size();
  return n + 2 * (Table.rows.size() - 1);
}

template <const auto& Table>
struct JoinedNames {
  static constexpr std::array<char, joined_size<Table>()> text = [] {
    std::array<char, joined_size<Table>()> out{};
    std::size_t at = 0;
    for (std::size_t i = 0; i < Table.rows.size(); ++i) {
      if (i > 0) {
        out[at++] = ',';
        out[at++] = ' ';
      }
      for (const char c : Table.rows[i].name) out[at++] = c;
    }
    return out;
  }();
};

}  // namespace enum_detail

/// The names joined "a, b, c", built at compile time, for the `x_names()` functions that return
/// a string_view: names_list<kTable>().
template <const auto& Table>
constexpr std::string_view names_list() {
  const auto& text = enum_detail::JoinedNames<Table>::text;
  return {text.data(), text.size()};
}

}  // namespace vramsim
