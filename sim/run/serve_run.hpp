// The run layer of `vramsim serve` (and of compare, capacity and sweep, which run many): a
// resolved serving configuration -> the budget that sizes its KV cache -> the simulated replay.
// Callable without the command line; problems are reported on the configuration's fields.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "sim/core/units.hpp"
#include "sim/run/budget_run.hpp"
#include "sim/serving/serving_simulation.hpp"
#include "sim/serving/traces/trace_factory.hpp"

namespace vramsim::run {

/// Disaggregated prefill/decode (serving::Disaggregation): the prefill pool's instances and
/// engine; ServeConfig::engine is then the decode pool's and setup.num_replicas its instances.
struct DisaggregatedServe {
  std::int32_t prefill_instances = 1;
  BudgetRequest prefill_engine;
  /// The TP both pools would take from engine.tp: a budget problem on engine.tp of a pool
  /// whose TP differs is reported on its own setting (serving.prefill_tp / serving.decode_tp).
  std::int64_t base_tp = 1;
};

/// The link a disaggregated run's KV crosses (serve_run.cpp, kv_transfer_link).
struct KvTransferLink {
  std::string kind;  // "intra-node" (the device's peer link) or "inter-node" (the network)
  Bandwidth bandwidth;  // per lane, per direction
  Duration latency;
  std::int32_t lanes = 1;
  Bytes bytes_per_token;  // landing on one decode instance's devices
};

/// What to serve: the engine (as for budget), the workload and the serving policies.
struct ServeConfig {
  std::string scenario_text;
  /// The resolved settings with their origins (resolved_inputs_json of the options it came
  /// from), stored in results files; null when built without the schema.
  nlohmann::ordered_json settings;
  BudgetRequest engine;
  serving::TraceSpec trace;
  serving::ServingSetup setup;  // KV blocks and limits are filled from the budget later
  Bytes swap_space;
  bool enable_prefix_caching = true;
  std::optional<DisaggregatedServe> disaggregated;
};

struct ServeAnswer {
  ServeConfig config;
  BudgetAnswer budget;
  bool feasible = false;  // the weights and a KV cache fit (budget.result.fits)
  std::string trace_description;
  std::string cost_model;
  /// How far the step times are validated for this setting (cost/validated_bands.hpp), or why
  /// no validated band covers it.
  std::string error_band;
  serving::ServingResult result;
  /// Disaggregated: the prefill pool's budget and the KV transfer link (budget is the decode
  /// pool's).
  std::optional<BudgetAnswer> prefill_budget;
  std::optional<KvTransferLink> kv_link;
};

/// GPUs in one node when the pools' GPUs are placed together: the largest node of
/// topologies/nodes (8 GPUs: HGX/DGX nvswitch, MI300X platform). A disaggregated layout whose
/// instances need more GPUs than this crosses the network between the pools.
inline constexpr std::int64_t kDisaggregatedGpusPerNode = 8;

/// Sizes the KV cache with the budget (answer_budget; its problems keep their fields) and
/// validates the scheduler and router: a scheduler limit out of range is reported under
/// its setting's path ("engine.max_num_seqs", "serving.chunk_size"), an unknown policy
/// under "serving.scheduler" / "serving.router". Throws ConfigError for bad input; an infeasible
/// configuration (weights do not fit) is returned with feasible == false and
/// budget.result.reason saying why.
ServeAnswer prepare_serve(ServeConfig config);

/// Sees every step a replica runs: its batch, its time, and the step-time model that costed it
/// (to cost parts of the batch apart). compare serve's account of what binds at capacity.
class StepListener {
 public:
  virtual ~StepListener();
  virtual void on_step(const serving::BatchShape& batch, const serving::StepTime& time,
                       const serving::ExecutionTimeModel& model) = 0;
};

/// Replays the workload of a feasible prepared answer, filling result, cost_model and
/// trace_description; `observer` (may be null) receives per-request rows and samples, `steps`
/// (may be null) every step's batch and time.
void simulate_serve(ServeAnswer& a, serving::ServingObserver* observer,
                    StepListener* steps = nullptr);

}  // namespace vramsim::run
