// The inventory of a model's weight tensors, with how tensor parallelism splits each one.
//
// Every count in vramsim (parameters, weight bytes per device, matmul FLOPs) is a sum over this
// one list, so the three can never disagree. Tensors follow the Hugging Face module layout
// (q_proj, k_proj, ..., experts.down_proj), with the shapes of the checkpoint: fused modules
// (phi-3's qkv_proj / gate_up_proj, GPT-2's c_attn) are listed as their parts, which have the
// same element counts.
//
// How vLLM splits each kind over tensor parallelism (vllm/model_executor/layers/linear.py,
// vocab_parallel_embedding.py, fused_moe/layer.py):
//
//   q/k/v, gate/up, MLA q_b/kv_b   ColumnParallelLinear   output features / tp (biases too)
//   o_proj, down_proj              RowParallelLinear      input features / tp; bias replicated
//   k/v when tp > num_kv_heads     QKVParallelLinear      one KV head per rank, replicated
//   embed_tokens, lm_head          vocab-parallel         padded vocab / tp rows
//   routed experts                 FusedMoE (no EP)       each expert's intermediate / tp
//   norms, routers, MLA kv_a/q_a   replicated
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/model/model_spec.hpp"

namespace vramsim::model {

enum class TensorKind {
  kEmbedding,          // token embedding table (a lookup): in_features = vocab rows
  kPositionEmbedding,  // learned absolute positions (a lookup): in_features = positions
  kLmHead,             // output projection embed_dim -> vocab (a matmul)
  kLinear,             // a dense matmul weight of the decoder (attention, MLP, MLA, OPT proj.)
  kExpertLinear,       // a routed expert's matmul weight; copies = num_experts
  kRouter,             // an MoE gate matmul weight; never quantized (vLLM: quant_config=None)
  kVector,             // norm weights and biases, linear biases, attention sinks
  kVision,             // vision encoder / projector weight; never quantized, no text FLOPs
};

enum class TpSplit {
  kReplicated,  // every TP rank holds all of it
  kColumn,      // output features split
  kRow,         // input features split
  kKvHeads,     // out_features = num_kv_heads * head_dim, split by whole KV heads (replicated
                // when tp > num_kv_heads, as vLLM does)
  kVocab,       // the vocab dimension split, after padding the vocab to a multiple of 64
};

/// Layer index of tensors that live before the first decoder layer (first pipeline stage).
inline constexpr std::int64_t kPreLayers = -1;

struct WeightTensor {
  std::string_view name;  // Hugging Face module name without the layer prefix ("q_proj")
  /// Decoder layer index; kPreLayers for embeddings (and the vision tower); num_layers for the
  /// final norm and lm_head (last pipeline stage).
  std::int64_t layer = 0;
  std::int64_t in_features = 1;   // 1 for vectors; vocab rows for the token embedding
  std::int64_t out_features = 1;
  std::int64_t copies = 1;         // experts (or vision layers) with this shape
  std::int64_t active_copies = 1;  // of those, used by one token (top-k for routed experts)
  TensorKind kind = TensorKind::kVector;
  TpSplit split = TpSplit::kReplicated;
  bool matmul = false;  // multiplies activations: counted as 2 FLOPs per weight per token
  bool tied = false;    // lm_head sharing the embedding: no parameters of its own

  std::int64_t numel() const { return tied ? 0 : in_features * out_features * copies; }
  std::int64_t active_numel() const {
    return tied ? 0 : in_features * out_features * active_copies;
  }
};

/// Every weight tensor of the model, in module order: embeddings (and vision tower), then
/// each decoder layer, then the final norm and lm_head.
std::vector<WeightTensor> weight_tensors(const ModelSpec& spec);

}  // namespace vramsim::model
