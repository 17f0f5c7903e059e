// Every timing and memory answer says how far it is validated (sim/cost/validated_bands.hpp):
// `serve` quotes the band of its step-time source and `budget` the band of the KV accounting,
// each with the runs behind it, and says when a setting lies outside what those runs cover.
#include <string>

#include "sim/cost/validated_bands.hpp"
#include "sim/run/budget_run.hpp"
#include "sim/run/data_root.hpp"
#include "sim/run/serve_run.hpp"
#include "tests/catch.hpp"

namespace {

using namespace vramsim;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

run::ServeAnswer serve_on(const std::string& model, const std::string& gpu, std::int64_t tp) {
  run::ServeConfig c;
  c.engine.model_id = model;
  c.engine.gpu_id = gpu;
  c.engine.tp = tp;
  c.engine.max_model_len = 4096;
  c.trace.kind = serving::TraceKind::kSynthetic;
  c.trace.synthetic.arrivals.rate_per_s = 4.0;
  c.trace.synthetic.prompt = serving::FixedLength{256};
  c.trace.synthetic.output = serving::FixedLength{16};
  c.trace.synthetic.num_requests = 8;
  c.trace.synthetic.seed = 3;
  run::ServeAnswer a = run::prepare_serve(c);
  REQUIRE(a.feasible);
  run::simulate_serve(a, nullptr);
  return a;
}

run::BudgetAnswer budget_on(const std::string& gpu, const std::string& version) {
  run::BudgetRequest req;
  req.model_id = "meta-llama/Llama-3.1-8B-Instruct";
  req.gpu_id = gpu;
  req.max_model_len = 8192;
  req.vllm_version = version;
  req.suggest = false;
  return run::answer_budget(req, run::project_root());
}

}  // namespace

TEST_CASE("serve quotes the roofline's validated band, inside and outside its runs",
          "[run][serve][provenance]") {
  // Inside: a dense model on a GPU of the measured runs, TP 1.
  const run::ServeAnswer inside = serve_on("meta-llama/Llama-3.1-8B", "rtx-pro-6000", 1);
  CHECK(contains(inside.error_band, "mean TTFT within 10%, TPOT 6%, E2E 10%"));
  CHECK(contains(inside.error_band, std::string(cost::kRooflineServeBand.validated_on)));
  CHECK_FALSE(contains(inside.error_band, "outside"));
  // Outside: a datacenter GPU at TP 4 is not what the runs measured.
  const run::ServeAnswer outside = serve_on("meta-llama/Llama-3.1-8B", "h100-sxm", 4);
  CHECK(contains(outside.error_band, "outside them (GPU h100-sxm, TP 4)"));
  CHECK(contains(outside.error_band, "not a bound here"));
}

TEST_CASE("budget quotes the start-up logs' band, and what lies outside them",
          "[run][budget][provenance]") {
  const run::BudgetAnswer h100 = budget_on("h100-sxm", "0.19.0");
  CHECK(contains(h100.kv_error_band, "KV tokens within 1% mean, 5% worst"));
  CHECK_FALSE(contains(h100.kv_error_band, "outside"));
  // A patch release of the validated one is inside; another GPU or release is not.
  CHECK_FALSE(contains(budget_on("h100-sxm", "0.19.1").kv_error_band, "outside"));
  CHECK(contains(budget_on("rtx-4090", "0.19.0").kv_error_band, "outside them (GPU rtx-4090)"));
  CHECK(contains(budget_on("h100-sxm", "0.15.1").kv_error_band, "outside them (vLLM 0.15.1)"));
}
