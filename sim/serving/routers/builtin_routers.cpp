#include "sim/serving/routers/builtin_routers.hpp"

namespace vramsim::serving {

void register_builtin_routers(RouterRegistry& registry) {
  registry.add({"round-robin", "replicas in turn", make_round_robin_router});
  registry.add({"least-outstanding-tokens",
                "the replica with the fewest prompt and output tokens left to compute",
                make_least_outstanding_router});
  registry.add({"prefix-aware",
                "the replica caching the longest prefix of the request; load breaks ties",
                make_prefix_aware_router, /*uses_prefix_hashes=*/true});
}

}  // namespace vramsim::serving
