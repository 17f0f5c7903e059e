// The serve answer's records from the run layer alone (sim/run/serve_results): the summary and
// its JSON with DESIGN.md's field names in seconds and per second, and a results file streamed
// by the observer and read back through sim/io/results_reader.
#include "sim/run/serve_results.hpp"

#include "sim/io/results_file.hpp"
#include "sim/io/results_reader.hpp"
#include "sim/run/budget_results.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace vramsim;

// Llama-3.1-8B on one H100 SXM, 40 requests of 256 + 32 tokens at 4 per second.
run::ServeAnswer small_run(serving::ServingObserver* observer = nullptr) {
  run::ServeConfig c;
  c.engine.model_id = "meta-llama/Llama-3.1-8B";
  c.engine.gpu_id = "h100-sxm";
  c.engine.max_model_len = 4096;
  c.trace.kind = serving::TraceKind::kSynthetic;
  c.trace.synthetic.arrivals.rate_per_s = 4.0;
  c.trace.synthetic.prompt = serving::FixedLength{256};
  c.trace.synthetic.output = serving::FixedLength{32};
  c.trace.synthetic.num_requests = 40;
  c.trace.synthetic.seed = 7;
  c.swap_space = GiB(4);
  run::ServeAnswer a = run::prepare_serve(c);
  REQUIRE(a.feasible);
  run::simulate_serve(a, observer);
  return a;
}

}  // namespace

TEST_CASE("per_second is a count over seconds, and 0 when no time passed",
          "[run][serve][results]") {
  CHECK(run::per_second(40, 8.0) == 5.0);
  CHECK(run::per_second(40, 0.0) == 0.0);
}

TEST_CASE("serve_json names DESIGN.md's serve fields with the run's values and its inputs",
          "[run][serve][results]") {
  const run::ServeAnswer a = small_run();
  const nlohmann::ordered_json j = run::serve_json(a);
  for (const char* field :
       {"num_requests", "num_finished", "ttft_mean_s", "ttft_p50_s", "ttft_p99_s", "tpot_mean_s",
        "tpot_p50_s", "tpot_p99_s", "e2e_mean_s", "e2e_p50_s", "e2e_p99_s",
        "throughput_requests_per_s", "throughput_output_tokens_per_s", "num_preemptions",
        "prefix_hit_rate", "kv_peak_blocks"}) {
    CHECK(j.contains(field));
  }
  const serving::ServingMetrics& m = a.result.metrics;
  CHECK(j["num_requests"] == 40);
  CHECK(j["num_finished"] == 40);
  CHECK(j["ttft_p99_s"].get<double>() == m.ttft.quantile(0.99).seconds());
  CHECK(j["e2e_mean_s"].get<double>() == m.e2e.mean_seconds());
  CHECK(j["throughput_requests_per_s"].get<double>() == 40.0 / a.result.duration_s());
  // 40 requests x 32 output tokens.
  CHECK(j["num_output_tokens"] == 40 * 32);
  CHECK(j["throughput_output_tokens_per_s"].get<double>() == 1280.0 / a.result.duration_s());
  const nlohmann::ordered_json& in = j["inputs"];
  CHECK(in["model"] == "meta-llama/Llama-3.1-8B");
  CHECK(in["gpu"] == "h100-sxm");
  CHECK(in["max_model_len"] == 4096);
  CHECK(in["num_gpu_blocks"] == a.budget.result.num_gpu_blocks);
  CHECK_FALSE(in.contains("slo_ttft_s"));  // no SLO was set
}

TEST_CASE("serve_summary_schema is the schema of a real run's summary",
          "[run][serve][results]") {
  const run::ServeAnswer a = small_run();
  CHECK(run::serve_summary_schema() == run::serve_summary(a).schema());
}

TEST_CASE("a serve results file written by the run layer reads back with its units",
          "[run][serve][results]") {
  const io::testing::ScratchDir dir("run-serve");
  run::ServeAnswer a;
  {
    io::ResultsWriter w(dir / "serve.h5");
    std::unique_ptr<serving::ServingObserver> observer = run::make_results_observer(w);
    a = small_run(observer.get());
    run::write_budget_table(w, a.budget);
    run::write_serve_summary(w, a);
    observer.reset();
    w.finish();
  }
  const io::ResultsReader in(dir / "serve.h5");
  CHECK(in.num_rows("/serve/requests/request_id") == 40);
  CHECK(in.read_units("/serve/requests/arrival_ns") == "ns");
  const std::vector<std::int64_t> output = in.read_int_column("/serve/requests/output_tokens");
  CHECK(output == std::vector<std::int64_t>(40, 32));
  CHECK(in.num_rows("/serve/timeseries/time_ns") > 0);
  CHECK(in.read_units("/serve/timeseries/step_latency_ns") == "ns");

  CHECK(in.num_rows("/serve/summary/ttft_p99_s") == 1);
  CHECK(in.read_units("/serve/summary/ttft_p99_s") == "s");
  CHECK(in.read_units("/serve/summary/throughput_requests_per_s") == "1/s");
  CHECK(in.read_double_column("/serve/summary/ttft_p99_s").front() ==
        a.result.metrics.ttft.quantile(0.99).seconds());
  CHECK(in.read_int_column("/serve/summary/num_finished").front() == 40);
  CHECK(in.read_string_attribute("/serve", "model") == "meta-llama/Llama-3.1-8B");
  CHECK(in.read_string_attribute("/serve", "cost_model") == a.cost_model);
  CHECK(in.read_int_column("/budget/num_gpu_blocks").front() == a.budget.result.num_gpu_blocks);
}

TEST_CASE("the summary counts the prefix cache's evictions", "[run][serve][results]") {
  // 64 blocks of 16 tokens hold three 288-token requests (18 blocks each): the blocks of
  // finished requests stay cached until new content overwrites them.
  run::ServeConfig c;
  c.engine.model_id = "meta-llama/Llama-3.1-8B";
  c.engine.gpu_id = "h100-sxm";
  c.engine.max_model_len = 512;  // 32 blocks: vLLM needs one whole request to fit
  c.engine.num_gpu_blocks = 64;
  c.enable_prefix_caching = true;
  c.trace.kind = serving::TraceKind::kSynthetic;
  c.trace.synthetic.arrivals.rate_per_s = 4.0;
  c.trace.synthetic.prompt = serving::FixedLength{256};
  c.trace.synthetic.output = serving::FixedLength{32};
  c.trace.synthetic.num_requests = 40;
  c.trace.synthetic.seed = 7;
  c.swap_space = GiB(4);
  run::ServeAnswer a = run::prepare_serve(c);
  REQUIRE(a.feasible);
  run::simulate_serve(a, nullptr);
  CHECK(a.result.num_evictions > 0);
  const nlohmann::ordered_json j = run::serve_json(a);
  CHECK(j["kv_evictions"] == a.result.num_evictions);
  // Without the size limit nothing is evicted.
  CHECK(small_run().result.num_evictions == 0);
}
