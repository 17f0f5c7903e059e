// The names of sim/hardware's enums come from one table each (sim/core/enum_table.hpp).
#include "sim/hardware/calibration_profile.hpp"
#include "sim/cost/calibration_tables.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/hardware/node_spec.hpp"
#include "tests/catch.hpp"
#include "tests/core/enum_table_checks.hpp"

using namespace vramsim;

TEST_CASE("device and node enums round-trip through their tables", "[hardware][enum_table]") {
  using namespace vramsim::hardware;
  testing::check_enum_api(kVendors, [](Vendor v) { return to_string(v); }, vendor_from_string);
  testing::check_enum_api(kPeerLinkKinds, [](PeerLinkKind k) { return to_string(k); },
                          peer_link_kind_from_string);
  testing::check_enum_api(kFabricKinds, [](FabricKind k) { return to_string(k); },
                          fabric_kind_from_string);
  CHECK(names_list<kFabricKinds>() == "none, nvswitch, nvlink-bridge, pcie, infinity-fabric");
}

TEST_CASE("calibration enums round-trip through their tables", "[hardware][enum_table]") {
  using namespace vramsim::calibration;
  testing::check_enum_api(kCheckOutcomes, [](CheckOutcome c) { return to_string(c); },
                          check_outcome_from_string);
  testing::check_enum_api(kCopyKinds, [](CopyKind k) { return to_string(k); },
                          copy_kind_from_string);
  testing::check_enum_api(kCollectiveOps, [](CollectiveOp op) { return to_string(op); },
                          collective_op_from_string);
  testing::check_enum_table(kBases);
  for (const auto& r : kBases.rows) CHECK(to_string(r.value) == r.name);
}
