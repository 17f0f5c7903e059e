// `vllm-v0`: vLLM V0's scheduler (vllm/core/scheduler.py, Scheduler._schedule), the default
// engine up to 0.7 (V1 became the default in 0.8.0, vllm-project/vllm PR #13726).
//
// Read at vllm-project/vllm 0dce2b29 (a 0.5-era tree) and at a 0.7-era tree (the one with
// PartialPrefillMetadata); the rules below are the same in both.
//
// Without chunked prefill (_schedule_default), a step is prefills only or decodes only:
//   1. If nothing is swapped out, waiting requests are admitted in FCFS order, each with its
//      whole sequence (a preempted request recomputes its prompt and its output so far), while
//      the prompts fit max_num_batched_tokens together, the running and admitted requests stay
//      within max_num_seqs and the KV blocks of the whole sequence leave the watermark free.
//      The first that does not fit stops admission (FCFS).
//   2. Only when no prefill was admitted, the running requests decode (one token each), the
//      newest preempted when blocks run out (recompute: to the front of waiting; swap: to the
//      swapped queue), then, if nothing was preempted, swapped requests come back.
// With chunked prefill (_schedule_chunked_prefill), one step mixes:
//   1. running requests in order, decodes and prompt chunks, up to the token budget, the
//      newest preempted when blocks run out;
//   2. swapped requests, if nothing was preempted;
//   3. new prefills in FCFS order, the last one chunked to the budget left; unlike V1 this
//      runs even in a step that preempted.
// Admission (both modes) allocates the blocks of the whole sequence at once, chunked or not
// (V0's block manager allocate), and only when watermark_blocks stay free (can_allocate); a
// request whose blocks exceed num_gpu_blocks - watermark_blocks is never admitted (V0 marks it
// FINISHED_IGNORED with "exceeds the capacity of block_manager"; the simulation rejects it at
// arrival, SchedulerLimits::watermark_blocks). Prompts over the prompt limit (max_model_len;
// without chunked prefill min(max_model_len, max_num_batched_tokens), which vLLM forces to be
// max_model_len at start-up) are rejected at arrival like those over max_model_len.
// LoRA: a waiting request whose adapter would exceed max_loras keeps its place and those
// behind it may still be admitted (V0's leftover_waiting_sequences), as in V1.
//
// NOTE: V0 reorders its running queue after each chunked step (swapped-in, decodes, prefills
// finishing this step, other prefills, new prefills) and preempts from its back; here running
// stays in admission order, so the victim is the newest admitted request. The two differ only
// when an older request is still prefilling while a newer one decodes.
// NOTE: V0's multi-step scheduling (--num-scheduler-steps), its delay factor (0 by default)
// and its priority policy are not modelled.
#include "sim/serving/schedulers/builtin_schedulers.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace vramsim::serving {
namespace {

class VllmV0Scheduler final : public BatchScheduler {
 public:
  void schedule(SchedulerContext& ctx) override {
    if (ctx.limits().enable_chunked_prefill) {
      schedule_chunked(ctx);
    } else {
      schedule_default(ctx);
    }
  }

 private:
  // _schedule_default: prefills first, decodes only in a step without a prefill.
  static void schedule_default(SchedulerContext& ctx) {
    auto& q = ctx.queues();
    std::int64_t budget = ctx.limits().max_num_batched_tokens;
    if (q.swapped.empty()) admit_whole(ctx, budget, /*allow_chunk=*/false);
    if (!ctx.plan().empty()) return;
    // Decodes: V0 takes every running request (their sequences were counted against
    // max_num_seqs when admitted); the token budget, at least max_model_len >= max_num_seqs
    // here, never binds.
    if (!schedule_running(ctx, budget, RunningPass::kAll, /*allow_chunk=*/false)) return;
    if (ctx.plan().num_preempted > 0) return;
    resume_swapped(ctx, budget, /*allow_chunk=*/false);
  }

  // _schedule_chunked_prefill: running (decodes and chunks), swapped, then new prefills.
  static void schedule_chunked(SchedulerContext& ctx) {
    auto& q = ctx.queues();
    std::int64_t budget = ctx.limits().max_num_batched_tokens;
    const std::size_t waiting_before = q.waiting.size();
    schedule_running(ctx, budget, RunningPass::kAll, /*allow_chunk=*/true);
    if (ctx.plan().num_preempted == 0) resume_swapped(ctx, budget, /*allow_chunk=*/true);
    // V0 puts this step's recompute victims at the front of waiting only after admitting new
    // prefills (waiting.extendleft(preempted) follows _schedule_prefills), so they sit out
    // this step's admission; preempt_last_running has put them there already.
    std::vector<Request*> victims;
    for (std::size_t k = waiting_before; k < q.waiting.size(); ++k) {
      victims.push_back(q.waiting.front());
      q.waiting.pop_front();
    }
    admit_whole(ctx, budget, /*allow_chunk=*/true);
    for (auto it = victims.rbegin(); it != victims.rend(); ++it) q.waiting.push_front(*it);
  }

  // _schedule_swapped: swapped requests back in FCFS order while blocks, budget and
  // max_num_seqs allow; the first that does not fit stops it.
  static void resume_swapped(SchedulerContext& ctx, std::int64_t& budget, bool allow_chunk) {
    auto& q = ctx.queues();
    const SchedulerLimits& limits = ctx.limits();
    while (!q.swapped.empty() && budget > 0 &&
           static_cast<std::int64_t>(q.running.size()) < limits.max_num_seqs) {
      Request& front = *q.swapped.front();
      if (!ctx.adapter_fits(front)) return;
      std::int64_t num_new = limits.cut_long_prefill(SchedulerContext::pending_tokens(front));
      if (num_new > budget && !allow_chunk) return;
      Request* r = ctx.resume_front_swapped();
      if (r == nullptr) return;
      num_new = std::min(num_new, budget);
      if (!ctx.allocate_running(*r, num_new)) return;
      ctx.add_to_plan(*r, num_new);
      budget -= num_new;
    }
  }

  // _schedule_prefills: waiting requests in FCFS order, each allocated its whole sequence
  // under the watermark.
  static void admit_whole(SchedulerContext& ctx, std::int64_t& budget, bool allow_chunk) {
    auto& q = ctx.queues();
    const SchedulerLimits& limits = ctx.limits();
    std::vector<Request*> skipped;  // over max_loras this step, in queue order
    while (!q.waiting.empty() && budget > 0 &&
           static_cast<std::int64_t>(q.running.size()) < limits.max_num_seqs) {
      if (!ctx.adapter_fits(*q.waiting.front())) {
        skipped.push_back(q.waiting.front());
        q.waiting.pop_front();
        continue;
      }
      if (!ctx.admit_front_waiting(budget, allow_chunk, /*whole_sequence=*/true)) break;
      budget -= ctx.plan().items.back().num_new_tokens;
    }
    for (auto it = skipped.rbegin(); it != skipped.rend(); ++it) q.waiting.push_front(*it);
  }
};

}  // namespace

std::int64_t vllm_v0_watermark_blocks(std::int64_t num_gpu_blocks) {
  // BlockSpaceManager(watermark=0.01): watermark_blocks = int(watermark * num_gpu_blocks)
  // (vllm/core/block_manager_v1.py and block_manager_v2.py; the scheduler passes no other).
  return static_cast<std::int64_t>(std::floor(0.01 * static_cast<double>(num_gpu_blocks)));
}

std::unique_ptr<BatchScheduler> make_vllm_v0_scheduler(const SchedulerLimits&) {
  return std::make_unique<VllmV0Scheduler>();
}

}  // namespace vramsim::serving
