// Reading config.json's quantization_config (or compressed-tensors' older compression_config)
// into the storage layout of quant_layout.hpp. Not a public API: hf_config.cpp calls it.
//
// Keys read, as vLLM's loaders read them (vllm/model_executor/layers/quantization/):
//
//   gptq                bits (2, 3, 4, 8), group_size (-1: one group per column), desc_act,
//                       sym, lm_head                                           (gptq.py)
//   awq                 bits | w_bit (4 or 8), group_size | q_group_size, zero_point,
//                       modules_to_not_convert                                  (awq.py)
//   fp8                 activation_scheme (static | dynamic), weight_block_size [n, k],
//                       ignored_layers | modules_to_not_convert                 (fp8.py)
//   mxfp4               modules_to_not_convert                                  (mxfp4.py)
//   compressed-tensors  format, config_groups.*.{targets, weights.{num_bits, type, strategy,
//                       group_size, block_structure, symmetric, actorder},
//                       input_activations.dynamic}, ignore, kv_cache_scheme
//                       (compressed_tensors/compressed_tensors.py and schemes/)
//   bitsandbytes        load_in_4bit, load_in_8bit, bnb_4bit_quant_type, bnb_4bit_use_double_quant,
//                       bnb_4bit_quant_storage, llm_int8_skip_modules          (bitsandbytes.py)
//   modelopt,           quant_algo (FP8, FP8_PER_CHANNEL_PER_TOKEN, FP8_PB_WO, NVFP4,
//   modelopt_fp4        W4A16_NVFP4), group_size, ignore, kv_cache_scheme; or the same under
//                       "quantization" as exclude_modules, kv_cache_quant_algo  (modelopt.py)
//
// ModelOpt <= 0.29 wrote its block to hf_quant_config.json beside config.json; vLLM reads that
// file only when config.json has no quantization_config (transformers_utils/config.py,
// "ModelOpt 0.29.0 and before saves the quantization config in a separate ...").
//
// A malformed value is reported on its full key ("quantization_config.bits") in the file.
#pragma once

#include "sim/model/hf_config_keys.hpp"
#include "sim/model/model_spec.hpp"

namespace vramsim::model::detail {

/// Reads quantization_config / compression_config of `top` into spec.checkpoint_quant and
/// spec.checkpoint_quantization; nothing when neither key is present. Problems go to the
/// report of `top`.
void read_quantization_config(ConfigKeys& top, ModelSpec& spec);

/// Reads ModelOpt's hf_quant_config.json (`file`: its top-level object) into
/// spec.checkpoint_quant; for a config.json without quantization_config. Problems are reported
/// on the file's own keys ("quantization.quant_algo").
void read_hf_quant_config_file(ConfigKeys& file, ModelSpec& spec);

}  // namespace vramsim::model::detail
