// Helpers shared by the tests of sim/model.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/model/hf_config.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/model_zoo.hpp"

namespace vramsim::model::testing {

inline std::filesystem::path zoo_dir() {
  return std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "scenarios" / "models";
}

inline std::filesystem::path shared_models_dir() {
  return std::filesystem::path(VRAMSIM_SHARED_DATA) / "models";
}

/// Resolution that never reaches the network nor the user's own hub cache: offline, with a
/// cache folder that does not exist.
inline ResolveOptions offline_zoo_only() {
  HubSettings hub;
  hub.cache_dir = "/nonexistent/vramsim-tests/hf-cache";
  hub.offline = true;
  return ResolveOptions{"main", hub};
}

/// A zoo model by Hugging Face id.
inline ModelSpec zoo(const std::string& id) {
  return load_model(id, zoo_dir(), offline_zoo_only());
}

/// Parses a small inline config, named "inline.json" in messages.
inline ModelSpec parse(const std::string& json_text) {
  return parse_hf_config(nlohmann::json::parse(json_text), "inline.json");
}

}  // namespace vramsim::model::testing
