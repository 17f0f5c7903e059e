// `vramsim serve [SCENARIO]`: replay a trace (or a synthetic workload) against replicas of a
// model on a GPU, with a scheduler, a paged KV cache and a router, and report latency,
// throughput and memory pressure.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "sim/cli/commands.hpp"
#include "sim/cli/serve_flags.hpp"
#include "sim/cli/serve_report.hpp"
#include "sim/core/error.hpp"
#include "sim/io/results_file.hpp"

namespace vramsim::cli {
namespace {

int run_serve(const ServeFlags& f) {
  const run::ServeOptions o = resolve_serve(f);
  ServeAnswer a = on_flags(o, [&] { return run::prepare_serve(o); });
  if (!a.feasible) {
    std::fprintf(stderr, "vramsim serve: infeasible: %s\n", a.budget.result.reason.c_str());
    std::fprintf(stderr, "  `vramsim budget` with the same flags suggests what would fit.\n");
    return kExitInfeasible;
  }
  std::unique_ptr<io::ResultsWriter> writer;
  std::unique_ptr<serving::ServingObserver> observer;
  if (!f.out.empty()) {
    writer = std::make_unique<io::ResultsWriter>(f.out);
    observer = run::make_results_observer(*writer);
  }
  on_flags(o, [&] { simulate_serve(a, observer.get()); });
  if (writer) {
    nlohmann::ordered_json inputs = serve_json(a)["inputs"];
    inputs["settings"] = a.config.settings;
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
