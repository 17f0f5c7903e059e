// `least-outstanding-tokens`: the replica with the least work left (prompt tokens not yet
// prefilled plus output tokens not yet generated), the lowest index on ties. Vidur's "lor"
// (least outstanding requests) weighted by tokens, as in llm-d's and AIBrix's load-aware routing.
#include "sim/serving/routers/builtin_routers.hpp"

namespace vramsim::serving {
namespace {

class LeastOutstandingRouter final : public Router {
 public:
  std::size_t route(const Request&, std::span<const ReplicaView> replicas) override {
    return least_outstanding(replicas);
  }
};

}  // namespace

std::unique_ptr<Router> make_least_outstanding_router() {
  return std::make_unique<LeastOutstandingRouter>();
}

}  // namespace vramsim::serving
