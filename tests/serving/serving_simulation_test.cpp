// End-to-end behaviour of the serving simulation on tiny worlds with a linear step-time model.
#include "sim/serving/serving_simulation.hpp"

#include "sim/core/rng.hpp"
#include "sim/serving/routers/builtin_routers.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"
#include "tests/catch.hpp"
#include "tests/serving/serving_test_checks.hpp"
#include "tests/serving/serving_test_support.hpp"

#include <map>
#include <set>

namespace vramsim::serving {
namespace {

using testing::KeepAll;
using testing::LinearTimeModel;
using testing::record;
using testing::run;
using testing::small_setup;
using testing::VectorTrace;


std::vector<TraceRecord> poisson_records(std::int64_t n, double rate, std::int64_t prompt_max,
                                         std::int64_t output_max, std::uint64_t seed) {
  RngStream rng = RngStreams(seed).stream("test-arrivals");
  std::vector<TraceRecord> out;
  double t = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    t += rng.exponential(rate);
    out.push_back(record(t, rng.uniform_int(1, prompt_max), rng.uniform_int(1, output_max)));
  }
  return out;
}

const LinearTimeModel kModel(milliseconds(1), microseconds(10));

TEST_CASE("one request alone: TTFT is its prefill step, then one decode step per token",
          "[serving][sim]") {
  KeepAll keep;
  const ServingResult res = run({record(0.5, 100, 5)}, small_setup(100), kModel, &keep);
  REQUIRE(keep.requests.size() == 1);
  const RequestRecord& r = keep.requests[0];
  // Prefill: 1 ms + 100 x 10 us = 2 ms. Decodes: 4 x (1 ms + 10 us).
  CHECK((r.first_token - r.arrival).nanoseconds() == 2'000'000);
  CHECK((r.finish - r.arrival).nanoseconds() == 2'000'000 + 4 * 1'010'000);
  CHECK((r.first_scheduled - r.arrival).nanoseconds() == 0);
  CHECK(res.metrics.num_finished == 1);
  CHECK(res.metrics.num_output_tokens == 5);
  CHECK(res.metrics.ttft.mean_seconds() == Approx(0.002));
  CHECK(res.num_preemptions == 0);
  CHECK(res.num_steps == 5);
}

TEST_CASE("every request finishes exactly once with the trace's output tokens", "[serving][sim]") {
  const auto records = poisson_records(400, 20.0, 600, 120, 7);
  std::int64_t expected_output = 0;
  for (const auto& r : records) expected_output += r.output_tokens;
  for (const char* sched : {"vllm", "sarathi", "static"}) {
    DYNAMIC_SECTION("scheduler " << sched) {
      ServingSetup setup = small_setup(400);
      setup.scheduler = sched;
      setup.replica.limits.chunk_size = 256;
      KeepAll keep;
      const ServingResult res = run(records, setup, kModel, &keep);
      REQUIRE(keep.requests.size() == records.size());
      std::set<RequestId> ids;
      for (const RequestRecord& r : keep.requests) {
        CHECK(r.status == RequestStatus::kFinished);
        ids.insert(r.id);
        CHECK(r.first_token >= r.first_scheduled);
        CHECK(r.finish >= r.first_token);
      }
      CHECK(ids.size() == records.size());
      CHECK(res.metrics.num_finished == static_cast<std::int64_t>(records.size()));
      CHECK(res.metrics.num_output_tokens == expected_output);
      CHECK(res.kv_peak_blocks <= 400);
    }
  }
}

TEST_CASE("ample KV means no preemptions, and a small cache preempts and still finishes everything",
          "[serving][sim][kv]") {
  const auto records = poisson_records(300, 50.0, 500, 200, 3);
  const ServingResult ample = run(records, small_setup(100000), kModel);
  CHECK(ample.num_preemptions == 0);
  CHECK(ample.metrics.num_finished == 300);

  const ServingResult tight = run(records, small_setup(60), kModel);
  CHECK(tight.num_preemptions > 0);
  CHECK(tight.metrics.num_finished == 300);
  CHECK(tight.kv_peak_blocks <= 60);
  CHECK(tight.metrics.e2e.mean_seconds() > ample.metrics.e2e.mean_seconds());
}

TEST_CASE("swap preemption moves blocks to the host and back", "[serving][sim][kv]") {
  ServingSetup setup = small_setup(60);
  setup.replica.limits.preemption = PreemptionMode::kSwap;
  setup.replica.kv.num_host_blocks = 1000;
  const auto records = poisson_records(200, 50.0, 500, 200, 3);
  const ServingResult res = run(records, setup, kModel);
  CHECK(res.num_preemptions > 0);
  CHECK(res.metrics.num_finished == 200);
}

TEST_CASE("requests longer than max_model_len or the whole cache are rejected, not dropped",
          "[serving][sim]") {
  ServingSetup setup = small_setup(10);  // 160 tokens of KV
  setup.max_model_len = 150;
  KeepAll keep;
  const ServingResult res =
      run({record(0.0, 100, 10), record(0.1, 140, 20), record(0.2, 120, 60)}, setup, kModel, &keep);
  CHECK(res.metrics.num_finished == 1);
  CHECK(res.metrics.num_rejected == 2);
  REQUIRE(keep.requests.size() == 3);
  for (const RequestRecord& r : keep.requests) {
    CHECK(r.status == (r.id == 0 ? RequestStatus::kFinished : RequestStatus::kRejected));
  }
}

TEST_CASE("Little's law holds on a steady-state run within 2%", "[serving][sim][validation]") {
  // L = lambda W (Little 1961): time-averaged requests in the system equals the arrival rate
  // times the mean time in the system, for a stable queue observed over a long window.
  const auto records = poisson_records(20000, 30.0, 400, 60, 11);
  const ServingResult res = run(records, small_setup(4000), kModel);
  const double lambda = static_cast<double>(res.metrics.num_arrived) / res.duration_s();
  const double w = res.metrics.e2e.mean_seconds();
  CHECK(res.mean_requests_in_system() == Approx(lambda * w).epsilon(0.02));
}

TEST_CASE("the same trace and seed give identical per-request rows", "[serving][sim]") {
  const auto records = poisson_records(500, 40.0, 800, 100, 5);
  ServingSetup setup = small_setup(300);
  setup.num_replicas = 3;
  setup.router = "least-outstanding-tokens";
  KeepAll a;
  KeepAll b;
  run(records, setup, kModel, &a);
  run(records, setup, kModel, &b);
  testing::check_identical_request_timings(a.requests, b.requests);
}

TEST_CASE("round-robin spreads requests evenly over replicas", "[serving][router]") {
  const auto records = poisson_records(90, 10.0, 100, 10, 2);
  ServingSetup setup = small_setup(1000);
  setup.num_replicas = 3;
  KeepAll keep;
  run(records, setup, kModel, &keep);
  std::map<std::int32_t, int> per_replica;
  for (const RequestRecord& r : keep.requests) ++per_replica[r.replica];
  CHECK(per_replica == std::map<std::int32_t, int>{{0, 30}, {1, 30}, {2, 30}});
}

TEST_CASE("static batching admits nothing while a batch runs", "[serving][sched]") {
  ServingSetup setup = small_setup(1000);
  setup.scheduler = "static";
  KeepAll keep;
  // Request 1 arrives while request 0 (10 output tokens) decodes: it waits for the batch to end.
  run({record(0.0, 50, 10), record(0.003, 50, 2)}, setup, kModel, &keep);
  REQUIRE(keep.requests.size() == 2);
  const auto& first = keep.requests[0].id == 0 ? keep.requests[0] : keep.requests[1];
  const auto& second = keep.requests[0].id == 0 ? keep.requests[1] : keep.requests[0];
  CHECK(second.first_scheduled == first.finish);
}

TEST_CASE("vllm schedules decodes together with a new prefill, and chunking splits long prompts",
          "[serving][sched]") {
  ServingSetup setup = small_setup(1000);
  setup.replica.limits.max_num_batched_tokens = 256;
  KeepAll keep;
  const ServingResult res = run({record(0.0, 1000, 3)}, setup, kModel, &keep);
  // 1000 prompt tokens in chunks of 256: 4 prefill steps, then 2 decodes.
  CHECK(res.num_steps == 6);
  REQUIRE(keep.requests.size() == 1);
  // Chunks: 3 x (1 ms + 256 x 10 us) + (1 ms + 232 x 10 us).
  CHECK((keep.requests[0].first_token - keep.requests[0].arrival).nanoseconds() ==
        3 * 3'560'000 + 3'320'000);
}

TEST_CASE("vllm cuts a long prompt to long_prefill_token_threshold while decodes keep going",
          "[serving][sched]") {
  // vLLM's --long-prefill-token-threshold (vllm/v1/core/sched/scheduler.py: num_new_tokens is
  // cut to it when 0 < threshold < num_new_tokens, for running and waiting requests alike).
  ServingSetup setup = small_setup(1000);
  setup.replica.limits.long_prefill_token_threshold = 300;
  KeepAll keep;
  const ServingResult res = run({record(0.0, 1000, 3), record(0.0, 10, 8)}, setup, kModel, &keep);
  // Step 1 admits 300 of the long prompt and all 10 of the short one; the long prompt then
  // takes 300, 300 and 100 tokens in steps 2-4, beside the short request's decodes.
  REQUIRE_FALSE(keep.samples.empty());
  for (const TimeSample& s : keep.samples) CHECK(s.batch_tokens <= 300 + 10);
  REQUIRE(keep.requests.size() == 2);
  const auto& long_prompt = keep.requests[0].prompt_tokens == 1000 ? keep.requests[0]
                                                                   : keep.requests[1];
  // Four prefill steps (1 ms overhead each, 10 us per token of the whole batch) before the
  // long prompt's first token.
  CHECK((long_prompt.first_token - long_prompt.arrival).nanoseconds() ==
        4 * 1'000'000 + (310 + 301 + 301 + 101) * 10'000);
  ServingSetup off = small_setup(1000);
  KeepAll once;
  run({record(0.0, 1000, 3), record(0.0, 10, 8)}, off, kModel, &once);
  const auto& whole = once.requests[0].prompt_tokens == 1000 ? once.requests[0] : once.requests[1];
  // Without it the long prompt takes the whole 512-token budget of step 1, and the short request
  // waits for step 2 (488 + 10 tokens).
  CHECK((whole.first_token - whole.arrival).nanoseconds() == 2 * 1'000'000 + (512 + 498) * 10'000);
  const auto& short_off = once.requests[0].prompt_tokens == 10 ? once.requests[0] : once.requests[1];
  CHECK(short_off.first_scheduled > short_off.arrival);
  CHECK(res.metrics.num_finished == 2);
}

TEST_CASE("sarathi never puts more than chunk_size tokens in a step", "[serving][sched]") {
  ServingSetup setup = small_setup(2000);
  setup.scheduler = "sarathi";
  setup.replica.limits.chunk_size = 128;
  KeepAll keep;
  run(poisson_records(100, 40.0, 900, 50, 9), setup, kModel, &keep);
  REQUIRE_FALSE(keep.samples.empty());
  for (const TimeSample& s : keep.samples) CHECK(s.batch_tokens <= 128);
}

TEST_CASE("pipeline depth 2 overlaps batches and raises throughput", "[serving][sim]") {
  const auto records = poisson_records(300, 200.0, 300, 50, 4);
  const LinearTimeModel pp2(milliseconds(1), microseconds(10), Duration::zero(), 2);
  ServingSetup one = small_setup(4000);
  ServingSetup two = one;
  two.replica.pipeline_depth = 2;
  const ServingResult a = run(records, one, pp2);
  const ServingResult b = run(records, two, pp2);
  CHECK(b.metrics.num_finished == 300);
  CHECK(b.duration_s() < a.duration_s());
}

TEST_CASE("an unknown scheduler or router names the field and the valid choices",
          "[serving][sim]") {
  ServingSetup setup = small_setup(100);
  setup.scheduler = "fcsf";
  CHECK_THROWS_WITH(run({record(0, 1, 1)}, setup, kModel),
                    Catch::Contains("unknown scheduler 'fcsf'; valid: vllm, sarathi, static"));
}

}  // namespace
}  // namespace vramsim::serving
