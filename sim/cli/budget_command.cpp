// `vramsim budget [SCENARIO]`: vLLM's start-up memory accounting per device, explained.
// Flags override the scenario file; what neither sets takes vLLM's default.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

#include "sim/cli/budget_report.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/serve_flags.hpp"
#include "sim/core/error.hpp"

namespace vramsim::cli {

namespace {

struct BudgetFlags {
  ServeFlags engine;  // the engine rows of the serving schema and the scenario
  bool subtract_cuda_graph = false;
  bool without_flashinfer = false;
  bool without_gpu_p2p = false;
  bool no_suggestions = false;
  std::string out;
  OutputFormat format = OutputFormat::kTable;
};

int run_budget(BudgetFlags& f) {
  const run::ServeOptions o = resolve_serve(f.engine);
  BudgetRequest req = run::budget_request(o);
  // budget's node (serve reads hardware.topology for a disaggregated KV link only).
  req.topology = o.topology;
  req.subtract_cuda_graph = f.subtract_cuda_graph;
  req.flashinfer_installed = !f.without_flashinfer;
  req.gpu_p2p = !f.without_gpu_p2p;
  req.suggest = !f.no_suggestions;
  // budget's answer is the start-up accounting, not modelled for V0 releases: refuse them.
  req.v0_kv_from_v1_rules = false;
  const BudgetAnswer answer = on_flags(o, [&] { return run::answer_budget(o, req); });

  if (!f.out.empty()) {
    run::write_budget_results(answer, f.out, command_line(),
                              o.scenario_text, run::resolved_engine_inputs_json(o));
  }
  if (f.format == OutputFormat::kJson) {
    std::puts(budget_json(answer).dump(2).c_str());
  } else {
    std::fputs(budget_table(answer).c_str(), stdout);
    if (!f.out.empty()) fmt::print("results written to {}\n", f.out);
  }
  return kExitOk;
}

}  // namespace

RunFn register_budget(CLI::App& app) {
  auto f = std::make_shared<BudgetFlags>();
  CLI::App* cmd = app.add_subcommand(
      "budget", "Where each device's memory goes; KV blocks, tokens and max concurrency "
                "(vLLM's start-up accounting)");
  add_engine_flags(*cmd, f->engine);
  cmd->add_flag("--subtract-cuda-graph", f->subtract_cuda_graph,
                "Subtract the CUDA-graph estimate from the KV cache, as vLLM >= 0.21 does");
  cmd->add_flag("--without-flashinfer", f->without_flashinfer,
                "FlashInfer is not installed: vLLM before 0.11.1 then samples with the sort-based "
                "path in its profile run (later releases do either way)");
  cmd->add_flag("--without-gpu-p2p", f->without_gpu_p2p,
                "The TP ranks have no GPU peer-to-peer access (other nodes, or a failed P2P "
                "test): vLLM's custom all-reduce is off and NCCL stages through host memory, so "
                "no communicator buffers are charged to device memory");
  cmd->add_flag("--no-suggestions", f->no_suggestions,
                "When it does not fit, skip searching other TP degrees and GPUs");
  cmd->add_option("--out", f->out, "Write an HDF5 results file (see analysis/SCHEMA.md)")
      ->check(non_empty_check());
  add_format_option(*cmd, f->format);
  return [cmd, f]() {
    if (!cmd->parsed()) return -1;
    return run_budget(*f);
  };
}

}  // namespace vramsim::cli
