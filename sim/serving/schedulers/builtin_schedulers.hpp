// The built-in schedulers (one file each) and the V1 building blocks they share.
#pragma once

#include <memory>

#include "sim/serving/scheduler.hpp"

namespace vramsim::serving {

/// Which running requests a pass over the running queue considers.
enum class RunningPass { kAll, kDecodesOnly, kPrefillsOnly };

/// vLLM V1's first phase over running requests (vllm_scheduler.cpp): pending tokens up to
/// `budget`, preempting from the back when KV blocks run out. Returns false when a request had
/// to preempt itself (the pass stopped).
bool schedule_running(SchedulerContext& ctx, std::int64_t& budget, RunningPass pass,
                      bool allow_chunk);

/// vLLM V1's second phase: resume swapped requests, then admit waiting ones in FCFS order while
/// `budget`, max_num_seqs and KV blocks allow.
void admit_waiting(SchedulerContext& ctx, std::int64_t& budget, bool allow_chunk);

std::unique_ptr<BatchScheduler> make_vllm_scheduler(const SchedulerLimits& limits);
std::unique_ptr<BatchScheduler> make_sarathi_scheduler(const SchedulerLimits& limits);
std::unique_ptr<BatchScheduler> make_static_scheduler(const SchedulerLimits& limits);
std::unique_ptr<BatchScheduler> make_vllm_v0_scheduler(const SchedulerLimits& limits);

/// vLLM V0's block-manager watermark for a cache of `num_gpu_blocks` blocks:
/// int(0.01 * num_gpu_blocks) (SchedulerLimits::watermark_blocks).
std::int64_t vllm_v0_watermark_blocks(std::int64_t num_gpu_blocks);

}  // namespace vramsim::serving
