// The training option schema (sim/run/train_options): every row round-trips through a scenario's
// TOML, its flag (the CLI11 binding of sim/cli/train_flags.cpp) and a sweep axis, and a flag
// beats the scenario, which beats the default, with the origin recorded.
#include "sim/run/train_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "sim/cli/train_config.hpp"
#include "sim/io/sweep_grid.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

using vramsim::ConfigError;
using vramsim::io::testing::ScratchDir;
using vramsim::run::OriginKind;
using vramsim::run::RawValue;
using vramsim::run::TrainOptionRow;
using vramsim::run::TrainOptions;
using vramsim::run::ValueKind;

namespace {

/// A valid value of `row` other than its default (`second` gives another one still).
RawValue sample(const TrainOptionRow& row, bool second = false) {
  const RawValue def = row.get(TrainOptions{});
  switch (row.kind) {
    case ValueKind::kInt: return std::get<std::int64_t>(def) + (second ? 5 : 3);
    case ValueKind::kBool: return !std::get<bool>(def);
    case ValueKind::kBytes: return std::string(second ? "30MiB" : "26MiB");
    case ValueKind::kString: break;
  }
  if (row.names != nullptr) {  // an enum: a name from its table that is not the default
    std::vector<std::string> names;
    const std::string all(row.names());
    for (std::size_t start = 0; start <= all.size();) {
      const std::size_t comma = std::min(all.find(", ", start), all.size());
      names.push_back(all.substr(start, comma - start));
      start = comma + 2;
    }
    std::erase(names, std::get<std::string>(def));
    std::erase_if(names, [](const std::string& n) { return n.find(':') != std::string::npos; });
    REQUIRE(names.size() >= 2);
    return names[second ? 1 : 0];
  }
  // Absolute, so that the scenario's folder does not change it.
  return std::string(second ? "/abs/other.toml" : "/abs/value.toml");
}

std::string toml_literal(const RawValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return fmt::format("\"{}\"", *s);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  return std::get<bool>(v) ? "true" : "false";
}

std::string flag_text(const RawValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return std::to_string(std::get<std::int64_t>(v));
}

/// A scenario setting `row` to `v` (and the two required settings, unless `row` is one).
std::string scenario_with(const TrainOptionRow& row, const RawValue& v) {
  std::map<std::string, std::string> tables;  // table -> its lines
  if (row.path != "model.id") tables["model"] += "id = \"m\"\n";
  if (row.path != "hardware.gpu") tables["hardware"] += "gpu = \"g\"\n";
  const std::string table(row.path.substr(0, row.path.find('.')));
  const std::string key(row.path.substr(row.path.find('.') + 1));
  tables[table] += fmt::format("{} = {}\n", key, toml_literal(v));
  std::string text;
  for (const auto& [name, lines] : tables) text += "[" + name + "]\n" + lines;
  return text;
}

/// The line of `row`'s value in scenario_with's text.
int line_of(const std::string& text, const TrainOptionRow& row) {
  const std::string key(row.path.substr(row.path.find('.') + 1));
  const std::size_t at = text.find("\n" + key + " = ");
  return 2 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

/// `args` parsed by the CLI11 options of `train` (no scenario).
TrainOptions from_flags(std::vector<std::string> args,
                        const vramsim::run::TrainScenario& sc = {}) {
  CLI::App app;
  vramsim::cli::TrainFlags f;
  vramsim::cli::add_train_flags(app, f);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
  return vramsim::run::resolve_train_options(sc, f.given_values());
}

std::vector<std::string> flag_args(const TrainOptionRow& row, const RawValue& v) {
  std::vector<std::string> args;
  if (row.path != "model.id") args.insert(args.end(), {"--model", "m"});
  if (row.path != "hardware.gpu") args.insert(args.end(), {"--gpu", "g"});
  args.emplace_back(row.flag);
  if (row.kind != ValueKind::kBool) args.push_back(flag_text(v));
  return args;
}

}  // namespace

TEST_CASE("every schema row round-trips through TOML, its flag and a sweep axis",
          "[run][options]") {
  const ScratchDir dir("train-options");
  const vramsim::io::ScenarioFields fields = vramsim::run::training_scenario_fields();
  CHECK(fields.fields.size() == vramsim::run::train_option_rows().size());
  for (const TrainOptionRow& row : vramsim::run::train_option_rows()) {
    INFO(row.path);
    const RawValue v = sample(row);

    // TOML -> resolved value, at the scenario's file:line.
    const std::string text = scenario_with(row, v);
    const TrainOptions t = vramsim::run::resolve_train_options(
        vramsim::run::load_train_scenario_text(text, "s.toml", dir.path()));
    CHECK(row.get(t) == v);
    CHECK(t.origin(row.path).kind == OriginKind::kScenario);
    CHECK(t.origin(row.path).where.file == "s.toml");
    CHECK(t.origin(row.path).where.line == line_of(text, row));

    // Flag -> resolved value, named by the flag.
    const TrainOptions f = from_flags(flag_args(row, v));
    CHECK(row.get(f) == v);
    CHECK(f.origin(row.path).kind == OriginKind::kFlag);
    CHECK(f.origin(row.path).flag == row.flag);

    // Sweep axis -> resolved value (the point's scenario text, loaded as sweep does).
    const auto base = dir / "base.toml";
    std::ofstream(base) << "[model]\nid = \"m\"\n[hardware]\ngpu = \"g\"\n";
    const auto grid = dir / "grid.toml";
    std::ofstream(grid) << fmt::format("command = \"train\"\nscenario = \"base.toml\"\n"
                                       "[grid]\n\"{}\" = [{}]\n",
                                       row.path, toml_literal(v));
    const vramsim::io::SweepGrid g = vramsim::io::load_sweep_grid(grid, fields);
    REQUIRE(g.points.size() == 1);
    const vramsim::io::PointScenario ps = vramsim::io::point_scenario(g, 0, "point");
    const TrainOptions s = vramsim::run::resolve_train_options(
        vramsim::run::load_train_scenario_text(ps.text, ps.name));
    CHECK(row.get(s) == v);
    CHECK(s.origin(row.path).kind == OriginKind::kScenario);
  }
}

TEST_CASE("a flag beats the scenario, which beats the default, and each origin is recorded",
          "[run][options]") {
  for (const TrainOptionRow& row : vramsim::run::train_option_rows()) {
    if (row.path == "model.id" || row.path == "hardware.gpu") continue;  // required, no default
    INFO(row.path);
    const RawValue in_file = sample(row);
    const RawValue on_flag = row.kind == ValueKind::kBool ? in_file : sample(row, true);
    const vramsim::run::TrainScenario sc =
        vramsim::run::load_train_scenario_text(scenario_with(row, in_file), "s.toml");

    const TrainOptions both = from_flags(flag_args(row, on_flag), sc);
    CHECK(row.get(both) == on_flag);
    CHECK(both.origin(row.path).kind == OriginKind::kFlag);

    const TrainOptions file_only = from_flags({}, sc);
    CHECK(row.get(file_only) == in_file);
    CHECK(file_only.origin(row.path).kind == OriginKind::kScenario);

    const TrainOptions neither = from_flags({"--model", "m", "--gpu", "g"});
    CHECK(row.get(neither) == row.get(TrainOptions{}));
    CHECK(neither.origin(row.path).kind == OriginKind::kDefault);
    const auto inputs = vramsim::run::resolved_inputs_json(neither);
    CHECK(inputs.at(std::string(row.path)).at("origin") == "default");
  }
}

TEST_CASE("schema problems carry the scenario's file:line, or the flag's name on the command line",
          "[run][options]") {
  const std::string text = "[model]\nid = \"m\"\n[hardware]\ngpu = \"g\"\n[parallel]\n"
                           "strategy = \"zero9\"\n";
  try {
    (void)vramsim::run::resolve_train_options(
        vramsim::run::load_train_scenario_text(text, "s.toml"));
    FAIL("no error");
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    const vramsim::Problem& p = e.report().problems().front();
    CHECK(p.field == "parallel.strategy");
    CHECK(p.where.file == "s.toml");
    CHECK(p.where.line == 6);
    CHECK(p.message.find("unknown value 'zero9'; valid: ddp") == 0);
  }
  try {
    (void)from_flags({"--model", "m", "--gpu", "g", "--strategy", "zero9"});
    FAIL("no error");
  } catch (const ConfigError& e) {
    const vramsim::ValidationReport named = vramsim::cli::named_by_flags(e.report());
    CHECK(named.problems().front().field == "--strategy");
  }
  // Unknown keys: "did you mean", at the line.
  try {
    (void)vramsim::run::load_train_scenario_text("[batch]\nseq_lne = 4\n", "s.toml");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.report().format().find("s.toml:2") != std::string::npos);
    CHECK(e.report().format().find("seq_len") != std::string::npos);
  }
}

TEST_CASE("relative paths of a scenario are taken from its folder, and ids stay as written",
          "[run][options]") {
  const std::string text = "[model]\nid = \"m\"\n[hardware]\ngpu = \"g\"\n"
                           "topology = \"h100-sxm-8x-nvswitch\"\ncalibration = \"p.json\"\n";
  const TrainOptions o = vramsim::run::resolve_train_options(
      vramsim::run::load_train_scenario_text(text, "s.toml", "/some/dir"));
  CHECK(o.topology == "h100-sxm-8x-nvswitch");
  CHECK(o.calibration == "/some/dir/p.json");
  const TrainOptions f = vramsim::run::resolve_train_options(vramsim::run::load_train_scenario_text(
      "[model]\nid = \"m\"\n[hardware]\ngpu = \"g\"\ntopology = \"c/cluster.toml\"\n", "s.toml",
      "/some/dir"));
  CHECK(f.topology == "/some/dir/c/cluster.toml");
}
