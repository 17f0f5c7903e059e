// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, the native
// backend without expandable segments), reproducing which requests become new segments
// (cudaMalloc) and which reuse cached blocks, so that "reserved" (what the device gives away)
// differs from "allocated" (what tensors hold) the way it does in torch.cuda.memory_stats().
//
// The rules, with PyTorch's constant names:
//   round_size         requests round up to a multiple of kMinBlockSize = 512 B (at least 512)
//   pools              a request of <= kSmallSize = 1 MiB uses the small pool, else the large one
//   segment size       small pool: kSmallBuffer = 2 MiB segments; large pool: requests below
//                      kMinLargeAlloc = 10 MiB get kLargeBuffer = 20 MiB segments, larger ones
//                      a segment rounded up to kRoundLarge = 2 MiB
//   streams            every block belongs to the stream its segment was allocated for; a
//                      request only reuses cached blocks of its own stream (BlockPool's order
//                      compares the stream first; get_free_block stops at another stream's
//                      block), so each stream keeps its own cache
//   reuse              best fit: the smallest cached free block of the pool and stream that
//                      holds the request (ties by address); with max_split_size set, a request
//                      below it never takes a block at or above it, and a request at or
//                      above it takes no block larger than request + kLargeBuffer
//   split              the chosen block is split when the remainder is >= 512 B (small pool) or
//                      > kSmallSize = 1 MiB (large pool, and only for requests < max_split_size);
//                      otherwise the request gets the whole block
//   free               a freed block merges with its free neighbours in the same segment
//   out of memory      when a new segment would pass the capacity, every cached segment that is
//                      wholly free is released (cudaFree) and the segment is tried again
// The simulator passes the stream of the op that allocates a tensor (training: compute,
// data-parallel communication, pipeline sends; sim/training/op_graph.hpp), as PyTorch takes the
// current stream; cross-stream uses are not recorded (FSDP2 and DeepSpeed wait on events
// instead of record_stream, so the block returns to its own stream's cache when freed).
// NOTE: blocks get synthetic, deterministic addresses (segments laid out one after another).
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"

namespace vramsim::memory {

inline constexpr Bytes kMinBlockSize = Bytes(512);
inline constexpr Bytes kSmallSize = MiB(1);
inline constexpr Bytes kSmallBuffer = MiB(2);
inline constexpr Bytes kLargeBuffer = MiB(20);
inline constexpr Bytes kMinLargeAlloc = MiB(10);
inline constexpr Bytes kRoundLarge = MiB(2);

struct CachingAllocatorOptions {
  /// Device memory the allocator may reserve; nullopt = unlimited.
  std::optional<Bytes> capacity;
  /// PYTORCH_CUDA_ALLOC_CONF max_split_size_mb; unlimited by default (PyTorch's default).
  Bytes max_split_size = Bytes(std::numeric_limits<std::int64_t>::max());
};

/// A segment the allocator took from the device (cudaMalloc) or gave back (cudaFree), as
/// PyTorch's memory history records them ("segment_alloc", "segment_free").
struct SegmentEvent {
  bool alloc = true;  // false: released
  std::int64_t address = 0;
  std::int64_t size = 0;
  std::int32_t stream = 0;
};

/// A segment as torch.cuda.memory._snapshot() lists it: its blocks in address order, covering
/// it exactly.
struct SegmentState {
  struct Block {
    std::int64_t address = 0;
    std::int64_t size = 0;  // rounded
    bool allocated = false;
  };
  std::int64_t address = 0;
  std::int64_t size = 0;
  bool small = false;  // the small pool (blocks of at most 1 MiB)
  std::int32_t stream = 0;
  std::vector<Block> blocks;
};

class CachingAllocator {
 public:
  using BlockId = std::int32_t;

  explicit CachingAllocator(CachingAllocatorOptions options = {});

  /// PyTorch's round_size: a multiple of 512 B, at least 512 B.
  static Bytes round_size(Bytes request);
  /// PyTorch's get_allocation_size: the segment a rounded request would cudaMalloc.
  static Bytes segment_size(Bytes rounded);

  /// Allocates `size` bytes (> 0) on `stream` (>= 0): only blocks cached by that stream are
  /// reused. Returns the block, or nullopt when the capacity does not allow it even after
  /// releasing every wholly free cached segment (a simulated OOM).
  std::optional<BlockId> allocate(Bytes size, std::int32_t stream = 0);
  /// Returns a block from allocate() to its pool's cache, merging free neighbours.
  void free(BlockId id);
  /// torch.cuda.empty_cache(): releases every wholly free segment.
  void empty_cache();

  /// Bytes held by live blocks (rounded sizes), as memory_stats()["allocated_bytes.all.current"].
  Bytes allocated() const { return allocated_; }
  /// Bytes of all segments, as memory_stats()["reserved_bytes.all.current"].
  Bytes reserved() const { return reserved_; }
  Bytes peak_allocated() const { return peak_allocated_; }
  Bytes peak_reserved() const { return peak_reserved_; }
  std::int64_t num_segments() const { return num_segments_; }
  std::int64_t num_alloc_retries() const { return num_alloc_retries_; }
  /// The rounded size a live block holds.
  Bytes block_size(BlockId id) const;
  /// The synthetic address of a live block.
  std::int64_t block_address(BlockId id) const;
  /// Every segment now, in address order (for a memory snapshot).
  std::vector<SegmentState> segments() const;
  /// Appends each segment allocation and release to `log` from now on (nullptr: stop).
  void record_segments(std::vector<SegmentEvent>* log) { segment_log_ = log; }

 private:
  struct Block {
    std::int64_t address = 0;
    std::int64_t size = 0;
    bool small = false;
    std::int32_t stream = 0;
    bool allocated = false;
    bool in_use = true;  // false once the slot is recycled (merged away or released)
    BlockId prev = -1;
    BlockId next = -1;
  };
  struct FreeKey {  // BlockPool's order: stream, then size, then address (unique)
    std::int32_t stream = 0;
    std::int64_t size = 0;
    std::int64_t address = 0;
    BlockId id = -1;  // the block itself (never decides the order: addresses are unique)
    friend auto operator<=>(const FreeKey&, const FreeKey&) = default;
  };

  std::vector<FreeKey>& pool(bool small) { return small ? small_free_ : large_free_; }
  BlockId new_block(const Block& b);
  void insert_free(BlockId id);
  void erase_free(BlockId id);
  std::optional<BlockId> find_free(bool small, std::int32_t stream, std::int64_t size);
  bool release_free_segments();

  CachingAllocatorOptions options_;
  std::vector<Block> blocks_;
  std::vector<BlockId> recycled_;
  // Each pool's free blocks in BlockPool's order. NOTE: a sorted array, not a tree: a pool
  // holds tens to hundreds of free blocks, and a tree's node per insertion cost more than the
  // array's moves (one allocation and free per tensor of every simulated op).
  std::vector<FreeKey> small_free_;
  std::vector<FreeKey> large_free_;
  std::int64_t next_address_ = 0;
  Bytes allocated_;
  Bytes reserved_;
  Bytes peak_allocated_;
  Bytes peak_reserved_;
  std::int64_t num_segments_ = 0;
  std::int64_t num_alloc_retries_ = 0;
  std::vector<SegmentEvent>* segment_log_ = nullptr;
};

}  // namespace vramsim::memory
