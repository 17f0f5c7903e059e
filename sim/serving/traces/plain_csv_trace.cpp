#include "sim/serving/traces/plain_csv_trace.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "sim/serving/traces/trace_parsing.hpp"

namespace vramsim::serving {

PlainCsvTrace::PlainCsvTrace(std::string path, MalformedRowPolicy policy)
    : FileTraceSource(std::move(path), policy, Rows::kCsvRecords) {
  expect_header(kPlainCsvHeader);
}

std::string PlainCsvTrace::describe() const { return "CSV " + file_name(); }

bool PlainCsvTrace::parse_row(std::string_view line, TraceRecord& out, std::string& error) {
  std::array<std::string_view, 3> f;
  const std::optional<std::size_t> n = csv_.split(line, f, error);
  if (!n) return false;
  if (*n != f.size()) {
    error = fmt::format("expected 3 columns ({}), got {}", kPlainCsvHeader, *n);
    return false;
  }
  const auto ns = parse_seconds_as_ns(f[0]);
  if (!ns) {
    error = fmt::format("arrival_s: expected a non-negative finite number of seconds, got '{}'",
                        message_excerpt(f[0]));
    return false;
  }
  out.arrival = SimTime::from_nanoseconds(*ns);
  return parse_token_count(f[1], "prompt_tokens", out.prompt_tokens, error) &&
         parse_token_count(f[2], "output_tokens", out.output_tokens, error);
}

}  // namespace vramsim::serving
