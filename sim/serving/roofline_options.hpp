// The tunable constants of the datasheet roofline step-time model (roofline_time_model.hpp):
// how far below the datasheet peaks real kernels run, and the host-side cost of a step.
//
// The defaults are the one set of datasheet constants of the cost model,
// sim/cost/datasheet_constants.hpp, which cites the source of each.
#pragma once

#include <string_view>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/cost/datasheet_constants.hpp"

namespace vramsim::serving {

struct RooflineOptions {
  /// Fraction of the datasheet dense peak that matmuls reach, in (0, 1].
  double matmul_efficiency = cost::kMatmulEfficiency;
  /// Fraction of the datasheet memory bandwidth that streaming weight reads reach, in (0, 1].
  /// Also used for the cached KV a prefill chunk reads.
  double memory_efficiency = cost::kMemoryEfficiency;
  /// Fraction of the dense peak that attention kernels reach (prefill FLOPs, and the FLOP
  /// ceiling of decode attention), in (0, 1].
  double prefill_attention_efficiency = cost::kPrefillAttentionEfficiency;
  /// Fraction of the memory bandwidth that decode attention reaches reading the KV cache,
  /// in (0, 1].
  double decode_attention_efficiency = cost::kDecodeAttentionEfficiency;
  /// Host time of every step (scheduling, input preparation, sampling), >= 0.
  Duration step_overhead = cost::kStepOverhead;
  /// Extra host time per sequence in the step (each prefill chunk and each decode), >= 0.
  Duration per_sequence_overhead = cost::kPerSequenceOverhead;
  /// Kernel-launch time per decoder layer of the replica; 0 with CUDA graphs. >= 0.
  Duration launch_per_layer = cost::kLaunchPerLayer;
  /// GPU time between two kernels of the forward pass (StepTime::kernel_gaps), >= 0.
  Duration kernel_gap = cost::kKernelGap;
  /// GPU time inside each GEMM kernel beyond its roofline (StepTime::linear), >= 0.
  Duration gemm_kernel_fixed = cost::kGemmKernelFixed;
  /// Shortest GPU time of each element-wise or attention kernel (StepTime::kernel_gaps), >= 0.
  Duration small_kernel_fixed = cost::kSmallKernelFixed;
  /// Fraction of the per-direction PCIe bandwidth that the TP all-reduces and PP sends reach
  /// on GPUs without a peer link (no NVLink: traffic goes over PCIe, often through the host),
  /// in (0, 1]. Not applied to NVLink / Infinity Fabric peer links.
  double pcie_collective_efficiency = cost::kPcieCollectiveEfficiency;

  /// The efficiencies the cost model's datasheet roofline applies.
  cost::Efficiencies efficiencies() const {
    return {matmul_efficiency, memory_efficiency, prefill_attention_efficiency,
            decode_attention_efficiency};
  }

  /// Adds a problem under "<prefix>.<field>" for every value out of range.
  void validate(ValidationReport& report, std::string_view prefix) const;
};

}  // namespace vramsim::serving
