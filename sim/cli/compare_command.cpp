// `vramsim compare serve|train`: one GPU against N, with a verdict.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>

#include "sim/cli/commands.hpp"
#include "sim/cli/compare_serve.hpp"
#include "sim/cli/compare_train.hpp"
#include "sim/io/results_file.hpp"
#include "sim/run/compare_results.hpp"

namespace vramsim::cli {

RunFn register_compare(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "compare", "One GPU against N: does a second GPU help? (serve or train)");
  cmd->require_subcommand(1);
  auto sf = std::make_shared<CompareServeFlags>();
  CLI::App* serve = cmd->add_subcommand(
      "serve", "The same traffic on one GPU, TP=N, PP=N, N replicas and a bigger batch: each "
      "option's capacity under the SLOs, what binds it, and its cost");
  add_serve_flags(*serve, sf->serve);
  serve->add_option("--num-gpus", sf->num_gpus, "GPUs to compare one against (default 2)");
  serve->add_option("--gpu-price-per-hour", sf->price_per_gpu_hour,
                    "USD per GPU-hour (default: topologies/prices.toml): the cost per million "
                    "SLO-meeting output tokens at each option's capacity");
  serve->add_option("--precision", sf->precision,
                    "Each capacity search stops when (high - low) / high <= this (default 0.05); "
                    "options whose brackets overlap are within noise");
  serve->add_option("--max-runs", sf->max_runs, "Simulations per capacity search (default 24)");
  serve->add_flag("--compare-kv-tier", sf->kv_tier_option,
                  "With --kv-offloading-size: run the GPU options without the KV offload tier "
                  "and add '1 GPU + KV tier' (does the tier beat a second GPU?)");
  auto tf = std::make_shared<CompareTrainFlags>();
  CLI::App* train = cmd->add_subcommand(
      "train", "The same job on one GPU and on N: DDP, ZeRO-1/2, FSDP and TP");
  add_train_flags(*train, tf->train);
  train->add_option("--gpu-price-per-hour", tf->price_per_gpu_hour,
                    "USD per GPU-hour: adds the cost per million tokens");
  return [serve, sf, train, tf]() {
    if (train->parsed()) {
      // --num-gpus (a train flag) is the N that one GPU is compared against.
      tf->num_gpus =
          tf->train.given("--num-gpus") ? static_cast<int>(tf->train.integer("--num-gpus")) : 2;
      // The results file is opened first: a bad --out fails before the simulations run.
      std::optional<io::ResultsWriter> w;
      if (!tf->train.out.empty()) w.emplace(tf->train.out);
      const CompareTrainAnswer c = compare_train(*tf);
      if (w) run::write_compare_train(*w, c, command_line());
      if (tf->train.format == OutputFormat::kJson) {
        std::puts(run::compare_train_json(c).dump(2).c_str());
      } else {
        std::fputs(compare_train_table(c).c_str(), stdout);
      }
      return kExitOk;
    }
    if (!serve->parsed()) return -1;
    std::optional<io::ResultsWriter> w;
    if (!sf->serve.out.empty()) w.emplace(sf->serve.out);
    const CompareServeAnswer c = compare_serve(*sf);
    if (w) run::write_compare_serve(*w, c, command_line());
    if (sf->serve.format == OutputFormat::kJson) {
      std::puts(run::compare_serve_json(c).dump(2).c_str());
    } else {
      std::fputs(compare_serve_table(c).c_str(), stdout);
      if (!sf->serve.out.empty()) fmt::print("results written to {}\n", sf->serve.out);
    }
    return kExitOk;
  };
}

}  // namespace vramsim::cli
