// Closed-loop serving (`serve --max-concurrency N`) against a published `vllm bench serve
// --max-concurrency` sweep, held out (nothing in the simulator was fitted to it). The rows are
// tests/validation/vllm_bench_closed_loop.csv (its README section gives the source and what each
// figure means).
//
// Source: J. Musgrave, "vLLM throughput-latency sweep on NVIDIA A100"
// (https://johnmusgrave.com/p/vllm-throughput-latency-sweep-on): one A100 40GB (Lambda), vLLM
// 0.23.0, `vllm serve meta-llama/Llama-3.1-8B-Instruct` with its defaults (BF16, TP 1), and for
// C in 1, 2, ..., 64: `vllm bench serve --dataset-name random --random-input-len 1024
// --random-output-len 128 --ignore-eos --max-concurrency C --num-prompts 20C --request-rate inf`.
// The article states two figures exactly enough to test (its tables are not in the stored copy):
// decode at one request at a time runs at about 75 tokens/s (1 / TPOT), and concurrency 8 gives
// 6.6 times the output-token throughput of concurrency 1.
//
// Tolerances, fixed before the first run: 15 % relative on each (the TPOT tolerance of the
// open-loop vLLM bench validation, tests/serving/vllm_bench_validation_test.cpp; the article's
// rounding, 75 and 6.6, is under 1 %).
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "sim/run/serve_options.hpp"
#include "sim/run/serve_results.hpp"
#include "sim/run/serve_run.hpp"
#include "tests/catch.hpp"
#include "tests/validation/validation_table.hpp"

namespace vramsim {
namespace {

constexpr double kTolerance = 0.15;
// NOTE (issue 12): the decode row was a known gap, held apart: +11.2 % before async scheduling
// was modelled, +16.1 % with it (vLLM 0.23 runs it by default: it hides the 0.5 ms per-step host
// time behind the GPU step), +12.0 % with the GPU's 1.3 us between kernels (cost::kKernelGap,
// 320 kernels a step), and +1.9 % since each kernel pays its fixed time (cost::kGemmKernelFixed
// 4.7 us in each of 129 GEMM kernels, cost::kSmallKernelFixed 3 us in each of 192 others: 1.18
// ms a token), fitted to Vidur's kernel profiles, not to this row. It is held to the tolerance
// now like the other row.

struct Simulated {
  double tpot_mean_s = 0.0;
  double output_tokens_per_s = 0.0;
};

// `vllm bench serve --max-concurrency clients --num-prompts requests` against the row's engine,
// as `vramsim serve` runs it (the engine at vLLM's defaults, as the source served it).
Simulated simulate(const testing::ValidationRow& row, std::int64_t clients,
                   std::int64_t requests) {
  const std::string text = fmt::format(
      "[model]\nid = \"{}\"\n[hardware]\ngpu = \"{}\"\n[engine]\ntp = {}\n[workload]\n"
      "max_concurrency = {}\nnum_requests = {}\nprompt_tokens = \"fixed:{}\"\n"
      "output_tokens = \"fixed:{}\"\n",
      row.at("zoo_model"), row.at("gpu"), row.integer("tp"), clients, requests,
      row.integer("input_tokens"), row.integer("output_tokens"));
  run::ServeAnswer a = run::prepare_serve(
      run::resolve_serve_options(run::load_serve_scenario_text(text, row.at("run_id") + ".toml")));
  REQUIRE(a.feasible);
  run::simulate_serve(a, nullptr);
  REQUIRE(a.result.metrics.num_finished == requests);
  REQUIRE(a.result.peak_requests_in_flight == clients);
  return {a.result.metrics.tpot.mean_seconds(),
          run::per_second(a.result.metrics.num_output_tokens, a.result.duration_s())};
}

}  // namespace

TEST_CASE("closed-loop serving matches a published vllm bench serve concurrency sweep on an "
          "A100 within 15 %",
          "[serving][closed-loop][validation]") {
  const std::vector<std::string> columns = {
      "run_id",        "model",          "zoo_model", "gpu",      "vllm_version",
      "tp",            "input_tokens",   "output_tokens", "max_concurrency", "num_prompts",
      "metric",        "measured",       "reference_concurrency", "used_for_fitting", "source"};
  const auto rows = testing::read_validation_table("vllm_bench_closed_loop.csv", columns);
  REQUIRE(rows.size() == 2);
  std::string table;
  for (const testing::ValidationRow& row : rows) {
    CHECK_FALSE(row.used_for_fitting());
    const std::int64_t clients = row.integer("max_concurrency");
    const Simulated at = simulate(row, clients, row.integer("num_prompts"));
    const std::string& metric = row.at("metric");
    double simulated = 0.0;
    if (metric == "decode_tokens_per_s") {
      simulated = 1.0 / at.tpot_mean_s;
    } else if (metric == "output_throughput_ratio") {
      // The reference point of the same sweep: 20 prompts per client, as the source ran it.
      const std::int64_t ref = row.integer("reference_concurrency");
      const Simulated base = simulate(row, ref, 20 * ref);
      simulated = at.output_tokens_per_s / base.output_tokens_per_s;
    } else {
      FAIL(fmt::format("{}:{}: unknown metric '{}'", row.file, row.line, metric));
    }
    const double measured = row.number("measured");
    const double error = simulated / measured - 1.0;
    table += fmt::format("{} (vLLM {}, {}, C = {}): {} simulated {:.3f}, measured {:.3f} "
                         "({:+.1f}%)\n",
                         row.at("run_id"), row.at("vllm_version"), row.at("gpu"), clients, metric,
                         simulated, measured, 100.0 * error);
    CHECK(std::abs(error) <= kTolerance);
  }
  INFO(table);
  WARN(table);
}

}  // namespace vramsim
