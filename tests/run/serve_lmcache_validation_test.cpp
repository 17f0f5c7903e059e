// LMCache's CPU tier (`serve --kv-offloading-backend lmcache`) against the LMCache row of
// llm-d's published CPU offloading benchmark, held out (nothing in the simulator was fitted to
// it). The rows are tests/validation/llmd_lmcache_cpu_offload_qwen3_32b.csv; its README section
// gives the source, the settings and what is inferred. The engines and workload are those of
// serve_kv_offload_validation_test.cpp (the same tables' native row): Qwen/Qwen3-32B as 8 vLLM
// engines of TP 2 on H100 80GB, inference-perf's shared-prefix workload at a constant
// concurrency of 45, llm-d's prefix-aware routing; here with vLLM's LMCacheConnectorV1
// ("vLLM + LMCache CPU offloading 100GB") instead of the OffloadingConnector.
//
// The figures compared are the LMCache run's over the baseline's, as for the native rows.
// Tolerances: each row is held to the error seen at this commit plus a margin (printed with -s),
// so that the test fails when the model moves; the README section records the errors.
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
    "gpu_memory_utilization", "max_num_seqs", "lmcache_max_local_cpu_size_gib", "num_groups",
    "prompts_per_group", "system_prompt_tokens", "question_tokens", "output_tokens",
    "max_concurrency", "num_requests",  "metric",           "baseline",
    "lmcache",      "used_for_fitting", "source"};

using Run = testing::SharedPrefixRun;

// The row's engines and workload (tests/validation/shared_prefix_validation.hpp), with
// LMCache's CPU tier or without a tier. LMCache's size is given as vLLM's --kv-offloading-size of
// all the engine's workers together (max_local_cpu_size x TP), which vLLM hands each worker back
// as max_local_cpu_size.
Run simulate(const testing::ValidationRow& row, bool lmcache) {
  return testing::simulated_shared_prefix_run(
      row, lmcache ? fmt::format("kv_offloading_backend = \"lmcache\"\nkv_offloading_size = "
                                 "\"{}GiB\"\n",
                                 row.integer("lmcache_max_local_cpu_size_gib") *
                                     row.integer("tp"))
                   : std::string());
}

// The bound on each row's error, |simulated / measured - 1|: the error at this commit (README
// section) rounded up with a margin of a few points.
// Errors at this commit: -11.5, +27.3, +2.1, +11.7, +5.7 % on the high-cache rows in the order
// below, +3.0, -2.5, 0.0 % on the low-cache ones.
const std::map<std::string, double> kBand = {
    {"lm-high-throughput", 0.14}, {"lm-high-ttft-mean", 0.30}, {"lm-high-ttft-p90", 0.05},
    {"lm-high-e2e-mean", 0.14},   {"lm-high-e2e-p90", 0.08},   {"lm-low-throughput", 0.05},
    {"lm-low-e2e-mean", 0.05},    {"lm-low-e2e-p90", 0.03}};

}  // namespace

TEST_CASE("LMCache's CPU tier against llm-d's published LMCache offloading benchmark of "
          "Qwen3-32B on 8 TP-2 H100 engines, each row at its recorded error",
          "[run][serve][kv-offload][lmcache][validation]") {
  const auto rows =
      testing::read_validation_table("llmd_lmcache_cpu_offload_qwen3_32b.csv", kColumns);
  REQUIRE(rows.size() == 8);
  std::map<std::string, std::pair<Run, Run>> runs;  // workload -> (base, lmcache)
  std::string table = "row: simulated vs measured (error)\n";
  for (const testing::ValidationRow& row : rows) {
    CHECK_FALSE(row.used_for_fitting());
    const std::string& workload = row.at("workload");
    if (!runs.count(workload)) runs[workload] = {simulate(row, false), simulate(row, true)};
    const auto& [base, lm] = runs[workload];
    // 100 GiB per worker / (256 tokens x 128 KiB per token per rank) = 3,200 chunks of 16
    // blocks; no tier in the baseline.
    CHECK(lm.num_offload_blocks == 3'200 * 16);
    CHECK(base.num_offload_blocks == 0);
    const double simulated = lm.metric(row) / base.metric(row);
    const double measured = row.number("lmcache") / row.number("baseline");
    const double error = simulated / measured - 1.0;
    table += fmt::format("{:20} {:30} baseline simulated {:10.3f} measured {:10.3f}; lmcache "
                         "simulated {:10.3f} measured {:10.3f}; ratio simulated {:7.4f} "
                         "measured {:7.4f} ({:+6.1f}%)\n",
                         row.at("run_id"), row.at("metric"), base.metric(row),
                         row.number("baseline"), lm.metric(row), row.number("lmcache"), simulated,
                         measured, 100.0 * error);
    REQUIRE(kBand.count(row.at("run_id")));
    CHECK(std::abs(error) <= kBand.at(row.at("run_id")));
  }
  for (const auto& [workload, pair] : runs) {
    table += fmt::format("{}: prefix hits, baseline GPU {:.1f}%; LMCache GPU {:.1f}% + CPU "
                         "{:.1f}%\n",
                         workload, 100.0 * pair.first.gpu_hit_share,
                         100.0 * pair.second.gpu_hit_share, 100.0 * pair.second.cpu_hit_share);
  }
  INFO(table);
  WARN(table);
}

}  // namespace vramsim
