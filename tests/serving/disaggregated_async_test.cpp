// Async scheduling in disaggregated prefill/decode (serving::Disaggregation with
// ReplicaConfig::async_scheduling on both pools), and the per-step poll by which a decode
// instance learns that a request's KV has landed (replica.hpp, KvPoll), timed by hand for a
// synchronous and an asynchronous scheduler.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/catch.hpp"
#include "tests/serving/serving_test_checks.hpp"
#include "tests/serving/serving_test_support.hpp"

namespace vramsim::serving {
namespace {

using testing::KeepAll;
using testing::LinearTimeModel;
using testing::record;

Duration us(std::int64_t n) { return Duration::from_nanoseconds(n * 1000); }
SimTime at_us(std::int64_t n) { return SimTime::zero() + us(n); }

// One prefill and one decode instance, each with its own 100-block KV cache; a link of two
// 1 GB/s lanes with 5 us latency, 1000 bytes per prompt token (a 100-token prompt: 100,000 B,
// 50 us on the wire + 5 us); both pools schedule asynchronously or not.
ServingSetup pd_setup(const ExecutionTimeModel& prefill, bool async) {
  ServingSetup s = testing::small_setup(100);
  s.replica.async_scheduling = async;
  s.replica.check_kv_invariants = true;
  Disaggregation& d = s.disaggregation.emplace();
  d.num_prefill = 1;
  d.prefill = testing::small_setup(100).replica;
  d.prefill.async_scheduling = async;
  d.prefill_time_model = &prefill;
  d.kv_bytes_per_token = Bytes(1000);
  d.num_link_lanes = 2;
  d.link_bandwidth = GBps(1.0);
  d.link_latency = us(5);
  return s;
}

RequestRecord by_id(const KeepAll& keep, RequestId id) {
  for (const RequestRecord& rec : keep.requests) {
    if (rec.id == id) return rec;
  }
  FAIL("no record of request " << id);
  return RequestRecord{};
}

}  // namespace

TEST_CASE("one request on idle pools: the same TTFT with and without async scheduling, and "
          "back-to-back decode steps hide their host time with it",
          "[serving][disaggregated][async]") {
  // Prefill pool: 2 ms host + 20 us per token; decode pool: 1 ms host + 10 us per token
  // (LinearTimeModel: the base is StepTime::overhead, the host part).
  const LinearTimeModel prefill(us(2000), us(20));
  const LinearTimeModel decode(us(1000), us(10));
  for (const bool async : {false, true}) {
    INFO("async scheduling " << async);
    KeepAll keep;
    const ServingResult r = testing::run({record(0.0, 100, 4)}, pd_setup(prefill, async), decode,
                                         &keep);
    // Prefill [0, 4] ms (2 ms + 100 x 20 us): a first step, nothing to overlap. With async
    // scheduling the finished request is released by the plan made at its step's end, 4 ms
    // (vLLM's update_from_output returns it to the proxy then): handed over at 4 ms either
    // way. The idle decode instance reserves at once; the KV lands at 4.055 ms and the idle
    // instance's empty step polls the connector at once (kv_connector_no_forward): its first
    // step [4.055, 5.065] ms (1 ms + 10 us, nothing to overlap) samples the first token.
    // TTFT = 5.065 ms.
    REQUIRE(keep.requests.size() == 1);
    const RequestRecord& rec = keep.requests[0];
    CHECK(rec.first_token == at_us(5065));
    CHECK(r.disaggregated->transfer.quantile(0.5) == us(55));
    CHECK(r.disaggregated->reserve_wait.quantile(0.5) == Duration::zero());
    CHECK(r.disaggregated->prefill_ttft.quantile(0.5) == us(4000));
    // Then 3 decodes back to back: 1.010 ms each synchronously; with async scheduling each was
    // planned while the one before ran, so its 1 ms of host time overlaps that step's GPU time
    // and it takes max(10 us, 1 ms) = 1 ms.
    const Duration step = async ? us(1000) : us(1010);
    CHECK(rec.finish == at_us(5065) + 3 * step);
    CHECK(r.metrics.tpot.quantile(0.5) == step);
    CHECK(r.disaggregated->decode_num_steps == 4);
    CHECK(r.disaggregated->prefill_num_steps == 1);
  }
}

TEST_CASE("a KV that lands while the decode instance is busy joins the step after the poll "
          "that reports it: one step after its landing step's next one synchronously, two more "
          "with async scheduling",
          "[serving][disaggregated][async]") {
  // No host time (overhead 0), so async scheduling changes no step's length, only which step
  // a request joins. Prefill: 20 us per token (100 tokens: 2 ms); decode: 1 ms per token.
  const LinearTimeModel prefill(Duration::zero(), us(20));
  const LinearTimeModel decode(Duration::zero(), us(1000));
  // A: 100-token prompt, 20 outputs, at 0. B: 100-token prompt, 2 outputs, at 3.5 ms.
  const std::vector<TraceRecord> trace = {record(0.0, 100, 20), record(0.0035, 100, 2)};
  // Common to both: A's prefill [0, 2] ms, KV lands at 2.055 ms on the idle decode instance,
  // which sees it at once; A's decode steps, alone, are step k = [1.055 + k, 2.055 + k] ms
  // (k = 1: its last prompt token). B's prefill [3.5, 5.5] ms on the idle prefill instance;
  // handed over at 5.5 ms, during step 4 [5.055, 6.055] ms.

  SECTION("synchronous") {
    KeepAll keep;
    const ServingResult r = testing::run(trace, pd_setup(prefill, false), decode, &keep);
    // schedule() for step 5 at 6.055 ms sees B: it reserves, the transfer starts then and
    // lands at 6.110 ms. Step 5 [6.055, 7.055] polled the connector at its start, before
    // that; step 6 [7.055, 8.055] polls at 7.055 ms and its output reports B at 8.055 ms:
    // B joins step 7 [8.055, 10.055] (A's decode + B's last prompt token: 2 ms) and its
    // first token comes at 10.055 ms (TTFT 6.555 ms), its second at 12.055 ms.
    const DisaggregatedStats& d = *r.disaggregated;
    CHECK(d.reserve_wait.max() == us(555));  // 5.5 -> 6.055 ms
    CHECK(d.transfer.max() == us(610));      // 5.5 -> 6.110 ms
    const RequestRecord b = by_id(keep, 1);
    CHECK(b.first_token == at_us(10055));
    CHECK(b.first_token - b.arrival == us(6555));
    CHECK(b.finish == at_us(12055));
    CHECK(by_id(keep, 0).first_token == at_us(3055));
  }
  SECTION("async scheduling") {
    KeepAll keep;
    const ServingResult r = testing::run(trace, pd_setup(prefill, true), decode, &keep);
    // Step 5 was planned at step 4's start, 5.055 ms, before B was handed over. Step 6's
    // plan, made at step 5's start (6.055 ms), sees B: it reserves and the transfer starts
    // then, landing at 6.110 ms. Each step's poll comes when vLLM launches it, at the start of
    // the step before: step 6's at 6.055 ms (before the landing), step 7's at 7.055 ms, which
    // reports B in step 7's output at 9.055 ms. The plan made then is step 9's: B joins step
    // 9 [10.055, 12.055] ms, two steps after the synchronous case's step 7. First token at
    // 12.055 ms (TTFT 8.555 ms), second at 14.055 ms.
    const DisaggregatedStats& d = *r.disaggregated;
    CHECK(d.reserve_wait.max() == us(555));  // 5.5 -> 6.055 ms, the schedule() that saw B
    CHECK(d.transfer.max() == us(610));      // 5.5 -> 6.110 ms
    const RequestRecord b = by_id(keep, 1);
    CHECK(b.first_token == at_us(12055));
    CHECK(b.first_token - b.arrival == us(8555));
    CHECK(b.finish == at_us(14055));
    CHECK(by_id(keep, 0).first_token == at_us(3055));
  }
}

TEST_CASE("the connector is polled after the step's host time: a KV that lands within it is "
          "reported by that step, one step earlier than a poll at the step's start",
          "[serving][disaggregated][async]") {
  // vLLM polls the finished receives once the host has prepared the step and launched its
  // forward (KVConnectorModelRunnerMixin._get_kv_connector_output): here at the schedule point
  // plus StepTime::overhead (replica.hpp, KvPoll). Prefill: 20 us per token (100 tokens:
  // 2 ms), no host time; decode: 1 ms of host time + 1 ms per token. Same trace as above.
  const LinearTimeModel prefill(Duration::zero(), us(20));
  const LinearTimeModel decode(us(1000), us(1000));
  const std::vector<TraceRecord> trace = {record(0.0, 100, 20), record(0.0035, 100, 2)};
  SECTION("synchronous") {
    // A: prefill [0, 2] ms, KV lands at 2.055 ms on the idle decode instance (seen at once);
    // its steps alone take 2 ms: [2.055, 4.055], [4.055, 6.055], [6.055, 8.055] ms, ...
    // B: prefill [3.5, 5.5] ms, handed over during [4.055, 6.055]; schedule() at 6.055 ms
    // reserves, the KV lands at 6.110 ms, inside that step's host time: its poll at
    // 6.055 + 1 = 7.055 ms reports B in its output at 8.055 ms. B joins [8.055, 11.055] ms
    // (1 ms + A's decode and B's last prompt token, 2 ms): first token at 11.055 ms (TTFT
    // 7.555 ms), second at 14.055 ms. A poll at the step's start (6.055 ms, before the
    // landing) would have left B to the next step's, reported at 10.055 ms: first token at
    // 13.055 ms.
    KeepAll keep;
    const ServingResult r = testing::run(trace, pd_setup(prefill, false), decode, &keep);
    CHECK(r.disaggregated->reserve_wait.max() == us(555));  // 5.5 -> 6.055 ms
    CHECK(r.disaggregated->transfer.max() == us(610));      // 5.5 -> 6.110 ms
    const RequestRecord b = by_id(keep, 1);
    CHECK(b.first_token == at_us(11055));
    CHECK(b.first_token - b.arrival == us(7555));
    CHECK(b.finish == at_us(14055));
    CHECK(by_id(keep, 0).first_token == at_us(4055));
  }
  SECTION("async scheduling") {
    // A's first step [2.055, 4.055] ms has nothing to overlap; each later one is planned at
    // the start of the one before, its 1 ms of host time hidden under that step's 1 ms on the
    // GPU: max(1, 1) = 1 ms, [4.055, 5.055], [5.055, 6.055], [6.055, 7.055], [7.055, 8.055],
    // ... B is handed over at 5.5 ms. The plan made at 6.055 ms dates from 5.055 ms and does
    // not see B; the next, made at 7.055 ms, dates from 6.055 ms: it reserves then and the KV
    // lands at 6.110 ms. That step's poll comes 1 ms of host time after 6.055 ms, at 7.055 ms:
    // it reports B in the output of [7.055, 8.055] ms. The plan at 8.055 ms dates from
    // 7.055 ms, before that report; the one at 9.055 ms takes B: [9.055, 11.055] ms (2 ms on
    // the GPU, the host's 1 ms hidden): first token at 11.055 ms (TTFT 7.555 ms), second at
    // 13.055 ms. Polled at 6.055 ms instead, B would have been reported at 9.055 ms and
    // joined one step later, its first token at 12.055 ms.
    KeepAll keep;
    const ServingResult r = testing::run(trace, pd_setup(prefill, true), decode, &keep);
    CHECK(r.disaggregated->reserve_wait.max() == us(555));  // 5.5 -> 6.055 ms
    const RequestRecord b = by_id(keep, 1);
    CHECK(b.first_token == at_us(11055));
    CHECK(b.first_token - b.arrival == us(7555));
    CHECK(b.finish == at_us(13055));
    CHECK(by_id(keep, 0).first_token == at_us(4055));
  }
}

TEST_CASE("a KV that lands during a decode instance's last busy step is taken up at that step's "
          "end, by the empty step's poll",
          "[serving][disaggregated][async]") {
  const LinearTimeModel prefill(Duration::zero(), us(20));
  const LinearTimeModel decode(Duration::zero(), us(1000));
  // A: 100-token prompt, 3 outputs, at 0: decode steps [2.055, 3.055], [3.055, 4.055],
  // [4.055, 5.055] ms. B: 50-token prompt (1 ms prefill, 50,000 B: 25 us + 5 us), 2 outputs,
  // at 2.2 ms: prefill [2.2, 3.2] ms, handed over during A's second step.
  const std::vector<TraceRecord> trace = {record(0.0, 100, 3), record(0.0022, 50, 2)};
  SECTION("synchronous") {
    // Reserved at 4.055 ms (schedule() of A's last step), lands at 4.085 ms, after that step's
    // poll. A finishes at 5.055 ms; nothing else runs, so the empty step polls at once and B
    // joins at 5.055 ms: first token at 6.055 ms.
    KeepAll keep;
    testing::run(trace, pd_setup(prefill, false), decode, &keep);
    CHECK(by_id(keep, 0).finish == at_us(5055));
    CHECK(by_id(keep, 1).first_token == at_us(6055));
    CHECK(by_id(keep, 1).finish == at_us(7055));
  }
  SECTION("async scheduling") {
    // A's last step was planned at 3.055 ms, before B was handed over (3.2 ms); the plan at
    // 5.055 ms (A's last step's end) would be made at that step's start, 4.055 ms: it sees B,
    // reserves and starts the transfer then (lands 4.085 ms), and has nothing to run (A holds
    // its seat through it, finished). vLLM's empty step costs nothing: A's release, the poll
    // (which reports B) and the next schedule() all come at 5.055 ms: first token at
    // 6.055 ms, as synchronously.
    KeepAll keep;
    const ServingResult r = testing::run(trace, pd_setup(prefill, true), decode, &keep);
    CHECK(r.disaggregated->reserve_wait.max() == us(855));  // 3.2 -> 4.055 ms
    CHECK(by_id(keep, 0).finish == at_us(5055));
    CHECK(by_id(keep, 1).first_token == at_us(6055));
    CHECK(by_id(keep, 1).finish == at_us(7055));
  }
}

TEST_CASE("a loaded xPyD run with async scheduling finishes every request and is deterministic",
          "[serving][disaggregated][async]") {
  const LinearTimeModel prefill(us(3000), us(15), Duration::from_nanoseconds(50));
  const LinearTimeModel decode(us(800), us(10), Duration::from_nanoseconds(50));
  const std::vector<TraceRecord> records = testing::lcg_records(777, 200);
  ServingSetup s = pd_setup(prefill, true);
  s.num_replicas = 2;
  s.replica.kv.num_blocks = 80;  // small: the decode pool preempts
  s.replica.limits.max_num_seqs = 6;
  s.disaggregation->prefill.check_kv_invariants = true;
  s.router = "least-outstanding-tokens";
  KeepAll a;
  const ServingResult first = testing::run(records, s, decode, &a);
  CHECK(first.metrics.num_finished == 200);
  CHECK(first.disaggregated->num_transfers == 200);
  CHECK(first.disaggregated->decode_kv_peak_blocks <= 80);
  std::int64_t outputs = 0;
  for (const TraceRecord& t : records) outputs += t.output_tokens;
  CHECK(first.metrics.num_output_tokens == outputs);
  for (const RequestRecord& rec : a.requests) {
    CHECK(rec.first_token >= rec.arrival);
    CHECK(rec.finish >= rec.first_token);
  }
  KeepAll b;
  const ServingResult second = testing::run(records, s, decode, &b);
  testing::check_identical_request_timings(a.requests, b.requests);
  CHECK(second.num_events == first.num_events);
}

}  // namespace vramsim::serving
