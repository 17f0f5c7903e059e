// `prefix-aware`: the replica whose KV cache already holds the longest prefix of the request
// (blocks found by content hash), so shared system prompts and multi-turn conversations land
// where their KV is. Ties, including "no replica holds any of it", go to the replica with the
// fewest outstanding tokens; a replica whose outstanding tokens exceed the least loaded one's by
// more than kMaxImbalanceTokens is not chosen for its cache (SGLang's cache-aware router uses
// the same guard against hot-spotting, its `balance_abs_threshold`).
#include "sim/serving/routers/builtin_routers.hpp"

namespace vramsim::serving {
namespace {

// NOTE: a default, not a measurement: about two full 8192-token steps of extra work.
constexpr std::int64_t kMaxImbalanceTokens = 16384;

class PrefixAwareRouter final : public Router {
 public:
  std::size_t route(const Request& r, std::span<const ReplicaView> replicas) override {
    const std::size_t least = least_outstanding(replicas);
    const std::int64_t floor = replicas[least].outstanding_tokens;
    std::size_t best = least;
    std::int64_t best_hit = replicas[least].kv->cached_prefix_tokens(r);
    for (std::size_t i = 0; i < replicas.size(); ++i) {
      if (i == least || replicas[i].outstanding_tokens - floor > kMaxImbalanceTokens) continue;
      const std::int64_t hit = replicas[i].kv->cached_prefix_tokens(r);
      if (hit > best_hit ||
          (hit == best_hit && replicas[i].outstanding_tokens < replicas[best].outstanding_tokens)) {
        best = i;
        best_hit = hit;
      }
    }
    return best;
  }
};

}  // namespace

std::unique_ptr<Router> make_prefix_aware_router() {
  return std::make_unique<PrefixAwareRouter>();
}

}  // namespace vramsim::serving
