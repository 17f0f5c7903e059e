// `vramsim bench serve`: the serving simulator's own speed.
//
//   1. One million requests with the Azure conversation trace's fitted length and arrival shape
//      (traces/azure_conv_fit.hpp), rate scaled up to load the replicas, on 4 replicas of
//      Llama-3.1-8B on H100 SXM with vLLM's defaults (prefix caching off: the synthetic
//      workload shares no prefixes), replayed without an output file.
//   2. Each real trace found in ../shared/data/traces (or --traces-dir), replayed the same way
//      on one replica.
// Reported: wall time, requests/s and events/s of the simulation itself, and the peak number of
// requests in flight (memory is proportional to it, not to the trace's length).
#include "sim/cli/bench_serve.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "sim/cli/budget_report.hpp"
#include "sim/comm/collective.hpp"
#include "sim/serving/roofline_time_model.hpp"
#include "sim/serving/routers/builtin_routers.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"
#include "sim/serving/serving_simulation.hpp"
#include "sim/serving/traces/azure_conv_fit.hpp"

namespace vramsim::cli {
namespace {

struct BenchRun {
  std::string name;
  std::int64_t num_requests = 0;
  std::int64_t num_events = 0;
  std::int64_t num_steps = 0;
  std::int64_t peak_in_flight = 0;
  double simulated_s = 0.0;
  double wall_s = 0.0;
};

BenchRun replay(const std::string& name, const serving::TraceSpec& spec, int replicas,
                const BudgetAnswer& b) {
  serving::SchedulerRegistry schedulers;
  serving::register_builtin_schedulers(schedulers);
  serving::RouterRegistry routers;
  serving::register_builtin_routers(routers);
  const memory::EngineConfig& e = b.engine;
  const serving::RooflineTimeModel model(b.model, b.device, model::Parallelism{e.tp, e.pp},
                                         e.weights, e.kv_cache_dtype);
  serving::ServingSetup s;
  s.num_replicas = replicas;
  s.router = "least-outstanding-tokens";
  s.replica.limits.max_num_seqs = e.max_num_seqs;
  s.replica.limits.max_num_batched_tokens = e.max_num_batched_tokens;
  s.replica.kv.num_blocks = b.result.num_gpu_blocks;
  s.replica.kv.block_size = e.block_size;
  s.replica.kv.bytes_per_block = b.result.devices.front().kv_bytes_per_token * e.block_size;
  s.replica.host_link = comm::host_link(b.device).bandwidth;
  s.max_model_len = e.max_model_len;
  const auto start = std::chrono::steady_clock::now();
  auto trace = serving::open_trace(spec);
  const serving::ServingResult r =
      serving::simulate_serving(*trace, s, model, schedulers, routers, nullptr);
  const auto stop = std::chrono::steady_clock::now();
  BenchRun out;
  out.name = name;
  out.num_requests = r.metrics.num_arrived;
  out.num_events = r.num_events;
  out.num_steps = r.num_steps;
  out.peak_in_flight = r.peak_requests_in_flight;
  out.simulated_s = r.duration_s();
  out.wall_s = std::chrono::duration<double>(stop - start).count();
  return out;
}

}  // namespace

int run_serve_bench(const ServeBenchOptions& o) {
  BudgetRequest req;
  req.model_id = "meta-llama/Llama-3.1-8B";
  req.gpu_id = "h100-sxm";
  req.max_model_len = 32768;
  req.suggest = false;
  const BudgetAnswer budget = answer_budget(req, project_root());

  std::vector<BenchRun> runs;
  serving::TraceSpec main = serving::azure_conv_synthetic(o.num_requests, o.seed);
  main.synthetic.arrivals.rate_per_s = o.rate_per_s;
  runs.push_back(replay(fmt::format("azure-conv synthetic, {} requests, {} replicas",
                                    o.num_requests, o.replicas),
                        main, o.replicas, budget));
  std::error_code ec;
  if (!o.traces_dir.empty() && std::filesystem::is_directory(o.traces_dir, ec)) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(o.traces_dir)) {
      const auto ext = entry.path().extension();
      const auto stem = entry.path().filename().string();
      if ((ext == ".jsonl" || (ext == ".csv" && (stem.starts_with("Azure") ||
                                                  entry.path().parent_path().filename() ==
                                                      "vllm-bench"))) &&
          entry.is_regular_file()) {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
      serving::TraceSpec spec;
      spec.kind = serving::TraceKind::kFile;
      spec.path = path.string();
      runs.push_back(replay(path.filename().string(), spec, 1, budget));
    }
  }
  if (o.format == OutputFormat::kJson) {
    nlohmann::ordered_json j;
    j["benchmark"] = "serve";
    j["model"] = req.model_id;
    j["gpu"] = req.gpu_id;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const BenchRun& r : runs) {
      list.push_back({{"name", r.name},
                      {"num_requests", r.num_requests},
                      {"num_events", r.num_events},
                      {"num_steps", r.num_steps},
                      {"peak_requests_in_flight", r.peak_in_flight},
                      {"simulated_s", r.simulated_s},
                      {"wall_s", r.wall_s},
                      {"requests_per_s", static_cast<double>(r.num_requests) / r.wall_s},
                      {"events_per_s", static_cast<double>(r.num_events) / r.wall_s}});
    }
    j["runs"] = list;
    std::puts(j.dump(2).c_str());
  } else {
    fmt::print("serve benchmark: {} on {}, vLLM defaults, roofline step times\n", req.model_id,
               req.gpu_id);
    for (const BenchRun& r : runs) {
      fmt::print("  {}\n    {} requests, {} steps, {} events in {:.3f} s wall ({:.0f} simulated "
                 "s): {:.0f} requests/s, {:.2f} M events/s; peak {} in flight\n",
                 r.name, r.num_requests, r.num_steps, r.num_events, r.wall_s, r.simulated_s,
                 static_cast<double>(r.num_requests) / r.wall_s,
                 static_cast<double>(r.num_events) / r.wall_s / 1e6, r.peak_in_flight);
    }
  }
  return 0;
}

}  // namespace vramsim::cli
