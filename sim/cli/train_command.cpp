// `vramsim train [SCENARIO]`: one training step under a parallel plan, simulated: memory
// timeline per device (peak allocated and reserved), step time split into compute, exposed
// communication and bubble; or, with --find-max-micro-batch, the largest micro-batch that fits
// for each checkpointing policy. Flags override the scenario file.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "sim/cli/commands.hpp"
#include "sim/cli/serve_flags.hpp"
#include "sim/cli/train_config.hpp"
#include "sim/cli/train_report.hpp"
#include "sim/core/error.hpp"
#include "sim/io/results_file.hpp"
#include "sim/io/text_output.hpp"
#include "sim/run/train_results.hpp"
#include "sim/run/train_run.hpp"
#include "sim/run/train_search_results.hpp"
#include "sim/run/train_timeline.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::cli {

namespace {

int run_train(TrainFlags& f) {
  const TrainInputs in = resolve_train(f);
  const training::TrainingSetup& setup = in.setup;
  if (f.find_max) {
    for (const auto& [flag, value] : {std::pair{"--timeline-out", &f.timeline_out},
                                      std::pair{"--memory-snapshot-out", &f.memory_snapshot_out}}) {
      if (!value->empty()) {
        throw ConfigError(flag, "applies to one simulated plan, not to --find-max-micro-batch "
                                "(its probes are many plans): drop one of the two");
      }
    }
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
  // Opened first: a destination that cannot be written fails before the simulation.
  std::optional<io::TextOutput> timeline, snapshot;
  if (!f.timeline_out.empty()) timeline.emplace(f.timeline_out, "--timeline-out", "timeline file");
  if (!f.memory_snapshot_out.empty()) {
    snapshot.emplace(f.memory_snapshot_out, "--memory-snapshot-out", "memory snapshot file");
  }
  const training::TrainingResult r = [&] {
    try {
      return training::simulate_training(
          setup, {.num_steps = 2,
                  .record_timeline = !f.out.empty() || timeline.has_value(),
                  .record_allocations = snapshot.has_value()});
    } catch (const ConfigError& e) {  // at the scenario's line, or on the flag
      throw ConfigError(named_by_flags(run::located(in.options, e.report())));
    }
  }();
  if (!f.out.empty()) run::write_train_results(setup, r, f.out, command_line(), in.options);
  if (timeline) {
    run::write_train_chrome_trace(setup, r, timeline->stream());
    timeline->finish();
  }
  if (snapshot) {
    run::write_train_memory_snapshot(r, snapshot->stream());
    snapshot->finish();
  }
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
    if (timeline) fmt::print("timeline written to {} (Chrome trace JSON: ui.perfetto.dev)\n",
                             f.timeline_out);
    if (snapshot) {
      fmt::print("memory snapshot written to {} (PyTorch's format: pytorch.org/memory_viz)\n",
                 f.memory_snapshot_out);
    }
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
  cmd->add_option("--timeline-out", f->timeline_out,
                  "Write the op timeline and memory counters as Chrome trace JSON (opens in "
                  "ui.perfetto.dev and chrome://tracing)")
      ->check(non_empty_check());
  cmd->add_option("--memory-snapshot-out", f->memory_snapshot_out,
                  "Write the simulated allocations as a PyTorch memory snapshot pickle (opens in "
                  "pytorch.org/memory_viz)")
      ->check(non_empty_check());
  return [cmd, f]() {
    if (!cmd->parsed()) return -1;
    return run_train(*f);
  };
}

}  // namespace vramsim::cli
