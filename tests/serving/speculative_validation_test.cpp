// Speculative decoding's step arithmetic against a published measurement with known acceptance
// (held out: nothing in the simulator was fitted to it). Source: vllm-project/vllm issue #20780
// (ekagra-ranjan, 2025-07-10, "Eagle 3 is expected to be much faster than Eagle 1"): vLLM V1,
// meta-llama/Llama-3.1-8B-Instruct, batch size 1, MT-bench, EAGLE heads
// yuhuili/EAGLE-LLaMA3.1-Instruct-8B and yuhuili/EAGLE3-LLaMA3.1-Instruct-8B, K = 2..7: the
// acceptance length (AL, tokens per step) and the mean TPOT of every K, and the TPOT without
// speculation (7.07 ms). The rows are tests/validation/vllm_eagle_bs1_tpot.csv (its README
// section says more, including the GPU, an H100, which the issue's table does not name).
//
// The simulator is given the model, the head, K and the measured AL as its acceptance input (the
// constant rate a whose E = (1 - a^(K+1)) / (1 - a) equals AL) and predicts TPOT; what is
// compared is TPOT with speculation over TPOT without, which takes out the roofline's absolute
// error on this GPU (reported apart) and leaves the step arithmetic: the verification pass over
// K + 1 tokens, K draft passes, AL tokens per step.
//
// Tolerance, fixed before the first run: 20 % relative on the ratio (the TPOT tolerance of the
// vLLM bench validation is 15 % on an absolute figure; a ratio of two simulated figures, one of
// them over a draft whose kernels the datasheet roofline does not know, gets a little more).
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/run/serve_options.hpp"
#include "sim/run/serve_run.hpp"
#include "tests/catch.hpp"
#include "tests/validation/validation_table.hpp"

namespace vramsim {
namespace {

const std::filesystem::path kRoot(VRAMSIM_SOURCE_ROOT);
constexpr double kRatioTolerance = 0.20;

struct Row {
  std::string method;
  std::string head;
  int k = 0;
  double acceptance_length = 0;
  double tpot_ms = 0;
  double vanilla_tpot_ms = 0;
};

std::vector<Row> rows() {
  const std::vector<std::string> columns = {
      "method",         "head",          "num_speculative_tokens", "acceptance_length",
      "tpot_ms",        "vanilla_tpot_ms", "used_for_fitting",     "source"};
  std::vector<Row> out;
  for (const testing::ValidationRow& v :
       testing::read_validation_table("vllm_eagle_bs1_tpot.csv", columns)) {
    CHECK_FALSE(v.used_for_fitting());
    Row r;
    r.method = v.at("method");
    r.head = v.at("head");
    r.k = static_cast<int>(v.integer("num_speculative_tokens"));
    r.acceptance_length = v.number("acceptance_length");
    r.tpot_ms = v.number("tpot_ms");
    r.vanilla_tpot_ms = v.number("vanilla_tpot_ms");
    out.push_back(r);
  }
  return out;
}

/// The constant acceptance rate a in [0, 1] with 1 + a + ... + a^k = length (bisection).
double rate_for_length(double length, int k) {
  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 60; ++i) {
    const double a = 0.5 * (lo + hi);
    double e = 0.0, p = 1.0;
    for (int j = 0; j <= k; ++j, p *= a) e += p;
    (e < length ? lo : hi) = a;
  }
  return 0.5 * (lo + hi);
}

/// The simulated mean TPOT (s) of one client sending MT-bench-like requests one at a time.
double simulated_tpot_s(const std::string& engine_extra) {
  const std::string text = fmt::format(R"(
[model]
id = "meta-llama/Llama-3.1-8B-Instruct"
[hardware]
gpu = "h100-sxm"
[engine]
max_model_len = 4096
{}
[workload]
synthetic = "burst"
num_requests = 8
prompt_tokens = "fixed:128"
output_tokens = "fixed:256"
max_concurrency = 1
)",
                                       engine_extra);
  const run::ServeOptions o =
      run::resolve_serve_options(run::load_serve_scenario_text(text, "validation.toml"));
  run::ServeAnswer a = run::prepare_serve(o);
  REQUIRE(a.feasible);
  run::simulate_serve(a, nullptr);
  REQUIRE(a.result.metrics.num_finished == 8);
  return a.result.metrics.tpot.mean_seconds();
}

/// Simulates every row of `method`, returns the table of errors; the largest |error| in `worst`.
std::string compare_rows(const std::string& method, double vanilla_s, double& worst) {
  const std::filesystem::path head3 =
      kRoot / "tests" / "validation" / "models" / "yuhuili__EAGLE3-LLaMA3.1-Instruct-8B.json";
  std::string table = fmt::format("no speculation: simulated TPOT {:.2f} ms, measured 7.07 ms "
                                  "({:+.1f}%)\n",
                                  1e3 * vanilla_s, (1e3 * vanilla_s / 7.07 - 1.0) * 100.0);
  table += "method  K    AL  a      TPOT sim/meas (ms)  ratio sim/meas   error\n";
  double sum = 0.0;
  int n = 0;
  worst = 0.0;
  for (const Row& r : rows()) {
    if (r.method != method) continue;
    // The EAGLE-3 head's config.json (32,000 draft tokens) is local; EAGLE-1's shapes are the
    // target's, as that head has them.
    const std::string model = r.method == "eagle3" ? head3.string() : r.head;
    const double a = rate_for_length(r.acceptance_length, r.k);
    const std::string extra = fmt::format(
        "speculative_config = '{{\"method\": \"{}\", \"model\": \"{}\", "
        "\"num_speculative_tokens\": {}}}'\nspec_acceptance_rate = \"{:.6f}\"",
        r.method, model, r.k, a);
    const double tpot_s = simulated_tpot_s(extra);
    const double sim_ratio = tpot_s / vanilla_s;
    const double measured_ratio = r.tpot_ms / r.vanilla_tpot_ms;
    const double error = sim_ratio / measured_ratio - 1.0;
    worst = std::max(worst, std::abs(error));
    sum += std::abs(error);
    ++n;
    table += fmt::format("{:<7} {}  {:.2f}  {:.3f}  {:6.2f} / {:5.2f}       {:.3f} / {:.3f}   "
                         "{:+.1f}%\n",
                         r.method, r.k, r.acceptance_length, a, 1e3 * tpot_s, r.tpot_ms,
                         sim_ratio, measured_ratio, 100.0 * error);
  }
  REQUIRE(n == 6);
  table += fmt::format("mean |error| {:.1f}%, worst {:.1f}%", 100.0 * sum / n, 100.0 * worst);
  return table;
}

TEST_CASE("EAGLE at batch 1: TPOT over TPOT without speculation, as vLLM measured",
          "[serving][speculative][validation]") {
  double worst = 0.0;
  const std::string table = compare_rows("eagle", simulated_tpot_s(""), worst);
  WARN(table);
  CHECK(worst <= kRatioTolerance);
}

// NOTE: a known gap, kept visible rather than tuned away: with the tolerance fixed before the
// first run, the EAGLE-3 rows fall outside it (the simulated TPOT ratio is 24-38 % below the
// measured one at this commit). The measured step times (TPOT x AL) grow by about 1.0 ms per
// extra draft pass for EAGLE-3 and 0.73 ms for EAGLE-1, while the roofline charges a pass its
// bytes (0.25 ms for the EAGLE-3 head with its 32,000-token lm_head, 0.52 ms for EAGLE-1 with
// the shared 128,256-token one); what makes vLLM's EAGLE-3 pass slower is not modelled. The case
// runs and prints its table on every ctest run and holds the gap where it is (worst 38.4 % at
// this commit, 37.9 % before each kernel paid its fixed time, 38.8 % before the kernel gaps,
// bound 40 %), so that it fails if the gap grows;
// the 20 % target stays open until the draft pass is modelled (tests/validation/README.md).
TEST_CASE("EAGLE-3 at batch 1: TPOT over TPOT without speculation, as vLLM measured (known gap)",
          "[serving][speculative][validation]") {
  constexpr double kKnownGapBound = 0.40;  // not the target (kRatioTolerance): today's error
  double worst = 0.0;
  const std::string table = compare_rows("eagle3", simulated_tpot_s(""), worst);
  WARN(table);
  CHECK(worst <= kKnownGapBound);
}

}  // namespace
}  // namespace vramsim
