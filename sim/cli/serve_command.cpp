// `vramsim serve [SCENARIO]`: replay a trace (or a synthetic workload) against replicas of a
// model on a GPU, with a scheduler, a paged KV cache and a router, and report latency,
// throughput and memory pressure.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>

#include "sim/cli/commands.hpp"
#include "sim/cli/progress_bar.hpp"
#include "sim/cli/serve_flags.hpp"
#include "sim/cli/serve_report.hpp"
#include "sim/core/error.hpp"
#include "sim/io/results_file.hpp"
#include "sim/io/text_output.hpp"
#include "sim/run/serve_timeline.hpp"

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
  std::optional<io::TextOutput> timeline_file;
  std::optional<run::ServeTimelineObserver> timeline;
  if (!f.timeline_out.empty()) {
    timeline_file.emplace(f.timeline_out, "--timeline-out", "timeline file");
    // Disaggregated: decode instances first, then the prefill instances (their pids follow).
    const auto& dis = a.config.setup.disaggregation;
    timeline.emplace(timeline_file->stream(),
                     a.config.setup.num_replicas + (dis ? dis->num_prefill : 0));
  }
  run::TeeObserver both({observer.get(), timeline ? &*timeline : nullptr});
  serving::ServingObserver* sink = timeline ? &both : observer.get();  // none: no sampling cost
  // The replay's progress on stderr once it takes a while (progress_bar.hpp).
  ProgressLine progress("serve");
  a.config.setup.progress = [&progress](std::int64_t finished, SimTime now) {
    progress.show(fmt::format("{} requests finished, {:.0f} s simulated", finished,
                              now.seconds()));
  };
  on_flags(o, [&] { simulate_serve(a, sink); });
  a.config.setup.progress = nullptr;
  progress.finish();
  if (timeline) {
    timeline->finish();
    timeline_file->finish();
  }
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
    if (timeline) {
      fmt::print("timeline written to {} (Chrome trace JSON: ui.perfetto.dev)\n",
                 f.timeline_out);
    }
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
  cmd->add_option("--timeline-out", f->timeline_out,
                  "Write the steps and requests as Chrome trace JSON (opens in ui.perfetto.dev "
                  "and chrome://tracing)")
      ->check(non_empty_check());
  return [cmd, f]() {
    if (!cmd->parsed()) return -1;
    return run_serve(*f);
  };
}

}  // namespace vramsim::cli
