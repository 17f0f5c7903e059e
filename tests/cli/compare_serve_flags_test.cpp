// `vramsim compare serve` end to end: the flags that do not apply are refused naming themselves,
// the price comes from topologies/prices.toml unless --gpu-price-per-hour is given, and the table
// says per replica and per GPU where it means it.
#include <nlohmann/json.hpp>

#include <string>

#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using vramsim::testing::root;
using vramsim::testing::run;
using vramsim::testing::Run;

namespace {

const std::string kSmall = " --model meta-llama/Llama-3.2-1B --gpu h100-sxm --max-model-len 4096 "
                           "--synthetic poisson --rate 20 --num-requests 200 "
                           "--prompt-tokens fixed:512 --output-tokens fixed:128";

}  // namespace

TEST_CASE("compare serve refuses the split flags it chooses itself, naming each", "[cli][compare]") {
  for (const char* flag : {"--tp 2", "--tensor-parallel-size 2", "--pp 2", "--replicas 2",
                           "--data-parallel-size 2", "--enable-expert-parallel",
                           "--prefill-instances 1", "--decode-tp 2"}) {
    INFO(flag);
    const Run r = run("compare serve" + kSmall + " " + flag);
    CHECK(r.exit_code == 2);
    const std::string name = std::string(flag).find("tensor") != std::string::npos
                                 ? "--tp"
                                 : std::string(flag).substr(0, std::string(flag).find(' '));
    CHECK(r.out.find(name + ": compare serve sets the split itself") != std::string::npos);
  }
  const Run bad = run("compare serve" + kSmall + " --precision 1.5");
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("--precision") != std::string::npos);
}

TEST_CASE("compare serve prices SLO-meeting tokens from the price table or the flag",
          "[cli][compare]") {
  Run r = run("compare serve" + kSmall + " --format json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  // topologies/prices.toml's h100-sxm row.
  CHECK(j["price_per_gpu_hour_usd"] == 2.99);
  CHECK(j["price_source"].get<std::string>().rfind("topologies/prices.toml: ", 0) == 0);
  CHECK(j["options"][0].contains("cost_per_million_slo_output_tokens_usd"));
  const double table_cost = j["options"][0]["cost_per_million_slo_output_tokens_usd"];

  r = run("compare serve" + kSmall + " --gpu-price-per-hour 5.98 --format json");
  REQUIRE(r.exit_code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["price_source"] == "--gpu-price-per-hour");
  CHECK(j["options"][0]["cost_per_million_slo_output_tokens_usd"].get<double>() ==
        Approx(2 * table_cost));  // twice the price, the same tokens
}

TEST_CASE("compare serve's table gives capacity, per-GPU and per-replica columns and the why",
          "[cli][compare]") {
  const Run r = run("compare serve" + kSmall);
  REQUIRE(r.exit_code == 0);
  for (const char* s : {"KV tok/replica", "At capacity:", "req/s/GPU", "cap x", "scaling",
                        "$/M SLO tok", "bound by", "Why, at capacity:", "Verdict: "}) {
    INFO(s);
    CHECK(r.out.find(s) != std::string::npos);
  }
  CHECK(r.out.find("speed") == std::string::npos);  // the goodput ratio is no longer "speed"
}
