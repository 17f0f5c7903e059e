// The Azure LLM inference trace 2023 (Patel et al., "Splitwise", ISCA'24;
// github.com/Azure/AzurePublicDataset, data/AzureLLMInferenceTrace_{code,conv}.csv):
//
//   TIMESTAMP,ContextTokens,GeneratedTokens
//   2023-11-16 18:15:46.6805900,374,44
//
// TIMESTAMP is wall-clock time without a time zone, with up to 7 (here: up to 9) fractional
// digits. It is converted exactly to integer nanoseconds (civil date to days, no locale or
// time-zone functions), and arrivals are the time since the first row. Any field, header
// names included, may be quoted as RFC 4180 does ("2023-11-16 18:15:46.6805900","374","44");
// a line break inside quotes continues the record (LineReader::next_csv_record), and errors
// name the line the record starts on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/serving/traces/file_trace_source.hpp"
#include "sim/serving/traces/trace_parsing.hpp"

namespace vramsim::serving {

inline constexpr std::string_view kAzureCsvHeader = "TIMESTAMP,ContextTokens,GeneratedTokens";

inline constexpr unsigned kMinWallClockYear = 1970;
inline constexpr unsigned kMaxWallClockYear = 2261;

/// Days from 1970-01-01 to the proleptic Gregorian date y-m-d (H. Hinnant's days_from_civil).
/// Requires 1 <= m <= 12 and 1 <= d <= 31.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d);

/// "YYYY-MM-DD HH:MM:SS[.f...]" (1 to 9 fractional digits) as nanoseconds since
/// 1970-01-01 00:00:00 of the same (unnamed) time zone. nullopt for any other shape, for an
/// impossible date or time (month 13, February 30, hour 24, second 60), or for a year outside
/// [kMinWallClockYear, kMaxWallClockYear] (int64 nanoseconds since 1970 end in 2262).
std::optional<std::int64_t> parse_wall_clock_ns(std::string_view text);

class AzureCsvTrace final : public FileTraceSource {
 public:
  /// Opens `path` and checks its header; throws ConfigError on an unreadable file or a wrong
  /// header. Rows are then read lazily by next().
  AzureCsvTrace(std::string path, MalformedRowPolicy policy);
  std::string describe() const override;

 private:
  bool parse_row(std::string_view line, TraceRecord& out, std::string& error) override;

  CsvRecordSplitter csv_;
};

}  // namespace vramsim::serving
