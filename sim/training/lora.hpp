// LoRA / QLoRA accounting: which parameters a LoRA run trains, how its frozen base is stored, and
// what each block (embedding, decoder layer, lm head) holds and runs on one TP rank.
//
// Trainable set (PEFT, LoraConfig): for each targeted linear W [in x out] of every decoder layer,
// A [in x r] and B [r x out], sharded over tensor parallelism like W (column-parallel W: A whole,
// B split by out; row-parallel W: A split by in, B whole), plus the modules chosen in
// lora.trainable_extra (embed_tokens, lm_head, the norm weights). Everything else is frozen,
// kept in the compute dtype, or, for the decoder's linears under base_quant, as bitsandbytes
// stores them:
//
//   nf4 / fp4 (bnb.functional.quantize_4bit, blocksize 64), per weight matrix of n elements:
//     packed 4-bit values           ceil(n / 2) B
//     absmax per 64-value block     double quant: 1 B each (8-bit blockwise-quantized), plus
//                                   one fp32 scale per 256 first-level blocks and one fp32
//                                   offset; without: 4 B each
//     the 16-entry NF4 / FP4 code   16 fp32 (64 B) per matrix
//   QLoRA (Dettmers et al. 2023, arXiv:2305.14314, sec. 3 "Double Quantization"): 32/64 = 0.5
//   bit/parameter of absmax without double quant, 8/64 + 32/(64 * 256) = 0.127 with it.
//   int8 (LLM.int8(), Linear8bitLt): 1 B per element (CB) and one fp32 scale per output row (SCB).
//
// NOTE: PEFT creates the adapters in fp32 (autocast_adapter_dtype) under bf16 autocast, i.e.
// 4 B weights + 4 B gradients + 8 B Adam states = 16 B per trainable parameter, the same total
// as the mixed-precision row of model_state.hpp (2 + 2 + 4 + 8), which is what is charged.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/training/training_plan.hpp"

namespace vramsim::training {

/// Bytes bitsandbytes keeps for one frozen weight matrix [in x out] quantized as `q`
/// (the table above); in * out * 0 for kNone is not asked: VRAMSIM_CHECKs q != kNone.
Bytes quantized_matrix_bytes(BaseQuant q, bool double_quant, std::int64_t in_features,
                             std::int64_t out_features);

/// The whole model's parameter counts as PEFT's print_trainable_parameters() prints them
/// ("trainable params: X || all params: Y || trainable%: Z"): adapters + trainable base tensors,
/// and every base parameter plus the adapters.
struct LoraParamCount {
  std::int64_t adapters = 0;
  std::int64_t trainable = 0;
  std::int64_t all = 0;
  double trainable_percent() const {
    return all > 0 ? 100.0 * static_cast<double>(trainable) / static_cast<double>(all) : 0.0;
  }
};
LoraParamCount count_lora_params(const model::ModelSpec& spec, const TrainingPlan& plan);

/// One adapter matrix pair's GEMMs on a TP rank: x [m x in] A [in x r], then [m x r] B [r x out].
struct AdapterShape {
  std::int64_t in = 0, out = 0;
  double copies = 1;        // experts with this shape
  double routed_share = 0;  // > 0: a routed expert, m = tokens * routed_share
};

/// What one block holds and runs under LoRA on one TP rank.
struct LoraBlock {
  std::int64_t trainable = 0;         // adapter + trainable base elements
  std::int64_t frozen = 0;            // frozen base elements
  Bytes frozen_bytes;                 // their storage (quantized or in the compute dtype)
  std::int64_t quantized = 0;         // elements stored quantized
  Bytes quantized_bytes;              // their storage
  Bytes largest_dequantized;          // the largest quantized matrix in the compute dtype
  bool base_matmul_trainable = false;  // the block's own matmul weights get gradients (lm_head)
  std::vector<AdapterShape> adapters;
  /// Activation bytes per token the adapters keep for backward: the r-wide intermediate of each
  /// (B's input), and with dropout the dropped input (A's input) and its 1-byte mask.
  std::int64_t adapter_activation_bytes_per_token = 0;
};

/// Every block: [0] the embedding (kPreLayers), [1 + l] decoder layer l, [num_layers + 1] the
/// final norm and lm_head; `head_holds_embedding`: a tied lm_head on its own pipeline stage
/// keeps a copy of the embedding there. `element_bytes`: the compute dtype's.
std::vector<LoraBlock> lora_blocks(const model::ModelSpec& spec, const TrainingPlan& plan,
                                   std::int64_t element_bytes, bool head_holds_embedding);

}  // namespace vramsim::training
