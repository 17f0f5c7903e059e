// The caching-allocator model against the rules of PyTorch's CUDACachingAllocator.cpp
// (round_size, get_allocation_size, get_free_block, should_split, free_block's merging,
// release_cached_blocks on OOM), on tiny request sequences with exact byte counts.
#include "sim/memory/caching_allocator.hpp"

#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::memory;

TEST_CASE("requests round to 512 bytes and pick their segment size", "[memory][allocator]") {
  CHECK(CachingAllocator::round_size(Bytes(1)) == Bytes(512));
  CHECK(CachingAllocator::round_size(Bytes(513)) == Bytes(1024));
  CHECK(CachingAllocator::segment_size(MiB(1)) == MiB(2));
  CHECK(CachingAllocator::segment_size(MiB(1) + Bytes(512)) == MiB(20));
  CHECK(CachingAllocator::segment_size(MiB(10) - Bytes(512)) == MiB(20));
  CHECK(CachingAllocator::segment_size(MiB(10)) == MiB(10));
  CHECK(CachingAllocator::segment_size(MiB(11)) == MiB(12));
}

TEST_CASE("a small request opens a 2 MiB segment and a large one a 20 MiB segment",
          "[memory][allocator]") {
  CachingAllocator a;
  const auto s = a.allocate(Bytes(1));
  REQUIRE(s);
  CHECK(a.allocated() == Bytes(512));
  CHECK(a.reserved() == MiB(2));
  const auto l = a.allocate(MiB(1) + Bytes(1));
  REQUIRE(l);
  CHECK(a.allocated() == Bytes(512) + MiB(1) + Bytes(512));
  CHECK(a.reserved() == MiB(22));
  CHECK(a.num_segments() == 2);

  SECTION("a 12 MiB request reuses the split remainder of the 20 MiB segment") {
    const auto big = a.allocate(MiB(12));
    REQUIRE(big);
    CHECK(a.reserved() == MiB(22));
    CHECK(a.num_segments() == 2);
  }
  SECTION("freeing everything merges blocks back; empty_cache releases the segments") {
    a.free(*s);
    a.free(*l);
    CHECK(a.allocated() == Bytes(0));
    CHECK(a.reserved() == MiB(22));
    const auto again = a.allocate(MiB(19));  // the merged 20 MiB block serves it
    REQUIRE(again);
    CHECK(a.reserved() == MiB(22));
    a.free(*again);
    a.empty_cache();
    CHECK(a.reserved() == Bytes(0));
    CHECK(a.peak_reserved() == MiB(22));
  }
}

TEST_CASE("a large-pool remainder of 1 MiB or less is not split off", "[memory][allocator]") {
  CachingAllocator a;
  // 11 MiB -> a 12 MiB segment; the 1 MiB remainder stays with the block (needs > 1 MiB).
  REQUIRE(a.allocate(MiB(11)));
  CHECK(a.allocated() == MiB(12));
  CHECK(a.reserved() == MiB(12));
}

TEST_CASE("best fit takes the smallest cached block that holds the request",
          "[memory][allocator]") {
  CachingAllocator a;
  const auto x = a.allocate(MiB(6));  // 20 MiB segment: [x 6][free 14]
  const auto y = a.allocate(MiB(6));  // [x 6][y 6][free 8]
  REQUIRE(x);
  REQUIRE(y);
  a.free(*x);                         // [free 6][y 6][free 8]
  const auto z = a.allocate(MiB(7));  // best fit: the 8 MiB block, whole (1 MiB left is kept)
  REQUIRE(z);
  CHECK(a.block_size(*z) == MiB(8));
  CHECK(a.allocated() == MiB(14));
  CHECK(a.reserved() == MiB(20));  // fragmentation: 6 MiB cached but unused
}

TEST_CASE("at capacity, cached free segments are released before giving up",
          "[memory][allocator]") {
  CachingAllocator a({.capacity = MiB(30)});
  const auto first = a.allocate(MiB(20));
  REQUIRE(first);
  a.free(*first);
  const auto second = a.allocate(MiB(24));  // 20 + 24 > 30: release the free 20 MiB first
  REQUIRE(second);
  CHECK(a.reserved() == MiB(24));
  CHECK(a.num_alloc_retries() == 1);
  CHECK_FALSE(a.allocate(MiB(8)));  // needs a 20 MiB segment: 44 > 30, nothing to release
  CHECK(a.allocated() == MiB(24));
  CHECK(a.peak_reserved() == MiB(24));
}

TEST_CASE("allocated never exceeds reserved over a long mixed sequence",
          "[memory][allocator][invariant]") {
  CachingAllocator a;
  std::vector<CachingAllocator::BlockId> live;
  std::int64_t size = 1000;
  for (int i = 0; i < 2000; ++i) {
    size = (size * 7919 + 13) % (40 << 20) + 1;  // a fixed pseudo-random walk of sizes
    if (i % 3 == 2 && !live.empty()) {
      a.free(live[static_cast<std::size_t>(i) % live.size()]);
      live.erase(live.begin() +
                 static_cast<std::ptrdiff_t>(static_cast<std::size_t>(i) % live.size()));
    } else {
      live.push_back(*a.allocate(Bytes(size)));
    }
    REQUIRE(a.allocated() <= a.reserved());
  }
  for (auto id : live) a.free(id);
  CHECK(a.allocated() == Bytes(0));
  a.empty_cache();
  CHECK(a.reserved() == Bytes(0));
}

TEST_CASE("segments() lists each segment's blocks in address order and the log sees cudaMalloc "
          "and cudaFree",
          "[memory][allocator]") {
  CachingAllocator a;
  std::vector<SegmentEvent> log;
  a.record_segments(&log);
  const auto x = a.allocate(Bytes(1000));      // 1024 B of a new 2 MiB small segment
  const auto y = a.allocate(MiB(12));          // a new 12 MiB large segment, not split
  const auto z = a.allocate(Bytes(100));       // 512 B, after x in the small segment
  REQUIRE(x);
  REQUIRE(y);
  REQUIRE(z);
  REQUIRE(log.size() == 2);
  CHECK(log[0].alloc);
  CHECK(log[0].address == 0);
  CHECK(log[0].size == MiB(2).count());
  CHECK(log[1].address == MiB(2).count());
  CHECK(log[1].size == MiB(12).count());
  CHECK(a.block_address(*x) == 0);
  CHECK(a.block_address(*z) == 1024);
  CHECK(a.block_address(*y) == MiB(2).count());

  std::vector<SegmentState> segs = a.segments();
  REQUIRE(segs.size() == 2);
  CHECK(segs[0].small);
  CHECK(segs[0].size == MiB(2).count());
  REQUIRE(segs[0].blocks.size() == 3);  // x, z, the free remainder
  CHECK(segs[0].blocks[0].allocated);
  CHECK(segs[0].blocks[1].address == 1024);
  CHECK(segs[0].blocks[1].size == 512);
  CHECK_FALSE(segs[0].blocks[2].allocated);
  CHECK(segs[0].blocks[2].address == 1536);
  CHECK(segs[0].blocks[2].size == MiB(2).count() - 1536);
  CHECK_FALSE(segs[1].small);
  REQUIRE(segs[1].blocks.size() == 1);

  a.free(*y);
  a.empty_cache();  // releases the large segment, now wholly free
  REQUIRE(log.size() == 3);
  CHECK_FALSE(log[2].alloc);
  CHECK(log[2].address == MiB(2).count());
  CHECK(log[2].size == MiB(12).count());
  segs = a.segments();
  REQUIRE(segs.size() == 1);
  CHECK(segs[0].address == 0);
  a.record_segments(nullptr);
  a.free(*x);
  a.free(*z);
  a.empty_cache();
  CHECK(log.size() == 3);  // no longer recorded
  CHECK(a.segments().empty());
}

TEST_CASE("a freed block is reused only by requests on the stream it was allocated on",
          "[memory][allocator]") {
  CachingAllocator a;
  const auto on_comm = a.allocate(MiB(12), 1);  // a 12 MiB segment of stream 1
  REQUIRE(on_comm);
  a.free(*on_comm);
  // Stream 0 cannot take stream 1's cached block: a second 12 MiB segment.
  const auto on_compute = a.allocate(MiB(12), 0);
  REQUIRE(on_compute);
  CHECK(a.reserved() == MiB(24));
  CHECK(a.num_segments() == 2);
  // Stream 1 reuses its own block: nothing new.
  const auto again = a.allocate(MiB(12), 1);
  REQUIRE(again);
  CHECK(a.reserved() == MiB(24));
  CHECK(a.block_address(*again) == 0);
  std::vector<SegmentState> segs = a.segments();
  REQUIRE(segs.size() == 2);
  CHECK(segs[0].stream == 1);
  CHECK(segs[1].stream == 0);
  // A block split off a stream's segment stays that stream's: the 8 MiB left of stream 0's
  // block serves stream 0 only.
  a.free(*again);
  a.free(*on_compute);
  const auto x = a.allocate(MiB(4), 0);  // stream 0's 12 MiB block: [x 4][free 8]
  REQUIRE(x);
  CHECK(a.block_address(*x) == MiB(12).count());
  const auto y = a.allocate(MiB(10), 1);  // stream 1's 12 MiB block: [y 10][free 2]
  REQUIRE(y);
  CHECK(a.block_address(*y) == 0);
  CHECK(a.reserved() == MiB(24));
  const auto z = a.allocate(MiB(8), 1);  // not stream 0's free 8 MiB: a new 20 MiB segment
  REQUIRE(z);
  CHECK(a.block_address(*z) == MiB(24).count());
  CHECK(a.reserved() == MiB(44));
  const auto w = a.allocate(MiB(8), 0);  // stream 0's free 8 MiB, exactly
  REQUIRE(w);
  CHECK(a.block_address(*w) == MiB(16).count());
  CHECK(a.reserved() == MiB(44));
}
