// Grid files of `vramsim sweep` (sim/io/sweep_grid): axes and points, their order, the point
// scenarios as TOML, and problems at the user's file:line.
#include "sim/io/sweep_grid.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/run/serve_options.hpp"
#include "sim/run/train_options.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

using vramsim::ConfigError;
using vramsim::Problem;
using vramsim::SourceLocation;
using vramsim::ValidationReport;
using vramsim::io::load_sweep_grid;
using vramsim::io::point_scenario;
using vramsim::io::PointScenario;
using vramsim::io::SweepGrid;
using vramsim::io::SweepKind;
using vramsim::io::testing::ScratchDir;

namespace {

// The training fields come from the option schema above io (sim/run/train_options.hpp;
// tests/run/train_options_test.cpp checks every row against the schema's loader).
vramsim::io::ScenarioFields training_fields() { return vramsim::run::training_scenario_fields(); }
// The serving fields, likewise from the serving schema (sim/run/serve_options.hpp).
vramsim::io::ScenarioFields serving_fields() { return vramsim::run::serving_scenario_fields(); }

// A point's scenario read with the serving schema, as `vramsim sweep` reads it.
vramsim::run::ScenarioValues serving_scenario(const PointScenario& p) {
  return vramsim::run::load_serve_scenario_text(p.text, p.name);
}
// The value the scenario sets at `path` (a failed check when it sets none).
vramsim::run::GivenValue value_at(const vramsim::run::ScenarioValues& sc, const std::string& path) {
  const auto it = sc.values.find(path);
  REQUIRE(it != sc.values.end());
  return it->second;
}

std::filesystem::path write(const ScratchDir& dir, const std::string& name,
                            const std::string& text) {
  const auto p = dir / name;
  std::ofstream(p) << text;
  return p;
}

std::string problems_of(const std::filesystem::path& grid) {
  try {
    (void)load_sweep_grid(grid, serving_fields(), training_fields());
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return {};
}

const char* const kBase = R"(seed = 1
[model]
id = "meta-llama/Llama-3.1-8B"
[hardware]
gpu = "h100-sxm"
[engine]
tp = 1
block_size = 16
)";

}  // namespace

TEST_CASE("axes keep the file's order and the first varies slowest", "[io][sweep]") {
  const ScratchDir dir("sweep-order");
  write(dir, "base.toml", kBase);
  const auto grid = write(dir, "g.toml", R"(command = "serve"
scenario = "base.toml"
[grid]
"workload.rate" = [1.0, 2.5]
"hardware.gpu" = ["l4", "t4", "h200"]
)");
  const SweepGrid g = load_sweep_grid(grid, serving_fields(), training_fields());
  CHECK(g.kind == SweepKind::kServe);
  REQUIRE(g.axes == std::vector<std::string>{"workload.rate", "hardware.gpu"});
  REQUIRE(g.points.size() == 6);
  CHECK(point_scenario(g, 0, "p").axis_values == std::vector<std::string>{"1.0", "l4"});
  CHECK(point_scenario(g, 2, "p").axis_values == std::vector<std::string>{"1.0", "h200"});
  CHECK(point_scenario(g, 3, "p").axis_values == std::vector<std::string>{"2.5", "l4"});
}

TEST_CASE("nested axis tables and quoted dotted keys name the same field", "[io][sweep]") {
  const ScratchDir dir("sweep-nested");
  write(dir, "base.toml", kBase);
  const auto grid = write(dir, "g.toml", R"(command = "serve"
scenario = "base.toml"
[grid.engine]
tp = [1, 2]
)");
  const SweepGrid g = load_sweep_grid(grid, serving_fields(), training_fields());
  CHECK(g.axes == std::vector<std::string>{"engine.tp"});
  const PointScenario p = point_scenario(g, 1, "p.toml");
  const vramsim::run::ScenarioValues sc = serving_scenario(p);
  CHECK(std::get<std::int64_t>(value_at(sc, "engine.tp").value) == 2);
  CHECK(std::get<std::int64_t>(value_at(sc, "engine.block_size").value) == 16);  // base stays
}

TEST_CASE("listed points follow the product and show the base value of axes they leave",
          "[io][sweep]") {
  const ScratchDir dir("sweep-points");
  write(dir, "base.toml", kBase);
  const auto grid = write(dir, "g.toml", R"(command = "serve"
scenario = "base.toml"
[grid]
"engine.tp" = [2, 4]
[[points]]
"hardware.gpu" = "l40s"
[[points]]
engine = { tp = 8 }
"workload.rate" = 3.0
)");
  const SweepGrid g = load_sweep_grid(grid, serving_fields(), training_fields());
  REQUIRE(g.points.size() == 4);
  CHECK(g.axes == std::vector<std::string>{"engine.tp", "hardware.gpu", "workload.rate"});
  CHECK(point_scenario(g, 0, "p").axis_values ==
        std::vector<std::string>{"2", "h100-sxm", ""});
  CHECK(point_scenario(g, 2, "p").axis_values == std::vector<std::string>{"1", "l40s", ""});
  CHECK(point_scenario(g, 3, "p").axis_values == std::vector<std::string>{"8", "h100-sxm", "3.0"});
}

TEST_CASE("a point's problems point at the grid line of its value or the base file's line",
          "[io][sweep]") {
  const ScratchDir dir("sweep-lines");
  const auto base = write(dir, "base.toml", kBase);
  const auto grid = write(dir, "g.toml", R"(command = "serve"
scenario = "base.toml"
[base]
workload.num_requests = 10
[grid]
"engine.tp" = [3]
)");
  const SweepGrid g = load_sweep_grid(grid, serving_fields(), training_fields());
  const PointScenario p = point_scenario(g, 0, "point-0");
  const vramsim::run::ScenarioValues sc = serving_scenario(p);
  const SourceLocation tp_at = value_at(sc, "engine.tp").origin.where;
  const SourceLocation tp = p.origin(tp_at);
  CHECK(tp.file == grid.string());
  CHECK(tp.line == 6);
  const SourceLocation block = p.origin(value_at(sc, "engine.block_size").origin.where);
  CHECK(block.file == (dir.path() / "base.toml").lexically_normal().string());
  CHECK(block.line == 8);
  CHECK(p.origin(value_at(sc, "workload.num_requests").origin.where).line == 4);
  ValidationReport r;
  r.error("engine.tp", "does not divide", tp_at);
  p.relocate(r);
  CHECK(r.format().find(grid.string() + ":6: engine.tp: does not divide") != std::string::npos);
}

TEST_CASE("a wrongly typed value is reported where the grid writes it", "[io][sweep]") {
  const ScratchDir dir("sweep-types");
  write(dir, "base.toml", kBase);
  const auto grid = write(dir, "g.toml", R"(command = "serve"
scenario = "base.toml"
[grid]
"engine.tp" = ["two"]
)");
  const SweepGrid g = load_sweep_grid(grid, serving_fields(), training_fields());
  const PointScenario p = point_scenario(g, 0, "point-0");
  try {
    (void)serving_scenario(p);
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    ValidationReport r = e.report();
    p.relocate(r);
    CHECK(r.format() ==
          grid.string() + ":4: engine.tp: expected an integer, got a string (\"two\")\n");
  }
}

TEST_CASE("an unknown axis field names the axis, a near field and every valid field",
          "[io][sweep]") {
  const ScratchDir dir("sweep-unknown");
  write(dir, "base.toml", kBase);
  const auto grid = write(dir, "g.toml", R"(command = "train"
scenario = "base.toml"
[grid]
"parallel.stratgy" = ["ddp"]
)");
  const std::string text = problems_of(grid);
  CHECK(text.find(grid.string() + ":4: grid.parallel.stratgy: \"parallel.stratgy\" is not a "
                                  "field of train scenarios (did you mean \"parallel.strategy\"?)") !=
        std::string::npos);
  CHECK(text.find("valid fields: batch.global_batch, batch.micro_batch") != std::string::npos);
}

TEST_CASE("grid structure problems are all reported with their lines", "[io][sweep]") {
  const ScratchDir dir("sweep-structure");
  const auto grid = write(dir, "g.toml", R"(command = "serve"
scenario = "missing.toml"
[grid]
"engine.tp" = 2
"engine.pp" = []
)");
  const std::string text = problems_of(grid);
  CHECK(text.find(":2: scenario: no such scenario file") != std::string::npos);
  const auto bad_command = write(dir, "c.toml", "command = \"serv\"\n[grid]\n\"engine.tp\" = [1]\n");
  CHECK(problems_of(bad_command).find(":1: command: unknown command 'serv'; valid: serve, train") !=
        std::string::npos);
  const auto no_list = write(dir, "n.toml", "command = \"serve\"\n[grid]\n\"engine.tp\" = 2\n"
                                            "\"engine.pp\" = []\n");
  const std::string lists = problems_of(no_list);
  CHECK(lists.find(":3: grid.engine.tp: an axis takes a non-empty list") != std::string::npos);
  CHECK(lists.find(":4: grid.engine.pp: an axis takes a non-empty list") != std::string::npos);
  const auto empty = write(dir, "e.toml", "command = \"serve\"\n");
  CHECK(problems_of(empty).find("no points") != std::string::npos);
}

TEST_CASE("a relative trace path is taken from the folder of the file that writes it",
          "[io][sweep]") {
  const ScratchDir dir("sweep-paths");
  std::filesystem::create_directories(dir / "sub");
  write(dir, "sub/base.toml", std::string(kBase) + "[workload]\ntrace = \"t.csv\"\n");
  const auto grid = write(dir, "g.toml", R"(command = "serve"
scenario = "sub/base.toml"
[[points]]
[[points]]
"workload.trace" = "other.csv"
)");
  const SweepGrid g = load_sweep_grid(grid, serving_fields(), training_fields());
  const auto trace_of = [&](std::size_t i) {
    const PointScenario p = point_scenario(g, i, "p");
    return std::get<std::string>(value_at(serving_scenario(p), "workload.trace").value);
  };
  const auto abs = [](const std::filesystem::path& p) {
    return std::filesystem::absolute(p).lexically_normal().string();
  };
  CHECK(trace_of(0) == abs(dir / "sub" / "t.csv"));
  CHECK(trace_of(1) == abs(dir / "other.csv"));
}

TEST_CASE("the serving fields come from the serving schema", "[io][sweep]") {
  const std::vector<std::string> f =
      vramsim::io::sweep_fields(SweepKind::kServe, serving_fields(), training_fields());
  CHECK(std::binary_search(f.begin(), f.end(), "engine.tp"));
  CHECK(std::binary_search(f.begin(), f.end(), "workload.rate"));
  CHECK(std::binary_search(f.begin(), f.end(), "slo.ttft"));
  CHECK_FALSE(std::binary_search(f.begin(), f.end(), "engine"));
  CHECK_FALSE(std::binary_search(f.begin(), f.end(), "description"));
}
