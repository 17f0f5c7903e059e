// The capacity search runs from C++ alone and records every simulation it makes.
#include "sim/run/capacity_serve_run.hpp"

#include "sim/core/error.hpp"
#include "tests/catch.hpp"

namespace {

using namespace vramsim;

run::CapacitySearch small_search() {
  run::CapacitySearch s;
  s.base.engine.model_id = "meta-llama/Llama-3.2-1B";
  s.base.engine.gpu_id = "h100-sxm";
  s.base.engine.max_model_len = 4096;
  s.base.trace.kind = serving::TraceKind::kSynthetic;
  s.base.trace.synthetic.arrivals.rate_per_s = 5.0;
  s.base.trace.synthetic.prompt = serving::FixedLength{512};
  s.base.trace.synthetic.output = serving::FixedLength{64};
  s.base.trace.synthetic.num_requests = 60;
  s.base.swap_space = GiB(4);
  s.ttft_p99 = milliseconds(200);
  s.precision = 0.1;
  s.max_runs = 12;
  return s;
}

std::vector<std::string> fields(const ConfigError& e) {
  std::vector<std::string> out;
  for (const Problem& p : e.report().problems()) out.push_back(p.field);
  return out;
}

}  // namespace

TEST_CASE("the capacity search brackets the largest rate meeting the SLO and records each run",
          "[run][capacity]") {
  const run::CapacityServeAnswer a = run::capacity_serve(small_search());
  REQUIRE(!a.runs.empty());
  CHECK(static_cast<int>(a.runs.size()) <= 12);
  CHECK(a.num_simulations() == a.runs.size());  // synthetic: no trace probe, no seq search
  CHECK(a.runs.front().rate_per_s == 5.0);
  CHECK(a.first_run.result.metrics.num_arrived == 60);
  // The answer is the best rate that met the objective, and every rate above the bracket's top
  // failed it.
  double best = 0.0;
  for (const run::CapacityRun& r : a.runs) {
    if (r.meets) best = std::max(best, r.rate_per_s);
    if (a.bracket_high > 0.0 && r.rate_per_s >= a.bracket_high) CHECK_FALSE(r.meets);
  }
  CHECK(a.max_rate_per_s == best);
  CHECK(a.bracket_low == a.max_rate_per_s);
}

TEST_CASE("the capacity search reports its own bad settings on config paths", "[run][capacity]") {
  run::CapacitySearch s = small_search();
  s.ttft_p99.reset();
  s.precision = 1.5;
  s.max_runs = 1;
  try {
    run::capacity_serve(s);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(fields(e) ==
          std::vector<std::string>{"capacity.slo", "capacity.precision", "capacity.max_runs"});
  }
}
