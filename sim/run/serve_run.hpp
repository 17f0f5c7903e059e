// The run layer of `vramsim serve` (and of compare, capacity and sweep, which run many): a
// resolved serving configuration -> the budget that sizes its KV cache -> the simulated replay.
// Callable without the command line; problems are reported on the configuration's fields.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/io/training_scenario.hpp"
#include "sim/run/budget_run.hpp"
#include "sim/serving/serving_simulation.hpp"
#include "sim/serving/traces/trace_factory.hpp"

namespace vramsim::run {

/// What kv_transfer_link reads from the topology files for a decode GPU: hardware.topology's
/// node or cluster and, without a node there, the default node sheet of the GPU, validated for
/// it. Finding the default node reads every sheet of topologies/nodes, so a search that
/// prepares many disaggregated configurations (plan serve, a capacity search) shares one of
/// these: each (hardware.topology, decode GPU) is read once, on first use, and one whose read
/// failed throws the same ConfigError each time. The prefill GPU takes no part in the read
/// (kv_transfer_link compares it with the node's afterwards). Safe to share between threads.
class KvLinkTopologies {
 public:
  /// The cluster for `topology` ("" : none) with its node set, for decode GPU `device`.
  /// Throws the ConfigError of the read (an unknown node, one `device` cannot populate).
  const io::ClusterTopology& get(const std::string& topology,
                                 const hardware::DeviceSpec& device);
  /// The reads done so far: one per distinct (topology, decode GPU) asked for.
  std::int64_t num_reads() const;

 private:
  struct Entry {
    std::optional<io::ClusterTopology> cluster;
    std::optional<ConfigError> error;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Entry> entries_;  // (topology, device id)
};

/// Disaggregated prefill/decode (serving::Disaggregation): the prefill pool's instances and
/// engine; ServeConfig::engine is then the decode pool's and setup.num_replicas its instances.
struct DisaggregatedServe {
  std::int32_t prefill_instances = 1;
  BudgetRequest prefill_engine;
  /// The TP both pools would take from engine.tp: a budget problem on engine.tp of a pool
  /// whose TP differs is reported on its own setting (serving.prefill_tp / serving.decode_tp).
  std::int64_t base_tp = 1;
  /// The GPU both pools would take from engine.gpu_id (hardware.gpu): a bad device id of a
  /// pool on another GPU is reported on its own setting (serving.prefill_gpu / decode_gpu).
  std::string base_gpu;
  /// hardware.topology (io::load_cluster_topology): the node the pools share when they fit
  /// one, and the network between nodes; "": the default node of the decode GPU.
  std::string topology;
  /// Where the KV link's topology is read through (KvLinkTopologies); shared by the
  /// configurations of a search, and by copies of this configuration. Null: read for this
  /// configuration alone.
  std::shared_ptr<KvLinkTopologies> link_topologies;
};

/// The link a disaggregated run's KV crosses (serve_run.cpp, kv_transfer_link).
struct KvTransferLink {
  std::string kind;  // "intra-node" (the node's fabric) or "inter-node" (the network)
  std::string node;  // the node sheet's id (hardware::NodeSpec::id)
  std::int64_t node_gpus = 0;  // its GPUs: both pools fit it -> intra-node
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

/// The link between the pools of a disaggregated layout (serving::Disaggregation):
///   * the node: hardware.topology's (a node id, node file or cluster file), else the node
///     sheet of topologies/nodes naming the decode GPU with the most GPUs (h100-sxm:
///     h100-sxm-8x-nvswitch; ties: the first id), else the generic pcie-8x;
///   * intra-node, over the node's fabric (hardware::fabric_bandwidth, fabric.latency), when
///     both pools run on one GPU type and their GPUs (P x prefill TP + D x decode TP) fit the
///     node's num_gpus; otherwise inter-node over the network: the cluster file's [network],
///     else training::default_cluster_links' NIC per GPU (the slower of the two pools' GPUs)
///     and comm::kNetworkHopLatency.
/// Throws ConfigError under hardware.topology for an unknown node or one the decode GPU
/// cannot populate.
KvTransferLink kv_transfer_link(const ServeAnswer& a);

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
