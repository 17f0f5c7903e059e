#include "sim/serving/traces/file_trace_source.hpp"

#include <fmt/format.h>

#include <cstring>
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

namespace {

namespace fs = std::filesystem;

// What a path that is not a regular file is, for a message ("a FIFO (named pipe)").
std::string_view kind_of_file(fs::file_type type) {
  switch (type) {
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::fifo:
      return "a FIFO (named pipe)";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";  // NOTE: std::filesystem's enum, not ours
  }
}

constexpr std::size_t kChunkBytes = std::size_t{1} << 16;

}  // namespace

LineReader::LineReader(std::string path, std::int64_t max_line_bytes)
    : path_(std::move(path)), max_line_bytes_(max_line_bytes) {
  VRAMSIM_CHECK(max_line_bytes_ > 0, "max_line_bytes must be positive, got {}", max_line_bytes_);
  std::error_code ec;
  const fs::file_status status = fs::status(path_, ec);  // follows symbolic links
  if (status.type() == fs::file_type::not_found) {
    throw ConfigError("trace", fmt::format("cannot open trace file '{}': no such file", path_));
  }
  if (!ec && status.type() == fs::file_type::directory) {
    throw ConfigError("trace", fmt::format("'{}' is a directory, not a trace file", path_));
  }
  if (!ec && status.type() != fs::file_type::regular) {
    throw ConfigError("trace",
                      fmt::format("'{}' is {}, not a regular file: a trace is read more than once "
                                  "(format detection, then its rows) and must end, so write it "
                                  "to a file first",
                                  path_, kind_of_file(status.type())));
  }
  in_.open(path_, std::ios::binary);
  if (!in_) throw ConfigError("trace", fmt::format("cannot open trace file '{}'", path_));
  chunk_.resize(kChunkBytes);
}

bool LineReader::read_line() {
  buffer_.clear();
  bool any = false;
  const auto max_bytes = static_cast<std::size_t>(max_line_bytes_);
  while (true) {
    if (chunk_pos_ == chunk_end_) {
      if (at_end_) return any;
      in_.read(chunk_.data(), static_cast<std::streamsize>(chunk_.size()));
      if (in_.bad()) {
        throw ConfigError("trace", fmt::format("read error in line {}", line_ + 1),
                          {path_, static_cast<int>(line_ + 1)});
      }
      chunk_pos_ = 0;
      chunk_end_ = static_cast<std::size_t>(in_.gcount());
      if (chunk_end_ < chunk_.size()) at_end_ = true;  // a short read is the end of the file
      if (chunk_end_ == 0) return any;
    }
    any = true;
    const char* begin = chunk_.data() + chunk_pos_;
    const std::size_t available = chunk_end_ - chunk_pos_;
    const auto* newline = static_cast<const char*>(std::memchr(begin, '\n', available));
    const std::size_t len = newline ? static_cast<std::size_t>(newline - begin) : available;
    if (len > max_bytes - buffer_.size()) {
      throw ConfigError(
          "trace",
          fmt::format("line {} is longer than {} bytes ({} MiB), the longest line a trace may "
                      "hold (no valid row comes near it): is this a trace file?",
                      line_ + 1, max_line_bytes_, max_line_bytes_ >> 20),
          {path_, static_cast<int>(line_ + 1)});
    }
    buffer_.append(begin, len);
    chunk_pos_ += len;
    if (newline) {
      ++chunk_pos_;
      return true;
    }
  }
}

std::optional<std::string_view> LineReader::next_data_line() {
  while (read_line()) {
    ++line_;
    std::string_view line(buffer_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_ == 1 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
    const std::string_view content = trim_blanks(line);
    if (content.empty() || content.front() == '#') continue;
    return line;
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
  if (!csv_header_is(*header, expected)) {
    fail(lines_.line_number(), fmt::format("expected the header '{}', got '{}'", expected,
                                           message_excerpt(trim_blanks(*header))));
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
    if (ns - first_ns_ > kMaxTraceSpanNs) {  // ns >= last_ns_ >= first_ns_ >= 0: no overflow
      constexpr std::int64_t kNsPerS = 1'000'000'000;
      reject(line_no, fmt::format("arrival {} s after the first row's; a trace may span at most "
                                  "{} s (100 years) on the simulator's int64-nanosecond clock",
                                  (ns - first_ns_) / kNsPerS, kMaxTraceSpanNs / kNsPerS));
      continue;
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
