// `vramsim plan serve`'s run layer (sim/run/plan_serve_run): every row is what serve and budget
// say for its configuration, skipped configurations carry their reasons, costs follow the
// price table by hand, the Pareto front on constructed rows, early stop keeps every verdict,
// determinism over threads, --resume from a journal, and a GPU without a price.
#include "sim/run/plan_serve_run.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/run/gpu_prices.hpp"
#include "sim/run/plan_serve_host_memory.hpp"
#include "sim/run/plan_serve_results.hpp"
#include "sim/run/sweep_output.hpp"
#include "tests/catch.hpp"

namespace run = vramsim::run;
namespace fs = std::filesystem;
using vramsim::ConfigError;
using vramsim::Duration;

namespace {

const fs::path kTopologies = fs::path(VRAMSIM_SOURCE_ROOT) / "topologies";

// Llama-3.1-8B-Instruct, 300 requests of the Azure-conversation-shaped synthetic workload at
// `rate` requests/s, max_model_len 8192, p99 TTFT 2 s and TPOT 100 ms.
run::ServeOptions options(double rate, const std::string& extra = "") {
  return run::resolve_serve_options(run::load_serve_scenario_text(
      "seed = 1\n[model]\nid = \"meta-llama/Llama-3.1-8B-Instruct\"\n[hardware]\n"
      "gpu = \"h100-sxm\"\n[engine]\nmax_model_len = 8192\n[workload]\n"
      "synthetic = \"azure-conv\"\nnum_requests = 300\nrate = " +
          std::to_string(rate) + "\n[slo]\nttft = \"2s\"\ntpot = \"100ms\"\n" + extra,
      "plan.toml"));
}

// H100 and L4, TP 1 and 2, one or two replicas: 8 configurations.
run::PlanServeRequest small(double rate) {
  run::PlanServeRequest q;
  q.options = options(rate);
  q.gpus = {"h100-sxm", "l4"};
  q.tps = {1, 2};
  q.replicas = {1, 2};
  q.capacity = false;
  q.jobs = 2;
  return q;
}

double price_of(const std::string& gpu) {
  return run::load_gpu_prices(kTopologies / "prices.toml").at(gpu).usd_per_gpu_hour;
}

run::PlanServeRow row(std::int64_t index, double usd_per_gpu_hour, std::int64_t replicas,
                      double e2e_s) {
  run::PlanServeRow r;
  r.index = index;
  r.gpu = "h100-sxm";
  r.replicas = replicas;
  r.status = run::ServePlanStatus::kMeets;
  r.usd_per_gpu_hour = usd_per_gpu_hour;
  r.e2e_p99 = Duration::from_seconds(e2e_s);
  return r;
}

}  // namespace

TEST_CASE("plan serve: each row is what serve says for its configuration, and the cheapest "
          "meeting the SLOs is the cheapest such row",
          "[run][plan][serve]") {
  run::PlanServeRequest q = small(6.0);
  q.early_stop = false;  // every metric of the full replay
  const run::PlanServeAnswer a = run::plan_serve(q);
  REQUIRE(a.rows.size() == 8);
  CHECK(a.counts.num_configs == 8);
  CHECK(a.counts.num_simulated == 8);
  for (const run::PlanServeRow& r : a.rows) {
    INFO(r.flags());
    // The same configuration through serve's own run layer.
    run::ServeOptions o = q.options;
    o.gpu = r.gpu;
    o.tp = r.tp;
    o.replicas = r.replicas;
    run::ServeAnswer s = run::prepare_serve(o);
    REQUIRE(s.feasible);
    run::simulate_serve(s, nullptr);
    const auto& m = s.result.metrics;
    CHECK(r.num_finished == m.num_finished);
    CHECK(r.num_good == m.num_good);
    CHECK(r.ttft_p99 == m.ttft.quantile(0.99));
    CHECK(r.tpot_p99 == m.tpot.quantile(0.99));
    CHECK(r.e2e_p99 == m.e2e.quantile(0.99));
    CHECK(r.engine_max_num_seqs == s.budget.engine.max_num_seqs);
    CHECK(r.num_gpu_blocks == s.budget.result.num_gpu_blocks);
    const bool meets = m.ttft.quantile(0.99) <= vramsim::seconds(2) &&
                       m.tpot.quantile(0.99) <= vramsim::milliseconds(100);
    CHECK((r.status == run::ServePlanStatus::kMeets) == meets);
  }
  // The search holds both verdicts (else the test checks nothing about the choice).
  REQUIRE(a.counts.num_meet > 0);
  REQUIRE(a.counts.num_miss > 0);
  REQUIRE(!a.cheapest.empty());
  const run::PlanServeRow& best = a.rows[a.cheapest.front()];
  for (const run::PlanServeRow& r : a.rows) {
    if (r.status == run::ServePlanStatus::kMeets) CHECK(*best.usd_per_hour() <= *r.usd_per_hour());
  }
  CHECK(!a.closest);
}

TEST_CASE("plan serve --search-disaggregated ranks the xPyD splits of a replica count beside "
          "its aggregated replicas, each row what serve says for it",
          "[run][plan][serve][disaggregated]") {
  run::PlanServeRequest q = small(6.0);
  q.gpus = {"h100-sxm"};
  q.tps = {1};
  q.replicas = {1, 3};
  q.search_disaggregated = true;
  q.early_stop = false;
  q.max_gpus = 2;
  const run::PlanServeAnswer a = run::plan_serve(q);
  // Layouts: 1 and 3 replicas, then 3's splits 1P2D and 2P1D (1 has none).
  REQUIRE(a.rows.size() == 4);
  CHECK(a.rows[0].replicas == 1);
  CHECK(a.rows[1].replicas == 3);
  CHECK(a.rows[1].status == run::ServePlanStatus::kOverMaxGpus);
  const run::PlanServeRow& pd = a.rows[2];
  CHECK(pd.prefill_instances == 1);
  CHECK(pd.decode_instances == 2);
  CHECK(pd.num_gpus() == 3);
  CHECK(pd.status == run::ServePlanStatus::kOverMaxGpus);
  CHECK(pd.reason.find("1P2D") != std::string::npos);
  CHECK(a.rows[3].prefill_instances == 2);

  // Within 3 GPUs every layout runs; the disaggregated rows are serve's own runs, priced by
  // their GPUs, and ranked with the aggregated ones.
  q.max_gpus = 3;
  const run::PlanServeAnswer b = run::plan_serve(q);
  REQUIRE(b.rows.size() == 4);
  CHECK(b.counts.num_simulated == 4);
  const double h100 = price_of("h100-sxm");
  for (const std::size_t i : {std::size_t{2}, std::size_t{3}}) {
    const run::PlanServeRow& r = b.rows[i];
    INFO(r.flags());
    CHECK(r.flags().find(fmt::format("--prefill-instances {} --decode-instances {}",
                                     r.prefill_instances, r.decode_instances)) !=
          std::string::npos);
    CHECK(*r.usd_per_hour() == Approx(3 * h100));
    run::ServeOptions o = q.options;
    o.prefill_instances = r.prefill_instances;
    o.decode_instances = r.decode_instances;
    run::ServeAnswer s = run::prepare_serve(o);
    REQUIRE(s.feasible);
    run::simulate_serve(s, nullptr);
    REQUIRE(s.result.disaggregated);
    CHECK(r.num_finished == s.result.metrics.num_finished);
    CHECK(r.ttft_p99 == s.result.metrics.ttft.quantile(0.99));
    CHECK(r.e2e_p99 == s.result.metrics.e2e.quantile(0.99));
  }
  // The cheapest list orders every meeting row by cost, whatever its layout.
  for (std::size_t k = 1; k < b.cheapest.size(); ++k) {
    CHECK(*b.rows[b.cheapest[k - 1]].usd_per_hour() <= *b.rows[b.cheapest[k]].usd_per_hour());
  }
}

TEST_CASE("plan serve's costs are GPUs x the price table's USD per GPU-hour, and per million "
          "SLO-meeting output tokens that over their rate",
          "[run][plan][serve]") {
  const run::PlanServeAnswer a = run::plan_serve(small(6.0));
  const double h100 = price_of("h100-sxm");
  const double l4 = price_of("l4");
  for (const run::PlanServeRow& r : a.rows) {
    INFO(r.flags());
    const double price = r.gpu == "l4" ? l4 : h100;
    REQUIRE(r.usd_per_hour());
    CHECK(*r.usd_per_hour() == price * static_cast<double>(r.tp * r.replicas));
    if (r.slo_output_tokens_per_s > 0.0) {
      CHECK(*r.usd_per_million_slo_output_tokens() ==
            Approx(price * static_cast<double>(r.tp * r.replicas) / 3600.0 /
                   r.slo_output_tokens_per_s * 1e6));
    }
  }
  // TP 2 x 2 replicas on H100: 4 GPUs.
  const run::PlanServeRow& big = a.rows[3];
  CHECK(big.gpu == "h100-sxm");
  CHECK(big.tp == 2);
  CHECK(big.replicas == 2);
  CHECK(*big.usd_per_hour() == Approx(4 * h100));
}

TEST_CASE("plan serve skips, with their reasons and without simulating, configurations that do "
          "not fit, that the model forbids, or that use more than --max-gpus",
          "[run][plan][serve]") {
  run::PlanServeRequest q = small(2.0);
  q.gpus = {"t4", "h100-sxm"};
  q.tps = {1, 3};
  q.replicas = {1, 4};
  q.max_gpus = 3;
  const run::PlanServeAnswer a = run::plan_serve(q);
  REQUIRE(a.rows.size() == 8);
  // Index: gpu slowest, then tp, then replicas.
  const run::PlanServeRow& t4 = a.rows[0];  // t4, TP 1, 1 replica: 16 GB of weights in 15 GiB
  CHECK(t4.status == run::ServePlanStatus::kDoesNotFit);
  CHECK(!t4.reason.empty());
  CHECK(t4.num_finished == 0);
  const run::PlanServeRow& tp3 = a.rows[6];  // h100, TP 3: 32 heads are not split 3 ways
  CHECK(tp3.tp == 3);
  CHECK(tp3.status == run::ServePlanStatus::kInvalid);
  CHECK(tp3.reason.find("engine.tp") != std::string::npos);
  const run::PlanServeRow& four = a.rows[5];  // h100, TP 1, 4 replicas: 4 GPUs > 3
  CHECK(four.replicas == 4);
  CHECK(four.status == run::ServePlanStatus::kOverMaxGpus);
  CHECK(four.reason.find("--max-gpus 3") != std::string::npos);
  CHECK(a.counts.num_skipped_max_gpus == 4);  // TP 1 x 4 and TP 3 x 4 on both GPUs
  CHECK(a.counts.num_skipped_does_not_fit >= 1);
  CHECK(a.counts.num_skipped_invalid >= 1);
  CHECK(a.rows[4].status == run::ServePlanStatus::kMeets);  // h100, TP 1, 1 replica at 2 req/s
}

TEST_CASE("plan serve's Pareto front holds the priced rows no other beats in both cost per hour "
          "and p99 E2E, cheapest first",
          "[run][plan][serve]") {
  std::vector<run::PlanServeRow> rows = {
      row(0, 2.0, 1, 5.0),  // $2/h, 5 s: the cheapest
      row(1, 2.0, 2, 3.0),  // $4/h, 3 s: on the front
      row(2, 2.0, 2, 3.0),  // the same as 1: a tie, the lower index stands
      row(3, 2.0, 3, 4.0),  // $6/h, 4 s: beaten by 1
      row(4, 2.0, 4, 1.0),  // $8/h, 1 s: on the front
      row(5, 1.0, 2, 5.0),  // $2/h, 5 s: the same as 0
      row(6, 2.0, 1, 6.0),  // $2/h, 6 s: beaten by 0
  };
  rows.push_back(row(7, 1.0, 1, 0.5));  // unpriced below: never on the front
  rows.back().usd_per_gpu_hour.reset();
  const std::vector<std::size_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(run::plan_serve_pareto(rows, all) == std::vector<std::size_t>{0, 1, 4});
  CHECK(run::plan_serve_pareto(rows, {3, 6}) == std::vector<std::size_t>{6, 3});
  CHECK(run::plan_serve_pareto(rows, {7}).empty());
}

TEST_CASE("plan serve's early stop gives every configuration the verdict of its full replay, "
          "and the meeting ones the same metrics",
          "[run][plan][serve]") {
  run::PlanServeRequest q = small(10.0);
  q.gpus = {"l4", "a10g", "h100-sxm"};
  const run::PlanServeAnswer fast = run::plan_serve(q);
  q.early_stop = false;
  const run::PlanServeAnswer full = run::plan_serve(q);
  REQUIRE(fast.rows.size() == full.rows.size());
  REQUIRE(fast.counts.num_stopped_early > 0);  // the rule did stop some replays
  for (std::size_t i = 0; i < fast.rows.size(); ++i) {
    const run::PlanServeRow& x = fast.rows[i];
    const run::PlanServeRow& y = full.rows[i];
    INFO(x.flags());
    CHECK(x.status == y.status);
    CHECK_FALSE(y.stopped_early);
    if (x.stopped_early) {
      CHECK(x.num_finished < y.num_finished);
    } else {
      CHECK(x.ttft_p99 == y.ttft_p99);
      CHECK(x.e2e_p99 == y.e2e_p99);
      CHECK(x.num_good == y.num_good);
    }
  }
  CHECK(fast.cheapest == full.cheapest);
  CHECK(fast.pareto == full.pareto);
}

TEST_CASE("plan serve gives the same answer bit for bit on one thread and on two",
          "[run][plan][serve]") {
  run::PlanServeRequest q = small(6.0);
  q.capacity = true;
  q.max_runs = 6;
  q.top = 2;
  q.jobs = 1;
  const std::string one = run::plan_serve_json(run::plan_serve(q)).dump();
  q.jobs = 2;
  const std::string two = run::plan_serve_json(run::plan_serve(q)).dump();
  CHECK(one == two);
  CHECK(one.find("\"capacity_requests_per_s\"") != std::string::npos);
}

TEST_CASE("plan serve --resume reuses the configurations an interrupted run journaled, and only "
          "those of the same search",
          "[run][plan][serve]") {
  const fs::path dir = fs::temp_directory_path() / "vramsim_run_test" / "plan_serve_resume";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "resume.h5";
  run::PlanServeRequest q = small(6.0);
  q.out = out;
  const run::PlanServeAnswer first = run::plan_serve(q);
  CHECK(!fs::exists(run::journal_path(out)));  // the results file holds it all
  // An interrupted run: the journal holds two rows' records, one altered so that reuse shows,
  // and a record of another search (another digest), which must not be reused.
  run::KvLinkTopologies topologies;
  const std::string digest = run::plan_serve_fingerprint(
      q.options, first.slo, true,
      run::node_host_memory_inputs(topologies, q.options.topology, run::plan_serve_space(q)));
  {
    run::PlanServeRow altered = first.rows[1];
    altered.num_good = 12345;
    std::ofstream j(run::journal_path(out));
    j << run::record_to_json(run::serve_plan_row_record(altered, digest)) << "\n";
    j << run::record_to_json(run::serve_plan_row_record(first.rows[2], digest)) << "\n";
    run::PlanServeRow other = first.rows[3];
    other.num_good = 999;
    j << run::record_to_json(run::serve_plan_row_record(other, "0000000000000000")) << "\n";
  }
  q.resume = true;
  const run::PlanServeAnswer resumed = run::plan_serve(q);
  CHECK(resumed.counts.num_resumed == 2);
  CHECK(resumed.rows[1].num_good == 12345);
  CHECK(resumed.rows[2].num_good == first.rows[2].num_good);
  CHECK(resumed.rows[3].num_good == first.rows[3].num_good);
  CHECK(!fs::exists(run::journal_path(out)));
}

TEST_CASE("plan serve reports a GPU without a price as unpriced, never as free, and ranks only "
          "priced configurations",
          "[run][plan][serve]") {
  const fs::path dir = fs::temp_directory_path() / "vramsim_run_test" / "plan_serve_prices";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "prices.toml")
      << "[l4]\nusd_per_gpu_hour = 0.5\nsource = \"a test's own figure\"\n";
  run::PlanServeRequest q = small(2.0);
  q.prices_file = dir / "prices.toml";
  const run::PlanServeAnswer a = run::plan_serve(q);
  std::int64_t h100_meet = 0;
  for (const run::PlanServeRow& r : a.rows) {
    INFO(r.flags());
    if (r.gpu == "h100-sxm") {
      CHECK(!r.usd_per_gpu_hour);
      CHECK(!r.usd_per_hour());
      CHECK(!r.usd_per_million_slo_output_tokens());
      if (r.status == run::ServePlanStatus::kMeets) ++h100_meet;
    } else {
      CHECK(*r.usd_per_hour() == 0.5 * static_cast<double>(r.tp * r.replicas));
    }
  }
  REQUIRE(h100_meet > 0);
  CHECK(a.counts.num_meet_unpriced == h100_meet);
  for (const std::size_t i : a.cheapest) CHECK(a.rows[i].gpu == "l4");
  for (const std::size_t i : a.pareto) CHECK(a.rows[i].gpu == "l4");
  const auto j = run::plan_serve_json(a);
  CHECK(j["num_meet_unpriced"] == h100_meet);
}

TEST_CASE("plan serve refuses a bad list naming it, before anything runs", "[run][plan][serve]") {
  const auto problems = [](run::PlanServeRequest q) {
    try {
      (void)run::plan_serve(q);
    } catch (const ConfigError& e) {
      return e.report().format();
    }
    return std::string();
  };
  run::PlanServeRequest q = small(2.0);
  q.tps = {1, 0};
  CHECK(problems(q).find("plan.tps: must be in [1, 64], got 0") != std::string::npos);
  q = small(2.0);
  q.gpus = {"h100-sxm", "h100-sxm"};
  CHECK(problems(q).find("plan.gpus: h100-sxm is listed twice") != std::string::npos);
  q = small(2.0);
  q.gpus = {"h100-sxn"};
  CHECK(problems(q).find("plan.gpus: unknown GPU 'h100-sxn'") != std::string::npos);
  q = small(2.0);
  q.quantizations = {"fp9"};
  CHECK(problems(q).find("plan.quantizations: unknown quantization 'fp9'") != std::string::npos);
  q = small(2.0);
  q.kv_cache_dtypes = {"int8"};
  CHECK(problems(q).find("plan.kv_cache_dtypes") != std::string::npos);
  q = small(2.0);
  q.max_gpus = 0;
  CHECK(problems(q).find("plan.max_gpus") != std::string::npos);
}
