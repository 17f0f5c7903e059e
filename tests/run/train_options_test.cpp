// The training option schema (sim/run/train_options): problems at their origins, relative paths.
// The round trip of every row (TOML, flag, sweep axis) is tests/run/option_schema_test.cpp.
#include "sim/run/train_options.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "sim/cli/train_config.hpp"
#include "tests/catch.hpp"

using vramsim::ConfigError;
using vramsim::run::TrainOptions;

namespace {

/// `args` parsed by the CLI11 options of `train` (no scenario).
TrainOptions from_flags(std::vector<std::string> args) {
  CLI::App app;
  vramsim::cli::TrainFlags f;
  vramsim::cli::add_train_flags(app, f);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
  return vramsim::run::resolve_train_options({}, f.given_values());
}

}  // namespace

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

TEST_CASE("the loss comes from --loss or memory.loss, and a bad one names the flag",
          "[run][options][loss]") {
  using vramsim::training::Loss;
  using vramsim::training::LossKind;
  CHECK(from_flags({"--model", "m", "--gpu", "g"}).loss == Loss{LossKind::kVocabParallel, 1});
  CHECK(from_flags({"--model", "m", "--gpu", "g", "--loss", "chunked:8"}).loss ==
        Loss{LossKind::kChunked, 8});
  const TrainOptions t = vramsim::run::resolve_train_options(vramsim::run::load_train_scenario_text(
      "[model]\nid = \"m\"\n[hardware]\ngpu = \"g\"\n[memory]\nloss = \"fused\"\n", "s.toml"));
  CHECK(t.loss == Loss{LossKind::kFused, 1});
  for (const std::string bad : {"chunked:0", "chunked:many", "softmax"}) {
    CAPTURE(bad);
    try {
      (void)from_flags({"--model", "m", "--gpu", "g", "--loss", bad});
      FAIL("no error");
    } catch (const ConfigError& e) {
      const vramsim::ValidationReport named = vramsim::cli::named_by_flags(e.report());
      REQUIRE(named.problems().size() == 1);
      CHECK(named.problems().front().field == "--loss");
      const std::string& msg = named.problems().front().message;
      CHECK(msg.find("'" + bad + "'") != std::string::npos);
      CHECK(msg.find(bad == "softmax" ? "valid: vocab-parallel, full, chunked:N, fused"
                                      : "chunked:N needs a whole number of chunks") !=
            std::string::npos);
    }
  }
}

TEST_CASE("expert loads parse as comma-separated numbers, a bad item named by position",
          "[run][options][moe]") {
  std::vector<double> loads;
  CHECK_FALSE(vramsim::run::parse_expert_loads("1200, 800.5,0", loads));
  CHECK(loads == std::vector<double>{1200.0, 800.5, 0.0});
  CHECK_FALSE(vramsim::run::parse_expert_loads("", loads));
  CHECK(loads.empty());
  const auto bad = vramsim::run::parse_expert_loads("1,,3", loads);
  REQUIRE(bad);
  CHECK(bad->find("item 2 ('')") != std::string::npos);
  CHECK(vramsim::run::parse_expert_loads("1,-2", loads));
  CHECK(vramsim::run::parse_expert_loads("1,2x", loads));
  CHECK(vramsim::run::parse_expert_loads("nan", loads));
  const TrainOptions o = from_flags(
      {"--model", "m", "--gpu", "g", "--expert-loads", "3,1,1,1"});
  CHECK(o.expert_loads == "3,1,1,1");
  try {
    (void)from_flags({"--model", "m", "--gpu", "g", "--expert-loads", "3,a"});
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.report().problems().front().field == "parallel.expert_loads");
  }
}
