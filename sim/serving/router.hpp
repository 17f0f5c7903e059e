// Routers: which replica an arriving request joins. An open policy family (STYLE.md 6.3): one
// file per policy under routers/, a descriptor row in register_builtin_routers().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/serving/kv_cache_manager.hpp"
#include "sim/serving/policy_registry.hpp"
#include "sim/serving/request.hpp"

namespace vramsim::serving {

/// What a router may read of a replica.
struct ReplicaView {
  std::int32_t index = 0;
  /// Tokens still to compute for the replica's unfinished requests: prompt tokens not yet
  /// prefilled plus output tokens not yet generated.
  std::int64_t outstanding_tokens = 0;
  std::int64_t num_unfinished = 0;
  const KvCacheManager* kv = nullptr;
};

class Router {
 public:
  virtual ~Router();
  /// The index (into `replicas`) of the replica `r` should join. `replicas` is never empty.
  virtual std::size_t route(const Request& r, std::span<const ReplicaView> replicas) = 0;
};

struct RouterDescriptor {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Router>()> make;
  /// True when the router reads the requests' prefix-block hashes (the simulation then computes
  /// them even with prefix caching off).
  bool uses_prefix_hashes = false;
};

/// Routers by name (PolicyRegistry<RouterDescriptor> with family "router").
class RouterRegistry : public PolicyRegistry<RouterDescriptor> {
 public:
  RouterRegistry() : PolicyRegistry("router") {}
};

/// round-robin, least-outstanding-tokens, prefix-aware (routers/*.cpp).
void register_builtin_routers(RouterRegistry& registry);

/// The replica with the fewest outstanding tokens, the lowest index on ties.
std::size_t least_outstanding(std::span<const ReplicaView> replicas);

}  // namespace vramsim::serving
