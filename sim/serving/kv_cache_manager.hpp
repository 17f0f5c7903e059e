// The paged KV cache of one replica, after vLLM V1's block_pool.py / kv_cache_manager.py.
//
//   * The cache is num_blocks blocks of block_size tokens. A request holds a block table (a list
//     of block ids) covering its computed and scheduled tokens; allocation happens as tokens are
//     scheduled, release when the request finishes or is preempted.
//   * Free blocks sit in one queue kept in eviction order (an O(1) intrusive doubly linked list):
//     allocation takes from the head; a freed request's blocks are appended tail block first, so
//     that a request's last blocks (the least likely to be shared) are evicted before its first
//     ones (vLLM: `free_blocks(reversed(blocks))`). Initially the queue is 0, 1, ..., N-1.
//     With prefix caching off no block's identity shows in any result, so freed blocks go to
//     the head instead (last in, first out: cheaper on the host's caches, same counts).
//   * Prefix caching (optional): a block that has been filled completely is registered under its
//     content hash (Request::block_hash). A freed block keeps its hash and stays in the free queue;
//     a later request whose leading blocks have the same hashes takes them (reference count + 1,
//     removed from the free queue) instead of recomputing. A cached block is forgotten only when
//     the allocator takes it from the queue head for new content (an eviction: LRU order).
//     As in vLLM, content computed again while cached elsewhere is registered a second time (no
//     de-duplication); a lookup takes the oldest copy, and a younger one outlives its eviction.
//     Only shared-prefix hashes enter the hash table; a request's own blocks (which only it
//     can hit, after a preemption) are found through the block lists it held before.
//   * Memory follows what is used, not the pool: a block has no metadata until it is first
//     allocated. The never-allocated ("fresh") blocks are the range [materialized, N) of the
//     free queue, in id order; freed blocks join the list around it, after it with prefix
//     caching on (tail) and before it with prefix caching off (head), so the queue order is
//     exactly that of the eager list above. A pool of 2^32 blocks costs nothing until filled.
//   * "Cache full" is a normal result (allocate_slots returns false and changes nothing); the
//     scheduler preempts. Over-freeing or double allocation is a programming error (CHECK).
//   * Swap preemption moves a request's blocks to a host pool of num_host_blocks blocks and back;
//     the caller costs the bytes moved over the host link.
//   * KV offload (num_offload_blocks > 0, prefix caching on): a second, host-memory tier of
//     prefix blocks (kv_offload_tier.hpp), as vLLM's native offloading (OffloadingConnector).
//     Stores happen after compute, not on eviction: every block that a step's scheduled tokens
//     fill is offered to the tier when allocated (vllm/distributed/kv_transfer/kv_connector/v1/
//     offloading/scheduler.py, OffloadingConnectorScheduler._get_reqs_to_store, which passes the
//     blocks completed by num_computed_tokens + num_scheduled_tokens to prepare_store), so a
//     block is in host memory before the GPU cache evicts it. A lookup continues in the tier
//     after the leading GPU hits (get_num_new_matched_tokens(request, num_computed_tokens));
//     the blocks found there are copied host-to-device into new GPU blocks, registered in the
//     GPU prefix cache, and not stored again. The blocks moved are counted per direction and
//     taken by the replica each step (take_offload_traffic) to cost them on the host link.
//   * Disk tier (num_disk_blocks > 0, needs the host tier): a third tier on local disk, as
//     LMCache's local_disk backend (`local_disk`, `max_local_disk_size`) beside its CPU tier.
//     - Write-through, not eviction: LMCache's StorageManager.batched_put hands the same keys
//       to every backend, the CPU one and LocalDiskBackend.batched_submit_put_task alike
//       (lmcache/v1/storage_backend/storage_manager.py), so a block enters the disk when it
//       enters host memory, not when host memory drops it. Here every range offered to the
//       host tier with success is offered to the disk tier too, which writes the blocks it
//       lacks, evicting its own least-recently-used entries for room (submit_put_task's
//       cache_policy.get_evict_candidates loop, lmcache/v1/storage_backend/
//       local_disk_backend.py). A block the host tier evicts stays on disk.
//     - Lookup: block by block after the GPU hits, each found in the host tier or else on disk
//       (LMCache's lookup asks its backends in order, CPU first, for each chunk); the first
//       block in neither ends the hit. Disk hits are touched on disk, the last first.
//     - Load: a disk hit is read into host memory and written back into the host tier
//       (StorageManager.batched_get: a hit outside LocalCPUBackend is put into it), then
//       copied to the GPU like a host hit: disk -> host -> device.
//   * LMCache (offload_backend kLmcache): the same tiers, with LMCacheConnectorV1's semantics
//     (vLLM's vllm/distributed/kv_transfer/kv_connector/v1/lmcache_integration/
//     vllm_v1_adapter.py, read at commit 00bc44ba; LMCache's lmcache/v1/config.py defaults,
//     commit 000620e3):
//     - Chunks: the tiers' entries are chunks of offload_chunk_blocks blocks (chunk_size
//       tokens). Only whole chunks are stored (save_unfull_chunk defaults to False, so
//       ReqMeta.from_request_tracker saves input_token_len // chunk_size * chunk_size tokens),
//       so a hit is a whole number of chunks.
//     - Lookup from token 0: get_num_new_matched_tokens asks LMCache for the prompt's leading
//       chunks it holds (host, else disk, chunk by chunk; the first chunk in neither ends it)
//       and loads what goes beyond vLLM's GPU hits: the request's hit is the larger of the two
//       (a full-prompt hit leaves its last token to compute). E.g. a prompt of 1,000 tokens
//       whose first 700 are stored holds 2 whole chunks of 256: 512 tokens hit.
//     - Load volume: the retrieve masks only the whole chunks below the GPU hits
//       (start_load_kv: masked_token_count = vllm_cached_tokens // chunk_size * chunk_size),
//       so the chunk the GPU hits end in is copied in again in full.
//     - Store: the prompt's whole chunks as its prefill computes them, from the end of the
//       LMCache hit (RequestTracker.num_saved_tokens starts at lmcache_cached_tokens); decode
//       tokens are never stored (save_decode_cache defaults to False). A chunk already held is
//       not stored again (LocalCPUBackend.submit_put_task returns for a held key) and keeps its
//       LRU place; new chunks join the most-recently-used end in order (OrderedDict insertion).
//     - LRU: the chunks a lookup hits are touched last first, so chunk 0 becomes the most
//       recent (LocalCPUBackend.touch_cache walks reversed(keys_in_request)).
//     Costs (replica.hpp, OffloadCost): both blocking, the load before the step and the store
//     after its compute (wait_for_save).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/serving/kv_offload_tier.hpp"
#include "sim/serving/request.hpp"

namespace vramsim::serving {

using BlockId = std::int32_t;

/// Whose offloading the tiers follow: vLLM's native OffloadingConnector or LMCache's
/// LMCacheConnectorV1 (the file comment).
enum class KvOffloadBackend : std::uint8_t { kNative, kLmcache };

struct KvCacheConfig {
  std::int64_t num_blocks = 0;       // GPU blocks of this replica (> 0)
  std::int64_t block_size = 16;      // tokens per block (> 0)
  bool enable_prefix_caching = false;
  Bytes bytes_per_block;             // per device, for swap costs (all layers of one block)
  std::int64_t num_host_blocks = 0;  // host swap space in blocks; 0: swapping unavailable
  /// KV offload tier in host memory, in blocks of block_size tokens; 0: no tier. Needs
  /// enable_prefix_caching (its lookups are by block hash).
  std::int64_t num_offload_blocks = 0;
  /// KV disk tier (LMCache's local_disk), in blocks of block_size tokens; 0: no disk tier.
  /// Needs the offload tier (num_offload_blocks > 0).
  std::int64_t num_disk_blocks = 0;
  KvOffloadBackend offload_backend = KvOffloadBackend::kNative;
  /// The tiers' entry in blocks (> 0): 1 for native; LMCache's chunk_size / block_size.
  /// num_offload_blocks and num_disk_blocks are whole multiples of it.
  std::int64_t offload_chunk_blocks = 1;
};

struct KvCacheStats {
  std::int64_t prefix_query_tokens = 0;  // prompt tokens looked up (admissions, re-admissions)
  std::int64_t prefix_hit_tokens = 0;    // of those, found cached
  std::int64_t num_evictions = 0;        // cached blocks overwritten with new content
  std::int64_t num_blocks_swapped_out = 0;
  std::int64_t num_blocks_swapped_in = 0;
  std::int64_t peak_used_blocks = 0;     // maximum of num_used_blocks() over the run
  // KV offload tier (all zero without one).
  std::int64_t offload_hit_tokens = 0;       // of prefix_hit_tokens, found in the host tier
  std::int64_t num_blocks_offload_loaded = 0;  // host -> GPU copies of tier hits
  std::int64_t num_blocks_offload_stored = 0;  // GPU -> host copies of newly filled blocks
  std::int64_t num_offload_evictions = 0;      // tier entries dropped for newer ones
  // KV disk tier (all zero without one). offload_hit_tokens then counts host-tier hits only,
  // and num_blocks_offload_loaded every host -> GPU copy (disk hits pass through host memory).
  std::int64_t disk_hit_tokens = 0;          // of prefix_hit_tokens, found on disk
  std::int64_t num_blocks_disk_loaded = 0;   // disk -> host reads of disk hits
  std::int64_t num_blocks_disk_stored = 0;   // host -> disk writes (write-through)
  std::int64_t num_disk_evictions = 0;       // disk entries dropped for newer ones
};

/// Blocks copied between the GPU and the offload tier since the last take_offload_traffic().
struct OffloadTraffic {
  std::int64_t blocks_loaded = 0;  // host to device
  std::int64_t blocks_stored = 0;  // device to host
  std::int64_t blocks_disk_read = 0;     // disk to host (then in blocks_loaded too)
  std::int64_t blocks_disk_written = 0;  // host to disk
};

class KvCacheManager {
 public:
  explicit KvCacheManager(const KvCacheConfig& config);

  const KvCacheConfig& config() const { return config_; }

  /// Tokens of `r`'s leading full blocks found in the cache (prefix caching on; 0 otherwise),
  /// capped so that at least one token remains to compute (vLLM: a full hit still recomputes
  /// the last token to produce logits). With an offload tier, the blocks after the leading GPU
  /// hits that the tier holds count too. Reads only; does not count towards stats.
  std::int64_t cached_prefix_tokens(const Request& r) const;

  /// Adds a lookup of `query_tokens` prompt tokens with `hit_tokens` found to the hit-rate stats.
  void record_prefix_lookup(std::int64_t query_tokens, std::int64_t hit_tokens);

  /// vLLM's allocate_slots: makes `r` hold blocks for
  ///   r.num_computed_tokens + num_new_computed_tokens + num_new_tokens
  /// tokens, where num_new_computed_tokens (a multiple of block_size, from
  /// cached_prefix_tokens) is taken from the cache by reference before new blocks are drawn
  /// (those found in the offload tier get new blocks, loaded from host memory).
  /// Returns false, changing nothing, when the free queue (evictable cached blocks included)
  /// is too short. With prefix caching on, every block that the scheduled tokens fill completely
  /// is registered under its hash (also when another block already holds that hash), and with
  /// an offload tier offered to it.
  /// `full_sequence_tokens` > 0 (vLLM's full_sequence_must_fit, at admission only): refuse
  /// unless the free queue could hold blocks for that many tokens, while allocating only what
  /// the scheduled tokens need.
  bool allocate_slots(const Request& r, std::int64_t num_new_tokens,
                      std::int64_t num_new_computed_tokens = 0,
                      std::int64_t full_sequence_tokens = 0);

  /// Releases all of r's GPU blocks (finish, or preemption by recompute). Blocks whose
  /// reference count drops to zero join the free queue tail, the request's last block first,
  /// keeping their hashes. `r` must hold a table (CHECK: freeing twice is a bug).
  void free(const Request& r);

  /// Swap preemption: moves r's blocks to the host pool and frees them on the GPU. Returns the
  /// bytes copied (blocks * bytes_per_block), or nullopt, changing nothing, when the host pool
  /// lacks room (the caller then falls back to recompute).
  std::optional<Bytes> swap_out(const Request& r);

  /// Brings a swapped-out request's blocks back to the GPU, into fresh blocks from the queue
  /// head (no prefix reuse). With prefix caching on, its full computed blocks are registered
  /// again (beside any copy cached elsewhere). Returns the bytes copied, or nullopt,
  /// changing nothing, when GPU blocks are short.
  std::optional<Bytes> swap_in(const Request& r);

  std::int64_t num_blocks() const { return config_.num_blocks; }
  std::int64_t num_free_blocks() const { return num_free_; }   // in the free queue (cached or not)
  std::int64_t num_used_blocks() const { return config_.num_blocks - num_free_; }   // referenced by at least one request
  std::int64_t num_cached_blocks() const; // holding a registered hash (used or free)
  std::int64_t num_host_blocks_used() const;
  std::int64_t num_blocks_of(RequestId id) const;  // GPU blocks in r's table
  /// Fraction of GPU blocks in use, in [0, 1].
  double usage() const;
  const KvCacheStats& stats() const;
  /// The blocks moved to and from the offload tier since the last call, then zero.
  OffloadTraffic take_offload_traffic();
  /// The offload tier; nullptr without one. For tests.
  const KvOffloadTier* offload_tier() const { return tier_ ? &*tier_ : nullptr; }
  /// The disk tier; nullptr without one. For tests.
  const KvOffloadTier* disk_tier() const { return disk_ ? &*disk_ : nullptr; }

  /// Ids in the free queue, head (next to evict) first: for tests.
  std::vector<BlockId> free_queue() const;
  /// Reference count of GPU block `b`: for tests.
  std::int32_t ref_count(BlockId b) const;
  /// Whether GPU block `b` holds a registered hash: for tests.
  bool is_cached(BlockId b) const;
  /// GPU block table of `id` (empty if it holds none): for tests.
  std::vector<BlockId> block_table(RequestId id) const;
  /// O(num_blocks + tables) self-check of the free queue, reference counts, hash map and
  /// counters; aborts through VRAMSIM_CHECK on a violation. For tests and debug builds.
  void check_invariants() const;

 private:
  struct Block {
    std::int32_t ref_count = 0;
    BlockId prev = -1;  // free-queue links; -1 at the ends or when not queued
    BlockId next = -1;
    bool queued = false;
    bool hashed = false;
    bool shared = false;  // hashed under a shared-prefix hash, in the hash table
    /// Hashed and shared: its hash. Hashed and not shared: its registration among the
    /// requests' own blocks (1, 2, ...; see private_copies_).
    std::uint64_t key = 0;
  };
  /// A request's own block at one index as it was registered: still cached while the block
  /// holds that registration.
  struct PrivateCopy {
    BlockId block = -1;
    std::uint64_t registration = 0;  // 0: the index was not registered privately
  };
  /// The block lists a request held before each recompute or swap preemption, oldest first.
  using PrivateCopies = std::vector<std::vector<PrivateCopy>>;
  /// A request's GPU blocks, plus how many of its leading blocks have been offered to the
  /// prefix cache (registered, or found already cached elsewhere), so that a decode step
  /// looks only at the block it may have just filled.
  struct Table {
    std::vector<BlockId> blocks;
    std::int64_t num_hashed = 0;
    std::int64_t num_offered = 0;  // leading blocks offered to the offload tier
  };
  using TableMap = std::unordered_map<RequestId, Table>;

  void queue_remove(BlockId b);
  void queue_push_back(BlockId b);
  void queue_push_front(BlockId b);
  BlockId queue_pop_front();
  /// Gives the next fresh block its metadata (blocks_.size() becomes its id).
  BlockId materialize();
  /// Doubles the prefix-cache hash table, keeping every entry's order along its probe run.
  void grow_hash_table();
  /// Takes a block from the free-queue head for new content (evicting its hash).
  BlockId take_new_block();
  /// Takes one more reference to a cached block (vLLM's touch).
  void touch(BlockId b);
  /// Drops one reference from each block of `blocks`, queueing those reaching zero, last first.
  void release(const std::vector<BlockId>& blocks);
  /// Registers the hashes of table blocks [t.num_hashed, num_full) of request `r`.
  void cache_full_blocks(const Request& r, Table& t, std::int64_t num_full);
  /// Offers table blocks [t.num_offered, num_full) of `r` to the offload tier (vLLM's
  /// prepare_store; on success the request's prefix is touched).
  void offload_full_blocks(const Request& r, Table& t, std::int64_t num_full);
  /// Disk tier: whether entry `i` of `r` is in the host tier or else on disk.
  bool in_host_or_disk(const Request& r, std::int64_t i) const;
  /// LMCache: the leading chunks of `r`'s prompt held in the host tier or on disk.
  std::int64_t lmcache_hit_chunks(const Request& r) const;
  /// LMCache's admission with `num_hits` blocks hit, `num_gpu_hits` of them on the GPU.
  void lmcache_admit(const Request& r, Table& t, std::int64_t num_hits,
                     std::int64_t num_gpu_hits);
  void forget_hash(BlockId b);
  std::size_t hash_home(BlockHash h) const;
  /// Block registered under `h` in the hash table (shared-prefix hashes), or -1.
  BlockId find_cached(BlockHash h) const;
  /// The block caching block `index` of `r`, or -1: the hash table below the request's shared
  /// prefix, its private copies after it.
  BlockId find_block(const Request& r, std::int64_t index) const;
  /// Keeps the private registrations of the table `t` of `r`, which is being released, for
  /// its readmission (dropped instead when `r` has finished).
  void keep_private_copies(const Request& r, const Table& t);
  /// A new, empty table for `r` (recycling the block list of a finished request).
  Table& new_table(const Request& r);
  void drop_table(TableMap::iterator it);
  void note_usage();

  /// Block ids are int32 (half the size of a table entry): at most this many distinct blocks
  /// are ever materialized; past it allocation throws ConfigError naming the limit.
  static constexpr std::int64_t kMaxMaterializedBlocks = std::numeric_limits<BlockId>::max();
  static constexpr std::int64_t kInitialBlockReserve = std::int64_t{1} << 16;

  KvCacheConfig config_;
  /// Prefix caching on: fresh blocks are taken before the listed free ones (they sit at the
  /// queue head); off: after them (freed blocks are pushed in front of the fresh range).
  bool fresh_first_ = false;
  std::vector<Block> blocks_;  // materialized blocks, ids 0 .. size-1
  BlockId head_ = -1;
  BlockId tail_ = -1;
  std::int64_t num_free_ = 0;
  std::int64_t num_cached_ = 0;
  std::int64_t num_host_used_ = 0;
  // Prefix cache: hash -> blocks holding it (one entry per cached block, copies of one hash in
  // insertion order along the probe run), an open-addressing table with linear probing
  // (capacity a power of two >= 2 * its entries, so at most half full; it doubles as entries
  // are added, and is empty when prefix caching is off). NOTE: std::unordered_map
  // cost ~3 cache misses per register/evict pair and dominated prefix-caching runs; this costs
  // about one.
  struct HashSlot {
    BlockHash hash = 0;
    BlockId block = -1;  // -1: empty
  };
  std::vector<HashSlot> hash_slots_;
  std::uint64_t hash_mask_ = 0;
  int hash_shift_ = 64;
  std::int64_t num_shared_entries_ = 0;
  // A block after a request's shared prefix hashes to a value unique to the request
  // (Request::block_hash), so only that request, readmitted after a preemption, can find it.
  // Such blocks are registered by marking the block (hashed, registration) instead of entering
  // the hash table: what the table would answer for them is the oldest copy still holding its
  // registration among the request's previous block lists (private_copies_, kept only while
  // the request is unfinished). NOTE: registering and evicting them in the table cost a cache
  // miss each and grew the table with every materialized block: a third of a plan-serve run.
  std::uint64_t num_registrations_ = 0;
  std::unordered_map<RequestId, PrivateCopies> private_copies_;
  TableMap tables_;
  // Block lists of finished tables, reused so that a new request's table is one map node
  // allocation and its decode steps never reallocate.
  std::vector<std::vector<BlockId>> spare_block_lists_;
  std::unordered_map<RequestId, std::int64_t> swapped_;  // host blocks per request
  KvCacheStats stats_;
  std::optional<KvOffloadTier> tier_;
  std::optional<KvOffloadTier> disk_;
  OffloadTraffic traffic_;
};

}  // namespace vramsim::serving
