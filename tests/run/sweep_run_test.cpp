// The sweep through the run layer (sim/run/sweep_run.hpp), without the command line: a tiny grid
// gives the records and summary `vramsim sweep` gives, a point the engine refuses is an error
// record at the grid's file:line, --resume skips the points a journal holds, and the results
// file names the points' step-time model as its calibration_source.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/io/results_reader.hpp"
#include "sim/run/sweep_run.hpp"
#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

namespace {

using vramsim::run::PointRecord;
using vramsim::run::SweepRequest;
using vramsim::run::SweepRun;

std::filesystem::path sweep_dir() {
  const auto d = std::filesystem::temp_directory_path() / "vramsim_run_test" / "sweep";
  std::filesystem::create_directories(d);
  return d;
}

std::filesystem::path write_file(const std::string& name, const std::string& text) {
  const auto p = sweep_dir() / name;
  std::ofstream(p) << text;
  return p;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// 4 points in a few hundredths of a second: Llama-3.1-8B on an H100 or a T4 (where TP 1 does
/// not fit), TP 1 or 2 (the grid of tests/cli/sweep_cli_test.cpp).
const std::string kServeGrid = R"(command = "serve"
[base]
seed = 3
model.id = "meta-llama/Llama-3.1-8B-Instruct"
engine.max_model_len = 4096
workload.synthetic = "poisson"
workload.rate = 8.0
workload.num_requests = 60
workload.prompt_tokens = "uniform:100:800"
workload.output_tokens = "uniform:20:100"
[grid]
"hardware.gpu" = ["h100-sxm", "t4"]
"engine.tp" = [1, 2]
)";

SweepRun sweep(const std::filesystem::path& grid, const std::filesystem::path& out, int jobs,
               bool resume, std::vector<std::size_t>* totals = nullptr) {
  return vramsim::run::run_sweep(
      SweepRequest{.grid_file = grid, .out = out, .jobs = jobs, .resume = resume,
                   .command_line = "sweep_run_test"},
      {.progress = [totals](std::size_t, std::size_t total) {
         if (totals != nullptr) totals->push_back(total);
       },
       .warning = {}});
}

void check_same_record(const PointRecord& a, const PointRecord& b) {
  CHECK(a.index == b.index);
  CHECK(a.status == b.status);
  CHECK(a.reason == b.reason);
  CHECK(a.scenario_text == b.scenario_text);
  CHECK(a.result.dump() == b.result.dump());
}

}  // namespace

TEST_CASE("a tiny serve grid run through the run layer gives the records and summary of the CLI",
          "[run][sweep]") {
  const auto grid = write_file("tiny.toml", kServeGrid);
  const auto out = sweep_dir() / "tiny.h5";
  std::filesystem::remove(out);
  std::vector<std::size_t> totals;
  const SweepRun s = sweep(grid, out, 2, false, &totals);
  REQUIRE(s.root);
  REQUIRE(s.records.size() == 4);
  CHECK(s.any_ran);
  CHECK(totals == std::vector<std::size_t>{4, 4, 4, 4, 4});  // the start, then each point
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(s.records[i].index == static_cast<std::int64_t>(i));
    // Each record is the one a single point's run gives (threads change nothing).
    check_same_record(s.records[i], vramsim::run::run_point(s.grid, i));
  }
  CHECK(s.records[2].status == vramsim::run::kStatusInfeasible);
  CHECK(s.records[0].result["num_finished"] == 60);

  // `vramsim sweep` prints the same summary (its --format json is summary_json).
  const auto json = sweep_dir() / "tiny.json";
  const vramsim::testing::Run cli = vramsim::testing::run(
      "sweep " + grid.string() + " -j 1 --format json > " + json.string());
  REQUIRE(cli.exit_code == 0);
  CHECK(nlohmann::ordered_json::parse(slurp(json)) == vramsim::run::summary_json(s.columns));

  // The file holds the records (read back as --resume would) and names the step-time models:
  // the H100's (TP 1 and 2) and the T4's (TP 2); the T4 at TP 1 never simulated.
  const std::vector<PointRecord> back = vramsim::run::previous_records(out, {});
  REQUIRE(back.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) check_same_record(back[i], s.records[i]);
  const vramsim::io::ResultsReader in(out);
  const std::string source = in.read_string_attribute("/", "calibration_source");
  const std::string h100 = s.records[0].result["inputs"]["cost_model"];
  const std::string t4 = s.records[3].result["inputs"]["cost_model"];
  CHECK(h100 != t4);
  CHECK(s.records[1].result["inputs"]["cost_model"] == h100);
  CHECK(source == "mixed: " + h100 + "; " + t4);
  CHECK(vramsim::run::sweep_cost_model({s.records[0], s.records[1], s.records[2]}) == h100);
  CHECK(vramsim::run::sweep_cost_model({s.records[2]}) == "none (no point was simulated)");
}

TEST_CASE("a train sweep's results file names the training cost source", "[run][sweep]") {
  const auto grid = write_file("train.toml", R"(command = "train"
scenario = ")" + vramsim::testing::root() + R"(/scenarios/training/llama-3.1-8b-fsdp-8xh100.toml"
[grid]
"parallel.strategy" = ["ddp", "fsdp-full"]
)");
  const auto out = sweep_dir() / "train.h5";
  std::filesystem::remove(out);
  const SweepRun s = sweep(grid, out, 1, false);
  REQUIRE(s.records.size() == 2);
  CHECK(s.records[0].status == vramsim::run::kStatusInfeasible);  // DDP: the state overflows
  CHECK(s.records[1].status == vramsim::run::kStatusOk);
  const vramsim::io::ResultsReader in(out);
  // No calibration profile in the scenario: the datasheet roofline, as `vramsim train` says.
  CHECK(in.read_string_attribute("/", "calibration_source") == "datasheet roofline");
}

TEST_CASE("a point the engine refuses becomes an error record at the grid's file:line",
          "[run][sweep]") {
  const auto grid = write_file("refused.toml", kServeGrid + R"(
[[points]]
"hardware.gpu" = "h100-sxm"
"engine.tp" = 3
)");
  const SweepRun s = sweep(grid, {}, 1, false);
  REQUIRE(s.records.size() == 5);
  const PointRecord& p = s.records[4];
  CHECK(p.status == vramsim::run::kStatusError);
  CHECK(p.reason.find(grid.string() + ":17: engine.tp: tensor-parallel size 3") !=
        std::string::npos);
  CHECK(p.result.is_null());
  CHECK(s.records[0].status == vramsim::run::kStatusOk);
  CHECK(s.any_ran);
}

TEST_CASE("a resumed sweep skips the points its journal holds and keeps them as they are",
          "[run][sweep]") {
  const auto grid = write_file("resume.toml", kServeGrid);
  const auto full = sweep_dir() / "resume_full.h5";
  const auto part = sweep_dir() / "resume_part.h5";
  std::filesystem::remove(full);
  std::filesystem::remove(part);
  const SweepRun whole = sweep(grid, full, 2, false);
  REQUIRE(whole.records.size() == 4);

  // An interrupted run: point 0 (marked, so that a rerun would show) and point 2 journaled,
  // then a torn line.
  PointRecord marked = whole.records[0];
  marked.result["ttft_p99_s"] = 1234.5;
  std::ofstream(part.string() + ".journal")
      << vramsim::run::record_to_json(marked) + "\n" +
             vramsim::run::record_to_json(whole.records[2]) + "\n{\"index\": 3, \"st";
  std::vector<std::size_t> totals;
  const SweepRun resumed = sweep(grid, part, 2, true, &totals);
  CHECK(totals == std::vector<std::size_t>{2, 2, 2});  // only points 1 and 3 ran
  REQUIRE(resumed.records.size() == 4);
  CHECK(resumed.records[0].result["ttft_p99_s"] == 1234.5);
  check_same_record(resumed.records[2], whole.records[2]);
  check_same_record(resumed.records[1], whole.records[1]);
  check_same_record(resumed.records[3], whole.records[3]);
  CHECK_FALSE(std::filesystem::exists(part.string() + ".journal"));

  // A record whose scenario the grid no longer gives is run again.
  std::filesystem::remove(part);
  PointRecord stale = whole.records[1];
  stale.scenario_text += "# edited\n";
  stale.result["ttft_p99_s"] = 1234.5;
  std::ofstream(part.string() + ".journal") << vramsim::run::record_to_json(stale) + "\n";
  const std::vector<PointRecord> kept =
      vramsim::run::reusable_records(whole.grid, part, {});
  CHECK(kept.empty());

  // Resuming needs the output to resume from.
  CHECK_THROWS_AS(sweep(grid, {}, 1, true), vramsim::ConfigError);
}

TEST_CASE("a sweep's base scenario reads a relative model path against its own folder",
          "[run][sweep]") {
  // Issue 18: model.id = "my-llama.json" in sub/base.toml is sub/my-llama.json, as `vramsim
  // serve sub/base.toml` reads it, wherever the sweep runs from.
  const auto sub = sweep_dir() / "relative-model";
  std::filesystem::create_directories(sub);
  std::filesystem::copy_file(
      vramsim::testing::root() + "/scenarios/models/meta-llama__Llama-3.1-8B.json",
      sub / "my-llama.json", std::filesystem::copy_options::overwrite_existing);
  std::ofstream(sub / "base.toml") << R"([model]
id = "my-llama.json"
[hardware]
gpu = "h100-sxm"
[engine]
max_model_len = 4096
[workload]
synthetic = "poisson"
rate = 8.0
num_requests = 20
)";
  const auto grid = write_file("relative-model.toml", R"(command = "serve"
scenario = "relative-model/base.toml"
[grid]
"engine.tp" = [1, 2]
)");
  const SweepRun s = sweep(grid, {}, 1, false);
  REQUIRE(s.records.size() == 2);
  for (const PointRecord& r : s.records) {
    CAPTURE(r.reason);
    CHECK(r.status == vramsim::run::kStatusOk);
  }
}
