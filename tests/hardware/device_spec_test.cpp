#include "sim/hardware/device_spec.hpp"

#include "sim/hardware/node_spec.hpp"
#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::hardware;

namespace {

/// A Turing-like part: fp32, fp16 and int8 only.
DeviceSpec make_turing_like() {
  DeviceSpec d;
  d.id = "old";
  d.peak.fp32 = TFLOPS(8);
  d.peak.fp16 = TFLOPS(64);
  d.peak.int8 = TFLOPS(128);
  d.pcie = {3, GBps(16)};
  return d;
}

/// A Hopper-like part with every format and NVLink.
DeviceSpec make_hopper_like() {
  DeviceSpec d;
  d.id = "new";
  d.peak.fp32 = TFLOPS(60);
  d.peak.fp16 = TFLOPS(1000);
  d.peak.tf32 = TFLOPS(500);
  d.peak.bf16 = TFLOPS(1000);
  d.peak.fp8 = TFLOPS(2000);
  d.peak.int8 = TFLOPS(2000);
  d.peer_link = PeerLink{PeerLinkKind::kNvlink, 4, GBps(450), false};
  d.pcie = {5, GBps(64)};
  return d;
}

NodeSpec make_node(FabricKind kind, int num_gpus) {
  NodeSpec n;
  n.id = "n";
  n.num_gpus = num_gpus;
  n.fabric.kind = kind;
  return n;
}

}  // namespace

TEST_CASE("native formats are the ones with a peak rate", "[hardware]") {
  CHECK(native_dtypes(make_turing_like()) ==
        std::vector<DType>{DType::kFp32, DType::kFp16, DType::kInt8});
  CHECK(native_dtypes(make_hopper_like()) ==
        std::vector<DType>{DType::kFp32, DType::kFp16, DType::kBf16, DType::kFp8, DType::kInt8});
  CHECK_FALSE(supports_natively(make_hopper_like(), DType::kInt4));
}

TEST_CASE("missing formats fall back by the documented rule", "[hardware]") {
  const DeviceSpec old = make_turing_like();
  CHECK(peak_flop_rate(old, DType::kFp32) == TFLOPS(8));
  CHECK(peak_flop_rate(old, DType::kBf16) == TFLOPS(64));  // bf16 -> fp16
  CHECK(peak_flop_rate(old, DType::kFp8) == TFLOPS(64));   // fp8 -> 16-bit
  CHECK(peak_flop_rate(old, DType::kInt8) == TFLOPS(128));
  CHECK(peak_flop_rate(old, DType::kInt4) == TFLOPS(64));  // weight-only

  DeviceSpec ampere = make_hopper_like();
  ampere.peak.fp8.reset();
  ampere.peak.bf16 = TFLOPS(900);
  CHECK(peak_flop_rate(ampere, DType::kFp8) == TFLOPS(900));  // fp8 -> bf16 when present
  ampere.peak.int8.reset();
  CHECK(peak_flop_rate(ampere, DType::kInt8) == TFLOPS(1000));  // int8 -> fp16
}

TEST_CASE("native formats use their own rate", "[hardware]") {
  const DeviceSpec d = make_hopper_like();
  CHECK(peak_flop_rate(d, DType::kBf16) == TFLOPS(1000));
  CHECK(peak_flop_rate(d, DType::kFp8) == TFLOPS(2000));
  CHECK(peak_flop_rate(d, DType::kInt8) == TFLOPS(2000));
}

TEST_CASE("fabric bandwidth comes from the node, else from the device's link", "[hardware]") {
  const DeviceSpec hopper = make_hopper_like();
  const DeviceSpec turing = make_turing_like();
  NodeSpec switched = make_node(FabricKind::kNvswitch, 8);
  CHECK(fabric_bandwidth(switched, hopper) == GBps(450));
  CHECK_FALSE(fabric_bandwidth(switched, turing).has_value());
  switched.fabric.bandwidth_per_direction = GBps(400);
  CHECK(fabric_bandwidth(switched, hopper) == GBps(400));

  const NodeSpec pcie = make_node(FabricKind::kPcie, 4);
  CHECK(fabric_bandwidth(pcie, turing) == GBps(16));
  CHECK_FALSE(fabric_bandwidth(make_node(FabricKind::kNone, 1), hopper).has_value());
  CHECK_FALSE(fabric_bandwidth(make_node(FabricKind::kInfinityFabric, 8), hopper).has_value());
}

TEST_CASE("a bridged PCIe card cannot sit on an NVSwitch fabric", "[hardware]") {
  DeviceSpec bridged = make_hopper_like();
  bridged.peer_link->bridge_only = true;
  CHECK_FALSE(fabric_bandwidth(make_node(FabricKind::kNvswitch, 8), bridged).has_value());
  CHECK(fabric_bandwidth(make_node(FabricKind::kNvlinkBridge, 2), bridged) == GBps(450));
}

TEST_CASE("a node made for one device refuses another", "[hardware]") {
  NodeSpec node = make_node(FabricKind::kNvswitch, 8);
  node.id = "h100-sxm-8x-nvswitch";
  node.device_id = "h100-sxm";
  ValidationReport report;
  validate_node_for_device(node, make_hopper_like(), report);
  REQUIRE(report.problems().size() == 1);
  CHECK_THAT(report.format(), Catch::Contains("node: node 'h100-sxm-8x-nvswitch' is built from "
                                              "h100-sxm GPUs, not new"));
}

TEST_CASE("enum names round-trip", "[hardware]") {
  for (FabricKind k : {FabricKind::kNone, FabricKind::kNvswitch, FabricKind::kNvlinkBridge,
                       FabricKind::kPcie, FabricKind::kInfinityFabric}) {
    CHECK(fabric_kind_from_string(to_string(k)) == k);
  }
  for (Vendor v : {Vendor::kNvidia, Vendor::kAmd}) CHECK(vendor_from_string(to_string(v)) == v);
  for (PeerLinkKind k : {PeerLinkKind::kNvlink, PeerLinkKind::kInfinityFabric}) {
    CHECK(peer_link_kind_from_string(to_string(k)) == k);
  }
  CHECK_FALSE(fabric_kind_from_string("NVSwitch").has_value());
}
