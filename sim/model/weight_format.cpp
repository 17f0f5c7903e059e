#include "sim/model/weight_format.hpp"

#include <algorithm>
#include <iterator>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"

namespace vramsim::model {

namespace {

constexpr std::int64_t kInt32Bytes = 4;

// Bytes of n elements of `bits` bits each, rounded up to whole bytes.
std::int64_t packed_bytes(std::int64_t n, std::int64_t bits) { return ceil_div(n * bits, 8); }

// Number of scales (and zero points) of an in x out matrix; `groups_in` is the input width the
// groups are counted over (the full width under GPTQ act-order).
std::int64_t num_scales(const QuantLayout& l, std::int64_t groups_in, std::int64_t out) {
  switch (l.granularity) {
    case ScaleGranularity::kTensor: return 1;
    case ScaleGranularity::kChannel: return out;
    case ScaleGranularity::kGroup: return ceil_div(groups_in, l.group_size) * out;
    case ScaleGranularity::kBlock:
      return ceil_div(out, l.block_out) * ceil_div(groups_in, l.block_in);
  }
  VRAMSIM_UNREACHABLE("invalid ScaleGranularity");
}

// "model.layers.3.mlp.down_proj" -> 3 when the path names a decoder layer, else -1.
std::int64_t layer_of_path(std::string_view path) {
  const std::size_t at = path.find("layers.");
  if (at == std::string_view::npos) return -1;
  std::int64_t layer = 0;
  std::size_t i = at + 7;
  if (i >= path.size() || path[i] < '0' || path[i] > '9') return -1;
  for (; i < path.size() && path[i] >= '0' && path[i] <= '9'; ++i) layer = layer * 10 + (path[i] - '0');
  return layer;
}

// The Hugging Face (Llama-style) path of `t`: "model.layers.3.self_attn.q_proj",
// "model.layers.3.mlp.experts.0.down_proj", "lm_head".
std::string hf_path(const WeightTensor& t) {
  if (t.layer < 0) return fmt::format("model.{}", t.name);
  if (t.kind == TensorKind::kLmHead) return std::string(t.name);
  static constexpr std::string_view kAttention[] = {"q_proj", "k_proj", "v_proj", "o_proj",
                                                     "q_a_proj", "q_b_proj",
                                                     "kv_a_proj_with_mqa", "kv_b_proj"};
  const bool attention =
      std::find(std::begin(kAttention), std::end(kAttention), t.name) != std::end(kAttention);
  const std::string_view block = attention                              ? "self_attn."
                                 : t.kind == TensorKind::kExpertLinear ? "mlp.experts.0."
                                                                        : "mlp.";
  return fmt::format("model.layers.{}.{}{}", t.layer, block, t.name);
}

bool matches_entry(std::string_view entry, const WeightTensor& t) {
  if (entry.substr(0, 3) == "re:") {
    const std::regex re(std::string(entry.substr(3)));
    return std::regex_search(hf_path(t), re, std::regex_constants::match_continuous);
  }
  const std::string name(t.name);
  const bool tail = entry == name || (entry.size() > name.size() &&
                                      entry.substr(entry.size() - name.size()) == name &&
                                      entry[entry.size() - name.size() - 1] == '.');
  if (!tail) return false;
  const std::int64_t layer = layer_of_path(entry);
  return layer < 0 || layer == t.layer;
}

}  // namespace

std::string_view to_string(QuantMethod m) { return name_of(kQuantMethods, m); }

std::string_view quantization_names() {
  static const std::string names = join_names_with_aliases(kQuantMethods);
  return names;
}

QuantLayout default_layout(QuantMethod m) {
  QuantLayout l;
  switch (m) {
    case QuantMethod::kNone: break;
    case QuantMethod::kFp8:  // vLLM online fp8: one fp32 weight_scale per tensor
      l.weight_bits = 8;
      l.granularity = ScaleGranularity::kTensor;
      l.scale_bytes = 4;
      break;
    case QuantMethod::kInt8:  // W8A8: one fp32 scale per output channel
      l.weight_bits = 8;
      l.granularity = ScaleGranularity::kChannel;
      l.scale_bytes = 4;
      break;
    case QuantMethod::kAwq:
    case QuantMethod::kGptq:  // 4-bit, group 128, fp16 scales, 4-bit zeros; GPTQ's g_idx
      l.weight_bits = 4;
      l.granularity = ScaleGranularity::kGroup;
      l.group_size = 128;
      l.scale_bytes = 2;
      l.zero_bits = 4;
      l.g_idx = m == QuantMethod::kGptq;
      break;
    case QuantMethod::kMxfp4:  // OCP MX v1.0: one e8m0 scale per 32 e2m1 weights
      l.weight_bits = 4;
      l.granularity = ScaleGranularity::kGroup;
      l.group_size = 32;
      l.scale_bytes = 1;
      l.experts_only = true;
      break;
    case QuantMethod::kBitsAndBytes:
      // In-flight quantization (bitsandbytes_loader._unquantized_generator): nf4, one fp32
      // absmax per 64 weights once dequantize_dq has undone the double quantization, and the
      // 16-entry fp32 code book of each tensor (hf_quant_bnb_modelopt.cpp).
      l.weight_bits = 4;
      l.granularity = ScaleGranularity::kGroup;
      l.group_size = 64;
      l.scale_bytes = 4;
      l.extra_bytes = 64;
      break;
    case QuantMethod::kModelOpt:  // ModelOpt FP8: fp32 weight_scale and input_scale per module
      l.weight_bits = 8;
      l.granularity = ScaleGranularity::kTensor;
      l.scale_bytes = 4;
      l.extra_bytes = 4;
      l.lm_head = true;
      break;
    case QuantMethod::kModelOptFp4:  // NVFP4: fp8 scale per 16, fp32 weight_scale_2, input_scale
      l.weight_bits = 4;
      l.granularity = ScaleGranularity::kGroup;
      l.group_size = 16;
      l.scale_bytes = 1;
      l.extra_bytes = 8;
      l.lm_head = true;
      break;
  }
  return l;
}

WeightFormat make_weight_format(DType dtype, std::string_view q) {
  WeightFormat f;
  f.dtype = dtype;
  const std::optional<QuantMethod> method =
      q.empty() ? QuantMethod::kNone : parse_name(kQuantMethods, q);
  if (!method) {
    throw ConfigError("quantization", fmt::format("unknown quantization method '{}'; valid: {}", q,
                                                  quantization_names()));
  }
  f.quantization = *method;
  f.layout = default_layout(*method);
  return f;
}

WeightFormat make_weight_format(DType dtype, std::string_view q, const ModelSpec& spec) {
  if (!spec.checkpoint_quant) {
    WeightFormat f = make_weight_format(dtype, q);
    if (f.quantization == QuantMethod::kModelOpt || f.quantization == QuantMethod::kModelOptFp4) {
      // vLLM's get_quant_config: "Cannot find the config file for modelopt"; ModelOpt
      // checkpoints are quantized offline (modelopt.py get_config_filenames).
      throw ConfigError("quantization",
                        fmt::format("--quantization {} needs a ModelOpt checkpoint (its "
                                    "quantization_config or hf_quant_config.json); vLLM does not "
                                    "quantize to it at load, and {} has neither",
                                    q, spec.name));
    }
    return f;
  }
  const CheckpointQuant& c = *spec.checkpoint_quant;
  // As vLLM: the flag may name the checkpoint's method or one of its kernels (gptq_marlin for
  // gptq), nothing else.
  const std::optional<QuantMethod> named = parse_name(kQuantMethods, q);
  const bool follow = q.empty() || q == "none" || q == c.quant_method ||
                      (named && named == parse_name(kQuantMethods, c.quant_method));
  if (!follow) {
    make_weight_format(dtype, q);  // an unknown name gets the list of valid ones first
    // vLLM's ModelConfig._verify_quantization: "Quantization method specified in the model
    // config (X) does not match the quantization method specified in the `quantization`
    // argument (Y)."
    throw ConfigError(c.method_key,
                      fmt::format("the checkpoint is quantized as '{}', which does not match "
                                  "--quantization {} (vLLM refuses this too); drop the flag or "
                                  "pass {}",
                                  c.quant_method, q, c.quant_method),
                      SourceLocation{c.config_file, 0});
  }
  WeightFormat f;
  f.dtype = dtype;
  f.quantization = c.method;
  f.layout = c.layout;
  for (const TargetedScheme& s : c.targeted) {
    TargetedFormat t;
    t.targets = s.targets;
    t.format.dtype = dtype;
    t.format.quantization = s.method;
    t.format.layout = s.layout;
    f.targeted.push_back(std::move(t));
  }
  return f;
}

bool is_quantized(const WeightFormat& fmt, TensorKind kind) {
  if (fmt.quantization == QuantMethod::kNone) return false;
  if (fmt.layout.experts_only) return kind == TensorKind::kExpertLinear;
  if (kind == TensorKind::kLmHead) return fmt.layout.lm_head;
  return kind == TensorKind::kLinear || kind == TensorKind::kExpertLinear;
}

bool is_ignored(const WeightFormat& fmt, const WeightTensor& t) {
  for (const std::string& entry : fmt.layout.ignore) {
    if (matches_entry(entry, t)) return true;
  }
  return false;
}

const WeightFormat& tensor_format(const WeightFormat& fmt, const WeightTensor& t,
                                  const WeightFormat& unquantized) {
  if (is_ignored(fmt, t)) return unquantized;
  for (const TargetedFormat& x : fmt.targeted) {
    for (const std::string& entry : x.targets) {
      if (matches_entry(entry, t)) return x.format;
    }
  }
  return fmt;
}

Bytes matrix_bytes(const WeightFormat& fmt, TensorKind kind, std::int64_t in, std::int64_t out,
                   std::int64_t full_in) {
  const std::int64_t n = in * out;
  if (!is_quantized(fmt, kind)) return Bytes(packed_bytes(n, bits_of(fmt.dtype)));
  const QuantLayout& l = fmt.layout;
  const std::int64_t groups_in = l.act_order && full_in > in ? full_in : in;
  const std::int64_t scales = num_scales(l, groups_in, out);
  const std::int64_t scale_bytes = l.scales_in_dtype ? bits_of(fmt.dtype) / 8 : l.scale_bytes;
  std::int64_t bytes = packed_bytes(n, l.weight_bits)        // qweight / weight_packed
                       + scales * scale_bytes                // scales
                       + packed_bytes(scales, l.zero_bits)   // qzeros, packed as the weights
                       + l.extra_bytes;
  if (l.g_idx) bytes += in * kInt32Bytes;  // g_idx: one int32 per input row of the shard
  return Bytes(bytes);
}

double nominal_bits_per_weight(const WeightFormat& fmt) {
  if (fmt.quantization == QuantMethod::kNone) return bits_of(fmt.dtype);
  const QuantLayout& l = fmt.layout;
  const double per_scale =
      (l.scales_in_dtype ? bits_of(fmt.dtype) : 8.0 * l.scale_bytes) + l.zero_bits;
  switch (l.granularity) {
    case ScaleGranularity::kTensor:
    case ScaleGranularity::kChannel: return l.weight_bits;
    case ScaleGranularity::kGroup:
      return l.weight_bits + per_scale / static_cast<double>(l.group_size);
    case ScaleGranularity::kBlock:
      return l.weight_bits + per_scale / static_cast<double>(l.block_out * l.block_in);
  }
  VRAMSIM_UNREACHABLE("invalid ScaleGranularity");
}

}  // namespace vramsim::model
