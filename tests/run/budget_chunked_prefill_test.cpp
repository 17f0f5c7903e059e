// Without chunked prefill vLLM schedules whole prompts: its token budget, and the profile run
// that sizes the KV cache, hold max(max_num_batched_tokens, max_model_len) tokens
// (sim/run/budget_run.cpp; vLLM's SchedulerConfig). `budget --no-enable-chunked-prefill` and
// `serve` agree on it.
#include "sim/run/budget_run.hpp"
#include "sim/run/data_root.hpp"
#include "sim/run/serve_options.hpp"
#include "tests/catch.hpp"

namespace {

using namespace vramsim;

run::BudgetAnswer llama_8b(bool chunked, std::int64_t max_model_len) {
  run::BudgetRequest req;
  req.model_id = "meta-llama/Llama-3.1-8B-Instruct";
  req.gpu_id = "h100-sxm";
  req.max_model_len = max_model_len;
  req.enable_chunked_prefill = chunked;
  return run::answer_budget(req, run::project_root());
}

}  // namespace

TEST_CASE("chunked prefill off: the profile batch is max_model_len tokens", "[run][budget]") {
  const run::BudgetAnswer on = llama_8b(true, 32768);
  const run::BudgetAnswer off = llama_8b(false, 32768);
  CHECK(on.engine.max_num_batched_tokens == 8192);  // vLLM's default on an H100
  CHECK(off.engine.max_num_batched_tokens == 32768);
  REQUIRE(on.result.devices.size() == 1);
  REQUIRE(off.result.devices.size() == 1);
  // Four times the tokens in the forward pass: a larger activation peak, fewer KV blocks.
  CHECK(off.result.devices[0].activation_peak > on.result.devices[0].activation_peak);
  CHECK(off.result.num_gpu_blocks < on.result.num_gpu_blocks);

  // A budget already above max_model_len is kept.
  const run::BudgetAnswer short_ctx = llama_8b(false, 4096);
  CHECK(short_ctx.engine.max_num_batched_tokens == 8192);
}

TEST_CASE("the serving schema's chunked-prefill setting reaches the budget", "[run][budget]") {
  const run::ServeOptions o = run::resolve_serve_options(run::load_serve_scenario_text(
      "[model]\nid = \"meta-llama/Llama-3.1-8B-Instruct\"\n[hardware]\ngpu = \"h100-sxm\"\n"
      "[engine]\nmax_model_len = 32768\n[serving]\nenable_chunked_prefill = false\n",
      "s.toml"));
  const run::BudgetRequest req = run::budget_request(o);
  CHECK_FALSE(req.enable_chunked_prefill);
  const run::ServeAnswer a = run::prepare_serve(o);
  CHECK(a.budget.engine.max_num_batched_tokens == 32768);
  CHECK(a.config.setup.replica.limits.max_num_batched_tokens == 32768);
}
