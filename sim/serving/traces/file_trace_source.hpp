// What the three file readers (Azure CSV, Mooncake JSONL, plain CSV) share: streaming the file
// line by line, the malformed-row policy, re-basing arrivals on the first row, and the checks
// every row gets (arrival order, an empty trace).
//
// Lines: a trailing '\r' (CRLF files) and a UTF-8 byte-order mark on the first line are
// removed; blank lines and lines whose first non-blank character is '#' are skipped before and
// after the header and count nowhere; the last line may lack its newline. Memory stays O(1) in
// the trace length: one line buffer.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/enum_table.hpp"
#include "sim/serving/trace_source.hpp"

namespace vramsim::serving {

/// What a reader does with a row it cannot use.
enum class MalformedRowPolicy : std::uint8_t {
  kError,  // throw ConfigError naming file:line (the default)
  kSkip,   // drop the row, count it in TraceStats::rows_skipped and remember its line
};
inline constexpr auto kMalformedRowPolicies = enum_table<MalformedRowPolicy>({
    {MalformedRowPolicy::kError, "error", "stop at the first malformed row, naming file:line"},
    {MalformedRowPolicy::kSkip, "skip", "drop malformed rows (counted and reported)"},
});
static_assert(covers_every_enumerator(kMalformedRowPolicies) &&
              names_are_unique(kMalformedRowPolicies));

std::string_view to_string(MalformedRowPolicy policy);
/// "error" or "skip"; nullopt for anything else.
std::optional<MalformedRowPolicy> malformed_row_policy_from_string(std::string_view text);

/// Reads a text file one line at a time.
class LineReader {
 public:
  /// Opens `path`; throws ConfigError (field "trace") naming the path if it cannot be read.
  explicit LineReader(std::string path);
  /// The next line that is neither blank nor a '#' comment, without its line ending; nullopt at
  /// the end of the file. The view stays valid until the next call.
  std::optional<std::string_view> next_data_line();
  /// 1-based number of the line next_data_line() returned last.
  std::int64_t line_number() const { return line_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ifstream in_;
  std::string buffer_;
  std::int64_t line_ = 0;
};

/// Base of the file readers: next() pulls lines, asks the format's parse_row() for a record,
/// applies the policy and the order check, and re-bases arrivals on the first accepted row.
class FileTraceSource : public TraceSource {
 public:
  /// Throws ConfigError for a malformed row (kError), for an arrival earlier than the previous
  /// accepted row (kError; under kSkip that row is skipped and counted), and when the file
  /// ends without a single accepted data row.
  std::optional<TraceRecord> next() final;
  TraceStats stats() const final { return stats_; }

 protected:
  /// Opens `path`; throws ConfigError if it cannot be read.
  FileTraceSource(std::string path, MalformedRowPolicy policy);
  /// Reads the first data line and requires it to equal `expected` (blanks around it ignored).
  /// Throws ConfigError "expected the header '<expected>'" otherwise.
  void expect_header(std::string_view expected);
  /// Parses one data row. On success fills `out` (arrival: absolute ns on the file's own clock,
  /// lengths, hash ids) and returns true; otherwise sets `error` to what was expected.
  virtual bool parse_row(std::string_view line, TraceRecord& out, std::string& error) = 0;
  const std::string& path() const { return lines_.path(); }
  /// File name without its folders, for describe().
  std::string file_name() const;

 private:
  [[noreturn]] void fail(std::int64_t line, const std::string& message) const;
  bool reject(std::int64_t line, const std::string& message);  // applies the policy

  LineReader lines_;
  MalformedRowPolicy policy_;
  TraceStats stats_;
  bool have_first_ = false;
  std::int64_t first_ns_ = 0;
  std::int64_t last_ns_ = 0;
  TraceRecord row_;  // reused across rows so hash_ids keeps its capacity
};

}  // namespace vramsim::serving
