// The KV offload tier (`serve --kv-offloading-size`) against llm-d's published benchmark of
// vLLM's native CPU offloading (OffloadingConnector), held out (nothing in the simulator was
// fitted to it). The rows are tests/validation/llmd_cpu_offload_qwen3_32b.csv; its README
// section gives the source, the exact settings and what is inferred.
//
// Source: llm-d, guides/tiered-prefix-cache/cpu/README.md, "Appendix: Benchmark" (added by
// llm-d/llm-d#457, 2025-11-19): Qwen/Qwen3-32B on 16 H100 80GB (4 a3-highgpu-4g nodes) as 8
// vLLM engines of TP 2 (the guide's manifest: --tensor-parallel-size 2 --max-num-seq 1024) with
// --gpu-memory-utilization 0.65 (9,271 GPU blocks per engine, the guide says), behind llm-d's
// router with GPU and CPU prefix-cache scorers; with and without the OffloadingConnector and
// num_cpu_blocks 41,000 per engine ("approximately 100GB", the guide says). inference-perf's
// shared-prefix workload at a constant concurrency of 45: 45 groups of 10 prompts, each prompt
// a group's system prompt (30,000 tokens, "high cache"; 8,000, "low cache") and a 256-token
// question, 1,024 output tokens.
//
// The figures compared are the offloaded run's over the baseline's (throughput in total tokens/s,
// mean and P90 TTFT and E2E latency), which cancel most of the roofline's absolute error, plus
// the engine's GPU block count (an absolute figure of the start-up accounting).
//
// The tier: vLLM's OffloadingConnector of that time sizes its CPU tier in blocks, not bytes
// (vllm/v1/kv_offload/cpu.py, CPUOffloadingSpec: num_cpu_blocks from kv_connector_extra_config,
// an LRUOffloadingManager over CPUBackend(block_size=offloaded_block_size, num_blocks=
// num_cpu_blocks), offloaded_block_size defaulting to the GPU block size). So the tier holds
// 41,000 blocks of 16 tokens, whatever their bytes: Qwen3-32B's block is 16 tokens x 64 layers
// x 8 KV heads x 128 x 2 (K, V) x 2 B = 4 MiB over both ranks, so the rows give the tier as
// 41,000 x 4 MiB = 164,000 MiB (160.2 GiB). Read as 100 GiB it held 25,600 blocks, 62 % of the
// run's.
//
// Tolerances: each row is held to the error seen at this commit plus a margin (printed with
// -s), so that the test fails when the model moves; the README section records the errors and
// what the model misses.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "sim/run/serve_results.hpp"
#include "tests/catch.hpp"
#include "tests/validation/shared_prefix_validation.hpp"
#include "tests/validation/validation_table.hpp"

namespace vramsim {
namespace {

const std::vector<std::string> kColumns = {
    "run_id",       "workload",         "model",            "zoo_model",
    "gpu",          "vllm_version",     "tp",               "replicas",
    "gpu_memory_utilization", "max_num_seqs", "kv_offloading_size", "num_groups",
    "prompts_per_group", "system_prompt_tokens", "question_tokens", "output_tokens",
    "max_concurrency", "num_requests",  "metric",           "baseline",
    "offloaded",    "used_for_fitting", "source"};

using Run = testing::SharedPrefixRun;

// The row's engines and workload (tests/validation/shared_prefix_validation.hpp), with the host
// tier or without it.
Run simulate(const testing::ValidationRow& row, bool offloaded) {
  return testing::simulated_shared_prefix_run(
      row, offloaded ? fmt::format("kv_offloading_size = \"{}\"\n", row.at("kv_offloading_size"))
                     : std::string());
}

// The bound on each row's error, |simulated / measured - 1|: the error at this commit (README
// section) rounded up with a margin of a few points, so that the test fails when the model
// moves. The low-cache rows' simulated ratio is exactly 1 (the tier never hits): they fail if
// the tier starts to change a run whose prefixes fit in HBM.
// NOTE: the high-cache ratios are sensitive to the engine's block count: the start-up
// accounting's allocator blocks (8,542 -> 8,510 blocks, -0.4 %) alone moved the throughput
// gain from +15.3 to +9.7 % and the TTFT mean ratio from 0.779 to 0.905 (one pass of 450
// requests; README section); the kernels' fixed time then moved them to +8.2 % and 0.902.
// The bands were re-recorded for both (8 / 8 / 10 % before on throughput, TTFT mean, E2E mean).
const std::map<std::string, double> kBand = {
    {"high-blocks", 0.10},    {"high-throughput", 0.13}, {"high-ttft-mean", 0.24},
    {"high-ttft-p90", 0.12},  {"high-e2e-mean", 0.13},   {"high-e2e-p90", 0.04},
    {"low-throughput", 0.03}, {"low-e2e-mean", 0.03},    {"low-e2e-p90", 0.07}};

}  // namespace

TEST_CASE("the KV offload tier against llm-d's published CPU offloading benchmark of "
          "Qwen3-32B on 8 TP-2 H100 engines, each row at its recorded error",
          "[run][serve][kv-offload][validation]") {
  const auto rows =
      testing::read_validation_table("llmd_cpu_offload_qwen3_32b.csv", kColumns);
  REQUIRE(rows.size() == 9);
  std::map<std::string, std::pair<Run, Run>> runs;  // workload -> (base, tier)
  std::string table = "row: simulated vs measured (error)\n";
  for (const testing::ValidationRow& row : rows) {
    CHECK_FALSE(row.used_for_fitting());
    const std::string& workload = row.at("workload");
    if (!runs.count(workload)) runs[workload] = {simulate(row, false), simulate(row, true)};
    const auto& [base, tier] = runs[workload];
    // The run's num_cpu_blocks (file comment), and no tier in the baseline.
    CHECK(tier.num_offload_blocks == 41'000);
    CHECK(base.num_offload_blocks == 0);
    double simulated = 0.0, measured = 0.0;
    if (row.at("metric") == "num_gpu_blocks") {
      // The tier leaves the GPU cache as it is: both runs hold the same blocks.
      CHECK(base.num_gpu_blocks == tier.num_gpu_blocks);
      simulated = base.metric(row);
      measured = row.number("baseline");
    } else {
      simulated = tier.metric(row) / base.metric(row);
      measured = row.number("offloaded") / row.number("baseline");
      table += fmt::format("{:16} {:30} baseline simulated {:10.3f} measured {:10.3f}; "
                           "offloaded simulated {:10.3f} measured {:10.3f}\n",
                           row.at("run_id"), row.at("metric"), base.metric(row),
                           row.number("baseline"), tier.metric(row), row.number("offloaded"));
    }
    const double error = simulated / measured - 1.0;
    table += fmt::format("{:16} {:30} simulated {:10.4f} measured {:10.4f} ({:+6.1f}%)\n",
                         row.at("run_id"),
                         row.at("metric") == "num_gpu_blocks" ? "num_gpu_blocks"
                                                              : "ratio " + row.at("metric"),
                         simulated, measured, 100.0 * error);
    REQUIRE(kBand.count(row.at("run_id")));
    CHECK(std::abs(error) <= kBand.at(row.at("run_id")));
  }
  for (const auto& [workload, pair] : runs) {
    table += fmt::format("{}: prefix hits, baseline GPU {:.1f}%; offloaded GPU {:.1f}% + CPU "
                         "{:.1f}%\n",
                         workload, 100.0 * pair.first.gpu_hit_share,
                         100.0 * pair.second.gpu_hit_share, 100.0 * pair.second.cpu_hit_share);
  }
  INFO(table);
  WARN(table);
}

}  // namespace vramsim
