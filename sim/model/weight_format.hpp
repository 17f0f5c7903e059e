// How weights are stored: the --dtype of unquantized tensors and vLLM's --quantization method,
// or the checkpoint's own quantization_config (hf_quant_config.hpp) with its real bits, group
// size, scale granularity and ignored modules.
//
// Storage per quantized matrix of in x out weights (exact bytes; G = group_size) as
// quant_layout.hpp lays it out. The defaults of --quantization without a checkpoint config:
//
//   method   weights        scales / zeros / indices                    bits per weight
//   none     dtype          -                                           16 (bf16/fp16)
//   fp8      1 B            one fp32 scale per tensor (vLLM online fp8) 8 + 32/(in*out)
//   int8     1 B            one fp32 scale per output channel (W8A8)    8 + 32/in
//   awq      4 bit packed   fp16 scale + 4-bit zero per group of 128    4 + 16/G + 4/G = 4.15625
//   gptq     4 bit packed   as AWQ, plus an int32 g_idx per input row   4.15625 + 32/out
//   mxfp4    4 bit (e2m1)   one 8-bit (e8m0) scale per 32 weights       4 + 8/32 = 4.25
//   bitsandbytes  4 bit nf4 one fp32 absmax per 64, fp32 code book [16]     4 + 32/64 = 4.5
//   modelopt      (a ModelOpt checkpoint only) fp8 as fp8 static: + 8 B per module
//   modelopt_fp4  (a ModelOpt checkpoint only) NVFP4: fp8 e4m3 scale per 16 4 + 8/16 = 4.5
//
// As in vLLM, embeddings, lm_head, norms, biases and MoE routers stay in dtype; mxfp4
// (gpt-oss) quantizes only the routed experts (attention stays in dtype, as the checkpoint's
// modules_to_not_convert says), the others quantize every linear layer of the decoder that the
// checkpoint does not list as ignored.
// Sources: AWQ (Lin et al. 2023, arXiv:2306.00978) and GPTQ (Frantar et al. 2022,
// arXiv:2210.17323) packing as in vLLM's awq.py / gptq.py; OCP Microscaling Formats (MX) v1.0
// for MXFP4.
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/core/dtype.hpp"
#include "sim/core/enum_table.hpp"
#include "sim/core/units.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/quant_layout.hpp"
#include "sim/model/weight_tensors.hpp"

namespace vramsim::model {

/// Canonical name as vLLM's --quantization takes it ("none" for kNone).
std::string_view to_string(QuantMethod m);
/// The accepted --quantization names with their aliases, "none, fp8, int8 (w8a8), ...".
std::string_view quantization_names();

struct TargetedFormat;

struct WeightFormat {
  DType dtype = DType::kBf16;  // --dtype: unquantized weights, embeddings, lm_head, norms
  QuantMethod quantization = QuantMethod::kNone;
  QuantLayout layout;  // how quantized matrices are stored (unused for kNone)
  /// Formats of the modules a mixed compressed-tensors checkpoint names in other config_groups
  /// (CheckpointQuant::targeted), matched in order before `layout`.
  std::vector<TargetedFormat> targeted;
};

struct TargetedFormat {
  std::vector<std::string> targets;  // as layout.ignore's entries
  WeightFormat format;               // its own targeted list empty
};

/// The layout --quantization `m` implies without a checkpoint config (the table above).
QuantLayout default_layout(QuantMethod m);

/// Builds a format from --dtype and --quantization. Accepts "" and "none"; "fp8"; "int8" and
/// "w8a8"; "awq" and "awq_marlin"; "gptq" and "gptq_marlin"; "mxfp4"; "bitsandbytes";
/// "modelopt"; "modelopt_fp4". Any other name is a ConfigError on field "quantization" listing
/// the valid names.
WeightFormat make_weight_format(DType dtype, std::string_view quantization);

/// Builds the format of `spec`'s checkpoint: its quantization_config layout when `quantization`
/// is "", "none", the checkpoint's quant_method or a name of the same method (awq_marlin for
/// awq). A different method is refused as vLLM refuses it, naming the config's
/// quantization_config.quant_method. Without a checkpoint config, as the overload above, except
/// that modelopt and modelopt_fp4 (offline formats vLLM cannot apply at load) are refused.
WeightFormat make_weight_format(DType dtype, std::string_view quantization,
                                const ModelSpec& spec);

/// Whether `fmt` stores tensors of `kind` quantized (see the table above).
bool is_quantized(const WeightFormat& fmt, TensorKind kind);

/// Whether the checkpoint keeps `t` unquantized by name (layout.ignore). Plain entries match
/// the module name or a dotted path ending in it ("model.layers.3.mlp.down_proj" only in layer
/// 3); "re:" entries are matched from the start, as Python's re.match, against the module's
/// Llama-style path ("model.layers.L.self_attn.q_proj", "model.layers.L.mlp.down_proj",
/// "model.layers.L.mlp.experts.0.down_proj" for every expert, "lm_head").
bool is_ignored(const WeightFormat& fmt, const WeightTensor& t);

/// The format `t` is stored in: `unquantized` (fmt.dtype, no quantization) when the checkpoint
/// ignores it, else the first of fmt.targeted whose targets match it, else `fmt`.
const WeightFormat& tensor_format(const WeightFormat& fmt, const WeightTensor& t,
                                  const WeightFormat& unquantized);

/// Exact bytes of one in x out matrix (or vector, in = 1) of `kind` stored in `fmt`.
/// `full_in` is the unsharded input width of a row-parallel shard (0: the same as `in`); GPTQ
/// with desc_act keeps the scales and zeros of all its groups on every rank.
Bytes matrix_bytes(const WeightFormat& fmt, TensorKind kind, std::int64_t in, std::int64_t out,
                   std::int64_t full_in = 0);

/// Nominal bits per weight of quantized matrices, scales and zero points included, ignoring
/// the per-tensor / per-row terms (fp8: 8, int8: 8, awq/gptq: 4.15625, mxfp4: 4.25); the dtype's
/// bits for kNone. For display.
double nominal_bits_per_weight(const WeightFormat& fmt);

}  // namespace vramsim::model
