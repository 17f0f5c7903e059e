#include "sim/serving/kv_offload_tier.hpp"

#include "sim/core/check.hpp"

namespace vramsim::serving {
namespace {

std::size_t to_size(std::int64_t n) { return static_cast<std::size_t>(n); }

}  // namespace

KvOffloadTier::KvOffloadTier(std::int64_t num_entries, std::int64_t blocks_per_entry)
    : num_blocks_(num_entries), blocks_per_entry_(blocks_per_entry) {
  VRAMSIM_CHECK(num_entries > 0, "an offload tier needs at least 1 entry, got {}", num_entries);
  VRAMSIM_CHECK(blocks_per_entry > 0, "an offload tier's entry needs at least 1 block, got {}",
                blocks_per_entry);
}

std::int64_t KvOffloadTier::lookup(const Request& r, std::int64_t first,
                                   std::int64_t last) const {
  std::int64_t i = first;
  while (i < last && contains(entry_hash(r, i))) ++i;
  return i - first;
}

void KvOffloadTier::touch(const Request& r, std::int64_t num_entries) {
  for (std::int64_t i = num_entries - 1; i >= 0; --i) {
    const auto it = index_.find(entry_hash(r, i));
    if (it == index_.end() || it->second == tail_) continue;
    unlink(it->second);
    push_back(it->second);
  }
}

void KvOffloadTier::touch_hash(BlockHash h) {
  const auto it = index_.find(h);
  if (it == index_.end() || it->second == tail_) return;
  unlink(it->second);
  push_back(it->second);
}

std::optional<std::int64_t> KvOffloadTier::store(const Request& r, std::int64_t first,
                                                 std::int64_t last) {
  VRAMSIM_CHECK(0 <= first && first <= last, "offload store of entries [{}, {})", first, last);
  // NOTE: a request's block hashes are chained (each folds in its predecessor's), so the
  // hashes of one range are distinct: each missing one is added once.
  missing_.clear();
  for (std::int64_t i = first; i < last; ++i) {
    if (!contains(entry_hash(r, i))) missing_.push_back(i);
  }
  const auto num_new = static_cast<std::int64_t>(missing_.size());
  if (num_new == 0) return std::int64_t{0};
  if (num_new > num_blocks_) return std::nullopt;
  // As vLLM's prepare_store: the missing hashes are listed first, then room is made. A held
  // hash of this range may be evicted for it (it is then simply not held, as in vLLM).
  for (std::int64_t excess = num_used() + num_new - num_blocks_; excess > 0; --excess) {
    const std::int64_t victim = head_;
    VRAMSIM_CHECK(victim != -1, "offload tier over-full with an empty LRU list");
    unlink(victim);
    index_.erase(nodes_[to_size(victim)].hash);
    spare_.push_back(victim);
    ++num_evictions_;
  }
  for (const std::int64_t i : missing_) {
    const BlockHash h = entry_hash(r, i);
    std::int64_t n = 0;
    if (!spare_.empty()) {
      n = spare_.back();
      spare_.pop_back();
    } else {
      n = static_cast<std::int64_t>(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[to_size(n)].hash = h;
    index_.emplace(h, n);
    push_back(n);
  }
  VRAMSIM_CHECK(num_used() <= num_blocks_, "offload tier holds {} of {} blocks", num_used(),
                num_blocks_);
  return num_new;
}

std::vector<BlockHash> KvOffloadTier::lru_order() const {
  std::vector<BlockHash> out;
  out.reserve(index_.size());
  for (std::int64_t n = head_; n != -1; n = nodes_[to_size(n)].next) {
    out.push_back(nodes_[to_size(n)].hash);
  }
  return out;
}

void KvOffloadTier::unlink(std::int64_t n) {
  Node& node = nodes_[to_size(n)];
  if (node.prev != -1) nodes_[to_size(node.prev)].next = node.next; else head_ = node.next;
  if (node.next != -1) nodes_[to_size(node.next)].prev = node.prev; else tail_ = node.prev;
  node.prev = node.next = -1;
}

void KvOffloadTier::push_back(std::int64_t n) {
  Node& node = nodes_[to_size(n)];
  node.prev = tail_;
  node.next = -1;
  if (tail_ != -1) nodes_[to_size(tail_)].next = n; else head_ = n;
  tail_ = n;
}

}  // namespace vramsim::serving
