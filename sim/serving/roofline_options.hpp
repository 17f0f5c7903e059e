// The tunable constants of the datasheet roofline step-time model (roofline_time_model.hpp):
// how far below the datasheet peaks real kernels run, and the host-side cost of a step.
//
// Every default is an estimate from published figures, to be replaced by a calibration profile
// (kernels/) where one exists. Figures marked (*) are quoted from memory of the source and were
// not re-checked against it here. For an H100 SXM5 (989.4 TFLOP/s dense bf16, 3.35 TB/s HBM3):
//
//   matmul_efficiency 0.70            Large bf16 cuBLAS GEMMs on H100 SXM reach about 600-750
//                                     TFLOP/s, 0.6-0.75 of the dense peak (*SemiAnalysis, "MI300X
//                                     vs H100 vs H200 Benchmark Part 1: Training", 2024-12, GEMM
//                                     section); the clock falls below the 1.83 GHz the peak
//                                     assumes under sustained tensor load.
//   memory_efficiency 0.85            Coalesced weight reads reach ~2.8 TB/s = 0.84 of 3.35 TB/s
//                                     in Nsight Compute profiles of LLM inference on H100
//                                     (mikamirai.com, "GPU Memory Bandwidth: What Your Profiler
//                                     Isn't Telling You": matrix load 84 %, MLP weight load
//                                     78 %). Consistent with vLLM's ~5 ms Llama-8B step below:
//                                     15.0 GB of weights in 5 ms is 0.9 of 3.35 TB/s.
//   prefill_attention_efficiency 0.50 FlashAttention-2 reaches 35 % of the H100 peak, and
//                                     FlashAttention-3 (vLLM V1's backend on Hopper) up to 75 %
//                                     in fp16 forward (Shah et al. 2024, arXiv:2407.08608,
//                                     abstract), less at short or causal sequences; on A100 FA2
//                                     reaches 50-73 % (Dao 2023, arXiv:2307.08691, abstract).
//                                     0.5 sits in between.
//   decode_attention_efficiency 0.70  Paged decode attention reads the KV cache at 0.4-0.9 of
//                                     HBM bandwidth: FlashInfer's decode kernels approach ~0.9 at
//                                     large batch (*Ye et al. 2025, arXiv:2501.01005, sec. 4),
//                                     while the profile above measured 42 % for paged KV reads.
//   step_overhead 0.5 ms              vLLM V1 blog (2025-01-24, "vLLM V1: A Major Upgrade...",
//                                     sec. 1): the GPU part of a Llama-8B step on H100 is "as low
//                                     as ~5ms", and V1 moved tokenisation, detokenisation and the
//                                     API server off the busy loop; what stays synchronous
//                                     (scheduling, input preparation, sampling) is a fraction of
//                                     a millisecond. NOTE: an estimate, not a measurement.
//   per_sequence_overhead 5 us        The per-request part of that host work (Python loops over
//                                     the batch in the scheduler and input preparation): 256
//                                     sequences add 1.3 ms. NOTE: an estimate.
//   launch_per_layer 0                vLLM captures CUDA graphs (V1: piecewise, for batch sizes
//                                     up to 512 by default), so kernel launches cost no host time
//                                     in a step; ~50 us (about 10 kernels of ~5 us launch
//                                     latency) models --enforce-eager.
//   pcie_collective_efficiency 0.20   FITTED to one measured run: vLLM 0.19, Qwen3-32B TP 2 on
//                                     2 x RTX PRO 6000 (PCIe Gen5, no NVLink), from the
//                                     per-request records of LLMServingSim (casys-kaist/
//                                     LLMServingSim@5daddb2, bench/examples/RTXPRO6000/Qwen3-32B/
//                                     vllm/requests.jsonl). With the full 64 GB/s the simulated
//                                     mean TTFT/TPOT/E2E were -47/-35/-40 % off; 0.20 (12.8 GB/s,
//                                     all-reduce of 21 MB in 1.6 ms) gives -6/-10/-8 %
//                                     (analysis/validation/vllm_bench.md). The same GPU running
//                                     Llama-8B at TP 1 has its mean TPOT within 9 %, so the gap is the
//                                     all-reduces. 0.25 fits its 2048-token prefill steps (~355 ms
//                                     measured), 0.17 its 128-sequence decode steps (~59 ms).
//                                     Plausible for NCCL without GPU peer-to-peer (GeForce and
//                                     many VMs), where data is staged through host memory; a
//                                     server with P2P over a PCIe switch may reach 2-3x more.
//                                     NOTE: one run, one value; no held-out check was possible.
#pragma once

#include <string_view>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace vramsim::serving {

struct RooflineOptions {
  /// Fraction of the datasheet dense peak that matmuls reach, in (0, 1].
  double matmul_efficiency = 0.70;
  /// Fraction of the datasheet memory bandwidth that streaming weight reads reach, in (0, 1].
  /// Also used for the cached KV a prefill chunk reads.
  double memory_efficiency = 0.85;
  /// Fraction of the dense peak that attention kernels reach (prefill FLOPs, and the FLOP
  /// ceiling of decode attention), in (0, 1].
  double prefill_attention_efficiency = 0.50;
  /// Fraction of the memory bandwidth that decode attention reaches reading the KV cache,
  /// in (0, 1].
  double decode_attention_efficiency = 0.70;
  /// Host time of every step (scheduling, input preparation, sampling), >= 0.
  Duration step_overhead = microseconds(500);
  /// Extra host time per sequence in the step (each prefill chunk and each decode), >= 0.
  Duration per_sequence_overhead = microseconds(5);
  /// Kernel-launch time per decoder layer of the replica; 0 with CUDA graphs. >= 0.
  Duration launch_per_layer = Duration::zero();
  /// Fraction of the per-direction PCIe bandwidth that the TP all-reduces and PP sends reach
  /// on GPUs without a peer link (no NVLink: traffic goes over PCIe, often through the host),
  /// in (0, 1]. Not applied to NVLink / Infinity Fabric peer links.
  double pcie_collective_efficiency = 0.20;

  /// Adds a problem under "<prefix>.<field>" for every value out of range.
  void validate(ValidationReport& report, std::string_view prefix) const;
};

}  // namespace vramsim::serving
