// The one set of datasheet-fallback constants of the cost model (cost_model.hpp): how far below
// the datasheet peaks real kernels run, and the host-side cost of a serving step. Serving
// (serving::RooflineOptions), the calibration tables' fallback (calibration::DatasheetFallback)
// and training (training/stage_plan.cpp) all take their defaults from here; no other file
// writes these numbers.
//
// Every default is an estimate from published figures, to be replaced by a calibration profile
// (kernels/) where one exists. Figures marked (*) are quoted from memory of the source and were
// not re-checked against it here. For an H100 SXM5 (989.4 TFLOP/s dense bf16, 3.35 TB/s HBM3):
//
//   matmul 0.70              Large bf16 cuBLAS GEMMs on H100 SXM reach about 600-750 TFLOP/s,
//                            0.6-0.75 of the dense peak (*SemiAnalysis, "MI300X vs H100 vs H200
//                            Benchmark Part 1: Training", 2024-12, GEMM section); the clock
//                            falls below the 1.83 GHz the peak assumes under sustained tensor
//                            load. Llama 3's 38-43 % whole-job MFU at 16K GPUs (Dubey et al.
//                            2024, arXiv:2407.21783, Table 4) includes communication and
//                            bubbles on top. Public per-kernel profiles of LLM GEMMs at >= 1,024
//                            tokens agree: medians 0.71 (A100 80GB) and 0.70 (H100; Vidur,
//                            microsoft/vidur@7d47513, data/profiling/compute/*/mlp.csv) and 0.71
//                            (RTX PRO 6000, 1,300 GEMMs; LLMServingSim@5daddb2 profiler/perf),
//                            but 0.96 on the RTX 4090, whose sheet carries that value ([fitted],
//                            cost::device_efficiencies).
//   memory 0.85              Coalesced weight reads reach ~2.8 TB/s = 0.84 of 3.35 TB/s in
//                            Nsight Compute profiles of LLM inference on H100 (mikamirai.com,
//                            "GPU Memory Bandwidth: What Your Profiler Isn't Telling You":
//                            matrix load 84 %, MLP weight load 78 %). Consistent with vLLM's
//                            ~5 ms Llama-8B step below: 15.0 GB of weights in 5 ms is 0.9 of
//                            3.35 TB/s. NOTE: training used an uncited 0.8 ("streaming kernels
//                            ~80 % of HBM") until the cost model was shared; 0.85 is the cited
//                            value and now holds for training's memory-bound kernels too.
//   prefill attention 0.50   FlashAttention-2 reaches 35 % of the H100 peak, and
//                            FlashAttention-3 (vLLM V1's backend on Hopper) up to 75 % in fp16
//                            forward (Shah et al. 2024, arXiv:2407.08608, abstract, sec. 1 and
//                            4.1), less at short or causal sequences and in backward; on A100
//                            FA2 reaches 50-73 % (Dao 2023, arXiv:2307.08691, abstract). 0.5
//                            sits in between. Training's fused attention, forward and backward,
//                            uses it too.
//   decode attention 0.70    Paged decode attention reads the KV cache at 0.4-0.9 of HBM
//                            bandwidth: FlashInfer's decode kernels approach ~0.9 at large batch
//                            (*Ye et al. 2025, arXiv:2501.01005, sec. 4), while the profile
//                            above measured 42 % for paged KV reads.
//   step overhead 0.5 ms     vLLM V1 blog (2025-01-24, "vLLM V1: A Major Upgrade...", sec. 1):
//                            the GPU part of a Llama-8B step on H100 is "as low as ~5ms", and V1
//                            moved tokenisation, detokenisation and the API server off the busy
//                            loop; what stays synchronous (scheduling, input preparation,
//                            sampling) is a fraction of a millisecond. NOTE: an estimate, not a
//                            measurement.
//   per-sequence 5 us        The per-request part of that host work (Python loops over the batch
//                            in the scheduler and input preparation): 256 sequences add 1.3 ms.
//                            NOTE: an estimate.
//   kernel gap 1.3 us        GPU time lost between two kernels of a captured CUDA graph:
//                            "even with CUDA graphs", about 1.3 us per kernel on an H100, with
//                            no useful work done (Spector et al., Hazy Research, "Look Ma, No
//                            Bubbles! Designing a Low-Latency Megakernel for Llama-1B",
//                            2025-05-27, section on kernel launch and teardown costs). It adds
//                            up in decode steps, whose kernels are short: the same post measures
//                            vLLM and SGLang at no more than half of the H100's bandwidth on
//                            Llama-3.2-1B at batch 1. Charged per kernel of the forward pass
//                            (serving/roofline_time_model.cpp, kernels_per_layer). NOTE: one
//                            measurement, on an H100; applied to every device. The setup and
//                            teardown inside each kernel (the tail of its last wave) that the
//                            post also names is not counted.
//   GEMM kernel 4.7 us       FITTED: the time inside one GEMM kernel that its roofline does not
//                            count (its waves' ramp and tail, cuBLAS's split-K reduction), added
//                            to max(FLOPs / peak, bytes / bandwidth). Fitted, as t = t0 + bytes /
//                            (bandwidth * e), to the GPU time Vidur's profiler recorded for the
//                            decode-sized GEMMs (at most 8 tokens) of its 8 profiled models at
//                            TP 1-8 (microsoft/vidur@7d47513, data/profiling/compute/{a100,h100}/
//                            */mlp.csv: kernel durations from the CUDA trace, launch gaps
//                            excluded): t0 = 4.8 us on the A100 80GB (78 shapes), 4.7 us on the
//                            H100 (69 shapes); e = 0.80 and 0.91, which the memory efficiency
//                            above (0.85) lies between, so it stays. A 4.3 MB weight matrix then
//                            reads at 0.26-0.30 of the bandwidth, a 940 MB one at 0.79-0.91, as
//                            measured. Charged per GEMM kernel of the serving forward pass
//                            (serving/roofline_time_model.cpp, gemm_kernels_per_layer). Held
//                            out: the closed-loop and speculative-decoding validations (A100,
//                            H100); no 4090 or RTX PRO 6000 GEMM was measured.
//   small kernel 3 us        FITTED: the shortest GPU time of the element-wise kernels of a step
//                            (norms, rotary, KV-cache write, activation, routing, and the
//                            attention kernel), which the roofline otherwise costs as nothing at
//                            a few tokens: the median of Vidur's single-kernel ops at <= 8
//                            tokens in the same files, rotary / SiLU-and-mul / residual add: 4.0
//                            / 5.0 / 2.0 us on the A100, 3.0 / 3.0 / 1.0 us on the H100. Charged
//                            per such kernel of the forward pass, beside the kernel gap.
//   W4A16 MoE on Hopper      FITTED to kernel measurements (not to the validation runs): on a
//   0.257 (Marlin)           Hopper GPU, which has no FP4 tensor cores, vLLM's MXFP4 experts run
//   0.49 (matmul_ogs)        as weight-only GEMMs that decode each 4-bit weight tile to bf16 in
//                            the inner loop, so at prefill sizes they are bound by instruction
//                            issue, not by the tensor cores: an nsys trace of vLLM's Marlin W4A16
//                            MoE GEMM on an H100 at 16,384-token prefill chunks measured 1.237
//                            TFLOP per layer in 4.863 ms, 254 TFLOP/s = 0.257 of the bf16 peak,
//                            "issue-bound, not bandwidth-bound: the SASS inner loop spends 64 of
//                            220 instructions per 32-K step on HMMA, the rest on dequant, scale
//                            and pack" (sgl-project/sglang PR #38884, 2026-09-10). OpenAI's
//                            triton_kernels matmul_ogs (bf16 x mxfp4 on Hopper) reached 0.49 of
//                            the 989 TFLOP/s peak in its own benchmark after value and scale
//                            swizzling (triton-lang/triton PR #6833, with PR #6812, 2025-05-15:
//                            "utilisation from 28% to 37% ... we hit 49% util"; bench_mlp.py's
//                            util against 989 TFLOP/s and 3.35 TB/s; the shape is not stated).
//                            Applied to routed MXFP4 experts on compute capability 9.x only
//                            (serving/roofline_time_model.cpp); the weight reads keep the memory
//                            roofline (the kernel reads at ~0.78 of HBM bandwidth at small M:
//                            triton_kernels bench/repro_hopper_mxfp4_ptxas.py). NOTE: one
//                            measurement per kernel, neither of gpt-oss's shapes; Ampere and Ada
//                            (Marlin) are left at the matmul efficiency above, unmeasured.
//   FA2 mixed batches        FITTED to kernel measurements (not to the validation runs): what a
//   0.70 us / 3.0 us / 0.20  decode costs in a step that also runs a prefill chunk, where vLLM's
//                            attention is FlashAttention 2's varlen kernel (compute capability
//                            8.x, 12.x; serving/mixed_batch_attention.hpp gives the mechanism):
//                            0.70 us per empty query-tile block per SM, 3.0 us per decode block
//                            per SM, and 0.20 of the repeated reads of a KV head by its group's
//                            query heads missing L2. Fitted (grid search on the log error) to
//                            LLMServingSim's public attention profiles of vLLM 0.19.0
//                            (casys-kaist/LLMServingSim@5daddb2, profiler/perf/{RTX4090,
//                            RTXPRO6000}/*/bf16/tp*/attention.csv, enforce_eager; 27,092 points
//                            with a 64-2048-token chunk, 8-256 decodes of 16-8,192 tokens of KV,
//                            the chunk's own time subtracted): rms log error 0.23; each GPU
//                            alone gives 0.90 / 4.0 / 0.20 (RTX 4090) and 0.70 / 3.0 / 0.20
//                            (RTX PRO 6000). At 16-128 decodes of 256-4,096 tokens beside a
//                            chunk of >= 256 the model is 1.02x the measured median (4090
//                            Llama-3.1-8B), 1.19x / 1.01x / 0.99x (PRO 6000 Llama-3.1-8B,
//                            Qwen3-32B, Qwen3-30B-A3B). Measured there, a decode in a mixed step
//                            reads its KV at 0.22-0.42 of the bandwidth against 0.65-0.82 alone.
//                            NOTE: two GPUs of one kernel; other FA2 parts take the same values.
//   launch per layer 0       vLLM captures CUDA graphs (V1: piecewise, for batch sizes up to 512
//                            by default), so kernel launches cost no host time in a step; ~50 us
//                            (about 10 kernels of ~5 us launch latency) models --enforce-eager.
//   PCIe collectives 0.20    FITTED to one measured run: vLLM 0.19, Qwen3-32B TP 2 on
//                            2 x RTX PRO 6000 (PCIe Gen5, no NVLink), from the per-request
//                            records of LLMServingSim (casys-kaist/LLMServingSim@5daddb2,
//                            bench/examples/RTXPRO6000/Qwen3-32B/vllm/requests.jsonl). With the
//                            full 64 GB/s the simulated mean TTFT/TPOT/E2E were -47/-35/-40 %
//                            off; 0.20 (12.8 GB/s, all-reduce of 21 MB in 1.6 ms) gives
//                            -6/-10/-8 % (analysis/validation/vllm_bench.md). The same GPU
//                            running Llama-8B at TP 1 has its mean TPOT within 9 %, so the gap
//                            is the all-reduces. 0.25 fits its 2048-token prefill steps (~355 ms
//                            measured), 0.17 its 128-sequence decode steps (~59 ms). Plausible
//                            for NCCL without GPU peer-to-peer (GeForce and many VMs), where
//                            data is staged through host memory; a server with P2P over a PCIe
//                            switch may reach 2-3x more. NOTE: one run, one value; no held-out
//                            check was possible.
//   pinned H2D 0.80          Copies from pinned host memory reach about 0.8 of the PCIe x16 rate
//                            per direction. NVIDIA's nvbandwidth (host_to_device_memcpy_ce)
//                            measured 25.17 GB/s on an A10, PCIe Gen4 x16 of 32 GB/s: 0.79
//                            (nvbandwidth v0.5, driver 550.54.15; a public write-up in
//                            sscargal/cuda_examples); and 55.33-55.37 GB/s on each GPU of an
//                            8 x H100 SXM node, Gen5 x16 of 64 GB/s: 0.87 (nvbandwidth v0.10.0,
//                            driver 595.71.05; a public server acceptance log). 0.80 follows the
//                            Gen4 figure; on Gen5 it is about 8 % below the one measurement.
//                            NOTE: two public runs, not re-checked here; a calibration
//                            profile's h2d-pinned copies replace it (run/host_stream_rate.hpp).
#pragma once

#include "sim/core/units.hpp"

namespace vramsim::cost {

/// Fraction of the datasheet dense peak that matmuls reach.
inline constexpr double kMatmulEfficiency = 0.70;
/// Fraction of the datasheet memory bandwidth that streaming (memory-bound) kernels reach.
inline constexpr double kMemoryEfficiency = 0.85;
/// Fraction of the dense peak that prefill / flash attention kernels reach.
inline constexpr double kPrefillAttentionEfficiency = 0.50;
/// Fraction of the memory bandwidth that paged decode attention reaches reading the KV cache.
inline constexpr double kDecodeAttentionEfficiency = 0.70;
/// Host time of every serving step (scheduling, input preparation, sampling).
inline constexpr Duration kStepOverhead = microseconds(500);
/// Extra host time per sequence in a serving step.
inline constexpr Duration kPerSequenceOverhead = microseconds(5);
/// Kernel-launch time per decoder layer with CUDA graphs.
inline constexpr Duration kLaunchPerLayer = Duration::zero();
/// GPU time between two kernels of a captured CUDA graph.
inline constexpr Duration kKernelGap = Duration::from_nanoseconds(1'300);
/// GPU time inside each GEMM kernel beyond its roofline (setup, ramp and tail).
inline constexpr Duration kGemmKernelFixed = Duration::from_nanoseconds(4'700);
/// Shortest GPU time of one element-wise (or attention) kernel of a serving step.
inline constexpr Duration kSmallKernelFixed = Duration::from_nanoseconds(3'000);
/// Fraction of the bf16 dense peak that vLLM's Marlin MoE kernel reaches with 4-bit (MXFP4)
/// experts on Hopper at prefill sizes (issue-bound weight decoding).
inline constexpr double kHopperMarlinMoeEfficiency = 0.257;
/// The same for triton_kernels' matmul_ogs (bf16 x mxfp4) on Hopper.
inline constexpr double kHopperMatmulOgsMoeEfficiency = 0.49;
/// FlashAttention 2's mixed prefill + decode steps (serving/mixed_batch_attention.hpp): the time
/// of an empty query-tile block per SM, of a decode's block per SM, and the share of the
/// repeated KV-head reads that miss L2.
inline constexpr Duration kFa2MixedEmptyTile = Duration::from_nanoseconds(700);
inline constexpr Duration kFa2MixedDecodeTile = Duration::from_nanoseconds(3'000);
inline constexpr double kFa2MixedRepeatMiss = 0.20;
/// Fraction of the per-direction PCIe bandwidth collectives reach without a peer link.
inline constexpr double kPcieCollectiveEfficiency = 0.20;
/// Fraction of the per-direction PCIe bandwidth that host-to-device copies from pinned memory
/// reach (the weights of --cpu-offload-gb, streamed every step).
inline constexpr double kPinnedHostToDeviceEfficiency = 0.80;
/// Fraction of the per-direction PCIe bandwidth that device-to-host copies into pinned memory
/// reach (KV offload stores, swap-outs). The same value as host-to-device: no public
/// device_to_host_memcpy_ce figure of the A10 run cited above was found, and the one public
/// H100 capture found has both directions alike: nvbandwidth on an Azure ND96isr H100 v5 node
/// (PCIe Gen5 x16, 64 GB/s), slowest GPU 55.12 GB/s device to host and 55.55 GB/s host to
/// device, 0.86 and 0.87 (Azure/cluster-health-monitor, pkg/checker/gpu, the captured
/// nvbandwidth_host_report.json its bandwidth test reads). NOTE: one capture; a calibration
/// profile's d2h-pinned copies replace it (run/host_stream_rate.hpp).
inline constexpr double kPinnedDeviceToHostEfficiency = kPinnedHostToDeviceEfficiency;

/// The efficiencies the datasheet roofline applies to a device's peaks, each in (0, 1].
struct Efficiencies {
  double matmul = kMatmulEfficiency;
  double memory = kMemoryEfficiency;
  double prefill_attention = kPrefillAttentionEfficiency;
  double decode_attention = kDecodeAttentionEfficiency;
};

}  // namespace vramsim::cost
