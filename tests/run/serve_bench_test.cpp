// The benchmark behind `vramsim bench serve` (sim/run/serve_bench) on a small case: the
// synthetic run and one trace found in a folder are replayed, and what they simulate (requests,
// steps, events) is the same on a second run; only wall times may differ.
#include "sim/run/serve_bench.hpp"

#include <fstream>

#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

TEST_CASE("the serving benchmark replays the synthetic workload and the traces it finds",
          "[run][serve][bench]") {
  namespace run = vramsim::run;
  const vramsim::io::testing::ScratchDir dir("run-serve-bench");
  {
    std::ofstream t(dir / "Azure_tiny.csv");
    t << "arrival_s,prompt_tokens,output_tokens\n";
    for (int i = 0; i < 30; ++i) t << 0.5 * i << "," << 200 + 10 * i << "," << 20 + i << "\n";
  }
  std::ofstream(dir / "other.csv") << "not,a,trace\n";  // neither Azure* nor vllm-bench/: skipped
  const run::ServeBenchOptions o{
      .num_requests = 300, .replicas = 2, .rate_per_s = 10.0, .seed = 3,
      .traces_dir = dir.path().string()};
  const run::ServeBenchResult r = run::run_serve_bench(o, VRAMSIM_SOURCE_ROOT);
  CHECK(r.model_id == "meta-llama/Llama-3.1-8B");
  CHECK(r.gpu_id == "h100-sxm");
  REQUIRE(r.runs.size() == 2);
  CHECK(r.runs[0].name == "azure-conv synthetic, 300 requests, 2 replicas");
  CHECK(r.runs[0].num_requests == 300);
  CHECK(r.runs[1].name == "Azure_tiny.csv");
  CHECK(r.runs[1].num_requests == 30);
  for (const run::ServeBenchRun& x : r.runs) {
    CHECK(x.num_steps > 0);
    CHECK(x.num_events >= x.num_steps);
    CHECK(x.peak_in_flight >= 1);
    CHECK(x.simulated_s > 0.0);
    CHECK(x.wall_s > 0.0);
  }

  const run::ServeBenchResult again = run::run_serve_bench(o, VRAMSIM_SOURCE_ROOT);
  REQUIRE(again.runs.size() == 2);
  CHECK(again.runs[0].num_events == r.runs[0].num_events);
  CHECK(again.runs[0].simulated_s == r.runs[0].simulated_s);
  CHECK(again.runs[1].num_steps == r.runs[1].num_steps);

  const nlohmann::ordered_json j = run::serve_bench_json(r);
  CHECK(j["benchmark"] == "serve");
  REQUIRE(j["runs"].size() == 2);
  CHECK(j["runs"][0]["num_requests"] == 300);
  CHECK(j["runs"][1]["requests_per_s"].get<double>() == 30.0 / r.runs[1].wall_s);

  // No folder: the synthetic run only.
  const run::ServeBenchResult alone = run::run_serve_bench(
      {.num_requests = 50, .replicas = 1, .traces_dir = (dir / "missing").string()},
      VRAMSIM_SOURCE_ROOT);
  CHECK(alone.runs.size() == 1);
}
