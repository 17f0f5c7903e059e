// Per-family key reading for hf_config.cpp (not a public API).
#pragma once

#include <string_view>

#include "sim/model/hf_config_keys.hpp"
#include "sim/model/model_spec.hpp"

namespace vramsim::model::detail {

struct FamilyResult {
  bool explicit_head_dim = false;  // the config gave head_dim (no hidden % heads check)
  std::string_view heads_key = "num_attention_heads";
  std::string_view kv_heads_key = "num_key_value_heads";
  std::string_view layers_key = "num_hidden_layers";
};

/// Reads the decoder of `spec.family` from `keys` (for Mistral3, the text_config object) into
/// `spec`: sizes, biases, norms, MLP kind, MoE, MLA, sliding windows. Problems go to the
/// report of `keys`.
FamilyResult read_family(ConfigKeys& keys, ModelSpec& spec);

/// Reads Mistral3's vision_config (Pixtral) and projector keys into spec.vision.
void read_mistral3_vision(ConfigKeys& top, ModelSpec& spec);

/// Reads Qwen2.5-VL's vision_config (its ViT and patch merger) into spec.vision.
void read_qwen2_5_vl_vision(ConfigKeys& top, ModelSpec& spec);

/// Reads Gemma 3's vision_config (SigLIP) into spec.vision.
void read_gemma3_vision(ConfigKeys& top, ModelSpec& spec);

}  // namespace vramsim::model::detail
