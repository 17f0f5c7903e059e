// Where the data folders are (scenarios/models, topologies/): the source tree the library was
// built from, unless the VRAMSIM_ROOT environment variable points elsewhere.
#pragma once

#include <filesystem>

namespace vramsim::run {

/// The folder holding scenarios/ and topologies/; VRAMSIM_ROOT, when set and not empty, wins.
std::filesystem::path project_root();

}  // namespace vramsim::run
