#include "sim/serving/schedulers/builtin_schedulers.hpp"

#include <fmt/format.h>

namespace vramsim::serving {
namespace {

void validate_common(const SchedulerLimits& l, ValidationReport& report) {
  if (l.max_num_seqs <= 0) {
    report.error("max_num_seqs", fmt::format("must be > 0, got {}", l.max_num_seqs));
  }
  if (l.max_num_batched_tokens <= 0) {
    report.error("max_num_batched_tokens",
                 fmt::format("must be > 0, got {}", l.max_num_batched_tokens));
  }
}

}  // namespace

void register_builtin_schedulers(SchedulerRegistry& registry) {
  registry.add({"vllm",
                "vLLM V1: decodes then chunked prefills under one token budget per step, "
                "preemption of the newest request",
                validate_common, make_vllm_scheduler});
  registry.add({"sarathi",
                "Sarathi-Serve stall-free batching: decodes first, prefills chunked to a fixed "
                "chunk size per step",
                [](const SchedulerLimits& l, ValidationReport& report) {
                  validate_common(l, report);
                  if (l.chunk_size <= 0) {
                    report.error("chunk_size", fmt::format("must be > 0, got {}", l.chunk_size));
                  }
                },
                make_sarathi_scheduler});
  registry.add({"static",
                "request-level batching: a batch runs to completion before the next is admitted "
                "(no continuous batching)",
                validate_common, make_static_scheduler});
  // Registered last, so that the list of valid names keeps its earlier order.
  registry.add({"vllm-v0",
                "vLLM V0 (default engine up to 0.7): without chunked prefill a step is whole "
                "prompts or decodes, prefills first; with it, running, swapped, then new "
                "prefills; whole-sequence KV at admission under a 1% block watermark",
                validate_common, make_vllm_v0_scheduler});
}

}  // namespace vramsim::serving
