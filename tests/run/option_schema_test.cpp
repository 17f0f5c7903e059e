// The option schemas (sim/run/option_schema.hpp) of serving (serve_options) and training
// (train_options): every row round-trips through a scenario's TOML, its flag (the CLI11 binding
// of sim/cli/schema_flags.hpp) and a sweep axis; a flag beats the scenario, which beats the
// default, with the origin recorded; and a bad value is reported at its origin.
#include "sim/run/option_schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "sim/cli/serve_flags.hpp"
#include "sim/cli/train_config.hpp"
#include "sim/io/sweep_grid.hpp"
#include "sim/run/serve_options.hpp"
#include "sim/run/train_options.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

using vramsim::ConfigError;
using vramsim::io::testing::ScratchDir;
using vramsim::run::OriginKind;
using vramsim::run::RawValue;
using vramsim::run::ValueKind;

namespace {

// What the generic checks need of a schema.
struct ServeSchema {
  using Options = vramsim::run::ServeOptions;
  static constexpr const char* kCommand = "serve";
  static auto rows() { return vramsim::run::serve_option_rows(); }
  static auto fields() { return vramsim::run::serving_scenario_fields(); }
  static vramsim::run::ScenarioValues load(const std::string& text, const std::string& name,
                                           const std::filesystem::path& dir = {}) {
    return vramsim::run::load_serve_scenario_text(text, name, dir);
  }
  static Options resolve(const vramsim::run::ScenarioValues& sc,
                         const vramsim::run::GivenValues& flags = {}) {
    return vramsim::run::resolve_serve_options(sc, flags);
  }
  static vramsim::run::GivenValues parse(CLI::App& app, std::vector<std::string> args) {
    vramsim::cli::ServeFlags f;
    vramsim::cli::add_serve_flags(app, f);
    app.parse(args);
    return f.settings.given_values();
  }
};

struct TrainSchema {
  using Options = vramsim::run::TrainOptions;
  static constexpr const char* kCommand = "train";
  static auto rows() { return vramsim::run::train_option_rows(); }
  static auto fields() { return vramsim::run::training_scenario_fields(); }
  static vramsim::run::ScenarioValues load(const std::string& text, const std::string& name,
                                           const std::filesystem::path& dir = {}) {
    return vramsim::run::load_train_scenario_text(text, name, dir);
  }
  static Options resolve(const vramsim::run::ScenarioValues& sc,
                         const vramsim::run::GivenValues& flags = {}) {
    return vramsim::run::resolve_train_options(sc, flags);
  }
  static vramsim::run::GivenValues parse(CLI::App& app, std::vector<std::string> args) {
    vramsim::cli::TrainFlags f;
    vramsim::cli::add_train_flags(app, f);
    app.parse(args);
    return f.given_values();
  }
};

/// The names of an enum row ("a, b (note), c:K" -> a, b; forms with ':' are left out).
std::vector<std::string> names_of(std::string_view all) {
  std::vector<std::string> names;
  for (std::size_t start = 0; start <= all.size();) {
    const std::size_t comma = std::min(all.find(", ", start), all.size());
    std::string name(all.substr(start, comma - start));
    name = name.substr(0, name.find(' '));
    if (name.find(':') == std::string::npos && !name.empty()) names.push_back(name);
    start = comma + 2;
  }
  return names;
}

/// A valid value of `row` other than its default (`second` gives another one where there is).
template <class O>
RawValue sample(const vramsim::run::OptionRow<O>& row, bool second = false) {
  const RawValue def = row.get(O{});
  const bool unset = std::holds_alternative<std::monostate>(def);
  switch (row.kind) {
    case ValueKind::kInt: {
      // Below a default at the top of int64 (parallel.model_persistence_threshold: DeepSpeed's
      // sys.maxsize), above any other.
      const std::int64_t base = unset ? 4 : std::get<std::int64_t>(def);
      const std::int64_t step = second ? 5 : 3;
      return base > std::numeric_limits<std::int64_t>::max() - step ? base - step : base + step;
    }
    case ValueKind::kDouble: return (unset ? 0.5 : std::get<double>(def)) + (second ? 2.5 : 1.25);
    // A boolean left unset by default (engine.async_scheduling: the release decides).
    case ValueKind::kBool: return unset ? true : !std::get<bool>(def);
    case ValueKind::kBytes: return std::string(second ? "30MiB" : "26MiB");
    case ValueKind::kDuration: return std::string(second ? "250ms" : "3s");
    case ValueKind::kString: break;
  }
  if (row.names != nullptr) {  // an enum: a name from its list that is not the default
    std::vector<std::string> names = names_of(row.names());
    std::erase(names, std::get<std::string>(def));
    REQUIRE(!names.empty());
    return names[second ? names.size() - 1 : 0];
  }
  // A DeepSpeed configuration: a file that exists and parses.
  if (row.path == "parallel.deepspeed_config") {
    const std::filesystem::path dir = std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "scenarios" /
                                      "training";
    return (dir / (second ? "ds_config_zero2.json" : "ds_config_zero3_offload.json")).string();
  }
  // A list of numbers, not a path.
  if (row.path == "parallel.expert_loads") return std::string(second ? "1,2.5" : "3,1,1,1");
  // A bandwidth with its unit (the KV disk tier's).
  if (row.path.ends_with("_bandwidth")) return std::string(second ? "5GB/s" : "7GB/s");
  // Absolute, so that the scenario's folder does not change a path.
  return std::string(second ? "/abs/other.toml" : "/abs/value.toml");
}

std::string flag_text(const RawValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* d = std::get_if<double>(&v)) return fmt::format("{}", *d);
  return std::to_string(std::get<std::int64_t>(v));
}

/// A scenario setting `row` to `v` (and the two required settings, unless `row` is one); a
/// top-level key goes first.
template <class O>
std::string scenario_with(const vramsim::run::OptionRow<O>& row, const RawValue& v) {
  std::map<std::string, std::string> tables;  // table -> its lines
  if (row.path != "model.id") tables["model"] += "id = \"m\"\n";
  if (row.path != "hardware.gpu") tables["hardware"] += "gpu = \"g\"\n";
  const std::size_t dot = row.path.find('.');
  const std::string line =
      fmt::format("{} = {}\n", row.path.substr(dot == std::string_view::npos ? 0 : dot + 1),
                  vramsim::run::raw_to_toml(v));
  std::string text;
  if (dot == std::string_view::npos) {
    text = line;
  } else {
    tables[std::string(row.path.substr(0, dot))] += line;
  }
  for (const auto& [name, lines] : tables) text += "[" + name + "]\n" + lines;
  return text;
}

/// The line of `row`'s value in scenario_with's text.
template <class O>
int line_of(const std::string& text, const vramsim::run::OptionRow<O>& row) {
  const std::size_t dot = row.path.find('.');
  const std::string key(row.path.substr(dot == std::string_view::npos ? 0 : dot + 1));
  if (text.rfind(key + " = ", 0) == 0) return 1;
  const std::size_t at = text.find("\n" + key + " = ");
  return 2 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

/// The command line setting `row` to `v`; a boolean false is its negation ("--no-x").
template <class O>
std::vector<std::string> flag_args(const vramsim::run::OptionRow<O>& row, const RawValue& v,
                                   bool alias = false) {
  std::vector<std::string> args;
  if (row.path != "model.id") args.insert(args.end(), {"--model", "m"});
  if (row.path != "hardware.gpu") args.insert(args.end(), {"--gpu", "g"});
  const std::string flag(alias && !row.alias.empty() ? row.alias : row.flag);
  if (row.kind == ValueKind::kBool) {
    args.push_back(std::get<bool>(v) ? flag : "--no-" + flag.substr(2));
  } else {
    args.push_back(flag);
    args.push_back(flag_text(v));
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  return args;
}

template <class S>
typename S::Options from_flags(const std::vector<std::string>& args,
                               const vramsim::run::ScenarioValues& sc = {}) {
  CLI::App app;
  return S::resolve(sc, S::parse(app, args));
}

template <class S>
void check_round_trips() {
  const ScratchDir dir(std::string(S::kCommand) + "-options");
  using O = typename S::Options;
  const vramsim::io::ScenarioFields fields = S::fields();
  CHECK(fields.fields.size() == S::rows().size());
  for (const vramsim::run::OptionRow<O>& row : S::rows()) {
    INFO(row.path);
    const RawValue v = sample(row);

    // TOML -> resolved value, at the scenario's file:line.
    const std::string text = scenario_with(row, v);
    const O t = S::resolve(S::load(text, "s.toml", dir.path()));
    CHECK(row.get(t) == v);
    CHECK(t.origin(row.path).kind == OriginKind::kScenario);
    CHECK(t.origin(row.path).where.file == "s.toml");
    CHECK(t.origin(row.path).where.line == line_of(text, row));

    // Flag (and its second spelling) -> resolved value, named by the flag.
    for (const bool alias : {false, true}) {
      const O f = from_flags<S>(flag_args(row, v, alias));
      CHECK(row.get(f) == v);
      CHECK(f.origin(row.path).kind == OriginKind::kFlag);
    }

    // Sweep axis -> resolved value (the point's scenario text, loaded as sweep does).
    const auto base = dir / "base.toml";
    std::ofstream(base) << "[model]\nid = \"m\"\n[hardware]\ngpu = \"g\"\n";
    const auto grid = dir / "grid.toml";
    std::ofstream(grid) << fmt::format("command = \"{}\"\nscenario = \"base.toml\"\n"
                                       "[grid]\n\"{}\" = [{}]\n",
                                       S::kCommand, row.path, vramsim::run::raw_to_toml(v));
    const vramsim::io::SweepGrid g = vramsim::io::load_sweep_grid(
        grid, vramsim::run::serving_scenario_fields(), vramsim::run::training_scenario_fields());
    REQUIRE(g.points.size() == 1);
    const vramsim::io::PointScenario ps = vramsim::io::point_scenario(g, 0, "point");
    const O s = S::resolve(S::load(ps.text, ps.name));
    CHECK(row.get(s) == v);
    CHECK(s.origin(row.path).kind == OriginKind::kScenario);
  }
}

template <class S>
void check_precedence() {
  using O = typename S::Options;
  for (const vramsim::run::OptionRow<O>& row : S::rows()) {
    if (row.path == "model.id" || row.path == "hardware.gpu") continue;  // required, no default
    INFO(row.path);
    const RawValue in_file = sample(row);
    const RawValue on_flag = row.kind == ValueKind::kBool ? in_file : sample(row, true);
    const vramsim::run::ScenarioValues sc = S::load(scenario_with(row, in_file), "s.toml");

    const O both = from_flags<S>(flag_args(row, on_flag), sc);
    CHECK(row.get(both) == on_flag);
    CHECK(both.origin(row.path).kind == OriginKind::kFlag);

    const O file_only = from_flags<S>({}, sc);
    CHECK(row.get(file_only) == in_file);
    CHECK(file_only.origin(row.path).kind == OriginKind::kScenario);

    const O neither = from_flags<S>({"g", "--gpu", "m", "--model"});
    CHECK(row.get(neither) == row.get(O{}));
    CHECK(neither.origin(row.path).kind == OriginKind::kDefault);
    const auto inputs = vramsim::run::resolved_inputs_json(S::rows(), neither);
    CHECK(inputs.at(std::string(row.path)).at("origin") == "default");
    CHECK(inputs.at(std::string(row.path)).at("source") == row.default_source);
  }
}

}  // namespace

TEST_CASE("every serving schema row round-trips through TOML, its flag and a sweep axis",
          "[run][options]") {
  check_round_trips<ServeSchema>();
}

TEST_CASE("every training schema row round-trips through TOML, its flag and a sweep axis",
          "[run][options]") {
  check_round_trips<TrainSchema>();
}

TEST_CASE("serving: a flag beats the scenario, which beats the default, each origin recorded",
          "[run][options]") {
  check_precedence<ServeSchema>();
}

TEST_CASE("training: a flag beats the scenario, which beats the default, each origin recorded",
          "[run][options]") {
  check_precedence<TrainSchema>();
}

TEST_CASE("a bad serving value is reported at the scenario's file:line or on its flag",
          "[run][options]") {
  const std::string text = "[model]\nid = \"m\"\n[hardware]\ngpu = \"g\"\n[serving]\n"
                           "preemption = \"evict\"\nswap_space = 4\n";
  try {
    (void)vramsim::run::resolve_serve_options(
        vramsim::run::load_serve_scenario_text(text, "s.toml"));
    FAIL("no error");
  } catch (const ConfigError& e) {
    const std::string f = e.report().format();
    CHECK(f.find("s.toml:7: serving.swap_space: the bare number 4 has no unit") !=
          std::string::npos);
  }
  try {
    (void)vramsim::run::resolve_serve_options(vramsim::run::load_serve_scenario_text(
        "[model]\nid = \"m\"\n[hardware]\ngpu = \"g\"\n[serving]\npreemption = \"evict\"\n",
        "s.toml"));
    FAIL("no error");
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    const vramsim::Problem& p = e.report().problems().front();
    CHECK(p.field == "serving.preemption");
    CHECK(p.where.line == 6);
    CHECK(p.message == "unknown value 'evict'; valid: recompute, swap");
  }
  try {
    (void)from_flags<ServeSchema>({"0", "--max-num-seqs", "g", "--gpu", "m", "--model"});
    FAIL("no error");
  } catch (const ConfigError& e) {
    const vramsim::ValidationReport named =
        vramsim::cli::named_by_flags(e.report(), vramsim::run::serve_option_rows());
    REQUIRE(named.problems().size() == 1);
    CHECK(named.problems().front().field == "--max-num-seqs");
    CHECK(named.problems().front().message == "must be positive, got 0");
  }
}

TEST_CASE("a serving scenario's relative trace and profile are taken from its folder",
          "[run][options]") {
  const vramsim::run::ServeOptions o =
      vramsim::run::resolve_serve_options(vramsim::run::load_serve_scenario_text(
          "[model]\nid = \"m\"\n[hardware]\ngpu = \"g\"\ncalibration = \"p.json\"\n"
          "[workload]\ntrace = \"t/a.csv\"\n",
          "s.toml", "/some/dir"));
  CHECK(o.calibration == "/some/dir/p.json");
  CHECK(o.trace == "/some/dir/t/a.csv");
}

TEST_CASE("budget registers the engine rows only, serve registers every row", "[run][options]") {
  CLI::App budget_app;
  vramsim::cli::ServeFlags engine;
  vramsim::cli::add_engine_flags(budget_app, engine);
  CLI::App serve_app;
  vramsim::cli::ServeFlags all;
  vramsim::cli::add_serve_flags(serve_app, all);
  CHECK(all.settings.values.size() == vramsim::run::serve_option_rows().size());
  for (const vramsim::run::ServeOptionRow& row : vramsim::run::serve_option_rows()) {
    INFO(row.path);
    CHECK((engine.settings.values.count(row.flag) == 1) == row.group.empty());
  }
  CHECK(engine.settings.values.count("--max-num-seqs") == 1);
  CHECK(engine.settings.values.count("--rate") == 0);
}

namespace {

/// The problems of resolving `sc` and `flags` with schema S (none when it resolves).
template <class S>
vramsim::ValidationReport problems_of(const vramsim::run::ScenarioValues& sc,
                                      const std::vector<std::string>& args = {}) {
  try {
    (void)from_flags<S>(args, sc);
  } catch (const ConfigError& e) {
    return vramsim::cli::named_by_flags(e.report(), S::rows());
  }
  return {};
}

bool has_problem(const vramsim::ValidationReport& r, const std::string& field, int line,
                 const std::string& message) {
  return std::any_of(r.problems().begin(), r.problems().end(), [&](const vramsim::Problem& p) {
    return p.field == field && (line == 0 || p.where.line == line) &&
           p.message.find(message) != std::string::npos;
  });
}

/// Out-of-bound values of a row's kind (issue 18): with the message each must give.
template <class O>
std::vector<std::pair<RawValue, std::string>> out_of_bounds(const vramsim::run::OptionRow<O>& row) {
  using vramsim::run::kNoIntBound;
  switch (row.kind) {
    case ValueKind::kInt:
      if (row.max_int == kNoIntBound) return {};
      return {{RawValue(row.max_int + 1),
               fmt::format("must be at most {}, got {}", row.max_int, row.max_int + 1)},
              {RawValue(std::int64_t{9'223'372'036'854'775'807}), "must be at most"}};
    case ValueKind::kDouble:
      return {{RawValue(std::numeric_limits<double>::infinity()), "must be a finite number"},
              {RawValue(std::numeric_limits<double>::quiet_NaN()), "must be a finite number"}};
    case ValueKind::kBytes:
      return {{RawValue(std::string("2048TiB")), "must be at most 1048576GiB (1 PiB)"}};
    case ValueKind::kString: return {{RawValue(std::string()), "must not be empty"}};
    case ValueKind::kBool:
    case ValueKind::kDuration: return {};
  }
  return {};
}

template <class S>
int check_bounds() {
  using O = typename S::Options;
  int checked = 0;
  for (const vramsim::run::OptionRow<O>& row : S::rows()) {
    for (const auto& [v, message] : out_of_bounds(row)) {
      INFO(row.path << " = " << vramsim::run::raw_to_toml(v));
      const std::string text = scenario_with(row, v);
      CHECK(has_problem(problems_of<S>(S::load(text, "s.toml")), std::string(row.path),
                        line_of(text, row), message));
      if (row.kind != ValueKind::kString || !std::get<std::string>(v).empty()) {
        CHECK(has_problem(problems_of<S>({}, flag_args(row, v)), std::string(row.flag), 0,
                          message));
      }
      ++checked;
    }
    if (row.kind == ValueKind::kInt && row.max_int != vramsim::run::kNoIntBound) {
      INFO(row.path);
      CHECK(vramsim::run::help_text(row).find(fmt::format("[at most {}]", row.max_int)) !=
            std::string::npos);
    }
  }
  return checked;
}

template <class S>
void check_integer_flag_texts() {
  using O = typename S::Options;
  for (const vramsim::run::OptionRow<O>& row : S::rows()) {
    if (row.kind != ValueKind::kInt) continue;
    // CLI11 alone clamps the first to INT64_MAX and reads the others as hex and octal.
    for (const char* text : {"99999999999999999999", "0x10", "1e3", "12abc"}) {
      INFO(row.flag << " " << text);
      std::vector<std::string> args = {text, std::string(row.flag), "g", "--gpu", "m", "--model"};
      CHECK_THROWS_AS(from_flags<S>(args), CLI::ParseError);
    }
    // A leading zero is decimal, as in vLLM (Python's int()).
    const std::vector<std::string> args = {"010", std::string(row.flag), "g", "--gpu",
                                           "m", "--model"};
    CLI::App app;
    const vramsim::run::GivenValues given = S::parse(app, args);
    CHECK(std::get<std::int64_t>(given.at(std::string(row.path)).value) == 10);
  }
}

}  // namespace

TEST_CASE("every serving size and count has a bound in its help, refused beyond it at its origin",
          "[run][options][bounds]") {
  CHECK(check_bounds<ServeSchema>() > 40);
  const auto seed = vramsim::run::find_serve_option("seed");
  REQUIRE(seed != nullptr);
  CHECK(seed->max_int == vramsim::run::kNoIntBound);  // any int64 seed, as written
}

TEST_CASE("every training size and count has a bound in its help, refused beyond it at its origin",
          "[run][options][bounds]") {
  CHECK(check_bounds<TrainSchema>() > 10);
}

TEST_CASE("an integer flag beyond int64, in hex or with trailing text is refused, not clamped",
          "[run][options][bounds]") {
  check_integer_flag_texts<ServeSchema>();
  check_integer_flag_texts<TrainSchema>();
}

TEST_CASE("a scenario's relative model path is taken from its folder, a model id kept as written",
          "[run][options]") {
  const ScratchDir dir("model-path");
  std::ofstream(dir.path() / "c.json") << "{}";
  const auto model_of = [&](const std::string& id) {
    return vramsim::run::resolve_serve_options(
               vramsim::run::load_serve_scenario_text(
                   "[model]\nid = \"" + id + "\"\n[hardware]\ngpu = \"g\"\n", "s.toml",
                   dir.path()))
        .model;
  };
  CHECK(model_of("c.json") == (dir.path() / "c.json").string());
  CHECK(model_of("sub/other.json") == (dir.path() / "sub/other.json").string());
  CHECK(model_of("./local") == (dir.path() / "./local").string());
  CHECK(model_of("meta-llama/Llama-3.1-8B") == "meta-llama/Llama-3.1-8B");
  CHECK(model_of("/abs/config.json") == "/abs/config.json");
  const vramsim::run::TrainOptions t = vramsim::run::resolve_train_options(
      vramsim::run::load_train_scenario_text(
          "[model]\nid = \"c.json\"\n[hardware]\ngpu = \"g\"\n", "t.toml", dir.path()));
  CHECK(t.model == (dir.path() / "c.json").string());
}
