// KvCacheManager's test accessors and its O(blocks) self-check (kv_cache_manager.hpp).
#include "sim/serving/kv_cache_manager.hpp"

#include "sim/core/check.hpp"

#include <algorithm>
#include <vector>

namespace vramsim::serving {
namespace {

std::size_t to_size(std::int64_t n) { return static_cast<std::size_t>(n); }

}  // namespace

std::vector<BlockId> KvCacheManager::free_queue() const {
  std::vector<BlockId> ids;
  ids.reserve(to_size(num_free_));
  for (BlockId b = head_; b != -1; b = blocks_[to_size(b)].next) ids.push_back(b);
  return ids;
}

std::int32_t KvCacheManager::ref_count(BlockId b) const {
  VRAMSIM_CHECK(0 <= b && b < static_cast<BlockId>(blocks_.size()), "no block {}", b);
  return blocks_[to_size(b)].ref_count;
}

bool KvCacheManager::is_cached(BlockId b) const {
  VRAMSIM_CHECK(0 <= b && b < static_cast<BlockId>(blocks_.size()), "no block {}", b);
  return blocks_[to_size(b)].hashed;
}

std::vector<BlockId> KvCacheManager::block_table(RequestId id) const {
  const auto it = tables_.find(id);
  return it == tables_.end() ? std::vector<BlockId>{} : it->second.blocks;
}

void KvCacheManager::check_invariants() const {
  const std::int64_t n = config_.num_blocks;
  // The free queue: well linked, exactly the blocks with no reference.
  std::int64_t queued = 0;
  BlockId prev = -1;
  for (BlockId b = head_; b != -1; b = blocks_[to_size(b)].next) {
    const Block& blk = blocks_[to_size(b)];
    VRAMSIM_CHECK(blk.queued && blk.prev == prev, "free queue broken at block {}", b);
    VRAMSIM_CHECK(blk.ref_count == 0, "queued block {} has ref count {}", b, blk.ref_count);
    VRAMSIM_CHECK(++queued <= n, "free queue has a cycle");
    prev = b;
  }
  VRAMSIM_CHECK(prev == tail_, "free queue tail is {}, expected {}", tail_, prev);
  VRAMSIM_CHECK(queued == num_free_, "free queue holds {} blocks, counter says {}", queued,
                num_free_);
  VRAMSIM_CHECK(num_free_ + num_used_blocks() == n, "free + used != total");
  // Reference counts equal the number of table entries naming each block.
  std::vector<std::int64_t> refs(to_size(n), 0);
  for (const auto& [id, t] : tables_) {  // order-free: only counts
    for (const BlockId b : t.blocks) ++refs[to_size(b)];
  }
  std::int64_t num_hashed = 0;
  for (std::int64_t b = 0; b < n; ++b) {
    const Block& blk = blocks_[to_size(b)];
    VRAMSIM_CHECK(blk.ref_count >= 0 && blk.ref_count == refs[to_size(b)],
                  "block {} has ref count {} but {} table entries", b, blk.ref_count,
                  refs[to_size(b)]);
    VRAMSIM_CHECK(blk.queued == (blk.ref_count == 0), "block {} queued={} with ref count {}", b,
                  blk.queued, blk.ref_count);
    if (blk.hashed) {
      ++num_hashed;
      VRAMSIM_CHECK(find_cached(blk.hash) != -1, "block {}'s hash is not mapped", b);
    }
  }
  const auto num_slots_used = std::count_if(hash_slots_.begin(), hash_slots_.end(),
                                            [](const HashSlot& slot) { return slot.block != -1; });
  VRAMSIM_CHECK(num_hashed == num_cached_ && num_cached_ == num_slots_used,
                "{} hashed blocks, counter {}, table entries {}", num_hashed, num_cached_,
                num_slots_used);
  std::int64_t host = 0;
  for (const auto& [id, count] : swapped_) host += count;  // order-free: a sum
  VRAMSIM_CHECK(host == num_host_used_ && host <= config_.num_host_blocks,
                "host blocks: {} swapped, counter {}, pool {}", host, num_host_used_,
                config_.num_host_blocks);
}

// --- free queue (an intrusive doubly linked list through blocks_) ---

}  // namespace vramsim::serving
