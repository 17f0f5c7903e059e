// `vramsim capacity serve|train`: the largest rate under SLOs; the largest batch that fits.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>

#include "sim/cli/capacity_serve.hpp"
#include "sim/cli/capacity_train.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/train_config.hpp"
#include "sim/run/capacity_results.hpp"
#include "sim/run/train_run.hpp"
#include "sim/io/results_file.hpp"

namespace vramsim::cli {

RunFn register_capacity(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "capacity", "The largest arrival rate (or client count) under SLOs (serve); the largest "
                  "batch that fits (train)");
  cmd->require_subcommand(1);
  auto sf = std::make_shared<CapacityServeFlags>();
  CLI::App* serve = cmd->add_subcommand(
      "serve", "Bisect the arrival rate (the workload's shape kept) for the largest that meets "
               "the p99 SLOs");
  add_serve_flags(*serve, sf->serve);
  const std::string g = "Capacity";
  serve->add_option("--slo-ttft-p99", sf->slo_ttft_p99, "p99 time to first token, e.g. 2s")
      ->group(g);
  serve->add_option("--slo-tpot-p99", sf->slo_tpot_p99, "p99 time per output token, e.g. 100ms")
      ->group(g);
  serve->add_option("--slo-e2e-p99", sf->slo_e2e_p99, "p99 end-to-end latency")->group(g);
  serve->add_option("--precision", sf->precision, "Stop when (high - low) / high <= this")
      ->group(g);
  serve->add_option("--max-runs", sf->max_runs, "Simulations at most")->group(g);
  serve->add_flag("--search-max-num-seqs", sf->search_max_num_seqs,
                  "Then find the max_num_seqs (8..2048) that maximises goodput at that rate")
      ->group(g);
  serve->add_flag("--max-concurrency-search", sf->search_max_concurrency,
                  "Search the client count instead of the rate: the largest --max-concurrency "
                  "N (closed-loop clients, as vllm bench serve; with --rate, a cap on that "
                  "stream) meeting the SLOs, by doubling from 1 then integer bisection")
      ->group(g);
  serve->add_option("--max-concurrency-cap", sf->max_concurrency_cap,
                    "--max-concurrency-search: the most clients tried")
      ->group(g);
  auto tf = std::make_shared<TrainFlags>();
  CLI::App* train = cmd->add_subcommand(
      "train", "For the plan, under each checkpointing policy: the largest micro-batch and the "
               "longest sequence that fit");
  add_train_flags(*train, *tf);
  return [serve, sf, train, tf]() {
    if (train->parsed()) {
      const TrainInputs in = resolve_train(*tf);
      const training::TrainingSetup& setup = in.setup;
      // Opened first: an --out in a missing directory fails before any simulation.
      std::optional<io::ResultsWriter> writer;
      if (!tf->out.empty()) writer.emplace(tf->out);
      std::vector<run::TrainProbe> probes;
      const auto rows = run::capacity_train(setup, &probes);
      if (writer) write_capacity_train(*writer, setup, rows, probes, command_line(), in.options);
      if (tf->format == OutputFormat::kJson) {
        std::puts(run::capacity_train_json(setup, rows).dump(2).c_str());
      } else {
        std::fputs(capacity_train_table(setup, rows).c_str(), stdout);
        if (writer) fmt::print("results written to {}\n", tf->out);
      }
      return kExitOk;
    }
    if (!serve->parsed()) return -1;
    std::optional<io::ResultsWriter> writer;
    if (!sf->serve.out.empty()) writer.emplace(sf->serve.out);
    const CapacityServeAnswer a = capacity_serve(*sf);
    if (writer) write_capacity_serve(*writer, a, command_line());
    if (sf->serve.format == OutputFormat::kJson) {
      std::puts(run::capacity_serve_json(a).dump(2).c_str());
    } else {
      std::fputs(capacity_serve_table(a).c_str(), stdout);
      if (writer) fmt::print("results written to {}\n", sf->serve.out);
    }
    return kExitOk;
  };
}

}  // namespace vramsim::cli
