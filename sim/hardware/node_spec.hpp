// One server: how many GPUs and the intra-node fabric between them. Plain data, filled by
// io/topology_loader from topologies/nodes/<id>.toml, plus pure functions that combine a node
// with a device.
//
// A node either names its device ("h100-sxm-8x-nvswitch") or is generic ("pcie-4x"): a generic
// node takes the device chosen by the scenario and, when its file gives no fabric bandwidth,
// the bandwidth of that device's own link (NVLink for nvswitch / nvlink-bridge, PCIe for pcie).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/hardware/device_spec.hpp"

namespace vramsim::hardware {

enum class FabricKind {
  kNone,            // a single GPU: nothing to cross
  kNvswitch,        // every GPU reaches every other at its full NVLink bandwidth (HGX / DGX)
  kNvlinkBridge,    // a point-to-point NVLink bridge between a pair of PCIe cards
  kPcie,            // GPU-to-GPU traffic crosses PCIe (and the CPU root complex / a switch)
  kInfinityFabric,  // AMD xGMI: a full mesh of direct links (MI300X platform)
};
inline constexpr auto kFabricKinds = enum_table<FabricKind>({
    {FabricKind::kNone, "none", "a single GPU: nothing to cross"},
    {FabricKind::kNvswitch, "nvswitch", "every GPU reaches every other at full NVLink bandwidth"},
    {FabricKind::kNvlinkBridge, "nvlink-bridge", "an NVLink bridge between a pair of PCIe cards"},
    {FabricKind::kPcie, "pcie", "GPU-to-GPU traffic crosses PCIe"},
    {FabricKind::kInfinityFabric, "infinity-fabric", "AMD xGMI: a full mesh of direct links"},
});
static_assert(covers_every_enumerator(kFabricKinds) && names_are_unique(kFabricKinds));

struct Fabric {
  FabricKind kind = FabricKind::kNone;
  /// Per GPU, per direction. nullopt: take it from the device (see fabric_bandwidth).
  std::optional<Bandwidth> bandwidth_per_direction;
  /// Start-up cost of one transfer (the alpha of an alpha-beta model).
  Duration latency;
};

struct NodeSpec {
  std::string id;           // "h100-sxm-8x-nvswitch", equals the file name
  std::string description;
  int num_gpus = 1;
  std::optional<std::string> device_id;  // nullopt: generic, any device
  Fabric fabric;
  std::vector<std::string> sources;
  std::string source_file;
};

/// Per-GPU, per-direction bandwidth of the node's fabric when populated with `device`: the
/// node's own figure if it has one, else the device's NVLink (nvswitch, nvlink-bridge),
/// Infinity Fabric (infinity-fabric) or PCIe (pcie) bandwidth. nullopt when the fabric is kNone
/// or the device lacks the link the fabric needs (an "nvlink-2x" node with an L4).
std::optional<Bandwidth> fabric_bandwidth(const NodeSpec& node, const DeviceSpec& device);

/// Records a problem under `field` when `device` cannot populate `node`: the node names another
/// device, or the device lacks the link the node's fabric needs.
void validate_node_for_device(const NodeSpec& node, const DeviceSpec& device,
                              ValidationReport& report, std::string_view field = "node");

std::string_view to_string(FabricKind k);
/// "none", "nvswitch", "nvlink-bridge", "pcie", "infinity-fabric".
std::optional<FabricKind> fabric_kind_from_string(std::string_view s);

}  // namespace vramsim::hardware
