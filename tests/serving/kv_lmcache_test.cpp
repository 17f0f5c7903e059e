// LMCache's CPU tier (KvOffloadBackend::kLmcache, kv_cache_manager.hpp): chunks as the unit of
// storage and hits, lookups from token 0, whole chunks of the prompt stored, its LRU order, and
// the blocking copies the replica charges (replica.hpp, OffloadCost).
#include "sim/serving/kv_cache_manager.hpp"

#include "tests/serving/kv_tier_fixture.hpp"

#include <vector>

#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using vramsim::serving::testing::admit;
using vramsim::serving::testing::Hashes;
using vramsim::serving::testing::KeepAll;
using vramsim::serving::testing::make_request;
using vramsim::serving::testing::millisecond_steps;
using vramsim::serving::testing::prefix_replay_setup;
using vramsim::serving::testing::with_prefix;

namespace {

/// Prefix caching on blocks of 16 tokens, `gpu_blocks` on the GPU and an LMCache tier of
/// `chunks` chunks of 256 tokens (16 blocks).
KvCacheConfig lmcache_config(std::int64_t gpu_blocks, std::int64_t chunks) {
  KvCacheConfig c;
  c.num_blocks = gpu_blocks;
  c.block_size = 16;
  c.enable_prefix_caching = true;
  c.bytes_per_block = Bytes(1000);
  c.offload_backend = KvOffloadBackend::kLmcache;
  c.offload_chunk_blocks = 16;
  c.num_offload_blocks = chunks * 16;
  return c;
}

/// Hashes first, first + 1, ..., first + n - 1.
Hashes run_of(BlockHash first, int n) {
  Hashes h;
  for (int i = 0; i < n; ++i) h.push_back(first + static_cast<BlockHash>(i));
  return h;
}

}  // namespace

TEST_CASE("a 1,000-token prompt whose first 700 tokens LMCache holds hits 512 of them",
          "[serving][kv][offload][lmcache]") {
  // Chunks of 256 tokens; 63 GPU blocks of 16, an LMCache tier of 8 chunks.
  //   A (700 tokens, hashes 1..43): LMCache stores its whole chunks only, 700 // 256 = 2
  //     (tokens 0-511, keyed by blocks 15 and 31: hashes 16, 32); 188 tokens are not stored.
  //   D (1,000 unique tokens, hashes 101..162) takes all 63 GPU blocks, evicting A's; stores
  //     3 chunks (keys 116, 132, 148).
  //   B (1,000 tokens sharing A's first 688, then hashes 244..262): the GPU holds nothing of
  //     it; LMCache's lookup from token 0 finds chunks 0 and 1 and misses chunk 2 (B's own
  //     block 47): 512 tokens hit, all from the CPU tier, though 688 are shared with A.
  KvCacheManager kv(lmcache_config(63, 8));
  Request a = make_request(0, 700, run_of(1, 43));
  Request d = make_request(1, 1000, run_of(101, 62));
  Hashes b_hashes = run_of(1, 43);
  for (BlockHash h : run_of(244, 19)) b_hashes.push_back(h);
  Request b = make_request(2, 1000, b_hashes);

  REQUIRE(admit(kv, a));
  CHECK(kv.take_offload_traffic().blocks_stored == 32);  // 2 chunks of 16 blocks
  kv.free(a);
  REQUIRE(admit(kv, d));
  CHECK(kv.take_offload_traffic().blocks_stored == 48);
  kv.free(d);
  CHECK(kv.offload_tier()->lru_order() == Hashes{16, 32, 116, 132, 148});

  CHECK(kv.cached_prefix_tokens(b) == 512);
  REQUIRE(admit(kv, b));
  const OffloadTraffic t = kv.take_offload_traffic();
  CHECK(t.blocks_loaded == 32);  // 2 chunks copied host to device
  CHECK(t.blocks_stored == 16);  // B's chunk 2 (tokens 512-767); 768-999 is not a whole chunk
  CHECK(kv.stats().offload_hit_tokens == 512);
  CHECK(kv.stats().prefix_hit_tokens == 512);
  // The hit chunks are touched last first (chunk 0 the most recent), then B's new chunk joins
  // the most-recently-used end; the held ones were not stored again.
  CHECK(kv.offload_tier()->lru_order() == Hashes{116, 132, 148, 32, 16, 248});
  kv.check_invariants();
}

TEST_CASE("LMCache loads the chunk the GPU hits end in again, and only beyond the GPU's hits",
          "[serving][kv][offload][lmcache]") {
  // A (600 tokens, hashes 1..37) stores 2 chunks. K (40 tokens, hashes 1 2) keeps A's first 2
  // GPU blocks referenced while F (976 unique tokens: all 61 free blocks) evicts the rest.
  KvCacheManager kv(lmcache_config(64, 8));
  Request a = make_request(0, 600, run_of(1, 37));
  REQUIRE(admit(kv, a));
  kv.free(a);
  Request keep = make_request(1, 40, run_of(1, 2));
  REQUIRE(admit(kv, keep));
  Request f = make_request(2, 976, run_of(501, 61));
  REQUIRE(admit(kv, f));
  kv.free(f);
  (void)kv.take_offload_traffic();
  // P shares A's 37 blocks: GPU hits 2 blocks (32 tokens), LMCache 2 chunks (512 tokens). The
  // retrieve masks only whole chunks below the GPU hits (none here), so chunk 0 is copied in
  // full: 32 blocks, though the hit beyond the GPU is 30 blocks.
  Request p = make_request(3, 900, run_of(1, 37));
  CHECK(kv.cached_prefix_tokens(p) == 512);
  REQUIRE(admit(kv, p));
  CHECK(kv.take_offload_traffic().blocks_loaded == 32);
  CHECK(kv.stats().offload_hit_tokens == 512 - 32);

  SECTION("GPU hits beyond LMCache's load nothing") {
    // Q (550 tokens, A's first 34 blocks) now hits 34 blocks on the GPU (P holds them), more
    // than LMCache's 2 chunks.
    Request q = make_request(4, 550, run_of(1, 34));
    CHECK(kv.cached_prefix_tokens(q) == 34 * 16);
    REQUIRE(admit(kv, q));
    CHECK(kv.take_offload_traffic().blocks_loaded == 0);
  }
}

TEST_CASE("LMCache never stores decode tokens, and a full-prompt hit computes its last block",
          "[serving][kv][offload][lmcache]") {
  KvCacheManager kv(lmcache_config(40, 8));
  // 512 tokens: 2 whole chunks, both stored; its 100 decode tokens never add a chunk.
  Request a = make_request(0, 512, run_of(1, 32));
  a.output_tokens = 100;
  REQUIRE(admit(kv, a));
  CHECK(kv.take_offload_traffic().blocks_stored == 32);
  for (int i = 0; i < 100; ++i) {
    REQUIRE(kv.allocate_slots(a, 1));
    ++a.num_computed_tokens;
    ++a.num_generated;
  }
  CHECK(kv.take_offload_traffic().blocks_stored == 0);
  kv.free(a);
  // The same 512 tokens again, after the GPU dropped them: LMCache hits all 512, one token
  // must be computed, and at block granularity the last block is (31 blocks = 496 tokens).
  Request filler = make_request(1, 640, run_of(901, 40));
  REQUIRE(admit(kv, filler));
  kv.free(filler);
  Request again = make_request(2, 512, run_of(1, 32));
  CHECK(kv.cached_prefix_tokens(again) == 496);
}

TEST_CASE("LMCache's stores block the step where native ones overlap it",
          "[serving][kv][offload][lmcache]") {
  // One request of 64 tokens, chunks of 32 tokens (2 blocks of 16): its 2 chunks (4 blocks of
  // 1 MiB) are stored at 1 GB/s, 4,194,304 ns, after the 1 ms + 64 * 10 us = 1,640,000 ns of
  // compute (native: max of the two, kv_offload_test.cpp).
  ServingSetup setup = vramsim::serving::testing::small_setup(8);
  setup.replica.kv.enable_prefix_caching = true;
  setup.replica.kv.num_offload_blocks = 8;
  setup.replica.kv.offload_backend = KvOffloadBackend::kLmcache;
  setup.replica.kv.offload_chunk_blocks = 2;
  setup.replica.device_to_host = Bandwidth::bytes_per_second(1e9);
  const auto model = millisecond_steps();
  KeepAll keep;
  const ServingResult r = vramsim::serving::testing::run(
      {vramsim::serving::testing::record(0.0, 64, 1)}, setup, model, &keep);
  REQUIRE(keep.requests.size() == 1);
  CHECK(r.num_blocks_offload_stored == 4);
  CHECK(keep.requests[0].first_token - keep.requests[0].arrival ==
        Duration::from_nanoseconds(1'640'000 + 4'194'304));
}

TEST_CASE("a replayed trace hits its evicted prefix in LMCache's chunks and waits for the copy",
          "[serving][kv][offload][lmcache]") {
  // kv_offload_test.cpp's replay with LMCache chunks of 32 tokens (2 blocks): 4 GPU blocks of
  // 16 tokens, 1 MiB per block, host to device at 2.097152e10 B/s (2 MiB in 100 us), device to
  // host at 25 GB/s (2 MiB in 83,886 ns), steps of 1 ms + 10 us per token.
  //   A (t=0, 33 tokens, ids 1 2 3) stores its one whole chunk (tokens 0-31) after its step.
  //   B (t=1s, 49 tokens, ids 7..10) evicts A's GPU blocks; stores its one whole chunk.
  //   C (t=2s, A's prefix) hits chunk 0 in LMCache: 32 tokens loaded before its step, 1
  //     computed; its chunk is held, so nothing is stored.
  const std::vector<TraceRecord> trace = {with_prefix(0.0, 33, {1, 2, 3}),
                                          with_prefix(1.0, 49, {7, 8, 9, 10}),
                                          with_prefix(2.0, 33, {1, 2, 3})};
  ServingSetup setup = prefix_replay_setup(4);
  setup.replica.host_to_device = Bandwidth::bytes_per_second(2'097'152e4);
  setup.replica.kv.num_offload_blocks = 8;
  setup.replica.kv.offload_backend = KvOffloadBackend::kLmcache;
  setup.replica.kv.offload_chunk_blocks = 2;
  const auto model = millisecond_steps();
  KeepAll keep;
  const ServingResult r = vramsim::serving::testing::run(trace, setup, model, &keep);
  REQUIRE(r.metrics.num_finished == 3);
  CHECK(r.offload_hit_tokens == 32);
  CHECK(r.num_blocks_offload_loaded == 2);
  CHECK(r.num_blocks_offload_stored == 2 + 2);
  const Duration store = Duration::from_nanoseconds(83'886);
  for (const RequestRecord& q : keep.requests) {
    const Duration ttft = q.first_token - q.arrival;
    INFO("request " << q.id);
    if (q.id == 0) CHECK(ttft == Duration::from_nanoseconds(1'330'000) + store);
    if (q.id == 1) CHECK(ttft == Duration::from_nanoseconds(1'490'000) + store);
    if (q.id == 2) CHECK(ttft == Duration::from_nanoseconds(1'010'000 + 100'000));
  }
}

TEST_CASE("with LMCache's local disk a chunk the CPU tier dropped is read back from disk",
          "[serving][kv][offload][lmcache][disk]") {
  // Blocks of 4 tokens, chunks of 2 blocks (8 tokens); 3 GPU blocks, a CPU tier of 1 chunk and
  // a disk of 4 chunks, written through.
  //   A (9 tokens, hashes 101 102) stores its one whole chunk (key 102) in both tiers.
  //   B (9 tokens, 201 202) evicts A's GPU blocks; its chunk (202) pushes 102 out of the CPU
  //     tier; the disk keeps both.
  //   C (A's prefix): the GPU and the CPU tier miss, the disk holds chunk 0: 8 tokens hit on
  //     disk, read into host memory (put back into the CPU tier) and copied to the GPU.
  KvCacheConfig c;
  c.num_blocks = 3;
  c.block_size = 4;
  c.enable_prefix_caching = true;
  c.bytes_per_block = Bytes(1000);
  c.offload_backend = KvOffloadBackend::kLmcache;
  c.offload_chunk_blocks = 2;
  c.num_offload_blocks = 2;
  c.num_disk_blocks = 8;
  KvCacheManager kv(c);
  Request a = make_request(0, 9, {101, 102});
  Request b = make_request(1, 9, {201, 202});
  Request cc = make_request(2, 9, {101, 102});
  REQUIRE(admit(kv, a));
  OffloadTraffic t = kv.take_offload_traffic();
  CHECK(t.blocks_stored == 2);
  CHECK(t.blocks_disk_written == 2);
  kv.free(a);
  REQUIRE(admit(kv, b));
  (void)kv.take_offload_traffic();
  kv.free(b);
  CHECK(kv.offload_tier()->lru_order() == Hashes{202});
  CHECK(kv.disk_tier()->lru_order() == Hashes{102, 202});

  CHECK(kv.cached_prefix_tokens(cc) == 8);
  REQUIRE(admit(kv, cc));
  t = kv.take_offload_traffic();
  CHECK(t.blocks_disk_read == 2);
  CHECK(t.blocks_loaded == 2);  // disk -> host -> GPU
  CHECK(t.blocks_stored == 0);
  CHECK(kv.stats().disk_hit_tokens == 8);
  CHECK(kv.stats().offload_hit_tokens == 0);
  CHECK(kv.offload_tier()->lru_order() == Hashes{102});
  CHECK(kv.disk_tier()->lru_order() == Hashes{202, 102});
  kv.check_invariants();
}
