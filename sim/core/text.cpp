#include "sim/core/text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

namespace vramsim {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::int64_t> parse_human_readable_int(std::string_view text,
                                                     std::string* problem) {
  const auto fail = [&](std::string why) -> std::optional<std::int64_t> {
    if (problem != nullptr) *problem = std::move(why);
    return std::nullopt;
  };
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  const std::string shown(text);
  if (text.empty()) return fail("expected an integer, got ''");
  const char suffix = text.back();
  int decimal_power = 0;
  int binary_power = 0;
  switch (suffix) {
    case 'k': decimal_power = 3; break;
    case 'm': decimal_power = 6; break;
    case 'g': decimal_power = 9; break;
    case 't': decimal_power = 12; break;
    case 'K': binary_power = 10; break;
    case 'M': binary_power = 20; break;
    case 'G': binary_power = 30; break;
    case 'T': binary_power = 40; break;
    default: break;
  }
  if (decimal_power == 0 && binary_power == 0) {
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc::result_out_of_range) {
      return fail("'" + shown + "' is outside the 64-bit integer range");
    }
    if (ec != std::errc() || end != text.data() + text.size()) {
      return fail("expected an integer (8192, or with vLLM's suffixes: 8k = 8000, 8K = 8192, "
                  "25.6k = 25600), got '" + shown + "'");
    }
    return n;
  }
  // The number before the suffix: digits, optionally "." and digits (no sign).
  const std::string_view number = text.substr(0, text.size() - 1);
  const std::size_t dot = number.find('.');
  const auto all_digits = [](std::string_view d) {
    return !d.empty() && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const bool whole = dot == std::string_view::npos && all_digits(number);
  const bool fraction = dot != std::string_view::npos && all_digits(number.substr(0, dot)) &&
                        all_digits(number.substr(dot + 1));
  if (!whole && !fraction) {
    return fail("expected an integer (8192, or with vLLM's suffixes: 8k = 8000, 8K = 8192, "
                "25.6k = 25600), got '" + shown + "'");
  }
  if (binary_power > 0) {
    if (!whole) {
      return fail("decimals are not allowed with binary suffixes like " + std::string(1, suffix) +
                  " (as vLLM refuses '" + shown + "'); did you mean " + std::string(number) +
                  static_cast<char>(suffix - 'A' + 'a') + "?");
    }
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
    if (ec != std::errc() || n > (std::int64_t{1} << (62 - binary_power))) {
      return fail("'" + shown + "' is outside the 64-bit integer range");
    }
    return n << binary_power;
  }
  // vLLM: int(float(number) * 10**power), truncated toward zero.
  const double value = std::stod(std::string(number)) * std::pow(10.0, decimal_power);
  if (!(value < 9.2e18)) return fail("'" + shown + "' is outside the 64-bit integer range");
  return static_cast<std::int64_t>(std::trunc(value));
}

}  // namespace vramsim
