// The server a budget's GPUs sit in: the node of hardware.topology (budget --topology) or,
// without one, the GPU's default node sheet. Its host memory bounds the KV offload tier
// (KvOffloadHost) and its fabric decides whether NCCL's NVLS buffers are charged for TP > 1
// (hardware::has_nvls). answer_budget (budget_run.hpp) calls these.
#pragma once

#include <filesystem>
#include <optional>

#include "sim/hardware/device_spec.hpp"
#include "sim/hardware/node_spec.hpp"
#include "sim/memory/budget.hpp"
#include "sim/run/budget_run.hpp"

namespace vramsim::run {

/// The node `req.topology` names for the budget's engine, read as serve reads its KV link's
/// (io::cluster_topology_for_device, so both refuse a node built from another GPU alike), and
/// holding the engine's TP x PP x data_parallel_size GPUs. nullopt when req.topology is empty
/// or a cluster file that names no node. Throws ConfigError under hardware.topology.
std::optional<hardware::NodeSpec> budget_topology_node(const BudgetRequest& req,
                                                       const hardware::DeviceSpec& device,
                                                       const memory::EngineConfig& engine,
                                                       const std::filesystem::path& root);

/// The KV offload tier of `a` (a.kv_offload) against the host memory of a.topology_node or,
/// without one, of the GPU's default node sheet (read only then). Empty without a tier.
KvOffloadHost kv_offload_host(const BudgetAnswer& a, const std::filesystem::path& root);

}  // namespace vramsim::run
