#include "sim/serving/request.hpp"

#include "sim/core/check.hpp"

#include <algorithm>

namespace vramsim::serving {
namespace {

// splitmix64's finaliser: a strong 64-bit mix, stable across platforms.
std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t combine(std::uint64_t seed, std::uint64_t v) { return mix64(seed ^ mix64(v)); }

}  // namespace

std::vector<BlockHash> prefix_block_hashes(const TraceRecord& record, std::int64_t block_size) {
  VRAMSIM_CHECK(block_size > 0, "block size {} must be positive", block_size);
  std::vector<BlockHash> hashes;
  if (record.hash_ids.empty() || record.hash_block_tokens <= 0) return hashes;
  const std::int64_t covered = std::min<std::int64_t>(
      record.prompt_tokens,
      static_cast<std::int64_t>(record.hash_ids.size()) * record.hash_block_tokens);
  const std::int64_t num_blocks = covered / block_size;
  hashes.reserve(static_cast<std::size_t>(num_blocks));
  // An adapter's blocks hash apart from the base model's and other adapters' (vLLM's
  // generate_block_hash_extra_keys adds the LoRA name to every block's key).
  std::uint64_t parent = 0x5eed'b10c'0000'0001ULL;
  if (record.adapter != 0) parent = combine(parent, static_cast<std::uint64_t>(record.adapter));
  for (std::int64_t i = 0; i < num_blocks; ++i) {
    // A KV block straddling two hash blocks depends on both; its last token decides coverage.
    const std::int64_t first_token = i * block_size;
    const std::int64_t last_token = first_token + block_size - 1;
    const auto first_id = static_cast<std::size_t>(first_token / record.hash_block_tokens);
    const auto last_id = static_cast<std::size_t>(last_token / record.hash_block_tokens);
    std::uint64_t h = combine(parent, record.hash_ids[first_id]);
    if (last_id != first_id) h = combine(h, record.hash_ids[last_id]);
    h = combine(h, static_cast<std::uint64_t>(first_token % record.hash_block_tokens));
    hashes.push_back(h);
    parent = h;
  }
  return hashes;
}

BlockHash Request::block_hash(std::int64_t index) const {
  VRAMSIM_DCHECK(index >= 0, "negative block index");
  if (index < static_cast<std::int64_t>(prefix_hashes.size())) {
    return prefix_hashes[static_cast<std::size_t>(index)];
  }
  // Unique to this request: never equal to a shared hash except by a 2^-64 accident.
  return combine(combine(0x0dd5'eed0'0000'0002ULL, uid), static_cast<std::uint64_t>(index));
}

}  // namespace vramsim::serving
