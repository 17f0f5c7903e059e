// End-to-end tests of `vramsim sweep`: a small grid runs, the summary does not depend on -j or
// on MPI ranks, infeasible points are recorded and the sweep goes on, a bad axis is bad input
// at its file:line, and --resume keeps finished points and ends with the same summary.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "sim/io/results_reader.hpp"
#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using vramsim::io::ResultsReader;
using vramsim::testing::root;
using vramsim::testing::run;
using vramsim::testing::Run;
using vramsim::testing::shell;
using vramsim::testing::temp_dir;

namespace {

std::filesystem::path sweep_dir() {
  const auto d = temp_dir() / "sweep";
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

/// A serve grid of 4 points in a few hundredths of a second: 8B on an H100 or a T4 (where TP 1
/// does not fit), TP 1 or 2.
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

/// Runs `vramsim ARGS`, stdout into `json` (stderr stays apart: the group's, not the file's),
/// and parses it.
nlohmann::json run_json(const std::string& args, const std::filesystem::path& json) {
  const Run r = shell("{ " + std::string(VRAMSIM_BINARY) + " " + args + " --format json > " +
                      json.string() + "; }");
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(slurp(json));
}

}  // namespace

TEST_CASE("a small serve grid runs every point into one summary row each", "[cli][sweep]") {
  const auto grid = write_file("serve_grid.toml", kServeGrid);
  const auto out = sweep_dir() / "serve_grid.h5";
  std::filesystem::remove(out);
  const nlohmann::json j = run_json("sweep " + grid.string() + " --out " + out.string(),
                                    sweep_dir() / "serve_grid.json");
  const auto& points = j["points"];
  REQUIRE(points.size() == 4);
  // First axis slowest: (h100, 1), (h100, 2), (t4, 1), (t4, 2).
  CHECK(points[0]["hardware.gpu"] == "h100-sxm");
  CHECK(points[1]["engine.tp"] == "2");
  CHECK(points[2]["hardware.gpu"] == "t4");
  CHECK(points[0]["status"] == "ok");
  CHECK(points[0]["num_finished"] == 60);
  CHECK(points[2]["status"] == "infeasible");
  CHECK(points[2]["num_finished"].is_null());
  CHECK(std::string(points[2]["reason"]).find("KV cache") != std::string::npos);
  CHECK(points[3]["status"] == "ok");  // the sweep went on past the infeasible point

  REQUIRE(std::filesystem::exists(out));
  CHECK_FALSE(std::filesystem::exists(out.string() + ".journal"));
  const ResultsReader in(out);
  CHECK(in.num_rows("/sweep/summary/point_index") == 4);
  CHECK(in.read_string_column("/sweep/summary/status") ==
        std::vector<std::string>{"ok", "ok", "infeasible", "ok"});
  CHECK(in.read_string_column("/sweep/summary/hardware.gpu")[3] == "t4");
  CHECK(in.read_units("/sweep/summary/ttft_p99_s") == "s");
  CHECK(in.read_string_attribute("/sweep", "command") == "serve");
  // The step-time models of the points that simulated: the H100's and the T4's (TP 2).
  CHECK(in.read_string_attribute("/", "calibration_source").starts_with("mixed: roofline: "));
  CHECK(in.read_string_attribute("/sweep/points/2", "status") == "infeasible");
  const auto result = nlohmann::json::parse(in.read_string_column("/sweep/points/0/result_json")[0]);
  CHECK(result["inputs"]["gpu"] == "h100-sxm");
  CHECK(in.read_string_column("/sweep/points/1/scenario_text")[0].find("tp = 2") !=
        std::string::npos);
}

TEST_CASE("one thread and two threads give identical summary tables", "[cli][sweep]") {
  const auto grid = write_file("jobs_grid.toml", kServeGrid);
  const std::string one = run("sweep " + grid.string() + " -j 1 --format json").out;
  const std::string two = run("sweep " + grid.string() + " -j 2 --format json").out;
  CHECK(one == two);
  CHECK(nlohmann::json::parse(one)["points"].size() == 4);
}

TEST_CASE("an infeasible training point is recorded with its shortfall and the sweep goes on",
          "[cli][sweep]") {
  const auto grid = write_file("train_grid.toml", R"(command = "train"
scenario = ")" + root() + R"(/scenarios/training/llama-3.1-8b-fsdp-8xh100.toml"
[grid]
"parallel.strategy" = ["ddp", "fsdp-full"]
)");
  const nlohmann::json j =
      run_json("sweep " + grid.string(), sweep_dir() / "train_grid.json");
  REQUIRE(j["points"].size() == 2);
  const auto& ddp = j["points"][0];
  CHECK(ddp["status"] == "infeasible");
  CHECK(std::string(ddp["reason"]).find("more than the device's") != std::string::npos);
  CHECK(ddp["fits"] == 0);
  CHECK(ddp["peak_reserved_bytes"].get<std::int64_t>() > 80LL * (1LL << 30));
  CHECK(j["points"][1]["status"] == "ok");
  CHECK(j["points"][1]["strategy"] == "fsdp-full");
}

TEST_CASE("a bad axis field is bad input naming the grid's file:line and the valid fields",
          "[cli][sweep]") {
  const auto grid = write_file("bad_axis.toml", R"(command = "serve"
scenario = ")" + root() + R"(/scenarios/default.toml"
[grid]
"engine.tpp" = [1, 2]
)");
  const Run r = run("sweep " + grid.string());
  CHECK(r.exit_code == 2);
  CHECK(r.out.find(grid.string() + ":4: grid.engine.tpp") != std::string::npos);
  CHECK(r.out.find("did you mean \"engine.tp\"") != std::string::npos);
  CHECK(r.out.find("valid fields: ") != std::string::npos);
  CHECK(r.out.find("workload.rate") != std::string::npos);
}

TEST_CASE("a point the engine refuses is recorded as an error at the grid's line",
          "[cli][sweep]") {
  const auto grid = write_file("refused.toml", kServeGrid + R"(
[[points]]
"hardware.gpu" = "h100-sxm"
"engine.tp" = 3
)");
  const nlohmann::json j = run_json("sweep " + grid.string(), sweep_dir() / "refused.json");
  REQUIRE(j["points"].size() == 5);
  const auto& p = j["points"][4];
  CHECK(p["status"] == "error");
  CHECK(std::string(p["reason"]).find(grid.string() + ":17: engine.tp: tensor-parallel size 3") !=
        std::string::npos);
  CHECK(j["points"][0]["status"] == "ok");
}

TEST_CASE("a resumed sweep keeps the points a journal holds and ends with the same summary",
          "[cli][sweep]") {
  const auto grid = write_file("resume_grid.toml", kServeGrid);
  const auto full = sweep_dir() / "resume_full.h5";
  const auto part = sweep_dir() / "resume_part.h5";
  std::filesystem::remove(full);
  std::filesystem::remove(part);
  const nlohmann::json whole = run_json("sweep " + grid.string() + " --out " + full.string(),
                                        sweep_dir() / "resume_full.json");

  // An interrupted run: points 0 and 2 in the journal (0 marked so that a rerun would show),
  // and a torn last line.
  const ResultsReader in(full);
  const auto record = [&](int i, double ttft_p99) {
    const std::string g = "/sweep/points/" + std::to_string(i);
    nlohmann::ordered_json result;
    const std::string text = in.read_string_column(g + "/result_json")[0];
    if (!text.empty()) result = nlohmann::ordered_json::parse(text);
    if (ttft_p99 > 0) result["ttft_p99_s"] = ttft_p99;
    nlohmann::ordered_json r;
    r["index"] = i;
    r["status"] = in.read_string_attribute(g, "status");
    r["reason"] = in.read_string_attribute(g, "reason");
    r["axis_values"] = nlohmann::json::array();
    r["scenario_text"] = in.read_string_column(g + "/scenario_text")[0];
    r["result"] = result;
    return r.dump() + "\n";
  };
  std::ofstream(part.string() + ".journal") << record(0, 0) + record(2, 0) + "{\"index\": 3, \"st";
  const nlohmann::json resumed =
      run_json("sweep " + grid.string() + " --resume --out " + part.string(),
               sweep_dir() / "resume_part.json");
  CHECK(resumed == whole);
  CHECK_FALSE(std::filesystem::exists(part.string() + ".journal"));
  const ResultsReader a(full);
  const ResultsReader b(part);
  // NaN marks the infeasible point's missing metrics: compare as text.
  CHECK(fmt::format("{}", fmt::join(a.read_double_column("/sweep/summary/ttft_p99_s"), ",")) ==
        fmt::format("{}", fmt::join(b.read_double_column("/sweep/summary/ttft_p99_s"), ",")));
  CHECK(a.read_string_column("/sweep/points/2/scenario_text") ==
        b.read_string_column("/sweep/points/2/scenario_text"));

  // The journal's records are taken as they are, not run again.
  std::filesystem::remove(part);
  std::ofstream(part.string() + ".journal") << record(0, 1234.5);
  const nlohmann::json marked =
      run_json("sweep " + grid.string() + " --resume --out " + part.string(),
               sweep_dir() / "resume_marked.json");
  CHECK(marked["points"][0]["ttft_p99_s"] == 1234.5);
  CHECK(marked["points"][1] == whole["points"][1]);

  // A complete results file resumes to itself.
  const nlohmann::json again =
      run_json("sweep " + grid.string() + " --resume --out " + full.string(),
               sweep_dir() / "resume_again.json");
  CHECK(again == whole);
}

TEST_CASE("under mpirun -np 2 the summary equals the serial run's", "[cli][sweep][mpi]") {
#ifdef VRAMSIM_HAVE_MPI
  const auto grid = write_file("mpi_grid.toml", kServeGrid);
  const auto out = sweep_dir() / "mpi_grid.h5";
  std::filesystem::remove(out);
  const std::string serial = run("sweep " + grid.string() + " --format json").out;
  const Run r = vramsim::testing::run_mpi("sweep " + grid.string() + " --out " + out.string() + " --format json");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == serial);
  const ResultsReader in(out);
  CHECK(in.num_rows("/sweep/summary/point_index") == 4);
#else
  WARN("skipped: this build has no MPI (CMake did not find it)");
  const auto grid = write_file("nompi_grid.toml", kServeGrid);
  const Run r = run("sweep " + grid.string(), {});
  REQUIRE(r.exit_code == 0);
  const Run refused = shell("OMPI_COMM_WORLD_SIZE=2 " + std::string(VRAMSIM_BINARY) +
                            " sweep " + grid.string());
  CHECK(refused.exit_code == 2);
  CHECK(refused.out.find("built without MPI") != std::string::npos);
#endif
}
