// `vllm`: vLLM V1's scheduler (vllm/v1/core/sched/scheduler.py, Scheduler.schedule).
//
// One token budget per step (max_num_batched_tokens) and at most max_num_seqs running requests.
//   1. Running requests first, in admission order: each gets its pending tokens (1 for a
//      decode, the rest of its prompt for a chunked prefill, at most long_prefill_token_threshold
//      when that is set) up to the remaining budget. When
//      the KV cache cannot hold them, the most recently admitted running request is preempted
//      (recompute: it returns to the front of the waiting queue) and the allocation is retried;
//      if the request itself was the victim, the pass stops.
//   2. Then, if nothing was preempted in this step, swapped-out requests resume (swap mode)
//      and waiting requests are admitted in FCFS order while budget, max_num_seqs and KV
//      blocks allow; with chunked prefill the last admitted prompt may be cut to the budget,
//      without it a prompt that does not fit the remaining budget waits (and, FCFS, so does
//      everything behind it).
//   3. LoRA (max_loras > 0): a step names at most max_loras distinct adapters. A waiting
//      request whose adapter would exceed it is skipped for this step and keeps its place in
//      the queue, while those behind it may still be admitted (vLLM's scheduled_loras check
//      and skipped_waiting_requests). NOTE: vLLM only asserts the bound for running requests;
//      here a running request whose adapter would exceed it waits for the next step.
#include "sim/serving/schedulers/builtin_schedulers.hpp"

#include <algorithm>
#include <vector>

namespace vramsim::serving {
namespace {

bool in_pass(const Request& r, RunningPass pass) {
  const bool decode = r.prefill_done() && r.num_computed_tokens + 1 == r.num_tokens();
  switch (pass) {
    case RunningPass::kAll: return true;
    case RunningPass::kDecodesOnly: return decode;
    case RunningPass::kPrefillsOnly: return !decode;
  }
  return true;
}

class VllmScheduler final : public BatchScheduler {
 public:
  void schedule(SchedulerContext& ctx) override {
    std::int64_t budget = ctx.limits().max_num_batched_tokens;
    const bool chunk = ctx.limits().enable_chunked_prefill;
    schedule_running(ctx, budget, RunningPass::kAll, chunk);
    if (ctx.plan().num_preempted > 0) return;
    admit_waiting(ctx, budget, chunk);
  }
};

}  // namespace

bool schedule_running(SchedulerContext& ctx, std::int64_t& budget, RunningPass pass,
                      bool allow_chunk) {
  auto& running = ctx.queues().running;
  // Index loop: preemption erases from the back of `running`, never before index i.
  for (std::size_t i = 0; i < running.size() && budget > 0; ++i) {
    Request& r = *running[i];
    if (r.in_flight || (pass != RunningPass::kAll && !in_pass(r, pass))) continue;
    if (!ctx.adapter_fits(r)) continue;
    std::int64_t num_new = ctx.limits().cut_long_prefill(SchedulerContext::pending_tokens(r));
    if (num_new <= 0) continue;
    if (num_new > budget) {
      if (!allow_chunk) continue;
      num_new = budget;
    }
    while (!ctx.allocate_running(r, num_new)) {
      Request* victim = ctx.preempt_last_running(i);
      if (victim == nullptr || victim == &r) return false;
    }
    // Speculation: a decode takes 1 + k tokens of the budget (vLLM cuts the drafts to what
    // is left; the verification pass is still modelled over all k).
    budget -= std::min(budget, ctx.budget_tokens(r, num_new));
    ctx.add_to_plan(r, num_new);
  }
  return true;
}

void admit_waiting(SchedulerContext& ctx, std::int64_t& budget, bool allow_chunk) {
  auto& q = ctx.queues();
  const SchedulerLimits& limits = ctx.limits();
  const auto room = [&] {
    return budget > 0 && static_cast<std::int64_t>(q.running.size()) < limits.max_num_seqs;
  };
  while (!q.swapped.empty() && room()) {
    if (!ctx.adapter_fits(*q.swapped.front())) return;
    Request* r = ctx.resume_front_swapped();
    if (r == nullptr) return;  // swapped requests go first; wait for blocks
    std::int64_t num_new = limits.cut_long_prefill(SchedulerContext::pending_tokens(*r));
    if (num_new > budget) {
      if (!allow_chunk) continue;
      num_new = budget;
    }
    if (!ctx.allocate_running(*r, num_new)) return;
    ctx.add_to_plan(*r, num_new);
    budget -= num_new;
  }
  if (!q.swapped.empty()) return;
  std::vector<Request*> skipped;  // over max_loras this step, in queue order
  while (!q.waiting.empty() && room()) {
    if (!ctx.adapter_fits(*q.waiting.front())) {
      skipped.push_back(q.waiting.front());
      q.waiting.pop_front();
      continue;
    }
    if (!ctx.admit_front_waiting(budget, allow_chunk)) break;
    budget -= ctx.plan().items.back().num_new_tokens;
  }
  for (auto it = skipped.rbegin(); it != skipped.rend(); ++it) q.waiting.push_front(*it);
}

std::unique_ptr<BatchScheduler> make_vllm_scheduler(const SchedulerLimits&) {
  return std::make_unique<VllmScheduler>();
}

}  // namespace vramsim::serving
