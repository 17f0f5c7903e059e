// --cpu-offload-gb in the step time (issue 16): the offloaded weights cross the host link in
// every forward step, not overlapped with compute, so each step takes bytes / rate longer, the
// rate being the pinned host-to-device one (ReplicaConfig::host_to_device).
#include "sim/serving/serving_simulation.hpp"
#include "tests/catch.hpp"
#include "tests/serving/serving_test_support.hpp"

namespace vramsim::serving {
namespace {

using testing::LinearTimeModel;
using testing::record;
using testing::small_setup;

TEST_CASE("offloaded weights add bytes / pinned host-to-device rate to every step",
          "[serving][offload]") {
  // 10 ms steps; 1 GB streamed at 20 GB/s host to device (the device-to-host rate, 25 GB/s,
  // plays no part) adds 50 ms: 60 ms per step. One request of a
  // 16-token prompt and 4 output tokens takes 4 steps (its prefill, then 3 decodes).
  ServingSetup s = small_setup(64);
  const LinearTimeModel model(milliseconds(10), Duration::zero());
  testing::KeepAll plain;
  testing::run({record(0.0, 16, 4)}, s, model, &plain);
  s.replica.streamed_weights = Bytes(1'000'000'000);
  s.replica.host_to_device = GBps(20.0);
  testing::KeepAll offload;
  const ServingResult r = testing::run({record(0.0, 16, 4)}, s, model, &offload);
  REQUIRE(plain.requests.size() == 1);
  REQUIRE(offload.requests.size() == 1);
  CHECK(plain.requests[0].finish == SimTime::zero() + milliseconds(40));
  CHECK(r.num_steps == 4);
  CHECK(offload.requests[0].first_token == SimTime::zero() + milliseconds(60));
  CHECK(offload.requests[0].finish == SimTime::zero() + milliseconds(240));
}

}  // namespace
}  // namespace vramsim::serving
