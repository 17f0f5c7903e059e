// The context lengths a config's RoPE scaling gives, as vLLM derives them, and the checks of the
// rotary keys. Not a public API: hf_config.cpp calls it once the family's keys are read.
//
// vLLM (vllm/config/model.py _get_and_verify_max_len, v0.11 and later):
//   derived = max_position_embeddings, then for rope_scaling (transformers v4) or
//   rope_parameters (v5, optionally one entry per layer type) of a type other than
//   su / longrope / llama3:  derived = (yarn: original_max_position_embeddings) * factor
//   ("default" has no factor: 1). max_model_len defaults to derived (LongRoPE: the config's
//   original_max_position_embeddings), and a larger one is refused without
//   VLLM_ALLOW_LONG_MAX_MODEL_LEN.
//     Qwen2.5 + YaRN {factor 4, original_max_position_embeddings 32768} -> 131,072
//     Llama-3.1 {rope_type llama3, factor 8}                            -> 131,072 (unscaled)
//     linear / dynamic {factor 2} on 4,096                              -> 8,192
// The rotary cos/sin cache vLLM builds (model_executor/layers/rotary_embedding) has as many
// rows: max_position * factor for linear and dynamic NTK, original * factor for YaRN, and
// short + long caches (original + max_position_embeddings) for LongRoPE, and for Gemma 3 a
// local cache of max_position_embeddings rows beside its global layers' scaled one.
#pragma once

#include "sim/model/hf_config_keys.hpp"
#include "sim/model/model_spec.hpp"

namespace vramsim::model::detail {

/// Reads rope_scaling / rope_parameters and original_max_position_embeddings of `k` (the
/// decoder's keys) into spec.derived_max_model_len, default_max_model_len and
/// rotary_cache_positions; spec.max_position_embeddings must be read already. Refuses (into
/// the report of `k`, naming the key) a value that is not an object, a missing or unknown
/// rope type, a factor below 1, and a YaRN block without original_max_position_embeddings.
void read_rope_scaling(ConfigKeys& k, ModelSpec& spec);

}  // namespace vramsim::model::detail
