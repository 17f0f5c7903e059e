// `vramsim budget MODEL ...` and `vramsim serve MODEL ...` take the model positionally, as
// `vllm serve MODEL` does, when the first argument is not a scenario file (issue 14).
#include <string>

#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

namespace {

using vramsim::testing::root;
using vramsim::testing::run;

bool has(const std::string& out, const std::string& part) {
  return out.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("budget MODEL answers as budget --model MODEL does", "[cli][model]") {
  const auto positional =
      run("budget meta-llama/Llama-3.1-8B-Instruct --gpu h100-sxm --max-model-len 8192 "
          "--format json");
  const auto flag = run("budget --model meta-llama/Llama-3.1-8B-Instruct --gpu h100-sxm "
                        "--max-model-len 8192 --format json");
  REQUIRE(positional.exit_code == 0);
  REQUIRE(flag.exit_code == 0);
  CHECK(positional.out == flag.out);
  // A config.json path and a folder holding one are models too.
  const std::string config = root() + "/scenarios/models/meta-llama__Llama-3.1-8B.json";
  const auto path = run("budget " + config + " --gpu rtx-4090 --max-model-len 8192");
  CHECK(path.exit_code == 0);
  CHECK(has(path.out, "meta-llama/Llama-3.1-8B on 1 x"));
}

TEST_CASE("serve MODEL replays a workload against that model", "[cli][model]") {
  const auto r = run("serve meta-llama/Llama-3.2-1B --gpu h100-sxm --synthetic poisson --rate 2 "
                     "--num-requests 20 --prompt-tokens fixed:128 --output-tokens fixed:16");
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "meta-llama/Llama-3.2-1B on 1 x h100-sxm"));
  CHECK(has(r.out, "20 finished"));
}

TEST_CASE("a positional model and a different --model are refused, and a missing .toml stays "
          "a missing scenario",
          "[cli][model]") {
  auto r = run("budget meta-llama/Llama-3.1-8B-Instruct --model meta-llama/Llama-3.1-70B "
               "--gpu h100-sxm");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "given twice: 'meta-llama/Llama-3.1-8B-Instruct' as the first argument and "
                   "'meta-llama/Llama-3.1-70B' with --model"));
  r = run("budget nope.toml --gpu h100-sxm");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "scenario file 'nope.toml' does not exist"));
  // An unknown id gets the model error with the closest zoo ids.
  r = run("budget llama-3.1-8b-nope --gpu h100-sxm");
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "closest zoo ids: meta-llama/Llama-3.1-8B"));
}
