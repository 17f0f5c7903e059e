// The run layer serves a configuration from C++ alone: no flags, no command line.
#include "sim/run/serve_run.hpp"

#include "sim/core/error.hpp"
#include "tests/catch.hpp"

namespace {

using namespace vramsim;

// Llama-3.1-8B from the zoo on one H100 SXM, 40 requests of 256 + 32 tokens at 4 per second.
run::ServeConfig small_config() {
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
  return c;
}

}  // namespace

TEST_CASE("the run layer sizes the KV cache from the budget and replays the workload",
          "[run][serve]") {
  run::ServeAnswer a = run::prepare_serve(small_config());
  REQUIRE(a.feasible);
  CHECK(a.config.setup.replica.kv.num_blocks == a.budget.result.num_gpu_blocks);
  CHECK(a.config.setup.replica.limits.max_num_seqs == 1024);  // vLLM's H100 default
  CHECK(a.config.setup.max_model_len == 4096);
  run::simulate_serve(a, nullptr);
  CHECK(a.result.metrics.num_finished == 40);
  CHECK(a.cost_model.find("roofline") != std::string::npos);

  run::ServeAnswer again = run::prepare_serve(small_config());
  run::simulate_serve(again, nullptr);
  CHECK(again.result.num_steps == a.result.num_steps);
  CHECK(again.result.metrics.ttft.quantile(0.99) == a.result.metrics.ttft.quantile(0.99));
}

TEST_CASE("a configuration whose weights do not fit is an answer, not an error", "[run][serve]") {
  run::ServeConfig c = small_config();
  c.engine.model_id = "meta-llama/Llama-3.1-70B";
  const run::ServeAnswer a = run::prepare_serve(c);
  CHECK_FALSE(a.feasible);
  CHECK_FALSE(a.budget.result.reason.empty());
}

TEST_CASE("a bad scheduler limit is reported on its setting's config path", "[run][serve]") {
  run::ServeConfig c = small_config();
  c.setup.replica.limits.chunk_size = 0;
  c.setup.scheduler = "sarathi";
  try {
    run::prepare_serve(c);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    CHECK(e.report().problems()[0].field == "serving.chunk_size");
  }
}
