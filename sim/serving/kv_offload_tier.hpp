// The host-memory (CPU) tier of a replica's KV cache, after vLLM's native KV offloading
// (`--kv-offloading-size GiB --kv-offloading-backend native`, which installs the
// OffloadingConnector with an LRU CPU manager).
//
//   * The tier holds num_blocks blocks of the GPU block size, keyed by content hash, in LRU
//     order (vllm/v1/kv_offload/lru_manager.py, LRUOffloadingManager: an OrderedDict whose
//     front is evicted first).
//   * store(): the hashes not held yet are added at the most-recently-used end, in order,
//     after evicting as many least-recently-used entries as they need; a store of more new
//     blocks than the whole tier holds stores nothing (prepare_store returns None).
//   * touch(): every held hash of a request's leading blocks moves to the most-recently-used
//     end, the last block first, so that a request's first block ends up most recent and its
//     tail is evicted before its head (LRUOffloadingManager.touch iterates reversed()).
//   * lookup(): how many consecutive blocks, from a given one, the tier holds.
// When a request's blocks are stored, and when they are loaded, is the KV manager's business
// (kv_cache_manager.hpp). The tier is pure bookkeeping: copies are costed by the replica.
// The optional disk tier (LMCache's local_disk backend) is a second instance of this class: its
// LRU (LMCache's default cache_policy "LRU") and capacity in blocks behave the same way.
//
// Entries: an entry is blocks_per_entry consecutive GPU blocks (1 for vLLM's native offloading;
// LMCache's chunk_size / block_size for LMCache, whose keys, hits and evictions are per chunk of
// chunk_size tokens: lmcache/v1/token_database.py, ChunkedTokenDatabase). Every index and count
// below is in entries. Entry k of a request is keyed by the hash of its last block,
// k * blocks_per_entry + blocks_per_entry - 1, which folds in every block before it (the hashes
// are chained), as LMCache's chunk key hashes the whole prefix up to the chunk's end.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "sim/serving/request.hpp"

namespace vramsim::serving {

class KvOffloadTier {
 public:
  /// A tier of `num_entries` (> 0) entries of `blocks_per_entry` (> 0) blocks each.
  explicit KvOffloadTier(std::int64_t num_entries, std::int64_t blocks_per_entry = 1);

  /// Capacity in entries.
  std::int64_t num_blocks() const { return num_blocks_; }
  std::int64_t blocks_per_entry() const { return blocks_per_entry_; }
  /// The key of entry `k` of `r`: the hash of the entry's last block.
  BlockHash entry_hash(const Request& r, std::int64_t k) const {
    return r.block_hash(k * blocks_per_entry_ + blocks_per_entry_ - 1);
  }
  std::int64_t num_used() const { return static_cast<std::int64_t>(index_.size()); }
  std::int64_t num_evictions() const { return num_evictions_; }
  bool contains(BlockHash h) const { return index_.count(h) != 0; }

  /// Entries first, first + 1, ... (below `last`) of `r` held, counting up to the first miss.
  std::int64_t lookup(const Request& r, std::int64_t first, std::int64_t last) const;

  /// Moves the held ones of `r`'s entries [0, num_entries) to the most-recently-used end, entry
  /// num_entries - 1 first and entry 0 last (so entry 0 becomes the most recent).
  void touch(const Request& r, std::int64_t num_entries);

  /// Moves `h`, if held, to the most-recently-used end.
  void touch_hash(BlockHash h);

  /// Stores `r`'s entries [first, last) that the tier does not hold, in that order, evicting
  /// least-recently-used entries for room. Returns how many were newly stored (0 when all were
  /// held already), or nullopt, changing nothing, when they outnumber the tier's entries.
  std::optional<std::int64_t> store(const Request& r, std::int64_t first, std::int64_t last);

  /// Hashes held, least recently used (next to evict) first: for tests.
  std::vector<BlockHash> lru_order() const;

 private:
  struct Node {
    BlockHash hash = 0;
    std::int64_t prev = -1;  // towards the least recently used end; -1 at the ends
    std::int64_t next = -1;
  };
  void unlink(std::int64_t n);
  void push_back(std::int64_t n);

  std::int64_t num_blocks_;  // capacity in entries
  std::int64_t blocks_per_entry_;
  std::vector<Node> nodes_;                             // materialized as used; ids stable
  std::vector<std::int64_t> spare_;                     // ids of evicted nodes, for reuse
  std::unordered_map<BlockHash, std::int64_t> index_;   // hash -> node (looked up, never walked)
  std::int64_t head_ = -1;                              // least recently used
  std::int64_t tail_ = -1;                              // most recently used
  std::int64_t num_evictions_ = 0;
  std::vector<std::int64_t> missing_;  // store()'s scratch: entry indices not held
};

}  // namespace vramsim::serving
