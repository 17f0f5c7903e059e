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

void LineReader::too_long(bool continuation) const {
  if (continuation) {
    throw ConfigError(
        "trace",
        fmt::format("the CSV record starting at line {} is longer than {} bytes ({} MiB, the "
                    "longest record a trace may hold) by line {}: a quoted field opened on line "
                    "{} is not closed (a quote inside a quoted field is written twice, \"\")",
                    start_line_, max_line_bytes_, max_line_bytes_ >> 20, line_ + 1, start_line_),
        {path_, static_cast<int>(start_line_)});
  }
  throw ConfigError(
      "trace",
      fmt::format("line {} is longer than {} bytes ({} MiB), the longest line a trace may hold "
                  "(no valid row comes near it): is this a trace file?",
                  line_ + 1, max_line_bytes_, max_line_bytes_ >> 20),
      {path_, static_cast<int>(line_ + 1)});
}

bool LineReader::read_line(bool append) {
  const auto max_bytes = static_cast<std::size_t>(max_line_bytes_);
  const std::size_t base = append ? buffer_.size() : 0;
  if (append) {
    if (buffer_.size() >= max_bytes) too_long(append);  // no room for the line break
    buffer_ += '\n';
  } else {
    buffer_.clear();
  }
  bool any = false;
  while (true) {
    if (chunk_pos_ == chunk_end_) {
      if (!at_end_) {
        in_.read(chunk_.data(), static_cast<std::streamsize>(chunk_.size()));
        if (in_.bad()) {
          throw ConfigError("trace", fmt::format("read error in line {}", line_ + 1),
                            {path_, static_cast<int>(line_ + 1)});
        }
        chunk_pos_ = 0;
        chunk_end_ = static_cast<std::size_t>(in_.gcount());
        if (chunk_end_ < chunk_.size()) at_end_ = true;  // a short read is the end of the file
      }
      if (chunk_pos_ == chunk_end_) {
        if (!any) buffer_.resize(base);
        return any;
      }
    }
    any = true;
    const char* begin = chunk_.data() + chunk_pos_;
    const std::size_t available = chunk_end_ - chunk_pos_;
    const auto* newline = static_cast<const char*>(std::memchr(begin, '\n', available));
    const std::size_t len = newline ? static_cast<std::size_t>(newline - begin) : available;
    if (len > max_bytes - buffer_.size()) too_long(append);  // buffer_.size() <= max_bytes
    buffer_.append(begin, len);
    chunk_pos_ += len;
    if (newline) {
      ++chunk_pos_;
      return true;
    }
  }
}

bool LineReader::read_first_line(bool& skip) {
  if (!read_line(false)) return false;
  start_line_ = ++line_;
  if (line_ == 1 && std::string_view(buffer_).starts_with("\xEF\xBB\xBF")) buffer_.erase(0, 3);
  std::string_view line(buffer_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const std::string_view content = trim_blanks(line);
  skip = content.empty() || content.front() == '#';
  return true;
}

std::optional<std::string_view> LineReader::next_data_line() {
  bool skip = false;
  while (read_first_line(skip)) {
    if (skip) continue;
    std::string_view line(buffer_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  }
  return std::nullopt;
}

std::optional<std::string_view> LineReader::next_csv_record() {
  bool skip = false;
  while (read_first_line(skip)) {
    if (skip) continue;
    CsvQuoteScanner quotes;
    quotes.scan(buffer_);
    while (quotes.in_quoted_field()) {
      const std::size_t scanned = buffer_.size();
      if (!read_line(true)) break;  // the quote runs to the end of the file
      ++line_;
      quotes.scan(std::string_view(buffer_).substr(scanned));
    }
    std::string_view record(buffer_);
    if (!record.empty() && record.back() == '\r') record.remove_suffix(1);
    return record;
  }
  return std::nullopt;
}

FileTraceSource::FileTraceSource(std::string path, MalformedRowPolicy policy, Rows rows)
    : lines_(std::move(path)), policy_(policy), rows_(rows) {}

std::optional<std::string_view> FileTraceSource::next_row() {
  switch (rows_) {
    case Rows::kLines: return lines_.next_data_line();
    case Rows::kCsvRecords: return lines_.next_csv_record();
  }
  VRAMSIM_UNREACHABLE("invalid FileTraceSource::Rows");
}

std::string FileTraceSource::span_note() const {
  if (lines_.last_line_number() == lines_.line_number()) return "";
  return fmt::format(" (the record spans lines {}-{}: a quoted field holds a line break)",
                     lines_.line_number(), lines_.last_line_number());
}

std::string FileTraceSource::file_name() const {
  return std::filesystem::path(path()).filename().string();
}

void FileTraceSource::fail(std::int64_t line, const std::string& message) const {
  throw ConfigError("trace", message, {path(), static_cast<int>(line)});
}

void FileTraceSource::expect_header(std::string_view expected) {
  const auto header = next_row();
  if (!header) fail(0, fmt::format("empty file; expected the header '{}'", expected));
  if (!csv_header_is(*header, expected)) {
    fail(lines_.line_number(), fmt::format("expected the header '{}', got '{}'{}", expected,
                                           message_excerpt(trim_blanks(*header)), span_note()));
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
  while (const auto line = next_row()) {
    const std::int64_t line_no = lines_.line_number();
    ++stats_.rows_read;
    row_.hash_ids.clear();
    row_.hash_block_tokens = 0;
    if (!parse_row(*line, row_, error)) {
      reject(line_no, error + span_note());
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
