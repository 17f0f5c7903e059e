// `vramsim train [SCENARIO]`: one training step under a parallel plan, simulated: memory
// timeline per device (peak allocated and reserved), step time split into compute, exposed
// communication and bubble; or, with --find-max-micro-batch, the largest micro-batch that fits
// for each checkpointing policy. Flags override the scenario file.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string_view>

#include "sim/cli/commands.hpp"
#include "sim/cli/train_config.hpp"
#include "sim/cli/train_report.hpp"
#include "sim/io/results_file.hpp"
#include "sim/run/train_results.hpp"
#include "sim/run/train_run.hpp"
#include "sim/run/train_search_results.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::cli {

namespace {

int run_train(TrainFlags& f) {
  const TrainInputs in = resolve_train(f);
  const training::TrainingSetup& setup = in.setup;
  if (f.find_max) {
    // Opened first: an --out in a missing directory fails before any simulation.
    std::optional<io::ResultsWriter> writer;
    if (!f.out.empty()) writer.emplace(f.out);
    std::vector<run::MaxMicroBatch> rows;
    std::vector<run::TrainProbe> probes;
    for (std::string_view policy : run::kSearchPolicies) {
      rows.push_back(
          run::find_max_micro_batch(setup, *training::checkpointing_from_string(policy), &probes));
    }
    if (writer) {
      run::write_max_micro_batch_results(*writer, setup, rows, probes, command_line(), in.options);
    }
    if (f.format == OutputFormat::kJson) {
      nlohmann::ordered_json j = run::max_micro_batch_json(setup, rows);
      j["num_runs"] = probes.size();
      std::puts(j.dump(2).c_str());
    } else {
      std::fputs(max_micro_batch_table(setup, rows).c_str(), stdout);
      if (writer) fmt::print("results written to {}\n", f.out);
    }
    return kExitOk;
  }
  const training::TrainingResult r = [&] {
    try {
      return training::simulate_training(setup,
                                         {.num_steps = 2, .record_timeline = !f.out.empty()});
    } catch (const ConfigError& e) {  // at the scenario's line, or on the flag
      throw ConfigError(named_by_flags(run::located(in.options, e.report())));
    }
  }();
  if (!f.out.empty()) run::write_train_results(setup, r, f.out, command_line(), in.options);
  // What would make it fit: each fix is one more simulated step.
  const std::vector<run::TrainFix> fixes = run::train_fixes(setup, r);
  if (f.format == OutputFormat::kJson) {
    nlohmann::ordered_json j = run::train_json(setup, r);
    j["fixes"] = run::train_fixes_json(fixes);
    std::puts(j.dump(2).c_str());
  } else {
    std::fputs(train_table(setup, r).c_str(), stdout);
    std::fputs(train_fixes_table(fixes).c_str(), stdout);
    if (!f.out.empty()) fmt::print("results written to {}\n", f.out);
  }
  return kExitOk;
}

}  // namespace

RunFn register_train(CLI::App& app) {
  auto f = std::make_shared<TrainFlags>();
  CLI::App* cmd = app.add_subcommand(
      "train", "A training step under a parallel plan: memory timeline, peak, step time");
  add_train_flags(*cmd, *f);
  cmd->add_flag("--find-max-micro-batch", f->find_max,
                "Report the largest micro-batch that fits for each checkpointing policy");
  return [cmd, f]() {
    if (!cmd->parsed()) return -1;
    return run_train(*f);
  };
}

}  // namespace vramsim::cli
