#include "sim/serving/kv_cache_manager.hpp"

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

namespace vramsim::serving {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::size_t to_size(std::int64_t n) { return static_cast<std::size_t>(n); }

}  // namespace

KvCacheManager::KvCacheManager(const KvCacheConfig& config)
    : config_(config), fresh_first_(config.enable_prefix_caching) {
  VRAMSIM_CHECK(config_.num_blocks > 0, "KV cache needs at least 1 block, got {}",
                config_.num_blocks);
  VRAMSIM_CHECK(config_.block_size > 0, "block size {} must be positive", config_.block_size);
  VRAMSIM_CHECK(config_.num_host_blocks >= 0, "host blocks {} must be >= 0",
                config_.num_host_blocks);
  VRAMSIM_CHECK(config_.bytes_per_block.count() >= 0, "bytes per block must be >= 0");
  // Initially the free queue is 0, 1, ..., N-1 (vLLM's FreeKVCacheBlockQueue), all of it fresh:
  // nothing is materialized until allocated (see the header's NOTE on the fresh range).
  num_free_ = config_.num_blocks;
  blocks_.reserve(to_size(std::min<std::int64_t>(config_.num_blocks, kInitialBlockReserve)));
  // NOTE: a running request holds at least one block, so concurrency is bounded by num_blocks;
  // the cap keeps a huge pool from reserving buckets it will never use.
  tables_.reserve(to_size(std::min<std::int64_t>(config_.num_blocks, 4096)));
  if (config_.enable_prefix_caching) {
    // It grows with its entries (grow_hash_table) so that it is never more than half full.
    hash_slots_.resize(16);
    hash_mask_ = 15;
    hash_shift_ = 60;
  }
  VRAMSIM_CHECK(config_.num_offload_blocks >= 0, "offload blocks {} must be >= 0",
                config_.num_offload_blocks);
  const std::int64_t chunk = config_.offload_chunk_blocks;
  VRAMSIM_CHECK(chunk > 0 && config_.num_offload_blocks % chunk == 0 &&
                    config_.num_disk_blocks % chunk == 0,
                "offload tiers of {} and {} blocks are not whole entries of {} blocks",
                config_.num_offload_blocks, config_.num_disk_blocks, chunk);
  if (config_.num_offload_blocks > 0) {
    VRAMSIM_CHECK(config_.enable_prefix_caching,
                  "a KV offload tier needs prefix caching (its lookups are by block hash)");
    tier_.emplace(config_.num_offload_blocks / chunk, chunk);
  }
  VRAMSIM_CHECK(config_.num_disk_blocks >= 0, "disk blocks {} must be >= 0",
                config_.num_disk_blocks);
  if (config_.num_disk_blocks > 0) {
    VRAMSIM_CHECK(tier_.has_value(), "a KV disk tier needs the host-memory offload tier");
    disk_.emplace(config_.num_disk_blocks / chunk, chunk);
  }
}

bool KvCacheManager::in_host_or_disk(const Request& r, std::int64_t i) const {
  const BlockHash h = tier_->entry_hash(r, i);
  return tier_->contains(h) || disk_->contains(h);
}

std::int64_t KvCacheManager::lmcache_hit_chunks(const Request& r) const {
  // Only whole chunks of the prompt are ever stored (save_unfull_chunk off).
  const std::int64_t num_chunks =
      r.prompt_tokens / (config_.block_size * config_.offload_chunk_blocks);
  if (!disk_) return tier_->lookup(r, 0, num_chunks);
  std::int64_t n = 0;
  while (n < num_chunks && in_host_or_disk(r, n)) ++n;
  return n;
}

std::int64_t KvCacheManager::cached_prefix_tokens(const Request& r) const {
  if (!config_.enable_prefix_caching) return 0;
  const std::int64_t block_size = config_.block_size;
  // At least one token must remain to compute, to produce the logits of the next token.
  const std::int64_t max_tokens = r.num_tokens() - 1;
  std::int64_t hits = 0;
  while ((hits + 1) * block_size <= max_tokens && find_block(r, hits) != -1) {
    ++hits;
  }
  if (tier_) {
    // vLLM asks the offloading connector for the blocks after the GPU hits
    // (get_num_new_matched_tokens(request, num_computed_tokens)); it stops at its first miss.
    const std::int64_t last = max_tokens / block_size;
    if (config_.offload_backend == KvOffloadBackend::kLmcache) {
      // LMCache looks up from token 0; vLLM loads what goes beyond its own hits.
      hits = std::max(hits, std::min(lmcache_hit_chunks(r) * config_.offload_chunk_blocks, last));
    } else if (disk_) {
      while (hits < last && in_host_or_disk(r, hits)) ++hits;
    } else {
      hits += tier_->lookup(r, hits, last);
    }
  }
  return hits * block_size;
}

void KvCacheManager::record_prefix_lookup(std::int64_t query_tokens, std::int64_t hit_tokens) {
  VRAMSIM_CHECK(0 <= hit_tokens && hit_tokens <= query_tokens,
                "prefix lookup: {} hit tokens of {} queried", hit_tokens, query_tokens);
  stats_.prefix_query_tokens += query_tokens;
  stats_.prefix_hit_tokens += hit_tokens;
}

bool KvCacheManager::allocate_slots(const Request& r, std::int64_t num_new_tokens,
                                    std::int64_t num_new_computed_tokens,
                                    std::int64_t full_sequence_tokens) {
  const std::int64_t block_size = config_.block_size;
  VRAMSIM_CHECK(num_new_tokens >= 0 && num_new_computed_tokens >= 0,
                "request {}: negative token counts ({} new, {} new computed)", r.id,
                num_new_tokens, num_new_computed_tokens);
  const std::int64_t num_total = r.num_computed_tokens + num_new_computed_tokens + num_new_tokens;
  const std::int64_t num_required = ceil_div(num_total, block_size);
  // The blocks the admission test counts: the whole sequence under full_sequence_must_fit.
  const std::int64_t num_required_to_fit =
      std::max(num_required, ceil_div(full_sequence_tokens, block_size));
  // vLLM caches the blocks filled by the tokens scheduled this step (never past known tokens).
  const auto num_full = [&] { return std::min(num_total, r.num_tokens()) / block_size; };

  if (auto it = tables_.find(r.id); it != tables_.end()) {
    // A running request: the hot path (a decode adds a block once every block_size steps).
    VRAMSIM_CHECK(num_new_computed_tokens == 0 && full_sequence_tokens == 0,
                  "request {} already holds blocks; cached blocks and the full-sequence test "
                  "are for admission only",
                  r.id);
    Table& t = it->second;
    const std::int64_t num_new_blocks = num_required - static_cast<std::int64_t>(t.blocks.size());
    if (num_new_blocks > 0) {
      if (num_new_blocks > num_free_) return false;
      for (std::int64_t i = 0; i < num_new_blocks; ++i) t.blocks.push_back(take_new_block());
      note_usage();
    }
    if (config_.enable_prefix_caching && num_full() > t.num_hashed) {
      cache_full_blocks(r, t, num_full());
    }
    if (tier_ && num_full() > t.num_offered) offload_full_blocks(r, t, num_full());
    return true;
  }

  // First allocation since admission (or since a recompute preemption).
  VRAMSIM_CHECK(swapped_.empty() || swapped_.count(r.id) == 0,
                "request {} is swapped out; it needs swap_in, not allocate_slots", r.id);
  VRAMSIM_CHECK(num_new_computed_tokens % block_size == 0,
                "request {}: {} cached tokens is not a multiple of the block size {}", r.id,
                num_new_computed_tokens, block_size);
  const std::int64_t num_hits = num_new_computed_tokens / block_size;
  if (num_hits == 0) {
    if (num_required_to_fit > num_free_) return false;
    Table& t = new_table(r);
    for (std::int64_t i = 0; i < num_required; ++i) t.blocks.push_back(take_new_block());
    note_usage();
    if (config_.enable_prefix_caching) cache_full_blocks(r, t, num_full());
    if (tier_) {
      if (config_.offload_backend == KvOffloadBackend::kLmcache) {
        lmcache_admit(r, t, 0, 0);
      } else {
        // vLLM's connector touches the request's blocks at every lookup.
        tier_->touch(r, r.num_tokens() / block_size);
      }
      offload_full_blocks(r, t, num_full());
    }
    return true;
  }

  VRAMSIM_CHECK(config_.enable_prefix_caching,
                "request {}: cached tokens given with prefix caching off", r.id);
  VRAMSIM_CHECK(r.num_computed_tokens == 0,
                "request {}: cached blocks cover its start, but {} tokens are computed", r.id,
                r.num_computed_tokens);
  // Touching a free cached block uses up a free-queue entry as surely as a new block does.
  // NOTE: the lookups are repeated below rather than stored, so that a refused admission
  // (retried every step while the cache is full) allocates nothing.
  // The leading hits are on the GPU; with an offload tier, the rest are in host memory.
  std::int64_t num_free_hits = 0;
  std::int64_t num_gpu_hits = 0;
  for (; num_gpu_hits < num_hits; ++num_gpu_hits) {
    const BlockId b = find_block(r, num_gpu_hits);
    if (b == -1) break;
    if (blocks_[to_size(b)].ref_count == 0) ++num_free_hits;
  }
  const std::int64_t num_tier_hits = num_hits - num_gpu_hits;
  // With a disk tier, the blocks of the tier hits that the host tier lacks are on disk.
  std::int64_t num_disk_hits = 0;
  if (config_.offload_backend == KvOffloadBackend::kLmcache) {
    VRAMSIM_CHECK(num_tier_hits == 0 ||
                      (tier_ && lmcache_hit_chunks(r) * config_.offload_chunk_blocks >= num_hits),
                  "request {}: block {} of its cached prefix is not cached (stale lookup?)",
                  r.id, num_gpu_hits);
  } else if (disk_) {
    for (std::int64_t i = num_gpu_hits; i < num_hits; ++i) {
      VRAMSIM_CHECK(in_host_or_disk(r, i),
                    "request {}: block {} of its cached prefix is not cached (stale lookup?)",
                    r.id, i);
      if (!tier_->contains(r.block_hash(i))) ++num_disk_hits;
    }
  } else {
    VRAMSIM_CHECK(num_tier_hits == 0 ||
                      (tier_ && tier_->lookup(r, num_gpu_hits, num_hits) == num_tier_hits),
                  "request {}: block {} of its cached prefix is not cached (stale lookup?)",
                  r.id, num_gpu_hits);
  }
  // Blocks loaded from the tier need new GPU blocks like computed ones.
  const std::int64_t num_new_blocks = num_required - num_gpu_hits;
  if (num_required_to_fit - num_gpu_hits + num_free_hits > num_free_) return false;
  Table& t = new_table(r);
  for (std::int64_t i = 0; i < num_gpu_hits; ++i) {
    t.blocks.push_back(find_block(r, i));
  }
  for (const BlockId b : t.blocks) touch(b);
  t.num_hashed = num_gpu_hits;
  for (std::int64_t i = 0; i < num_new_blocks; ++i) t.blocks.push_back(take_new_block());
  note_usage();
  // Registers the loaded blocks too: once copied in they serve later lookups from the GPU.
  cache_full_blocks(r, t, num_full());
  if (tier_ && config_.offload_backend == KvOffloadBackend::kLmcache) {
    lmcache_admit(r, t, num_hits, num_gpu_hits);
    offload_full_blocks(r, t, num_full());
  } else if (tier_) {
    if (num_disk_hits > 0) {
      // LMCache touches the disk entries its lookup pinned, the last first (LocalDiskBackend
      // touch_cache), and puts what it read into the CPU tier (StorageManager.batched_get's
      // write-back): the read already landed in host memory, so no copy is added for it.
      for (std::int64_t i = num_hits - 1; i >= num_gpu_hits; --i) {
        if (!tier_->contains(r.block_hash(i))) disk_->touch_hash(r.block_hash(i));
      }
      (void)tier_->store(r, num_gpu_hits, num_hits);
      traffic_.blocks_disk_read += num_disk_hits;
      stats_.num_blocks_disk_loaded += num_disk_hits;
      stats_.disk_hit_tokens += num_disk_hits * block_size;
      stats_.num_offload_evictions = tier_->num_evictions();
    }
    tier_->touch(r, r.num_tokens() / block_size);
    if (num_tier_hits > 0) {
      // vLLM's update_state_after_alloc: storing resumes after the loaded blocks. Without a
      // tier hit it starts at block 0 (the GPU hits are offered too; held ones cost nothing).
      t.num_offered = num_hits;
      traffic_.blocks_loaded += num_tier_hits;
      stats_.num_blocks_offload_loaded += num_tier_hits;
      stats_.offload_hit_tokens += (num_tier_hits - num_disk_hits) * block_size;
    }
    offload_full_blocks(r, t, num_full());
  }
  return true;
}

void KvCacheManager::lmcache_admit(const Request& r, Table& t, std::int64_t num_hits,
                                   std::int64_t num_gpu_hits) {
  const std::int64_t chunk = config_.offload_chunk_blocks;
  const std::int64_t block_size = config_.block_size;
  const std::int64_t n = lmcache_hit_chunks(r);
  if (num_hits > num_gpu_hits) {
    // A load: chunks [first, n), the first being the one the GPU hits end in (copied in full).
    const std::int64_t first = num_gpu_hits / chunk;
    std::int64_t num_disk_chunks = 0;
    std::int64_t num_disk_hit_blocks = 0;  // of the hit blocks beyond the GPU's, on disk
    if (disk_) {
      for (std::int64_t k = n - 1; k >= first; --k) {
        if (tier_->contains(tier_->entry_hash(r, k))) continue;
        disk_->touch_hash(tier_->entry_hash(r, k));
        ++num_disk_chunks;
        num_disk_hit_blocks += std::max<std::int64_t>(
            0, std::min((k + 1) * chunk, num_hits) - std::max(k * chunk, num_gpu_hits));
      }
      // A read from disk is put into the CPU tier (StorageManager.batched_get's write-back).
      if (num_disk_chunks > 0) (void)tier_->store(r, first, n);
    }
    const std::int64_t num_loaded = (n - first) * chunk;
    traffic_.blocks_loaded += num_loaded;
    stats_.num_blocks_offload_loaded += num_loaded;
    traffic_.blocks_disk_read += num_disk_chunks * chunk;
    stats_.num_blocks_disk_loaded += num_disk_chunks * chunk;
    stats_.disk_hit_tokens += num_disk_hit_blocks * block_size;
    stats_.offload_hit_tokens += (num_hits - num_gpu_hits - num_disk_hit_blocks) * block_size;
    stats_.num_offload_evictions = tier_->num_evictions();
  }
  if (n > 0) tier_->touch(r, n);
  // Storing resumes after LMCache's hit (num_saved_tokens = lmcache_cached_tokens).
  t.num_offered = std::min(n * chunk, static_cast<std::int64_t>(t.blocks.size()));
}

void KvCacheManager::free(const Request& r) {
  const auto it = tables_.find(r.id);
  VRAMSIM_CHECK(it != tables_.end(), "free of request {}, which holds no blocks", r.id);
  keep_private_copies(r, it->second);
  release(it->second.blocks);
  drop_table(it);
  VRAMSIM_DCHECK((check_invariants(), true), "");
}

std::optional<Bytes> KvCacheManager::swap_out(const Request& r) {
  const auto it = tables_.find(r.id);
  VRAMSIM_CHECK(it != tables_.end(), "swap_out of request {}, which holds no blocks", r.id);
  const auto n = static_cast<std::int64_t>(it->second.blocks.size());
  if (config_.num_host_blocks == 0 || num_host_used_ + n > config_.num_host_blocks) {
    return std::nullopt;
  }
  num_host_used_ += n;
  swapped_.emplace(r.id, n);
  stats_.num_blocks_swapped_out += n;
  // NOTE: the GPU copies stay as they are until overwritten, so their hashes stay cached
  // exactly as after a recompute preemption.
  keep_private_copies(r, it->second);
  release(it->second.blocks);
  drop_table(it);
  VRAMSIM_DCHECK((check_invariants(), true), "");
  return n * config_.bytes_per_block;
}

std::optional<Bytes> KvCacheManager::swap_in(const Request& r) {
  const auto it = swapped_.find(r.id);
  VRAMSIM_CHECK(it != swapped_.end(), "swap_in of request {}, which is not swapped out", r.id);
  VRAMSIM_CHECK(tables_.count(r.id) == 0, "swap_in of request {}, which holds GPU blocks", r.id);
  const std::int64_t n = it->second;
  if (n > num_free_) return std::nullopt;
  Table& t = new_table(r);
  for (std::int64_t i = 0; i < n; ++i) t.blocks.push_back(take_new_block());
  note_usage();
  // The copied-back blocks hold the request's full computed blocks again: offer them to the
  // cache like freshly computed ones (beside any copy cached elsewhere meanwhile).
  if (config_.enable_prefix_caching) {
    cache_full_blocks(r, t, std::min(n, r.num_computed_tokens / config_.block_size));
  }
  // Its blocks were offered to the offload tier when first computed.
  t.num_offered = t.num_hashed;
  num_host_used_ -= n;
  swapped_.erase(it);
  stats_.num_blocks_swapped_in += n;
  VRAMSIM_DCHECK((check_invariants(), true), "");
  return n * config_.bytes_per_block;
}

std::int64_t KvCacheManager::num_cached_blocks() const { return num_cached_; }
std::int64_t KvCacheManager::num_host_blocks_used() const { return num_host_used_; }

std::int64_t KvCacheManager::num_blocks_of(RequestId id) const {
  const auto it = tables_.find(id);
  return it == tables_.end() ? 0 : static_cast<std::int64_t>(it->second.blocks.size());
}

double KvCacheManager::usage() const {
  return static_cast<double>(num_used_blocks()) / static_cast<double>(config_.num_blocks);
}

const KvCacheStats& KvCacheManager::stats() const { return stats_; }

OffloadTraffic KvCacheManager::take_offload_traffic() { return std::exchange(traffic_, {}); }

void KvCacheManager::queue_remove(BlockId b) {
  Block& blk = blocks_[to_size(b)];
  VRAMSIM_CHECK(blk.queued, "block {} is not in the free queue", b);
  if (blk.prev != -1) blocks_[to_size(blk.prev)].next = blk.next; else head_ = blk.next;
  if (blk.next != -1) blocks_[to_size(blk.next)].prev = blk.prev; else tail_ = blk.prev;
  blk.prev = blk.next = -1;
  blk.queued = false;
  --num_free_;
}

void KvCacheManager::queue_push_back(BlockId b) {
  Block& blk = blocks_[to_size(b)];
  VRAMSIM_CHECK(!blk.queued, "block {} is already in the free queue (double free)", b);
  blk.prev = tail_;
  blk.next = -1;
  if (tail_ != -1) blocks_[to_size(tail_)].next = b; else head_ = b;
  tail_ = b;
  blk.queued = true;
  ++num_free_;
}

void KvCacheManager::queue_push_front(BlockId b) {
  Block& blk = blocks_[to_size(b)];
  VRAMSIM_CHECK(!blk.queued, "block {} is already in the free queue (double free)", b);
  blk.prev = -1;
  blk.next = head_;
  if (head_ != -1) blocks_[to_size(head_)].prev = b; else tail_ = b;
  head_ = b;
  blk.queued = true;
  ++num_free_;
}

BlockId KvCacheManager::queue_pop_front() {
  const bool fresh_left = static_cast<std::int64_t>(blocks_.size()) < config_.num_blocks;
  if (fresh_left && (fresh_first_ || head_ == -1)) return materialize();
  VRAMSIM_CHECK(head_ != -1, "free queue is empty");
  const BlockId b = head_;
  queue_remove(b);
  return b;
}

BlockId KvCacheManager::materialize() {
  if (static_cast<std::int64_t>(blocks_.size()) >= kMaxMaterializedBlocks) {
    throw ConfigError(
        "num_gpu_blocks",
        fmt::format("the KV cache has {} blocks and the run has filled {} of them: the "
                    "simulator tracks at most {} distinct blocks per replica (int32 ids); use a "
                    "larger --block-size or a smaller --num-gpu-blocks-override",
                    config_.num_blocks, blocks_.size(), kMaxMaterializedBlocks));
  }
  const auto b = static_cast<BlockId>(blocks_.size());
  blocks_.emplace_back();
  --num_free_;
  return b;
}

void KvCacheManager::grow_hash_table() {
  std::vector<HashSlot> old(hash_slots_.size() * 2);
  old.swap(hash_slots_);
  hash_mask_ = hash_slots_.size() - 1;
  --hash_shift_;
  // Re-inserted in probe-run order, starting after an empty slot (the table was at most half
  // full): each run is then walked front to back, so the copies of one hash keep their
  // insertion order along the new runs too, and find_cached still returns the oldest copy.
  std::size_t start = 0;
  while (old[start].block != -1) ++start;
  for (std::size_t k = 1; k <= old.size(); ++k) {
    const HashSlot& slot = old[(start + k) & (old.size() - 1)];
    if (slot.block == -1) continue;
    std::size_t s = hash_home(slot.hash);
    while (hash_slots_[s].block != -1) s = (s + 1) & hash_mask_;
    hash_slots_[s] = slot;
  }
}

BlockId KvCacheManager::take_new_block() {
  const BlockId b = queue_pop_front();
  Block& blk = blocks_[to_size(b)];
  VRAMSIM_CHECK(blk.ref_count == 0, "free block {} has ref count {}", b, blk.ref_count);
  if (blk.hashed) {  // LRU eviction of a cached block
    forget_hash(b);
    ++stats_.num_evictions;
  }
  blk.ref_count = 1;
  return b;
}

void KvCacheManager::touch(BlockId b) {
  Block& blk = blocks_[to_size(b)];
  if (blk.ref_count == 0) queue_remove(b);
  ++blk.ref_count;
}

void KvCacheManager::release(const std::vector<BlockId>& blocks) {
  // vLLM: free_blocks(reversed(blocks)) so a request's tail blocks are evicted before its head.
  if (!config_.enable_prefix_caching) {
    // NOTE: without prefix caching a block's identity never shows in any result, only the count
    // of free blocks does, so freed blocks go to the queue head (last in, first out): the next
    // allocation reuses memory that is still in the CPU cache instead of the coldest block.
    // Pushed head block first, so a request's blocks come back in table order.
    for (const BlockId b : blocks) {
      Block& blk = blocks_[to_size(b)];
      VRAMSIM_CHECK(blk.ref_count > 0, "block {} freed with ref count {}", b, blk.ref_count);
      if (--blk.ref_count == 0) queue_push_front(b);
    }
    return;
  }
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    Block& blk = blocks_[to_size(*it)];
    VRAMSIM_CHECK(blk.ref_count > 0, "block {} freed with ref count {}", *it, blk.ref_count);
    if (--blk.ref_count == 0) queue_push_back(*it);
  }
}

void KvCacheManager::cache_full_blocks(const Request& r, Table& t, std::int64_t num_full) {
  num_full = std::min(num_full, static_cast<std::int64_t>(t.blocks.size()));
  const auto num_shared = static_cast<std::int64_t>(r.prefix_hashes.size());
  for (std::int64_t i = t.num_hashed; i < num_full; ++i) {
    const BlockId b = t.blocks[to_size(i)];
    Block& blk = blocks_[to_size(b)];
    VRAMSIM_CHECK(!blk.hashed, "block {} of request {} is already cached", b, r.id);
    blk.hashed = true;
    ++num_cached_;
    if (i >= num_shared) {  // the request's own content: see private_copies_
      blk.shared = false;
      blk.key = ++num_registrations_;
      continue;
    }
    const BlockHash h = r.prefix_hashes[to_size(i)];
    blk.key = h;
    if (2 * (num_shared_entries_ + 1) > static_cast<std::int64_t>(hash_slots_.size())) {
      grow_hash_table();
    }
    // NOTE: content already cached in another block is registered again, as vLLM does
    // (block_pool.py BlockHashToBlockMap: "We currently don't de-duplicate the blocks in the
    // cache"), so the copy survives when the older block is evicted. The entry goes to the first
    // empty slot of the probe run, after every older entry of the same hash, and find_cached
    // keeps returning the oldest copy (vLLM's get_one_block: the first of an insertion-ordered
    // dict). Backward-shift deletion keeps entries of one home in that order.
    std::size_t s = hash_home(h);
    while (hash_slots_[s].block != -1) s = (s + 1) & hash_mask_;
    hash_slots_[s] = {h, b};
    blk.shared = true;
    ++num_shared_entries_;
  }
  t.num_hashed = std::max(t.num_hashed, num_full);
}

void KvCacheManager::offload_full_blocks(const Request& r, Table& t, std::int64_t num_full) {
  const std::int64_t chunk = config_.offload_chunk_blocks;
  const bool lmcache = config_.offload_backend == KvOffloadBackend::kLmcache;
  // LMCache stores the prompt's whole chunks only (see the header).
  if (lmcache) num_full = std::min(num_full, r.prompt_tokens / config_.block_size) / chunk * chunk;
  if (num_full <= t.num_offered) return;
  const std::int64_t first = t.num_offered / chunk;  // entries
  const std::int64_t last = num_full / chunk;
  const std::optional<std::int64_t> stored = tier_->store(r, first, last);
  // NOTE: more new blocks than the whole tier holds: nothing is stored and the same blocks are
  // offered again with the next one (vLLM logs "cannot store" and retries next step).
  if (!stored) return;
  t.num_offered = num_full;
  if (disk_) {
    // Write-through (see the header): the disk takes the same range and writes what it lacks;
    // a range larger than the whole disk is not written (LMCache: "No eviction candidates").
    const std::optional<std::int64_t> written = disk_->store(r, first, last);
    if (written && *written > 0) {
      traffic_.blocks_disk_written += *written * chunk;
      stats_.num_blocks_disk_stored += *written * chunk;
      stats_.num_disk_evictions = disk_->num_evictions();
    }
  }
  if (*stored == 0) return;
  traffic_.blocks_stored += *stored * chunk;
  stats_.num_blocks_offload_stored += *stored * chunk;
  stats_.num_offload_evictions = tier_->num_evictions();
  // vLLM's native connector touches the request's prefix after a store; LMCache's put leaves
  // held chunks where they are (new ones are already the most recent).
  if (!lmcache) tier_->touch(r, num_full);
}

void KvCacheManager::forget_hash(BlockId b) {
  Block& blk = blocks_[to_size(b)];
  const BlockHash h = blk.key;
  const bool shared = blk.shared;
  blk.hashed = false;
  blk.shared = false;
  blk.key = 0;
  --num_cached_;
  if (!shared) return;
  --num_shared_entries_;
  std::size_t hole = hash_home(h);
  while (hash_slots_[hole].block != b) {
    VRAMSIM_CHECK(hash_slots_[hole].block != -1, "block {}'s hash is not mapped to it", b);
    hole = (hole + 1) & hash_mask_;
  }
  // Backward-shift deletion (Knuth 6.4, algorithm R): move up every later entry of the probe
  // run whose home does not lie cyclically in (hole, s], so that no tombstones are needed.
  for (std::size_t s = (hole + 1) & hash_mask_; hash_slots_[s].block != -1;
       s = (s + 1) & hash_mask_) {
    const std::size_t home = hash_home(hash_slots_[s].hash);
    const bool stays = hole < s ? (hole < home && home <= s) : (hole < home || home <= s);
    if (stays) continue;
    hash_slots_[hole] = hash_slots_[s];
    hole = s;
  }
  hash_slots_[hole] = HashSlot{};
}

std::size_t KvCacheManager::hash_home(BlockHash h) const {
  // Fibonacci hashing: the top bits of h * 2^64/phi, so that small test hashes spread too.
  return static_cast<std::size_t>((h * 0x9e3779b97f4a7c15ULL) >> hash_shift_);
}

BlockId KvCacheManager::find_cached(BlockHash h) const {
  if (hash_slots_.empty()) return -1;
  for (std::size_t s = hash_home(h);; s = (s + 1) & hash_mask_) {
    const HashSlot& slot = hash_slots_[s];
    if (slot.block == -1) return -1;
    if (slot.hash == h) return slot.block;
  }
}

BlockId KvCacheManager::find_block(const Request& r, std::int64_t index) const {
  const auto num_shared = static_cast<std::int64_t>(r.prefix_hashes.size());
  if (index < num_shared) return find_cached(r.prefix_hashes[to_size(index)]);
  const auto it = private_copies_.find(r.id);
  if (it == private_copies_.end()) return -1;
  // The oldest registration still held, as the hash table's oldest copy would be.
  BlockId found = -1;
  std::uint64_t oldest = std::numeric_limits<std::uint64_t>::max();
  const auto k = to_size(index - num_shared);
  for (const std::vector<PrivateCopy>& list : it->second) {
    if (k >= list.size()) continue;
    const PrivateCopy c = list[k];
    if (c.registration == 0 || c.registration >= oldest) continue;
    const Block& blk = blocks_[to_size(c.block)];
    if (blk.hashed && !blk.shared && blk.key == c.registration) {
      found = c.block;
      oldest = c.registration;
    }
  }
  return found;
}

void KvCacheManager::keep_private_copies(const Request& r, const Table& t) {
  if (!config_.enable_prefix_caching) return;
  if (r.finished()) {
    if (!private_copies_.empty()) private_copies_.erase(r.id);
    return;
  }
  const auto held = [&](const PrivateCopy& c) {
    const Block& blk = blocks_[to_size(c.block)];
    return c.registration != 0 && blk.hashed && !blk.shared && blk.key == c.registration;
  };
  const auto num_shared = static_cast<std::int64_t>(r.prefix_hashes.size());
  std::vector<PrivateCopy> list;
  for (std::int64_t i = num_shared; i < t.num_hashed; ++i) {
    const BlockId b = t.blocks[to_size(i)];
    const Block& blk = blocks_[to_size(b)];
    list.push_back(blk.hashed && !blk.shared ? PrivateCopy{b, blk.key} : PrivateCopy{});
  }
  PrivateCopies& lists = private_copies_[r.id];
  // Lists whose every copy has been overwritten can answer nothing any more.
  std::erase_if(lists, [&](const std::vector<PrivateCopy>& l) {
    return std::none_of(l.begin(), l.end(), held);
  });
  if (std::any_of(list.begin(), list.end(), held)) lists.push_back(std::move(list));
  if (lists.empty()) private_copies_.erase(r.id);
}

KvCacheManager::Table& KvCacheManager::new_table(const Request& r) {
  const auto [it, inserted] = tables_.try_emplace(r.id);
  VRAMSIM_CHECK(inserted, "request {} already holds a block table", r.id);
  Table& t = it->second;
  if (!spare_block_lists_.empty()) {
    t.blocks.swap(spare_block_lists_.back());
    spare_block_lists_.pop_back();
    t.blocks.clear();
  }
  // Room for the whole request, so that its decode steps never reallocate.
  t.blocks.reserve(to_size(ceil_div(std::max(r.prompt_tokens + r.output_tokens, r.num_tokens()),
                                    config_.block_size)));
  return t;
}

void KvCacheManager::drop_table(TableMap::iterator it) {
  spare_block_lists_.push_back(std::move(it->second.blocks));
  tables_.erase(it);
}

void KvCacheManager::note_usage() {
  stats_.peak_used_blocks = std::max(stats_.peak_used_blocks, num_used_blocks());
}

}  // namespace vramsim::serving
