// libFuzzer target: the training scenario TOML reader (sim/io/training_scenario.hpp).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.hpp"
#include "sim/io/training_scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = vramsim::fuzz::write_input(data, size, "training.toml");
  vramsim::fuzz::expect_config_error_at_most(
      [&] { (void)vramsim::io::load_training_scenario(path); });
  return 0;
}
