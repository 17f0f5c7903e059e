// `vramsim plan train` from the command line: exit codes (no fit is an answer, bad input is 2),
// refused flags, the JSON and the results file (analysis/SCHEMA.md, "vramsim plan train
// --out"), and the same bytes whatever --jobs, and over MPI ranks where the build has MPI.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

#include "sim/io/results_reader.hpp"
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

// Llama-3.2-1B on 4 H100: a small search (7 strategies x TP 1, 2, 4 x PP 1, 2 x micro-batch
// 1, 2, 4 x 2 policies x offload no).
const std::string kSmall =
    "plan train --model meta-llama/Llama-3.2-1B --gpu h100-sxm --num-gpus 4 --global-batch 16 "
    "--seq-len 1024 --search-pp 1,2 --search-micro-batch 1,2,4 --search-checkpointing none,full "
    "--search-offload-optimizer no";

}  // namespace

TEST_CASE("plan train prints the fastest plans, the Pareto front and the counts", "[cli][plan]") {
  const Run r = run(kSmall + " --top 3");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Fastest 3 plans that fit") != std::string::npos);
  CHECK(r.out.find("Pareto front") != std::string::npos);
  CHECK(r.out.find("searched 252 plans") != std::string::npos);
  CHECK(r.out.find("fastest plan that fits meta-llama/Llama-3.2-1B") != std::string::npos);
}

TEST_CASE("plan train --format json and --out agree, and neither depends on --jobs",
          "[cli][plan][results]") {
  const auto one = fresh("plan_j1.h5");
  const auto two = fresh("plan_j2.h5");
  const Run a = run(kSmall + " --format json --jobs 1 --out " + one.string());
  const Run b = run(kSmall + " --format json --jobs 2 --out " + two.string());
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK(a.out == b.out);
  // The same table, value for value (the files differ only in the recorded command line).
  {
    const ResultsReader x(one), y(two);
    const std::string g = "/plan_train/plans";
    REQUIRE(x.table_columns(g) == y.table_columns(g));
    for (const std::string& c : x.table_columns(g)) {
      INFO(c);
      const std::string d = g + "/" + c;
      switch (x.column_type(d)) {
        case vramsim::io::ColumnType::kInt64: CHECK(x.read_int_column(d) == y.read_int_column(d)); break;
        case vramsim::io::ColumnType::kFloat64:
          CHECK(x.read_double_column(d) == y.read_double_column(d));
          break;
        case vramsim::io::ColumnType::kString:
          CHECK(x.read_string_column(d) == y.read_string_column(d));
          break;
      }
    }
    CHECK(x.read_string_attribute("/", "inputs") == y.read_string_attribute("/", "inputs"));
  }
  const auto j = nlohmann::json::parse(a.out);
  CHECK(j["num_plans"] == 252);
  CHECK(j["num_plans"].get<int>() == j["num_simulated"].get<int>() + j["num_skipped"].get<int>());
  CHECK(j["fits"] == true);
  REQUIRE(j["fastest"].size() == 5);
  CHECK(j["fastest"][0]["fits"] == true);
  CHECK(j["fastest"][0]["step_time_s"].get<double>() <= j["fastest"][1]["step_time_s"].get<double>());
  CHECK(j["pareto"][0]["plan_index"] == j["fastest"][0]["plan_index"]);
  const ResultsReader in(one);
  CHECK(in.read_string_attribute("/", "created_by") == "vramsim plan train");
  CHECK(in.num_rows("/plan_train/plans/plan_index") == 252);
  CHECK(in.read_int_attribute("/plan_train", "num_fit") == j["num_fit"].get<std::int64_t>());
  CHECK(in.read_units("/plan_train/plans/headroom_bytes") == "B");
  CHECK(in.read_units("/plan_train/plans/step_time_s") == "s");
  CHECK(in.read_units("/plan_train/plans/tokens_per_s") == "1/s");
  const auto rank = in.read_int_column("/plan_train/plans/fastest_rank");
  const auto index = in.read_int_column("/plan_train/plans/plan_index");
  for (std::size_t i = 0; i < rank.size(); ++i) {
    if (rank[i] == 1) CHECK(index[i] == j["fastest"][0]["plan_index"].get<std::int64_t>());
  }
}

TEST_CASE("plan train where no plan fits exits 0, as train does, and says which came closest",
          "[cli][plan]") {
  const Run r = run("plan train --model meta-llama/Llama-3.1-70B --gpu l4 --num-gpus 2 "
                    "--global-batch 2 --seq-len 1024 --search-micro-batch 1 "
                    "--search-checkpointing full");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Closest to fitting") != std::string::npos);
  CHECK(r.out.find("no plan fits meta-llama/Llama-3.1-70B on 2 x l4") != std::string::npos);
}

TEST_CASE("plan train refuses bad input with exit 2 naming the flag", "[cli][plan]") {
  const std::string base = "plan train --model meta-llama/Llama-3.2-1B --gpu h100-sxm ";
  {
    const Run r = run(base + "--num-gpus 8 --global-batch 7 --search-tp 1 --search-pp 1");
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("error: --global-batch: 7 sequences per step is not a multiple of dp x "
                     "micro-batch for any plan of the search (dp 8;") != std::string::npos);
  }
  {
    const Run r = run(base + "--num-gpus 8");
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("error: --global-batch: plan train compares every plan at one global "
                     "batch") != std::string::npos);
  }
  {
    const Run r = run(base + "--num-gpus 8 --global-batch 8 --tp 2");
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("error: --tp: plan train searches this setting; give the values to try "
                     "with --search-tp") != std::string::npos);
  }
  {
    const Run r = run(base + "--num-gpus 8 --global-batch 8 --search-strategy ddp,zero9");
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("error: --search-strategy: unknown strategy 'zero9'") != std::string::npos);
  }
  {
    const Run r = run(base + "--num-gpus 8 --global-batch 8 --resume");
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("error: --resume: needs --out") != std::string::npos);
  }
}

TEST_CASE("plan train over two MPI ranks answers as one process does", "[cli][plan][mpi]") {
#ifdef VRAMSIM_HAVE_MPI
  const Run serial = run(kSmall + " --format json");
  REQUIRE(serial.exit_code == 0);
  const Run r = vramsim::testing::run_mpi(kSmall + " --format json");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == serial.out);
#else
  WARN("skipped: this build has no MPI (CMake did not find it)");
#endif
}
