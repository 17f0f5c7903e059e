// Tiny worlds for the KV offload tiers' tests (kv_offload_test.cpp, kv_disk_tier_test.cpp):
// requests with prefix hashes admitted as the scheduler admits them, a KV cache of 4-token
// blocks with a host-memory tier and a disk tier, and trace replays of requests that share
// prefixes on steps of round numbers.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/serving/kv_cache_manager.hpp"
#include "tests/serving/serving_test_support.hpp"

namespace vramsim::serving::testing {

using Hashes = std::vector<BlockHash>;

/// A request of `prompt_tokens` and one output token whose full blocks hash to `prefix`.
inline Request make_request(RequestId id, std::int64_t prompt_tokens, Hashes prefix = {}) {
  Request r;
  r.id = id;
  r.uid = static_cast<std::uint64_t>(id) + 1000;
  r.prompt_tokens = prompt_tokens;
  r.output_tokens = 1;
  r.prefix_hashes = std::move(prefix);
  return r;
}

/// Admits `r` as the scheduler does: the cached prefix first, then the rest of its prompt.
inline bool admit(KvCacheManager& kv, Request& r) {
  const std::int64_t hit = kv.cached_prefix_tokens(r);
  if (!kv.allocate_slots(r, r.num_tokens() - hit, hit)) return false;
  kv.record_prefix_lookup(r.num_tokens(), hit);
  r.num_computed_tokens = r.num_tokens();
  return true;
}

/// Prefix caching on blocks of 4 tokens and 1000 bytes: `gpu_blocks` on the GPU, `host_blocks`
/// in the host-memory tier and `disk_blocks` on disk (0: no disk tier).
inline KvCacheConfig kv_tier_config(std::int64_t gpu_blocks, std::int64_t host_blocks,
                                    std::int64_t disk_blocks = 0) {
  KvCacheConfig c;
  c.num_blocks = gpu_blocks;
  c.block_size = 4;
  c.enable_prefix_caching = true;
  c.bytes_per_block = Bytes(1000);
  c.num_offload_blocks = host_blocks;
  c.num_disk_blocks = disk_blocks;
  return c;
}

/// A trace row at `arrival_s` of `prompt` tokens and one output token whose 16-token blocks
/// hash to `ids`.
inline TraceRecord with_prefix(double arrival_s, std::int64_t prompt,
                               std::vector<std::uint64_t> ids) {
  TraceRecord r = record(arrival_s, prompt, 1);
  r.hash_ids = std::move(ids);
  r.hash_block_tokens = 16;
  return r;
}

/// small_setup(gpu_blocks) (blocks of 16 tokens and 1 MiB, a 25 GB/s host link) with prefix
/// caching on and the KV invariants checked as it runs; no offload tier yet.
inline ServingSetup prefix_replay_setup(std::int64_t gpu_blocks) {
  ServingSetup s = small_setup(gpu_blocks);
  s.replica.kv.enable_prefix_caching = true;
  s.replica.check_kv_invariants = true;
  return s;
}

/// Steps of 1 ms + 10 us per token.
inline LinearTimeModel millisecond_steps() {
  return LinearTimeModel(Duration::from_nanoseconds(1'000'000),
                         Duration::from_nanoseconds(10'000));
}

}  // namespace vramsim::serving::testing
