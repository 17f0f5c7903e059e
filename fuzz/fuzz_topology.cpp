// libFuzzer target: the topology TOML readers (sim/io/topology_loader.hpp and the cluster files
// of sim/io/training_scenario.hpp). The same bytes are read as a device sheet, a node file and a
// `--topology` cluster file (whose node ids resolve against the shipped topologies/).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/io/training_scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramsim;
  const auto path = fuzz::write_input(data, size, "fuzz.toml");
  fuzz::expect_config_error_at_most([&] { (void)io::load_device_file(path); });
  fuzz::expect_config_error_at_most([&] { (void)io::load_node_file(path); });
  fuzz::expect_config_error_at_most(
      [&] { (void)io::load_cluster_topology(path.string(), io::default_topologies_dir()); });
  return 0;
}
