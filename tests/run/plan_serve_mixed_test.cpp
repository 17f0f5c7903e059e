// `vramsim plan serve --search-disaggregated --search-mixed-pools` (sim/run/plan_serve_run):
// xPyD layouts whose prefill and decode pools take different GPUs and TPs, appended after the
// product so that its rows keep their indices; each pool's GPUs counted and priced apart; a
// pool that cannot hold one request's KV skipped with that pool named; bad use refused naming
// plan.mixed_pools.
#include "sim/run/plan_serve_run.hpp"

#include <filesystem>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/run/gpu_prices.hpp"
#include "sim/run/plan_serve_results.hpp"
#include "tests/catch.hpp"

namespace run = vramsim::run;
namespace fs = std::filesystem;
using vramsim::ConfigError;

namespace {

const fs::path kTopologies = fs::path(VRAMSIM_SOURCE_ROOT) / "topologies";

// Llama-3.1-8B-Instruct, 120 requests of the Azure-conversation-shaped synthetic workload at
// 4 requests/s, p99 TTFT 2 s and TPOT 100 ms; `max_model_len` as given.
run::ServeOptions options(std::int64_t max_model_len) {
  return run::resolve_serve_options(run::load_serve_scenario_text(
      "seed = 1\n[model]\nid = \"meta-llama/Llama-3.1-8B-Instruct\"\n[hardware]\n"
      "gpu = \"h100-sxm\"\n[engine]\nmax_model_len = " +
          std::to_string(max_model_len) +
          "\n[workload]\nsynthetic = \"azure-conv\"\nnum_requests = 120\nrate = 4\n[slo]\n"
          "ttft = \"2s\"\ntpot = \"100ms\"\n",
      "plan.toml"));
}

run::PlanServeRequest mixed(std::vector<std::string> gpus, std::vector<std::int64_t> tps,
                            std::vector<std::int64_t> replicas) {
  run::PlanServeRequest q;
  q.options = options(8192);
  q.gpus = std::move(gpus);
  q.tps = std::move(tps);
  q.replicas = std::move(replicas);
  q.search_disaggregated = true;
  q.search_mixed_pools = true;
  q.capacity = false;
  q.early_stop = false;
  q.jobs = 2;
  return q;
}

double price_of(const std::string& gpu) {
  return run::load_gpu_prices(kTopologies / "prices.toml").at(gpu).usd_per_gpu_hour;
}

std::string problems(const run::PlanServeRequest& q) {
  try {
    (void)run::plan_serve(q);
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return "";
}

}  // namespace

TEST_CASE("plan serve --search-mixed-pools lists a prefill pool on H200 beside a decode pool "
          "on H100, counting and pricing each pool's GPUs, after the product's rows",
          "[run][plan][serve][disaggregated]") {
  run::PlanServeRequest q = mixed({"h200", "h100-sxm"}, {1}, {2});
  const run::PlanServeAnswer a = run::plan_serve(q);
  // The product: 2 GPUs x TP 1 x PP 1 x (2 replicas, 1P1D) = 4 rows; then 1P1D x the ordered
  // pairs of distinct pools (h200, h100-sxm), (h100-sxm, h200) = 2 mixed rows.
  REQUIRE(a.space.product_size() == 4);
  REQUIRE(a.space.mixed_layouts.size() == 2);
  REQUIRE(a.rows.size() == 6);
  for (std::size_t i = 0; i < 4; ++i) CHECK(!a.rows[i].mixed());
  const run::PlanServeRow& h200_h100 = a.rows[4];
  CHECK(h200_h100.mixed());
  CHECK(h200_h100.prefill_gpu == "h200");
  CHECK(h200_h100.prefill_tp == 1);
  CHECK(h200_h100.gpu == "h100-sxm");
  CHECK(h200_h100.tp == 1);
  CHECK(h200_h100.prefill_instances == 1);
  CHECK(h200_h100.decode_instances == 1);
  CHECK(h200_h100.prefill_gpus() == 1);
  CHECK(h200_h100.decode_gpus() == 1);
  CHECK(h200_h100.num_gpus() == 2);
  const double h200 = price_of("h200");
  const double h100 = price_of("h100-sxm");
  REQUIRE(h200 != h100);
  REQUIRE(h200_h100.usd_per_hour());
  CHECK(*h200_h100.usd_per_hour() == Approx(h200 + h100));
  CHECK(h200_h100.flags() ==
        "--gpu h100-sxm --tp 1 --pp 1 --prefill-instances 1 --decode-instances 1 "
        "--quantization none --kv-cache-dtype auto --prefill-gpu h200 --prefill-tp 1");
  const run::PlanServeRow& h100_h200 = a.rows[5];
  CHECK(h100_h200.prefill_gpu == "h100-sxm");
  CHECK(h100_h200.gpu == "h200");
  CHECK(h100_h200.status == run::ServePlanStatus::kMeets);

  // The mixed row is serve's own run of that layout.
  REQUIRE(h200_h100.simulated());
  run::ServeOptions o = q.options;
  o.prefill_instances = 1;
  o.decode_instances = 1;
  o.prefill_gpu = "h200";
  run::ServeAnswer s = run::prepare_serve(o);
  REQUIRE(s.feasible);
  run::simulate_serve(s, nullptr);
  REQUIRE(s.result.disaggregated);
  CHECK(s.kv_link->kind == "inter-node");  // two GPU types never share a node sheet
  CHECK(h200_h100.num_finished == s.result.metrics.num_finished);
  CHECK(h200_h100.ttft_p99 == s.result.metrics.ttft.quantile(0.99));
  CHECK(h200_h100.e2e_p99 == s.result.metrics.e2e.quantile(0.99));

  // The JSON and the results file columns name each pool.
  const nlohmann::ordered_json t = run::serve_plan_row_typed(h200_h100, true).to_json();
  CHECK(t["prefill_gpu"] == "h200");
  CHECK(t["prefill_num_gpus"] == 1);
  CHECK(t["decode_gpu"] == "h100-sxm");
  CHECK(t["decode_num_gpus"] == 1);
  CHECK(t["num_gpus"] == 2);
  CHECK(t["usd_per_gpu_hour"].get<double>() == Approx((h200 + h100) / 2));
  const nlohmann::ordered_json j = run::plan_serve_json(a);
  CHECK(j["search"]["mixed_layouts"].size() == 2);
  CHECK(j["search"]["mixed_layouts"][0] == "1P1D prefill h200 TP 1, decode h100-sxm TP 1");
}

TEST_CASE("plan serve --search-mixed-pools counts GPUs per pool when the pools' TPs differ, "
          "and --max-gpus skips by that count",
          "[run][plan][serve][disaggregated]") {
  run::PlanServeRequest q = mixed({"h100-sxm"}, {1, 2}, {3});
  q.max_gpus = 4;
  const run::PlanServeAnswer a = run::plan_serve(q);
  // Product: TP 1, 2 x (3 replicas, 1P2D, 2P1D) = 6 rows; mixed: (1P2D, 2P1D) x ((TP 1 ->
  // TP 2), (TP 2 -> TP 1)) = 4 rows, split slowest, then the prefill pool.
  REQUIRE(a.rows.size() == 10);
  struct Want {
    std::int64_t prefill, decode, prefill_tp, decode_tp, gpus;
  };
  const Want want[4] = {{1, 2, 1, 2, 1 + 4}, {1, 2, 2, 1, 2 + 2}, {2, 1, 1, 2, 2 + 2},
                        {2, 1, 2, 1, 4 + 1}};
  for (std::size_t k = 0; k < 4; ++k) {
    const run::PlanServeRow& r = a.rows[6 + k];
    INFO(r.flags());
    CHECK(r.prefill_instances == want[k].prefill);
    CHECK(r.decode_instances == want[k].decode);
    CHECK(r.prefill_tp == want[k].prefill_tp);
    CHECK(r.tp == want[k].decode_tp);
    CHECK(r.num_gpus() == want[k].gpus);
    CHECK(r.prefill_gpus() == want[k].prefill * want[k].prefill_tp);
    if (r.num_gpus() > 4) {
      CHECK(r.status == run::ServePlanStatus::kOverMaxGpus);
      CHECK(r.reason.find("> --max-gpus 4") != std::string::npos);
    } else {
      CHECK(r.simulated());
      CHECK(*r.usd_per_hour() == Approx(4 * price_of("h100-sxm")));
    }
  }
}

TEST_CASE("plan serve --search-mixed-pools skips a pool whose KV cache cannot hold one "
          "request of max_model_len, naming the pool",
          "[run][plan][serve][disaggregated]") {
  // 65536 tokens of Llama-3.1-8B's KV (8 GiB) do not fit beside 16 GB of weights on an L4's
  // 24 GB; an H100 holds them.
  run::PlanServeRequest q = mixed({"h100-sxm", "l4"}, {1}, {2});
  q.options = options(65536);
  const run::PlanServeAnswer a = run::plan_serve(q);
  REQUIRE(a.rows.size() == 6);
  const run::PlanServeRow& to_l4 = a.rows[4];  // prefill h100-sxm, decode l4
  CHECK(to_l4.prefill_gpu == "h100-sxm");
  CHECK(to_l4.gpu == "l4");
  CHECK(to_l4.status == run::ServePlanStatus::kDoesNotFit);
  CHECK(to_l4.reason.find("decode pool (l4 TP 1): one request of max_model_len 65536") == 0);
  const run::PlanServeRow& from_l4 = a.rows[5];  // prefill l4, decode h100-sxm
  CHECK(from_l4.status == run::ServePlanStatus::kDoesNotFit);
  CHECK(from_l4.reason.find("prefill pool (l4 TP 1): one request of max_model_len 65536") == 0);
  CHECK(to_l4.num_finished == 0);
  CHECK(from_l4.num_finished == 0);
}

TEST_CASE("plan serve refuses --search-mixed-pools where there is nothing to mix, naming it",
          "[run][plan][serve][disaggregated]") {
  run::PlanServeRequest q = mixed({"h200", "h100-sxm"}, {1}, {2});
  q.search_disaggregated = false;
  CHECK(problems(q).find("plan.mixed_pools: mixes the pools of the xPyD splits: give "
                         "--search-disaggregated too") != std::string::npos);
  q = mixed({"h100-sxm"}, {2}, {2});
  CHECK(problems(q).find("plan.mixed_pools: needs two pools to mix, but the search has one "
                         "GPU and one TP (h100-sxm TP 2)") != std::string::npos);
  q = mixed({"h200", "h100-sxm"}, {1}, {1});
  CHECK(problems(q).find("plan.mixed_pools: needs a replica count of 2 or more") !=
        std::string::npos);
}

TEST_CASE("plan serve without --search-mixed-pools keeps its rows and columns",
          "[run][plan][serve][disaggregated]") {
  run::PlanServeRequest q = mixed({"h200", "h100-sxm"}, {1}, {2});
  q.search_mixed_pools = false;
  const run::PlanServeSpace sp = run::plan_serve_space(q);
  CHECK(sp.size() == 4);
  CHECK(sp.mixed_size() == 0);
  run::PlanServeRow r;
  r.gpu = "h100-sxm";
  const nlohmann::ordered_json t = run::serve_plan_row_typed(r).to_json();
  CHECK(!t.contains("prefill_gpu"));
  CHECK(!t.contains("decode_num_gpus"));
}
