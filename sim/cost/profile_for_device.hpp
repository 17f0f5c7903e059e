// Loading the calibration profile a command was given (--calibration, or a scenario's
// hardware.calibration) for the device it simulates: the one check every command applies.
#pragma once

#include <filesystem>
#include <string_view>

#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/device_spec.hpp"

namespace vramsim::cost {

/// Loads and validates the profile at `path` (calibration::load_calibration_profile: a missing
/// or malformed file throws ConfigError naming it) and checks that it was measured on `device`.
/// Throws ConfigError under `field` when the device ids differ.
calibration::CalibrationProfile load_profile_for_device(const std::filesystem::path& path,
                                                        const hardware::DeviceSpec& device,
                                                        std::string_view field = "hardware.calibration");

}  // namespace vramsim::cost
