// Where requests come from: a stream of TraceRecords in arrival order, read lazily so that a
// ten-million-row trace is never held in memory (the simulator pulls the next record only when
// the previous one has arrived).
//
// Implementations (sim/serving/traces/): the Azure LLM inference trace CSV
// (TIMESTAMP,ContextTokens,GeneratedTokens), the Mooncake JSONL (timestamp in ms,
// input_length, output_length, hash_ids), a plain CSV (arrival_s,prompt_tokens,output_tokens),
// and synthetic generators. Transforms (time scaling, windows, length caps and filters,
// request limits) wrap any source.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "sim/serving/request.hpp"

namespace vramsim::serving {

/// The latest arrival the simulator accepts: 1e18 ns (about 31.7 years; the bound `train`
/// applies to a step's ops). The clock is int64 nanoseconds (292 years), so the run after the
/// last arrival keeps more than 250 years of headroom. A source whose arrivals pass it throws
/// ConfigError naming the setting that put them there (--rate, --time-scale, the trace line).
inline constexpr std::int64_t kMaxArrivalNs = 1'000'000'000'000'000'000;
inline constexpr double kMaxArrivalSeconds = 1e9;

/// Counters a source keeps while it streams; reported in results (never silently dropped).
struct TraceStats {
  std::int64_t rows_read = 0;        // data rows seen (header and comments excluded)
  std::int64_t rows_skipped = 0;     // malformed rows skipped under MalformedRowPolicy::kSkip
  std::int64_t rows_filtered = 0;    // well-formed rows dropped by a filter or window
  std::int64_t rows_capped = 0;      // rows whose lengths a cap shortened
  std::int64_t first_skipped_line = 0;  // 0 when none
};

class TraceSource {
 public:
  virtual ~TraceSource();
  /// The next record in non-decreasing arrival order, or nullopt at the end. Throws
  /// ConfigError naming file:line for a malformed row, an arrival earlier than the previous
  /// one included, unless the source's MalformedRowPolicy is kSkip: then the row is skipped
  /// and counted in TraceStats::rows_skipped.
  virtual std::optional<TraceRecord> next() = 0;
  /// One line for people: "Azure CSV AzureLLMInferenceTrace_conv.csv" or "synthetic: ...".
  virtual std::string describe() const = 0;
  virtual TraceStats stats() const = 0;
};

}  // namespace vramsim::serving
