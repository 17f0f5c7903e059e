// The one naming rule (analysis/SCHEMA.md, "The naming rule") holds in every command's results
// file: each numeric dataset's units agree with its name (`_bytes` "B", `_s` "s", `_ns` "ns",
// `_per_s` "1/s", no unit suffix "1"), for budget, serve, compare, capacity, train and sweep.
// Sweep's summary takes its units from the typed records, and every number a point's result
// gives has a declared quantity (none is left out of the summary).
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/io/results_reader.hpp"
#include "sim/io/typed_columns.hpp"
#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using vramsim::io::ColumnType;
using vramsim::io::ResultsReader;
using vramsim::testing::root;
using vramsim::testing::run;
using vramsim::testing::Run;
using vramsim::testing::temp_dir;

namespace {

std::filesystem::path fresh(const std::string& name) {
  const auto d = temp_dir() / "naming";
  std::filesystem::create_directories(d);
  const auto p = d / name;
  std::filesystem::remove(p);
  return p;
}

std::string join(const std::string& group, const std::string& name) {
  return group == "/" ? "/" + name : group + "/" + name;
}

/// Every 1-D dataset under `group` whose units do not fit its name, as "path (type, units)".
void breaches(const ResultsReader& in, const std::string& group, std::vector<std::string>& out,
              int& num_numeric) {
  for (const std::string& name : in.list_datasets(group)) {
    const std::string path = join(group, name);
    const ColumnType type = in.column_type(path);
    if (type == ColumnType::kString) continue;
    ++num_numeric;
    const std::string units = in.read_units(path);
    if (!vramsim::io::name_fits_units(name, type, units)) {
      out.push_back(path + " (" + std::string(vramsim::io::to_string(type)) + ", \"" + units +
                    "\")");
    }
  }
  for (const std::string& child : in.list_groups(group)) {
    breaches(in, join(group, child), out, num_numeric);
  }
}

void check_file(const std::filesystem::path& file) {
  const ResultsReader in(file);
  CHECK(in.schema_version() == vramsim::io::kSchemaVersion);
  std::vector<std::string> bad;
  int num_numeric = 0;
  breaches(in, "/", bad, num_numeric);
  INFO(file.string());
  CHECK(num_numeric > 0);
  CHECK(bad == std::vector<std::string>{});
}

void run_ok(const std::string& args) {
  const Run r = run(args);
  INFO(args << "\n" << r.out);
  REQUIRE(r.exit_code == 0);
}

const std::string kServeGrid = R"(command = "serve"
[base]
seed = 3
model.id = "meta-llama/Llama-3.2-1B"
hardware.gpu = "h100-sxm"
engine.max_model_len = 4096
workload.synthetic = "poisson"
workload.rate = 8.0
workload.num_requests = 40
workload.prompt_tokens = "uniform:100:800"
workload.output_tokens = "uniform:20:100"
[grid]
"engine.tp" = [1, 2]
)";

std::filesystem::path write_grid(const std::string& name, const std::string& text) {
  const auto p = fresh(name);
  std::ofstream(p) << text;
  return p;
}

}  // namespace

TEST_CASE("every numeric dataset of each command's results file has units its name states",
          "[cli][results][naming]") {
  const std::string scenario = root() + "/scenarios/default.toml";
  const std::string small = " --num-requests 60";
  struct Case {
    std::string file, args;
  };
  const std::vector<Case> cases = {
      {"budget.h5", "budget " + scenario + " --tp 2"},
      {"serve.h5", "serve " + scenario + small},
      {"compare_serve.h5", "compare serve --model meta-llama/Llama-3.2-1B --gpu h100-sxm "
                           "--synthetic poisson --rate 10 --num-requests 60"},
      {"compare_train.h5", "compare train --model meta-llama/Llama-3.2-1B --gpu h100-sxm "
                           "--seq-len 1024"},
      {"capacity_serve.h5", "capacity serve " + scenario + small +
                                " --slo-ttft-p99 2s --max-runs 3"},
      {"capacity_train.h5", "capacity train --model meta-llama/Llama-3.2-1B --gpu h100-sxm "
                            "--seq-len 1024"},
      {"train.h5", "train --model meta-llama/Llama-3.2-1B --gpu h100-sxm --seq-len 1024"},
      {"find_max.h5", "train --model meta-llama/Llama-3.2-1B --gpu h100-sxm --seq-len 1024 "
                      "--find-max-micro-batch"},
  };
  for (const Case& c : cases) {
    SECTION(c.file) {
      const auto out = fresh(c.file);
      run_ok(c.args + " --out " + out.string());
      check_file(out);
    }
  }
}

TEST_CASE("serve's per-request and time-series times carry their unit in the name",
          "[cli][results][naming]") {
  const auto out = fresh("serve_times.h5");
  run_ok("serve " + root() + "/scenarios/default.toml --num-requests 30 --out " + out.string());
  const ResultsReader in(out);
  for (const char* name : {"arrival_ns", "first_scheduled_ns", "first_token_ns", "finish_ns"}) {
    CHECK(in.read_units(std::string("/serve/requests/") + name) == "ns");
  }
  CHECK(in.read_units("/serve/timeseries/time_ns") == "ns");
  CHECK(in.read_units("/serve/timeseries/step_latency_ns") == "ns");
  CHECK_FALSE(in.has_object("/serve/requests/arrival"));
  // The summary is the typed record: a mean in seconds, a rate, a ratio, a count.
  CHECK(in.read_units("/serve/summary/ttft_mean_s") == "s");
  CHECK(in.read_units("/serve/summary/throughput_output_tokens_per_s") == "1/s");
  CHECK(in.read_units("/serve/summary/prefix_hit_rate") == "1");
  CHECK(in.column_type("/serve/summary/num_finished") == ColumnType::kInt64);
}

TEST_CASE("sweep's summary units come from the typed records, and every number has a column",
          "[cli][sweep][naming]") {
  SECTION("serve") {
    const auto grid = write_grid("naming_serve_grid.toml", kServeGrid);
    const auto out = fresh("naming_serve_sweep.h5");
    run_ok("sweep " + grid.string() + " --out " + out.string());
    check_file(out);
    const ResultsReader in(out);
    // The summary's numbers are serve's /serve/summary fields with the same units.
    const auto serve_out = fresh("naming_serve_point.h5");
    run_ok("serve --model meta-llama/Llama-3.2-1B --gpu h100-sxm --num-requests 10 --out " +
           serve_out.string());
    const ResultsReader serve(serve_out);
    const std::vector<std::string> sweep_cols = in.table_columns("/sweep/summary");
    for (const std::string& name : serve.table_columns("/serve/summary")) {
      INFO(name);
      REQUIRE(std::find(sweep_cols.begin(), sweep_cols.end(), name) != sweep_cols.end());
      CHECK(in.read_units("/sweep/summary/" + name) == serve.read_units("/serve/summary/" + name));
      CHECK(in.column_type("/sweep/summary/" + name) ==
            serve.column_type("/serve/summary/" + name));
    }
  }
  SECTION("train") {
    const auto grid = write_grid("naming_train_grid.toml", R"(command = "train"
scenario = ")" + root() + R"(/scenarios/training/llama-3.1-8b-fsdp-8xh100.toml"
[grid]
"parallel.strategy" = ["ddp", "fsdp-full"]
"lora.rank" = [0, 16]
"memory.offload_optimizer" = [false, true]
)");
    const auto out = fresh("naming_train_sweep.h5");
    run_ok("sweep " + grid.string() + " --out " + out.string());
    check_file(out);
    const ResultsReader in(out);
    const std::vector<std::string> cols = in.table_columns("/sweep/summary");
    const auto has = [](const std::vector<std::string>& v, const std::string& x) {
      return std::find(v.begin(), v.end(), x) != v.end();
    };
    for (const std::string& point : in.list_groups("/sweep/points")) {
      const std::string g = "/sweep/points/" + point;
      const auto result = nlohmann::json::parse(in.read_string_column(g + "/result_json").at(0));
      // Every number (and flag) of train_json is declared, so none is missing from the table.
      for (const auto& [key, value] : result.items()) {
        if (!value.is_number() && !value.is_boolean()) continue;
        INFO(key);
        CHECK(has(cols, key));
      }
      const std::vector<std::string> device_cols = in.table_columns(g + "/devices");
      for (const auto& d : result.at("devices")) {
        for (const auto& [key, value] : d.items()) {
          if (value.is_object()) {
            for (const auto& [k, v] : value.items()) CHECK(has(device_cols, key + "_" + k));
          } else if (value.is_number() || value.is_boolean()) {
            INFO(key);
            CHECK(has(device_cols, key));
          }
        }
      }
    }
    CHECK(in.read_units("/sweep/summary/model_flops_per_step") == "FLOP");
    CHECK(in.read_units("/sweep/summary/mfu") == "1");
    CHECK(in.read_units("/sweep/summary/tokens_per_s") == "1/s");
  }
}
