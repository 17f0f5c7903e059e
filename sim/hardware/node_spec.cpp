#include "sim/hardware/node_spec.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/check.hpp"

namespace vramsim::hardware {

namespace {

std::optional<Bandwidth> peer_link_of_kind(const DeviceSpec& device, PeerLinkKind kind) {
  if (device.peer_link && device.peer_link->kind == kind) {
    return device.peer_link->bandwidth_per_direction;
  }
  return std::nullopt;
}

}  // namespace

Bytes kv_tier_host_bytes_per_node(Bytes tier_per_engine, std::int64_t num_engines,
                                  std::int64_t gpus_per_engine, std::int64_t node_gpus) {
  VRAMSIM_CHECK(gpus_per_engine >= 1 && node_gpus >= 1, "engine of {} GPUs on a node of {}",
                gpus_per_engine, node_gpus);
  if (num_engines <= 0 || tier_per_engine <= Bytes(0)) return Bytes(0);
  if (gpus_per_engine <= node_gpus) {
    return std::min(num_engines, node_gpus / gpus_per_engine) * tier_per_engine;
  }
  // Exact in int64 up to 2^63 / 64 bytes (128 PiB) of tier: node_gpus <= 64 (topology_loader).
  const std::int64_t share = tier_per_engine.count() * node_gpus;
  return Bytes((share + gpus_per_engine - 1) / gpus_per_engine);
}

std::optional<Bandwidth> fabric_bandwidth(const NodeSpec& node, const DeviceSpec& device) {
  switch (node.fabric.kind) {
    case FabricKind::kNone: return std::nullopt;
    case FabricKind::kNvswitch:
      // A bridged PCIe card has no NVSwitch port, whatever the node file says.
      if (device.peer_link && device.peer_link->bridge_only) return std::nullopt;
      [[fallthrough]];
    case FabricKind::kNvlinkBridge: {
      // A device without NVLink cannot sit on an NVLink fabric, whatever the node file says.
      std::optional<Bandwidth> own = peer_link_of_kind(device, PeerLinkKind::kNvlink);
      if (!own) return std::nullopt;
      return node.fabric.bandwidth_per_direction.value_or(*own);
    }
    case FabricKind::kInfinityFabric: {
      std::optional<Bandwidth> own = peer_link_of_kind(device, PeerLinkKind::kInfinityFabric);
      if (!own) return std::nullopt;
      return node.fabric.bandwidth_per_direction.value_or(*own);
    }
    case FabricKind::kPcie:
      return node.fabric.bandwidth_per_direction.value_or(device.pcie.bandwidth_per_direction);
  }
  VRAMSIM_UNREACHABLE("invalid FabricKind");
}

bool has_nvls(const NodeSpec& node, const DeviceSpec& device) {
  switch (node.fabric.kind) {
    case FabricKind::kNone:
    case FabricKind::kNvlinkBridge:
    case FabricKind::kPcie: return false;
    case FabricKind::kNvswitch:
    case FabricKind::kInfinityFabric:
      return fabric_bandwidth(node, device).has_value() && has_nvls(device);
  }
  VRAMSIM_UNREACHABLE("invalid FabricKind");
}

void validate_node_for_device(const NodeSpec& node, const DeviceSpec& device,
                              ValidationReport& report, std::string_view field) {
  if (node.device_id && *node.device_id != device.id) {
    report.error(std::string(field),
                 fmt::format("node '{}' is built from {} GPUs, not {}; pick a generic node such "
                             "as 'pcie-{}x' or one made for {}",
                             node.id, *node.device_id, device.id, node.num_gpus, device.id),
                 {node.source_file, 0});
    return;
  }
  if (node.fabric.kind != FabricKind::kNone && !fabric_bandwidth(node, device)) {
    report.error(std::string(field),
                 fmt::format("node '{}' joins its GPUs with {}, which {} does not have; use a "
                             "PCIe node such as 'pcie-{}x'",
                             node.id, to_string(node.fabric.kind), device.id, node.num_gpus),
                 {node.source_file, 0});
  }
}

std::string_view to_string(FabricKind k) { return name_of(kFabricKinds, k); }
std::optional<FabricKind> fabric_kind_from_string(std::string_view s) {
  return parse_name(kFabricKinds, s);
}

}  // namespace vramsim::hardware
