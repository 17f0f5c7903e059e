// Small text helpers shared by the loaders: "did you mean" suggestions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vramsim {

/// Levenshtein distance between `a` and `b` (insertions, deletions, substitutions).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// An integer as vLLM's command line reads its token counts (human_readable_int,
/// vllm/engine/arg_utils.py): a decimal suffix k, m, g, t multiplies by 10^3, 10^6, 10^9,
/// 10^12 and allows a fraction, truncated ("25.6k" = 25,600); a binary suffix K, M, G, T by
/// 2^10 ... 2^40 and needs a whole number ("8K" = 8,192); otherwise a base-10 integer.
/// Surrounding spaces are ignored. nullopt when the text is none of these or leaves int64;
/// `problem` (when given) then says why.
std::optional<std::int64_t> parse_human_readable_int(std::string_view text,
                                                     std::string* problem = nullptr);

}  // namespace vramsim
