// Disaggregated prefill/decode (serving::Disaggregation): a hand-timed request through both
// pools and the KV link, and a loaded run's invariants.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/catch.hpp"
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

TEST_CASE("a loaded xPyD run finishes every request, keeps the decode KV within its pool and is "
          "deterministic",
          "[serving][disaggregated]") {
  const LinearTimeModel prefill(us(3000), us(15), Duration::from_nanoseconds(50));
  const LinearTimeModel decode(us(800), us(10), Duration::from_nanoseconds(50));
  std::vector<TraceRecord> records;
  std::uint64_t x = 12345;
  for (int i = 0; i < 300; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto prompt = static_cast<std::int64_t>(20 + (x >> 33) % 400);
    const auto output = static_cast<std::int64_t>(1 + (x >> 17) % 120);
    records.push_back(record(0.002 * i, prompt, output));
  }
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
  REQUIRE(b.requests.size() == a.requests.size());
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    CHECK(a.requests[i].id == b.requests[i].id);
    CHECK(a.requests[i].replica == b.requests[i].replica);
    CHECK(a.requests[i].first_token == b.requests[i].first_token);
    CHECK(a.requests[i].finish == b.requests[i].finish);
  }
  CHECK(second.num_events == first.num_events);
  CHECK(second.disaggregated->transfer.mean_seconds() == d.transfer.mean_seconds());
}

}  // namespace
}  // namespace vramsim::serving
