// Field parsing shared by the trace readers: fast, locale-free, exact. Integers and decimals go
// through std::from_chars (no iostream, no regex), so a plain CSV reads at several million rows
// per second. Every function returns nullopt (or false) instead of throwing; the readers turn
// that into a ConfigError naming file:line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace vramsim::serving {

/// Largest prompt or output length a trace row may carry; a larger count is taken for a
/// corrupt row (no model serves a billion-token context).
inline constexpr std::int64_t kMaxTraceTokens = 1'000'000'000;

/// Removes leading and trailing spaces and tabs.
std::string_view trim_blanks(std::string_view s);

/// Splits `line` at commas into `fields` (each trimmed of blanks). Returns the number of fields
/// in the line, which may exceed fields.size(): only the first fields.size() are stored.
std::size_t split_csv_fields(std::string_view line, std::span<std::string_view> fields);

/// A base-10 integer filling all of `text` (an optional leading '-'; no '+', no spaces).
std::optional<std::int64_t> parse_int64(std::string_view text);

/// A finite decimal number filling all of `text` (fixed or scientific; "nan"/"inf" rejected).
std::optional<double> parse_finite_double(std::string_view text);

/// A non-negative number of seconds as integer nanoseconds. Plain decimals ("12.3456789") are
/// converted exactly, digits past the ninth decimal rounded half up; scientific notation goes
/// through a double, rounded once. nullopt for negative, non-numeric or over ~292 years.
std::optional<std::int64_t> parse_seconds_as_ns(std::string_view text);

/// Parses a token count in [1, kMaxTraceTokens] from `text` into `out`. On failure returns
/// false and sets `error` to "<column>: expected an integer in [1, 1000000000], got '<text>'".
bool parse_token_count(std::string_view text, std::string_view column, std::int64_t& out,
                       std::string& error);

/// Checks an already-parsed token count against [1, kMaxTraceTokens], as parse_token_count.
bool check_token_count(std::int64_t value, std::string_view column, std::string& error);

}  // namespace vramsim::serving
