// Small text helpers shared by the loaders: "did you mean" suggestions.
#pragma once

#include <cstddef>
#include <string_view>

namespace vramsim {

/// Levenshtein distance between `a` and `b` (insertions, deletions, substitutions).
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace vramsim
