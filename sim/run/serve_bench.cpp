#include "sim/run/serve_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "sim/run/budget_run.hpp"
#include "sim/run/host_stream_rate.hpp"
#include "sim/run/vllm_version.hpp"
#include "sim/serving/roofline_time_model.hpp"
#include "sim/serving/routers/builtin_routers.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"
#include "sim/serving/serving_simulation.hpp"
#include "sim/serving/traces/azure_conv_fit.hpp"

namespace vramsim::run {
namespace {

ServeBenchRun replay(const std::string& name, const serving::TraceSpec& spec, int replicas,
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
  s.replica.host_to_device = host_copy_rate(b, HostCopyDirection::kHostToDevice).rate;
  s.replica.device_to_host = host_copy_rate(b, HostCopyDirection::kDeviceToHost).rate;
  // vLLM's default of the newest validated release: async scheduling on (vllm_version.cpp).
  s.replica.async_scheduling = vllm_behaviour(kNewestValidatedVllm).async_scheduling;
  s.max_model_len = e.max_model_len;
  const auto start = std::chrono::steady_clock::now();
  auto trace = serving::open_trace(spec);
  const serving::ServingResult r =
      serving::simulate_serving(*trace, s, model, schedulers, routers, nullptr);
  const auto stop = std::chrono::steady_clock::now();
  ServeBenchRun out;
  out.name = name;
  out.num_requests = r.metrics.num_arrived;
  out.num_events = r.num_events;
  out.num_steps = r.num_steps;
  out.peak_in_flight = r.peak_requests_in_flight;
  out.simulated_s = r.duration_s();
  out.wall_s = std::chrono::duration<double>(stop - start).count();
  return out;
}

/// The traces under `dir` that (b) replays, sorted.
std::vector<std::filesystem::path> trace_files(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    const auto ext = entry.path().extension();
    const auto stem = entry.path().filename().string();
    if ((ext == ".jsonl" ||
         (ext == ".csv" && (stem.starts_with("Azure") ||
                            entry.path().parent_path().filename() == "vllm-bench"))) &&
        entry.is_regular_file()) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

ServeBenchResult run_serve_bench(const ServeBenchOptions& o, const std::filesystem::path& root) {
  BudgetRequest req;
  req.model_id = "meta-llama/Llama-3.1-8B";
  req.gpu_id = "h100-sxm";
  req.max_model_len = 32768;
  req.suggest = false;
  const BudgetAnswer budget = answer_budget(req, root);

  ServeBenchResult out;
  out.model_id = req.model_id;
  out.gpu_id = req.gpu_id;
  serving::TraceSpec main = serving::azure_conv_synthetic(o.num_requests, o.seed);
  main.synthetic.arrivals.rate_per_s = o.rate_per_s;
  out.runs.push_back(replay(fmt::format("azure-conv synthetic, {} requests, {} replicas",
                                        o.num_requests, o.replicas),
                            main, o.replicas, budget));
  for (const auto& path : trace_files(o.traces_dir)) {
    serving::TraceSpec spec;
    spec.kind = serving::TraceKind::kFile;
    spec.path = path.string();
    out.runs.push_back(replay(path.filename().string(), spec, 1, budget));
  }
  return out;
}

nlohmann::ordered_json serve_bench_json(const ServeBenchResult& r) {
  nlohmann::ordered_json j;
  j["benchmark"] = "serve";
  j["model"] = r.model_id;
  j["gpu"] = r.gpu_id;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ServeBenchRun& x : r.runs) {
    list.push_back({{"name", x.name},
                    {"num_requests", x.num_requests},
                    {"num_events", x.num_events},
                    {"num_steps", x.num_steps},
                    {"peak_requests_in_flight", x.peak_in_flight},
                    {"simulated_s", x.simulated_s},
                    {"wall_s", x.wall_s},
                    {"requests_per_s", static_cast<double>(x.num_requests) / x.wall_s},
                    {"events_per_s", static_cast<double>(x.num_events) / x.wall_s}});
  }
  j["runs"] = list;
  return j;
}

}  // namespace vramsim::run
