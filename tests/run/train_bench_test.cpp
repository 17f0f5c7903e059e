// The benchmark behind `vramsim bench train` runs and is deterministic in what it simulates.
#include "sim/run/train_bench.hpp"

#include "tests/catch.hpp"

TEST_CASE("the training benchmark simulates the 70B step and a plan sweep", "[training][bench]") {
  const auto r = vramsim::run::run_train_bench(VRAMSIM_SOURCE_ROOT, 50);
  CHECK(r.step_num_ops > 1000);
  CHECK(r.step_simulated_s > 0.0);
  CHECK(r.sweep_num_plans == 50);
  const auto again = vramsim::run::run_train_bench(VRAMSIM_SOURCE_ROOT, 50);
  CHECK(again.step_simulated_s == r.step_simulated_s);
  CHECK(again.sweep_num_fit == r.sweep_num_fit);
}
