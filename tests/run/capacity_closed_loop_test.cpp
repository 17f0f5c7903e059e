// capacity serve over the client count (CapacityAxis::kMaxConcurrency): the largest number of
// closed-loop clients meeting the SLOs, found by doubling then integer bisection, checked
// against a linear scan of the same runs.
#include "sim/run/capacity_results.hpp"
#include "sim/run/capacity_serve_run.hpp"

#include "sim/core/error.hpp"
#include "tests/catch.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace {

using namespace vramsim;

run::CapacitySearch client_search() {
  run::CapacitySearch s;
  s.base.engine.model_id = "meta-llama/Llama-3.2-1B";
  s.base.engine.gpu_id = "h100-sxm";
  s.base.engine.max_model_len = 4096;
  s.base.trace.kind = serving::TraceKind::kSynthetic;
  s.base.trace.synthetic.arrivals.process = serving::ArrivalProcess::kBurst;
  s.base.trace.synthetic.prompt = serving::FixedLength{1024};
  s.base.trace.synthetic.output = serving::FixedLength{64};
  s.base.trace.synthetic.num_requests = 96;
  s.base.swap_space = GiB(4);
  s.axis = run::CapacityAxis::kMaxConcurrency;
  s.max_runs = 20;
  return s;
}

// p99 TTFT of the search's run with `clients` closed-loop clients; -1 when none ran.
double ttft_p99_s(const run::CapacityServeAnswer& a, std::int64_t clients) {
  for (const run::CapacityRun& r : a.runs) {
    if (r.max_concurrency == clients) return r.ttft_p99.seconds();
  }
  return -1.0;
}

}  // namespace

TEST_CASE("the client-count search finds N meeting the SLO with N + 1 missing it",
          "[run][capacity][closed-loop]") {
  // First find where one and many clients stand, then set the SLO between them.
  run::CapacitySearch probe = client_search();
  probe.ttft_p99 = Duration::from_seconds(1e6);  // met by anything
  probe.max_concurrency_cap = 64;
  const run::CapacityServeAnswer all = run::capacity_serve(probe);
  CHECK(all.max_concurrency == 64);
  CHECK(all.concurrency_high == 0);
  CHECK(all.note.find("up to the cap (64)") != std::string::npos);
  // Doubling 1, 2, ..., 64: seven runs, each with its client count.
  REQUIRE(all.runs.size() == 7);
  for (std::size_t i = 0; i < all.runs.size(); ++i) {
    CHECK(all.runs[i].max_concurrency == (std::int64_t{1} << i));
    CHECK(all.runs[i].rate_per_s > 0.0);  // achieved requests/s
  }
  const double one = ttft_p99_s(all, 1);
  const double many = ttft_p99_s(all, 64);
  REQUIRE(many > 2 * one);

  run::CapacitySearch s = client_search();
  s.ttft_p99 = Duration::from_seconds(std::sqrt(one * many));
  const run::CapacityServeAnswer a = run::capacity_serve(s);
  REQUIRE(a.max_concurrency >= 1);
  CHECK(a.concurrency_low == a.max_concurrency);
  CHECK(a.concurrency_high == a.max_concurrency + 1);
  CHECK(a.note.empty());
  // The answer against the runs the search recorded: N met, N + 1 missed.
  bool saw_low = false;
  bool saw_high = false;
  for (const run::CapacityRun& r : a.runs) {
    CHECK(r.meets == (r.ttft_p99 <= *s.ttft_p99));
    if (r.max_concurrency == a.max_concurrency) saw_low = r.meets;
    if (r.max_concurrency == a.max_concurrency + 1) saw_high = !r.meets;
  }
  CHECK(saw_low);
  CHECK(saw_high);

  const nlohmann::ordered_json j = run::capacity_serve_json(a);
  CHECK(j["axis"] == "max_concurrency");
  CHECK(j["max_concurrency"] == a.max_concurrency);
  CHECK(j["bracket_high_concurrency"] == a.max_concurrency + 1);
  CHECK(j["runs"][0]["max_concurrency"] == 1);

  SECTION("the search is deterministic") {
    const run::CapacityServeAnswer b = run::capacity_serve(s);
    REQUIRE(b.runs.size() == a.runs.size());
    for (std::size_t i = 0; i < a.runs.size(); ++i) {
      CHECK(b.runs[i].max_concurrency == a.runs[i].max_concurrency);
      CHECK(b.runs[i].ttft_p99 == a.runs[i].ttft_p99);
    }
  }
}

TEST_CASE("the client-count search says when even one client misses the SLO",
          "[run][capacity][closed-loop]") {
  run::CapacitySearch s = client_search();
  s.ttft_p99 = microseconds(1);
  const run::CapacityServeAnswer a = run::capacity_serve(s);
  CHECK(a.max_concurrency == 0);
  CHECK(a.concurrency_high == 1);
  CHECK(a.runs.size() == 1);
  CHECK(a.note == "the SLOs are not met even with one client");
}

TEST_CASE("the client-count search refuses a cap below one, and the rate search a closed loop",
          "[run][capacity][closed-loop]") {
  run::CapacitySearch s = client_search();
  s.ttft_p99 = milliseconds(100);
  s.max_concurrency_cap = 0;
  try {
    run::capacity_serve(s);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    CHECK(e.report().problems()[0].field == "capacity.max_concurrency_cap");
  }
  run::CapacitySearch rate = client_search();
  rate.ttft_p99 = milliseconds(100);
  rate.axis = run::CapacityAxis::kRate;
  rate.base.setup.clients.max_concurrency = 4;
  rate.base.setup.clients.send_all_at_start = true;
  try {
    run::capacity_serve(rate);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    CHECK(e.report().problems()[0].field == "workload.max_concurrency");
    CHECK(e.report().problems()[0].message.find("--max-concurrency-search") !=
          std::string::npos);
  }
}
