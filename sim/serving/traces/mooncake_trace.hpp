// The Mooncake FAST'25 traces (Qin et al., "Mooncake: Trading More Storage for Less
// Computation", FAST'25; github.com/kvcache-ai/Mooncake, FAST25-release/traces/*.jsonl). One
// JSON object per line:
//
//   {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, ...]}
//
// timestamp: integer milliseconds since the trace start (arrivals are re-based on the first
// row); input_length/output_length: tokens; hash_ids: remapped content ids of the prompt's
// 512-token blocks (equal ids mean equal prefix KV). hash_ids may be absent (no sharing); when
// present it must hold exactly ceil(input_length / 512) ids, else the row is malformed.
// Other keys are ignored: JSON names its fields, so an extra key cannot shift a value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/serving/traces/file_trace_source.hpp"

namespace vramsim::serving {

/// Tokens per Mooncake hash id (the FAST25-release README: "block size 512").
inline constexpr std::int64_t kMooncakeHashBlockTokens = 512;

class MooncakeTrace final : public FileTraceSource {
 public:
  /// Opens `path`; throws ConfigError if it cannot be read. Rows are parsed lazily by next().
  MooncakeTrace(std::string path, MalformedRowPolicy policy);
  std::string describe() const override;

 private:
  bool parse_row(std::string_view line, TraceRecord& out, std::string& error) override;
};

}  // namespace vramsim::serving
