#include "sim/serving/traces/trace_parsing.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <limits>

namespace vramsim::serving {

std::string message_excerpt(std::string_view text) {
  constexpr std::size_t kMax = 60;
  std::string out;
  for (const char c : text.substr(0, kMax)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > kMax) out += "...";
  return out;
}

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::size_t split_csv_fields(std::string_view line, std::span<std::string_view> fields) {
  std::size_t count = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    const std::size_t end = comma == std::string_view::npos ? line.size() : comma;
    if (count < fields.size()) fields[count] = trim_blanks(line.substr(start, end - start));
    ++count;
    if (comma == std::string_view::npos) return count;
    start = comma + 1;
  }
}

std::optional<std::size_t> CsvRecordSplitter::split(std::string_view line,
                                                    std::span<std::string_view> fields,
                                                    std::string& error) {
  // NOTE: unquoted text is never longer than the line, so after this reserve appending never
  // reallocates and the views already handed out stay valid.
  unquoted_.clear();
  unquoted_.reserve(line.size());
  const auto is_blank = [](char c) { return c == ' ' || c == '\t'; };
  std::size_t count = 0;
  std::size_t pos = 0;
  while (true) {
    std::size_t p = pos;
    while (p < line.size() && is_blank(line[p])) ++p;
    std::string_view field;
    std::size_t comma = std::string_view::npos;
    if (p < line.size() && line[p] == '"') {
      const std::size_t start = unquoted_.size();
      std::size_t i = p + 1;
      bool closed = false;
      while (i < line.size()) {
        const std::size_t quote = line.find('"', i);
        if (quote == std::string_view::npos) break;
        unquoted_.append(line.substr(i, quote - i));
        if (quote + 1 < line.size() && line[quote + 1] == '"') {  // "" stands for one "
          unquoted_ += '"';
          i = quote + 2;
          continue;
        }
        closed = true;
        i = quote + 1;
        break;
      }
      if (!closed) {
        error = fmt::format(
            "field {}: its opening quote is not closed by the end of the record (a quoted field "
            "may span lines, so in a file an unclosed quote runs to the end of the file; a "
            "quote inside a quoted field is written twice, \"\")",
            count + 1);
        return std::nullopt;
      }
      while (i < line.size() && is_blank(line[i])) ++i;
      if (i < line.size() && line[i] != ',') {
        error = fmt::format("field {}: text after its closing quote, expected ',' or the line end",
                            count + 1);
        return std::nullopt;
      }
      field = trim_blanks(std::string_view(unquoted_).substr(start));
      if (i < line.size()) comma = i;
    } else {
      comma = line.find(',', pos);
      const std::size_t end = comma == std::string_view::npos ? line.size() : comma;
      field = trim_blanks(line.substr(pos, end - pos));
    }
    if (count < fields.size()) fields[count] = field;
    ++count;
    if (comma == std::string_view::npos) return count;
    pos = comma + 1;
  }
}

void CsvQuoteScanner::scan(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (state_) {
      case State::kFieldStart:
        if (c == '"') {
          state_ = State::kQuoted;
        } else if (c != ' ' && c != '\t' && c != ',') {
          state_ = State::kUnquoted;
        }
        break;
      case State::kUnquoted:
      case State::kAfterQuote:
        if (c == ',') state_ = State::kFieldStart;
        break;
      case State::kQuoted: {
        // NOTE: the common case, a long stretch inside quotes, skips to the next quote at once.
        const std::size_t quote = text.find('"', i);
        if (quote == std::string_view::npos) return;
        i = quote;
        state_ = State::kQuoteSeen;
        break;
      }
      case State::kQuoteSeen:
        if (c == '"') {
          state_ = State::kQuoted;  // a doubled quote: still inside
        } else if (c == ',') {
          state_ = State::kFieldStart;
        } else {
          state_ = State::kAfterQuote;  // blanks before the comma, or text the splitter refuses
        }
        break;
    }
  }
}

bool csv_header_is(std::string_view line, std::string_view expected) {
  constexpr std::size_t kMaxColumns = 8;
  std::array<std::string_view, kMaxColumns> want;
  const std::size_t num_want = split_csv_fields(expected, want);
  if (num_want > kMaxColumns) return false;
  std::array<std::string_view, kMaxColumns> got;
  CsvRecordSplitter csv;
  std::string error;
  const std::optional<std::size_t> num_got = csv.split(line, got, error);
  if (!num_got || *num_got != num_want) return false;
  for (std::size_t i = 0; i < num_want; ++i) {
    if (got[i] != want[i]) return false;
  }
  return true;
}

std::optional<std::int64_t> parse_int64(std::string_view text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

std::optional<double> parse_finite_double(std::string_view text) {
  double value = 0.0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<std::int64_t> parse_seconds_as_ns(std::string_view text) {
  constexpr std::int64_t kNsPerS = 1'000'000'000;
  constexpr std::int64_t kMaxWholeSeconds = 9'000'000'000;  // keeps ns below 2^63
  if (text.find_first_of("eE") != std::string_view::npos) {
    const auto value = parse_finite_double(text);
    if (!value || *value < 0.0 || *value >= static_cast<double>(kMaxWholeSeconds)) {
      return std::nullopt;
    }
    return std::llround(*value * 1e9);
  }
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  std::int64_t seconds = 0;
  if (!whole.empty()) {
    const auto parsed = parse_int64(whole);
    if (!parsed || *parsed < 0 || *parsed > kMaxWholeSeconds || whole.front() == '-') {
      return std::nullopt;
    }
    seconds = *parsed;
  }
  std::int64_t fraction_ns = 0;
  if (dot != std::string_view::npos) {
    const std::string_view fraction = text.substr(dot + 1);
    if (fraction.empty() && whole.empty()) return std::nullopt;  // a lone "."
    std::int64_t scale = kNsPerS / 10;
    bool round_up = false;
    for (std::size_t i = 0; i < fraction.size(); ++i) {
      const char c = fraction[i];
      if (c < '0' || c > '9') return std::nullopt;
      if (i < 9) {
        fraction_ns += (c - '0') * scale;
        scale /= 10;
      } else if (i == 9) {
        round_up = c >= '5';
      }
    }
    if (round_up) ++fraction_ns;
  } else if (whole.empty()) {
    return std::nullopt;
  }
  return seconds * kNsPerS + fraction_ns;
}

bool check_token_count(std::int64_t value, std::string_view column, std::string& error) {
  if (value >= 1 && value <= kMaxTraceTokens) return true;
  error = fmt::format("{}: expected an integer in [1, {}], got {}", column, kMaxTraceTokens, value);
  return false;
}

bool parse_token_count(std::string_view text, std::string_view column, std::int64_t& out,
                       std::string& error) {
  const auto value = parse_int64(text);
  if (!value || *value < 1 || *value > kMaxTraceTokens) {
    error = fmt::format("{}: expected an integer in [1, {}], got '{}'", column, kMaxTraceTokens,
                        message_excerpt(text));
    return false;
  }
  out = *value;
  return true;
}

}  // namespace vramsim::serving
