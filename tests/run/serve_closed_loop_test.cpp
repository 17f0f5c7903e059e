// `workload.max_concurrency` and `workload.think_time` through the serving schema to the
// simulation's client gate (sim/serving/serving_simulation.hpp, ClientLoop).
#include "sim/core/error.hpp"
#include "sim/run/serve_options.hpp"
#include "sim/run/serve_results.hpp"
#include "tests/catch.hpp"

#include <string>

namespace {

using namespace vramsim;

constexpr const char* kHead =
    "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"h100-sxm\"\n"
    "[engine]\nmax_model_len = 4096\n";

run::ServeConfig config(const std::string& workload) {
  return run::serve_config(run::resolve_serve_options(run::load_serve_scenario_text(
      std::string(kHead) + "[workload]\n" + workload, "closed.toml")));
}

}  // namespace

TEST_CASE("max_concurrency without a rate is a closed loop: every request due at once",
          "[run][serve][closed-loop]") {
  const run::ServeConfig c = config("max_concurrency = 4\nthink_time = \"250ms\"\n");
  CHECK(c.setup.clients.max_concurrency == 4);
  CHECK(c.setup.clients.think_time == milliseconds(250));
  CHECK(c.setup.clients.send_all_at_start);

  const run::ServeConfig capped =
      config("max_concurrency = 4\nsynthetic = \"poisson\"\nrate = 2.0\n"
             "prompt_tokens = \"fixed:512\"\noutput_tokens = \"fixed:64\"\n");
  CHECK(capped.setup.clients.max_concurrency == 4);
  CHECK_FALSE(capped.setup.clients.send_all_at_start);

  const run::ServeConfig open = config("synthetic = \"poisson\"\nrate = 2.0\n");
  CHECK_FALSE(open.setup.clients.closed());
}

TEST_CASE("a think time without max_concurrency is refused at its line",
          "[run][serve][closed-loop]") {
  try {
    config("think_time = \"1s\"\n");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    const Problem& p = e.report().problems()[0];
    CHECK(p.field == "workload.think_time");
    CHECK(p.message.find("max_concurrency") != std::string::npos);
    CHECK(p.where.line == 8);
  }
}

TEST_CASE("a closed-loop serve keeps N requests in flight and records the gate in its summary",
          "[run][serve][closed-loop]") {
  run::ServeAnswer a = run::prepare_serve(
      config("max_concurrency = 4\nnum_requests = 40\nprompt_tokens = \"fixed:256\"\n"
             "output_tokens = \"fixed:32\"\n"));
  REQUIRE(a.feasible);
  run::simulate_serve(a, nullptr);
  CHECK(a.result.metrics.num_finished == 40);
  CHECK(a.result.peak_requests_in_flight == 4);
  const nlohmann::ordered_json j = run::serve_summary(a).to_json();
  CHECK(j["max_concurrency"] == 4);
  CHECK(j["think_time_s"] == 0.0);
  CHECK(j["client_wait_p99_s"].get<double>() > 0.0);
}

TEST_CASE("closed-loop clients over an arrival process without lengths are refused, naming "
          "the missing length setting",
          "[run][serve][closed-loop]") {
  try {
    config("max_concurrency = 4\nsynthetic = \"poisson\"\nprompt_tokens = \"fixed:512\"\n");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    const Problem& p = e.report().problems()[0];
    CHECK(p.field == "workload.output_tokens");
    CHECK(p.message.find("--output-tokens") != std::string::npos);
    CHECK(p.message.find("'poisson'") != std::string::npos);
  }
  try {
    config("max_concurrency = 4\nsynthetic = \"burst\"\nnum_requests = 8\n");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 2);
    CHECK(e.report().problems()[0].field == "workload.prompt_tokens");
    CHECK(e.report().problems()[1].field == "workload.output_tokens");
  }
  // The azure-conv fit and a trace carry their own lengths; open loop keeps its defaults.
  CHECK(config("max_concurrency = 4\n").setup.clients.max_concurrency == 4);
  CHECK_FALSE(config("synthetic = \"poisson\"\nrate = 1.0\n").setup.clients.closed());
}

TEST_CASE("a closed loop of K requests refuses K <= 0 at its line", "[run][serve][closed-loop]") {
  for (const char* k : {"0", "-3"}) {
    try {
      config(std::string("max_concurrency = 2\nnum_requests = ") + k + "\n");
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      REQUIRE(e.report().problems().size() == 1);
      CHECK(e.report().problems()[0].field == "workload.num_requests");
      CHECK(e.report().problems()[0].where.line == 9);
    }
  }
}

TEST_CASE("one closed-loop client: request throughput is exactly one over its end-to-end "
          "latency, and the total-token throughput counts prompt and output tokens",
          "[run][serve][closed-loop]") {
  // Every request alone on the GPU with the same lengths: each takes the same time, sent the
  // moment the previous one ends, so the run lasts K x E2E.
  run::ServeAnswer a = run::prepare_serve(
      config("max_concurrency = 1\nnum_requests = 6\nprompt_tokens = \"fixed:512\"\n"
             "output_tokens = \"fixed:16\"\n"));
  REQUIRE(a.feasible);
  run::simulate_serve(a, nullptr);
  const serving::ServingMetrics& m = a.result.metrics;
  REQUIRE(m.num_finished == 6);
  CHECK(m.e2e.min() == m.e2e.max());
  const double e2e = m.e2e.mean_seconds();
  CHECK(a.result.duration_s() == Approx(6 * e2e).epsilon(1e-9));
  const nlohmann::ordered_json j = run::serve_summary(a).to_json();
  CHECK(j["throughput_requests_per_s"].get<double>() == Approx(1.0 / e2e).epsilon(1e-9));
  CHECK(j["throughput_total_tokens_per_s"].get<double>() ==
        Approx((512.0 + 16.0) / e2e).epsilon(1e-9));
  CHECK(j["peak_requests_in_system"] == 1);
}
