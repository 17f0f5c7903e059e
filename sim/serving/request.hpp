// A serving request: what the trace says (arrival, prompt and output lengths, shared-prefix
// block hashes) and how far the simulation has taken it.
//
// Progress follows vLLM V1's single counter: a request has num_tokens() = prompt + generated
// tokens, of which num_computed_tokens have their KV in the cache. A step schedules
// num_tokens() - num_computed_tokens new tokens at most (a prefill chunk, or 1 for a decode);
// when a step leaves num_computed_tokens == num_tokens(), a new token is sampled. A request
// preempted by recompute drops to num_computed_tokens = 0 and recomputes prompt and generated
// tokens as one prefill.
//
// Block content hashes (prefix caching): KV block i covers tokens [i*B, (i+1)*B) for block size
// B. The prompt's first prefix_hashes.size() full blocks carry chained content hashes that other
// requests may share (from Mooncake hash_ids, or a synthetic shared prefix); every later block
// hashes to a value unique to this request (its uid), so it can only be hit by the request
// itself after a recompute preemption.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"

namespace vramsim::serving {

using RequestId = std::int64_t;
using BlockHash = std::uint64_t;

/// One request as a trace gives it, before it enters the simulator.
struct TraceRecord {
  SimTime arrival;                  // from the trace's start (or a window's start), never negative
  std::int64_t prompt_tokens = 0;   // > 0
  std::int64_t output_tokens = 0;   // > 0
  /// Content ids of the prompt's leading blocks of `hash_block_tokens` tokens each (Mooncake
  /// `hash_ids`: equal ids mean equal content and equal prefix before it). Empty: no sharing.
  std::vector<std::uint64_t> hash_ids;
  std::int64_t hash_block_tokens = 0;  // tokens per hash_ids entry (Mooncake: 512)
  std::int64_t line = 0;               // 1-based line in the source file; 0 for synthetic
  /// The LoRA adapter the request names (1..N); 0: the base model. Its block hashes carry
  /// it, as vLLM's block-hash extra keys carry the LoRA name, so two adapters never share a
  /// prefix block.
  std::int32_t adapter = 0;
};

/// Chained content hashes of the KV blocks of `block_size` tokens that a record's hash_ids
/// cover completely: block i's hash folds in the hash of block i-1, the hash id covering block
/// i and i's offset inside that hash block. Only blocks lying wholly inside the prompt and
/// inside hash-id coverage get a hash.
std::vector<BlockHash> prefix_block_hashes(const TraceRecord& record, std::int64_t block_size);

enum class RequestState : std::uint8_t { kWaiting, kRunning, kSwapped, kFinished };

struct Request {
  RequestId id = 0;
  std::uint64_t uid = 0;  // seeds the hashes of non-shared blocks
  SimTime arrival;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
  std::vector<BlockHash> prefix_hashes;  // see prefix_block_hashes()
  std::int64_t trace_line = 0;           // TraceRecord::line
  std::int32_t adapter = 0;              // TraceRecord::adapter (0: the base model)

  RequestState state = RequestState::kWaiting;
  std::int64_t num_computed_tokens = 0;
  std::int64_t num_generated = 0;
  std::int64_t num_cached_prefix_tokens = 0;  // prefix-cache hit at first admission
  std::int32_t num_preemptions = 0;
  std::int32_t replica = -1;
  bool first_scheduled_set = false;
  bool in_flight = false;  // part of a batch that has not completed (pipeline parallelism)
  /// Speculative decoding: tokens owed but not yet emitted, in [0, 1) between steps (each
  /// decode step adds the expected tokens per step and emits the whole part).
  double speculative_credit = 0.0;
  /// Disaggregated prefill/decode (serving_simulation.hpp, Disaggregation): the output tokens
  /// the client asked for while the prefill instance runs the request with output_tokens = 1
  /// (0: not disaggregated), and when its prefill instance finished it.
  std::int64_t pd_output_tokens = 0;
  SimTime prefill_finish;
  SimTime first_scheduled;
  SimTime first_token;
  SimTime last_token;
  SimTime finish;

  std::int64_t num_tokens() const { return prompt_tokens + num_generated; }
  bool prefill_done() const { return num_computed_tokens >= prompt_tokens; }
  bool finished() const { return state == RequestState::kFinished; }
  /// Content hash of KV block `index` (0-based) of this request.
  BlockHash block_hash(std::int64_t index) const;
};

}  // namespace vramsim::serving
