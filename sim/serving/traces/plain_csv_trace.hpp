// vramsim's own plain request CSV (also the format of the shared vllm-bench request streams):
//
//   arrival_s,prompt_tokens,output_tokens
//   0.000000,2358,531
//
// arrival_s: non-negative seconds, a decimal ("12.5") converted exactly to ns, or scientific
// notation ("1.25e1") rounded once; arrivals are re-based on the first row. Any field, header
// names included, may be quoted as RFC 4180 does ("0.5","2358","531", pandas' QUOTE_ALL); a
// line break inside quotes continues the record (LineReader::next_csv_record), and errors name
// the line the record starts on.
// NOTE: the header must be exactly these three columns and every row must have three fields.
// Extra columns are an error rather than silently ignored, so that a file meant for another
// tool (with, say, a priority column vramsim would drop) is noticed.
#pragma once

#include <string>
#include <string_view>

#include "sim/serving/traces/file_trace_source.hpp"
#include "sim/serving/traces/trace_parsing.hpp"

namespace vramsim::serving {

inline constexpr std::string_view kPlainCsvHeader = "arrival_s,prompt_tokens,output_tokens";

class PlainCsvTrace final : public FileTraceSource {
 public:
  /// Opens `path` and checks its header; throws ConfigError on an unreadable file or a wrong
  /// header.
  PlainCsvTrace(std::string path, MalformedRowPolicy policy);
  std::string describe() const override;

 private:
  bool parse_row(std::string_view line, TraceRecord& out, std::string& error) override;

  CsvRecordSplitter csv_;
};

}  // namespace vramsim::serving
