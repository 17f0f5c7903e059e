// One server: how many GPUs and the intra-node fabric between them. Plain data, filled by
// io/topology_loader from topologies/nodes/<id>.toml, plus pure functions that combine a node
// with a device.
//
// A node either names its device ("h100-sxm-8x-nvswitch") or is generic ("pcie-4x"): a generic
// node takes the device chosen by the scenario and, when its file gives no fabric bandwidth,
// the bandwidth of that device's own link (NVLink for nvswitch / nvlink-bridge, PCIe for pcie).
//
// A named server (DGX H100, ...) also records its host (CPU) memory, the pool that vLLM's KV
// offload tier (--kv-offloading-size) pins its blocks in; a generic node or a pair of cards that
// any server may hold has none (host_memory nullopt).
#pragma once

#include <cstdint>
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
  /// The server's host (CPU) memory, all sockets' DIMMs together, as its sheet gives it
  /// ("2TiB"); nullopt: not recorded (a generic node, or one that many servers hold).
  std::optional<Bytes> host_memory;
  std::vector<std::string> sources;
  std::string source_file;
};

/// The most host memory a node sheet may record: 64 TiB. Two-socket x86 servers of these
/// GPUs take at most 32 DIMMs (DGX H100 / H200 / B200: 32, the B200 "upgradable to 4 TB"), so
/// 4 TiB today; a figure above 64 TiB is a unit slip ("2PB" for "2TB"), not a server.
inline constexpr std::int64_t kMaxNodeHostMemoryTiB = 64;

/// Host memory the KV offload tiers of a deployment take on its fullest node, under the rule
/// that every vLLM engine instance (each replica or pool instance, each DP rank) pins a tier of
/// its own (vllm/v1/kv_offload/cpu.py: one CPUOffloadingSpec per engine, its num_blocks split
/// over the engine's world_size workers), so that engines placed on one node share that
/// node's memory:
///   * an engine fits a node (gpus_per_engine <= node_gpus): the node holds
///     min(num_engines, node_gpus / gpus_per_engine) engines, each with `tier_per_engine`;
///   * an engine spans nodes: each node holds node_gpus of its gpus_per_engine workers, so
///     tier_per_engine x node_gpus / gpus_per_engine (rounded up to a byte).
/// Zero when num_engines or tier_per_engine is zero. Requires gpus_per_engine, node_gpus >= 1.
Bytes kv_tier_host_bytes_per_node(Bytes tier_per_engine, std::int64_t num_engines,
                                  std::int64_t gpus_per_engine, std::int64_t node_gpus);

/// Per-GPU, per-direction bandwidth of the node's fabric when populated with `device`: the
/// node's own figure if it has one, else the device's NVLink (nvswitch, nvlink-bridge),
/// Infinity Fabric (infinity-fabric) or PCIe (pcie) bandwidth. nullopt when the fabric is kNone
/// or the device lacks the link the fabric needs (an "nvlink-2x" node with an L4).
std::optional<Bandwidth> fabric_bandwidth(const NodeSpec& node, const DeviceSpec& device);

/// Whether NCCL builds its NVLink SHARP (NVLS) buffers for the GPUs of `node` populated with
/// `device`: they sit on an NVSwitch (or, for AMD parts, an Infinity Fabric mesh, as
/// has_nvls(device) counts them) and the device is one whose switch has NVLS (has_nvls(device):
/// NVLink 4 and third-generation NVSwitch, Hopper on). A PCIe node, an NVLink bridge or a
/// single GPU has none, whatever the device: an H100 SXM on pcie-8x takes NCCL's plain buffers.
bool has_nvls(const NodeSpec& node, const DeviceSpec& device);

/// Records a problem under `field` when `device` cannot populate `node`: the node names another
/// device, or the device lacks the link the node's fabric needs.
void validate_node_for_device(const NodeSpec& node, const DeviceSpec& device,
                              ValidationReport& report, std::string_view field = "node");

std::string_view to_string(FabricKind k);
/// "none", "nvswitch", "nvlink-bridge", "pcie", "infinity-fabric".
std::optional<FabricKind> fabric_kind_from_string(std::string_view s);

}  // namespace vramsim::hardware
