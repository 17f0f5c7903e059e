// What `budget` says when it does not fit and near the edge (sim/run/budget_run): the engine
// settings users turn first, each re-checked by the budget itself, and the margin with its
// knife-edge flag.
#include "sim/run/budget_results.hpp"
#include "sim/run/budget_run.hpp"
#include "sim/run/data_root.hpp"
#include "tests/catch.hpp"

#include <string>

namespace {

using namespace vramsim;

run::BudgetRequest llama_70b_tp2(std::int64_t max_model_len) {
  run::BudgetRequest req;
  req.model_id = "meta-llama/Llama-3.1-70B-Instruct";
  req.gpu_id = "h100-sxm";
  req.tp = 2;
  req.max_model_len = max_model_len;  // 0: the model's 131,072
  return req;
}

run::BudgetAnswer answer(const run::BudgetRequest& req) {
  return run::answer_budget(req, run::project_root());
}

/// `req` with one suggestion's flag applied, as a user would type it.
run::BudgetRequest applied(run::BudgetRequest req, const std::string& change) {
  const std::string flag = change.substr(0, change.find(' '));
  const std::string value = change.substr(change.find(' ') + 1);
  if (flag == "--gpu-memory-utilization") req.gpu_memory_utilization = std::stod(value);
  if (flag == "--max-num-batched-tokens") req.max_num_batched_tokens = std::stoll(value);
  if (flag == "--max-num-seqs") req.max_num_seqs = std::stoll(value);
  if (flag == "--kv-cache-dtype") req.kv_cache_dtype = value;
  if (flag == "--quantization") req.quantization = value;
  return req;
}

}  // namespace

TEST_CASE("when it does not fit, each suggested engine setting is what the budget then says",
          "[run][budget][advice]") {
  const run::BudgetRequest req = llama_70b_tp2(0);
  const run::BudgetAnswer a = answer(req);
  REQUIRE_FALSE(a.result.fits);
  REQUIRE(a.suggestions.size() >= 4);
  // Cheapest first: the device's own memory, then the profile batch, then the dtypes.
  CHECK(a.suggestions.front().change.rfind("--gpu-memory-utilization", 0) == 0);
  CHECK(a.suggestions.back().change == "--quantization awq");
  bool any_fits = false;
  for (const run::Suggestion& s : a.suggestions) {
    INFO(s.change);
    run::BudgetRequest again = applied(req, s.change);
    again.suggest = false;
    const run::BudgetAnswer b = answer(again);
    CHECK(b.result.fits == s.fits);
    CHECK(b.result.num_gpu_blocks == s.num_gpu_blocks);
    CHECK(b.result.max_concurrency == Approx(s.max_concurrency));
    any_fits = any_fits || s.fits;
  }
  CHECK(any_fits);  // fp8 weights fit 70B on two H100s at full context
  // The shortfall is the margin's opposite, and a share of usable memory.
  CHECK(a.margin.bytes == Bytes(0) - a.result.shortfall);
  CHECK(a.margin.share_of_usable < 0.0);
}

TEST_CASE("a fit within 2% of usable memory is flagged as a knife edge, a roomy one is not",
          "[run][budget][advice]") {
  // 632 blocks of 16 tokens where one 8,192-token request needs 512: 0.4% of usable memory.
  const run::BudgetAnswer edge = answer(llama_70b_tp2(8192));
  REQUIRE(edge.result.fits);
  CHECK(edge.margin.bytes > Bytes(0));
  CHECK(edge.margin.share_of_usable < run::kKnifeEdgeShare);
  CHECK(edge.margin.knife_edge);
  CHECK(edge.suggestions.empty());  // it fits: nothing to suggest

  run::BudgetRequest small;
  small.model_id = "meta-llama/Llama-3.1-8B-Instruct";
  small.gpu_id = "h100-sxm";
  const run::BudgetAnswer roomy = answer(small);
  REQUIRE(roomy.result.fits);
  CHECK(roomy.margin.share_of_usable > 0.5);
  CHECK_FALSE(roomy.margin.knife_edge);
}

TEST_CASE("budget's JSON has one shortfall, the margin and the suggestions",
          "[run][budget][advice]") {
  const nlohmann::ordered_json j = run::budget_json(answer(llama_70b_tp2(0)));
  CHECK(j.contains("shortfall_bytes"));
  CHECK_FALSE(j.contains("headroom_shortfall_bytes"));
  CHECK(j.contains("outside_budget_overrun_bytes"));
  CHECK(j.at("margin_bytes") == -j.at("shortfall_bytes").get<std::int64_t>());
  CHECK(j.at("knife_edge") == false);
  REQUIRE(j.at("suggestions").is_array());
  CHECK(j.at("suggestions").front().contains("why"));
  for (const auto& g : j.at("fits_on_other_gpus")) {
    const std::string why = g.at("why");
    CHECK((why.empty() || why.find("vLLM's defaults") != std::string::npos));
  }
}
