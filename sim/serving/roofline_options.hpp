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
#include "sim/hardware/device_spec.hpp"

namespace vramsim::serving {

struct RooflineOptions {
  /// Fraction of the datasheet dense peak that matmuls reach, in (0, 1], where the device sheet
  /// has no fitted value (DeviceSpec::fitted_matmul_efficiency, which wins while
  /// use_fitted_matmul is on).
  double matmul_efficiency = cost::kMatmulEfficiency;
  bool use_fitted_matmul = true;
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

  /// vLLM's MXFP4 MoE kernel on Hopper: triton_kernels' matmul_ogs where the release bundles
  /// triton_kernels (0.11.1 on, run::VllmBehaviour), else fused_marlin_moe.
  bool mxfp4_triton_kernels = true;
  /// Fraction of the bf16 dense peak that 4-bit (MXFP4) routed experts reach on Hopper, by
  /// kernel (datasheet_constants.hpp), in (0, 1].
  double hopper_marlin_moe_efficiency = cost::kHopperMarlinMoeEfficiency;
  double hopper_matmul_ogs_moe_efficiency = cost::kHopperMatmulOgsMoeEfficiency;
  /// Decodes in steps with a prefill chunk cost what FlashAttention 2's one varlen call makes
  /// them cost where it is the backend (mixed_batch_attention.hpp); off: what they cost alone
  /// (vLLM's V0 engine, which ran decodes through their own kernel).
  bool fa2_mixed_batches = true;
  /// Its fitted constants (datasheet_constants.hpp, "FA2 mixed batches"): >= 0, and the miss
  /// share in [0, 1].
  Duration fa2_mixed_empty_tile = cost::kFa2MixedEmptyTile;
  Duration fa2_mixed_decode_tile = cost::kFa2MixedDecodeTile;
  double fa2_mixed_repeat_miss = cost::kFa2MixedRepeatMiss;

  /// The matmul efficiency on `device` (see matmul_efficiency).
  double matmul_efficiency_on(const hardware::DeviceSpec& device) const {
    return use_fitted_matmul && device.fitted_matmul_efficiency
               ? *device.fitted_matmul_efficiency
               : matmul_efficiency;
  }

  /// The efficiencies the cost model's datasheet roofline applies on `device`.
  cost::Efficiencies efficiencies(const hardware::DeviceSpec& device) const {
    return {matmul_efficiency_on(device), memory_efficiency, prefill_attention_efficiency,
            decode_attention_efficiency};
  }

  /// Adds a problem under "<prefix>.<field>" for every value out of range.
  void validate(ValidationReport& report, std::string_view prefix) const;
};

}  // namespace vramsim::serving
