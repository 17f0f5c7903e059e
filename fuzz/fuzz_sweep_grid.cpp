// libFuzzer target: the sweep grid reader (sim/io/sweep_grid.hpp) and the scenario it builds for
// each of the first points.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.hpp"
#include "sim/io/sweep_grid.hpp"
#include "sim/run/serve_options.hpp"
#include "sim/run/train_options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = vramsim::fuzz::write_input(data, size, "grid.toml");
  vramsim::fuzz::expect_config_error_at_most([&] {
    const vramsim::io::SweepGrid grid =
        vramsim::io::load_sweep_grid(path, vramsim::run::serving_scenario_fields(),
                                     vramsim::run::training_scenario_fields());
    // A grid's product can be huge: the first points exercise every code path.
    const std::size_t n = std::min<std::size_t>(grid.points.size(), 16);
    for (std::size_t i = 0; i < n; ++i) (void)vramsim::io::point_scenario(grid, i, "point.toml");
  });
  return 0;
}
