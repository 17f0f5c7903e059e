// The model zoo: scenarios/models/<org>__<name>.json, one Hugging Face config.json per model,
// addressed by its Hugging Face id ("meta-llama/Llama-3.1-8B-Instruct", case-insensitive).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/model/model_spec.hpp"

namespace vramsim::model {

/// scenarios/models of the source tree this library was built from.
std::filesystem::path default_zoo_dir();

/// The Hugging Face ids of the zoo, sorted case-insensitively. A file "org__name.json" is the
/// id "org/name". Empty when the folder does not exist.
std::vector<std::string> zoo_model_ids(const std::filesystem::path& zoo_dir);

/// The zoo file of `id` (matched case-insensitively), or nullopt when the zoo has no such id.
std::optional<std::filesystem::path> find_zoo_model(std::string_view id,
                                                    const std::filesystem::path& zoo_dir);

/// `id_or_path` is a path to a config.json (or to a directory holding one) when such a file
/// exists, else a zoo id. Throws ConfigError on field "model" when it is neither, listing the
/// closest zoo ids; and ConfigError from load_hf_config when the file is invalid.
ModelSpec load_model(std::string_view id_or_path, const std::filesystem::path& zoo_dir);

}  // namespace vramsim::model
