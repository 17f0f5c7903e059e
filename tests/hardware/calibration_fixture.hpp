// The synthetic H100 fixture profile (tests/hardware/data/h100_fixture_profile.json, written
// by make_fixture_profile.py) and the device sheet behind it, for calibration tests.
#pragma once

#include <filesystem>
#include <string>

#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/io/topology_loader.hpp"

namespace vramsim::testing {

inline std::filesystem::path fixture_profile_path() {
  return std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "tests/hardware/data/h100_fixture_profile.json";
}

inline const calibration::CalibrationProfile& fixture_profile() {
  static const calibration::CalibrationProfile p =
      calibration::load_calibration_profile(fixture_profile_path());
  return p;
}

inline const hardware::DeviceSpec& fixture_device() {
  static const hardware::DeviceSpec d =
      io::find_device("h100-sxm", std::filesystem::path(VRAMSIM_SOURCE_ROOT) / "topologies");
  return d;
}

}  // namespace vramsim::testing
