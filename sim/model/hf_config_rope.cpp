#include "sim/model/hf_config_rope.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace vramsim::model::detail {

namespace {

// The rope types transformers' ROPE_INIT_FUNCTIONS define, with vLLM's legacy spellings
// (patch_rope_scaling_dict: "su" -> longrope, "mrope" -> default).
constexpr std::string_view kRopeTypes[] = {"default", "linear", "dynamic", "yarn",
                                           "longrope", "llama3", "su",     "mrope"};

// transformers v5 nests rope_parameters per attention type (configuration_utils
// ALLOWED_LAYER_TYPES) when the layer types differ.
constexpr std::string_view kLayerTypes[] = {"full_attention", "sliding_attention",
                                            "chunked_attention", "linear_attention"};

struct Rope {
  std::string type = "default";
  std::optional<double> factor;  // absent for "default"
  std::int64_t original = 0;  // original_max_position_embeddings of the block, 0 when absent
};

// One rope block at `key` of `k` (an object); nullopt when malformed (reported).
std::optional<Rope> read_block(ConfigKeys& k, std::string_view key) {
  std::optional<ConfigKeys> b = k.object(key, "the RoPE scaling (rope_type, factor)");
  if (!b) return std::nullopt;
  const std::optional<std::string> modern = b->string("rope_type");
  const std::optional<std::string> legacy = b->string("type");
  if (modern && legacy && *modern != *legacy) {
    // vLLM patch_rope_scaling_dict: "Found conflicts between 'rope_type=...' (modern field)
    // and 'type=...' (legacy field)".
    b->error("rope_type", fmt::format("'{}' contradicts type '{}'; give one of them", *modern,
                                      *legacy));
    return std::nullopt;
  }
  if (!modern && !legacy) {
    b->error("rope_type", fmt::format("missing required field (one of {}); vLLM refuses a "
                                      "rope_scaling without it",
                                      fmt::join(kRopeTypes, ", ")));
    return std::nullopt;
  }
  Rope r;
  r.type = modern ? *modern : *legacy;
  const std::string_view type_key = modern ? "rope_type" : "type";
  if (std::find(std::begin(kRopeTypes), std::end(kRopeTypes), r.type) == std::end(kRopeTypes)) {
    b->error(type_key, fmt::format("unknown rope type '{}'; expected one of {}", r.type,
                                   fmt::join(kRopeTypes, ", ")));
    return std::nullopt;
  }
  if (r.type == "su") r.type = "longrope";
  if (r.type == "mrope") r.type = "default";
  const bool needs_factor = r.type == "linear" || r.type == "dynamic" || r.type == "yarn" ||
                            r.type == "llama3";
  if (std::optional<double> f = b->number("factor")) {
    // transformers' rope validation: "factor field must be a float >= 1" (v5 raises).
    if (!(std::isfinite(*f) && *f >= 1.0)) {
      b->error("factor", fmt::format("must be at least 1 (the context is stretched, never "
                                     "shrunk), got {}",
                                     *f));
      return std::nullopt;
    }
    r.factor = *f;
  } else if (needs_factor && !b->has("factor")) {
    b->error("factor", fmt::format("missing required field for rope type {} (the scaling "
                                   "factor, e.g. 4.0)",
                                   r.type));
    return std::nullopt;
  } else if (needs_factor) {
    return std::nullopt;  // not a number: reported by number()
  }
  if (std::optional<std::int64_t> o = b->optional_positive("original_max_position_embeddings")) {
    r.original = *o;
  } else if (r.type == "yarn") {
    // vLLM reads rope_scaling["original_max_position_embeddings"] for YaRN unconditionally.
    if (!b->has("original_max_position_embeddings")) {
      b->error("original_max_position_embeddings",
               "missing required field for rope type yarn (the pre-training context the factor "
               "scales, e.g. 32768)");
    }
    return std::nullopt;
  }
  return r;
}

}  // namespace

void read_rope_scaling(ConfigKeys& k, ModelSpec& s) {
  const std::string_view key = k.has("rope_scaling") ? "rope_scaling" : "rope_parameters";
  const nlohmann::json* v = k.find(key);
  std::vector<Rope> blocks;
  if (v != nullptr) {
    if (!v->is_object()) {
      k.error(key, fmt::format("expected a JSON object (rope_type, factor, ...) or null, got {}",
                               describe_json(*v)));
      return;
    }
    const bool nested =
        key == "rope_parameters" && !v->empty() &&
        std::all_of(v->items().begin(), v->items().end(), [](const auto& item) {
          return std::find(std::begin(kLayerTypes), std::end(kLayerTypes), item.key()) !=
                 std::end(kLayerTypes);
        });
    if (nested) {
      std::optional<ConfigKeys> per_type = k.object(key, "RoPE parameters per layer type");
      for (const auto& item : v->items()) {
        if (std::optional<Rope> r = read_block(*per_type, item.key())) blocks.push_back(*r);
      }
    } else if (std::optional<Rope> r = read_block(k, key)) {
      blocks.push_back(*r);
    }
  }
  const std::int64_t max_pos = s.max_position_embeddings;
  if (max_pos <= 0) return;  // no length to scale; callers require max_model_len then
  // As vLLM: the last scaled block's factor (all layer types share it), YaRN's base length.
  double factor = 1.0;
  std::int64_t base = max_pos;
  bool longrope = false;
  std::int64_t longrope_original = 0;
  const bool gemma3 = s.family == ModelFamily::kGemma3 || s.family == ModelFamily::kGemma3Text;
  double gemma3_global_factor = 1.0;  // the factor of Gemma 3's global layers' rope
  for (const Rope& r : blocks) {
    if (gemma3 && r.factor && (r.type == "linear" || r.type == "dynamic")) {
      gemma3_global_factor = *r.factor;
    }
    if (r.type == "longrope") {
      longrope = true;
      longrope_original = r.original;
    }
    if (r.type == "longrope" || r.type == "llama3") continue;
    // vLLM: scaling_factor = rp.get("factor", scaling_factor). Not for Gemma 3, whose factor
    // scales only its global layers' positions (vLLM's _get_and_verify_max_len skips
    // model types containing "gemma3").
    if (r.factor && s.family != ModelFamily::kGemma3 && s.family != ModelFamily::kGemma3Text) {
      factor = *r.factor;
    }
    if (r.type == "yarn") base = r.original;
  }
  s.derived_max_model_len = static_cast<std::int64_t>(static_cast<double>(base) * factor);
  s.default_max_model_len = s.derived_max_model_len;
  s.rotary_cache_positions = s.derived_max_model_len;
  if (gemma3) {
    // Gemma 3 builds two rotary caches (vllm/model_executor/models/gemma3.py Gemma3Attention):
    // its sliding layers override the config with rope_local_base_freq and the default rope
    // (max_position rows), its global layers take rope_theta and rope_scaling, and get_rope
    // caches one embedding per distinct (base, scaling), so both exist. A linear-scaled one
    // holds max_position * factor rows (LinearScalingRotaryEmbedding._compute_cos_sin_cache,
    // vllm/model_executor/layers/rotary_embedding/linear_scaling_rope.py; dynamic NTK the
    // same): gemma-3-4b-it's {linear, factor 8} on 131,072 positions gives 1,048,576 + 131,072
    // rows of 256, 0.56 GiB in bf16, which vLLM's "Model loading took" counts.
    s.rotary_cache_positions = max_pos + static_cast<std::int64_t>(
                                             static_cast<double>(max_pos) * gemma3_global_factor);
  }
  if (longrope) {
    // The config's own original_max_position_embeddings (Phi-3: 4096), as vLLM's getattr.
    const std::int64_t original =
        k.optional_positive("original_max_position_embeddings").value_or(longrope_original);
    if (original > 0) {
      s.default_max_model_len = original;
      s.rotary_cache_positions = max_pos + original;
    }
  }
}

}  // namespace vramsim::model::detail
