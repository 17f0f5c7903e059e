// budget's KV offload tier against the host memory of the GPU's node sheet
// (run::KvOffloadHost, issue 16): the DGX H100 sheet's 2 TiB holds a 4 GiB tier, a 3 TiB tier is
// flagged (not refused: the budget's own `fits` stays the GPU's), a GPU whose default node
// records no host memory is not checked, and DP ranks each pin a tier on the node.
#include "sim/run/budget_results.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>

#include "sim/run/budget_run.hpp"
#include "sim/run/data_root.hpp"
#include "tests/catch.hpp"

namespace {

using namespace vramsim;

// Llama-3.1-8B (32 layers x 8 KV heads x 128 x K and V x 2 bytes = 128 KiB of bf16 KV per
// token, 2 MiB per 16-token block) with a host tier of `tier`.
run::BudgetAnswer llama_8b(const std::string& gpu, Bytes tier, std::int64_t dp = 1) {
  run::BudgetRequest req;
  req.model_id = "meta-llama/Llama-3.1-8B-Instruct";
  req.gpu_id = gpu;
  req.max_model_len = 8192;
  req.kv_offloading_size = tier;
  req.data_parallel_size = dp;
  req.suggest = false;
  return run::answer_budget(req, run::project_root());
}

}  // namespace

TEST_CASE("budget holds the KV offload tier against the host memory of the GPU's node sheet",
          "[run][budget][kv][offload]") {
  const run::BudgetAnswer a = llama_8b("h100-sxm", GiB(4));
  const run::KvOffloadHost& h = a.kv_offload_host;
  // h100-sxm's default node: the DGX H100 sheet, 2 TiB of host memory.
  CHECK(h.node == "h100-sxm-8x-nvswitch");
  CHECK(h.host_memory == TiB(2));
  CHECK(h.num_engines == 1);
  // 4 GiB hold 2048 whole blocks of 2 MiB: exactly 4 GiB pinned.
  CHECK(a.kv_offload.host_bytes == GiB(4));
  CHECK(h.host_bytes_per_node == GiB(4));
  CHECK(h.fits == true);
  const nlohmann::ordered_json j = run::budget_json(a);
  CHECK(j["kv_offload_node"] == "h100-sxm-8x-nvswitch");
  CHECK(j["kv_offload_node_host_memory_bytes"] == TiB(2).count());
  CHECK(j["kv_offload_host_bytes_per_node"] == GiB(4).count());
  CHECK(j["kv_offload_fits_host_memory"] == true);
}

TEST_CASE("a KV offload tier above the node's host memory is flagged, and the GPU budget is "
          "unchanged",
          "[run][budget][kv][offload]") {
  const run::BudgetAnswer small = llama_8b("h100-sxm", GiB(4));
  const run::BudgetAnswer a = llama_8b("h100-sxm", TiB(3));
  // 3 TiB = 1,572,864 blocks of 2 MiB, more than the 2 TiB the DGX H100 has.
  CHECK(a.kv_offload.host_bytes == TiB(3));
  CHECK(a.kv_offload_host.fits == false);
  CHECK(run::budget_json(a)["kv_offload_fits_host_memory"] == false);
  // The answer about the GPU does not move: the tier is host memory.
  CHECK(a.result.fits);
  CHECK(a.result.num_gpu_blocks == small.result.num_gpu_blocks);
}

TEST_CASE("each DP rank pins its own tier on the node", "[run][budget][kv][offload]") {
  // Two DP ranks of 1 GPU each on the 8-GPU DGX H100: 2 x 1.5 TiB = 3 TiB > 2 TiB, while one
  // 1.5 TiB tier alone fits.
  const run::BudgetAnswer one = llama_8b("h100-sxm", GiB(1536));
  CHECK(one.kv_offload_host.fits == true);
  const run::BudgetAnswer two = llama_8b("h100-sxm", GiB(1536), 2);
  CHECK(two.kv_offload_host.num_engines == 2);
  CHECK(two.kv_offload_host.host_bytes_per_node == TiB(3));
  CHECK(two.kv_offload_host.fits == false);
}

TEST_CASE("a GPU whose node sheet records no host memory is not checked, and a budget without "
          "a tier has no host fields",
          "[run][budget][kv][offload]") {
  // No sheet names the L4: the generic pcie-8x, which records none.
  const run::BudgetAnswer l4 = llama_8b("l4", GiB(4));
  CHECK(l4.kv_offload_host.node == "pcie-8x");
  CHECK_FALSE(l4.kv_offload_host.host_memory.has_value());
  CHECK_FALSE(l4.kv_offload_host.fits.has_value());
  const nlohmann::ordered_json j = run::budget_json(l4);
  CHECK(j["kv_offload_node_host_memory_bytes"].is_null());
  CHECK(j["kv_offload_fits_host_memory"].is_null());
  const run::BudgetAnswer none = llama_8b("h100-sxm", Bytes(0));
  CHECK(none.kv_offload_host.node.empty());
  CHECK_FALSE(run::budget_json(none).contains("kv_offload_node"));
}
