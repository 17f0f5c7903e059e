#include "sim/serving/kv_cache_manager.hpp"

#include "sim/core/rng.hpp"
#include "sim/serving/kv_bench.hpp"

#include <algorithm>
#include <vector>

#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::serving;

namespace {

using Ids = std::vector<BlockId>;

Request make_request(RequestId id, std::int64_t prompt_tokens, std::int64_t output_tokens,
                     std::vector<BlockHash> prefix_hashes = {}) {
  Request r;
  r.id = id;
  r.uid = static_cast<std::uint64_t>(id) + 1000;
  r.prompt_tokens = prompt_tokens;
  r.output_tokens = output_tokens;
  r.prefix_hashes = std::move(prefix_hashes);
  return r;
}

KvCacheConfig make_config(std::int64_t num_blocks, std::int64_t block_size, bool prefix = false,
                          std::int64_t host_blocks = 0) {
  KvCacheConfig c;
  c.num_blocks = num_blocks;
  c.block_size = block_size;
  c.enable_prefix_caching = prefix;
  c.bytes_per_block = Bytes(1000);
  c.num_host_blocks = host_blocks;
  return c;
}

Ids iota_ids(BlockId first, BlockId last) {  // first..last inclusive
  Ids ids;
  for (BlockId b = first; b <= last; ++b) ids.push_back(b);
  return ids;
}

Ids concat(Ids a, const Ids& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// Admits `r` vLLM-style: prefix lookup, then allocation of the rest of its tokens.
bool admit(KvCacheManager& kv, Request& r) {
  const std::int64_t hit = kv.cached_prefix_tokens(r);
  if (!kv.allocate_slots(r, r.num_tokens() - hit, hit)) return false;
  r.num_computed_tokens = r.num_tokens();
  return true;
}

}  // namespace

TEST_CASE("a fresh pool hands out blocks in id order from the queue head", "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4));
  CHECK(kv.free_queue() == iota_ids(0, 11));
  const Request a = make_request(1, 10, 5);
  const Request b = make_request(2, 5, 5);
  REQUIRE(kv.allocate_slots(a, 10));
  REQUIRE(kv.allocate_slots(b, 5));
  CHECK(kv.block_table(1) == Ids{0, 1, 2});
  CHECK(kv.block_table(2) == Ids{3, 4});
  CHECK(kv.free_queue() == iota_ids(5, 11));
  CHECK(kv.num_used_blocks() == 5);
  CHECK(kv.num_free_blocks() == 7);
  CHECK(kv.usage() == Approx(5.0 / 12.0));
  CHECK(kv.ref_count(0) == 1);
  CHECK(kv.ref_count(5) == 0);
  kv.check_invariants();
}

TEST_CASE("a freed request's blocks join the queue tail, last block first", "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4, /*prefix=*/true));
  const Request a = make_request(1, 10, 5);
  const Request b = make_request(2, 5, 5);
  REQUIRE(kv.allocate_slots(a, 10));
  REQUIRE(kv.allocate_slots(b, 5));
  kv.free(a);
  CHECK(kv.free_queue() == concat(iota_ids(5, 11), Ids{2, 1, 0}));
  kv.free(b);
  CHECK(kv.free_queue() == concat(iota_ids(5, 11), Ids{2, 1, 0, 4, 3}));
  CHECK(kv.num_blocks_of(1) == 0);
  CHECK(kv.num_used_blocks() == 0);

  SECTION("the next allocation takes never-used blocks, then the last-freed tail block") {
    const Request c = make_request(3, 32, 1);
    REQUIRE(kv.allocate_slots(c, 32));
    CHECK(kv.block_table(3) == concat(iota_ids(5, 11), Ids{2}));
    CHECK(kv.free_queue() == Ids{1, 0, 4, 3});
  }
  kv.check_invariants();
}

TEST_CASE("without prefix caching freed blocks are reused first, the count alone matters",
          "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4));
  const Request a = make_request(1, 10, 5);
  REQUIRE(kv.allocate_slots(a, 10));  // 0, 1, 2
  kv.free(a);
  CHECK(kv.free_queue() == concat(Ids{2, 1, 0}, iota_ids(3, 11)));
  CHECK(kv.num_free_blocks() == 12);
  const Request b = make_request(2, 5, 5);
  REQUIRE(kv.allocate_slots(b, 5));
  CHECK(kv.block_table(2) == Ids{2, 1});
  kv.check_invariants();
}

TEST_CASE("a decode step takes a new block only when it crosses a block boundary",
          "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4));
  Request a = make_request(1, 8, 5);
  REQUIRE(kv.allocate_slots(a, 8));
  a.num_computed_tokens = 8;
  a.num_generated = 1;  // 9 tokens, the 9th not yet computed
  REQUIRE(kv.allocate_slots(a, 1));
  CHECK(kv.block_table(1) == Ids{0, 1, 2});
  a.num_computed_tokens = 9;
  a.num_generated = 2;
  REQUIRE(kv.allocate_slots(a, 1));
  CHECK(kv.block_table(1) == Ids{0, 1, 2});
  CHECK(kv.num_used_blocks() == 3);
}

TEST_CASE("a full cache refuses an allocation and changes nothing", "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4));
  Request a = make_request(1, 40, 5);
  REQUIRE(kv.allocate_slots(a, 40));  // blocks 0..9
  const Request b = make_request(2, 9, 5);
  CHECK_FALSE(kv.allocate_slots(b, 9));  // needs 3 of 2
  CHECK(kv.num_blocks_of(2) == 0);
  CHECK(kv.free_queue() == Ids{10, 11});
  CHECK(kv.stats().peak_used_blocks == 10);

  SECTION("a running request's growth is refused the same way") {
    a.num_computed_tokens = 40;
    CHECK_FALSE(kv.allocate_slots(a, 9));
    CHECK(kv.block_table(1) == iota_ids(0, 9));
    CHECK(kv.free_queue() == Ids{10, 11});
  }
  SECTION("a request that fits is still admitted") {
    const Request c = make_request(3, 8, 5);
    REQUIRE(kv.allocate_slots(c, 8));
    CHECK(kv.block_table(3) == Ids{10, 11});
    CHECK(kv.num_free_blocks() == 0);
  }
  kv.check_invariants();
}

TEST_CASE("full blocks are registered as the scheduled tokens fill them", "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4, /*prefix=*/true));
  Request a = make_request(1, 10, 5, {11, 12});
  REQUIRE(kv.allocate_slots(a, 6));  // chunk of 6: block 0 full, block 1 half
  CHECK(kv.is_cached(0));
  CHECK_FALSE(kv.is_cached(1));
  a.num_computed_tokens = 6;
  REQUIRE(kv.allocate_slots(a, 4));  // 10 tokens: blocks 0, 1 full
  CHECK(kv.is_cached(1));
  CHECK_FALSE(kv.is_cached(2));
  CHECK(kv.num_cached_blocks() == 2);

  SECTION("a block whose hash is cached elsewhere is registered too, as vLLM does") {
    const Request b = make_request(2, 8, 5, {11, 12});
    REQUIRE(kv.allocate_slots(b, 8));  // no lookup: computes its own copy
    CHECK(kv.block_table(2) == Ids{3, 4});
    CHECK(kv.is_cached(3));
    CHECK(kv.is_cached(4));
    CHECK(kv.num_cached_blocks() == 4);
    // A lookup finds the older copies (vLLM's get_one_block: the first inserted).
    const Request c = make_request(3, 9, 5, {11, 12});
    CHECK(kv.cached_prefix_tokens(c) == 8);
    REQUIRE(kv.allocate_slots(c, 1, 8));
    CHECK(kv.block_table(3) == Ids{0, 1, 5});
  }
  kv.check_invariants();
}

// vLLM does not de-duplicate cached blocks (vllm/v1/core/block_pool.py, BlockHashToBlockMap,
// NOTE #1), so content recomputed into a second block stays reachable after the first copy is
// evicted. Here the copy comes from the last-token rule: b's prompt is fully cached, so its last
// block is recomputed.
TEST_CASE("a recomputed copy of a cached block serves hits after the original is evicted",
          "[serving][kv]") {
  KvCacheManager kv(make_config(5, 4, /*prefix=*/true));
  Request a = make_request(1, 8, 1, {11, 12});
  REQUIRE(admit(kv, a));  // blocks 0 (11), 1 (12)
  kv.free(a);             // queue 2 3 4 1 0
  Request b = make_request(2, 8, 1, {11, 12});
  CHECK(kv.cached_prefix_tokens(b) == 4);  // 8 tokens cached, but the last one is recomputed
  REQUIRE(kv.allocate_slots(b, 4, 4));      // block 0 shared, block 2 a second copy of 12
  CHECK(kv.block_table(2) == Ids{0, 2});
  CHECK(kv.is_cached(2));
  kv.free(b);  // queue 3 4 1 2 0
  CHECK(kv.free_queue() == Ids{3, 4, 1, 2, 0});
  // Three new blocks evict a's copy of 12 (block 1) but not b's (block 2).
  Request d = make_request(3, 12, 1);
  REQUIRE(kv.allocate_slots(d, 12));
  CHECK(kv.block_table(3) == Ids{3, 4, 1});
  CHECK(kv.stats().num_evictions == 1);
  kv.free(d);  // queue 2 0 1 4 3
  Request e = make_request(4, 9, 1, {11, 12});
  CHECK(kv.cached_prefix_tokens(e) == 8);  // with de-duplication only 4: 12 would be lost
  REQUIRE(kv.allocate_slots(e, 1, 8));
  CHECK(kv.block_table(4) == Ids{0, 2, 1});
  CHECK(kv.stats().num_evictions == 2);  // block 1 again, now holding d's content
  kv.check_invariants();
}

TEST_CASE("a second request with the same leading hashes shares the cached blocks",
          "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4, /*prefix=*/true));
  Request a = make_request(1, 10, 5, {11, 12});
  REQUIRE(admit(kv, a));  // blocks 0, 1 (cached), 2 (partial)
  Request b = make_request(2, 12, 5, {11, 12});
  CHECK(kv.cached_prefix_tokens(b) == 8);
  REQUIRE(kv.allocate_slots(b, 4, 8));
  CHECK(kv.block_table(2) == Ids{0, 1, 3});
  CHECK(kv.ref_count(0) == 2);
  CHECK(kv.ref_count(1) == 2);
  CHECK(kv.num_used_blocks() == 4);
  CHECK(kv.is_cached(3));  // b's third block is full with b's own content
  CHECK(kv.num_cached_blocks() == 3);

  SECTION("freeing one sharer keeps the shared blocks out of the queue") {
    kv.free(a);
    CHECK(kv.free_queue() == concat(iota_ids(4, 11), Ids{2}));
    CHECK(kv.ref_count(0) == 1);
  }
  SECTION("a hit never covers the last token: two full cached blocks give one") {
    const Request c = make_request(3, 8, 5, {11, 12});
    CHECK(kv.cached_prefix_tokens(c) == 4);
    const Request d = make_request(4, 9, 5, {11, 12});
    CHECK(kv.cached_prefix_tokens(d) == 8);
  }
  SECTION("a hit stops at the first uncached block") {
    const Request e = make_request(5, 16, 5, {11, 99, 12});
    CHECK(kv.cached_prefix_tokens(e) == 4);
  }
  kv.check_invariants();
}

TEST_CASE("prefix caching off finds nothing and caches nothing", "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4));
  Request a = make_request(1, 10, 5, {11, 12});
  REQUIRE(admit(kv, a));
  CHECK(kv.num_cached_blocks() == 0);
  kv.free(a);
  const Request b = make_request(2, 10, 5, {11, 12});
  CHECK(kv.cached_prefix_tokens(b) == 0);
}

TEST_CASE("cached free blocks are evicted least recently freed first", "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4, /*prefix=*/true));
  Request a = make_request(1, 8, 5, {21, 22});
  Request b = make_request(2, 8, 5, {31, 32});
  REQUIRE(admit(kv, a));  // 0, 1
  REQUIRE(admit(kv, b));  // 2, 3
  kv.free(a);
  kv.free(b);
  CHECK(kv.free_queue() == concat(iota_ids(4, 11), Ids{1, 0, 3, 2}));
  CHECK(kv.num_cached_blocks() == 4);
  CHECK(kv.stats().num_evictions == 0);

  const Request probe_a = make_request(10, 12, 5, {21, 22});
  const Request probe_b = make_request(11, 12, 5, {31, 32});
  CHECK(kv.cached_prefix_tokens(probe_a) == 8);

  // 9 blocks: the 8 never-cached ones, then block 1 (a's second block: hash 22 goes first).
  const Request c = make_request(3, 36, 5);
  REQUIRE(kv.allocate_slots(c, 36));
  CHECK(kv.block_table(3) == concat(iota_ids(4, 11), Ids{1}));
  CHECK(kv.stats().num_evictions == 1);
  CHECK(kv.cached_prefix_tokens(probe_a) == 4);  // 21 still cached, 22 gone
  CHECK(kv.cached_prefix_tokens(probe_b) == 8);

  const Request d = make_request(4, 8, 5);
  REQUIRE(kv.allocate_slots(d, 8));  // blocks 0 then 3
  CHECK(kv.block_table(4) == Ids{0, 3});
  CHECK(kv.stats().num_evictions == 3);
  CHECK(kv.cached_prefix_tokens(probe_a) == 0);
  CHECK(kv.cached_prefix_tokens(probe_b) == 4);  // 32 gone, 31 (block 2) still cached
  kv.check_invariants();
}

TEST_CASE("taking free cached blocks counts against the free queue", "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4, /*prefix=*/true));
  Request a = make_request(1, 8, 5, {21, 22});
  REQUIRE(admit(kv, a));  // 0, 1
  kv.free(a);             // queue 2..11, 1, 0
  const Request x = make_request(2, 36, 5);
  REQUIRE(kv.allocate_slots(x, 36));  // 2..10
  CHECK(kv.free_queue() == Ids{11, 1, 0});

  Request d = make_request(3, 13, 5, {21, 22});
  REQUIRE(kv.cached_prefix_tokens(d) == 8);
  CHECK_FALSE(kv.allocate_slots(d, 5, 8));  // 2 cached + 2 new > 3 free
  CHECK(kv.free_queue() == Ids{11, 1, 0});
  CHECK(kv.ref_count(0) == 0);
  CHECK(kv.num_blocks_of(3) == 0);

  Request e = make_request(4, 12, 5, {21, 22});
  REQUIRE(kv.allocate_slots(e, 4, 8));  // 2 cached + 1 new == 3 free
  CHECK(kv.block_table(4) == Ids{0, 1, 11});
  CHECK(kv.free_queue().empty());
  CHECK(kv.stats().num_evictions == 0);
  kv.check_invariants();
}

TEST_CASE("a request preempted by recompute finds its own blocks again", "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4, /*prefix=*/true));
  Request a = make_request(1, 10, 5);
  REQUIRE(admit(kv, a));
  a.num_generated = 3;  // 13 tokens, 10 computed
  REQUIRE(kv.allocate_slots(a, 3));
  CHECK(kv.num_cached_blocks() == 3);  // tokens 0..11 fill blocks 0, 1, 2
  kv.free(a);
  a.num_computed_tokens = 0;
  CHECK(kv.cached_prefix_tokens(a) == 12);
  REQUIRE(kv.allocate_slots(a, 1, 12));
  CHECK(kv.block_table(1) == Ids{0, 1, 2, 4});
}

TEST_CASE("a request's own blocks are found in their oldest copy still cached", "[serving][kv]") {
  // Blocks after the shared prefix hash uniquely to the request: only it finds them,
  // readmitted after a preemption, and as with shared hashes the oldest copy answers.
  KvCacheManager kv(make_config(8, 4, /*prefix=*/true, /*host_blocks=*/8));
  Request a = make_request(1, 9, 4);
  REQUIRE(admit(kv, a));  // blocks 0, 1 (full: cached) and 2
  REQUIRE(kv.swap_out(a).has_value());  // the GPU copies stay cached: queue 3..7 2 1 0
  REQUIRE(kv.swap_in(a).has_value());   // fresh 3 4 5; 3 and 4 cached again: two copies each
  CHECK(kv.block_table(1) == Ids{3, 4, 5});
  CHECK(kv.num_cached_blocks() == 4);
  kv.free(a);  // preempted by recompute: queue 6 7 2 1 0 5 4 3
  a.num_computed_tokens = 0;
  CHECK(kv.cached_prefix_tokens(a) == 8);
  REQUIRE(kv.allocate_slots(a, 1, 8));
  CHECK(kv.block_table(1) == Ids{0, 1, 6});  // the first copies, then fresh block 6
  kv.check_invariants();
  kv.free(a);  // queue 7 2 5 4 3 6 1 0
  a.num_computed_tokens = 0;
  // Another request's 24 tokens take 7, 2, 5, 4, 3, 6: a's younger copies are overwritten.
  Request d = make_request(2, 24, 1);
  REQUIRE(kv.allocate_slots(d, 24));
  CHECK(kv.block_table(2) == Ids{7, 2, 5, 4, 3, 6});
  CHECK(kv.stats().num_evictions == 2);
  d.state = RequestState::kFinished;
  kv.free(d);  // queue 1 0 6 3 4 5 2 7
  CHECK(kv.cached_prefix_tokens(a) == 8);  // the older copies are still there
  // Taking block 1 evicts a's copy of its block 1; its block 0 alone is left.
  Request e = make_request(3, 4, 1);
  REQUIRE(kv.allocate_slots(e, 4));
  CHECK(kv.block_table(3) == Ids{1});
  CHECK(kv.cached_prefix_tokens(a) == 4);
  kv.check_invariants();
}

TEST_CASE("swap out moves blocks to the host pool and swap in brings them back",
          "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4, /*prefix=*/true, /*host_blocks=*/5));
  Request a = make_request(1, 12, 5);
  Request b = make_request(2, 12, 5);
  REQUIRE(admit(kv, a));  // 0, 1, 2
  REQUIRE(admit(kv, b));  // 3, 4, 5
  const auto out = kv.swap_out(a);
  REQUIRE(out.has_value());
  CHECK(*out == Bytes(3000));
  CHECK(kv.num_blocks_of(1) == 0);
  CHECK(kv.num_host_blocks_used() == 3);
  CHECK(kv.free_queue() == concat(iota_ids(6, 11), Ids{2, 1, 0}));
  CHECK(kv.stats().num_blocks_swapped_out == 3);

  SECTION("a full host pool refuses and changes nothing") {
    CHECK_FALSE(kv.swap_out(b).has_value());
    CHECK(kv.block_table(2) == Ids{3, 4, 5});
    CHECK(kv.num_host_blocks_used() == 3);
  }
  SECTION("swap in takes fresh blocks from the head and frees the host blocks") {
    const auto in = kv.swap_in(a);
    REQUIRE(in.has_value());
    CHECK(*in == Bytes(3000));
    CHECK(kv.block_table(1) == Ids{6, 7, 8});
    CHECK(kv.num_host_blocks_used() == 0);
    CHECK(kv.stats().num_blocks_swapped_in == 3);
  }
  SECTION("swap in refuses while GPU blocks are short") {
    const Request c = make_request(3, 28, 5);
    REQUIRE(kv.allocate_slots(c, 28));  // 6..11, 2: blocks 1, 0 are left
    CHECK_FALSE(kv.swap_in(a).has_value());
    CHECK(kv.num_host_blocks_used() == 3);
    CHECK(kv.free_queue() == Ids{1, 0});
  }
  kv.check_invariants();
}

TEST_CASE("without host blocks swapping is unavailable", "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4));
  Request a = make_request(1, 12, 5);
  REQUIRE(admit(kv, a));
  CHECK_FALSE(kv.swap_out(a).has_value());
  CHECK(kv.num_blocks_of(1) == 3);
}

TEST_CASE("peak used blocks remembers the high-water mark", "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4));
  Request a = make_request(1, 20, 5);
  REQUIRE(admit(kv, a));
  kv.free(a);
  Request b = make_request(2, 12, 5);
  REQUIRE(admit(kv, b));
  CHECK(kv.num_used_blocks() == 3);
  CHECK(kv.stats().peak_used_blocks == 5);
}

TEST_CASE("prefix lookups add up in the hit-rate stats", "[serving][kv]") {
  KvCacheManager kv(make_config(12, 4, true));
  kv.record_prefix_lookup(100, 40);
  kv.record_prefix_lookup(50, 0);
  CHECK(kv.stats().prefix_query_tokens == 150);
  CHECK(kv.stats().prefix_hit_tokens == 40);
}

TEST_CASE("free plus used blocks equal the total under random operations", "[serving][kv]") {
  const bool prefix = GENERATE(false, true);
  KvCacheManager kv(make_config(32, 4, prefix, /*host_blocks=*/16));
  RngStream rng(prefix ? 7 : 8);
  std::vector<Request> running, swapped;
  RequestId next_id = 0;
  const std::vector<std::vector<BlockHash>> prefixes = {{}, {1, 2, 3}, {1, 2, 4}, {5, 6}};
  for (int op = 0; op < 600; ++op) {
    const std::int64_t kind = rng.uniform_int(0, 9);
    if (kind <= 2) {  // admit a new request, prefill possibly in two chunks
      Request r = make_request(next_id++, rng.uniform_int(1, 30), rng.uniform_int(1, 20),
                               prefixes[static_cast<std::size_t>(rng.uniform_int(0, 3))]);
      const std::int64_t hit = kv.cached_prefix_tokens(r);
      CHECK(hit <= r.num_tokens() - 1);
      const std::int64_t chunk = rng.uniform_int(1, r.num_tokens() - hit);
      const std::int64_t free_before = kv.num_free_blocks();
      if (kv.allocate_slots(r, chunk, hit)) {
        r.num_computed_tokens = hit + chunk;
        running.push_back(r);
      } else {
        CHECK(kv.num_free_blocks() == free_before);
        CHECK(kv.num_blocks_of(r.id) == 0);
      }
    } else if (kind <= 6 && !running.empty()) {  // a step of a running request
      const auto i = static_cast<std::size_t>(
          rng.uniform_int(0, static_cast<std::int64_t>(running.size()) - 1));
      Request& r = running[i];
      const std::int64_t todo = r.num_tokens() - r.num_computed_tokens;
      if (todo == 0) {
        ++r.num_generated;
      } else if (kv.allocate_slots(r, todo)) {
        r.num_computed_tokens += todo;
        CHECK(kv.num_blocks_of(r.id) * 4 >= r.num_computed_tokens);
      }
    } else if (kind == 7 && !running.empty()) {  // finish or recompute-preempt
      const auto i = static_cast<std::size_t>(
          rng.uniform_int(0, static_cast<std::int64_t>(running.size()) - 1));
      kv.free(running[i]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (kind == 8 && !running.empty()) {  // swap out
      const auto i = static_cast<std::size_t>(
          rng.uniform_int(0, static_cast<std::int64_t>(running.size()) - 1));
      if (kv.swap_out(running[i])) {
        swapped.push_back(running[i]);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      }
    } else if (kind == 9 && !swapped.empty()) {  // swap in the oldest
      if (kv.swap_in(swapped.front())) {
        running.push_back(swapped.front());
        swapped.erase(swapped.begin());
      }
    }
    kv.check_invariants();
    REQUIRE(kv.num_free_blocks() + kv.num_used_blocks() == 32);
    REQUIRE(kv.stats().peak_used_blocks >= kv.num_used_blocks());
    if (!prefix) REQUIRE(kv.num_cached_blocks() == 0);
  }
  for (const Request& r : running) kv.free(r);
  CHECK(kv.num_used_blocks() == 0);
  CHECK((kv.num_host_blocks_used() == 0) == swapped.empty());
  kv.check_invariants();
}

TEST_CASE("the kv benchmark replays every request to completion", "[serving][kv]") {
  KvBenchOptions o;
  o.num_requests = 300;
  o.max_running = 16;
  o.prompt_tokens = 100;
  o.output_tokens = 20;
  o.enable_prefix_caching = GENERATE(false, true);
  o.shared_prefix_blocks = 3;
  const KvBenchResult r = run_kv_bench(o);
  CHECK(r.num_requests_finished == 300);
  CHECK(r.num_ops >= 300 * 2);  // at least an allocation and a free each
  CHECK(r.stats.peak_used_blocks > 0);
  if (o.enable_prefix_caching) CHECK(r.stats.prefix_hit_tokens > 0);
}

TEST_CASE("a manager can be copied and moved, as replicas kept in a vector need",
          "[serving][kv]") {
  std::vector<KvCacheManager> replicas;
  replicas.emplace_back(make_config(12, 4, true));
  Request a = make_request(1, 10, 5, {11, 12});
  REQUIRE(admit(replicas[0], a));
  replicas.push_back(replicas[0]);  // a copy; may also move the first on reallocation
  replicas[1].free(a);
  CHECK(replicas[0].block_table(1) == Ids{0, 1, 2});
  CHECK(replicas[1].num_used_blocks() == 0);
  CHECK(replicas[1].num_cached_blocks() == 2);
  replicas[0].check_invariants();
  replicas[1].check_invariants();
}
