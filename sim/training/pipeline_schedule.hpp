// The order in which one pipeline stage runs its micro-batches' forward and backward passes.
//
//   gpipe        F0 F1 ... F(m-1) B0 B1 ... B(m-1)                    (Huang et al. 2019)
//   1f1b         min(pp - s - 1, m) warm-up forwards, then one forward one backward, then the
//                remaining backwards (PipeDream-Flush; Narayanan et al. 2021, arXiv:2104.04473)
//   interleaved  V model chunks per device; Megatron-LM's interleaved 1F1B: warm-up
//                min((pp - s - 1) * 2 + (V - 1) * pp, m V) forwards; forward k runs chunk
//                (k / pp) % V of micro-batch (k / (pp V)) pp + k % pp; backward k runs chunk
//                V - 1 - (k / pp) % V (megatron/core/pipeline_parallel/schedules.py)
// Stage s of pp holds virtual stages s, s + pp, ..., s + (V - 1) pp (chunk c = virtual stage
// c pp + s).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/training/training_plan.hpp"

namespace vramsim::training {

struct PipelineStep {
  bool forward = true;
  std::int64_t micro_batch = 0;
  int chunk = 0;
  friend bool operator==(const PipelineStep&, const PipelineStep&) = default;
};

/// The program order of stage `stage` (0-based) of `pp` for `num_micro_batches` micro-batches
/// and `chunks` model chunks per device (1 unless interleaved). Every (micro-batch, chunk) gets
/// exactly one forward before its backward.
std::vector<PipelineStep> pipeline_order(PipelineSchedule schedule, int pp, int stage,
                                         std::int64_t num_micro_batches, int chunks);

}  // namespace vramsim::training
