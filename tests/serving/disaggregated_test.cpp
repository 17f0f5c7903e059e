// Disaggregated prefill/decode (serving::Disaggregation): a hand-timed request through both
// pools and the KV link, and a loaded run's invariants.
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

// `num_prefill` prefill instances with their own KV cache and model; the setup's num_replicas
// decode instances; a link of 1 GB/s per lane with 5 us latency, 1000 bytes per prompt token.
ServingSetup disaggregated_setup(std::int32_t num_prefill, std::int32_t num_decode,
                                 std::int64_t decode_blocks, const ExecutionTimeModel& prefill,
                                 std::int32_t lanes = 2) {
  ServingSetup s = testing::small_setup(decode_blocks);
  s.num_replicas = num_decode;
  Disaggregation& d = s.disaggregation.emplace();
  d.num_prefill = num_prefill;
  d.prefill = testing::small_setup(200).replica;
  d.prefill_time_model = &prefill;
  d.kv_bytes_per_token = Bytes(1000);
  d.num_link_lanes = lanes;
  d.link_bandwidth = GBps(1.0);
  d.link_latency = us(5);
  return s;
}

TEST_CASE("one disaggregated request: TTFT is its prefill step, the KV transfer and the decode "
          "instance's first step",
          "[serving][disaggregated]") {
  // Prefill pool: 2 ms + 20 us per token; decode pool: 1 ms + 10 us per token.
  const LinearTimeModel prefill(us(2000), us(20));
  const LinearTimeModel decode(us(1000), us(10));
  const ServingSetup s = disaggregated_setup(1, 1, 100, prefill);
  KeepAll keep;
  const ServingResult r = testing::run({record(0.0, 100, 4)}, s, decode, &keep);

  // Prefill: 100 prompt tokens in one step, 2 ms + 100 * 20 us = 4 ms.
  // Transfer: 100 tokens * 1000 B = 100,000 B over 2 lanes of 1 GB/s: 50 us, + 5 us latency.
  // Decode: the last prompt token (1 ms + 10 us) samples the first token, then 3 decodes.
  const Duration prefill_step = us(4000);
  const Duration transfer = us(55);
  const Duration step = us(1010);
  REQUIRE(r.disaggregated.has_value());
  const DisaggregatedStats& d = *r.disaggregated;
  CHECK(d.num_transfers == 1);
  CHECK(d.transfer_bytes == 100'000);
  CHECK(d.transfer.quantile(0.5) == transfer);
  CHECK(d.prefill_ttft.quantile(0.5) == prefill_step);
  REQUIRE(keep.requests.size() == 1);
  const RequestRecord& rec = keep.requests[0];
  CHECK(rec.status == RequestStatus::kFinished);
  CHECK(rec.replica == 0);
  CHECK(rec.output_tokens == 4);
  CHECK(rec.first_token - rec.arrival == prefill_step + transfer + step);
  CHECK(rec.finish - rec.first_token == 3 * step);
  CHECK(r.metrics.ttft.quantile(0.5) == prefill_step + transfer + step);
  CHECK(r.metrics.tpot.quantile(0.5) == step);
  CHECK(r.metrics.num_output_tokens == 4);
  // The decode instance holds the prompt and every generated token but the last: 103 tokens.
  CHECK(d.decode_kv_peak_blocks == 7);
  CHECK(d.prefill_kv_peak_blocks == 7);  // 100 prompt tokens
  CHECK(d.prefill_num_steps == 1);
  CHECK(d.decode_num_steps == 4);
  // Each pool computed for its steps' time over the span arrival -> last finish.
  const double span = (rec.finish - rec.arrival).seconds();
  CHECK(r.prefill_utilization() == Approx(prefill_step.seconds() / span));
  CHECK(r.decode_utilization() == Approx(4 * step.seconds() / span));
}

TEST_CASE("transfers into one decode instance queue on its link, the next one's latency "
          "overlapping",
          "[serving][disaggregated]") {
  const LinearTimeModel prefill(us(2000), us(20));
  const LinearTimeModel decode(us(1000), us(10));
  // One lane: 100,000 B take 100 us each; both prompts end their prefill in the same step.
  const ServingSetup s = disaggregated_setup(1, 1, 100, prefill, 1);
  const ServingResult r =
      testing::run({record(0.0, 100, 2), record(0.0, 100, 2)}, s, decode);
  const DisaggregatedStats& d = *r.disaggregated;
  CHECK(d.num_transfers == 2);
  CHECK(d.transfer.min() == us(105));
  CHECK(d.transfer.max() == us(205));
}

TEST_CASE("a decode instance reserves a request's blocks before its KV crosses the link, so a "
          "full decode pool holds the transfer back",
          "[serving][disaggregated]") {
  const LinearTimeModel prefill(us(2000), us(20));
  const LinearTimeModel decode(us(1000), us(10));
  // 8 decode blocks of 16 tokens: a 100-token prompt reserves 7 (its 103 tokens fit them).
  ServingSetup s = disaggregated_setup(1, 1, 8, prefill);
  s.replica.check_kv_invariants = true;
  KeepAll keep;
  const ServingResult r =
      testing::run({record(0.0, 100, 4), record(0.0, 100, 4)}, s, decode, &keep);

  // Both prompts in one prefill step: 2 ms + 200 x 20 us = 6 ms.
  // Request 0 reserves 7 blocks at 6 ms; its KV takes 50 us on 2 lanes + 5 us; its first token
  // comes one decode step (1 ms + 10 us) later, at 7.065 ms, its last 3 steps later, at
  // 10.095 ms, when its blocks are freed.
  // Request 1 finds one free block at 6 ms and waits: its blocks are reserved at 10.095 ms and
  // its KV lands at 10.150 ms; first token at 11.160 ms, last at 14.190 ms.
  const DisaggregatedStats& d = *r.disaggregated;
  CHECK(d.num_transfers == 2);
  CHECK(d.num_reserve_waits == 1);
  CHECK(d.reserve_wait.min() == Duration::zero());
  CHECK(d.reserve_wait.max() == us(4095));
  CHECK(d.transfer.min() == us(55));
  CHECK(d.transfer.max() == us(4150));
  CHECK(d.decode_kv_peak_blocks == 7);
  REQUIRE(keep.requests.size() == 2);
  CHECK(keep.requests[0].id == 0);
  CHECK(keep.requests[0].first_token == SimTime::zero() + us(7065));
  CHECK(keep.requests[0].finish == SimTime::zero() + us(10095));
  CHECK(keep.requests[1].id == 1);
  CHECK(keep.requests[1].first_token == SimTime::zero() + us(11160));
  CHECK(keep.requests[1].finish == SimTime::zero() + us(14190));
  CHECK(keep.requests[1].num_preemptions == 0);
}

TEST_CASE("a request handed to a decode instance at max_num_seqs reserves no blocks and starts "
          "no transfer until a running request finishes, at that step's end",
          "[serving][disaggregated]") {
  const LinearTimeModel prefill(us(2000), us(20));
  const LinearTimeModel decode(us(1000), us(10));
  ServingSetup s = disaggregated_setup(1, 1, 100, prefill);  // plenty of blocks
  s.replica.limits.max_num_seqs = 2;
  KeepAll keep;
  // Requests 0 and 1 (outputs 10 and 20) prefill together; request 2 arrives at 10 ms.
  const ServingResult r = testing::run(
      {record(0.0, 100, 10), record(0.0, 100, 20), record(0.010, 100, 4)}, s, decode, &keep);

  // Prefill of 0 and 1: 2 ms + 200 x 20 us = 6 ms. The decode instance is idle: both reserve at
  // 6 ms; 0 lands at 6.055 ms (50 us + 5 us), 1 at 6.105 ms (its 50 us follow 0's).
  // Decode steps (a landed KV is reported by the first step that polls at or after it; a step
  // polls after its 1 ms of host time: replica.hpp, KvPoll): request 0 lands on the idle
  // instance, which sees it at once: [6.055, 7.065] ms its last prompt token (1 ms + 10 us),
  // polled at 7.055 ms, after request 1 landed: it reports request 1. From 7.065 ms both,
  // 1.020 ms a step: request 0's k-th token at 7.065 + (k - 1) x 1.020 ms, its 10th (last) at
  // 16.245 ms; request 1's first at 8.085 ms.
  // (With the poll at the step's start, 6.055 ms, request 1 was reported by the next step and
  // joined at 8.075 ms, one step later; before the per-step poll it joined at 7.065 ms.)
  // Request 2: prefill [10, 14] ms (2 ms + 100 x 20 us). At 14 ms the decode instance is in its
  // step [13.185, 14.205] ms; at 14.205 and 15.225 ms both seats are taken (max_num_seqs 2):
  // no reservation. At 16.245 ms request 0 has finished; the step planned then runs request 1
  // alone, a seat is free: request 2 reserves and its KV lands at 16.300 ms, within that step's
  // host time [16.245, 17.245] ms: that step [16.245, 17.255] ms reports it, so it joins at
  // 17.255 ms and its first token comes at 18.275 ms.
  const DisaggregatedStats& d = *r.disaggregated;
  CHECK(d.num_transfers == 3);
  CHECK(d.num_reserve_waits == 1);
  CHECK(d.num_reserve_seat_waits == 1);
  CHECK(d.reserve_wait.min() == Duration::zero());
  CHECK(d.reserve_wait.max() == us(2245));  // 14 -> 16.245 ms
  CHECK(d.transfer.max() == us(2300));      // 14 -> 16.300 ms
  REQUIRE(keep.requests.size() == 3);
  const auto by_id = [&](RequestId id) {
    for (const RequestRecord& rec : keep.requests) {
      if (rec.id == id) return rec;
    }
    FAIL("no record of request " << id);
    return RequestRecord{};
  };
  CHECK(by_id(0).first_token == SimTime::zero() + us(7065));
  CHECK(by_id(0).finish == SimTime::zero() + us(16245));
  CHECK(by_id(1).first_token == SimTime::zero() + us(8085));
  CHECK(by_id(2).first_token == SimTime::zero() + us(18275));
  // Request 1's 9th token came at 16.245 ms, its 10th alone at 17.255 ms, the 11th to 14th
  // with request 2 (whose 4th and last is at 21.335 ms), the 15th to 20th alone.
  CHECK(by_id(2).finish == SimTime::zero() + us(18275 + 3 * 1020));
  CHECK(by_id(1).finish == SimTime::zero() + us(18275 + 3 * 1020 + 6 * 1010));
}

TEST_CASE("a request handed over in the middle of a decode step reserves its blocks, and starts "
          "its transfer, at that step's end",
          "[serving][disaggregated]") {
  const LinearTimeModel prefill(us(2000), us(20));
  const LinearTimeModel decode(us(5000), us(10));  // long steps: 5 ms + 10 us per token
  const ServingSetup s = disaggregated_setup(1, 1, 100, prefill);
  KeepAll keep;
  const ServingResult r =
      testing::run({record(0.0, 100, 3), record(0.002, 100, 2)}, s, decode, &keep);

  // Request 0: prefill [0, 4] ms; the decode instance is idle: it reserves at 4 ms, lands at
  // 4.055 ms; decode step [4.055, 9.065] ms computes its last prompt token.
  // Request 1 waits for the prefill instance: prefill [4, 8] ms, handed over at 8 ms, in the
  // middle of that step. It reserves at the step's end, 9.065 ms, and lands at 9.120 ms, within
  // the 5 ms of host time of the next step [9.065, 14.075] ms (request 0 alone), which polls the
  // connector after it, at 14.065 ms, and reports it (replica.hpp, KvPoll): it joins at
  // 14.075 ms with request 0's last token, a step of 5.020 ms: first token at 19.095 ms, its
  // second and last alone at 24.105 ms. (With the poll at the step's start, 9.065 ms, it was
  // reported by the step after and joined at 19.085 ms: first token 24.095 ms.)
  const DisaggregatedStats& d = *r.disaggregated;
  CHECK(d.num_reserve_waits == 0);  // it was never held back at a scheduling point
  CHECK(d.reserve_wait.min() == Duration::zero());
  CHECK(d.reserve_wait.max() == us(1065));  // 8 -> 9.065 ms
  CHECK(d.transfer.min() == us(55));
  CHECK(d.transfer.max() == us(1120));  // 8 -> 9.120 ms
  REQUIRE(keep.requests.size() == 2);
  CHECK(keep.requests[0].id == 0);
  CHECK(keep.requests[0].first_token == SimTime::zero() + us(9065));
  CHECK(keep.requests[0].finish == SimTime::zero() + us(9065 + 5010 + 5020));
  CHECK(keep.requests[1].id == 1);
  CHECK(keep.requests[1].first_token == SimTime::zero() + us(19095));
  CHECK(keep.requests[1].finish == SimTime::zero() + us(19095 + 5010));
}

TEST_CASE("an idle decode instance reserves a request's blocks and starts its transfer at "
          "hand-over",
          "[serving][disaggregated]") {
  const LinearTimeModel prefill(us(2000), us(20));
  const LinearTimeModel decode(us(1000), us(10));
  const ServingSetup s = disaggregated_setup(1, 1, 100, prefill);
  KeepAll keep;
  // Request 0 is done at 4.055 + 2 x 1.010 = 6.075 ms; request 1 arrives at 20 ms.
  const ServingResult r =
      testing::run({record(0.0, 100, 2), record(0.020, 100, 2)}, s, decode, &keep);

  // Request 1: prefill [20, 24] ms; the decode instance has been idle since 6.075 ms: reserved
  // at 24 ms, lands at 24.055 ms, first token at 25.065 ms.
  const DisaggregatedStats& d = *r.disaggregated;
  CHECK(d.num_reserve_waits == 0);
  CHECK(d.reserve_wait.max() == Duration::zero());
  CHECK(d.transfer.min() == us(55));
  CHECK(d.transfer.max() == us(55));
  REQUIRE(keep.requests.size() == 2);
  CHECK(keep.requests[0].finish == SimTime::zero() + us(6075));
  CHECK(keep.requests[1].first_token == SimTime::zero() + us(25065));
}

TEST_CASE("a loaded xPyD run finishes every request, keeps the decode KV within its pool and is "
          "deterministic",
          "[serving][disaggregated]") {
  const LinearTimeModel prefill(us(3000), us(15), Duration::from_nanoseconds(50));
  const LinearTimeModel decode(us(800), us(10), Duration::from_nanoseconds(50));
  const std::vector<TraceRecord> records = testing::lcg_records(12345, 300);
  ServingSetup s = disaggregated_setup(2, 3, 80, prefill);
  s.replica.check_kv_invariants = true;
  s.disaggregation->prefill.check_kv_invariants = true;
  s.router = "least-outstanding-tokens";

  KeepAll a;
  const ServingResult first = testing::run(records, s, decode, &a);
  const DisaggregatedStats& d = *first.disaggregated;
  CHECK(first.metrics.num_finished == 300);
  CHECK(first.metrics.num_rejected == 0);
  CHECK(d.num_transfers == 300);
  CHECK(d.decode_kv_peak_blocks <= 80);
  CHECK(d.decode_num_preemptions > 0);  // 80 blocks per decode instance: it must preempt
  CHECK(first.num_preemptions == d.decode_num_preemptions);
  std::int64_t outputs = 0;
  for (const TraceRecord& t : records) outputs += t.output_tokens;
  CHECK(first.metrics.num_output_tokens == outputs);
  std::vector<RequestId> ids;
  for (const RequestRecord& rec : a.requests) {
    ids.push_back(rec.id);
    CHECK(rec.replica >= 0);
    CHECK(rec.replica < 3);
    CHECK(rec.first_token >= rec.arrival);
    CHECK(rec.finish >= rec.first_token);
  }
  std::sort(ids.begin(), ids.end());
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
  CHECK(first.prefill_utilization() > 0.0);
  CHECK(first.prefill_utilization() <= 1.0);
  CHECK(first.decode_utilization() > 0.0);
  CHECK(first.decode_utilization() <= 1.0);

  KeepAll b;
  const ServingResult second = testing::run(records, s, decode, &b);
  testing::check_identical_request_timings(a.requests, b.requests);
  CHECK(second.num_events == first.num_events);
  CHECK(second.disaggregated->transfer.mean_seconds() == d.transfer.mean_seconds());
  CHECK(second.disaggregated->reserve_wait.mean_seconds() == d.reserve_wait.mean_seconds());
  CHECK(second.disaggregated->num_reserve_waits == d.num_reserve_waits);

  SECTION("with 4 seats per decode instance, hand-overs wait for seats, every request still "
          "finishes, and the run is deterministic") {
    s.replica.limits.max_num_seqs = 4;
    KeepAll c;
    const ServingResult seats = testing::run(records, s, decode, &c);
    const DisaggregatedStats& ds = *seats.disaggregated;
    CHECK(seats.metrics.num_finished == 300);
    CHECK(ds.num_transfers == 300);
    CHECK(ds.num_reserve_seat_waits > 0);
    CHECK(ds.num_reserve_seat_waits <= ds.num_reserve_waits);
    CHECK(ds.num_reserve_waits <= 300);
    CHECK(ds.reserve_wait.mean_seconds() > d.reserve_wait.mean_seconds());
    KeepAll e;
    const ServingResult again = testing::run(records, s, decode, &e);
    testing::check_identical_request_timings(c.requests, e.requests);
    CHECK(again.num_events == seats.num_events);
    CHECK(again.disaggregated->num_reserve_waits == ds.num_reserve_waits);
    CHECK(again.disaggregated->num_reserve_seat_waits == ds.num_reserve_seat_waits);
    CHECK(again.disaggregated->reserve_wait.mean_seconds() == ds.reserve_wait.mean_seconds());
  }
}

}  // namespace
}  // namespace vramsim::serving
