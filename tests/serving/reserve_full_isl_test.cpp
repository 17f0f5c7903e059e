// vLLM 0.19's scheduler_reserve_full_isl (serving::SchedulerLimits::reserve_full_isl): a
// waiting request is admitted only when blocks for its whole sequence are free. Without it the
// vLLM scheduler admits a long prompt whose first chunk fits and later preempts it when a
// running request's decode needs a block (the thrash vllm-project/vllm PR #37307 describes).
#include "sim/serving/routers/builtin_routers.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"
#include "sim/serving/serving_simulation.hpp"
#include "tests/catch.hpp"
#include "tests/serving/serving_test_support.hpp"

namespace vramsim::serving {
namespace {

using testing::LinearTimeModel;
using testing::record;
using testing::small_setup;
using testing::VectorTrace;

const LinearTimeModel kModel(milliseconds(1), microseconds(10));

// 64 blocks of 16 tokens, 512 tokens per step. A: 640-token prompt (40 blocks) and 200 output
// tokens (53 blocks at the end); B arrives just after with another 640-token prompt.
ServingResult two_long_prompts(bool reserve_full_isl) {
  ServingSetup setup = small_setup(64);
  setup.scheduler = "vllm";
  setup.replica.kv.enable_prefix_caching = false;
  setup.replica.limits.reserve_full_isl = reserve_full_isl;
  VectorTrace trace({record(0.0, 640, 200), record(0.0001, 640, 4)});
  const testing::BuiltinRegistries& reg = testing::builtin_registries();
  return simulate_serving(trace, setup, kModel, reg.schedulers, reg.routers, nullptr);
}

}  // namespace

TEST_CASE("without reserve_full_isl a first chunk that fits is admitted and later preempted",
          "[serving][scheduler][reserve_full_isl]") {
  // Step 2: A's last 128 prompt tokens (40 blocks held) leave 24 free blocks, B's first 384
  // tokens take all of them; A's first decode past token 640 needs a 41st block: B goes.
  const ServingResult r = two_long_prompts(false);
  CHECK(r.metrics.num_finished == 2);
  CHECK(r.num_preemptions >= 1);
}

TEST_CASE("with reserve_full_isl the second prompt waits until its 40 blocks are free",
          "[serving][scheduler][reserve_full_isl]") {
  const ServingResult r = two_long_prompts(true);
  CHECK(r.metrics.num_finished == 2);
  CHECK(r.num_preemptions == 0);
}

}  // namespace vramsim::serving
