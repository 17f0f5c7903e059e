// `static`: request-level batching, the baseline without continuous batching (FasterTransformer
// and Hugging Face `generate` on a padded batch; Yu et al., "Orca", OSDI 2022, sec. 2.2 call it
// request-level scheduling).
//
// When the replica is idle, up to max_num_seqs waiting requests are taken in FCFS order while
// their prompts fit max_num_batched_tokens together, each reserving KV for its whole
// prompt + output up front (so no preemption can happen). The batch prefills in one step and
// then decodes until its last request finishes; finished requests leave, but nothing joins
// until the batch is empty.
#include "sim/serving/schedulers/builtin_schedulers.hpp"

#include "sim/core/check.hpp"

namespace vramsim::serving {
namespace {

class StaticScheduler final : public BatchScheduler {
 public:
  void schedule(SchedulerContext& ctx) override {
    auto& q = ctx.queues();
    if (q.running.empty()) admit_batch(ctx);
    for (Request* r : q.running) {
      if (r->in_flight) continue;
      const std::int64_t num_new = SchedulerContext::pending_tokens(*r);
      if (num_new <= 0) continue;
      // Blocks were reserved at admission: this never needs new blocks.
      const bool ok = ctx.allocate_running(*r, num_new);
      VRAMSIM_CHECK(ok, "static batch request {} lost its reserved KV blocks", r->id);
      ctx.add_to_plan(*r, num_new);
    }
  }

 private:
  static void admit_batch(SchedulerContext& ctx) {
    auto& q = ctx.queues();
    const SchedulerLimits& limits = ctx.limits();
    std::int64_t budget = limits.max_num_batched_tokens;
    while (!q.waiting.empty() &&
           static_cast<std::int64_t>(q.running.size()) < limits.max_num_seqs) {
      Request& r = *q.waiting.front();
      // The first request is taken whatever its length (it fits the cache: the router
      // rejects longer ones), later ones only while the prompts fit the token budget.
      if (!q.running.empty() && r.prompt_tokens > budget) break;
      // Reserve the whole sequence; the last generated token never needs KV.
      const std::int64_t reserve = r.prompt_tokens + r.output_tokens - 1;
      if (!ctx.kv().allocate_slots(r, reserve)) break;
      budget -= r.prompt_tokens;
      q.waiting.pop_front();
      r.state = RequestState::kRunning;
      q.running.push_back(&r);
    }
  }
};

}  // namespace

std::unique_ptr<BatchScheduler> make_static_scheduler(const SchedulerLimits&) {
  return std::make_unique<StaticScheduler>();
}

}  // namespace vramsim::serving
