// The budget answer's records from the run layer alone (sim/run/budget_results): the JSON object
// with DESIGN.md's field names, the headline device, and a results file read back through
// sim/io/results_reader.
#include "sim/run/budget_results.hpp"

#include "sim/io/results_reader.hpp"
#include "sim/run/data_root.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace vramsim;

run::BudgetAnswer llama_8b(std::int64_t tp) {
  run::BudgetRequest req;
  req.model_id = "meta-llama/Llama-3.1-8B-Instruct";
  req.gpu_id = "h100-sxm";
  req.tp = tp;
  req.max_model_len = 8192;
  return run::answer_budget(req, run::project_root());
}

memory::DeviceBudget device(int index, std::int64_t blocks) {
  memory::DeviceBudget d;
  d.device_index = index;
  d.num_gpu_blocks = blocks;
  return d;
}

}  // namespace

TEST_CASE("budget_json names DESIGN.md's budget fields, with units, from the headline device",
          "[run][budget][results]") {
  const run::BudgetAnswer a = llama_8b(1);
  const nlohmann::ordered_json j = run::budget_json(a);
  for (const char* field :
       {"num_params", "weights_bytes", "activation_peak_bytes", "non_torch_bytes",
        "cuda_graph_bytes", "kv_cache_bytes", "kv_bytes_per_token", "num_gpu_blocks",
        "kv_cache_tokens", "max_concurrency", "fits"}) {
    CHECK(j.contains(field));
  }
  const memory::DeviceBudget& d = run::headline_device(a.result);
  CHECK(j["weights_bytes"] == d.weights.count());
  CHECK(j["kv_cache_bytes"] == d.kv_cache.count());
  // Llama-3.1-8B's config.json: 32 layers x 8 KV heads x head_dim 128, K and V, 2 bytes (bf16):
  // 2 * 32 * 8 * 128 * 2 = 131072 bytes per token.
  CHECK(j["kv_bytes_per_token"] == 131072);
  CHECK(j["kv_cache_tokens"] == a.result.num_gpu_blocks * 16);  // block_size 16
  CHECK(j["fits"] == true);
  CHECK(j["max_model_len"] == 8192);
  REQUIRE(j["devices"].size() == 1);
  CHECK(j["devices"][0]["tp_rank"] == 0);
  CHECK(j["fits_with_larger_tp"].empty());
}

TEST_CASE("the headline device is the one with the fewest KV blocks, the first of equals",
          "[run][budget][results]") {
  memory::BudgetResult r;
  r.devices = {device(0, 40), device(1, 12), device(2, 12), device(3, 30)};
  CHECK(run::headline_device(r).device_index == 1);
  r.devices = {device(0, 7)};
  CHECK(run::headline_device(r).device_index == 0);
}

TEST_CASE("a budget results file reads back: a /budget row per device, the inputs without them",
          "[run][budget][results]") {
  const io::testing::ScratchDir dir("run-budget");
  const run::BudgetAnswer a = llama_8b(2);
  REQUIRE(a.result.devices.size() == 2);
  run::write_budget_results(a, dir / "budget.h5", "vramsim budget --tp 2", "");
  const io::ResultsReader in(dir / "budget.h5");
  CHECK(in.read_string_attribute("/", "created_by") == "vramsim budget");
  CHECK(in.read_string_attribute("/", "command") == "vramsim budget --tp 2");
  const auto inputs = nlohmann::json::parse(in.read_string_attribute("/", "inputs"));
  CHECK_FALSE(inputs.contains("devices"));
  CHECK(inputs["tp"] == 2);
  CHECK(inputs["num_gpu_blocks"] == a.result.num_gpu_blocks);

  const std::vector<std::int64_t> tp_rank = in.read_int_column("/budget/tp_rank");
  CHECK(tp_rank == std::vector<std::int64_t>{0, 1});
  const std::vector<std::int64_t> weights = in.read_int_column("/budget/weights_bytes");
  REQUIRE(weights.size() == 2);
  CHECK(weights[0] == a.result.devices[0].weights.count());
  CHECK(weights[1] == a.result.devices[1].weights.count());
  CHECK(in.read_units("/budget/weights_bytes") == "B");
  CHECK(in.read_units("/budget/kv_bytes_per_token") == "B");
  CHECK(in.read_units("/budget/num_gpu_blocks") == "1");
  // Engine-wide values repeat on every row.
  CHECK(in.read_int_column("/budget/num_gpu_blocks") ==
        std::vector<std::int64_t>(2, a.result.num_gpu_blocks));
  CHECK(in.read_int_attribute("/budget", "fits") == 1);
  CHECK(in.read_string_attribute("/budget", "gpu") == "h100-sxm");
  CHECK(in.read_string_attribute("/budget", "model") == "meta-llama/Llama-3.1-8B-Instruct");
}
