#include "sim/model/model_spec.hpp"

#include <algorithm>

#include "sim/core/check.hpp"

namespace vramsim::model {

std::string_view to_string(ModelFamily f) {
  switch (f) {
    case ModelFamily::kLlama: return "llama";
    case ModelFamily::kMistral: return "mistral";
    case ModelFamily::kMixtral: return "mixtral";
    case ModelFamily::kQwen2: return "qwen2";
    case ModelFamily::kQwen2Moe: return "qwen2_moe";
    case ModelFamily::kQwen3: return "qwen3";
    case ModelFamily::kQwen3Moe: return "qwen3_moe";
    case ModelFamily::kGemma: return "gemma";
    case ModelFamily::kGemma2: return "gemma2";
    case ModelFamily::kPhi: return "phi";
    case ModelFamily::kPhi3: return "phi3";
    case ModelFamily::kGranite: return "granite";
    case ModelFamily::kGptNeox: return "gpt_neox";
    case ModelFamily::kOpt: return "opt";
    case ModelFamily::kGpt2: return "gpt2";
    case ModelFamily::kDeepseekV2: return "deepseek_v2";
    case ModelFamily::kGptOss: return "gpt_oss";
    case ModelFamily::kMistral3: return "mistral3";
  }
  VRAMSIM_UNREACHABLE("invalid ModelFamily");
}

bool ModelSpec::has_sliding_window() const {
  return std::any_of(layers.begin(), layers.end(),
                     [](const LayerSpec& l) { return l.sliding_window > 0; });
}

std::int64_t ModelSpec::num_moe_layers() const {
  return std::count_if(layers.begin(), layers.end(), [](const LayerSpec& l) { return l.moe; });
}

}  // namespace vramsim::model
