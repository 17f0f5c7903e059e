// Parameter counts of a ModelSpec: total, active per token (MoE), embeddings, per layer.
//
// Counts are exact int64 sums over weight_tensors() (weight_tensors.hpp), so they equal the
// element count of the Hugging Face checkpoint: Llama-3.1-8B gives 8,030,261,248.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/model/model_spec.hpp"

namespace vramsim::model {

struct ParamCount {
  /// Every parameter once (a tied lm_head is not counted twice).
  std::int64_t total = 0;
  /// Parameters one token uses: everything except the routed experts a token is not sent to
  /// (non-expert weights, top-k routed experts, shared experts, routers, embeddings and lm_head).
  /// Equals total for dense models. NOTE: this is the convention of the Mixtral (12.9B) and
  /// Qwen3-30B-A3B (3.3B) cards; OpenAI's gpt-oss "3.6B active" also leaves out the input
  /// embedding, i.e. active - embedding.
  std::int64_t active = 0;
  /// Token embedding table plus learned position table (lookups, not matmuls).
  std::int64_t embedding = 0;
  /// The untied output projection (and its bias); 0 when tied to the embedding.
  std::int64_t lm_head = 0;
  /// Vision encoder and projector of a multimodal model; included in total and active.
  std::int64_t vision = 0;
  /// Parameters of each decoder layer (size num_layers), all experts included.
  std::vector<std::int64_t> per_layer;
  /// Active parameters of each decoder layer.
  std::vector<std::int64_t> per_layer_active;

  /// total - embedding - lm_head - vision: the "non-embedding" figure of the Qwen cards.
  std::int64_t non_embedding() const { return total - embedding - lm_head - vision; }
};

/// Counts the parameters of `spec`. Exact; never throws for a spec the reader produced.
ParamCount count_params(const ModelSpec& spec);

}  // namespace vramsim::model
