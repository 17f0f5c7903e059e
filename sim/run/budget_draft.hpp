// Speculative decoding's drafter as the budget and the serving time model see it: from vLLM's
// --speculative-config (sim/serving/speculative.hpp) and the target, the drafter's own weights
// and KV layers per device (memory::DraftMemory) and the model one draft forward pass runs.
//
//   draft_model  a model of its own (config.json path or zoo id): all its weights and layers
//   eagle        one decoder layer of the target's shapes + fc (2h -> h); embed_tokens and
//                lm_head shared with the target (vllm/model_executor/models/llama_eagle.py,
//                vllm/v1/spec_decode/eagle.py load_model shares them)
//   eagle3       one decoder layer whose qkv_proj reads 2h (embeddings and fused features) +
//                fc (3h -> h) + its own lm_head over the draft vocabulary (llama_eagle3.py)
//   mtp          the checkpoint's num_nextn_predict_layers layers (the target's last layer's
//                kind) + eh_proj (2h -> h) and two norms each; embed_tokens and lm_head shared
//                (deepseek_mtp.py; eagle.py load_model shares them); a pass runs one layer
//   ngram        nothing on the GPU
//
// A head's shapes come from its config.json when `model` names a local file or folder
// (hidden_size, intermediate_size, num_attention_heads, num_key_value_heads, head_dim,
// num_hidden_layers, draft_vocab_size); otherwise from the target, vocabulary included, and a
// note says so.
//
// NOTE: not modelled: the drafter's share of the profile run's activation peak (it runs after
// the target and reuses the freed activations) and of the CUDA graphs (a head's graphs are a
// few MiB); a draft model of its own would add its graph pools.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/memory/budget.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/serving/speculative.hpp"

namespace vramsim::run {

struct SpeculativeDraft {
  serving::SpeculativeConfig config;
  /// What one draft forward pass runs (the time model's model); nullopt for ngram.
  std::optional<model::ModelSpec> pass_model;
  /// Its weight format (a head in the engine's dtype; a draft model as its checkpoint says).
  std::optional<model::WeightFormat> pass_weights;
  /// Its memory per device; nullopt for ngram.
  std::optional<memory::DraftMemory> memory;
};

/// The drafter of `config` for `target` (read from `target_id`, a config.json path or zoo id:
/// mtp reads its num_nextn_predict_layers there) under `engine` (tp, dtype, kv_cache_dtype, weights).
/// Throws ConfigError on "engine.speculative_config.<key>": a draft model that does not load
/// or has another vocabulary, mtp on a model without MTP layers, a draft TP other than the
/// target's, pp > 1. Notes about assumed shapes are appended to `notes`.
SpeculativeDraft make_speculative_draft(const serving::SpeculativeConfig& config,
                                        const model::ModelSpec& target,
                                        const std::string& target_id,
                                        const memory::EngineConfig& engine,
                                        const std::filesystem::path& zoo_dir,
                                        std::vector<std::string>& notes);

}  // namespace vramsim::run
