// How a quantized checkpoint stores one linear layer: the bits of a weight, where its scales,
// zero points and permutation indices go, and which modules stay unquantized.
//
// Every supported format reduces to this one layout (weight_format.hpp sums its bytes):
//
//   weights   in * out * weight_bits / 8 bytes (packed into int32 / uint8 words)
//   scales    scale_bytes each: 1 per tensor | 1 per output channel | 1 per group of
//             group_size input rows per output channel | 1 per block_out x block_in block
//   zeros     zero_bits each, one per scale (packed), when the checkpoint stores them
//   g_idx     one int32 per input row (GPTQ; compressed-tensors actorder "group")
//   extra     fixed bytes per matrix (static input_scale, pack-quantized weight_shape)
//
// It lives apart from weight_format.hpp so that ModelSpec can hold the checkpoint's layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/enum_table.hpp"

namespace vramsim::model {

enum class QuantMethod {
  kNone,
  kFp8,
  kInt8,
  kAwq,
  kGptq,
  kMxfp4,
  kBitsAndBytes,
  kModelOpt,
  kModelOptFp4,
};

/// The names vLLM's --quantization takes, with the kernel names it also accepts.
inline constexpr auto kQuantMethods = enum_table<QuantMethod>(
    {
        {QuantMethod::kNone, "none", "unquantized: every weight in --dtype"},
        {QuantMethod::kFp8, "fp8", "1-byte weights, one fp32 scale per tensor"},
        {QuantMethod::kInt8, "int8", "W8A8: 1-byte weights, one fp32 scale per output channel"},
        {QuantMethod::kAwq, "awq", "AWQ: 4-bit weights, fp16 scale and 4-bit zero per group"},
        {QuantMethod::kGptq, "gptq", "GPTQ: as AWQ, plus an int32 g_idx per input row"},
        {QuantMethod::kMxfp4, "mxfp4", "MXFP4 routed experts: 4-bit e2m1, e8m0 scale per 32"},
        {QuantMethod::kBitsAndBytes, "bitsandbytes",
         "bitsandbytes: 4-bit nf4/fp4, fp32 absmax per 64 (8-bit LLM.int8(): fp32 per row)"},
        {QuantMethod::kModelOpt, "modelopt", "NVIDIA ModelOpt FP8: fp32 weight and input scale"},
        {QuantMethod::kModelOptFp4, "modelopt_fp4",
         "NVFP4: 4-bit e2m1, fp8 e4m3 scale per 16, fp32 global scales"},
    },
    {
        {"w8a8", QuantMethod::kInt8},
        {"awq_marlin", QuantMethod::kAwq},
        {"gptq_marlin", QuantMethod::kGptq},
    });
static_assert(covers_every_enumerator(kQuantMethods) && names_are_unique(kQuantMethods));

enum class ScaleGranularity {
  kTensor,   // one scale per matrix
  kChannel,  // one scale per output channel
  kGroup,    // one scale per group_size input rows, per output channel
  kBlock,    // one scale per block_out x block_in tile (DeepSeek-V3 style fp8)
};

struct QuantLayout {
  int weight_bits = 16;  // stored bits per weight (naive-quantized int4 sits in an int8: 8)
  ScaleGranularity granularity = ScaleGranularity::kTensor;
  std::int64_t group_size = 128;  // kGroup
  std::int64_t block_out = 128;   // kBlock: weight_block_size[0], output rows per scale
  std::int64_t block_in = 128;    // kBlock: weight_block_size[1], input columns per scale
  int scale_bytes = 4;            // fp32 4, fp16 / bf16 2, e8m0 1
  bool scales_in_dtype = false;   // scales held in the unquantized dtype (scale_bytes unused)
  int zero_bits = 0;              // bits of one stored zero point; 0 when none are stored
  bool g_idx = false;             // an int32 group index per input row
  /// GPTQ desc_act: a row-parallel shard keeps the scales and zeros of every group of the
  /// full input (vLLM gptq.py leaves scale_and_zero_input_dim unset under act-order).
  bool act_order = false;
  std::int64_t extra_bytes = 0;  // fixed bytes per matrix (input_scale, weight_shape)
  bool experts_only = false;     // only routed experts are quantized (gpt-oss mxfp4)
  bool lm_head = false;          // lm_head quantized too (GPTQ "lm_head": true)
  /// Modules the checkpoint keeps unquantized ("lm_head", "model.layers.0.mlp.down_proj",
  /// "re:.*self_attn.*"), from ignore / ignored_layers / modules_to_not_convert.
  std::vector<std::string> ignore;
};

/// A compressed-tensors scheme for the modules its targets name ("re:.*down_proj",
/// "model.layers.0.mlp.down_proj"), beside the default scheme of the "Linear" class target.
struct TargetedScheme {
  std::vector<std::string> targets;
  QuantMethod method = QuantMethod::kNone;
  QuantLayout layout;
};

/// What config.json's quantization_config says about the checkpoint.
struct CheckpointQuant {
  QuantMethod method = QuantMethod::kNone;  // the class of kernel vLLM runs for it
  std::string quant_method;                 // the config's own name ("compressed-tensors")
  std::string config_file;                  // the config.json it was read from, for messages
  std::string key = "quantization_config";  // or the older "compression_config"
  /// The key naming the method, for a --quantization that contradicts it
  /// ("quantization_config.quant_method"; "quantization.quant_algo" in hf_quant_config.json).
  std::string method_key = "quantization_config.quant_method";
  QuantLayout layout;  // every quantized linear's, less those of `targeted`
  /// compressed-tensors config_groups naming modules, matched before the default, first match
  /// first (empty for every other format).
  std::vector<TargetedScheme> targeted;
  /// compressed-tensors kv_cache_scheme num_bits (8 for fp8 KV scales); 0 when none. Weight
  /// bytes do not change: vLLM's Attention holds fp32 k_scale / v_scale in every layer anyway.
  int kv_cache_bits = 0;
};

}  // namespace vramsim::model
