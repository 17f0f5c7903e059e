#include "sim/run/budget_node.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "sim/core/error.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/io/training_scenario.hpp"

namespace vramsim::run {

std::optional<hardware::NodeSpec> budget_topology_node(const BudgetRequest& req,
                                                       const hardware::DeviceSpec& device,
                                                       const memory::EngineConfig& engine,
                                                       const std::filesystem::path& root) {
  if (req.topology.empty()) return std::nullopt;
  io::ClusterTopology t =
      io::cluster_topology_for_device(req.topology, device, root / "topologies");
  if (t.default_node) return std::nullopt;
  // NOTE: budget answers for GPUs of one node (its host memory, its fabric's NVLS): engines
  // that span nodes are not what the node sheet describes, so they are refused, not guessed.
  const std::int64_t dp = std::max(1, engine.data_parallel_size);
  const std::int64_t gpus = std::int64_t{engine.tp} * engine.pp * dp;
  if (gpus > t.node->num_gpus) {
    throw ConfigError(
        "hardware.topology",
        fmt::format("node '{}' holds {} GPUs, fewer than the {} this budget runs on (TP {} x "
                    "PP {} x DP {}); give a node of at least {} GPUs, or leave --topology out",
                    t.node->id, t.node->num_gpus, gpus, engine.tp, engine.pp, dp, gpus),
        {t.node->source_file, 0});
  }
  return std::move(t.node);
}

KvOffloadHost kv_offload_host(const BudgetAnswer& a, const std::filesystem::path& root) {
  KvOffloadHost h;
  if (a.kv_offload.host_bytes == Bytes(0)) return h;
  const hardware::NodeSpec node =
      a.topology_node ? *a.topology_node
                      : io::default_node_of_device(a.device.id, root / "topologies",
                                                   "hardware.gpu");
  h.node = node.id;
  h.node_file = node.source_file;
  h.from_topology = a.topology_node.has_value();
  h.host_memory = node.host_memory;
  h.num_engines = std::max<std::int64_t>(1, a.engine.data_parallel_size);
  h.host_bytes_per_node = hardware::kv_tier_host_bytes_per_node(
      a.kv_offload.host_bytes, h.num_engines, std::int64_t{a.engine.tp} * a.engine.pp,
      node.num_gpus);
  if (h.host_memory) h.fits = h.host_bytes_per_node <= *h.host_memory;
  return h;
}

}  // namespace vramsim::run
