// Which LoRA adapter each request names, for workloads that do not say: a wrapper over any
// TraceSource that gives every record without an adapter one of N adapters (1..N), drawn from
// its own seeded stream, so a run is deterministic for its seed and the lengths and arrivals
// of the wrapped source are unchanged.
//
//   uniform   every adapter equally likely
//   zipf:S    adapter k with probability proportional to 1 / k^S (S > 0): a few popular
//             adapters and a long tail, as S-LoRA's and Punica's evaluations draw them
//             (S-LoRA, arXiv:2311.03285 sec. 7: power-law adapter popularity)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/serving/trace_source.hpp"

namespace vramsim::serving {

struct LoraAssignment {
  std::int64_t num_adapters = 0;  // 0: every request uses the base model (no wrapper)
  double zipf_exponent = 0.0;     // 0: uniform
  std::uint64_t seed = 0;
  /// Reads "uniform" or "zipf:S" into zipf_exponent; a problem on `at`.
  void parse_distribution(std::string_view text, ValidationReport& report,
                          const std::string& at);
  /// Problems on "<at>.num_lora_adapters".
  void validate(ValidationReport& report, const std::string& at) const;
};

class LoraAssignedTrace final : public TraceSource {
 public:
  /// Requires a non-null source and num_adapters >= 1.
  LoraAssignedTrace(std::unique_ptr<TraceSource> source, const LoraAssignment& assignment);
  std::optional<TraceRecord> next() override;
  std::string describe() const override;
  TraceStats stats() const override { return source_->stats(); }

 private:
  std::unique_ptr<TraceSource> source_;
  LoraAssignment a_;
  RngStream rng_;
  std::vector<double> cdf_;  // cumulative probabilities of adapters 1..N
};

/// `source` wrapped when assignment.num_adapters > 0, else `source` itself.
std::unique_ptr<TraceSource> assign_adapters(std::unique_ptr<TraceSource> source,
                                             const LoraAssignment& assignment);

}  // namespace vramsim::serving
