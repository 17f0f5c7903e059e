// The checks every enum table passes, shared by the tests of each folder: every enumerator
// round-trips name -> parse -> value through the table and through the enum's own
// to_string / x_from_string wrappers, names are unique, an unknown name parses to nullopt and the
// joined list holds exactly the table's names, in order.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/enum_table.hpp"
#include "tests/catch.hpp"

namespace vramsim::testing {

/// The names of `joined` ("a, b, c"), split at ", ".
inline std::vector<std::string> split_names(std::string_view joined) {
  std::vector<std::string> out;
  while (true) {
    const std::size_t at = joined.find(", ");
    out.emplace_back(joined.substr(0, at));
    if (at == std::string_view::npos) return out;
    joined.remove_prefix(at + 2);
  }
}

template <class E, std::size_t N, std::size_t A>
std::vector<std::string> table_names(const EnumTable<E, N, A>& t) {
  std::vector<std::string> out;
  for (const EnumRow<E>& r : t.rows) out.emplace_back(r.name);
  return out;
}

/// The table alone: round trips, uniqueness, unknown names, the joined list and the help text.
template <class E, std::size_t N, std::size_t A>
void check_enum_table(const EnumTable<E, N, A>& t) {
  CHECK(covers_every_enumerator(t));
  CHECK(names_are_unique(t));
  for (std::size_t i = 0; i < N; ++i) {
    const EnumRow<E>& r = t.rows[i];
    INFO("row " << i << " '" << std::string(r.name) << "'");
    CHECK(static_cast<std::size_t>(r.value) == i);
    CHECK(name_of(t, r.value) == r.name);
    CHECK(parse_name(t, r.name) == std::optional<E>(r.value));
    CHECK(!r.description.empty());
  }
  for (const EnumAlias<E>& a : t.aliases) {
    INFO("alias '" << std::string(a.name) << "'");
    CHECK(parse_name(t, a.name) == std::optional<E>(a.value));
  }
  CHECK(parse_name(t, "no-such-name") == std::nullopt);
  CHECK(parse_name(t, "") == std::nullopt);
  CHECK(split_names(join_names(t)) == table_names(t));
  const std::string help = help_text(t);
  for (const EnumRow<E>& r : t.rows) {
    CHECK(help.find(std::string(r.name)) != std::string::npos);
    CHECK(help.find(std::string(r.description)) != std::string::npos);
  }
}

/// The table and the enum's own wrappers: to_string(E), x_from_string and, when given, x_names().
template <class E, std::size_t N, std::size_t A, class ToString, class FromString>
void check_enum_api(const EnumTable<E, N, A>& t, ToString to_string_fn, FromString from_string_fn,
                    std::optional<std::string_view> names = std::nullopt) {
  check_enum_table(t);
  for (const EnumRow<E>& r : t.rows) {
    INFO("'" << std::string(r.name) << "'");
    CHECK(std::string_view(to_string_fn(r.value)) == r.name);
    CHECK(from_string_fn(r.name) == std::optional<E>(r.value));
  }
  for (const EnumAlias<E>& a : t.aliases) {
    CHECK(from_string_fn(a.name) == std::optional<E>(a.value));
  }
  CHECK(from_string_fn("no-such-name") == std::nullopt);
  if (names) CHECK(split_names(*names) == table_names(t));
}

}  // namespace vramsim::testing
