#include "sim/memory/caching_allocator.hpp"

#include "sim/core/check.hpp"

#include <algorithm>

namespace vramsim::memory {

CachingAllocator::CachingAllocator(CachingAllocatorOptions options) : options_(options) {}

Bytes CachingAllocator::round_size(Bytes request) {
  if (request < kMinBlockSize) return kMinBlockSize;
  return Bytes(ceil_div(request.count(), kMinBlockSize.count()) * kMinBlockSize.count());
}

Bytes CachingAllocator::segment_size(Bytes rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return Bytes(ceil_div(rounded.count(), kRoundLarge.count()) * kRoundLarge.count());
}

CachingAllocator::BlockId CachingAllocator::new_block(const Block& b) {
  if (!recycled_.empty()) {
    const BlockId id = recycled_.back();
    recycled_.pop_back();
    blocks_[static_cast<std::size_t>(id)] = b;
    return id;
  }
  blocks_.push_back(b);
  return static_cast<BlockId>(blocks_.size() - 1);
}

void CachingAllocator::insert_free(BlockId id) {
  const Block& b = blocks_[static_cast<std::size_t>(id)];
  std::vector<FreeKey>& p = pool(b.small);
  const FreeKey key{b.stream, b.size, b.address, id};
  p.insert(std::lower_bound(p.begin(), p.end(), key), key);
}

void CachingAllocator::erase_free(BlockId id) {
  const Block& b = blocks_[static_cast<std::size_t>(id)];
  std::vector<FreeKey>& p = pool(b.small);
  const auto it = std::lower_bound(p.begin(), p.end(), FreeKey{b.stream, b.size, b.address, id});
  VRAMSIM_CHECK(it != p.end() && it->id == id, "block {} is not in its free list", id);
  p.erase(it);
}

std::optional<CachingAllocator::BlockId> CachingAllocator::find_free(bool small,
                                                                     std::int32_t stream,
                                                                     std::int64_t size) {
  std::vector<FreeKey>& p = pool(small);
  const auto it = std::lower_bound(p.begin(), p.end(),
                                   FreeKey{stream, size, std::numeric_limits<std::int64_t>::min()});
  if (it == p.end() || it->stream != stream) return std::nullopt;
  const std::int64_t max_split = options_.max_split_size.count();
  // PyTorch get_free_block: do not hand an oversize block to a small request, nor a much larger
  // oversize block to an oversize request.
  if (size < max_split && it->size >= max_split) return std::nullopt;
  if (size >= max_split && it->size >= size + kLargeBuffer.count()) return std::nullopt;
  const BlockId id = it->id;
  p.erase(it);
  return id;
}

bool CachingAllocator::release_free_segments() {
  bool released = false;
  for (bool small : {true, false}) {
    std::vector<BlockId> whole;
    for (const FreeKey& k : pool(small)) {
      const BlockId id = k.id;
      const Block& b = blocks_[static_cast<std::size_t>(id)];
      if (b.prev < 0 && b.next < 0) whole.push_back(id);
    }
    for (BlockId id : whole) {
      erase_free(id);
      Block& b = blocks_[static_cast<std::size_t>(id)];
      reserved_ -= Bytes(b.size);
      --num_segments_;
      if (segment_log_ != nullptr) {
        segment_log_->push_back({false, b.address, b.size, b.stream});
      }
      b.in_use = false;
      recycled_.push_back(id);
      released = true;
    }
  }
  return released;
}

std::optional<CachingAllocator::BlockId> CachingAllocator::allocate(Bytes request,
                                                                    std::int32_t stream) {
  VRAMSIM_CHECK(request > Bytes(0), "allocation of {} bytes", request.count());
  VRAMSIM_CHECK(stream >= 0, "allocation on stream {}", stream);
  const std::int64_t size = round_size(request).count();
  const bool small = size <= kSmallSize.count();
  std::optional<BlockId> found = find_free(small, stream, size);
  if (!found) {
    const Bytes segment = segment_size(Bytes(size));
    if (options_.capacity && reserved_ + segment > *options_.capacity) {
      ++num_alloc_retries_;
      release_free_segments();
      if (reserved_ + segment > *options_.capacity) return std::nullopt;
    }
    Block b;
    b.address = next_address_;
    b.size = segment.count();
    b.small = small;
    b.stream = stream;
    next_address_ += segment.count();
    reserved_ += segment;
    peak_reserved_ = max(peak_reserved_, reserved_);
    ++num_segments_;
    if (segment_log_ != nullptr) segment_log_->push_back({true, b.address, b.size, stream});
    found = new_block(b);
  }
  const BlockId id = *found;
  Block& blk = blocks_[static_cast<std::size_t>(id)];
  const std::int64_t remaining = blk.size - size;
  const bool split =
      small ? remaining >= kMinBlockSize.count()
            : (size < options_.max_split_size.count() && remaining > kSmallSize.count());
  if (split) {
    Block rest;
    rest.address = blk.address + size;
    rest.size = remaining;
    rest.small = blk.small;
    rest.stream = blk.stream;
    rest.allocated = false;
    rest.prev = id;
    rest.next = blk.next;
    const BlockId rest_id = new_block(rest);
    Block& head = blocks_[static_cast<std::size_t>(id)];  // new_block may reallocate
    if (head.next >= 0) blocks_[static_cast<std::size_t>(head.next)].prev = rest_id;
    head.next = rest_id;
    head.size = size;
    insert_free(rest_id);
  }
  Block& got = blocks_[static_cast<std::size_t>(id)];
  got.allocated = true;
  allocated_ += Bytes(got.size);
  peak_allocated_ = max(peak_allocated_, allocated_);
  return id;
}

void CachingAllocator::free(BlockId id) {
  VRAMSIM_CHECK(id >= 0 && static_cast<std::size_t>(id) < blocks_.size(), "bad block {}", id);
  Block* b = &blocks_[static_cast<std::size_t>(id)];
  VRAMSIM_CHECK(b->in_use && b->allocated, "double free of block {}", id);
  b->allocated = false;
  allocated_ -= Bytes(b->size);
  // Merge with a free next neighbour, then a free previous one (PyTorch try_merge_blocks).
  if (b->next >= 0 && !blocks_[static_cast<std::size_t>(b->next)].allocated) {
    const BlockId n = b->next;
    erase_free(n);
    Block& nb = blocks_[static_cast<std::size_t>(n)];
    b->size += nb.size;
    b->next = nb.next;
    if (nb.next >= 0) blocks_[static_cast<std::size_t>(nb.next)].prev = id;
    nb.in_use = false;
    recycled_.push_back(n);
  }
  if (b->prev >= 0 && !blocks_[static_cast<std::size_t>(b->prev)].allocated) {
    const BlockId p = b->prev;
    erase_free(p);
    Block& pb = blocks_[static_cast<std::size_t>(p)];
    pb.size += b->size;
    pb.next = b->next;
    if (b->next >= 0) blocks_[static_cast<std::size_t>(b->next)].prev = p;
    b->in_use = false;
    recycled_.push_back(id);
    insert_free(p);
    return;
  }
  insert_free(id);
}

void CachingAllocator::empty_cache() { release_free_segments(); }

Bytes CachingAllocator::block_size(BlockId id) const {
  const Block& b = blocks_.at(static_cast<std::size_t>(id));
  VRAMSIM_CHECK(b.in_use && b.allocated, "block {} is not live", id);
  return Bytes(b.size);
}

std::int64_t CachingAllocator::block_address(BlockId id) const {
  const Block& b = blocks_.at(static_cast<std::size_t>(id));
  VRAMSIM_CHECK(b.in_use && b.allocated, "block {} is not live", id);
  return b.address;
}

std::vector<SegmentState> CachingAllocator::segments() const {
  std::vector<SegmentState> out;
  for (const Block& head : blocks_) {
    if (!head.in_use || head.prev >= 0) continue;  // not a segment's first block
    SegmentState seg;
    seg.address = head.address;
    seg.small = head.small;
    seg.stream = head.stream;
    for (const Block* b = &head;;) {
      seg.blocks.push_back({b->address, b->size, b->allocated});
      seg.size += b->size;
      if (b->next < 0) break;
      b = &blocks_[static_cast<std::size_t>(b->next)];
    }
    out.push_back(std::move(seg));
  }
  std::sort(out.begin(), out.end(),
            [](const SegmentState& a, const SegmentState& b) { return a.address < b.address; });
  return out;
}

}  // namespace vramsim::memory
