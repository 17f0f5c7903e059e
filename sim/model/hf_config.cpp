#include "sim/model/hf_config.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/model/hf_config_families.hpp"
#include "sim/model/hf_config_keys.hpp"
#include "sim/model/hf_config_rope.hpp"
#include "sim/model/hf_quant_config.hpp"

namespace vramsim::model {

namespace {

struct FamilyRow {
  std::string_view architecture;  // architectures[0]
  ModelFamily family;             // to_string(family) is the model_type, used without architectures
};

// NOTE: one row per Hugging Face config class; adding a family means a row here and a case in
// detail::read_family (the switch there has no default, so the compiler points at it).
constexpr FamilyRow kFamilies[] = {
    {"LlamaForCausalLM", ModelFamily::kLlama},
    {"MistralForCausalLM", ModelFamily::kMistral},
    {"MixtralForCausalLM", ModelFamily::kMixtral},
    {"Qwen2ForCausalLM", ModelFamily::kQwen2},
    {"Qwen2MoeForCausalLM", ModelFamily::kQwen2Moe},
    {"Qwen3ForCausalLM", ModelFamily::kQwen3},
    {"Qwen3MoeForCausalLM", ModelFamily::kQwen3Moe},
    {"GemmaForCausalLM", ModelFamily::kGemma},
    {"Gemma2ForCausalLM", ModelFamily::kGemma2},
    {"PhiForCausalLM", ModelFamily::kPhi},
    {"Phi3ForCausalLM", ModelFamily::kPhi3},
    {"GraniteForCausalLM", ModelFamily::kGranite},
    {"GPTNeoXForCausalLM", ModelFamily::kGptNeox},
    {"OPTForCausalLM", ModelFamily::kOpt},
    {"GPT2LMHeadModel", ModelFamily::kGpt2},
    {"DeepseekV2ForCausalLM", ModelFamily::kDeepseekV2},
    {"GptOssForCausalLM", ModelFamily::kGptOss},
    {"Mistral3ForConditionalGeneration", ModelFamily::kMistral3},
    {"Qwen2_5_VLForConditionalGeneration", ModelFamily::kQwen2_5Vl},
    {"Gemma3ForCausalLM", ModelFamily::kGemma3Text},
    {"Gemma3ForConditionalGeneration", ModelFamily::kGemma3},
};

std::string supported_list() {
  std::string out;
  for (const FamilyRow& r : kFamilies) {
    if (!out.empty()) out += ", ";
    out += r.architecture;
  }
  return out;
}

// Finds the family from architectures[0] (or model_type when architectures is absent).
// Throws: nothing can be read without knowing the family.
const FamilyRow& resolve_family(detail::ConfigKeys& keys, std::string& architecture) {
  if (const nlohmann::json* archs = keys.find("architectures")) {
    if (!archs->is_array() || archs->empty() || !(*archs)[0].is_string()) {
      keys.error("architectures", fmt::format("expected a non-empty list of class names such as "
                                              "[\"LlamaForCausalLM\"], got {}",
                                              detail::describe_json(*archs)));
      throw ConfigError(keys.report());
    }
    architecture = (*archs)[0].get<std::string>();
    for (const FamilyRow& r : kFamilies) {
      if (r.architecture == architecture) return r;
    }
    keys.error("architectures",
               fmt::format("unknown architecture '{}'; supported: {}", architecture,
                           supported_list()));
    throw ConfigError(keys.report());
  }
  if (std::optional<std::string> type = keys.string("model_type")) {
    for (const FamilyRow& r : kFamilies) {
      if (to_string(r.family) == *type) {
        architecture = r.architecture;
        return r;
      }
    }
    keys.error("model_type", fmt::format("unknown model_type '{}' and no architectures list; "
                                         "supported architectures: {}",
                                         *type, supported_list()));
    throw ConfigError(keys.report());
  }
  keys.error("architectures",
             fmt::format("missing required field (expected a list such as "
                         "[\"LlamaForCausalLM\"], or a model_type); supported: {}",
                         supported_list()));
  throw ConfigError(keys.report());
}

std::string name_from_source(const std::string& source) {
  std::filesystem::path p(source);
  if (p.filename() == "config.json" && p.has_parent_path()) {
    return p.parent_path().filename().string();
  }
  return p.stem().string();
}

// Checks that hold for every family once the keys are read.
void validate_shapes(detail::ConfigKeys& k, const ModelSpec& s, bool explicit_head_dim,
                     std::string_view heads_key, std::string_view kv_heads_key) {
  if (s.num_attention_heads > 0 && s.num_kv_heads > 0 &&
      s.num_attention_heads % s.num_kv_heads != 0) {
    k.error(kv_heads_key,
            fmt::format("must divide num_attention_heads = {} (grouped-query attention), got {}",
                        s.num_attention_heads, s.num_kv_heads));
  }
  if (!explicit_head_dim && !s.mla && s.num_attention_heads > 0 && s.hidden_size > 0 &&
      s.hidden_size % s.num_attention_heads != 0) {
    k.error(heads_key, fmt::format("must divide hidden_size = {} when the config gives no "
                                   "head_dim, got {}",
                                   s.hidden_size, s.num_attention_heads));
  }
}

// NOTE: a model of 10^15 parameters (2 PB of bf16 weights) is far beyond any built; sizes that
// multiply to more are a corrupt file, and would overflow the int64 parameter and byte counts.
constexpr double kMaxPlausibleParams = 1e15;
// Layers are held one entry each (ModelSpec::layers); the deepest released models have ~10^2.
constexpr std::int64_t kMaxLayers = 1 << 16;

// A rough upper estimate of the parameter count in double (no overflow), to refuse absurd
// scales before anything multiplies the sizes in int64.
double rough_param_estimate(const ModelSpec& s) {
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  const double h = d(s.hidden_size);
  const double heads = d(std::max(s.num_attention_heads, s.num_kv_heads));
  double attention = 4.0 * h * heads * d(s.head_dim);
  if (s.mla) {
    const double ranks = d(s.mla->q_lora_rank + s.mla->kv_lora_rank);
    attention += ranks * (h + heads * d(s.mla->qk_nope_head_dim + s.mla->qk_rope_head_dim +
                                        s.mla->v_head_dim));
  }
  double mlp = 3.0 * h * d(s.intermediate_size);
  if (s.moe) {
    mlp += 3.0 * h * (d(s.moe->num_experts) * d(s.moe->expert_intermediate_size) +
                      d(s.moe->shared_intermediate_size) + d(s.moe->num_experts));
  }
  double total = d(s.num_layers) * (attention + mlp) +
                 d(s.embed_dim) * (2.0 * d(s.vocab_size) + d(s.learned_positions) + 2.0 * h);
  if (s.vision) {
    const VisionSpec& v = *s.vision;
    total += d(v.num_layers) * (4.0 * d(v.hidden_size) * d(v.hidden_size) +
                                3.0 * d(v.hidden_size) * d(v.intermediate_size)) +
             d(v.hidden_size) * (d(v.num_channels) * d(v.patch_size) * d(v.patch_size) +
                                 d(v.spatial_merge_size) * d(v.spatial_merge_size) * h);
  }
  return total;
}

// Refuses a depth or a scale no model has (see the constants above).
void validate_scale(detail::ConfigKeys& k, const ModelSpec& s, std::string_view layers_key) {
  if (s.num_layers > kMaxLayers) {
    k.error(layers_key, fmt::format("expected at most {} layers, got {}", kMaxLayers,
                                    s.num_layers));
    return;
  }
  const double params = rough_param_estimate(s);
  if (params > kMaxPlausibleParams) {
    k.error("hidden_size", fmt::format("the sizes describe a model of ~{:.3g} parameters, more "
                                       "than {:.0e}: a corrupt or mistyped config",
                                       params, kMaxPlausibleParams));
  }
}

// The rotary fraction of each head: (0, 1] (HF rotary_dim = head_dim * partial_rotary_factor).
void validate_rotary(detail::ConfigKeys& k, const ModelSpec& s) {
  const std::string_view key = s.family == ModelFamily::kGptNeox ? "rotary_pct"
                                                                 : "partial_rotary_factor";
  if (!(s.partial_rotary_factor > 0.0 && s.partial_rotary_factor <= 1.0)) {
    k.error(key, fmt::format("must be in (0, 1] (the share of each head that rotates), got {}",
                             s.partial_rotary_factor));
  } else if (std::optional<double> f = k.number("partial_rotary_factor")) {
    // Families that do not model a partial rotation still must not carry a nonsense one.
    if (!(*f > 0.0 && *f <= 1.0)) {
      k.error("partial_rotary_factor",
              fmt::format("must be in (0, 1] (the share of each head that rotates), got {}", *f));
    }
  }
}

// torch_dtype (transformers v4) or dtype (v5): informational, but a name no dtype has is a
// corrupt config.
void read_checkpoint_dtype(detail::ConfigKeys& top, ModelSpec& spec) {
  const std::string_view key = top.has("torch_dtype") ? "torch_dtype" : "dtype";
  const std::optional<std::string> dtype = top.string(key);
  if (!dtype) return;
  spec.checkpoint_dtype = dtype_from_string(*dtype);
  if (!spec.checkpoint_dtype) {
    top.error(key, fmt::format("unknown dtype '{}'; expected float32, float16 or bfloat16 (or {})",
                               *dtype, dtype_names()));
  }
}

}  // namespace

std::vector<std::string_view> supported_architectures() {
  std::vector<std::string_view> out;
  for (const FamilyRow& r : kFamilies) out.push_back(r.architecture);
  return out;
}

ModelSpec parse_hf_config(const nlohmann::json& config, const std::string& source) {
  return parse_hf_config(config, source, nullptr, "");
}

ModelSpec parse_hf_config(const nlohmann::json& config, const std::string& source,
                          const nlohmann::json* hf_quant_config,
                          const std::string& hf_quant_source) {
  ValidationReport report;
  const SourceLocation where{source, 0};
  if (!config.is_object()) {
    throw ConfigError("", fmt::format("expected a JSON object (a Hugging Face config.json), got {}",
                                      detail::describe_json(config)),
                      where);
  }
  detail::ConfigKeys top(config, "", where, report);
  ModelSpec spec;
  const FamilyRow& row = resolve_family(top, spec.architecture);
  spec.family = row.family;
  spec.name = top.string("_name_or_path").value_or("");
  if (spec.name.empty()) spec.name = name_from_source(source);

  detail::read_quantization_config(top, spec);
  if (!spec.checkpoint_quant && hf_quant_config != nullptr) {
    if (!hf_quant_config->is_object()) {
      report.error("", fmt::format("expected a JSON object (ModelOpt's quantization), got {}",
                                   detail::describe_json(*hf_quant_config)),
                   SourceLocation{hf_quant_source, 0});
    } else {
      detail::ConfigKeys file(*hf_quant_config, "", SourceLocation{hf_quant_source, 0}, report);
      detail::read_hf_quant_config_file(file, spec);
    }
  }
  read_checkpoint_dtype(top, spec);

  detail::FamilyResult result;
  // The decoder's keys, at the top level or (a multimodal model's) under text_config.
  const auto read_decoder = [&](detail::ConfigKeys& keys) {
    result = detail::read_family(keys, spec);
    validate_shapes(keys, spec, result.explicit_head_dim, result.heads_key, result.kv_heads_key);
    validate_scale(keys, spec, result.layers_key);
    validate_rotary(keys, spec);
    detail::read_rope_scaling(keys, spec);
  };
  const auto read_text_config = [&](std::string_view what) {
    if (std::optional<detail::ConfigKeys> text = top.object("text_config", what)) {
      read_decoder(*text);
    }
  };
  if (spec.family == ModelFamily::kMistral3 || spec.family == ModelFamily::kGemma3) {
    // The language model of Mistral3ForConditionalGeneration is a plain Mistral decoder; that
    // of Gemma3ForConditionalGeneration a Gemma 3 text decoder.
    read_text_config(spec.family == ModelFamily::kGemma3
                         ? "the text decoder's config (model_type gemma3_text)"
                         : "the text decoder's config (model_type mistral)");
    if (spec.family == ModelFamily::kGemma3) {
      detail::read_gemma3_vision(top, spec);
    } else {
      detail::read_mistral3_vision(top, spec);
    }
  } else if (spec.family == ModelFamily::kQwen2_5Vl && top.has("text_config")) {
    // transformers >= 4.5x nests the Qwen2 decoder's keys under text_config; older configs
    // (as Qwen published them) keep them at the top level.
    read_text_config("the text decoder's config (model_type qwen2_5_vl_text)");
    detail::read_qwen2_5_vl_vision(top, spec);
  } else {
    read_decoder(top);
    if (spec.family == ModelFamily::kQwen2_5Vl) detail::read_qwen2_5_vl_vision(top, spec);
  }
  throw_if_errors(report);
  return spec;
}

namespace {

// The parsed JSON of `file`; throws ConfigError naming it when it cannot be read or parsed.
nlohmann::json read_json_file(const std::filesystem::path& file, std::string_view expected) {
  std::ifstream in(file);
  if (!in) {
    throw ConfigError("", fmt::format("cannot open the file (expected {})", expected),
                      SourceLocation{file.string(), 0});
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    // e.what() carries "at line L, column C" (or "number overflow" for 1e400).
    throw ConfigError("", fmt::format("not valid JSON: {}", e.what()),
                      SourceLocation{file.string(), 0});
  }
}

}  // namespace

ModelSpec load_hf_config(const std::filesystem::path& path) {
  std::filesystem::path file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) file /= "config.json";
  const nlohmann::json config = read_json_file(file, "a Hugging Face config.json");
  // ModelOpt <= 0.29 wrote its quantization to hf_quant_config.json beside config.json; vLLM
  // reads it when config.json has none (transformers_utils/config.py).
  const std::filesystem::path quant_file = file.parent_path() / "hf_quant_config.json";
  const auto present = [&](const char* key) {
    return config.is_object() && config.contains(key) && !config.at(key).is_null();
  };
  const bool has_own = present("quantization_config") || present("compression_config");
  if (!has_own && std::filesystem::is_regular_file(quant_file, ec)) {
    const nlohmann::json quant = read_json_file(quant_file, "ModelOpt's hf_quant_config.json");
    return parse_hf_config(config, file.string(), &quant, quant_file.string());
  }
  return parse_hf_config(config, file.string());
}

}  // namespace vramsim::model
