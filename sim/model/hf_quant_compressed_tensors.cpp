#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/model/hf_quant_readers.hpp"

namespace vramsim::model::detail {

namespace {

// One scheme of config_groups: its kernel class and storage layout (ignore is the caller's).
// False when the scheme is malformed (the problem is in the report).
bool read_scheme(ConfigKeys& q, ConfigKeys& g, const std::optional<std::string>& top_format,
                 QuantMethod& method, QuantLayout& l) {
  std::optional<ConfigKeys> w = g.object("weights", "the weight quantization (num_bits, type, "
                                                     "strategy)");
  if (!w) return false;
  const std::optional<std::string> format =
      g.has("format") ? string_in(g, "format",
                                   {"pack-quantized", "int-quantized", "float-quantized",
                                    "naive-quantized", "nvfp4-pack-quantized"},
                                   false)
                       : top_format;
  const int bits = static_cast<int>(
      int_in(*w, "num_bits", {2, 3, 4, 8}, true, "bits per weight").value_or(8));
  const std::optional<std::string> type = string_in(*w, "type", {"int", "float"}, true);
  const std::optional<std::string> strategy =
      string_in(*w, "strategy", {"tensor", "channel", "group", "block", "tensor_group"}, true);
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
  if (const nlohmann::json* in = g.find("input_activations")) {
    if (in->is_object()) {
      std::optional<ConfigKeys> ik = g.object("input_activations", "activation quantization");
      // dynamic: true | false, or "local" (nvfp4's per-group dynamic scales).
      const nlohmann::json* d = ik->find("dynamic");
      dynamic_input = d != nullptr && (d->is_string() || ik->boolean_or("dynamic", false));
    } else {
      g.error("input_activations",
               fmt::format("expected a JSON object or null, got {}", describe_json(*in)));
    }
  }
  const bool weight_only = g.find("input_activations") == nullptr;

  if (strategy == "group" || strategy == "tensor_group") {
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
    q.error("format", "missing (expected pack-quantized, int-quantized, float-quantized, "
                      "naive-quantized or nvfp4-pack-quantized)");
    return false;
  }
  if ((strategy == "tensor_group") != (*format == "nvfp4-pack-quantized")) {
    w->error("strategy", fmt::format("'{}' with format {}: tensor_group (one fp8 scale per "
                                     "group and a global scale per tensor) is NVFP4's strategy, "
                                     "and nvfp4-pack-quantized takes only it",
                                     strategy.value_or("?"), *format));
    return false;
  }
  if (*format == "nvfp4-pack-quantized") {
    if (type != "float" || bits != 4) {
      w->error("num_bits", fmt::format("nvfp4-pack-quantized stores 4-bit floats (num_bits 4, "
                                       "type float), got {}-bit {}",
                                       bits, type.value_or("?")));
    }
    if (l.group_size != 16) {
      w->error("group_size", fmt::format("NVFP4 scales every 16 weights (vLLM's "
                                         "CompressedTensorsW4A4Fp4 group_size), got {}",
                                         l.group_size));
    }
    method = QuantMethod::kModelOptFp4;  // the NVFP4 kernels of ModelOpt's checkpoints
    l.weight_bits = 4;
    l.scale_bytes = 1;                       // fp8 e4m3 per group
    l.extra_bytes = weight_only ? 4 : 8;     // weight_global_scale (+ input_global_scale)
    return true;
  }
  if (*format == "pack-quantized") {
    if (type != "int") w->error("type", "pack-quantized packs int weights; expected int");
    method = QuantMethod::kGptq;  // vLLM runs W4A16 / W8A16 through the GPTQ Marlin kernel
    l.weight_bits = bits;
    l.scales_in_dtype = true;
    l.zero_bits = symmetric ? 0 : bits;
    l.g_idx = group_act_order;
    l.act_order = group_act_order;
    l.extra_bytes = 16;  // weight_shape int64 [2]
    return true;
  }
  if (*format == "float-quantized" || *format == "int-quantized" ||
      *format == "naive-quantized") {
    if (*format == "float-quantized" && type != "float") {
      w->error("type", "float-quantized stores float weights; expected float");
    }
    if (*format == "int-quantized" && type != "int") {
      w->error("type", "int-quantized stores int weights; expected int");
    }
    method = type == "float" ? QuantMethod::kFp8 : weight_only ? QuantMethod::kGptq
                                                                  : QuantMethod::kInt8;
    l.weight_bits = 8;  // one byte per value, whatever num_bits
    l.scale_bytes = 4;
    l.zero_bits = type == "int" && !symmetric ? 8 : 0;
    if (!weight_only && !dynamic_input) l.extra_bytes = 4;  // input_scale fp32
    return true;
  }
  q.error("format", fmt::format("'{}' is not modelled yet; vramsim reads pack-quantized, "
                                "int-quantized, float-quantized, naive-quantized and "
                                "nvfp4-pack-quantized",
                                *format));
  return false;
}

}  // namespace

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
//   nvfp4-pack-quantized (NVFP4, strategy tensor_group, group_size 16; CompressedTensorsW4A4Fp4,
//     CompressedTensorsW4A16Fp4 without input activations): weight_packed uint8 [out, in / 2],
//     weight_scale fp8 e4m3 [out, in / 16], weight_global_scale fp32 per module, and
//     input_global_scale fp32 per module when activations are quantized too.
//   Static input activations (dynamic false) add an fp32 input_scale per module.
void read_compressed_tensors(ConfigKeys& q, CheckpointQuant& c) {
  c.layout = QuantLayout{};
  const std::vector<std::string> ignore = string_list(q, "ignore");
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
  // Several schemes: vLLM maps every target to its group's scheme (a later group naming the
  // same target replaces an earlier one) and gives a module the scheme of the first target
  // matching its name ("re:" patterns or full names), else of a class target ("Linear": every
  // linear layer), as compressed_tensors/utils.py find_matched_target does. Modules ignored
  // come first and stay unquantized.
  struct Scheme {
    QuantMethod method = QuantMethod::kNone;
    QuantLayout layout;
  };
  std::vector<Scheme> schemes;
  // Groups in the order of their names (llm-compressor writes group_0, group_1, ...: the file's
  // order); targets in each group's order.
  std::vector<std::pair<std::string, std::size_t>> by_target;
  for (auto it = gj.begin(); it != gj.end(); ++it) {
    std::optional<ConfigKeys> g = groups->object(it.key(), "one quantization scheme");
    if (!g) continue;
    const std::vector<std::string> targets = string_list(*g, "targets");
    if (targets.empty()) g->error("targets", "missing or empty (expected e.g. [\"Linear\"])");
    Scheme sc;
    if (!read_scheme(q, *g, top_format, sc.method, sc.layout)) continue;
    sc.layout.ignore = ignore;
    schemes.push_back(std::move(sc));
    for (const std::string& t : targets) {
      const auto same = std::find_if(by_target.begin(), by_target.end(),
                                     [&t](const auto& e) { return e.first == t; });
      if (same != by_target.end()) {
        same->second = schemes.size() - 1;
      } else {
        by_target.emplace_back(t, schemes.size() - 1);
      }
    }
  }
  if (schemes.empty()) return;
  // The class target "Linear" gives the default scheme. Without it every linear must match a
  // named target (vLLM refuses a checkpoint where one does not); the first group stands for
  // any that would not.
  std::size_t primary = 0;
  for (const auto& [target, k] : by_target) {
    if (target == "Linear") primary = k;
  }
  c.method = schemes[primary].method;
  c.layout = schemes[primary].layout;
  for (const auto& [target, k] : by_target) {
    if (target == "Linear") continue;
    TargetedScheme ts;
    ts.targets = {target};
    ts.method = schemes[k].method;
    ts.layout = schemes[k].layout;
    c.targeted.push_back(std::move(ts));
  }
}

}  // namespace vramsim::model::detail
