// Transforms that wrap any TraceSource, applied to each record in this order:
//
//   1. window [window_start, window_end) on the source's own timeline: earlier rows are dropped
//      (counted in rows_filtered); the first row at or after window_end ends the stream (later
//      rows are never read). Kept arrivals are re-based on window_start, so a window starting
//      at 600 s turns an arrival at 612 s into 12 s.
//   2. caps: prompt_tokens and output_tokens above max_prompt_tokens / max_output_tokens are cut
//      to the cap (rows_capped counts rows cut at least once; hash_ids beyond the cut prompt are
//      dropped).
//   3. filter: rows with prompt + output > max_total_tokens (after the caps) are dropped
//      (rows_filtered), e.g. requests longer than the model's context.
//   4. time scale: arrival / time_scale (time_scale 2 replays twice as fast), rounded to ns.
//   5. max_requests: the stream ends after that many records.
//
// stats() returns the wrapped source's counters plus this wrapper's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/serving/trace_source.hpp"

namespace vramsim::serving {

struct TraceTransforms {
  double time_scale = 1.0;  // replay speed factor k: arrival / k; > 0
  std::optional<Duration> window_start;
  std::optional<Duration> window_end;
  std::optional<std::int64_t> max_requests;
  std::optional<std::int64_t> max_prompt_tokens;
  std::optional<std::int64_t> max_output_tokens;
  std::optional<std::int64_t> max_total_tokens;

  /// True when no transform is set (time_scale 1 and nothing else).
  bool is_identity() const;
  /// Reports every bad option on "<at>.<key>": time_scale, window_start, window_end,
  /// max_requests, max_prompt_tokens, max_output_tokens, max_total_tokens.
  void validate(ValidationReport& report, const std::string& at) const;
};

class TransformedTrace final : public TraceSource {
 public:
  /// Requires a non-null source and transforms that validate() accepted (checked).
  TransformedTrace(std::unique_ptr<TraceSource> source, const TraceTransforms& transforms);
  std::optional<TraceRecord> next() override;
  std::string describe() const override;
  TraceStats stats() const override;

 private:
  std::unique_ptr<TraceSource> source_;
  TraceTransforms t_;
  std::int64_t num_emitted_ = 0;
  std::int64_t rows_filtered_ = 0;
  std::int64_t rows_capped_ = 0;
  bool ended_ = false;
};

/// `source` wrapped in the transforms, or `source` itself when they are the identity.
std::unique_ptr<TraceSource> apply_transforms(std::unique_ptr<TraceSource> source,
                                              const TraceTransforms& transforms);

}  // namespace vramsim::serving
