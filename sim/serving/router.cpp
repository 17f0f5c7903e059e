#include "sim/serving/router.hpp"

#include "sim/core/error.hpp"

#include <fmt/format.h>

namespace vramsim::serving {

Router::~Router() = default;

void RouterRegistry::add(RouterDescriptor d) { rows_.push_back(std::move(d)); }

const RouterDescriptor& RouterRegistry::find(std::string_view name,
                                             std::string_view field) const {
  std::vector<std::string> names;
  for (const RouterDescriptor& d : rows_) {
    if (d.name == name) return d;
    names.push_back(d.name);
  }
  throw ConfigError(std::string(field),
                    fmt::format("unknown router '{}'; valid: {}", name, fmt::join(names, ", ")));
}

std::size_t least_outstanding(std::span<const ReplicaView> replicas) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < replicas.size(); ++i) {
    if (replicas[i].outstanding_tokens < replicas[best].outstanding_tokens) best = i;
  }
  return best;
}

}  // namespace vramsim::serving
