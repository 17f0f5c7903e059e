#include "sim/serving/traces/azure_csv_trace.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "sim/core/check.hpp"
#include "sim/serving/traces/trace_parsing.hpp"

namespace vramsim::serving {
namespace {

constexpr std::int64_t kNsPerS = 1'000'000'000;

bool is_leap(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(std::int64_t y, unsigned m) {
  constexpr std::array<unsigned, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29U : kDays[m - 1];
}

// A fixed-width run of decimal digits, e.g. the "2023" of a date.
std::optional<unsigned> digits(std::string_view text, std::size_t pos, std::size_t len) {
  if (pos + len > text.size()) return std::nullopt;
  unsigned v = 0;
  for (std::size_t i = pos; i < pos + len; ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  return v;
}

}  // namespace

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  VRAMSIM_CHECK(m >= 1 && m <= 12 && d >= 1 && d <= 31, "bad civil date {}-{}-{}", y, m, d);
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);                 // [0, 399]
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

std::optional<std::int64_t> parse_wall_clock_ns(std::string_view text) {
  // 0123456789012345678
  // YYYY-MM-DD HH:MM:SS[.fffffff]
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != ' ' || text[13] != ':' ||
      text[16] != ':') {
    return std::nullopt;
  }
  const auto year = digits(text, 0, 4);
  const auto month = digits(text, 5, 2);
  const auto day = digits(text, 8, 2);
  const auto hour = digits(text, 11, 2);
  const auto minute = digits(text, 14, 2);
  const auto second = digits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  // Integer nanoseconds since 1970 reach 2262-04-11; earlier years would make the arrival
  // differences overflow (found by fuzz/fuzz_azure_csv: year 0000).
  if (*year < kMinWallClockYear || *year > kMaxWallClockYear) return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > days_in_month(*year, *month) || *hour > 23 ||
      *minute > 59 || *second > 59) {
    return std::nullopt;
  }
  std::int64_t fraction_ns = 0;
  if (text.size() > 19) {
    const std::size_t num_digits = text.size() - 20;
    if (text[19] != '.' || num_digits < 1 || num_digits > 9) return std::nullopt;
    const auto fraction = digits(text, 20, num_digits);
    if (!fraction) return std::nullopt;
    fraction_ns = *fraction;
    for (std::size_t i = num_digits; i < 9; ++i) fraction_ns *= 10;
  }
  const std::int64_t days = days_from_civil(*year, *month, *day);
  const std::int64_t secs = days * 86'400 + *hour * 3'600 + *minute * 60 + *second;
  return secs * kNsPerS + fraction_ns;
}

AzureCsvTrace::AzureCsvTrace(std::string path, MalformedRowPolicy policy)
    : FileTraceSource(std::move(path), policy, Rows::kCsvRecords) {
  expect_header(kAzureCsvHeader);
}

std::string AzureCsvTrace::describe() const { return "Azure CSV " + file_name(); }

bool AzureCsvTrace::parse_row(std::string_view line, TraceRecord& out, std::string& error) {
  std::array<std::string_view, 3> f;
  const std::optional<std::size_t> n = csv_.split(line, f, error);
  if (!n) return false;
  if (*n != f.size()) {
    error = fmt::format("expected 3 columns ({}), got {}", kAzureCsvHeader, *n);
    return false;
  }
  const auto ns = parse_wall_clock_ns(f[0]);
  if (!ns) {
    error = fmt::format("TIMESTAMP: expected 'YYYY-MM-DD HH:MM:SS.fffffff' (years {}-{}), got '{}'",
                        kMinWallClockYear, kMaxWallClockYear, message_excerpt(f[0]));
    return false;
  }
  out.arrival = SimTime::from_nanoseconds(*ns);
  return parse_token_count(f[1], "ContextTokens", out.prompt_tokens, error) &&
         parse_token_count(f[2], "GeneratedTokens", out.output_tokens, error);
}

}  // namespace vramsim::serving
