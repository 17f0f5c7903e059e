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

/// At most the first 60 bytes of `text`, for a message: bytes outside printable ASCII are shown
/// as '?' and a cut is marked "...", so that a binary file or a megabyte-long field does not
/// fill the terminal.
std::string message_excerpt(std::string_view text);

/// Removes leading and trailing spaces and tabs.
std::string_view trim_blanks(std::string_view s);

/// Splits `line` at commas into `fields` (each trimmed of blanks). Returns the number of fields
/// in the line, which may exceed fields.size(): only the first fields.size() are stored.
/// NOTE: no quoting; the trace readers use CsvRecordSplitter.
std::size_t split_csv_fields(std::string_view line, std::span<std::string_view> fields);

/// Splits one CSV record as RFC 4180 writes it (what pandas' to_csv writes with any quoting
/// mode): fields are separated by commas; a field may be enclosed in double quotes, and then
/// holds commas, doubled quotes and line breaks ("a,b" is a,b; "say ""hi""" is say "hi"; a
/// record read by LineReader::next_csv_record may span lines inside quotes). Blanks (space,
/// tab) around a field, inside or outside its quotes, are dropped. A quote in the middle of an
/// unquoted field is kept as a character. Keeps one buffer, so splitting a row costs no
/// allocation once the buffer has grown to the longest quoted row.
///
///   CsvRecordSplitter csv;
///   std::array<std::string_view, 3> f;
///   csv.split(R"("0.5", "12" ,"x,""y""")", f, error);  // 3: 0.5 | 12 | x,"y"
class CsvRecordSplitter {
 public:
  /// Stores the first fields.size() fields of the record `line` in `fields` and returns how
  /// many fields it has (possibly more than fields.size()). nullopt, with `error` saying which
  /// field and why, when a quoted field is not closed by the end of the record (for a record
  /// of LineReader::next_csv_record: by the end of the file) or text follows its closing
  /// quote. The views point into `line` or into this object, and stay valid until the next
  /// call.
  std::optional<std::size_t> split(std::string_view line, std::span<std::string_view> fields,
                                   std::string& error);

 private:
  std::string unquoted_;
};

/// Follows a CSV record through its physical lines with CsvRecordSplitter's quoting rules, to
/// tell whether a line break ends the record or lies inside a quoted field (RFC 4180 section
/// 2, rule 6). O(1) state; feed it the record's text in pieces, line breaks included.
///
///   CsvQuoteScanner q;
///   q.scan("0,\"a");      // q.in_quoted_field(): the record goes on past this line break
///   q.scan("\nb\",1");    // !q.in_quoted_field(): it ends here
class CsvQuoteScanner {
 public:
  /// Advances over `text`, the next piece of the record.
  void scan(std::string_view text);
  /// True when the text so far ends inside a quoted field (a quote opened and not closed).
  bool in_quoted_field() const { return state_ == State::kQuoted; }

 private:
  // kQuoteSeen: a quote inside a quoted field, either its end or the first of a doubled quote.
  // kAfterQuote: text after a closing quote (the splitter refuses it) up to the next comma.
  enum class State : std::uint8_t { kFieldStart, kUnquoted, kQuoted, kQuoteSeen, kAfterQuote };
  State state_ = State::kFieldStart;
};

/// True when the CSV record `line` has exactly the columns of `expected` (a plain comma-separated
/// list such as "arrival_s,prompt_tokens,output_tokens"), each column possibly quoted and with
/// blanks around it, compared case-sensitively.
bool csv_header_is(std::string_view line, std::string_view expected);

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
