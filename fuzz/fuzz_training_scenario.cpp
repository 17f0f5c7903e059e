// libFuzzer target: the training scenario TOML reader (the option schema,
// sim/run/train_options.hpp) and the merge that converts and validates its values.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.hpp"
#include "sim/run/train_options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = vramsim::fuzz::write_input(data, size, "training.toml");
  vramsim::fuzz::expect_config_error_at_most(
      [&] { (void)vramsim::run::resolve_train_options(vramsim::run::load_train_scenario(path)); });
  return 0;
}
