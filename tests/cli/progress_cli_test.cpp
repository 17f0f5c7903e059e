// Long runs show progress on stderr (issue 15): serve's replay, capacity's and compare's
// searches. Off when stderr is not a terminal (these tests read it through a pipe), so that
// logs hold no control characters, unless VRAMSIM_PROGRESS=1 asks for it (then one plain line
// per update, from the start).
#include <array>
#include <cstdio>
#include <string>

#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

namespace {

using vramsim::testing::run;

bool has(const std::string& out, const std::string& part) {
  return out.find(part) != std::string::npos;
}

// stderr alone of `VRAMSIM_PROGRESS=1 vramsim args` (stdout dropped).
std::string progress_of(const std::string& args) {
  const std::string cmd =
      "VRAMSIM_PROGRESS=1 " + std::string(VRAMSIM_BINARY) + " " + args + " 2>&1 >/dev/null";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  CHECK(pclose(p) == 0);
  return out;
}

const std::string kServe =
    "serve meta-llama/Llama-3.2-1B --gpu h100-sxm --synthetic poisson --rate 50 "
    "--num-requests 9000 --prompt-tokens fixed:64 --output-tokens fixed:4";

}  // namespace

TEST_CASE("serve reports finished requests on stderr when asked, and nothing through a pipe",
          "[cli][progress]") {
  const auto quiet = run(kServe);
  REQUIRE(quiet.exit_code == 0);
  CHECK_FALSE(has(quiet.out, "requests finished"));
  CHECK_FALSE(has(quiet.out, "\r"));
  const std::string shown = progress_of(kServe);
  // Every 4,096 finished requests (serving::kProgressEveryRequests): two lines for 9,000.
  CHECK(has(shown, "serve: 4096 requests finished, "));
  CHECK(has(shown, "serve: 8192 requests finished, "));
  CHECK_FALSE(has(shown, "\r"));
}

TEST_CASE("capacity serve and compare serve report each simulation when asked",
          "[cli][progress]") {
  const std::string workload =
      " meta-llama/Llama-3.2-1B --gpu h100-sxm --synthetic poisson --rate 20 "
      "--num-requests 100 --prompt-tokens fixed:256 --output-tokens fixed:16";
  auto r = run("capacity serve" + workload + " --slo-ttft-p99 100ms");
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(has(r.out, "capacity serve: run 1"));
  CHECK(has(progress_of("capacity serve" + workload + " --slo-ttft-p99 100ms"),
            "capacity serve: run 1 of at most 30: 20 requests/s meets the SLOs"));
  CHECK(has(progress_of("compare serve" + workload + " --num-gpus 2 --max-runs 4"),
            "compare serve: 1 simulations; 1 GPU: 20 requests/s"));
}
