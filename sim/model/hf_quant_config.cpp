#include "sim/model/hf_quant_config.hpp"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace vramsim::model::detail {

namespace {

// An integer key; `allowed` lists the accepted values for the message. Reports and returns
// nullopt when absent (if `required`), not an integer, or not in `allowed`.
std::optional<std::int64_t> int_in(ConfigKeys& k, std::string_view key,
                                   const std::vector<std::int64_t>& allowed, bool required,
                                   std::string_view meaning) {
  const nlohmann::json* v = k.find(key);
  if (v == nullptr) {
    if (required) k.error(key, fmt::format("missing required field ({})", meaning));
    return std::nullopt;
  }
  if (!v->is_number_integer()) {
    k.error(key, fmt::format("expected an integer ({}), got {}", meaning, describe_json(*v)));
    return std::nullopt;
  }
  const std::int64_t n = v->get<std::int64_t>();
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), n) == allowed.end()) {
    std::string list;
    for (std::int64_t a : allowed) list += (list.empty() ? "" : ", ") + std::to_string(a);
    k.error(key, fmt::format("expected one of {} ({}), got {}", list, meaning, n));
    return std::nullopt;
  }
  return n;
}

// A quantization group size: a positive integer, or -1 for one group per output column.
std::optional<std::int64_t> group_size(ConfigKeys& k, std::string_view key, bool required) {
  const nlohmann::json* v = k.find(key);
  if (v == nullptr) {
    if (required) k.error(key, "missing required field (input rows per scale, or -1)");
    return std::nullopt;
  }
  if (!v->is_number_integer() || (v->get<std::int64_t>() < 1 && v->get<std::int64_t>() != -1) ||
      v->get<std::int64_t>() > kMaxConfigInteger) {
    k.error(key, fmt::format("expected a positive integer (input rows per scale) or -1 (one "
                             "group per column), got {}",
                             describe_json(*v)));
    return std::nullopt;
  }
  return v->get<std::int64_t>();
}

// A list of strings (module names or "re:" patterns); absent is empty.
std::vector<std::string> string_list(ConfigKeys& k, std::string_view key) {
  std::vector<std::string> out;
  const nlohmann::json* v = k.find(key);
  if (v == nullptr) return out;
  if (!v->is_array() || !std::all_of(v->begin(), v->end(),
                                     [](const nlohmann::json& e) { return e.is_string(); })) {
    k.error(key, fmt::format("expected a list of module names, got {}", describe_json(*v)));
    return out;
  }
  for (const nlohmann::json& e : *v) {
    std::string entry = e.get<std::string>();
    if (entry.rfind("re:", 0) == 0) {
      try {
        std::regex check(entry.substr(3));
      } catch (const std::regex_error& err) {
        k.error(key, fmt::format("'{}' is not a valid regular expression: {}", entry,
                                 err.what()));
        continue;
      }
    }
    out.push_back(std::move(entry));
  }
  return out;
}

// A string key that must be one of `allowed`.
std::optional<std::string> string_in(ConfigKeys& k, std::string_view key,
                                     const std::vector<std::string_view>& allowed,
                                     bool required) {
  const nlohmann::json* v = k.find(key);
  if (v == nullptr) {
    if (required) {
      k.error(key, fmt::format("missing required field (one of {})", fmt::join(allowed, ", ")));
    }
    return std::nullopt;
  }
  std::optional<std::string> s = k.string(key);
  if (!s) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), *s) == allowed.end()) {
    k.error(key, fmt::format("expected one of {}, got '{}'", fmt::join(allowed, ", "), *s));
    return std::nullopt;
  }
  return s;
}

// The first of `keys` present, for formats that renamed a key (AWQ's w_bit -> bits).
std::string_view first_present(const ConfigKeys& k, std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) {
    if (k.has(key)) return key;
  }
  return *keys.begin();
}

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

// A [n, k] block shape (fp8 weight_block_size, compressed-tensors block_structure).
bool read_block(ConfigKeys& k, std::string_view key, QuantLayout& l) {
  const nlohmann::json* v = k.find(key);
  if (v == nullptr) return false;
  const bool ok = v->is_array() && v->size() == 2 && (*v)[0].is_number_integer() &&
                  (*v)[1].is_number_integer() && (*v)[0].get<std::int64_t>() >= 1 &&
                  (*v)[1].get<std::int64_t>() >= 1 &&
                  (*v)[0].get<std::int64_t>() <= kMaxConfigInteger &&
                  (*v)[1].get<std::int64_t>() <= kMaxConfigInteger;
  if (!ok) {
    k.error(key, fmt::format("expected [output rows, input columns] per scale, e.g. [128, 128], "
                             "got {}",
                             describe_json(*v)));
    return false;
  }
  l.granularity = ScaleGranularity::kBlock;
  l.block_out = (*v)[0].get<std::int64_t>();
  l.block_in = (*v)[1].get<std::int64_t>();
  return true;
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

// compressed-tensors (llm-compressor; vLLM compressed_tensors/schemes/):
//   pack-quantized (W4A16, W8A16; CompressedTensorsWNA16): weight_packed int32
//     [out, in * b / 32], weight_scale [out, groups] in the model dtype, weight_shape int64 [2],
//     weight_zero_point int32 [out * b / 32, groups] when not symmetric, weight_g_idx int32 [in]
//     with actorder "group" (then a row-parallel shard keeps every group's scales).
//   float-quantized (FP8; CompressedTensorsW8A8Fp8): weight fp8 [out, in], weight_scale fp32
//     [1] (tensor), [out, 1] (channel) or [ceil(out / n), ceil(in / k)] (block).
//   int-quantized (INT8 W8A8; CompressedTensorsW8A8Int8): weight int8 [out, in], weight_scale
//     fp32 [1] or [out, 1], an int8 weight_zero_point per scale when not symmetric.
//   naive-quantized: each quantized value in a one-byte container, as int-quantized.
//   Static input activations (dynamic false) add an fp32 input_scale per module.
void read_compressed_tensors(ConfigKeys& q, CheckpointQuant& c) {
  QuantLayout& l = c.layout;
  l = QuantLayout{};
  l.ignore = string_list(q, "ignore");
  const std::optional<std::string> top_format = string_in(
      q, "format",
      {"pack-quantized", "int-quantized", "float-quantized", "naive-quantized", "dense",
       "nvfp4-pack-quantized", "marlin-24", "mixed-precision"},
      false);
  if (const nlohmann::json* kv = q.find("kv_cache_scheme")) {
    if (!kv->is_object()) {
      q.error("kv_cache_scheme", fmt::format("expected a JSON object or null, got {}",
                                             describe_json(*kv)));
    } else {
      std::optional<ConfigKeys> kvk = q.object("kv_cache_scheme", "the KV-cache scales");
      c.kv_cache_bits = static_cast<int>(
          int_in(*kvk, "num_bits", {8}, true, "vLLM takes 8-bit KV-cache scales").value_or(8));
      string_in(*kvk, "type", {"float", "int"}, false);
    }
  }
  std::optional<ConfigKeys> groups = q.object("config_groups", "the quantization schemes");
  if (!groups) return;
  const nlohmann::json& gj = *q.find("config_groups");
  if (gj.size() != 1) {
    q.error("config_groups",
            fmt::format("{} schemes given; vramsim models checkpoints with one scheme for every "
                        "linear layer (mixed schemes are not modelled yet)",
                        gj.size()));
    return;
  }
  const std::string name = gj.begin().key();
  std::optional<ConfigKeys> g = groups->object(name, "one quantization scheme");
  if (!g) return;
  const std::vector<std::string> targets = string_list(*g, "targets");
  if (targets != std::vector<std::string>{"Linear"}) {
    g->error("targets", "only [\"Linear\"] (every linear layer, less ignore) is modelled; "
                        "narrower targets are not modelled yet");
  }
  std::optional<ConfigKeys> w = g->object("weights", "the weight quantization (num_bits, type, "
                                                     "strategy)");
  if (!w) return;
  const std::optional<std::string> format =
      g->has("format") ? string_in(*g, "format",
                                   {"pack-quantized", "int-quantized", "float-quantized",
                                    "naive-quantized"},
                                   false)
                       : top_format;
  const int bits = static_cast<int>(
      int_in(*w, "num_bits", {2, 3, 4, 8}, true, "bits per weight").value_or(8));
  const std::optional<std::string> type = string_in(*w, "type", {"int", "float"}, true);
  const std::optional<std::string> strategy =
      string_in(*w, "strategy", {"tensor", "channel", "group", "block"}, true);
  const bool symmetric = w->boolean_or("symmetric", true);
  bool group_act_order = false;
  if (const nlohmann::json* a = w->find("actorder")) {
    if (a->is_boolean()) {
      group_act_order = a->get<bool>();  // old configs: true meant "group"
    } else if (a->is_string() && (*a == "group" || *a == "weight" || *a == "static" ||
                                  *a == "dynamic")) {
      group_act_order = *a == "group";
    } else {
      w->error("actorder", fmt::format("expected null, group, weight, static or dynamic, got {}",
                                       describe_json(*a)));
    }
  }
  bool dynamic_input = true;
  if (const nlohmann::json* in = g->find("input_activations")) {
    if (in->is_object()) {
      std::optional<ConfigKeys> ik = g->object("input_activations", "activation quantization");
      // dynamic: true | false, or "local" (nvfp4's per-group dynamic scales).
      const nlohmann::json* d = ik->find("dynamic");
      dynamic_input = d != nullptr && (d->is_string() || ik->boolean_or("dynamic", false));
    } else {
      g->error("input_activations",
               fmt::format("expected a JSON object or null, got {}", describe_json(*in)));
    }
  }
  const bool weight_only = g->find("input_activations") == nullptr;

  if (strategy == "group") {
    l.granularity = ScaleGranularity::kGroup;
    l.group_size = group_size(*w, "group_size", true).value_or(128);
    if (l.group_size == -1) {
      l.granularity = ScaleGranularity::kChannel;
      l.group_size = 1;
    }
  } else if (strategy == "block") {
    if (!w->has("block_structure")) {
      w->error("block_structure", "missing required field with strategy block (e.g. [128, 128])");
    }
    read_block(*w, "block_structure", l);
  } else if (strategy == "channel") {
    l.granularity = ScaleGranularity::kChannel;
  } else {
    l.granularity = ScaleGranularity::kTensor;
  }
  if (!format) {
    q.error("format", "missing (expected pack-quantized, int-quantized, float-quantized or "
                      "naive-quantized)");
    return;
  }
  if (*format == "pack-quantized") {
    if (type != "int") w->error("type", "pack-quantized packs int weights; expected int");
    c.method = QuantMethod::kGptq;  // vLLM runs W4A16 / W8A16 through the GPTQ Marlin kernel
    l.weight_bits = bits;
    l.scales_in_dtype = true;
    l.zero_bits = symmetric ? 0 : bits;
    l.g_idx = group_act_order;
    l.act_order = group_act_order;
    l.extra_bytes = 16;  // weight_shape int64 [2]
    return;
  }
  if (*format == "float-quantized" || *format == "int-quantized" ||
      *format == "naive-quantized") {
    if (*format == "float-quantized" && type != "float") {
      w->error("type", "float-quantized stores float weights; expected float");
    }
    if (*format == "int-quantized" && type != "int") {
      w->error("type", "int-quantized stores int weights; expected int");
    }
    c.method = type == "float" ? QuantMethod::kFp8 : weight_only ? QuantMethod::kGptq
                                                                  : QuantMethod::kInt8;
    l.weight_bits = 8;  // one byte per value, whatever num_bits
    l.scale_bytes = 4;
    l.zero_bits = type == "int" && !symmetric ? 8 : 0;
    if (!weight_only && !dynamic_input) l.extra_bytes = 4;  // input_scale fp32
    return;
  }
  q.error("format", fmt::format("'{}' is not modelled yet; vramsim reads pack-quantized, "
                                "int-quantized, float-quantized and naive-quantized",
                                *format));
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
  // compressed-tensors' compression_config carried no quant_method.
  std::optional<std::string> method =
      key == "compression_config" && !q->has("quant_method")
          ? std::optional<std::string>("compressed-tensors")
          : string_in(*q, "quant_method",
                      {"gptq", "awq", "fp8", "mxfp4", "compressed-tensors"}, true);
  if (!method) return;
  spec.checkpoint_quantization = *method;
  CheckpointQuant c;
  c.quant_method = *method;
  c.config_file = top.where().file;
  c.key = std::string(key);
  if (*method == "gptq") read_gptq(*q, c);
  if (*method == "awq") read_awq(*q, c);
  if (*method == "fp8") read_fp8(*q, c);
  if (*method == "mxfp4") read_mxfp4(*q, c);
  if (*method == "compressed-tensors") read_compressed_tensors(*q, c);
  spec.checkpoint_quant = c;
}

}  // namespace vramsim::model::detail
