#include "sim/run/data_root.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <system_error>

#include "sim/core/error.hpp"

namespace vramsim::run {

std::filesystem::path project_root() {
  if (const char* env = std::getenv("VRAMSIM_ROOT"); env != nullptr && *env != '\0') {
    return std::filesystem::path(env);
  }
  return std::filesystem::path(VRAMSIM_SOURCE_ROOT);
}

std::filesystem::path checked_project_root() {
  const char* env = std::getenv("VRAMSIM_ROOT");
  const bool from_env = env != nullptr && *env != '\0';
  const std::filesystem::path root = project_root();
  // Without these folders every list is empty and every id unknown: say so once, here.
  for (const char* sub : {"topologies", "scenarios/models"}) {
    std::error_code ec;
    if (std::filesystem::is_directory(root / sub, ec)) continue;
    throw ConfigError(
        from_env ? "VRAMSIM_ROOT" : "data root",
        fmt::format("'{}' has no {}/ folder{}: set VRAMSIM_ROOT to the vramsim checkout (the "
                    "folder holding scenarios/ and topologies/)",
                    root.string(), sub,
                    from_env ? " (from the VRAMSIM_ROOT environment variable)"
                             : " (the source tree this build came from)"));
  }
  return root;
}

}  // namespace vramsim::run
