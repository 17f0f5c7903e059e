// `vramsim plan serve` from the command line: the table, the JSON and the results file
// (analysis/SCHEMA.md, "vramsim plan serve --out"), the same bytes whatever --jobs, the chosen
// configuration as `vramsim serve` replays it, and bad input refused with exit 2 naming the flag.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

#include "sim/io/results_reader.hpp"
#include "sim/io/typed_columns.hpp"
#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using vramsim::io::ResultsReader;
using vramsim::testing::run;
using vramsim::testing::Run;
using vramsim::testing::temp_dir;

namespace {

std::filesystem::path fresh(const std::string& name) {
  const auto path = temp_dir() / name;
  std::filesystem::remove(path);
  return path;
}

// 200 requests of the Azure-conversation-shaped workload at 6 requests/s against H100 and L4,
// TP 1, 2, one or two replicas: 8 configurations.
const std::string kWorkload =
    "meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --synthetic azure-conv "
    "--num-requests 200 --rate 6 --seed 1 --slo-ttft 2s --slo-tpot 100ms";
const std::string kSmall = "plan serve " + kWorkload +
                           " --search-gpu h100-sxm,l4 --search-tp 1,2 --search-replicas 1,2";

}  // namespace

TEST_CASE("plan serve prints the cheapest configurations, the Pareto front, their capacity and "
          "what binds",
          "[cli][plan][serve]") {
  const Run r = run(kSmall + " --top 2 --max-runs 6");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("searched 8 configurations") != std::string::npos);
  CHECK(r.out.find("Cheapest 2 configurations meeting the SLOs") != std::string::npos);
  CHECK(r.out.find("Pareto front, cost per hour against p99 E2E latency") != std::string::npos);
  CHECK(r.out.find(": capacity ") != std::string::npos);
  CHECK(r.out.find("bound by") != std::string::npos);
  CHECK(r.out.find("cheapest deployment meeting the SLOs: --gpu ") != std::string::npos);
}

TEST_CASE("plan serve --format json and --out agree, neither depends on --jobs, and the "
          "cheapest configuration is what serve replays for it",
          "[cli][plan][serve][results]") {
  const auto one = fresh("plan_serve_j1.h5");
  const auto two = fresh("plan_serve_j2.h5");
  const Run a = run(kSmall + " --no-capacity --format json --jobs 1 --out " + one.string());
  const Run b = run(kSmall + " --no-capacity --format json --jobs 2 --out " + two.string());
  INFO(a.out);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK(a.out == b.out);
  const auto j = nlohmann::json::parse(a.out);
  CHECK(j["num_configs"] == 8);
  CHECK(j["num_configs"].get<int>() == j["num_simulated"].get<int>() + j["num_skipped"].get<int>());
  REQUIRE(j["meets_slo"] == true);
  REQUIRE(!j["cheapest"].empty());
  const auto& best = j["cheapest"][0];
  CHECK(best["meets_slo"] == true);
  CHECK(best["usd_per_hour"].get<double>() ==
        Approx(best["usd_per_gpu_hour"].get<double>() * best["num_gpus"].get<double>()));
  // The same configuration through `vramsim serve`: the same p99s.
  const Run s = run("serve " + kWorkload + " " + best["flags"].get<std::string>() +
                    " --format json");
  INFO(s.out);
  REQUIRE(s.exit_code == 0);
  const auto sj = nlohmann::json::parse(s.out.substr(s.out.find('{')));
  CHECK(sj["ttft_p99_s"].get<double>() == best["ttft_p99_s"].get<double>());
  CHECK(sj["tpot_p99_s"].get<double>() == best["tpot_p99_s"].get<double>());
  CHECK(sj["e2e_p99_s"].get<double>() == best["e2e_p99_s"].get<double>());
  CHECK(sj["num_finished"] == best["num_finished"]);
  // The results file: every configuration a row, units from the types.
  const ResultsReader in(one);
  CHECK(in.read_string_attribute("/", "created_by") == "vramsim plan serve");
  CHECK(in.num_rows("/plan_serve/configs/config_index") == 8);
  CHECK(in.read_int_attribute("/plan_serve", "num_meet") == j["num_meet"].get<std::int64_t>());
  CHECK(in.read_units("/plan_serve/configs/e2e_p99_s") == "s");
  CHECK(in.read_units("/plan_serve/configs/usd_per_hour") == "USD");
  CHECK(in.read_units("/plan_serve/configs/slo_output_tokens_per_s") == "1/s");
  const auto rank = in.read_int_column("/plan_serve/configs/cheapest_rank");
  const auto index = in.read_int_column("/plan_serve/configs/config_index");
  for (std::size_t i = 0; i < rank.size(); ++i) {
    if (rank[i] == 1) CHECK(index[i] == best["config_index"].get<std::int64_t>());
  }
  // The naming rule: every column's units agree with its name (USD columns included).
  for (const std::string g : {"/plan_serve/configs"}) {
    for (const std::string& c : in.table_columns(g)) {
      INFO(c);
      const std::string d = g + "/" + c;
      CHECK(vramsim::io::name_fits_units(c, in.column_type(d), in.read_units(d)));
    }
  }
  const ResultsReader other(two);
  CHECK(in.read_double_column("/plan_serve/configs/e2e_p99_s") ==
        other.read_double_column("/plan_serve/configs/e2e_p99_s"));
}

TEST_CASE("plan serve where nothing meets the SLOs exits 0 and says which came closest and why",
          "[cli][plan][serve]") {
  const Run r = run("plan serve " + kWorkload +
                    " --slo-ttft 1ms --search-gpu l4 --search-tp 1 --search-replicas 1,2 "
                    "--max-runs 4");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Closest to meeting the SLOs") != std::string::npos);
  CHECK(r.out.find("no configuration meets the SLOs") != std::string::npos);
  CHECK(r.out.find("TTFT p99") != std::string::npos);
}

TEST_CASE("plan serve refuses bad input with exit 2 naming the flag", "[cli][plan][serve]") {
  const std::string base = "plan serve " + kWorkload + " ";
  {
    const Run r = run(base + "--gpu h100-sxm --search-tp 1,0");
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("error: --search-tp: must be in [1, 64], got 0") != std::string::npos);
  }
  {
    const Run r = run(base + "--search-gpu h100-sxm,h100-sxn");
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("error: --search-gpu: unknown GPU 'h100-sxn'") != std::string::npos);
  }
  {
    const Run r = run(base + "--gpu h100-sxm --search-quantization none,fp9");
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("error: --search-quantization: unknown quantization 'fp9'") !=
          std::string::npos);
  }
  {
    const Run r = run(base + "--gpu h100-sxm --tp 2 --search-tp 1,2");
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("error: --tp: given with --search-tp") != std::string::npos);
  }
  {
    const Run r = run(base + "--gpu h100-sxm --resume");
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("error: --resume: needs --out") != std::string::npos);
  }
  {
    const Run r = run(base + "--gpu h100-sxm --gpu-prices /nonexistent/prices.toml");
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("error: --gpu-prices: no such file") != std::string::npos);
  }
  const auto refused = [&](const std::string& price, const std::string& said) {
    const Run r = run(base + "--search-gpu h100-sxm,l4 --gpu-price " + price);
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("error: --gpu-price: " + said) != std::string::npos);
  };
  refused("a100-80gb=2", "'a100-80gb' is not among the searched GPUs (h100-sxm, l4)");
  refused("l4=-1", "the price of l4 must be a positive number of US dollars per GPU-hour");
  refused("l4=2usd", "the price of l4 must be a positive number of US dollars per GPU-hour");
  refused("l4", "'l4' is not GPU=USD");
  refused("l4=1,L4=2", "l4 is priced twice");
}

TEST_CASE("plan serve --gpu-price replaces one GPU's row of the price table for the run",
          "[cli][plan][serve]") {
  const Run table = run(kSmall + " --no-capacity --format json");
  const Run priced = run(kSmall + " --no-capacity --format json --gpu-price H100-SXM=0.001");
  INFO(priced.out);
  REQUIRE(table.exit_code == 0);
  REQUIRE(priced.exit_code == 0);
  const auto a = nlohmann::json::parse(table.out);
  const auto b = nlohmann::json::parse(priced.out);
  // Prices rank the rows; they never change a replay.
  CHECK(a["num_meet"] == b["num_meet"]);
  CHECK(b["prices"].get<std::string>().find(", with --gpu-price for h100-sxm") !=
        std::string::npos);
  REQUIRE(!b["cheapest"].empty());
  // At a tenth of a cent per GPU-hour an H100 configuration that meets the SLOs is cheapest,
  // whatever L4 costs in the table.
  const auto& best = b["cheapest"][0];
  CHECK(best["gpu"] == "h100-sxm");
  CHECK(best["usd_per_gpu_hour"].get<double>() == 0.001);
  CHECK(best["usd_per_hour"].get<double>() == Approx(0.001 * best["num_gpus"].get<double>()));
}

TEST_CASE("plan serve over two MPI ranks answers as one process does, in one results file",
          "[cli][plan][serve][mpi]") {
#ifdef VRAMSIM_HAVE_MPI
  const auto out = fresh("plan_serve_mpi.h5");
  const Run serial = run(kSmall + " --no-capacity --format json");
  REQUIRE(serial.exit_code == 0);
  const Run r = vramsim::testing::run_mpi(kSmall + " --no-capacity --format json --out " +
                                          out.string());
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == serial.out);
  const ResultsReader in(out);
  CHECK(in.num_rows("/plan_serve/configs/config_index") == 8);
#else
  WARN("skipped: this build has no MPI (CMake did not find it)");
#endif
}

TEST_CASE("plan serve --search-mixed-pools shows each pool's GPU and TP in the table and the "
          "JSON, and is refused without --search-disaggregated naming the flag",
          "[cli][plan][serve][disaggregated]") {
  const std::string base = "plan serve " + kWorkload +
                           " --search-gpu h200,h100-sxm --search-tp 1 --search-replicas 2"
                           " --no-capacity --top 20 --search-mixed-pools";
  {
    const Run r = run(base);
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("error: --search-mixed-pools: mixes the pools of the xPyD splits: give "
                     "--search-disaggregated too") != std::string::npos);
  }
  const Run t = run(base + " --search-disaggregated");
  INFO(t.out);
  REQUIRE(t.exit_code == 0);
  // 4 rows of the product, then 1P1D with the pools (h200, h100-sxm) and (h100-sxm, h200).
  CHECK(t.out.find("searched 6 configurations") != std::string::npos);
  CHECK(t.out.find("    4  h200/h100-sxm  1/1  1 1P1D    2") != std::string::npos);
  CHECK(t.out.find("#4: 1 h200 + 1 h100-sxm") != std::string::npos);
  const Run j = run(base + " --search-disaggregated --format json");
  REQUIRE(j.exit_code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  bool seen = false;
  for (const auto& row : doc["cheapest"]) {
    if (row["config_index"] != 4) continue;
    seen = true;
    CHECK(row["prefill_gpu"] == "h200");
    CHECK(row["prefill_num_gpus"] == 1);
    CHECK(row["decode_gpu"] == "h100-sxm");
    CHECK(row["decode_num_gpus"] == 1);
    CHECK(row["num_gpus"] == 2);
    CHECK(row["usd_per_hour"].get<double>() ==
          Approx(row["prefill_usd_per_gpu_hour"].get<double>() +
                 row["decode_usd_per_gpu_hour"].get<double>()));
    CHECK(row["flags"].get<std::string>().find("--prefill-gpu h200 --prefill-tp 1") !=
          std::string::npos);
  }
  CHECK(seen);
}
