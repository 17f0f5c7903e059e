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
#include "sim/cli/plan_serve_report.hpp"
#include "sim/cli/plan_train_report.hpp"
#include "sim/cli/serve_flags.hpp"
#include "sim/cli/train_config.hpp"
#include "sim/core/error.hpp"
#include "sim/run/plan_serve_results.hpp"
#include "sim/run/plan_serve_run.hpp"
#include "sim/run/plan_train_results.hpp"
#include "sim/run/plan_train_run.hpp"

namespace vramsim::cli {

namespace {

struct PlanTrainFlags {
  TrainFlags train;
  std::vector<std::string> strategies, checkpointing, offload;
  std::vector<std::int64_t> tps, pps, micro_batches, cps, eps;
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
    {"--cp", "--search-cp", "plan.cps"},
    {"--ep", "--search-ep", "plan.eps"},
};

constexpr FlagForPath kPlanFlags[] = {
    {"plan.strategies", "--search-strategy", ""},
    {"plan.tps", "--search-tp", ""},
    {"plan.pps", "--search-pp", ""},
    {"plan.micro_batches", "--search-micro-batch", ""},
    {"plan.checkpointing", "--search-checkpointing", ""},
    {"plan.offload", "--search-offload-optimizer", ""},
    {"plan.cps", "--search-cp", ""},
    {"plan.eps", "--search-ep", ""},
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
  q.cps = f.cps;
  q.eps = f.eps;
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

// plan serve --------------------------------------------------------------------------------

struct PlanServeFlags {
  ServeFlags serve;
  std::vector<std::string> gpus, quantizations, kv_cache_dtypes;
  std::vector<std::int64_t> tps, pps, replicas, max_num_seqs, max_num_batched_tokens;
  std::vector<std::string> kv_offloading_sizes, kv_offloading_disk_sizes;
  std::int64_t max_gpus = 0;
  std::string max_host_memory;
  std::string gpu_prices;
  std::vector<std::string> gpu_price;
  std::int64_t top = 5;
  int jobs = 0;
  bool resume = false;
  bool no_early_stop = false;
  bool no_capacity = false;
  bool search_disaggregated = false;
  bool search_mixed_pools = false;
  double precision = 0.05;
  int max_runs = 16;
};

/// The searched settings of plan serve: their serve flag, and the list flag that replaces it.
/// The serve flag alone is a one-value list; both together are refused.
constexpr Searched kServeSearched[] = {
    {"--gpu", "--search-gpu", "plan.gpus"},
    {"--tp", "--search-tp", "plan.tps"},
    {"--pp", "--search-pp", "plan.pps"},
    {"--replicas", "--search-replicas", "plan.replicas"},
    {"--quantization", "--search-quantization", "plan.quantizations"},
    {"--kv-cache-dtype", "--search-kv-cache-dtype", "plan.kv_cache_dtypes"},
    {"--max-num-seqs", "--search-max-num-seqs", "plan.max_num_seqs"},
    {"--max-num-batched-tokens", "--search-max-num-batched-tokens",
     "plan.max_num_batched_tokens"},
    {"--kv-offloading-size", "--search-kv-offloading-size", "plan.kv_offloading_sizes"},
    {"--kv-offloading-disk-size", "--search-kv-offloading-disk-size",
     "plan.kv_offloading_disk_sizes"},
};

constexpr FlagForPath kPlanServeFlags[] = {
    {"plan.gpus", "--search-gpu", ""},
    {"plan.tps", "--search-tp", ""},
    {"plan.pps", "--search-pp", ""},
    {"plan.replicas", "--search-replicas", ""},
    {"plan.disaggregated", "--search-disaggregated", ""},
    {"plan.mixed_pools", "--search-mixed-pools", ""},
    {"plan.quantizations", "--search-quantization", ""},
    {"plan.kv_cache_dtypes", "--search-kv-cache-dtype", ""},
    {"plan.max_num_seqs", "--search-max-num-seqs", ""},
    {"plan.max_num_batched_tokens", "--search-max-num-batched-tokens", ""},
    {"plan.kv_offloading_sizes", "--search-kv-offloading-size", ""},
    {"plan.kv_offloading_disk_sizes", "--search-kv-offloading-disk-size", ""},
    {"plan.max_gpus", "--max-gpus", ""},
    {"plan.max_host_memory", "--max-host-memory", ""},
    {"plan.gpu_prices", "--gpu-prices", ""},
    {"plan.gpu_price", "--gpu-price", ""},
    {"plan.top", "--top", ""},
    {"plan.jobs", "--jobs", ""},
    {"plan.resume", "--resume", ""},
    {"plan.out", "--out", ""},
    {"plan.precision", "--precision", ""},
    {"plan.max_runs", "--max-runs", ""},
};

int run_plan_serve(const PlanServeFlags& f, const CLI::App& cmd) {
  ValidationReport refused;
  for (const Searched& s : kServeSearched) {
    if (f.serve.settings.given(s.flag) && cmd.count(std::string(s.list_flag)) > 0) {
      refused.error(std::string(s.flag),
                    fmt::format("given with {}: give the values to try once, in {} (a "
                                "comma-separated list)",
                                s.list_flag, s.list_flag));
    }
  }
  throw_if_errors(refused);
  run::GivenValues fallback;
  if (!f.gpus.empty()) {
    run::GivenValue g;
    g.value = f.gpus.front();
    g.origin.kind = run::OriginKind::kFlag;
    g.origin.flag = "--search-gpu";
    fallback["hardware.gpu"] = g;
  }
  run::PlanServeRequest q;
  q.options = resolve_serve(f.serve, fallback);
  q.gpus = f.gpus;
  q.tps = f.tps;
  q.pps = f.pps;
  q.replicas = f.replicas;
  q.search_disaggregated = f.search_disaggregated;
  q.search_mixed_pools = f.search_mixed_pools;
  q.quantizations = f.quantizations;
  q.kv_cache_dtypes = f.kv_cache_dtypes;
  q.max_num_seqs = f.max_num_seqs;
  q.max_num_batched_tokens = f.max_num_batched_tokens;
  q.kv_offloading_sizes = f.kv_offloading_sizes;
  q.kv_offloading_disk_sizes = f.kv_offloading_disk_sizes;
  if (cmd.count("--max-gpus") > 0) q.max_gpus = f.max_gpus;
  q.max_host_memory = f.max_host_memory;
  q.prices_file = f.gpu_prices;
  q.gpu_price = f.gpu_price;
  q.top = f.top;
  q.jobs = f.jobs;
  q.out = f.serve.out;
  q.resume = f.resume;
  q.early_stop = !f.no_early_stop;
  q.capacity = !f.no_capacity;
  q.precision = f.precision;
  q.max_runs = f.max_runs;
  q.command_line = command_line();
  ProgressBar progress("configurations");
  const run::PlanServeAnswer a = on_flags(
      q.options,
      [&] {
        return run::plan_serve(
            q, {.progress = [&progress](std::size_t done,
                                        std::size_t total) { progress.update(done, total); },
                .warning = [](const std::string& message) {
                  std::fprintf(stderr, "vramsim plan serve: --resume: %s\n", message.c_str());
                }});
      },
      std::span<const FlagForPath>(kPlanServeFlags));
  if (!a.root) return kExitOk;
  if (f.serve.format == OutputFormat::kJson) {
    std::puts(run::plan_serve_json(a).dump(2).c_str());
  } else {
    std::fputs(plan_serve_table(a).c_str(), stdout);
    if (!f.serve.out.empty()) fmt::print("results written to {}\n", f.serve.out);
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
      "plan", "Search deployments: the cheapest serving deployment meeting SLOs (serve), the "
              "fastest training plan that fits (train)");
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
  add_list(*train, "--search-cp", f->cps,
           "Context-parallel degrees to try (default 1), with --cp-comm's exchange");
  add_list(*train, "--search-ep", f->eps,
           "Expert-parallel degrees to try, MoE models (default 1)");
  train->add_option("--top", f->top, "How many of the fastest plans that fit to report (5)")
      ->group("Search");
  train->add_option("-j,--jobs", f->jobs, "Plans simulated at once (default: every core)")
      ->group("Search");
  train->add_flag("--resume", f->resume,
                  "Reuse the plans an interrupted run of the same search and --out journaled")
      ->group("Search");
  auto sf = std::make_shared<PlanServeFlags>();
  CLI::App* serve = cmd->add_subcommand(
      "serve", "Search GPU x TP x PP x replicas (or xPyD splits) x quantization x KV dtype x "
               "scheduler limits for a workload under p99 SLOs: the cheapest configurations "
               "that meet them, the Pareto front of cost per hour against p99 E2E, and for "
               "those their capacity and what binds");
  add_serve_flags(*serve, sf->serve);
  add_list(*serve, "--search-gpu", sf->gpus, "GPUs to try (default: --gpu)");
  add_list(*serve, "--search-tp", sf->tps, "TP degrees to try (default --tp, else 1,2,4,8)");
  add_list(*serve, "--search-pp", sf->pps, "PP degrees to try (default --pp, else 1)");
  add_list(*serve, "--search-replicas", sf->replicas,
           "Replica counts to try (default --replicas, else 1,2,4,8)");
  serve->add_flag("--search-disaggregated", sf->search_disaggregated,
                  "Also try every xPyD split of each replica count (2: 1P1D; 4: 1P3D, 2P2D, "
                  "3P1D), both pools on the row's GPU and TP, ranked with the aggregated ones")
      ->group("Search");
  serve->add_flag("--search-mixed-pools", sf->search_mixed_pools,
                  "With --search-disaggregated: also try each xPyD split with pools that differ, "
                  "every ordered pair of distinct (GPU, TP) pools from --search-gpu x "
                  "--search-tp for prefill and decode, PP 1: splits x G*T x (G*T-1) more "
                  "layouts (2 GPUs, TP 1,2, 2 replicas: 12)")
      ->group("Search");
  add_list(*serve, "--search-quantization", sf->quantizations,
           "Weight quantizations to try (default --quantization, else none)");
  add_list(*serve, "--search-kv-cache-dtype", sf->kv_cache_dtypes,
           "KV-cache dtypes to try (default --kv-cache-dtype, else auto)");
  add_list(*serve, "--search-max-num-seqs", sf->max_num_seqs,
           "max_num_seqs values to try (default --max-num-seqs, else vLLM's for the GPU)");
  add_list(*serve, "--search-max-num-batched-tokens", sf->max_num_batched_tokens,
           "max_num_batched_tokens values to try (default --max-num-batched-tokens, else "
           "vLLM's for the GPU)");
  add_list(*serve, "--search-kv-offloading-size", sf->kv_offloading_sizes,
           "Host-memory KV offload tier sizes per instance to try, crossed with every layout "
           "(0 = no tier, e.g. 0,100GiB,200GiB; default --kv-offloading-size, else none)");
  add_list(*serve, "--search-kv-offloading-disk-size", sf->kv_offloading_disk_sizes,
           "KV disk tier sizes to try behind each non-zero host tier (0 = none; needs "
           "--kv-offloading-disk-read-bandwidth and -write-bandwidth)");
  serve->add_option("--max-host-memory", sf->max_host_memory,
                    "Skip configurations whose KV tiers need more host memory, every instance "
                    "together (e.g. 2TiB; default: each node sheet's host_memory, per node, "
                    "where the sheet records it)")
      ->group("Search");
  serve->add_option("--max-gpus", sf->max_gpus,
                    "Skip configurations using more GPUs (TP x PP x replicas)")
      ->group("Search");
  serve->add_option("--gpu-prices", sf->gpu_prices,
                    "Price table, USD per GPU-hour (default topologies/prices.toml)")
      ->group("Search");
  serve->add_option("--gpu-price", sf->gpu_price,
                    "GPU=USD: a searched GPU's price per GPU-hour, over the price table "
                    "(comma-separated or repeated)")
      ->delimiter(',')
      ->group("Search");
  serve->add_option("--top", sf->top, "How many of the cheapest configurations to report (5)")
      ->group("Search");
  serve->add_option("-j,--jobs", sf->jobs, "Configurations simulated at once (default: every "
                                           "core)")
      ->group("Search");
  serve->add_flag("--resume", sf->resume,
                  "Reuse the configurations an interrupted run of the same search and --out "
                  "journaled")
      ->group("Search");
  serve->add_flag("--no-early-stop", sf->no_early_stop,
                  "Replay every configuration to the end (the verdicts are the same; the "
                  "metrics of misses then cover every request)")
      ->group("Search");
  serve->add_flag("--no-capacity", sf->no_capacity,
                  "Skip the capacity search and why of the reported configurations")
      ->group("Search");
  serve->add_option("--precision", sf->precision,
                    "Each capacity search's bracket, (high - low) / high (0.05)")
      ->group("Search");
  serve->add_option("--max-runs", sf->max_runs, "Simulations per capacity search (16)")
      ->group("Search");
  return [train, f, serve, sf]() {
    if (serve->parsed()) return run_plan_serve(*sf, *serve);
    if (!train->parsed()) return -1;
    return run_plan_train(*f);
  };
}

}  // namespace vramsim::cli
