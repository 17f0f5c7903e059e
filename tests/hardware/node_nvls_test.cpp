// NCCL's NVLink SHARP (NVLS) buffers decided by the node a GPU sits in
// (hardware::has_nvls(node, device), issue 16): an NVSwitch node of Hopper or later has them,
// the same GPU on PCIe or a bridge has none, and a pre-Hopper NVSwitch node has none either.
#include <filesystem>

#include "sim/hardware/device_spec.hpp"
#include "sim/hardware/node_spec.hpp"
#include "sim/io/topology_loader.hpp"
#include "tests/catch.hpp"

namespace fs = std::filesystem;
using namespace vramsim;

namespace {

const fs::path kTopologies = fs::path(VRAMSIM_SOURCE_ROOT) / "topologies";

bool nvls(const char* node, const char* device) {
  return hardware::has_nvls(io::find_node(node, kTopologies),
                            io::find_device(device, kTopologies));
}

}  // namespace

TEST_CASE("NVLS buffers need an NVSwitch node and a Hopper-or-later GPU on it",
          "[hardware][node][nvls]") {
  // Third-generation NVSwitch with NVLink 4 (HGX H100 / H200) and NVLink 5 (HGX B200).
  CHECK(nvls("h100-sxm-8x-nvswitch", "h100-sxm"));
  CHECK(nvls("h200-8x-nvswitch", "h200"));
  CHECK(nvls("b200-8x-nvswitch", "b200"));
  CHECK(nvls("nvswitch-8x", "h100-sxm"));
  // The same H100 SXM on a PCIe node: no NVSwitch, no NVLS (the device sheet alone says yes).
  CHECK(hardware::has_nvls(io::find_device("h100-sxm", kTopologies)));
  CHECK_FALSE(nvls("pcie-8x", "h100-sxm"));
  CHECK_FALSE(nvls("pcie-2x", "h100-sxm"));
  // A100 NVSwitch nodes (second-generation NVSwitch, NVLink 3) have none, as the device says.
  CHECK_FALSE(nvls("a100-sxm-80g-8x-nvswitch", "a100-sxm-80g"));
  // A bridge between two PCIe cards is no switch.
  CHECK_FALSE(nvls("h100-pcie-2x-nvlink-bridge", "h100-pcie"));
  // One GPU: nothing to reduce across.
  CHECK_FALSE(nvls("single-gpu", "h100-sxm"));
}
