// What the three file readers (Azure CSV, Mooncake JSONL, plain CSV) share: streaming the file
// line by line, the malformed-row policy, re-basing arrivals on the first row, and the checks
// every row gets (arrival order, an empty trace).
//
// Lines: a trailing '\r' (CRLF files) and a UTF-8 byte-order mark on the first line are
// removed; blank lines and lines whose first non-blank character is '#' are skipped before and
// after the header and count nowhere; the last line may lack its newline. The CSV readers read
// records, not lines: a line break (LF or CRLF) inside a quoted field continues the record on
// the next line, as RFC 4180 (section 2, rule 6) and pandas read it; a blank or '#' line inside
// quotes belongs to the field; errors name the line the record starts on. Memory stays O(1) in
// the trace length: one line buffer, and no line (no record) may exceed kMaxTraceLineBytes, so a file
// without line breaks (a disk image, gigabytes of zeros) ends with an error naming file and
// line instead of being read whole into memory. Only regular files (or links to them) are
// read: a directory, FIFO, device (/dev/zero) or socket is refused by name, since a trace is
// read more than once (format detection, then rows) and a device may never end.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/enum_table.hpp"
#include "sim/serving/trace_source.hpp"

namespace vramsim::serving {

/// Longest line a trace file may hold, line break excluded; for a CSV record spanning lines,
/// the record's bytes with its inner line breaks. The longest valid row is a
/// Mooncake row at kMaxTraceTokens: ceil(10^9 / 512) = 1953125 hash ids of at most 20 digits
/// and a comma each, about 41 MB; 64 MiB leaves room for blanks and the other keys.
inline constexpr std::int64_t kMaxTraceLineBytes = std::int64_t{64} << 20;

/// Longest time a trace may span, from its first arrival to its last: 100 Julian years
/// (100 * 365.25 * 86400 s). The simulator's clock is int64 nanoseconds, which ends 292 years
/// after zero; arrivals are kept below about a third of that so that the simulated serving
/// after the last arrival cannot wrap it. NOTE: a replay slowed down (trace_transforms'
/// time_scale below 1) stretches the span past this bound; that product is not checked here.
inline constexpr std::int64_t kMaxTraceSpanNs = std::int64_t{3'155'760'000} * 1'000'000'000;

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
  /// Opens `path`; throws ConfigError (field "trace") naming the path if it does not exist, is
  /// not a regular file (saying what it is: a directory, a FIFO, a character device, ...) or
  /// cannot be read.
  explicit LineReader(std::string path, std::int64_t max_line_bytes = kMaxTraceLineBytes);
  /// The next line that is neither blank nor a '#' comment, without its line ending; nullopt at
  /// the end of the file. The view stays valid until the next call. Throws ConfigError naming
  /// path:line for a line longer than max_line_bytes and for a read error.
  std::optional<std::string_view> next_data_line();
  /// The next CSV record that is neither blank nor a '#' comment, without its final line
  /// ending: one line, or several while a quoted field is open (CsvQuoteScanner), joined with
  /// the line breaks the file holds ("\n" or "\r\n") inside that field. A quote still open
  /// at the end of the file ends the record there (CsvRecordSplitter then names the field).
  /// nullopt at the end of the file; the view stays valid until the next call. Throws
  /// ConfigError naming path:line (the record's first line) for a record longer than
  /// max_line_bytes and for a read error.
  std::optional<std::string_view> next_csv_record();
  /// 1-based number of the line the last line or record returned starts on.
  std::int64_t line_number() const { return start_line_; }
  /// 1-based number of the line the last line or record returned ends on (line_number() but
  /// for a CSV record spanning lines).
  std::int64_t last_line_number() const { return line_; }
  const std::string& path() const { return path_; }

 private:
  // Reads the next line (without its '\n') into buffer_, or with `append` after a '\n' added
  // to buffer_ (the next line of a record); false at the end of the file, buffer_ unchanged.
  bool read_line(bool append);
  // Reads the first line of a line or record into buffer_ (its BOM removed on line 1) and
  // sets `skip` when it is blank or a '#' comment; false at the end of the file.
  bool read_first_line(bool& skip);
  // Throws the ConfigError of a line (or, `continuation`, a record) past max_line_bytes_.
  [[noreturn]] void too_long(bool continuation) const;

  std::string path_;
  std::int64_t max_line_bytes_;
  std::ifstream in_;
  std::vector<char> chunk_;  // bytes read from the file, not yet split into lines
  std::size_t chunk_pos_ = 0;
  std::size_t chunk_end_ = 0;
  bool at_end_ = false;
  std::string buffer_;
  std::int64_t line_ = 0;        // physical lines read
  std::int64_t start_line_ = 0;  // the line the current line or record starts on
};

/// Base of the file readers: next() pulls lines, asks the format's parse_row() for a record,
/// applies the policy and the order check, and re-bases arrivals on the first accepted row.
class FileTraceSource : public TraceSource {
 public:
  /// Throws ConfigError for a malformed row (kError), for an arrival earlier than the previous
  /// accepted row or more than kMaxTraceSpanNs after the first (kError; under kSkip that row is
  /// skipped and counted), and when the file ends without a single accepted data row.
  std::optional<TraceRecord> next() final;
  TraceStats stats() const final { return stats_; }

 protected:
  /// How the format's file divides into rows.
  enum class Rows : std::uint8_t {
    kLines,       // one row per line (JSON lines)
    kCsvRecords,  // RFC 4180 records, which may span lines inside quotes
  };
  /// Opens `path`; throws ConfigError if it cannot be read.
  FileTraceSource(std::string path, MalformedRowPolicy policy, Rows rows);
  /// Reads the first data line and requires it to be the CSV header `expected` (columns
  /// possibly quoted, blanks around them ignored: csv_header_is). Throws ConfigError "expected
  /// the header '<expected>'" otherwise.
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
  std::optional<std::string_view> next_row();
  // " (the record spans lines 3-5: ...)" when the last row read spans lines, else "".
  std::string span_note() const;

  LineReader lines_;
  MalformedRowPolicy policy_;
  Rows rows_;
  TraceStats stats_;
  bool have_first_ = false;
  std::int64_t first_ns_ = 0;
  std::int64_t last_ns_ = 0;
  TraceRecord row_;  // reused across rows so hash_ids keeps its capacity
};

}  // namespace vramsim::serving
