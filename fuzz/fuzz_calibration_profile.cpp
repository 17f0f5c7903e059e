// libFuzzer target: the calibration profile JSON reader (sim/hardware/calibration_profile.hpp).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.hpp"
#include "sim/hardware/calibration_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = vramsim::fuzz::write_input(data, size, "profile.json");
  vramsim::fuzz::expect_config_error_at_most(
      [&] { (void)vramsim::calibration::load_calibration_profile(path); });
  return 0;
}
