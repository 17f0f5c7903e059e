// How long one iteration (step) of a replica takes, from the batch's composition. One interface;
// the datasheet roofline is the default implementation, a calibrated model (measured tables from
// kernels/) replaces it without touching the simulator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/units.hpp"

namespace vramsim::serving {

/// A prefill chunk in a step: `num_tokens` new prompt tokens after `num_context` tokens whose KV
/// is already cached (earlier chunks or a prefix-cache hit).
struct PrefillChunk {
  std::int64_t num_tokens = 0;
  std::int64_t num_context = 0;
};

/// What one step computes. Decodes are summarised (one new token per sequence) so that a
/// step over a thousand sequences costs O(1) to describe.
struct BatchShape {
  std::vector<PrefillChunk> prefills;
  std::int64_t num_decodes = 0;            // sequences generating one token
  std::int64_t decode_context_tokens = 0;  // sum over decodes of tokens attended (new included)
  /// A lock-stepped data-parallel MoE group (expert_parallel.hpp); all zero without one, and
  /// only a model built for the group reads them. dp_rank: this batch's rank;
  /// dp_padded_tokens: the tokens its dense layers run (its own, or the group's largest batch
  /// when vLLM pads the ranks to one size); dp_group_tokens: every rank's tokens (padded),
  /// which its MoE layers exchange and its experts serve.
  std::int32_t dp_rank = 0;
  std::int64_t dp_padded_tokens = 0;
  std::int64_t dp_group_tokens = 0;
  /// Multi-LoRA: the tokens of requests that name an adapter, and the distinct adapters they
  /// name (lora_time_model.hpp); zero without LoRA.
  std::int64_t num_lora_tokens = 0;
  std::int64_t num_adapters = 0;
  std::int64_t num_prefill_tokens() const;
  std::int64_t num_tokens() const { return num_prefill_tokens() + num_decodes; }
  bool empty() const { return prefills.empty() && num_decodes == 0; }
};

/// The time of one step, split by cause (the parts add up to `total`; with pp > 1, `total` is
/// the latency through every stage and `stage_interval` the time before the next batch can
/// enter the first stage).
struct StepTime {
  Duration total;
  Duration stage_interval;
  Duration linear;         // matmuls (compute- or weight-bandwidth-bound)
  Duration attention;      // prefill attention (FLOPs) and decode attention (KV bytes read)
  Duration communication;  // TP all-reduces, PP send/recv
  Duration kernel_gaps;    // GPU time between the forward's kernels and the shortest time of
                           // its element-wise kernels (summed over the stages)
  Duration overhead;       // per-step CPU / scheduling / launch overhead
};

class ExecutionTimeModel {
 public:
  virtual ~ExecutionTimeModel();
  /// Time of one step of `batch` on one replica. `batch` must not be empty.
  virtual StepTime step_time(const BatchShape& batch) const = 0;
  /// Where the numbers come from ("roofline: h100-sxm datasheet", "calibrated: profile.json").
  virtual std::string describe() const = 0;
};

}  // namespace vramsim::serving
