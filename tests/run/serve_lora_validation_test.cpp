// Multi-LoRA serving (`serve --enable-lora --max-loras N --num-lora-adapters N`) against a
// published vLLM offline-throughput measurement with and without LoRA, held out (nothing in the
// simulator was fitted to it). The rows are tests/validation/vllm_pr11267_lora_throughput.csv;
// its README section gives the source, the exact settings and what is inferred.
//
// Source: vllm-project/vllm#11267 ("[misc] benchmark_throughput : Add LoRA",
// varun-sundar-rabindranath, 2024-12-17), on one A100: `benchmarks/benchmark_throughput.py
// --model meta-llama/Llama-2-7b-hf --dataset ShareGPT_V3_unfiltered_cleaned_split.json
// --num-prompts 1000`, 11.45 requests/s (5,509.93 total and 2,693.62 output tokens/s); with
// `--enable-lora --max-loras 1 --max-lora-rank 8 --lora-path yard1/llama-2-7b-sql-lora-test`,
// 7.60 requests/s; with `--max-loras 4`, 7.61 requests/s. benchmark_throughput gives each
// request the adapter path under a LoRA id drawn uniformly from 1..max_loras, so max_loras
// distinct adapters (the same weights) are in play.
//
// The figure compared is the LoRA run's requests/s over the base run's, which cancels most of
// the roofline's absolute error. The ShareGPT prompts are replaced by fixed lengths equal to
// the source's own means (total minus output tokens/s, and output tokens/s, over requests/s:
// 246 and 235 tokens), all 1,000 sent at time zero as the offline benchmark does.
//
// Tolerance: the model is far off (README section); each row is held to its error at this
// commit within 3 points either way (printed with -s), so that the test fails when the model
// moves; the band is not a claim of accuracy.
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
    "run_id",       "model",          "zoo_model",          "gpu",
    "vllm_version", "num_prompts",    "mean_input_tokens",  "mean_output_tokens",
    "max_loras",    "max_lora_rank",  "metric",             "baseline",
    "with_lora",    "used_for_fitting", "source"};

// Requests/s of the row's offline run, with `max_loras` adapters or without LoRA (0).
double requests_per_s(const testing::ValidationRow& row, std::int64_t max_loras) {
  // The runs are vLLM main of 2024-12-17 (between 0.6.4.post1 and 0.6.5, the V0 engine): they
  // are replayed under 0.6.5's V0 scheduler and defaults (run/vllm_version.hpp; the KV cache
  // from 0.9.0's start-up rules, V0's own profile not being modelled).
  std::string engine = "vllm_version = \"0.6.5\"\n";
  std::string workload;
  if (max_loras > 0) {
    engine += fmt::format("enable_lora = true\nmax_loras = {}\nmax_lora_rank = {}\n", max_loras,
                          row.integer("max_lora_rank"));
    workload = fmt::format("num_lora_adapters = {}\nlora_distribution = \"uniform\"\n",
                           max_loras);
  }
  const std::string text = fmt::format(
      "seed = 1\n[model]\nid = \"{}\"\n[hardware]\ngpu = \"{}\"\n[engine]\n{}[workload]\n"
      "synthetic = \"burst\"\nnum_requests = {}\nprompt_tokens = \"fixed:{}\"\n"
      "output_tokens = \"fixed:{}\"\n{}",
      row.at("zoo_model"), row.at("gpu"), engine, row.integer("num_prompts"),
      row.integer("mean_input_tokens"), row.integer("mean_output_tokens"), workload);
  const run::ServeAnswer a =
      testing::simulated_serve_of_row(row, text, row.integer("num_prompts"));
  return run::per_second(a.result.metrics.num_finished, a.result.duration_s());
}

// The model misses most of the measured slowdown (README section): each row is held to its
// error at this commit (+47.8 % and +47.3 % under 0.6.5's V0 scheduler; +47.7 % and +47.2 %
// under 0.19's V1 rules before), within 3 points either way, i.e. a simulated LoRA slowdown of
// 0 to about 4 % (1.9 % and 2.1 % today): the test fails when the LoRA term moves materially
// in either direction.
struct Band {
  double lo, hi;
};
const std::map<std::string, Band> kBand = {{"max-loras-1", {0.447, 0.507}},
                                           {"max-loras-4", {0.442, 0.502}}};

}  // namespace

TEST_CASE("multi-LoRA serving's slowdown against a published vLLM offline throughput run of "
          "Llama-2-7B with rank-8 adapters on an A100, each row at its recorded error",
          "[run][serve][lora][validation]") {
  const auto rows =
      testing::read_validation_table("vllm_pr11267_lora_throughput.csv", kColumns);
  REQUIRE(rows.size() == 2);
  std::string table = "row: simulated vs measured (error)\n";
  for (const testing::ValidationRow& row : rows) {
    CHECK_FALSE(row.used_for_fitting());
    REQUIRE(row.at("metric") == "requests_per_s");
    const double base = requests_per_s(row, 0);
    const double lora = requests_per_s(row, row.integer("max_loras"));
    const double simulated = lora / base;
    const double measured = row.number("with_lora") / row.number("baseline");
    const double error = simulated / measured - 1.0;
    table += fmt::format("{}: base simulated {:.2f} req/s measured {:.2f}; LoRA simulated {:.2f} "
                         "measured {:.2f}; ratio simulated {:.3f} measured {:.3f} ({:+.1f}%)\n",
                         row.at("run_id"), base, row.number("baseline"), lora,
                         row.number("with_lora"), simulated, measured, 100.0 * error);
    REQUIRE(kBand.count(row.at("run_id")));
    CHECK(error >= kBand.at(row.at("run_id")).lo);
    CHECK(error <= kBand.at(row.at("run_id")).hi);
  }
  INFO(table);
  WARN(table);
}

}  // namespace vramsim
