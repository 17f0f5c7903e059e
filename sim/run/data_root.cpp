#include "sim/run/data_root.hpp"

#include <cstdlib>

namespace vramsim::run {

std::filesystem::path project_root() {
  if (const char* env = std::getenv("VRAMSIM_ROOT"); env != nullptr && *env != '\0') {
    return std::filesystem::path(env);
  }
  return std::filesystem::path(VRAMSIM_SOURCE_ROOT);
}

}  // namespace vramsim::run
