// What a decode costs in a step that also runs a prefill chunk, where vLLM's attention backend
// is FlashAttention 2's varlen kernel (vllm-flash-attn; vLLM V1 runs the whole batch, prefill
// chunks and decodes, through one flash_attn_varlen_func call).
//
// In a pure decode step (longest query 1) FA2 packs each KV head's query heads into one tile
// (seqlenq_ngroups_swapped) and splits the KV over thread blocks, so every KV byte is read once
// at the decode-attention efficiency. Once a prefill chunk of C > 1 tokens joins the step:
//   - the grid is ceil(C / 128) query tiles x sequences x query heads, so each decode runs a
//     thread block per query head and query tile, all but one of which find no query rows and
//     exit; each still occupies a block slot (kFa2MixedEmptyTile per slot-wave);
//   - the one real block of each (decode, query head) streams its KV head alone, without the
//     split: a minimum time per block (kFa2MixedDecodeTile), and the KV of one KV head is
//     requested once per query head of its group G, a fraction m of the repeats missing L2
//     (kFa2MixedRepeatMiss): KV bytes x (1 + (G - 1) m) at the decode-attention efficiency.
// Per layer and device, with D decodes, H query heads on the device and S SMs:
//   t = D H (ceil(C / 128) t_empty + t_tile) / S + KV bytes (1 + (G - 1) m) / (bandwidth e)
// Fitted constants (sim/cost/datasheet_constants.hpp, "FA2 mixed batches"), from LLMServingSim's
// public attention grids of vLLM 0.19 on an RTX 4090 and an RTX PRO 6000.
//
// Where it applies: FA2 is vLLM's backend on compute capability 8.x (Ampere, Ada) and 12.x
// (consumer Blackwell). Hopper runs FlashAttention 3 and datacenter Blackwell FlashInfer, whose
// mixed batches were not measured: there a decode costs what it costs in a pure decode step.
// Not for MLA models (their own backends).
#pragma once

#include <cstdint>
#include <optional>

#include "sim/hardware/device_spec.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/parallelism.hpp"
#include "sim/serving/roofline_options.hpp"

namespace vramsim::serving {

class MixedBatchDecode {
 public:
  /// The model's decode cost in mixed steps on `device`, or nullopt where decodes in mixed
  /// steps cost what they cost alone (see the file comment, or options.fa2_mixed_batches off).
  static std::optional<MixedBatchDecode> for_device(const model::ModelSpec& spec,
                                                    const hardware::DeviceSpec& device,
                                                    model::Parallelism par,
                                                    const RooflineOptions& options);

  /// The factor on the decodes' KV bytes in a step whose longest query is > 1 token.
  double kv_factor() const { return kv_factor_; }
  /// Thread-block time of `num_decodes` decodes in one layer beside a longest query of
  /// `max_query` tokens (> 1), in seconds.
  double block_seconds(std::int64_t num_decodes, std::int64_t max_query) const;

 private:
  double kv_factor_ = 1.0;
  double heads_per_sm_ = 0.0;  // query heads on the device / SMs
  double empty_tile_s_ = 0.0;
  double decode_tile_s_ = 0.0;
};

}  // namespace vramsim::serving
