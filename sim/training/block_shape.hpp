// What every block of a stage shares when plan_stages (stage_plan.cpp) costs it: the
// micro-batch on this rank and how tensor and context parallelism split it. Built once by
// plan_stages and read by the compute (block_compute.hpp), exchange (block_exchanges.hpp) and
// memory (block_memory.hpp) sides of a block.
#pragma once

#include <cstdint>

#include "sim/core/units.hpp"

namespace vramsim::training::detail {

struct BlockShape {
  std::int64_t t = 1;  // tensor-parallel ranks
  std::int64_t e = 2;  // bytes per element of the compute dtype
  /// Tokens of each sequence on this context-parallel rank: seq_len / cp (the micro-batch's
  /// padded length with padded samples, sample_lengths.hpp).
  std::int64_t s = 0;
  std::int64_t b = 1;                // sequences per micro-batch
  bool ring = false;                 // cp > 1 over a ring of K/V sends (CpComm::kRing)
  bool ulysses = false;              // cp > 1 by all-to-alls (CpComm::kAllToAll)
  double routed_load = 1.0;          // TrainingPlan::moe_routed_load (1 without MoE)
  Bytes kv_chunk;                    // K and V of this rank's s b tokens: 2 e s b kv / t bytes
};

}  // namespace vramsim::training::detail
