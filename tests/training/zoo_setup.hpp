// A TrainingSetup of a zoo model (or a config.json path) on a device sheet, with the device's default links: the
// fixture most training tests start from.
#pragma once

#include <filesystem>
#include <string>

#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/training/step_graph.hpp"

namespace vramsim::testing {

inline training::TrainingSetup zoo_setup(const std::string& model, const std::string& gpu,
                                         const training::TrainingPlan& plan) {
  const std::filesystem::path root(VRAMSIM_SOURCE_ROOT);
  training::TrainingSetup s{model::load_model(model, root / "scenarios" / "models"),
                            io::find_device(gpu, root / "topologies"), plan, {}};
  s.links = training::default_cluster_links(s.device);
  return s;
}

}  // namespace vramsim::testing
