// The serving simulation against four measured vLLM 0.19.0 benchmark runs: each request stream
// of /work/shared/data/traces/vllm-bench/ (see its README.md) replayed through the vLLM V1
// scheduler and the default roofline step times, with the engine settings of the run; the
// simulated mean TTFT, TPOT and E2E must lie within stated tolerances of the measured ones.
//
// Measured values: computed here (python, not committed) from the per-request records that
// LLMServingSim published, casys-kaist/LLMServingSim at commit 5daddb2, files
// bench/examples/<hw>/<model>/vllm/requests.jsonl (MIT), with vramsim's definitions
// (analysis/SCHEMA.md "vramsim serve"): TTFT = first_token_ts - queued_ts, TPOT =
// (last_token_ts - first_token_ts) / (output_toks - 1), E2E = last_token_ts - queued_ts, over
// all 300 requests. These means agree with the project's own validation/summary.txt.
// Engine settings: bench/examples/<hw>/<model>/vllm/meta.json (engine_kwargs, kv_cache).
// Comparison tables and caveats: analysis/validation/vllm_bench.md.
//
// Tolerances (relative, on the means): TPOT 6 %, E2E 10 %, TTFT 10 % (cost::kRooflineServeBand).
// The largest errors with the committed defaults, all replayed with vLLM's async scheduling as
// they ran (issue 12): TTFT +6.9 %, TPOT +4.0 %, E2E +6.2 % (the RTX 4090 run); the RTX PRO
// 6000 Llama-3.1-8B run -3.3 / -1.2 / -1.8 %, Qwen3-32B TP 2 +3.1 / -2.5 / -0.2 %. Two costs
// took them there, both fitted to LLMServingSim's per-kernel profiles of vLLM 0.19 on these
// GPUs (profiler/perf/*/attention.csv, dense.csv), not to these request records: decodes that
// share a step with a prefill chunk, as FlashAttention 2 runs them (serving/
// mixed_batch_attention.hpp; the PRO 6000 Llama run was -18.4 / -7.2 / -10.1 %), and the RTX
// 4090's GEMMs at their measured 0.96 of the datasheet peak (topologies/devices/rtx-4090.toml
// [fitted]; the 4090 run was +14.7 / +9.0 / +13.3 %, then +16.0 / +10.0 / +14.5 % with the
// mixed steps alone). Earlier: bands of 30 / 15 / 20 % and 20 / 10 / 15 %. Queueing makes up
// 98-99.6 % of the measured TTFT in those runs, so it amplifies step-time errors.
//
// The MoE run (DP 2 + EP) is simulated as it ran: two lock-stepped DP ranks, 64 experts per
// GPU, vLLM's all-gather / reduce-scatter per MoE layer (sim/serving/expert_parallel.hpp).
// Nothing here is fitted to it. It was too fast: TTFT -68.4 %, TPOT -17.7 %, E2E -19.4 % with
// async scheduling; -60.3 / -15.3 / -16.8 % with the kernel gaps and fused_moe's padded rows;
// -38.2 / -9.8 / -10.7 % with each kernel's fixed time; since its mixed steps are costed as
// FlashAttention 2 runs them (its GQA group of 8 rereads each KV head eight times there),
// +0.1 / -2.3 / -2.2 %, and it is held to the dense runs' tolerances
// (analysis/validation/vllm_bench.md).
#include "sim/serving/serving_simulation.hpp"

#include "sim/cost/validated_bands.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/serving/roofline_time_model.hpp"
#include "sim/serving/routers/builtin_routers.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"
#include "tests/serving/serving_test_support.hpp"
#include "sim/serving/traces/plain_csv_trace.hpp"
#include "tests/catch.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <string>

namespace vramsim::serving {
namespace {

const std::filesystem::path kRoot(VRAMSIM_SOURCE_ROOT);
const std::filesystem::path kShared(VRAMSIM_SHARED_DATA);

// The band `vramsim serve` quotes for these step times (sim/cost/validated_bands.hpp).
constexpr double kTtftTolerance = cost::kRooflineServeBand.ttft_mean;
constexpr double kTpotTolerance = cost::kRooflineServeBand.tpot_mean;
constexpr double kE2eTolerance = cost::kRooflineServeBand.e2e_mean;

// One measured run: its engine settings and its measured means (seconds).
struct BenchRun {
  const char* name;
  const char* model;  // zoo id
  const char* gpu;    // topologies/devices id
  int tp;
  int dp;  // --data-parallel-size
  bool ep;  // --enable-expert-parallel
  std::int64_t max_num_seqs;
  std::int64_t max_model_len;
  std::int64_t num_gpu_blocks;
  const char* trace;  // under traces/vllm-bench/
  double ttft_mean_s;
  double tpot_mean_s;
  double e2e_mean_s;
};

// KV blocks: the RTX 4090 run's count is the one vLLM recorded (meta.json kv_cache.num_gpu_blocks
// = 2588); the RTX PRO 6000 runs did not record theirs, and the counts here are `vramsim serve`'s
// start-up profile for the same settings. Those three never fill their cache (checked below),
// so the exact count does not matter.
const BenchRun kRuns[] = {
    // bench/examples/RTX4090/Llama-3.1-8B: 1 x RTX 4090, TP 1, max_num_seqs 256,
    // max_model_len 32768. Measured: TTFT 65.457 s, TPOT 32.4 ms, E2E 86.578 s.
    {"RTX 4090, Llama-3.1-8B", "meta-llama/Llama-3.1-8B", "rtx-4090", 1, 1, false, 256, 32768, 2588,
     "rtx4090_llama-3.1-8b.csv", 65.4566, 0.032447, 86.5783},
    // bench/examples/RTXPRO6000/Llama-3.1-8B: 1 x RTX PRO 6000, TP 1, max_num_seqs 128.
    // Measured: TTFT 7.097 s, TPOT 32.5 ms, E2E 28.201 s.
    {"RTX PRO 6000, Llama-3.1-8B", "meta-llama/Llama-3.1-8B", "rtx-pro-6000", 1, 1, false, 128,
     131072,
     35733, "rtxpro6000_llama-3.1-8b.csv", 7.0972, 0.032458, 28.2007},
    // bench/examples/RTXPRO6000/Qwen3-32B: 2 x RTX PRO 6000 (PCIe), TP 2, max_num_seqs 128.
    // Measured: TTFT 36.905 s, TPOT 80.3 ms, E2E 90.408 s.
    {"2 x RTX PRO 6000, Qwen3-32B TP 2", "Qwen/Qwen3-32B", "rtx-pro-6000", 2, 1, false, 128, 40960,
     27481, "rtxpro6000_qwen3-32b_tp2.csv", 36.9052, 0.080311, 90.4081},
    // bench/examples/RTXPRO6000/Qwen3-30B-A3B-Instruct-2507: 2 x RTX PRO 6000, TP 1,
    // data_parallel_size 2, enable_expert_parallel (meta.json engine_kwargs), max_num_seqs 128
    // per rank: simulated as it ran, two DP ranks in lock-step, 64 experts on each GPU, the
    // all-gather / reduce-scatter of vLLM's default all2all backend per MoE layer over PCIe
    // (sim/serving/expert_parallel.hpp); requests placed round-robin over the ranks.
    // Qwen3-30B-A3B has the Instruct-2507 architecture. Measured: TTFT 1.086 s, TPOT 47.3 ms,
    // E2E 32.345 s.
    {"2 x RTX PRO 6000, Qwen3-30B-A3B DP 2 + EP", "Qwen/Qwen3-30B-A3B", "rtx-pro-6000", 1, 2,
     true, 128, 40960, 37096, "rtxpro6000_qwen3-30b-a3b_dp2ep.csv", 1.0860, 0.047286,
     32.3446},
};

// Replays `run` with the engine settings common to all four (bf16, block size 16,
// max_num_batched_tokens 2048, chunked prefill and prefix caching on, recompute preemption,
// full-sequence admission).
ServingResult replay(const BenchRun& run, const RooflineOptions& options = {}) {
  const testing::BuiltinRegistries& registries = testing::builtin_registries();
  const model::ModelSpec spec = model::load_model(run.model, kRoot / "scenarios" / "models");
  const hardware::DeviceSpec device = io::find_device(run.gpu, kRoot / "topologies");
  ExpertParallelSetup ep;
  ep.data_parallel_size = run.dp;
  ep.enable_expert_parallel = run.ep;
  const RooflineTimeModel time_model(spec, device, model::Parallelism{run.tp, 1},
                                     model::WeightFormat{}, DType::kBf16, options, ep);
  ServingSetup setup;
  setup.num_replicas = 1;
  setup.data_parallel_size = run.dp;
  setup.dp_lockstep = ep.lockstep(spec.moe.has_value());
  setup.dp_pad_to_largest = true;  // CUDA graphs on (no enforce_eager in engine_kwargs)
  setup.replica.limits.max_num_seqs = run.max_num_seqs;
  setup.replica.limits.max_num_batched_tokens = 2048;
  // meta.json's resolved SchedulerConfig: scheduler_reserve_full_isl on (vLLM 0.19's default).
  setup.replica.limits.reserve_full_isl = true;
  // Async scheduling: on in the RTX 4090 run's resolved config (meta.json), and vLLM 0.19's
  // default for the others (no PP, no speculative decoding; sim/run/vllm_version.cpp).
  setup.replica.async_scheduling = true;
  setup.replica.kv.num_blocks = run.num_gpu_blocks;
  setup.replica.kv.block_size = 16;
  setup.replica.kv.enable_prefix_caching = true;
  setup.max_model_len = run.max_model_len;
  PlainCsvTrace trace((kShared / "traces" / "vllm-bench" / run.trace).string(),
                      MalformedRowPolicy::kError);
  return simulate_serving(trace, setup, time_model, registries.schedulers, registries.routers,
                          nullptr);
}

double relative_error(double simulated, double measured) { return simulated / measured - 1.0; }

TEST_CASE("each measured dense vLLM 0.19 run replays with its mean TTFT, TPOT and E2E within "
          "tolerance",
          "[serving][validation]") {
  for (const BenchRun& run : kRuns) {
    if (run.dp > 1) continue;  // the MoE run: its own case below
    const ServingResult res = replay(run);
    const double ttft = relative_error(res.metrics.ttft.mean_seconds(), run.ttft_mean_s);
    const double tpot = relative_error(res.metrics.tpot.mean_seconds(), run.tpot_mean_s);
    const double e2e = relative_error(res.metrics.e2e.mean_seconds(), run.e2e_mean_s);
    INFO(run.name << ": TTFT " << 100 * ttft << " %, TPOT " << 100 * tpot << " %, E2E "
                  << 100 * e2e << " %");
    CHECK(res.metrics.num_finished == 300);
    CHECK(std::abs(ttft) < kTtftTolerance);
    CHECK(std::abs(tpot) < kTpotTolerance);
    CHECK(std::abs(e2e) < kE2eTolerance);
  }
}

TEST_CASE("the band serve quotes covers exactly the dense runs held to it", "[serving][validation]") {
  // `vramsim serve` says a setting lies inside kRooflineServeBand when its GPU and TP are among
  // these runs' (sim/run/serve_run.cpp serve_error_band).
  for (const BenchRun& run : kRuns) {
    if (run.dp > 1) continue;
    INFO(run.name);
    CHECK(std::find(std::begin(cost::kRooflineBandGpus), std::end(cost::kRooflineBandGpus),
                    std::string_view(run.gpu)) != std::end(cost::kRooflineBandGpus));
    CHECK(run.tp <= cost::kRooflineBandMaxTp);
  }
}

TEST_CASE("the DP 2 + EP MoE run replays as it ran, its known gap to the measurement held",
          "[serving][validation]") {
  const BenchRun& run = kRuns[3];
  REQUIRE(run.dp == 2);
  const ServingResult res = replay(run);
  const double ttft = relative_error(res.metrics.ttft.mean_seconds(), run.ttft_mean_s);
  const double tpot = relative_error(res.metrics.tpot.mean_seconds(), run.tpot_mean_s);
  const double e2e = relative_error(res.metrics.e2e.mean_seconds(), run.e2e_mean_s);
  INFO(run.name << ": TTFT " << 100 * ttft << " %, TPOT " << 100 * tpot << " %, E2E "
                << 100 * e2e << " %");
  CHECK(res.metrics.num_finished == 300);
  // Within the dense runs' tolerances since FlashAttention 2's mixed steps are costed
  // (mixed_batch_attention.hpp): TTFT +0.1 %, TPOT -2.3 %, E2E -2.2 % (TTFT was -38.2 %).
  CHECK(std::abs(e2e) < kE2eTolerance);
  CHECK(std::abs(tpot) < kTpotTolerance);
  CHECK(std::abs(ttft) < kTtftTolerance);
}

TEST_CASE("only the RTX 4090 run is bound by its KV cache", "[serving][validation]") {
  // 2,588 blocks hold 41,408 tokens: vLLM's log shows the cache 97-100 % full from 5 s to 170 s.
  CHECK(replay(kRuns[0]).num_preemptions > 0);
  for (std::size_t i = 1; i < std::size(kRuns); ++i) {
    const ServingResult res = replay(kRuns[i]);
    INFO(kRuns[i].name);
    CHECK(res.num_preemptions == 0);
    CHECK(res.kv_peak_blocks < kRuns[i].num_gpu_blocks);
  }
}

TEST_CASE("at the full PCIe bandwidth the TP 2 run is more than 25 % too fast",
          "[serving][validation]") {
  // Why pcie_collective_efficiency exists (roofline_options.hpp): the same GPU at TP 1 is within
  // tolerance, the TP 2 run is not until its all-reduces slow down. (Its TPOT at the full link
  // was -35 % before FlashAttention 2's mixed steps were costed, mixed_batch_attention.hpp;
  // -27 % since.)
  RooflineOptions full_link;
  full_link.pcie_collective_efficiency = 1.0;
  const BenchRun& tp2 = kRuns[2];
  const ServingResult res = replay(tp2, full_link);
  CHECK(relative_error(res.metrics.tpot.mean_seconds(), tp2.tpot_mean_s) < -0.25);
  CHECK(relative_error(res.metrics.e2e.mean_seconds(), tp2.e2e_mean_s) < -0.25);
}

}  // namespace
}  // namespace vramsim::serving
