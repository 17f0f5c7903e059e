// `sarathi`: Sarathi-Serve's stall-free batching (Agrawal et al., "Taming Throughput-Latency
// Tradeoff in LLM Inference with Sarathi-Serve", OSDI 2024, sec. 4.2 and Algorithm 2).
//
// Every step carries at most `chunk_size` tokens (the paper picks it from the TBT SLO, e.g. 512
// or 2048). Ongoing decodes are scheduled first and never wait behind a prefill; the remaining
// budget goes to prefills already in progress, then to new requests in FCFS order, whose
// prompts are split into chunks of the remaining budget. Preemption on KV exhaustion as vLLM
// (the most recently admitted request).
#include "sim/serving/schedulers/builtin_schedulers.hpp"

namespace vramsim::serving {
namespace {

class SarathiScheduler final : public BatchScheduler {
 public:
  void schedule(SchedulerContext& ctx) override {
    std::int64_t budget = ctx.limits().chunk_size;
    if (!schedule_running(ctx, budget, RunningPass::kDecodesOnly, true)) return;
    if (!schedule_running(ctx, budget, RunningPass::kPrefillsOnly, true)) return;
    if (ctx.plan().num_preempted > 0) return;
    admit_waiting(ctx, budget, true);
  }
};

}  // namespace

std::unique_ptr<BatchScheduler> make_sarathi_scheduler(const SchedulerLimits&) {
  return std::make_unique<SarathiScheduler>();
}

}  // namespace vramsim::serving
