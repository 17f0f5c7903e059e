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

  const run::ServeConfig capped = config("max_concurrency = 4\nsynthetic = \"poisson\"\nrate = 2.0\n");
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
