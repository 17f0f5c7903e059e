#include "sim/model/hf_config.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/model/hf_config_families.hpp"
#include "sim/model/hf_config_keys.hpp"

namespace vramsim::model {

namespace {

struct FamilyRow {
  std::string_view architecture;  // architectures[0]
  std::string_view model_type;    // model_type, used when architectures is absent
  ModelFamily family;
};

// NOTE: one row per Hugging Face config class; adding a family means a row here and a case in
// detail::read_family (the switch there has no default, so the compiler points at it).
constexpr FamilyRow kFamilies[] = {
    {"LlamaForCausalLM", "llama", ModelFamily::kLlama},
    {"MistralForCausalLM", "mistral", ModelFamily::kMistral},
    {"MixtralForCausalLM", "mixtral", ModelFamily::kMixtral},
    {"Qwen2ForCausalLM", "qwen2", ModelFamily::kQwen2},
    {"Qwen2MoeForCausalLM", "qwen2_moe", ModelFamily::kQwen2Moe},
    {"Qwen3ForCausalLM", "qwen3", ModelFamily::kQwen3},
    {"Qwen3MoeForCausalLM", "qwen3_moe", ModelFamily::kQwen3Moe},
    {"GemmaForCausalLM", "gemma", ModelFamily::kGemma},
    {"Gemma2ForCausalLM", "gemma2", ModelFamily::kGemma2},
    {"PhiForCausalLM", "phi", ModelFamily::kPhi},
    {"Phi3ForCausalLM", "phi3", ModelFamily::kPhi3},
    {"GraniteForCausalLM", "granite", ModelFamily::kGranite},
    {"GPTNeoXForCausalLM", "gpt_neox", ModelFamily::kGptNeox},
    {"OPTForCausalLM", "opt", ModelFamily::kOpt},
    {"GPT2LMHeadModel", "gpt2", ModelFamily::kGpt2},
    {"DeepseekV2ForCausalLM", "deepseek_v2", ModelFamily::kDeepseekV2},
    {"GptOssForCausalLM", "gpt_oss", ModelFamily::kGptOss},
    {"Mistral3ForConditionalGeneration", "mistral3", ModelFamily::kMistral3},
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
      if (r.model_type == *type) {
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

}  // namespace

std::vector<std::string_view> supported_architectures() {
  std::vector<std::string_view> out;
  for (const FamilyRow& r : kFamilies) out.push_back(r.architecture);
  return out;
}

ModelSpec parse_hf_config(const nlohmann::json& config, const std::string& source) {
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

  if (const nlohmann::json* q = top.find("quantization_config")) {
    if (q->is_object() && q->contains("quant_method") && (*q)["quant_method"].is_string()) {
      spec.checkpoint_quantization = (*q)["quant_method"].get<std::string>();
    }
  }
  std::optional<std::string> dtype = top.string("torch_dtype");
  if (!dtype) dtype = top.string("dtype");
  if (dtype) spec.checkpoint_dtype = dtype_from_string(*dtype);

  detail::FamilyResult result;
  if (spec.family == ModelFamily::kMistral3) {
    // The language model of Mistral3ForConditionalGeneration is a plain Mistral decoder.
    std::optional<detail::ConfigKeys> text =
        top.object("text_config", "the text decoder's config (model_type mistral)");
    if (text) {
      result = detail::read_family(*text, spec);
      validate_shapes(*text, spec, result.explicit_head_dim, result.heads_key,
                      result.kv_heads_key);
    }
    detail::read_mistral3_vision(top, spec);
  } else {
    result = detail::read_family(top, spec);
    validate_shapes(top, spec, result.explicit_head_dim, result.heads_key, result.kv_heads_key);
  }
  throw_if_errors(report);
  return spec;
}

ModelSpec load_hf_config(const std::filesystem::path& path) {
  std::filesystem::path file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) file /= "config.json";
  std::ifstream in(file);
  if (!in) {
    throw ConfigError("", "cannot open the file (expected a Hugging Face config.json)",
                      SourceLocation{file.string(), 0});
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() carries "at line L, column C".
    throw ConfigError("", fmt::format("not valid JSON: {}", e.what()),
                      SourceLocation{file.string(), 0});
  }
  return parse_hf_config(config, file.string());
}

}  // namespace vramsim::model
