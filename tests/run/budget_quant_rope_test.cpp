// The budget's engine settings that follow from a checkpoint's quantization and RoPE scaling:
// the default max_model_len (vLLM's derived length), mxfp4 on a model without routed experts,
// and pre-quantized bitsandbytes under tensor parallelism. The configs are the synthetic tiny
// Llama of tests/model/data (hidden 512, 2 layers, vocab 1024).
#include <string>

#include "sim/core/error.hpp"
#include "sim/run/budget_run.hpp"
#include "sim/run/budget_results.hpp"
#include "sim/run/data_root.hpp"
#include "tests/catch.hpp"
#include "tests/run/budget_notes.hpp"

namespace {

using namespace vramsim;

run::BudgetRequest tiny(const std::string& config) {
  run::BudgetRequest req;
  req.model_id = (run::project_root() / "tests" / "model" / "data" / config).string();
  req.gpu_id = "h100-sxm";
  req.suggest = false;
  return req;
}

using testing::has_note;

// The message on `field` when the request is refused, "" when it runs.
std::string error_on(const run::BudgetRequest& req, const std::string& field) {
  try {
    run::answer_budget(req, run::project_root());
  } catch (const ConfigError& e) {
    for (const Problem& p : e.report().problems()) {
      if (p.field == field) return p.message;
    }
    return "other field: " + std::string(e.what());
  }
  return "";
}

}  // namespace

TEST_CASE("YaRN factor 4 over 32,768 makes vLLM's default max_model_len 131,072",
          "[run][budget][rope]") {
  run::BudgetRequest req = tiny("rope_yarn.json");
  const run::BudgetAnswer a = run::answer_budget(req, run::project_root());
  CHECK(a.model.max_position_embeddings == 32'768);
  CHECK(a.engine.max_model_len == 131'072);
  CHECK(has_note(a, "max_model_len 131072 from the config's RoPE scaling"));
  // Parameters in bf16: 2,102,272 + 2 layers * 2,228,224 * 2 B = 11,015,168 B, and the rotary
  // cache of 131,072 positions x 64 dims x 2 B, which vLLM counts in "model weights".
  req.max_model_len = 4096;
  const run::BudgetAnswer shorter = run::answer_budget(req, run::project_root());
  CHECK(run::headline_device(a.result).weights == run::headline_device(shorter.result).weights);
  CHECK(run::headline_device(a.result).weights.count() == 11'015'168 + 131'072 * 64 * 2);
  // Up to the derived length, and no further (vLLM: VLLM_ALLOW_LONG_MAX_MODEL_LEN).
  req.max_model_len = 131'072;
  CHECK(run::answer_budget(req, run::project_root()).engine.max_model_len == 131'072);
  req.max_model_len = 131'073;
  CHECK_THAT(error_on(req, "engine.max_model_len"),
             Catch::Contains("derived max_model_len (131072"));
}

TEST_CASE("the mxfp4 flag on a model without routed experts keeps bf16 and says so",
          "[run][budget][quant][mxfp4]") {
  run::BudgetRequest req = tiny("rope_yarn.json");
  req.max_model_len = 4096;
  const run::BudgetAnswer bf16 = run::answer_budget(req, run::project_root());
  req.quantization = "mxfp4";
  const run::BudgetAnswer mxfp4 = run::answer_budget(req, run::project_root());
  // vLLM's Mxfp4Config runs every LinearBase unquantized: the bytes do not change ...
  CHECK(run::headline_device(mxfp4.result).weights ==
        run::headline_device(bf16.result).weights);
  // ... and the answer says why, naming the flag.
  CHECK(has_note(mxfp4, "--quantization) quantizes only routed experts"));
  CHECK(has_note(mxfp4, "all weights stay in bf16"));
  CHECK(!has_note(bf16, "routed experts"));
}

TEST_CASE("a pre-quantized bitsandbytes checkpoint is refused under tensor parallelism",
          "[run][budget][quant][bitsandbytes]") {
  run::BudgetRequest req = tiny("quant_bnb_nf4.json");
  req.max_model_len = 4096;
  const run::BudgetAnswer a = run::answer_budget(req, run::project_root());
  CHECK(a.engine.weights.quantization == model::QuantMethod::kBitsAndBytes);
  req.tp = 2;
  CHECK_THAT(error_on(req, "engine.tp"), Catch::Contains("bitsandbytes") &&
                                             Catch::Contains("pipeline parallelism"));
  req.tp = 1;
  req.pp = 2;
  CHECK(error_on(req, "engine.tp").empty());
}
