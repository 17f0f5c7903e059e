#include "sim/serving/kv_bench.hpp"

#include "sim/core/check.hpp"
#include "sim/core/rng.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

namespace vramsim::serving {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::int64_t draw_length(RngStream& rng, std::int64_t mean) {
  return std::max<std::int64_t>(1, rng.uniform_int(mean / 2, mean + mean / 2));
}

}  // namespace

KvBenchResult run_kv_bench(const KvBenchOptions& o) {
  VRAMSIM_CHECK(o.num_requests > 0 && o.max_running > 0 && o.block_size > 0 &&
                    o.prompt_tokens > 0 && o.output_tokens > 0,
                "kv bench: counts and lengths must be positive");
  const std::int64_t longest_blocks =
      ceil_div(o.prompt_tokens + o.prompt_tokens / 2 + o.output_tokens + o.output_tokens / 2,
               o.block_size);
  KvCacheConfig config;
  config.block_size = o.block_size;
  config.enable_prefix_caching = o.enable_prefix_caching;
  config.num_blocks = o.num_blocks > 0 ? o.num_blocks
                                       : o.max_running * ceil_div(o.prompt_tokens + o.output_tokens,
                                                                  o.block_size);
  VRAMSIM_CHECK(config.num_blocks >= longest_blocks,
                "kv bench: {} blocks cannot hold the longest request ({} blocks)",
                config.num_blocks, longest_blocks);
  KvCacheManager kv(config);

  RngStream rng(o.seed);
  std::vector<BlockHash> shared(static_cast<std::size_t>(o.shared_prefix_blocks));
  for (std::size_t i = 0; i < shared.size(); ++i) shared[i] = 0xb10c'0000'0000'0000ULL + i;

  // Slots of the running batch; a slot whose request finished takes the next one. Request
  // objects are reused so that the loop measures the manager, not this harness.
  std::vector<Request> slots(static_cast<std::size_t>(o.max_running));
  std::vector<bool> active(slots.size(), false);
  std::int64_t next_id = 0;
  KvBenchResult result;

  const auto start = std::chrono::steady_clock::now();
  while (result.num_requests_finished < o.num_requests) {
    for (std::size_t s = 0; s < slots.size(); ++s) {
      Request& r = slots[s];
      if (!active[s]) {
        if (next_id >= o.num_requests) continue;
        r.id = next_id;
        r.uid = static_cast<std::uint64_t>(next_id);
        ++next_id;
        r.prompt_tokens = draw_length(rng, o.prompt_tokens);
        r.output_tokens = draw_length(rng, o.output_tokens);
        r.num_computed_tokens = 0;
        r.num_generated = 0;
        const auto num_shared = std::min<std::size_t>(
            shared.size(), static_cast<std::size_t>(r.prompt_tokens / o.block_size));
        r.prefix_hashes.assign(shared.begin(),
                               shared.begin() + static_cast<std::ptrdiff_t>(num_shared));
        active[s] = true;
      }
      if (r.num_computed_tokens == 0) {  // prefill (first admission or after preemption)
        std::int64_t hit = 0;
        if (o.enable_prefix_caching) {
          hit = kv.cached_prefix_tokens(r);
          ++result.num_ops;
        }
        ++result.num_ops;
        if (!kv.allocate_slots(r, r.num_tokens() - hit, hit)) continue;  // retry next step
        if (o.enable_prefix_caching) kv.record_prefix_lookup(r.num_tokens(), hit);
        r.num_computed_tokens = r.num_tokens();
      } else {  // decode one token
        ++result.num_ops;
        if (!kv.allocate_slots(r, 1)) {
          // Recompute preemption: the request prefills again (prompt and generated tokens).
          kv.free(r);
          ++result.num_ops;
          r.num_computed_tokens = 0;
          ++result.num_preemptions;
          continue;
        }
        r.num_computed_tokens += 1;
      }
      // The step computed every known token: a new one is sampled.
      if (++r.num_generated == r.output_tokens) {
        kv.free(r);
        ++result.num_ops;
        ++result.num_requests_finished;
        active[s] = false;
      }
    }
  }
  const auto stop = std::chrono::steady_clock::now();

  result.seconds = std::chrono::duration<double>(stop - start).count();
  result.ops_per_second =
      result.seconds > 0 ? static_cast<double>(result.num_ops) / result.seconds : 0.0;
  result.stats = kv.stats();
  return result;
}

}  // namespace vramsim::serving
