// Loading of topologies/ data: device sheets (topologies/devices/<id>.toml) and node
// descriptions (topologies/nodes/<id>.toml) into the plain structs of sim/hardware. Every
// problem in a file is reported at once as a ConfigError holding file:line and field for each
// (see topologies/README.md for the format).
//
//   const auto dir = vramsim::io::default_topologies_dir();
//   hardware::DeviceSpec h100 = vramsim::io::find_device("H100-SXM", dir);  // case-insensitive
//   hardware::NodeSpec node = vramsim::io::find_node("h100-sxm-8x-nvswitch", dir);
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/hardware/node_spec.hpp"

namespace vramsim::io {

/// The topologies/ folder of the source tree this library was built from.
std::filesystem::path default_topologies_dir();

/// Reads one device sheet. Throws ConfigError listing every problem (missing or unknown keys,
/// bad units, bare numbers, an id that differs from the file name, non-positive figures).
hardware::DeviceSpec load_device_file(const std::filesystem::path& file);

/// Reads one node description; checks its own fields only (see find_node for the device).
hardware::NodeSpec load_node_file(const std::filesystem::path& file);

class TomlReader;

/// The longest link latency a node, cluster or network setting may give: 1 s (real fabrics are
/// microseconds; anything slower makes a collective outlast the simulator's clock).
inline constexpr Duration kMaxLinkLatency = Duration::from_nanoseconds(1'000'000'000);

/// Reports on `r` a link bandwidth outside the device sheets' accepted link range
/// (hardware::kMinLinkBandwidth..kMaxLinkBandwidth) or a latency above kMaxLinkLatency; unset or
/// non-positive values are left to the caller's own checks.
void check_link_figures(TomlReader& r, std::string_view bandwidth_path,
                        std::optional<Bandwidth> bandwidth, std::string_view latency_path,
                        std::optional<Duration> latency);

/// The ids of topologies_dir/devices/*.toml, sorted.
std::vector<std::string> device_ids(const std::filesystem::path& topologies_dir);

/// The ids of topologies_dir/nodes/*.toml, sorted.
std::vector<std::string> node_ids(const std::filesystem::path& topologies_dir);

/// Loads the device `id` (case-insensitive). Throws ConfigError under `field` listing the valid
/// ids when there is no such device, or the file's own problems.
hardware::DeviceSpec find_device(std::string_view id, const std::filesystem::path& topologies_dir,
                                 std::string_view field = "device");

/// Loads the node `id` (case-insensitive). A node that names a device must name one that exists
/// and can populate it (validate_node_for_device); otherwise throws ConfigError.
hardware::NodeSpec find_node(std::string_view id, const std::filesystem::path& topologies_dir,
                             std::string_view field = "node");

/// The node sheet a device sits in when none is named (serve's KV link, plan serve's and
/// budget's host memory): of topologies_dir/nodes, the sheet naming `device_id` with the most
/// GPUs (h100-sxm: h100-sxm-8x-nvswitch; ties: the first id in sorted order), else the generic
/// pcie-8x. Throws ConfigError under `field` when pcie-8x is needed and missing.
hardware::NodeSpec default_node_of_device(std::string_view device_id,
                                          const std::filesystem::path& topologies_dir,
                                          std::string_view field = "hardware.topology");

}  // namespace vramsim::io
