// `vramsim plan train [SCENARIO]`: the fastest training plans that fit, found by searching
// strategy x TP x PP x micro-batch x checkpointing x optimizer offload at one global batch. The
// search is the run layer's (sim/run/plan_train_run.hpp); this file parses the flags, draws the
// progress and prints.
//
// The base is a training scenario and/or the training flags (model, GPU, GPU count, global
// batch, sequence length, precision, optimizer, LoRA, ...). The settings the search varies are
// given as lists (--search-tp 1,2,4); their single-valued training flags (--tp) are refused,
// and a scenario's values for them are replaced by the search.
//
// Exit codes: 2 for bad input (before any plan runs); 0 otherwise, also when no plan fits
// (as `vramsim train` exits 0 with fits: false): the answer says so and which plan came closest.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/cli/progress_bar.hpp"
#include "sim/cli/plan_train_report.hpp"
#include "sim/cli/train_config.hpp"
#include "sim/core/error.hpp"
#include "sim/run/plan_train_results.hpp"
#include "sim/run/plan_train_run.hpp"

namespace vramsim::cli {

namespace {

struct PlanTrainFlags {
  TrainFlags train;
  std::vector<std::string> strategies, checkpointing, offload;
  std::vector<std::int64_t> tps, pps, micro_batches;
  std::int64_t top = 5;
  int jobs = 0;
  bool resume = false;
};

/// The searched settings: their training flag, and the list flag that replaces it.
struct Searched {
  std::string_view flag;
  std::string_view list_flag;
  std::string_view path;  // the request's field (plan.<name>)
};
constexpr Searched kSearched[] = {
    {"--strategy", "--search-strategy", "plan.strategies"},
    {"--tp", "--search-tp", "plan.tps"},
    {"--pp", "--search-pp", "plan.pps"},
    {"--micro-batch", "--search-micro-batch", "plan.micro_batches"},
    {"--checkpointing", "--search-checkpointing", "plan.checkpointing"},
    {"--offload-optimizer", "--search-offload-optimizer", "plan.offload"},
};

constexpr FlagForPath kPlanFlags[] = {
    {"plan.strategies", "--search-strategy", ""},
    {"plan.tps", "--search-tp", ""},
    {"plan.pps", "--search-pp", ""},
    {"plan.micro_batches", "--search-micro-batch", ""},
    {"plan.checkpointing", "--search-checkpointing", ""},
    {"plan.offload", "--search-offload-optimizer", ""},
    {"plan.top", "--top", ""},
    {"plan.jobs", "--jobs", ""},
    {"plan.resume", "--resume", ""},
    {"plan.out", "--out", ""},
};

ValidationReport named(const ValidationReport& report) {
  return named_by_flags(report, run::train_option_rows(), std::span<const FlagForPath>(kPlanFlags));
}

/// The scenario (if any) read and the flags merged over it; the plan is resolved by the search.
run::TrainOptions resolve_options(const TrainFlags& f) {
  try {
    run::TrainScenario sc;
    if (!f.scenario.empty()) sc = run::load_train_scenario(f.scenario);
    return run::resolve_train_options(sc, f.given_values());
  } catch (const ConfigError& e) {
    throw ConfigError(named(e.report()));
  }
}

int run_plan_train(const PlanTrainFlags& f) {
  ValidationReport refused;
  for (const Searched& s : kSearched) {
    if (f.train.given(s.flag)) {
      refused.error(std::string(s.flag),
                    fmt::format("plan train searches this setting; give the values to try with "
                                "{} (a comma-separated list)",
                                s.list_flag));
    }
  }
  throw_if_errors(refused);
  run::PlanTrainRequest q;
  q.options = resolve_options(f.train);
  q.strategies = f.strategies;
  q.tps = f.tps;
  q.pps = f.pps;
  q.micro_batches = f.micro_batches;
  q.checkpointing = f.checkpointing;
  q.offload = f.offload;
  q.top = f.top;
  q.jobs = f.jobs;
  q.out = f.train.out;
  q.resume = f.resume;
  q.command_line = command_line();
  ProgressBar progress("plans");
  run::PlanTrainAnswer a;
  try {
    a = run::plan_train(
        q, {.progress = [&progress](std::size_t done,
                                    std::size_t total) { progress.update(done, total); },
            .warning = [](const std::string& message) {
              std::fprintf(stderr, "vramsim plan train: --resume: %s\n", message.c_str());
            }});
  } catch (const ConfigError& e) {
    throw ConfigError(named(e.report()));
  }
  if (!a.root) return kExitOk;
  if (f.train.format == OutputFormat::kJson) {
    std::puts(run::plan_train_json(a).dump(2).c_str());
  } else {
    std::fputs(plan_train_table(a).c_str(), stdout);
    if (!f.train.out.empty()) fmt::print("results written to {}\n", f.train.out);
  }
  std::fflush(stdout);
  return kExitOk;
}

CLI::Option* add_list(CLI::App& cmd, const std::string& flag, auto& values,
                      const std::string& help) {
  return cmd.add_option(flag, values, help)
      ->delimiter(',')
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group("Search");
}

}  // namespace

RunFn register_plan(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "plan", "Search deployments: the fastest training plan that fits (train)");
  cmd->require_subcommand(1);
  auto f = std::make_shared<PlanTrainFlags>();
  CLI::App* train = cmd->add_subcommand(
      "train", "Search strategy x TP x PP x micro-batch x checkpointing x optimizer offload at "
               "one global batch: the fastest plans that fit and the Pareto front of step time "
               "against memory headroom");
  add_train_flags(*train, f->train);
  add_list(*train, "--search-strategy", f->strategies,
           "Strategies to try (default ddp,zero1,zero2,zero3,fsdp-full,fsdp-grad-op,hsdp)");
  add_list(*train, "--search-tp", f->tps,
           "TP degrees to try (default every divisor of --num-gpus up to the GPUs per node)");
  add_list(*train, "--search-pp", f->pps, "PP degrees to try (default every divisor of --num-gpus)");
  add_list(*train, "--search-micro-batch", f->micro_batches,
           "Micro-batches to try (default 1,2,4,... up to min(64, --global-batch))");
  add_list(*train, "--search-checkpointing", f->checkpointing,
           "Checkpointing policies to try (default none,selective,every:2,full)");
  add_list(*train, "--search-offload-optimizer", f->offload,
           "Optimizer offload to try: no, yes (default no,yes)");
  train->add_option("--top", f->top, "How many of the fastest plans that fit to report (5)")
      ->group("Search");
  train->add_option("-j,--jobs", f->jobs, "Plans simulated at once (default: every core)")
      ->group("Search");
  train->add_flag("--resume", f->resume,
                  "Reuse the plans an interrupted run of the same search and --out journaled")
      ->group("Search");
  return [train, f]() {
    if (!train->parsed()) return -1;
    return run_plan_train(*f);
  };
}

}  // namespace vramsim::cli
