// End-to-end tests of `vramsim compare` and `vramsim capacity`: the JSON contract of issue 6,
// verdicts that follow from the numbers, and the bisection bracket.
#include <nlohmann/json.hpp>

#include <string>

#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using vramsim::testing::root;
using vramsim::testing::run;
using vramsim::testing::Run;

TEST_CASE("compare serve lists every option with the issue's fields and a verdict",
          "[cli][compare]") {
  const Run r = run("compare serve " + root() + "/scenarios/default.toml --synthetic gamma "
                    "--rate 66 --cv 1.09 --num-requests 3000 --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["options"].size() == 6);  // 1 GPU, TP=2, PP=2, 2 replicas, 1P1D, 2x batch
  for (const auto& o : j["options"]) {
    for (const char* f : {"name", "num_gpus", "throughput_output_tokens_per_s",
                          "goodput_requests_per_s", "ttft_p99_s", "tpot_p99_s",
                          "throughput_ratio", "goodput_ratio", "capacity_requests_per_s",
                          "capacity_ratio", "scaling_efficiency", "bottleneck"}) {
      CHECK(o.contains(f));
    }
    CHECK_FALSE(o.contains("speedup"));
  }
  CHECK(j["options"][0]["name"] == "1 GPU");
  CHECK(j["options"][0]["capacity_ratio"] == 1.0);
  // Overloaded on one H100 at 66 requests/s: every two-GPU option serves far more within the
  // SLOs at that rate, and two replicas sustain a far higher rate. NOTE: 60 requests/s until
  // async scheduling (vLLM 0.19's default, issue 12) hid the per-step host time: one GPU then
  // meets the SLOs at up to 60.0 requests/s (57.5 without it), so 60 no longer overloads it.
  for (int i = 1; i <= 3; ++i) CHECK(j["options"][i]["goodput_ratio"].get<double>() > 1.5);
  CHECK(j["options"][3]["name"] == "2 replicas");
  CHECK(j["options"][3]["capacity_ratio"].get<double>() > 1.5);
  CHECK(j["options"][4]["name"] == "1P1D");
  CHECK(j["options"][4]["num_gpus"] == 2);
  CHECK(j["verdict"].get<std::string>().find("helps") != std::string::npos);
}

TEST_CASE("compare serve says when one GPU already meets the SLOs, and flags slow PCIe TP",
          "[cli][compare]") {
  const Run r = run("compare serve --model meta-llama/Llama-3.2-1B --gpu rtx-4090 "
                    "--max-model-len 8192 --synthetic poisson --rate 30 --num-requests 1000 "
                    "--prompt-tokens fixed:512 --output-tokens fixed:128 --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const std::string v = j["verdict"];
  CHECK(v.find("at the given rate one GPU already keeps all 1000 requests within the SLOs") !=
        std::string::npos);
  CHECK(v.find("TP=2 over PCIe makes the slowest requests slower") != std::string::npos);
  CHECK(j["link"] == "PCIe");
  // TP=2 over PCIe: all-reduces on every layer lower the rate it sustains below one GPU's.
  REQUIRE(j["options"][1]["name"] == "TP=2");
  CHECK(j["options"][1]["capacity_ratio"].get<double>() < 1.0);
  CHECK(j["options"][1]["step_communication_s"].get<double>() > 0.0);
}

TEST_CASE("compare train marks what does not fit and compares tokens/s", "[cli][compare]") {
  const Run r = run("compare train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --seq-len 4096 "
                    "--checkpointing full --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["options"].size() == 7);
  CHECK(j["options"][0]["fits"] == false);  // 16 bytes/param of model state alone > 80 GB
  for (const auto& o : j["options"]) {
    for (const char* f : {"name", "num_gpus", "fits"}) CHECK(o.contains(f));
    if (o["valid"]) {
      for (const char* f : {"peak_allocated_bytes", "step_time_s", "speedup"}) CHECK(o.contains(f));
    }
  }
  CHECK(j["verdict"].get<std::string>().find("does not fit one GPU") != std::string::npos);
}

TEST_CASE("capacity serve brackets the largest rate meeting the p99 SLOs", "[cli][capacity]") {
  const Run r = run("capacity serve " + root() + "/scenarios/default.toml --num-requests 800 "
                    "--slo-ttft-p99 2s --slo-tpot-p99 100ms --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const double low = j["bracket_low_requests_per_s"];
  const double high = j["bracket_high_requests_per_s"];
  CHECK(j["max_rate_requests_per_s"] == low);
  CHECK(low > 5.0);  // the trace's own 5.5 requests/s is comfortably served
  CHECK(high > low);
  CHECK((high - low) / high <= 0.02);
  for (const auto& run_row : j["runs"]) {
    const double rate = run_row["rate_requests_per_s"];
    if (run_row["meets_slo"]) CHECK(rate <= low);
  }
}

TEST_CASE("capacity serve needs an objective, and capacity train finds the largest micro-batch",
          "[cli][capacity]") {
  Run r = run("capacity serve " + root() + "/scenarios/default.toml");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--slo-ttft-p99") != std::string::npos);

  r = run("capacity train --model meta-llama/Llama-3.2-1B --gpu h100-sxm --seq-len 2048 "
          "--format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["plans"].size() == 4);
  // More checkpointing never lowers what fits.
  CHECK(j["plans"][3]["max_micro_batch"].get<int>() >= j["plans"][0]["max_micro_batch"].get<int>());
  CHECK(j["plans"][3]["max_seq_len"].get<int>() >= j["plans"][0]["max_seq_len"].get<int>());
  CHECK(j["plans"][0]["max_micro_batch"].get<int>() > 0);
}
