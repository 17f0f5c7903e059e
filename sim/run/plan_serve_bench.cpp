#include "sim/run/plan_serve_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "sim/run/plan_serve_run.hpp"

namespace vramsim::run {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

PlanServeBenchResult run_plan_serve_bench(int jobs, const std::filesystem::path& trace,
                                          std::int64_t num_requests, bool compare_no_early_stop,
                                          bool capacity) {
  PlanServeRequest q;
  q.options = resolve_serve_options(load_serve_scenario_text(
      fmt::format("[model]\nid = \"meta-llama/Llama-3.1-8B-Instruct\"\n[hardware]\n"
                  "gpu = \"h100-sxm\"\n[workload]\ntrace = \"{}\"\nmax_requests = {}\n",
                  trace.string(), num_requests),
      "bench-plan-serve.toml"));
  q.gpus = {"h100-sxm", "a100-sxm-80g", "l40s", "l4", "h200"};
  q.tps = {1, 2, 4, 8};
  q.replicas = {1, 2, 3, 4, 8};
  q.quantizations = {"none", "fp8"};
  q.max_num_batched_tokens = {1024, 2048, 4096, 8192, 16384};
  q.jobs = std::max(1, jobs);
  q.capacity = false;
  PlanServeBenchResult out;
  out.jobs = q.jobs;
  out.num_requests = num_requests;
  auto t0 = std::chrono::steady_clock::now();
  PlanServeAnswer a = plan_serve(q);
  out.search_wall_s = seconds_since(t0);
  out.num_configs = a.counts.num_configs;
  out.num_simulated = a.counts.num_simulated;
  out.num_meet = a.counts.num_meet;
  out.num_stopped_early = a.counts.num_stopped_early;
  if (!a.cheapest.empty()) {
    out.cheapest_usd_per_hour = a.rows[a.cheapest.front()].usd_per_hour().value_or(0.0);
  }
  if (compare_no_early_stop) {
    PlanServeRequest full = q;
    full.early_stop = false;
    t0 = std::chrono::steady_clock::now();
    (void)plan_serve(full);
    out.search_no_early_stop_wall_s = seconds_since(t0);
  }
  if (capacity) {
    PlanServeRequest with = q;
    with.capacity = true;
    t0 = std::chrono::steady_clock::now();
    const PlanServeAnswer b = plan_serve(with);
    out.capacity_wall_s = std::max(0.0, seconds_since(t0) - out.search_wall_s);
    out.num_reported = static_cast<std::int64_t>(b.details.size());
  }
  return out;
}

}  // namespace vramsim::run
