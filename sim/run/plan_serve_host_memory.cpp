#include "sim/run/plan_serve_host_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "sim/core/error.hpp"
#include "sim/hardware/node_spec.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/run/data_root.hpp"

namespace vramsim::run {

namespace {

// One pool's engines on the node sheet of its GPU, against the sheet's host memory; the skip
// reason when the fullest node's tiers exceed it, nullopt when they fit or the sheet records
// none. Throws the ConfigError of the node's read (hardware.topology naming a node the GPU
// cannot populate).
std::optional<std::string> over_node_host_memory(KvLinkTopologies& topologies,
                                                 const std::string& topology,
                                                 const hardware::DeviceSpec& device, Bytes tier,
                                                 std::int64_t engines,
                                                 std::int64_t gpus_per_engine) {
  const hardware::NodeSpec& node = *topologies.get(topology, device).node;
  if (!node.host_memory) return std::nullopt;
  const Bytes need =
      hardware::kv_tier_host_bytes_per_node(tier, engines, gpus_per_engine, node.num_gpus);
  if (need <= *node.host_memory) return std::nullopt;
  const std::string shared =
      gpus_per_engine <= node.num_gpus
          ? fmt::format("{} engines of {} GPUs x {}",
                        std::min(engines, node.num_gpus / gpus_per_engine), gpus_per_engine,
                        format_bytes(tier))
          : fmt::format("{} of one {}-GPU engine's {} tier", format_bytes(need), gpus_per_engine,
                        format_bytes(tier));
  return fmt::format("KV tiers take {} of host memory on one {}-GPU node ({}) > host_memory {} "
                     "of node sheet {}",
                     format_bytes(need), node.num_gpus, shared, format_bytes(*node.host_memory),
                     node.id);
}

}  // namespace

std::optional<std::string> over_node_host_memory(KvLinkTopologies& topologies,
                                                 const ServeOptions& options,
                                                 const PlanServeRow& r, const ServeAnswer& a) {
  const std::string& topology = options.topology;
  const Bytes tier = a.budget.kv_offload.host_bytes;
  const std::int64_t dp = std::max<std::int64_t>(1, options.data_parallel_size);
  if (r.prefill_instances == 0) {
    return over_node_host_memory(topologies, topology, a.budget.device, tier, r.replicas * dp,
                                 r.tp * r.pp);
  }
  const std::int64_t prefill_gpus = (r.mixed() ? r.prefill_tp : r.tp) * r.pp;
  const hardware::DeviceSpec& prefill = a.prefill_budget->device;
  if (prefill.id == a.budget.device.id) {
    return over_node_host_memory(topologies, topology, a.budget.device, tier,
                                 (r.prefill_instances + r.decode_instances) * dp,
                                 std::max(prefill_gpus, r.tp * r.pp));
  }
  if (auto over = over_node_host_memory(topologies, topology, prefill, tier,
                                        r.prefill_instances * dp, prefill_gpus)) {
    return "prefill pool: " + *over;
  }
  if (auto over = over_node_host_memory(topologies, topology, a.budget.device, tier,
                                        r.decode_instances * dp, r.tp * r.pp)) {
    return "decode pool: " + *over;
  }
  return std::nullopt;
}

std::string host_memory_bound_text(const std::optional<Bytes>& max_host_memory,
                                   KvLinkTopologies& topologies, const std::string& topology,
                                   const PlanServeSpace& space) {
  if (max_host_memory) {
    return fmt::format("--max-host-memory {}: the deployment's KV tiers together",
                       format_bytes(*max_host_memory));
  }
  const std::filesystem::path sheets = checked_project_root() / "topologies";
  std::string nodes;
  bool any = false;
  for (const std::string& gpu : space.gpus) {
    std::string entry;
    try {
      const hardware::DeviceSpec device = io::find_device(gpu, sheets, "plan.gpus");
      const hardware::NodeSpec& node = *topologies.get(topology, device).node;
      any = any || node.host_memory.has_value();
      entry = node.host_memory ? fmt::format("{} on {} ({})", gpu, node.id,
                                             format_bytes(*node.host_memory))
                               : fmt::format("{} on {} (none recorded: not bounded)", gpu,
                                             node.id);
    } catch (const ConfigError& e) {
      entry = fmt::format("{}: {}", gpu, e.what());
    }
    nodes += (nodes.empty() ? "" : "; ") + entry;
  }
  if (!any) {
    return fmt::format("none: no --max-host-memory, and no node sheet records host_memory ({})",
                       nodes);
  }
  return fmt::format("node sheets' host_memory, per node (the engines on a node share it): {}",
                     nodes);
}

std::string node_host_memory_inputs(KvLinkTopologies& topologies, const std::string& topology,
                                    const PlanServeSpace& space) {
  const std::filesystem::path sheets = checked_project_root() / "topologies";
  std::string out;
  for (const std::string& gpu : space.gpus) {
    try {
      const hardware::DeviceSpec device = io::find_device(gpu, sheets, "plan.gpus");
      const hardware::NodeSpec& node = *topologies.get(topology, device).node;
      out += fmt::format("node[{}]={} num_gpus={} host_memory={}\n", gpu, node.id,
                         node.num_gpus,
                         node.host_memory ? std::to_string(node.host_memory->count()) : "none");
    } catch (const ConfigError& e) {
      out += fmt::format("node[{}]=error {}\n", gpu, e.what());
    }
  }
  return out;
}

}  // namespace vramsim::run
