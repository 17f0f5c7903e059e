#include "sim/serving/scheduler.hpp"

#include "sim/core/check.hpp"


namespace vramsim::serving {

std::string_view to_string(PreemptionMode m) { return name_of(kPreemptionModes, m); }
std::optional<PreemptionMode> preemption_mode_from_string(std::string_view text) {
  return parse_name(kPreemptionModes, text);
}

void StepPlan::clear() {
  items.clear();
  shape.prefills.clear();
  shape.num_decodes = 0;
  shape.decode_context_tokens = 0;
  shape.num_lora_tokens = 0;
  shape.num_adapters = 0;
  adapters.clear();
  num_preempted = 0;
  tokens_dropped = 0;
  tokens_from_cache = 0;
  swap_out = Bytes(0);
  swap_in = Bytes(0);
}

SchedulerContext::SchedulerContext(ReplicaQueues& queues, KvCacheManager& kv,
                                   const SchedulerLimits& limits, StepPlan& plan)
    : queues_(queues), kv_(kv), limits_(limits), plan_(plan) {}

Request* SchedulerContext::preempt_last_running(std::size_t first_candidate) {
  auto& running = queues_.running;
  for (std::size_t k = running.size(); k > first_candidate; --k) {
    Request* victim = running[k - 1];
    if (victim->in_flight) continue;
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(k - 1));
    ++victim->num_preemptions;
    ++plan_.num_preempted;
    if (limits_.preemption == PreemptionMode::kSwap) {
      if (const auto bytes = kv_.swap_out(*victim)) {
        plan_.swap_out += *bytes;
        victim->state = RequestState::kSwapped;
        queues_.swapped.push_back(victim);
        return victim;
      }
    }
    // Recompute (vLLM V1): drop the KV, restart from token zero, first in line but behind
    // the waiting requests that hold blocks (they need no new block, so they can always be
    // admitted).
    kv_.free(*victim);
    plan_.tokens_dropped += victim->num_computed_tokens;
    victim->num_computed_tokens = 0;
    victim->state = RequestState::kWaiting;
    queues_.wait_behind_kv_holders(*victim, kv_);
    return victim;
  }
  return nullptr;
}

bool SchedulerContext::admit_front_waiting(std::int64_t max_new, bool allow_chunk,
                                           bool whole_sequence) {
  VRAMSIM_DCHECK(!queues_.waiting.empty(), "admit from an empty queue");
  Request& r = *queues_.waiting.front();
  std::int64_t cached = 0;
  if (r.num_computed_tokens == 0 && kv_.config().enable_prefix_caching) {
    cached = kv_.cached_prefix_tokens(r);
  }
  const std::int64_t remaining = r.num_tokens() - r.num_computed_tokens - cached;
  VRAMSIM_DCHECK(remaining > 0, "a waiting request with nothing to compute");
  std::int64_t num_new = limits_.cut_long_prefill(remaining);
  if (max_new > 0 && num_new > max_new) {
    if (!allow_chunk) return false;
    num_new = max_new;
  }
  // A request that already holds its blocks (a disaggregated decode instance reserved them
  // before its KV arrived: Replica::reserve_remote_kv) passed the whole-sequence test then.
  const bool full_test = limits_.reserve_full_isl && kv_.num_blocks_of(r.id) == 0;
  if (whole_sequence) {
    // vLLM V0's SelfAttnBlockSpaceManager (vllm/core/block_manager_v2.py, later renamed
    // block_manager.py): can_allocate counts the blocks of every token of the sequence, cached
    // or not, and wants watermark_blocks free beside them; allocate then builds the block
    // table of all its tokens (the free count here holds evictable cached blocks too).
    const std::int64_t required = ceil_div(r.num_tokens(), kv_.config().block_size);
    if (kv_.num_free_blocks() - required < limits_.watermark_blocks) return false;
    if (!kv_.allocate_slots(r, r.num_tokens() - r.num_computed_tokens - cached, cached)) {
      return false;
    }
  } else if (!kv_.allocate_slots(r, num_new, cached, full_test ? r.num_tokens() : 0)) {
    return false;
  }
  if (kv_.config().enable_prefix_caching && r.num_computed_tokens == 0) {
    kv_.record_prefix_lookup(r.num_tokens(), cached);
    if (r.num_preemptions == 0) r.num_cached_prefix_tokens = cached;
  }
  r.num_computed_tokens += cached;
  plan_.tokens_from_cache += cached;
  queues_.waiting.pop_front();
  r.state = RequestState::kRunning;
  queues_.running.push_back(&r);
  add_to_plan(r, num_new);
  return true;
}

Request* SchedulerContext::resume_front_swapped() {
  if (queues_.swapped.empty()) return nullptr;
  Request* r = queues_.swapped.front();
  const auto bytes = kv_.swap_in(*r);
  if (!bytes) return nullptr;
  plan_.swap_in += *bytes;
  queues_.swapped.pop_front();
  r->state = RequestState::kRunning;
  queues_.running.push_back(r);
  return r;
}

BatchScheduler::~BatchScheduler() = default;

}  // namespace vramsim::serving
