#include "sim/serving/router.hpp"

namespace vramsim::serving {

Router::~Router() = default;

std::size_t least_outstanding(std::span<const ReplicaView> replicas) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < replicas.size(); ++i) {
    if (replicas[i].outstanding_tokens < replicas[best].outstanding_tokens) best = i;
  }
  return best;
}

}  // namespace vramsim::serving
