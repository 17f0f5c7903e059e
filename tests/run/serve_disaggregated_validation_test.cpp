// Disaggregated prefill/decode (`serve --prefill-instances X --decode-instances Y`) against
// llm-d's published P/D runs of openai/gpt-oss-120b on 16 H200 GPUs, held out (nothing in the
// simulator was fitted to them). The rows are tests/validation/llmd_pd_gpt_oss_120b_h200.csv;
// its README section gives the sources, the exact settings and what is inferred.
//
// Both sources run llm-d's `guide_pd-disaggregation_1.yaml` profile (inference-perf): 5,400
// random requests of 5,000 prompt and 250 output tokens at a constant 45 requests/s for 120 s,
// against 8 prefill instances (TP 1, --block-size 128) and 2 decode instances (TP 4) joined by
// vLLM's NixlConnector over RDMA across two 8-GPU nodes, or, for the aggregated baseline, 16
// replicas of TP 1 behind a Kubernetes Service with vLLM's defaults.
//
//   * mtr-*: the "PD NIXL" arm of the multi-tier report
//     (guides/pd-disaggregation/benchmark-results/vllm-gpt-oss-120b-h200-multi-tier.md,
//     vLLM v0.27.1, CoreWeave).
//   * readme-*: the guide's Benchmarking Report (GKE A3 Ultra, vLLM release not stated) and its
//     comparison with the aggregated baseline, whose column the guide says was carried over
//     from an earlier measurement.
//
// Tolerances: the model is far off on every row (the simulated prefill of gpt-oss-120b is still
// about three times as fast as the deployment's, see the README section), so each row is held to
// its error at this commit, within 15 % of the simulated value either way (printed with -s): the
// test fails when the model moves materially; the band is not a claim of accuracy.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "sim/run/serve_results.hpp"
#include "tests/catch.hpp"
#include "tests/validation/serve_validation.hpp"
#include "tests/validation/validation_table.hpp"

namespace vramsim {
namespace {

const std::vector<std::string> kColumns = {
    "run_id",      "layout",        "model",           "zoo_model",      "gpu",
    "vllm_version", "prefill_instances", "prefill_tp", "decode_instances", "decode_tp",
    "replicas",    "tp",            "block_size",      "input_tokens",   "output_tokens",
    "rate_per_s",  "num_requests",  "metric",          "measured",       "used_for_fitting",
    "source"};

// NOTE: inference-perf's `type: constant` load sends at evenly spaced times; a gamma process
// with a coefficient of variation of 0.01 is vramsim's nearest arrival process (the gaps of
// 1/45 s vary by 1 %).
constexpr double kConstantRateCv = 0.01;

std::string model_path(const testing::ValidationRow& row) {
  return (testing::kValidationDir / "models" / row.at("zoo_model")).string();
}

// The scenario a row describes, as `vramsim serve` reads it. A row whose vllm_version is
// "unstated" runs at vramsim's default release.
std::string scenario(const testing::ValidationRow& row) {
  std::string engine = fmt::format("block_size = {}\n", row.integer("block_size"));
  if (row.at("vllm_version") != "unstated") {
    engine += fmt::format("vllm_version = \"{}\"\n", row.at("vllm_version"));
  }
  std::string serving;
  if (row.at("layout") == "pd") {
    serving = fmt::format(
        "prefill_instances = {}\nprefill_tp = {}\ndecode_instances = {}\ndecode_tp = {}\n",
        row.integer("prefill_instances"), row.integer("prefill_tp"),
        row.integer("decode_instances"), row.integer("decode_tp"));
  } else {
    engine += fmt::format("tp = {}\n", row.integer("tp"));
    serving = fmt::format("replicas = {}\n", row.integer("replicas"));
  }
  return fmt::format(
      "seed = 1\n[model]\nid = \"{}\"\n[hardware]\ngpu = \"{}\"\n[engine]\n{}[workload]\n"
      "synthetic = \"gamma\"\nrate = {}\ncv = {}\nnum_requests = {}\n"
      "prompt_tokens = \"fixed:{}\"\noutput_tokens = \"fixed:{}\"\n[serving]\n{}",
      model_path(row), row.at("gpu"), engine, row.number("rate_per_s"), kConstantRateCv,
      row.integer("num_requests"), row.integer("input_tokens"), row.integer("output_tokens"),
      serving);
}

struct Simulated {
  double ttft_mean_s = 0.0;
  double ttft_p95_s = 0.0;
  double e2e_mean_s = 0.0;
  double e2e_p95_s = 0.0;
  double tpot_mean_s = 0.0;
  // Disaggregated runs only: the prefill instance's own first token and the hand-over.
  double prefill_ttft_mean_s = 0.0;
  double transfer_mean_s = 0.0;
  double prefill_busy = 0.0;  // the prefill pool's utilization in [0, 1]
  std::int64_t num_reserve_waits = 0;
};

Simulated simulate(const testing::ValidationRow& row) {
  const run::ServeAnswer a =
      testing::simulated_serve_of_row(row, scenario(row), row.integer("num_requests"));
  const serving::ServingMetrics& m = a.result.metrics;
  Simulated s;
  s.ttft_mean_s = m.ttft.mean_seconds();
  s.ttft_p95_s = m.ttft.quantile(0.95).seconds();
  s.e2e_mean_s = m.e2e.mean_seconds();
  s.e2e_p95_s = m.e2e.quantile(0.95).seconds();
  s.tpot_mean_s = m.tpot.mean_seconds();
  if (a.result.disaggregated) {
    const serving::DisaggregatedStats& d = *a.result.disaggregated;
    s.num_reserve_waits = d.num_reserve_waits;
    s.prefill_ttft_mean_s = d.prefill_ttft.mean_seconds();
    s.transfer_mean_s = d.transfer.mean_seconds();
    s.prefill_busy = a.result.prefill_utilization();
  }
  return s;
}

double pick(const Simulated& s, const testing::ValidationRow& row) {
  const std::string& metric = row.at("metric");
  if (metric == "ttft_mean_s") return s.ttft_mean_s;
  if (metric == "ttft_p95_s") return s.ttft_p95_s;
  if (metric == "e2e_mean_s") return s.e2e_mean_s;
  if (metric == "e2e_p95_s") return s.e2e_p95_s;
  if (metric == "tpot_mean_s") return s.tpot_mean_s;
  FAIL(fmt::format("{}:{}: unknown metric '{}'", row.file, row.line, metric));
  return 0.0;
}

// Every row is far outside any accuracy target (README section): each is held to its ratio
// simulated / measured at this commit, within 15 % either way, so that the test fails when the
// model moves materially in either direction (and is then re-recorded, with the README).
constexpr double kDrift = 0.15;
// Re-recorded (issue 16 / 12) when both P/D pools took async scheduling, the release default
// (the decode step's host time now overlaps the step before: TPOT 3.1 -> 1.8 ms) and a landed
// KV started waiting for the decode instance's per-step poll (TTFT mean 0.0881 -> 0.0915 s);
// when every step paid the GPU's 1.3 us between kernels (cost::kKernelGap: TPOT 1.8 -> 3.4 ms,
// TTFT mean 0.0897 -> 0.1001 s, E2E mean 0.5467 -> 0.9365 s, every row nearer its
// measurement); when the routed experts computed matmul_ogs's padded rows
// (moe_row_padding.hpp: a 5,000-token prefill 74 -> 108 ms, TTFT mean 0.1001 -> 0.1327 s, the
// aggregated layout now slower than P/D as measured); and when each kernel paid its fixed time
// (cost::kGemmKernelFixed, kSmallKernelFixed: TPOT 3.4 -> 6.3 ms, E2E mean 0.969 -> 1.710 s).
// The previous ratios, with errors before -> after, are in tests/validation/README.md.
const std::map<std::string, double> kRatioToday = {
    {"mtr-pd-ttft-mean", 0.3593},    {"mtr-pd-ttft-p95", 0.1799},
    {"mtr-pd-e2e-mean", 0.7414},     {"mtr-pd-e2e-p95", 0.6031},
    {"readme-pd-ttft-mean", 0.1608}, {"readme-pd-ttft-p95", 0.1112},
    {"readme-pd-e2e-mean", 0.6292},  {"readme-pd-e2e-p95", 0.5176},
    {"readme-pd-tpot-mean", 1.105},  {"readme-agg-ttft-mean", 0.2930},
    {"readme-agg-ttft-p95", 0.1010}, {"readme-agg-e2e-mean", 0.4482},
    {"readme-agg-e2e-p95", 0.2985}};
// Its previous values, before MXFP4 experts on Hopper ran at triton_kernels' measured 0.49 of
// the bf16 peak (cost::kHopperMatmulOgsMoeEfficiency; 0.70 before): TTFT ratios 0.2894 /
// 0.1451 (mtr mean / p95), 0.1296 / 0.0896 (readme P/D), 0.2226 / 0.0771 (aggregated).

const std::map<std::string, double> kComparisonToday = {
    {"e2e-mean", 0.7125}, {"e2e-p95", 0.5767}, {"ttft-mean", 1.822}, {"ttft-p95", 0.9080}};

bool near_today(double ratio, double today) {
  return ratio >= (1.0 - kDrift) * today && ratio <= (1.0 + kDrift) * today;
}

}  // namespace

TEST_CASE("disaggregated prefill/decode of gpt-oss-120b on 16 H200s against llm-d's published "
          "8P2D and aggregated runs, each row at its recorded error",
          "[run][serve][disaggregated][validation]") {
  const auto rows =
      testing::read_validation_table("llmd_pd_gpt_oss_120b_h200.csv", kColumns);
  REQUIRE(rows.size() == 13);
  // One simulation per distinct layout and release: the rows of a run share it.
  std::map<std::string, Simulated> runs;
  std::map<std::string, double> simulated_of, measured_of;
  std::string table = "row: simulated vs measured (error)\n";
  for (const testing::ValidationRow& row : rows) {
    CHECK_FALSE(row.used_for_fitting());
    const std::string key = row.at("layout") + "/" + row.at("vllm_version");
    if (!runs.count(key)) runs[key] = simulate(row);
    const double simulated = pick(runs[key], row);
    const double measured = row.number("measured");
    simulated_of[row.at("run_id")] = simulated;
    measured_of[row.at("run_id")] = measured;
    const double error = simulated / measured - 1.0;
    table += fmt::format("{:22} {:12} simulated {:8.4f} measured {:8.4f} ({:+6.1f}%)\n",
                         row.at("run_id"), row.at("metric"), simulated, measured, 100.0 * error);
    REQUIRE(kRatioToday.count(row.at("run_id")));
    CHECK(near_today(simulated / measured, kRatioToday.at(row.at("run_id"))));
  }
  // The relative figures of the guide's comparison: aggregated over P/D, which cancel the
  // roofline's absolute error on both layouts.
  for (const std::string metric : {"e2e-mean", "e2e-p95", "ttft-mean", "ttft-p95"}) {
    const double sim = simulated_of["readme-agg-" + metric] / simulated_of["readme-pd-" + metric];
    const double meas = measured_of["readme-agg-" + metric] / measured_of["readme-pd-" + metric];
    table += fmt::format("aggregated / P/D {:9}: simulated {:6.3f} measured {:6.3f} ({:+6.1f}%)\n",
                         metric, sim, meas, 100.0 * (sim / meas - 1.0));
    CHECK(near_today(sim / meas, kComparisonToday.at(metric)));
  }
  for (const auto& [key, s] : runs) {
    table += fmt::format("{}: prefill-only TTFT mean {:.4f} s, KV hand-over mean {:.4f} s, "
                         "prefill pool {:.0f}% busy, {} hand-overs waited for decode KV "
                         "blocks\n",
                         key, s.prefill_ttft_mean_s, s.transfer_mean_s, 100.0 * s.prefill_busy,
                         s.num_reserve_waits);
  }
  INFO(table);
  WARN(table);
}

}  // namespace vramsim
