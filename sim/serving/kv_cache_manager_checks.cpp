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
  const auto fresh = [&] {
    for (auto b = static_cast<std::int64_t>(blocks_.size()); b < config_.num_blocks; ++b) {
      ids.push_back(static_cast<BlockId>(b));
    }
  };
  if (fresh_first_) fresh();
  for (BlockId b = head_; b != -1; b = blocks_[to_size(b)].next) ids.push_back(b);
  if (!fresh_first_) fresh();
  return ids;
}

std::int32_t KvCacheManager::ref_count(BlockId b) const {
  VRAMSIM_CHECK(0 <= b && b < config_.num_blocks, "no block {}", b);
  // A fresh block (never allocated) has no metadata: no reference, no hash.
  return to_size(b) < blocks_.size() ? blocks_[to_size(b)].ref_count : 0;
}

bool KvCacheManager::is_cached(BlockId b) const {
  VRAMSIM_CHECK(0 <= b && b < config_.num_blocks, "no block {}", b);
  return to_size(b) < blocks_.size() && blocks_[to_size(b)].hashed;
}

std::vector<BlockId> KvCacheManager::block_table(RequestId id) const {
  const auto it = tables_.find(id);
  return it == tables_.end() ? std::vector<BlockId>{} : it->second.blocks;
}

void KvCacheManager::check_invariants() const {
  const std::int64_t n = config_.num_blocks;
  const auto materialized = static_cast<std::int64_t>(blocks_.size());
  VRAMSIM_CHECK(materialized <= n, "{} blocks materialized of {}", materialized, n);
  VRAMSIM_CHECK(hash_slots_.empty() ||
                    2 * num_shared_entries_ <= static_cast<std::int64_t>(hash_slots_.size()),
                "hash table of {} slots for {} entries", hash_slots_.size(), num_shared_entries_);
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
  VRAMSIM_CHECK(queued + (n - materialized) == num_free_,
                "free queue holds {} listed and {} fresh blocks, counter says {}", queued,
                n - materialized, num_free_);
  VRAMSIM_CHECK(num_free_ + num_used_blocks() == n, "free + used != total");
  // Reference counts equal the number of table entries naming each block.
  std::vector<std::int64_t> refs(to_size(materialized), 0);
  for (const auto& [id, t] : tables_) {  // order-free: only counts
    for (const BlockId b : t.blocks) {
      VRAMSIM_CHECK(0 <= b && b < materialized, "request {} holds block {}, not materialized",
                    id, b);
      ++refs[to_size(b)];
    }
  }
  std::int64_t num_hashed = 0;
  std::int64_t num_shared = 0;
  for (std::int64_t b = 0; b < materialized; ++b) {
    const Block& blk = blocks_[to_size(b)];
    VRAMSIM_CHECK(blk.ref_count >= 0 && blk.ref_count == refs[to_size(b)],
                  "block {} has ref count {} but {} table entries", b, blk.ref_count,
                  refs[to_size(b)]);
    VRAMSIM_CHECK(blk.queued == (blk.ref_count == 0), "block {} queued={} with ref count {}", b,
                  blk.queued, blk.ref_count);
    VRAMSIM_CHECK(blk.hashed || !blk.shared, "block {} is shared but holds no hash", b);
    if (blk.hashed) ++num_hashed;
    if (blk.shared) {
      ++num_shared;
      VRAMSIM_CHECK(find_cached(blk.key) != -1, "block {}'s hash is not mapped", b);
    }
  }
  const auto num_slots_used = std::count_if(hash_slots_.begin(), hash_slots_.end(),
                                            [](const HashSlot& slot) { return slot.block != -1; });
  VRAMSIM_CHECK(num_hashed == num_cached_ && num_shared == num_shared_entries_ &&
                    num_shared == num_slots_used,
                "{} hashed blocks (counter {}), {} under shared hashes (counter {}), {} table "
                "entries",
                num_hashed, num_cached_, num_shared, num_shared_entries_, num_slots_used);
  std::int64_t host = 0;
  for (const auto& [id, count] : swapped_) host += count;  // order-free: a sum
  VRAMSIM_CHECK(host == num_host_used_ && host <= config_.num_host_blocks,
                "host blocks: {} swapped, counter {}, pool {}", host, num_host_used_,
                config_.num_host_blocks);
  if (tier_) {
    const auto lru = tier_->lru_order();
    VRAMSIM_CHECK(static_cast<std::int64_t>(lru.size()) == tier_->num_used() &&
                      tier_->num_used() <= tier_->num_blocks(),
                  "offload tier: {} in LRU order, {} indexed, {} entries", lru.size(),
                  tier_->num_used(), tier_->num_blocks());
    for (const auto& [id, t] : tables_) {  // order-free: each table checked alone
      VRAMSIM_CHECK(t.num_offered <= static_cast<std::int64_t>(t.blocks.size()),
                    "request {}: {} blocks offered to the offload tier, {} held", id,
                    t.num_offered, t.blocks.size());
    }
  }
  if (disk_) {
    const auto lru = disk_->lru_order();
    VRAMSIM_CHECK(static_cast<std::int64_t>(lru.size()) == disk_->num_used() &&
                      disk_->num_used() <= disk_->num_blocks(),
                  "disk tier: {} in LRU order, {} indexed, {} entries", lru.size(),
                  disk_->num_used(), disk_->num_blocks());
  }
}

// --- free queue (an intrusive doubly linked list through blocks_) ---

}  // namespace vramsim::serving
