#include "sim/model/hf_quant_config.hpp"

#include <optional>
#include <string>

#include <fmt/format.h>

#include "sim/model/hf_quant_readers.hpp"

namespace vramsim::model::detail {

namespace {

// GPTQ (AutoGPTQ / GPTQModel; vLLM gptq.py GPTQLinearMethod.create_weights, bits b, G):
//   qweight int32 [in * b / 32, out], qzeros int32 [in / G, out * b / 32], scales fp16
//   [in / G, out], g_idx int32 [in]. qzeros are stored for sym = true too. With desc_act a
//   row-parallel shard keeps scales and qzeros of all in / G groups.
void read_gptq(ConfigKeys& q, CheckpointQuant& c) {
  c.method = QuantMethod::kGptq;
  QuantLayout& l = c.layout;
  l = QuantLayout{};
  l.weight_bits = static_cast<int>(
      int_in(q, "bits", {2, 3, 4, 8}, true, "bits per weight; vLLM's GPTQ takes 2, 3, 4, 8")
          .value_or(4));
  const std::int64_t g = group_size(q, "group_size", true).value_or(128);
  l.granularity = g == -1 ? ScaleGranularity::kChannel : ScaleGranularity::kGroup;
  l.group_size = g == -1 ? 1 : g;
  l.scale_bytes = 2;
  l.zero_bits = l.weight_bits;
  l.g_idx = true;
  l.act_order = q.boolean_or("desc_act", false);
  q.boolean_or("sym", true);  // validated; the storage is the same either way
  l.lm_head = q.boolean_or("lm_head", false);
}

// AWQ (AutoAWQ GEMM; vLLM awq.py AWQLinearMethod.create_weights, bits b = 4, G):
//   qweight int32 [in, out * b / 32], qzeros int32 [in / G, out * b / 32], scales fp16
//   [in / G, out]. awq_marlin also takes 8 bits.
void read_awq(ConfigKeys& q, CheckpointQuant& c) {
  c.method = QuantMethod::kAwq;
  QuantLayout& l = c.layout;
  l = QuantLayout{};
  l.weight_bits = static_cast<int>(
      int_in(q, first_present(q, {"bits", "w_bit"}), {4, 8}, true,
             "bits per weight; vLLM's AWQ kernels take 4 (awq) and 8 (awq_marlin)")
          .value_or(4));
  const std::int64_t g =
      group_size(q, first_present(q, {"group_size", "q_group_size"}), true).value_or(128);
  l.granularity = g == -1 ? ScaleGranularity::kChannel : ScaleGranularity::kGroup;
  l.group_size = g == -1 ? 1 : g;
  l.scale_bytes = 2;
  l.zero_bits = q.boolean_or("zero_point", true) ? l.weight_bits : 0;
  l.ignore = string_list(q, "modules_to_not_convert");
}

// FP8 (vLLM fp8.py Fp8LinearMethod.create_weights for a serialized checkpoint):
//   weight fp8 [out, in]; weight_scale fp32, one per module; block-wise
//   (weight_block_size [n, k], DeepSeek-V3, Qwen3-FP8) weight_scale_inv fp32
//   [ceil(out / n), ceil(in / k)]; activation_scheme static adds an fp32 input_scale.
void read_fp8(ConfigKeys& q, CheckpointQuant& c) {
  c.method = QuantMethod::kFp8;
  QuantLayout& l = c.layout;
  l = QuantLayout{};
  l.weight_bits = 8;
  l.granularity = ScaleGranularity::kTensor;
  l.scale_bytes = 4;
  const std::optional<std::string> act =
      string_in(q, "activation_scheme", {"static", "dynamic"}, true);
  if (act == "static") l.extra_bytes = 4;
  read_block(q, "weight_block_size", l);
  l.ignore = string_list(q, q.has("ignored_layers") ? "ignored_layers" : "modules_to_not_convert");
}

void read_mxfp4(ConfigKeys& q, CheckpointQuant& c) {
  c.method = QuantMethod::kMxfp4;
  c.layout = QuantLayout{};
  c.layout.weight_bits = 4;
  c.layout.granularity = ScaleGranularity::kGroup;
  c.layout.group_size = 32;
  c.layout.scale_bytes = 1;
  c.layout.experts_only = true;
  c.layout.ignore = string_list(q, "modules_to_not_convert");
}

// ModelOpt's {"producer": {"name": "modelopt"}, ...}.
bool is_modelopt_producer(const nlohmann::json& q) {
  const auto p = q.find("producer");
  if (p == q.end() || !p->is_object()) return false;
  const auto name = p->find("name");
  return name != p->end() && name->is_string() && *name == "modelopt";
}

}  // namespace

void read_quantization_config(ConfigKeys& top, ModelSpec& spec) {
  const std::string_view key =
      top.has("quantization_config") || !top.has("compression_config") ? "quantization_config"
                                                                        : "compression_config";
  const nlohmann::json* v = top.find(key);
  if (v == nullptr) return;
  if (!v->is_object()) {
    top.error(key, fmt::format("expected a JSON object (the checkpoint's quantization), got {}",
                               describe_json(*v)));
    return;
  }
  std::optional<ConfigKeys> q = top.object(key, "the checkpoint's quantization");
  // compressed-tensors' compression_config carried no quant_method; ModelOpt's block may carry
  // only its producer (vLLM ModelConfig._normalize_quantization_config sets quant_method from
  // producer.name "modelopt" and quantization.quant_algo).
  std::optional<std::string> method;
  if (key == "compression_config" && !q->has("quant_method")) {
    method = "compressed-tensors";
  } else if (!q->has("quant_method") && is_modelopt_producer(*v)) {
    method = "modelopt";
  } else {
    method = string_in(*q, "quant_method",
                       {"gptq", "awq", "fp8", "mxfp4", "compressed-tensors", "bitsandbytes",
                        "modelopt", "modelopt_fp4"},
                       true);
  }
  if (!method) return;
  CheckpointQuant c;
  c.quant_method = *method;
  c.config_file = top.where().file;
  c.key = std::string(key);
  c.method_key = c.key + ".quant_method";
  if (*method == "gptq") read_gptq(*q, c);
  if (*method == "awq") read_awq(*q, c);
  if (*method == "fp8") read_fp8(*q, c);
  if (*method == "mxfp4") read_mxfp4(*q, c);
  if (*method == "compressed-tensors") read_compressed_tensors(*q, c);
  if (*method == "bitsandbytes") read_bitsandbytes(*q, c);
  if (*method == "modelopt" || *method == "modelopt_fp4") read_modelopt(*q, c);
  spec.checkpoint_quantization = c.quant_method;
  spec.checkpoint_quant = c;
}

void read_hf_quant_config_file(ConfigKeys& file, ModelSpec& spec) {
  // vLLM reads the file only for ModelOpt (its get_config_filenames); anything else in a file of
  // that name is not a quantization vLLM would take from it.
  if (!file.has("producer") && !file.has("quantization")) {
    file.error("quantization", "missing (ModelOpt's hf_quant_config.json holds \"producer\" and "
                               "\"quantization\": {\"quant_algo\": ...})");
    return;
  }
  CheckpointQuant c;
  c.quant_method = "modelopt";
  c.config_file = file.where().file;
  c.key = "quantization";
  c.method_key = "quantization.quant_algo";
  read_modelopt(file, c);
  spec.checkpoint_quantization = c.quant_method;
  spec.checkpoint_quant = c;
}

}  // namespace vramsim::model::detail
