// Batch schedulers: which requests a replica runs in its next step, and how many tokens of each.
//
// A scheduler is an open policy family (STYLE.md 6.3): an interface, one file per policy under
// schedulers/, and a descriptor row in register_builtin_schedulers(). It decides through a
// SchedulerContext, which owns the mechanics every policy shares (KV allocation with its fast
// path, preemption by recompute or swap, admission) so that policies stay short and agree on
// accounting. Policies never touch the event queue, the clock or the recorder.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/enum_table.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/serving/execution_time_model.hpp"
#include "sim/serving/kv_cache_manager.hpp"
#include "sim/serving/policy_registry.hpp"
#include "sim/serving/request.hpp"

namespace vramsim::serving {

enum class PreemptionMode { kRecompute, kSwap };
inline constexpr auto kPreemptionModes = enum_table<PreemptionMode>({
    {PreemptionMode::kRecompute, "recompute",
     "free the victim's KV; it recomputes prompt and output (vLLM V1)"},
    {PreemptionMode::kSwap, "swap", "copy the victim's KV to host memory over PCIe and back"},
});
static_assert(covers_every_enumerator(kPreemptionModes) && names_are_unique(kPreemptionModes));
std::string_view to_string(PreemptionMode m);
std::optional<PreemptionMode> preemption_mode_from_string(std::string_view text);

/// The engine limits every scheduler honours (vLLM's names).
struct SchedulerLimits {
  std::int64_t max_num_seqs = 256;
  std::int64_t max_num_batched_tokens = 8192;
  bool enable_chunked_prefill = true;
  /// Sarathi's chunk size (tokens per step); 0 for schedulers that do not use it.
  std::int64_t chunk_size = 0;
  PreemptionMode preemption = PreemptionMode::kRecompute;
  /// vLLM's --long-prefill-token-threshold: at most this many prompt tokens of one request per
  /// step (Scheduler.schedule cuts num_new_tokens to it, running and waiting alike); 0: off.
  std::int64_t long_prefill_token_threshold = 0;
  /// Speculative decoding (sim/serving/speculative.hpp): draft tokens verified per decoding
  /// sequence and step, k. Each decode then takes KV slots for 1 + k tokens and 1 + k tokens
  /// of the step's budget, as vLLM's scheduler counts num_tokens_with_spec; 0: off.
  std::int64_t num_lookahead_tokens = 0;
  /// vLLM's scheduler_reserve_full_isl (on by default in 0.19): a waiting or preempted request
  /// is admitted only when blocks for its whole current sequence (prompt and output so far,
  /// less its cached prefix) are free, not just for its first chunk; otherwise admission stops
  /// for this step, and nothing running is preempted for it (vllm/v1/core/sched/scheduler.py,
  /// allocate_slots(..., full_sequence_must_fit=True); vllm-project/vllm PR #37307).
  bool reserve_full_isl = false;
  /// vLLM's --max-loras with --enable-lora: the most distinct adapters the requests of one
  /// step may name (vllm/v1/core/sched/scheduler.py, scheduled_loras); 0: LoRA off.
  std::int64_t max_loras = 0;
  /// vLLM V0's block-manager watermark, in blocks: a waiting request is admitted only when
  /// the blocks of its whole sequence leave at least this many free, and one whose sequence
  /// would leave fewer even in an empty cache is rejected (vllm/core/block_manager.py,
  /// can_allocate, watermark_blocks = int(0.01 * num_gpu_blocks)). 0: off, as in V1, which
  /// has no watermark (vllm_v0_scheduler.cpp, vllm_v0_watermark_blocks).
  std::int64_t watermark_blocks = 0;
  /// A request's new tokens this step, cut to the long-prefill threshold.
  std::int64_t cut_long_prefill(std::int64_t num_new) const {
    return long_prefill_token_threshold > 0 && num_new > long_prefill_token_threshold
               ? long_prefill_token_threshold
               : num_new;
  }
};

/// One request's share of a step.
struct ScheduledItem {
  Request* request = nullptr;
  std::int64_t num_new_tokens = 0;  // tokens computed this step (1 for a decode)
};

/// What a scheduler decided for one step.
struct StepPlan {
  std::vector<ScheduledItem> items;
  BatchShape shape;
  std::int64_t num_preempted = 0;
  std::int64_t tokens_dropped = 0;     // computed tokens lost to recompute preemptions
  std::int64_t tokens_from_cache = 0;  // prompt tokens taken from the prefix cache
  Bytes swap_out;  // bytes moved to the host by this step's preemptions
  Bytes swap_in;   // bytes brought back for this step's resumed requests
  std::vector<std::int32_t> adapters;  // distinct LoRA adapters of the items, in plan order
  void clear();
  bool empty() const { return items.empty(); }
};

/// A replica's queues. waiting is FCFS (preempted requests return to its front); running is in
/// admission order (the last admitted is preempted first); swapped is FCFS.
struct ReplicaQueues {
  std::deque<Request*> waiting;
  std::vector<Request*> running;
  std::deque<Request*> swapped;

  /// Puts `r` in the waiting queue behind the waiting requests that already hold KV blocks (a
  /// disaggregated decode instance's, whose KV came from a prefill instance) and ahead of the
  /// rest: vLLM puts those back at the head of its waiting queue at the end of every
  /// schedule(), so they go before fresh and preempted requests.
  void wait_behind_kv_holders(Request& r, const KvCacheManager& kv) {
    auto at = waiting.begin();
    while (at != waiting.end() && kv.num_blocks_of((*at)->id) > 0) ++at;
    waiting.insert(at, &r);
  }
};

class SchedulerContext {
 public:
  SchedulerContext(ReplicaQueues& queues, KvCacheManager& kv, const SchedulerLimits& limits,
                   StepPlan& plan);

  ReplicaQueues& queues() { return queues_; }
  KvCacheManager& kv() { return kv_; }
  const SchedulerLimits& limits() const { return limits_; }
  StepPlan& plan() { return plan_; }

  /// Tokens `r` could compute now: num_tokens() - num_computed_tokens.
  static std::int64_t pending_tokens(const Request& r) {
    return r.num_tokens() - r.num_computed_tokens;
  }

  /// Allocates KV for `num_new` more tokens of a running request (fast path: a token that fits
  /// in the request's last block and completes no block needs no call into the manager).
  bool allocate_running(Request& r, std::int64_t num_new) {
    if (limits_.num_lookahead_tokens > 0 && is_decode(r, num_new)) {
      return kv_.allocate_slots(r, num_new + limits_.num_lookahead_tokens);
    }
    const std::int64_t block = kv_.config().block_size;
    const std::int64_t computed = r.num_computed_tokens;
    // Fast path: a decode into the partly filled last block that does not complete it (a block
    // completed under prefix caching must be registered by the manager).
    if (num_new == 1 && computed % block != 0 &&
        (!kv_.config().enable_prefix_caching || (computed + 1) % block != 0)) {
      return true;
    }
    return kv_.allocate_slots(r, num_new);
  }

  /// Preempts the most recently admitted running request at index >= `first_candidate` of
  /// running that is not in flight, by recompute (back to the front of waiting, KV freed,
  /// progress reset) or swap (blocks to the host pool; recompute when the host pool is full).
  /// Returns it, or nullptr when no request can be preempted. Requests before
  /// `first_candidate` (already in this step's plan) are never chosen.
  Request* preempt_last_running(std::size_t first_candidate);

  /// Looks up `r`'s cached prefix (prefix caching), and tries to allocate its first chunk of
  /// at most `max_new` tokens (0: no chunking; the whole remainder must fit). On success moves r
  /// from waiting (its front) to running, adds it to the plan and returns true.
  /// With `whole_sequence` (vLLM V0's block manager, which allocates the blocks of the whole
  /// current sequence at admission, chunked or not) the blocks of all its tokens are allocated
  /// and limits().watermark_blocks must stay free beside them.
  bool admit_front_waiting(std::int64_t max_new, bool allow_chunk, bool whole_sequence = false);

  /// Tries to bring the first swapped request back onto the GPU (its swap-in bytes are added to
  /// the plan). On success it joins the back of running, not yet the plan, and is returned;
  /// nullptr when GPU blocks are short or nothing is swapped.
  Request* resume_front_swapped();

  /// Whether `num_new` tokens of `r` are one decode (its last sampled token, prompt done).
  static bool is_decode(const Request& r, std::int64_t num_new) {
    return num_new == 1 && r.num_computed_tokens + 1 == r.num_tokens() && r.prefill_done();
  }
  /// The token budget `num_new` tokens of `r` take: 1 + k for a decode under speculative
  /// decoding (its sampled token and k drafts to verify), else num_new.
  std::int64_t budget_tokens(const Request& r, std::int64_t num_new) const {
    return limits_.num_lookahead_tokens > 0 && is_decode(r, num_new)
               ? num_new + limits_.num_lookahead_tokens
               : num_new;
  }

  /// Whether `r` may join this step under max_loras: it uses the base model, or its adapter
  /// is already in the step, or the step names fewer than max_loras adapters.
  bool adapter_fits(const Request& r) const {
    if (limits_.max_loras == 0 || r.adapter == 0) return true;
    const auto& a = plan_.adapters;
    return std::find(a.begin(), a.end(), r.adapter) != a.end() ||
           static_cast<std::int64_t>(a.size()) < limits_.max_loras;
  }

  /// Adds `num_new` tokens of `r` to the plan's items and batch shape.
  void add_to_plan(Request& r, std::int64_t num_new) {
    plan_.items.push_back({&r, num_new});
    if (r.adapter != 0) {
      plan_.shape.num_lora_tokens += num_new;
      if (std::find(plan_.adapters.begin(), plan_.adapters.end(), r.adapter) ==
          plan_.adapters.end()) {
        plan_.adapters.push_back(r.adapter);
        ++plan_.shape.num_adapters;
      }
    }
    if (is_decode(r, num_new)) {
      ++plan_.shape.num_decodes;
      plan_.shape.decode_context_tokens += r.num_computed_tokens + 1;
    } else {
      plan_.shape.prefills.push_back({num_new, r.num_computed_tokens});
    }
  }

 private:
  ReplicaQueues& queues_;
  KvCacheManager& kv_;
  const SchedulerLimits& limits_;
  StepPlan& plan_;
};

class BatchScheduler {
 public:
  virtual ~BatchScheduler();
  /// Fills ctx.plan() with the next step. Leaves it empty when nothing can run now (the replica
  /// waits for an arrival or a completion). Requests marked in_flight must not be scheduled.
  virtual void schedule(SchedulerContext& ctx) = 0;
};

/// A scheduler's descriptor row (STYLE.md 6.3).
struct SchedulerDescriptor {
  std::string name;
  std::string description;
  std::function<void(const SchedulerLimits&, ValidationReport&)> validate;
  std::function<std::unique_ptr<BatchScheduler>(const SchedulerLimits&)> make;
};

/// Schedulers by name (PolicyRegistry<SchedulerDescriptor> with family "scheduler").
class SchedulerRegistry : public PolicyRegistry<SchedulerDescriptor> {
 public:
  SchedulerRegistry() : PolicyRegistry("scheduler") {}
};

/// vllm, sarathi, static, vllm-v0 (schedulers/*.cpp).
void register_builtin_schedulers(SchedulerRegistry& registry);

}  // namespace vramsim::serving
