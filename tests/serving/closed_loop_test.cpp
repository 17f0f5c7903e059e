// Closed-loop clients (ServingSetup::clients): N slots in front of the server, as
// `vllm bench serve --max-concurrency N` drives one (vllm/benchmarks/serve.py), on tiny worlds
// with the linear step-time model, times asserted exactly.
#include "sim/serving/serving_simulation.hpp"

#include "sim/serving/routers/builtin_routers.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"
#include "tests/catch.hpp"
#include "tests/serving/serving_test_checks.hpp"
#include "tests/serving/serving_test_support.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace vramsim::serving {
namespace {

using testing::KeepAll;
using testing::LinearTimeModel;
using testing::record;
using testing::run;
using testing::small_setup;
using testing::VectorTrace;


// 1 ms per step plus 10 us per token: a 100-token prompt alone is a 2 ms step, a lone decode
// 1.01 ms.
const LinearTimeModel kModel(milliseconds(1), microseconds(10));

ServingSetup closed(std::int32_t n, Duration think = Duration::zero()) {
  ServingSetup s = small_setup(4096);
  s.clients.max_concurrency = n;
  s.clients.think_time = think;
  s.clients.send_all_at_start = true;
  return s;
}

std::vector<TraceRecord> same_requests(std::int64_t n, std::int64_t prompt, std::int64_t output) {
  std::vector<TraceRecord> out;
  for (std::int64_t i = 0; i < n; ++i) out.push_back(record(0.001 * static_cast<double>(i), prompt, output));
  return out;
}

// The largest number of requests sent and not finished at any time, from the rows (a finish
// at t frees the slot a send at t takes).
std::int64_t peak_in_flight(const std::vector<RequestRecord>& rows) {
  std::vector<std::pair<std::int64_t, int>> events;
  for (const RequestRecord& r : rows) {
    if (r.status != RequestStatus::kFinished) continue;
    events.emplace_back(r.arrival.nanoseconds(), +1);
    events.emplace_back(r.finish.nanoseconds(), -1);
  }
  std::sort(events.begin(), events.end());  // at equal times -1 sorts first
  std::int64_t now = 0;
  std::int64_t peak = 0;
  for (const auto& e : events) peak = std::max(peak, now += e.second);
  return peak;
}

const RequestRecord& by_id(const std::vector<RequestRecord>& rows, RequestId id) {
  for (const RequestRecord& r : rows) {
    if (r.id == id) return r;
  }
  FAIL("no request " << id);
  return rows.front();
}

TEST_CASE("one closed-loop client sends each request when the previous one ends",
          "[serving][closed-loop]") {
  KeepAll keep;
  const ServingResult res = run(same_requests(3, 100, 5), closed(1), kModel, &keep);
  REQUIRE(keep.requests.size() == 3);
  // Each request alone: 2 ms prefill + 4 decodes of 1.01 ms = 6.04 ms; the trace's arrivals
  // (0, 1, 2 ms) are ignored as vLLM's default --request-rate inf does.
  for (RequestId i = 0; i < 3; ++i) {
    const RequestRecord& r = by_id(keep.requests, i);
    CHECK(r.arrival.nanoseconds() == i * 6'040'000);
    CHECK((r.first_token - r.arrival).nanoseconds() == 2'000'000);
    CHECK((r.finish - r.arrival).nanoseconds() == 6'040'000);
  }
  CHECK(res.peak_requests_in_flight == 1);
  CHECK(res.duration_s() == Approx(3 * 0.00604));
  // Request 0 is sent at once; 1 waits 6.04 ms, 2 waits 12.08 ms for the client.
  CHECK(res.client_wait.mean_seconds() == Approx((0.00604 + 0.01208) / 3));
}

TEST_CASE("a client's think time delays its next request exactly", "[serving][closed-loop]") {
  KeepAll keep;
  run(same_requests(3, 100, 5), closed(1, milliseconds(3)), kModel, &keep);
  REQUIRE(keep.requests.size() == 3);
  for (RequestId i = 0; i < 3; ++i) {
    CHECK(by_id(keep.requests, i).arrival.nanoseconds() == i * (6'040'000 + 3'000'000));
    CHECK((by_id(keep.requests, i).finish - by_id(keep.requests, i).arrival).nanoseconds() ==
          6'040'000);
  }
}

TEST_CASE("N closed-loop clients never have more than N requests in flight and all K finish",
          "[serving][closed-loop]") {
  for (const std::int32_t n : {1, 3, 8, 50}) {
    KeepAll keep;
    const ServingResult res = run(same_requests(200, 300, 40), closed(n), kModel, &keep);
    CHECK(res.metrics.num_finished == 200);
    CHECK(keep.requests.size() == 200);
    CHECK(res.peak_requests_in_flight == n);  // 200 requests due at once fill every slot
    CHECK(peak_in_flight(keep.requests) == n);
    CHECK(res.metrics.num_output_tokens == 200 * 40);
  }
}

TEST_CASE("closed-loop throughput rises with the number of clients, then saturates",
          "[serving][closed-loop]") {
  // max_num_seqs 16: beyond 16 clients the extra requests only queue at the server, so the
  // server runs the same full batches whatever N (only the drain at the end differs).
  const auto throughput = [](std::int32_t n) {
    ServingSetup s = closed(n);
    s.replica.limits.max_num_seqs = 16;
    const ServingResult r = run(same_requests(400, 128, 64), s, kModel);
    REQUIRE(r.metrics.num_finished == 400);
    return static_cast<double>(r.metrics.num_output_tokens) / r.duration_s();
  };
  const double t1 = throughput(1);
  const double t2 = throughput(2);
  const double t4 = throughput(4);
  const double t8 = throughput(8);
  const double t16 = throughput(16);
  const double t32 = throughput(32);
  const double t64 = throughput(64);
  CHECK(t2 > 1.5 * t1);
  CHECK(t4 > 1.5 * t2);
  CHECK(t8 > 1.5 * t4);
  CHECK(t16 > t8);
  CHECK(t64 == Approx(t32).epsilon(0.01));
  // Bounded by full decode batches: 16 tokens per step of at least 1 ms + 16 x 10 us.
  CHECK(t64 <= 16.0 / 0.00116);
}

TEST_CASE("a closed-loop run is deterministic", "[serving][closed-loop]") {
  std::vector<TraceRecord> recs;
  for (int i = 0; i < 120; ++i) recs.push_back(record(0.0, 50 + (i * 37) % 400, 1 + (i * 11) % 60));
  KeepAll a;
  KeepAll b;
  run(recs, closed(6, microseconds(500)), kModel, &a);
  run(recs, closed(6, microseconds(500)), kModel, &b);
  testing::check_identical_request_timings(a.requests, b.requests);
}

TEST_CASE("with a rate and max_concurrency the open-loop stream waits for a free client",
          "[serving][closed-loop]") {
  // Three requests due at 0, 1 and 2 ms, each 6.04 ms alone; two slots.
  ServingSetup s = small_setup(4096);
  s.clients.max_concurrency = 2;
  KeepAll keep;
  const ServingResult res = run(same_requests(3, 100, 5), s, kModel, &keep);
  REQUIRE(res.metrics.num_finished == 3);
  CHECK(by_id(keep.requests, 0).arrival.nanoseconds() == 0);
  CHECK(by_id(keep.requests, 1).arrival.nanoseconds() == 1'000'000);
  // The third waits (client-side) until the first finishes; its TTFT counts from then.
  const RequestRecord& first = by_id(keep.requests, 0);
  const RequestRecord& third = by_id(keep.requests, 2);
  CHECK(third.arrival == first.finish);
  CHECK(third.arrival.nanoseconds() > 2'000'000);
  // Only the third waited: from its due time (2 ms) until it was sent. Means are exact.
  CHECK(res.client_wait.mean_seconds() ==
        Approx((third.arrival - (SimTime::zero() + milliseconds(2))).seconds() / 3));
  CHECK(peak_in_flight(keep.requests) == 2);
}

TEST_CASE("a cap the stream never reaches changes nothing", "[serving][closed-loop]") {
  // Arrivals 1 s apart, each request done in 6.04 ms: never two in flight.
  std::vector<TraceRecord> recs;
  for (int i = 0; i < 20; ++i) recs.push_back(record(1.0 * i, 100, 5));
  ServingSetup capped = small_setup(4096);
  capped.clients.max_concurrency = 1;
  KeepAll open_rows;
  KeepAll capped_rows;
  run(recs, small_setup(4096), kModel, &open_rows);
  const ServingResult res = run(recs, capped, kModel, &capped_rows);
  REQUIRE(open_rows.requests.size() == capped_rows.requests.size());
  for (std::size_t i = 0; i < open_rows.requests.size(); ++i) {
    CHECK(open_rows.requests[i].arrival == capped_rows.requests[i].arrival);
    CHECK(open_rows.requests[i].finish == capped_rows.requests[i].finish);
  }
  CHECK(res.client_wait.mean_seconds() == 0.0);
}

TEST_CASE("a rejected request gives its client back and the loop goes on",
          "[serving][closed-loop]") {
  ServingSetup s = closed(1);
  s.max_model_len = 1000;
  std::vector<TraceRecord> recs = same_requests(4, 100, 5);
  recs[1].prompt_tokens = 2000;  // over max_model_len
  KeepAll keep;
  const ServingResult res = run(recs, s, kModel, &keep);
  CHECK(res.metrics.num_finished == 3);
  CHECK(res.metrics.num_rejected == 1);
  // Request 1 is rejected the moment request 0 ends; request 2 is sent at that moment too.
  CHECK(by_id(keep.requests, 2).arrival.nanoseconds() == 6'040'000);
  CHECK(by_id(keep.requests, 3).arrival.nanoseconds() == 2 * 6'040'000);
}

}  // namespace
}  // namespace vramsim::serving
