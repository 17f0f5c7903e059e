// Where the data folders are (scenarios/models, topologies/): the source tree the library was
// built from, unless the VRAMSIM_ROOT environment variable points elsewhere.
#pragma once

#include <filesystem>

namespace vramsim::run {

/// The folder holding scenarios/ and topologies/; VRAMSIM_ROOT, when set and not empty, wins.
std::filesystem::path project_root();
/// project_root(), checked: throws ConfigError (field "VRAMSIM_ROOT", or "data root" for the
/// built-in one) naming the folder and how to set it when it has no topologies/ or
/// scenarios/models/ (an empty `list gpus` and "unknown device" for every id otherwise).
std::filesystem::path checked_project_root();

}  // namespace vramsim::run
