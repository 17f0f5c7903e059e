// Reading a Hugging Face config.json, as users have it, into a ModelSpec.
//
// The reader knows the families listed in ModelFamily (model_spec.hpp) and each family's key
// names and class defaults (GPT-2's n_embd/n_layer, OPT's ffn_dim and +2 position offset,
// Gemma's tie_word_embeddings default of true, Qwen's use_sliding_window, gpt-oss's
// layer_types, Mistral3's text_config, ...). It never guesses: an unknown architecture, a
// missing required field, a wrong type or a non-positive size is a ConfigError that names the
// file, the field and what was expected, with every problem found in the file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sim/model/model_spec.hpp"

namespace vramsim::model {

/// Builds a ModelSpec from a parsed config.json. `source` names the file in messages and is
/// the model's name when the config has no `_name_or_path`. Throws ConfigError listing every
/// problem found.
ModelSpec parse_hf_config(const nlohmann::json& config, const std::string& source);

/// As above, with ModelOpt's hf_quant_config.json (`hf_quant_config`, parsed; null when there
/// is none) read from `hf_quant_source` when config.json has no quantization_config. Its
/// problems name that file and its keys ("quantization.quant_algo").
ModelSpec parse_hf_config(const nlohmann::json& config, const std::string& source,
                          const nlohmann::json* hf_quant_config,
                          const std::string& hf_quant_source);

/// Reads `file` (a config.json, or a directory holding one) and parses it, with ModelOpt's
/// hf_quant_config.json beside it when config.json has no quantization_config. Throws
/// ConfigError when a file is missing, is not JSON, or fails parse_hf_config.
ModelSpec load_hf_config(const std::filesystem::path& file);

/// The `architectures[0]` class names the reader accepts, e.g. "LlamaForCausalLM".
std::vector<std::string_view> supported_architectures();

}  // namespace vramsim::model
