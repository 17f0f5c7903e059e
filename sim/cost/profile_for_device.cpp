#include "sim/cost/profile_for_device.hpp"

#include <fmt/format.h>

#include <string>

#include "sim/core/error.hpp"

namespace vramsim::cost {

calibration::CalibrationProfile load_profile_for_device(const std::filesystem::path& path,
                                                        const hardware::DeviceSpec& device,
                                                        std::string_view field) {
  calibration::CalibrationProfile p = calibration::load_calibration_profile(path);
  if (p.device_id != device.id) {
    throw ConfigError(std::string(field),
                      fmt::format("{} was measured on '{}', not on --gpu '{}'", path.string(),
                                  p.device_id, device.id));
  }
  return p;
}

}  // namespace vramsim::cost
