// libFuzzer target: the serving scenario TOML reader (sim/run/serve_options.hpp), and the
// merge that validates every value.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.hpp"
#include "sim/run/serve_options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = vramsim::fuzz::write_input(data, size, "scenario.toml");
  vramsim::fuzz::expect_config_error_at_most(
      [&] {
        (void)vramsim::run::resolve_serve_options(vramsim::run::load_serve_scenario(path));
      });
  return 0;
}
