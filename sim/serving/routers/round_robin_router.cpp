// `round-robin`: replicas in turn, whatever their load (vLLM's and Vidur's default global
// scheduler).
#include "sim/serving/routers/builtin_routers.hpp"

namespace vramsim::serving {
namespace {

class RoundRobinRouter final : public Router {
 public:
  std::size_t route(const Request&, std::span<const ReplicaView> replicas) override {
    const std::size_t pick = next_ % replicas.size();
    ++next_;
    return pick;
  }

 private:
  std::size_t next_ = 0;
};

}  // namespace

std::unique_ptr<Router> make_round_robin_router() { return std::make_unique<RoundRobinRouter>(); }

}  // namespace vramsim::serving
