#include "sim/memory/calibrated_overheads.hpp"

#include <string>

#include "tests/catch.hpp"
#include "tests/hardware/calibration_fixture.hpp"

using namespace vramsim;

TEST_CASE("the budget's overheads take the profile's measured memory",
          "[hardware][calibration][memory]") {
  const memory::RuntimeOverheads o =
      memory::overheads_from_profile(testing::fixture_profile(), true);
  CHECK(o.cuda_context == Bytes(557842432));
  CHECK(o.non_torch_base == Bytes(4194304 + 33554432));
  CHECK(o.non_torch_comm == Bytes(1610612736));
  CHECK(o.cuda_graph_per_graph == memory::default_overheads(true).cuda_graph_per_graph);
  CHECK(o.source.find(testing::fixture_profile_path().string()) != std::string::npos);
  CHECK(o.source.find("defaults: cuda_graph_per_graph") != std::string::npos);
}

TEST_CASE("a single-rank communicator leaves the communicator default in place",
          "[hardware][calibration][memory]") {
  calibration::CalibrationProfile p = testing::fixture_profile();
  p.memory.nccl_communicator_ranks = 1;
  p.memory.nccl_communicator_bytes = 1 << 20;
  p.memory.cuda_context_bytes = 0;
  const memory::RuntimeOverheads o = memory::overheads_from_profile(p, false);
  CHECK(o.non_torch_comm == memory::default_overheads(false).non_torch_comm);
  CHECK(o.cuda_context == memory::default_overheads(false).cuda_context);
  CHECK(o.source.find("cuda_context, non_torch_comm") != std::string::npos);
}
