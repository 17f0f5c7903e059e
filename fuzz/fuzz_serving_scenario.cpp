// libFuzzer target: the serving scenario TOML reader (sim/io/scenario_loader.hpp).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.hpp"
#include "sim/io/scenario_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = vramsim::fuzz::write_input(data, size, "scenario.toml");
  vramsim::fuzz::expect_config_error_at_most(
      [&] { (void)vramsim::io::load_serving_scenario(path); });
  return 0;
}
