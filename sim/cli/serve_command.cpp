// `vramsim serve [SCENARIO]`: replay a trace (or a synthetic workload) against replicas of a
// model on a GPU, with a scheduler, a paged KV cache and a router, and report latency,
// throughput and memory pressure.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "sim/cli/commands.hpp"
#include "sim/cli/serve_config.hpp"
#include "sim/cli/serve_report.hpp"
#include "sim/comm/collective.hpp"
#include "sim/core/check.hpp"
#include "sim/io/results_file.hpp"
#include "sim/serving/calibrated_time_model.hpp"
#include "sim/serving/roofline_time_model.hpp"
#include "sim/serving/routers/builtin_routers.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"

namespace vramsim::cli {
namespace {

// Fills the replica's KV cache and limits from what the budget resolved.
void configure_replica(ServeConfig& c, const BudgetAnswer& b) {
  serving::ReplicaConfig& r = c.setup.replica;
  const memory::EngineConfig& e = b.engine;
  r.limits.max_num_seqs = e.max_num_seqs;
  r.limits.max_num_batched_tokens = e.max_num_batched_tokens;
  if (!r.limits.enable_chunked_prefill) {
    // vLLM: without chunking one step must hold a whole prompt.
    r.limits.max_num_batched_tokens = std::max(e.max_num_batched_tokens, e.max_model_len);
  }
  Bytes per_token;
  for (const memory::DeviceBudget& d : b.result.devices) per_token = max(per_token, d.kv_bytes_per_token);
  r.kv.num_blocks = b.result.num_gpu_blocks;
  r.kv.block_size = e.block_size;
  r.kv.enable_prefix_caching = c.enable_prefix_caching;
  r.kv.bytes_per_block = per_token * e.block_size;
  r.kv.num_host_blocks =
      r.kv.bytes_per_block > Bytes(0) ? c.swap_space / r.kv.bytes_per_block : 0;
  r.pipeline_depth = e.pp;
  r.host_link = comm::host_link(b.device).bandwidth;
  c.setup.max_model_len = e.max_model_len;
}

int run_serve(const ServeFlags& f) {
  ServeAnswer a = prepare_serve(f);
  if (!a.feasible) {
    std::fprintf(stderr, "vramsim serve: infeasible: %s\n", a.budget.result.reason.c_str());
    std::fprintf(stderr, "  `vramsim budget` with the same flags suggests what would fit.\n");
    return kExitInfeasible;
  }
  std::unique_ptr<io::ResultsWriter> writer;
  std::unique_ptr<serving::ServingObserver> observer;
  if (!f.out.empty()) {
    writer = std::make_unique<io::ResultsWriter>(f.out);
    observer = make_results_observer(*writer);
  }
  simulate_serve(a, observer.get());
  if (writer) {
    nlohmann::ordered_json inputs = serve_json(a)["inputs"];
    writer->write_run_metadata({.vramsim_version = "",
                                .command = command_line(),
                                .scenario_text = a.config.scenario_text,
                                .seed = static_cast<std::int64_t>(a.config.setup.seed),
                                .inputs = inputs.dump(),
                                .calibration_source = a.cost_model,
                                .created_by = "vramsim serve"});
    write_budget_table(*writer, a.budget);
    write_serve_summary(*writer, a);
    observer.reset();
    writer->finish();
  }
  if (f.format == OutputFormat::kJson) {
    std::puts(serve_json(a).dump(2).c_str());
  } else {
    std::fputs(serve_table(a).c_str(), stdout);
    if (!f.out.empty()) fmt::print("results written to {}\n", f.out);
  }
  return kExitOk;
}

}  // namespace

ServeAnswer prepare_serve(const ServeFlags& f) {
  Origins origins;
  return prepare_serve(resolve_serve(f, origins), origins);
}

ServeAnswer prepare_serve(ServeConfig config, const Origins& origins) {
  ServeAnswer a;
  a.config = std::move(config);
  BudgetRequest req = a.config.engine;
  req.suggest = false;
  a.budget = answer_budget_located(req, origins);
  a.feasible = a.budget.result.fits;
  if (!a.feasible) return a;
  configure_replica(a.config, a.budget);
  serving::SchedulerRegistry schedulers;
  serving::register_builtin_schedulers(schedulers);
  serving::RouterRegistry routers;
  serving::register_builtin_routers(routers);
  ValidationReport report;
  schedulers.find(a.config.setup.scheduler, "--scheduler")
      .validate(a.config.setup.replica.limits, report);
  routers.find(a.config.setup.router, "--router");
  ValidationReport named;
  for (const Problem& p : report.problems()) {
    std::string flag = "--" + p.field;  // "max_num_seqs" -> "--max-num-seqs"
    std::replace(flag.begin(), flag.end(), '_', '-');
    named.error(flag, p.message, p.where);
  }
  origins.relocate(named);
  throw_if_errors(named);
  return a;
}

void simulate_serve(ServeAnswer& a, serving::ServingObserver* observer) {
  VRAMSIM_CHECK(a.feasible, "simulate_serve on an infeasible configuration");
  serving::SchedulerRegistry schedulers;
  serving::register_builtin_schedulers(schedulers);
  serving::RouterRegistry routers;
  serving::register_builtin_routers(routers);
  const memory::EngineConfig& e = a.budget.engine;
  const model::Parallelism par{e.tp, e.pp};
  std::unique_ptr<serving::ExecutionTimeModel> model =
      a.budget.calibration
          ? serving::make_calibrated_time_model(a.budget.model, a.budget.device, par, e.weights,
                                                e.kv_cache_dtype, *a.budget.calibration)
          : serving::make_roofline_time_model(a.budget.model, a.budget.device, par, e.weights,
                                              e.kv_cache_dtype);
  a.cost_model = model->describe();
  std::unique_ptr<serving::TraceSource> trace = serving::open_trace(a.config.trace);
  a.trace_description = trace->describe();
  a.result = serving::simulate_serving(*trace, a.config.setup, *model, schedulers, routers,
                                       observer);
}

RunFn register_serve(CLI::App& app) {
  auto f = std::make_shared<ServeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "Replay a request trace against model replicas: scheduler, paged KV cache, "
               "router; latency, throughput and memory pressure");
  add_serve_flags(*cmd, *f);
  return [cmd, f]() {
    if (!cmd->parsed()) return -1;
    return run_serve(*f);
  };
}

}  // namespace vramsim::cli
