// vLLM's async scheduling (serving::ReplicaConfig::async_scheduling, replica.hpp): step N+1 is
// planned while step N runs, so a request arriving during a step starts one step later, a
// finished request keeps its seat through one more plan, and the host part of a back-to-back
// step overlaps the step before it. Hand-computed on the linear test model (1 ms per token,
// `base` ms of host overhead per step); times in ms.
#include "tests/catch.hpp"
#include "tests/serving/serving_test_support.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace vramsim::serving {
namespace {

using testing::KeepAll;
using testing::LinearTimeModel;
using testing::record;
using testing::small_setup;

double ms(SimTime t) { return (t - SimTime::zero()).seconds() * 1e3; }

struct Times {
  double first_token;
  double finish;
};

// Every request's first-token and finish times (ms), by id.
std::vector<Times> times_of(const std::vector<TraceRecord>& records, bool async,
                            Duration base, std::int64_t max_num_seqs = 64) {
  ServingSetup setup = small_setup(64);
  setup.replica.kv.enable_prefix_caching = false;
  setup.replica.limits.max_num_seqs = max_num_seqs;
  setup.replica.async_scheduling = async;
  const LinearTimeModel model(base, milliseconds(1));
  KeepAll keep;
  const ServingResult res = testing::run(records, setup, model, &keep);
  REQUIRE(res.metrics.num_finished == static_cast<std::int64_t>(records.size()));
  std::vector<RequestRecord> rows = keep.requests;
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  std::vector<Times> out;
  for (const RequestRecord& r : rows) out.push_back({ms(r.first_token), ms(r.finish)});
  return out;
}

TEST_CASE("a request arriving while a step runs starts one step later with async scheduling",
          "[serving][async]") {
  // A: 10-token prompt, 3 outputs, at 0; B: 10-token prompt, 2 outputs, at 5 ms, during A's
  // prefill (0-10 ms). No host overhead, so only the admission differs.
  const std::vector<TraceRecord> trace = {record(0.0, 10, 3), record(0.005, 10, 2)};
  SECTION("synchronous: B joins the step right after A's prefill") {
    // 0-10 A prefill; 10-21 A decode + B prefill; 21-23 both decode.
    const std::vector<Times> t = times_of(trace, false, Duration::zero());
    CHECK(t[0].first_token == Approx(10.0));
    CHECK(t[0].finish == Approx(23.0));
    CHECK(t[1].first_token == Approx(21.0));
    CHECK(t[1].finish == Approx(23.0));
  }
  SECTION("async: the step after A's prefill was planned at 0 ms, without B") {
    // 0-10 A prefill; 10-11 A decode (planned at 0); 11-22 A decode + B prefill (planned at
    // 10, B seen); 22-23 B decode (A finished at 22).
    const std::vector<Times> t = times_of(trace, true, Duration::zero());
    CHECK(t[0].first_token == Approx(10.0));
    CHECK(t[0].finish == Approx(22.0));
    CHECK(t[1].first_token == Approx(22.0));
    CHECK(t[1].finish == Approx(23.0));
  }
}

TEST_CASE("a request arriving at an idle replica starts at once with async scheduling",
          "[serving][async]") {
  const std::vector<TraceRecord> trace = {record(0.0, 10, 1), record(0.050, 10, 1)};
  for (const bool async : {false, true}) {
    const std::vector<Times> t = times_of(trace, async, Duration::zero());
    CHECK(t[0].first_token == Approx(10.0));
    CHECK(t[1].first_token == Approx(60.0));
  }
}

TEST_CASE("async scheduling hides the host time of back-to-back steps behind the GPU step",
          "[serving][async]") {
  // 4 ms host overhead per step, one request: 10-token prompt, 4 outputs.
  const std::vector<TraceRecord> trace = {record(0.0, 10, 4)};
  // Synchronous: 14 (4 + 10), then decodes of 4 + 1 ms: 19, 24, 29.
  CHECK(times_of(trace, false, milliseconds(4))[0].finish == Approx(29.0));
  // Async: the first step from idle pays its host time (14); each decode after it takes
  // max(GPU 1, host 4) = 4 ms: 18, 22, 26.
  const Times t = times_of(trace, true, milliseconds(4))[0];
  CHECK(t.first_token == Approx(14.0));
  CHECK(t.finish == Approx(26.0));
}

TEST_CASE("with async scheduling a finished request's seat is given up one plan later",
          "[serving][async]") {
  // max_num_seqs 2: A (2 outputs) and C (10 outputs) run, B (1 output) waits for a seat; all
  // arrive at 0.
  const std::vector<TraceRecord> trace = {record(0.0, 10, 2), record(0.0, 10, 10),
                                          record(0.0, 10, 1)};
  // Synchronous: 0-20 A + C prefill; 20-22 A + C decode (A done); 22-33 C decode + B prefill.
  CHECK(times_of(trace, false, Duration::zero(), 2)[2].first_token == Approx(33.0));
  // Async: 0-20; 20-22 A + C decode (A done at 22); 22-23 C decode alone (planned at 20, A
  // still held its seat); 23-34 C decode + B prefill.
  const std::vector<Times> t = times_of(trace, true, Duration::zero(), 2);
  CHECK(t[0].finish == Approx(22.0));
  CHECK(t[2].first_token == Approx(34.0));
}

TEST_CASE("async scheduling frees every block and finishes every request on a busy trace",
          "[serving][async]") {
  // 40 requests over 0.2 s on 12 blocks of 16 tokens: preemptions, deferred frees and empty
  // delayed plans all happen; the KV self-check runs after every step.
  std::vector<TraceRecord> trace;
  for (int i = 0; i < 40; ++i) trace.push_back(record(0.005 * i, 20 + (i * 7) % 50, 1 + i % 9));
  ServingSetup setup = small_setup(12);
  setup.replica.limits.max_num_batched_tokens = 64;
  setup.replica.async_scheduling = true;
  setup.replica.check_kv_invariants = true;
  const LinearTimeModel model(microseconds(300), microseconds(100));
  const ServingResult a = testing::run(trace, setup, model);
  const ServingResult b = testing::run(trace, setup, model);
  CHECK(a.metrics.num_finished == 40);
  CHECK(a.num_preemptions > 0);
  // Deterministic: the same inputs give the same steps and times.
  CHECK(a.num_steps == b.num_steps);
  CHECK(a.metrics.e2e.mean_seconds() == b.metrics.e2e.mean_seconds());
}

// Pipeline parallelism of `pp` equal stages of `stage` GPU time each, and `host` of host work
// per step: a batch takes pp * stage + host to leave the last stage, and the next may enter the
// first stage stage + host after it (roofline_time_model.hpp, StepTime).
class StagedTimeModel final : public ExecutionTimeModel {
 public:
  StagedTimeModel(Duration stage, Duration host, int pp) : stage_(stage), host_(host), pp_(pp) {}
  StepTime step_time(const BatchShape&) const override {
    StepTime t;
    t.linear = pp_ * stage_;
    t.overhead = host_;
    t.total = t.linear + t.overhead;
    t.stage_interval = stage_ + host_;
    return t;
  }
  std::string describe() const override { return "staged test model"; }

 private:
  Duration stage_, host_;
  int pp_;
};

TEST_CASE("async scheduling with pipeline parallelism overlaps each batch's host time with the "
          "batches in flight",
          "[serving][async]") {
  // PP 2, 4 ms per stage, 2 ms of host work: a batch takes 10 ms, the next enters 6 ms after
  // it; overlapped (async), 8 ms and 4 ms. A (3 tokens) at 0 ms, B (3 tokens) at 1 ms.
  const std::vector<TraceRecord> trace = {record(0.0, 8, 3), record(0.001, 8, 3)};
  const StagedTimeModel model(milliseconds(4), milliseconds(2), 2);
  const auto run_pp = [&](bool async) {
    ServingSetup setup = small_setup(64);
    setup.replica.kv.enable_prefix_caching = false;
    setup.replica.pipeline_depth = 2;
    setup.replica.async_scheduling = async;
    setup.replica.check_kv_invariants = true;
    KeepAll keep;
    const ServingResult res = testing::run(trace, setup, model, &keep);
    REQUIRE(res.metrics.num_finished == 2);
    std::vector<RequestRecord> rows = keep.requests;
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    std::vector<Times> out;
    for (const RequestRecord& r : rows) out.push_back({ms(r.first_token), ms(r.finish)});
    return out;
  };
  SECTION("synchronous: every batch takes 10 ms and enters 6 ms after the last") {
    // A 0-10, B 6-16 (seen at 6), A 12-22, B 18-28, A 24-34, B 30-40.
    const std::vector<Times> t = run_pp(false);
    CHECK(t[0].first_token == Approx(10.0));
    CHECK(t[0].finish == Approx(34.0));
    CHECK(t[1].first_token == Approx(16.0));
    CHECK(t[1].finish == Approx(40.0));
  }
  SECTION("async: a batch planned while another is in flight takes 8 ms and enters 4 ms after") {
    // A 0-10 (nothing ran before it). B arrives at 1 ms, while A is in flight: vLLM plans it
    // then (its queue of 2 has room) and it enters when A's stage interval ends, its host work
    // done beside A's: B 6-14. Each later batch is planned as the last one completes, its host
    // work beside the other in flight: A 10-18, B 14-22, A 18-26, B 22-30.
    const std::vector<Times> t = run_pp(true);
    CHECK(t[0].first_token == Approx(10.0));
    CHECK(t[0].finish == Approx(26.0));
    CHECK(t[1].first_token == Approx(14.0));
    CHECK(t[1].finish == Approx(30.0));
  }
}

}  // namespace
}  // namespace vramsim::serving
