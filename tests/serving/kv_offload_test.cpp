// The KV offload tier (sim/serving/kv_offload_tier.hpp) and its use by the KV manager and the
// replica: LRU order as vLLM's LRUOffloadingManager keeps it, stores after compute, hits in
// host memory after the GPU cache has dropped a prefix, and the host-to-device copy they cost.
#include "sim/serving/kv_offload_tier.hpp"

#include "sim/serving/kv_cache_manager.hpp"
#include "tests/serving/kv_tier_fixture.hpp"
#include "tests/serving/serving_test_checks.hpp"

#include <vector>

#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using vramsim::serving::testing::admit;
using vramsim::serving::testing::check_identical_request_timings;
using vramsim::serving::testing::Hashes;
using vramsim::serving::testing::KeepAll;
using vramsim::serving::testing::kv_tier_config;
using vramsim::serving::testing::LinearTimeModel;
using vramsim::serving::testing::make_request;
using vramsim::serving::testing::millisecond_steps;
using vramsim::serving::testing::prefix_replay_setup;
using vramsim::serving::testing::record;
using vramsim::serving::testing::small_setup;
using vramsim::serving::testing::with_prefix;

TEST_CASE("the offload tier evicts least recently used first, and touch makes a prefix's "
          "head newest",
          "[serving][kv][offload]") {
  KvOffloadTier tier(4);
  const Request a = make_request(0, 12, {11, 12, 13});
  const Request b = make_request(1, 8, {21, 22});
  REQUIRE(tier.store(a, 0, 3) == 3);
  CHECK(tier.lru_order() == Hashes{11, 12, 13});
  CHECK(tier.store(a, 0, 3) == 0);  // all held: nothing to copy
  // vLLM touches reversed(): block 2, then 1, then 0, so block 0 ends up most recent.
  tier.touch(a, 3);
  CHECK(tier.lru_order() == Hashes{13, 12, 11});
  REQUIRE(tier.store(b, 0, 2) == 2);  // one slot free: evicts 13, the least recently used
  CHECK(tier.lru_order() == Hashes{12, 11, 21, 22});
  CHECK(tier.num_evictions() == 1);
  CHECK(tier.lookup(a, 0, 3) == 2);  // 11 and 12; 13 is gone
  CHECK_FALSE(tier.contains(13));
  CHECK(tier.lookup(b, 0, 2) == 2);
  SECTION("a store larger than the whole tier stores nothing") {
    const Request big = make_request(2, 20, {31, 32, 33, 34, 35});
    CHECK_FALSE(tier.store(big, 0, 5).has_value());
    CHECK(tier.lru_order() == Hashes{12, 11, 21, 22});
    CHECK(tier.num_evictions() == 1);
  }
}

TEST_CASE("a prefix evicted from a small GPU cache is found in the offload tier and loaded",
          "[serving][kv][offload]") {
  // 4 GPU blocks of 4 tokens, a tier of 8. A (9 tokens: blocks h1 h2 + 1 token) fills 3 GPU
  // blocks and stores its 2 full blocks in host memory; B (16 tokens, 4 full blocks) takes all
  // 4 GPU blocks, evicting A's cached blocks; C has A's prefix: the GPU misses, the tier holds
  // both blocks, so 8 of its 9 tokens are loaded (2 blocks host to device) and 1 is computed.
  KvCacheManager kv(kv_tier_config(4, 8));
  Request a = make_request(0, 9, {101, 102});
  Request b = make_request(1, 16, {201, 202, 203, 204});
  Request c = make_request(2, 9, {101, 102});

  REQUIRE(admit(kv, a));
  OffloadTraffic t = kv.take_offload_traffic();
  CHECK(t.blocks_stored == 2);  // stored after compute, before any eviction
  CHECK(t.blocks_loaded == 0);
  kv.free(a);
  // B: 16 tokens, but one must be computed: 12 cached at most; none are. It takes every block.
  REQUIRE(admit(kv, b));
  CHECK(kv.stats().num_evictions == 2);  // A's two hashed GPU blocks
  CHECK(kv.take_offload_traffic().blocks_stored == 4);
  kv.free(b);

  CHECK(kv.cached_prefix_tokens(c) == 8);  // both from the tier
  REQUIRE(admit(kv, c));
  t = kv.take_offload_traffic();
  CHECK(t.blocks_loaded == 2);
  CHECK(t.blocks_stored == 0);  // its loaded blocks are held already; its third is partial
  CHECK(kv.stats().prefix_query_tokens == 9 + 16 + 9);
  CHECK(kv.stats().prefix_hit_tokens == 8);
  CHECK(kv.stats().offload_hit_tokens == 8);
  CHECK(kv.stats().num_blocks_offload_loaded == 2);
  CHECK(kv.stats().num_blocks_offload_stored == 6);
  CHECK(kv.take_offload_traffic().blocks_loaded == 0);  // taken once
  kv.check_invariants();

  SECTION("the loaded blocks serve the next lookup from the GPU") {
    kv.free(c);
    Request d = make_request(3, 9, {101, 102});
    CHECK(kv.cached_prefix_tokens(d) == 8);
    REQUIRE(admit(kv, d));
    CHECK(kv.take_offload_traffic().blocks_loaded == 0);
    CHECK(kv.stats().offload_hit_tokens == 8);  // unchanged: d hit on the GPU
    CHECK(kv.stats().prefix_hit_tokens == 16);
  }
}

TEST_CASE("the tier continues a lookup after the GPU hits, up to its first miss",
          "[serving][kv][offload]") {
  // GPU holds h1 (shared with a running request); the tier holds h1 h2 h3 from an earlier one.
  KvCacheManager kv(kv_tier_config(6, 8));
  Request first = make_request(0, 13, {1, 2, 3});
  REQUIRE(admit(kv, first));  // stores 1 2 3 in the tier
  kv.free(first);
  // Evict h2 and h3 from the GPU but keep h1: a request sharing only h1 stays running.
  Request keep = make_request(1, 5, {1});
  REQUIRE(admit(kv, keep));
  Request filler = make_request(2, 13, {51, 52, 53});  // takes the 4 free blocks
  REQUIRE(admit(kv, filler));
  kv.free(filler);
  (void)kv.take_offload_traffic();
  Request probe = make_request(3, 16, {1, 2, 3, 9});  // h9 nowhere
  // 1 GPU block + 2 tier blocks; the fourth is a miss (and would be capped anyway).
  CHECK(kv.cached_prefix_tokens(probe) == 12);
  REQUIRE(admit(kv, probe));
  CHECK(kv.take_offload_traffic().blocks_loaded == 2);
  CHECK(kv.stats().offload_hit_tokens == 8);
  kv.check_invariants();
}

TEST_CASE("a replayed trace hits its evicted prefix in host memory and pays the PCIe copy",
          "[serving][kv][offload]") {
  // Block size 16, 4 GPU blocks, 1 MiB per block per device, host to device at 20.97152 GB/s
  // (2 MiB in 100 us), device to host at 25 GB/s, steps of 1 ms + 10 us per token. A (t=0,
  // 33 tokens, prefix hash ids 1 2) stores 2 blocks; B (t=1s, 49 tokens, ids 7 8 9) needs all
  // 4 GPU blocks, evicting A's prefix; C (t=2s, A's prefix) loads 2 blocks (2 MiB) from the
  // tier and computes 1 token.
  const std::vector<TraceRecord> trace = {with_prefix(0.0, 33, {1, 2, 3}),
                                          with_prefix(1.0, 49, {7, 8, 9, 10}),
                                          with_prefix(2.0, 33, {1, 2, 3})};
  ServingSetup setup = prefix_replay_setup(4);
  setup.replica.host_to_device = Bandwidth::bytes_per_second(2'097'152e4);
  const LinearTimeModel model = millisecond_steps();

  ServingSetup off = setup;
  KeepAll keep_off;
  const ServingResult r_off = vramsim::serving::testing::run(trace, off, model, &keep_off);
  setup.replica.kv.num_offload_blocks = 8;
  KeepAll keep;
  const ServingResult r = vramsim::serving::testing::run(trace, setup, model, &keep);

  REQUIRE(r.metrics.num_finished == 3);
  CHECK(r.prefix_query_tokens == 33 + 49 + 33);
  CHECK(r.prefix_hit_tokens == 32);
  CHECK(r.offload_hit_tokens == 32);
  CHECK(r.gpu_prefix_hit_rate() == 0.0);
  CHECK(r.offload_prefix_hit_rate() == Approx(32.0 / 115.0));
  CHECK(r.num_blocks_offload_loaded == 2);
  CHECK(r.num_blocks_offload_stored == 2 + 3);  // A's 2 full blocks, B's 3; C's are held
  CHECK(r.num_evictions == 2 + 2);  // B evicts A's 2 GPU blocks, C two of B's
  CHECK(r_off.prefix_hit_tokens == 0);  // without the tier, C recomputes A's prefix

  // H2D: 2 blocks * 1 MiB = 2,097,152 B at 2.097152e10 B/s = 100,000 ns, at the host-to-device
  // rate (the device-to-host one, 25 GB/s, would give 83,886 ns).
  const Duration h2d = Duration::from_nanoseconds(100'000);
  REQUIRE(keep.requests.size() == 3);
  for (const RequestRecord& q : keep.requests) {
    const Duration ttft = q.first_token - q.arrival;
    INFO("request " << q.id);
    if (q.id == 0) CHECK(ttft == Duration::from_nanoseconds(1'330'000));  // 1 ms + 33 * 10 us
    if (q.id == 1) CHECK(ttft == Duration::from_nanoseconds(1'490'000));
    if (q.id == 2) {
      CHECK(q.cached_prefix_tokens == 32);
      CHECK(ttft == Duration::from_nanoseconds(1'010'000) + h2d);  // 1 token + the copy
    }
  }
  for (const RequestRecord& q : keep_off.requests) {
    if (q.id == 2) CHECK(q.first_token - q.arrival == Duration::from_nanoseconds(1'330'000));
  }

  SECTION("the same replay twice gives the same rows") {
    KeepAll again;
    const ServingResult r2 = vramsim::serving::testing::run(trace, setup, model, &again);
    check_identical_request_timings(keep.requests, again.requests);
    CHECK(r2.num_blocks_offload_stored == r.num_blocks_offload_stored);
    CHECK(r2.num_steps == r.num_steps);
  }
}

TEST_CASE("device-to-host stores overlap the step and lengthen it only when slower",
          "[serving][kv][offload]") {
  // One request of 64 tokens (4 full blocks of 16) copied device to host at 1 GB/s: storing
  // its 4 blocks of 1 MiB takes longer than the 1.64 ms of compute, and the step lasts as long
  // as the stores; at 25 GB/s they hide behind the compute. The host-to-device rate (25 GB/s)
  // plays no part: a store goes the other way.
  ServingSetup setup = small_setup(8);
  setup.replica.kv.enable_prefix_caching = true;
  setup.replica.kv.num_offload_blocks = 8;
  setup.replica.device_to_host = Bandwidth::bytes_per_second(1e9);  // 1 MiB = 1,048,576 ns
  const LinearTimeModel model = millisecond_steps();
  KeepAll keep;
  const ServingResult r =
      vramsim::serving::testing::run({record(0.0, 64, 1)}, setup, model, &keep);
  REQUIRE(keep.requests.size() == 1);
  CHECK(r.num_blocks_offload_stored == 4);  // 64 tokens fill 4 blocks
  // 4 MiB at 1 GB/s = 4,194,304 ns > 1 ms + 64 * 10 us = 1,640,000 ns.
  CHECK(keep.requests[0].first_token - keep.requests[0].arrival ==
        Duration::from_nanoseconds(4'194'304));
  setup.replica.device_to_host = Bandwidth::bytes_per_second(25e9);  // 4 MiB: 167,772 ns
  setup.replica.host_to_device = Bandwidth::bytes_per_second(1e9);    // unused here
  KeepAll fast;
  (void)vramsim::serving::testing::run({record(0.0, 64, 1)}, setup, model, &fast);
  CHECK(fast.requests[0].first_token - fast.requests[0].arrival ==
        Duration::from_nanoseconds(1'640'000));
}
