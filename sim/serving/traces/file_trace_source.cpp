#include "sim/serving/traces/file_trace_source.hpp"

#include <filesystem>
#include <utility>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/serving/traces/trace_parsing.hpp"

namespace vramsim::serving {

std::string_view to_string(MalformedRowPolicy policy) {
  return name_of(kMalformedRowPolicies, policy);
}
std::optional<MalformedRowPolicy> malformed_row_policy_from_string(std::string_view text) {
  return parse_name(kMalformedRowPolicies, text);
}

LineReader::LineReader(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec)) {
    throw ConfigError("trace", fmt::format("'{}' is a directory, not a trace file", path_));
  }
  in_.open(path_, std::ios::binary);
  if (!in_) throw ConfigError("trace", fmt::format("cannot open trace file '{}'", path_));
}

std::optional<std::string_view> LineReader::next_data_line() {
  while (std::getline(in_, buffer_)) {
    ++line_;
    std::string_view line(buffer_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_ == 1 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
    const std::string_view content = trim_blanks(line);
    if (content.empty() || content.front() == '#') continue;
    return line;
  }
  if (in_.bad()) {
    throw ConfigError("trace", fmt::format("read error after line {}", line_), {path_, 0});
  }
  return std::nullopt;
}

FileTraceSource::FileTraceSource(std::string path, MalformedRowPolicy policy)
    : lines_(std::move(path)), policy_(policy) {}

std::string FileTraceSource::file_name() const {
  return std::filesystem::path(path()).filename().string();
}

void FileTraceSource::fail(std::int64_t line, const std::string& message) const {
  throw ConfigError("trace", message, {path(), static_cast<int>(line)});
}

void FileTraceSource::expect_header(std::string_view expected) {
  const auto header = lines_.next_data_line();
  if (!header) fail(0, fmt::format("empty file; expected the header '{}'", expected));
  if (trim_blanks(*header) != expected) {
    fail(lines_.line_number(),
         fmt::format("expected the header '{}', got '{}'", expected, trim_blanks(*header)));
  }
}

bool FileTraceSource::reject(std::int64_t line, const std::string& message) {
  if (policy_ == MalformedRowPolicy::kError) fail(line, message);
  ++stats_.rows_skipped;
  if (stats_.first_skipped_line == 0) stats_.first_skipped_line = line;
  return false;
}

std::optional<TraceRecord> FileTraceSource::next() {
  std::string error;
  while (const auto line = lines_.next_data_line()) {
    const std::int64_t line_no = lines_.line_number();
    ++stats_.rows_read;
    row_.hash_ids.clear();
    row_.hash_block_tokens = 0;
    if (!parse_row(*line, row_, error)) {
      reject(line_no, error);
      continue;
    }
    const std::int64_t ns = row_.arrival.nanoseconds();
    if (have_first_ && ns < last_ns_) {
      reject(line_no,
             fmt::format("arrival goes backwards: {} ns before the previous row's", last_ns_ - ns));
      continue;
    }
    if (!have_first_) {
      have_first_ = true;
      first_ns_ = ns;
    }
    last_ns_ = ns;
    row_.line = line_no;
    TraceRecord out = row_;
    out.arrival = SimTime::from_nanoseconds(ns - first_ns_);
    return out;
  }
  if (!have_first_) {
    fail(0, stats_.rows_skipped > 0
                ? fmt::format("no usable data rows ({} malformed rows skipped, first at line {})",
                              stats_.rows_skipped, stats_.first_skipped_line)
                : std::string("no data rows after the header"));
  }
  return std::nullopt;
}

}  // namespace vramsim::serving
