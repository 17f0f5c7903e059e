// The server a budget's GPUs sit in: the node of hardware.topology (budget --topology) or,
// without one, the GPU's default node sheet. Its host memory holds the KV offload tier
// (KvOffloadBudget, KvOffloadHost), its fabric decides whether NCCL's NVLS buffers are charged
// for TP > 1 (hardware::has_nvls), and its GPUs bound the larger TP a budget that does not fit
// suggests. answer_budget (budget_run.hpp) calls these.
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

/// Sets a.topology_node (budget_topology_node of a.device and a.engine), with a note when
/// req.topology is a cluster file without a node, and a.nvls: hardware::has_nvls of that node,
/// else of the device sheet alone.
void place_on_node(const BudgetRequest& req, BudgetAnswer& a, const std::filesystem::path& root);

/// The KV offload tier of `e` (req.kv_offloading_size, req.kv_offloading_disk_size) in whole
/// blocks of the replica's KV (`r`: one replica's devices, DP rank 0). All zero without a tier.
/// Throws ConfigError naming the setting for an unknown backend, a disk tier without a host
/// tier, or a tier that holds no block.
KvOffloadBudget kv_offload_budget(const BudgetRequest& req, const memory::EngineConfig& e,
                                  const memory::BudgetResult& r);

/// The KV offload tier of `a` (a.kv_offload) against the host memory of a.topology_node or,
/// without one, of the GPU's default node sheet (read only then). Empty without a tier.
KvOffloadHost kv_offload_host(const BudgetAnswer& a, const std::filesystem::path& root);

/// For a budget that does not fit: a.larger_tp, the first TP of 2, 4, 8, 16 above a.engine's
/// that fits (within a.topology_node's GPUs when there is one), and a.other_gpus, every other
/// device sheet of root/topologies that fits at the same TP and PP with vLLM's batch defaults
/// for it where the request left them unset (its NVLS from its own sheet), the most concurrent
/// first.
void add_alternatives(const BudgetRequest& req, BudgetAnswer& a,
                      const std::filesystem::path& root);

}  // namespace vramsim::run
