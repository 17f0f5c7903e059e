// The disaggregated hand-over alone (sim/serving/disaggregated_handover): a tiny decode
// instance of 8 blocks, reservations taken only at its scheduling points and only when the
// gate is open, in hand-over order, the first that does not fit holding back the rest, and
// hand-timed transfers queued FIFO on its link.
#include "sim/serving/disaggregated_handover.hpp"

#include <memory>
#include <vector>

#include "tests/catch.hpp"
#include "tests/serving/serving_test_support.hpp"

namespace vramsim::serving {
namespace {

using testing::LinearTimeModel;

Duration us(std::int64_t n) { return Duration::from_nanoseconds(n * 1000); }
SimTime at_us(std::int64_t n) { return SimTime::zero() + us(n); }

// Request `id` whose prefill instance computed its prompt and first token.
Request prefilled(RequestId id, std::int64_t prompt, std::int64_t output) {
  Request r;
  r.id = id;
  r.uid = static_cast<std::uint64_t>(id) + 1;
  r.prompt_tokens = prompt;
  r.output_tokens = 1;  // the proxy's max_tokens = 1
  r.pd_output_tokens = output;
  r.num_generated = 1;
  r.num_computed_tokens = prompt;
  r.arrival = at_us(0);
  r.first_token = at_us(40);
  return r;
}

// One decode instance of 8 blocks of 16 tokens, vLLM's scheduler, 1 ms + 10 us per token
// steps, behind a hand-over whose link has `lanes` lanes of 1 GB/s, 5 us latency, 1000 bytes
// per prompt token.
struct OneDecodeInstance {
  explicit OneDecodeInstance(std::int32_t lanes)
      : setup(testing::small_setup(8)),
        link(link_of(lanes)),
        decode(0, setup.replica,
               testing::builtin_registries().schedulers.find("vllm", "scheduler").make(
                   setup.replica.limits),
               model),
        handover(link, {&decode},
                 testing::builtin_registries().routers.find("round-robin", "router").make(),
                 stats) {}

  static Disaggregation link_of(std::int32_t lanes) {
    Disaggregation d;
    d.kv_bytes_per_token = Bytes(1000);
    d.num_link_lanes = lanes;
    d.link_bandwidth = GBps(1.0);
    d.link_latency = us(5);
    return d;
  }

  const ServingSetup setup;
  const Disaggregation link;
  const LinearTimeModel model{us(1000), us(10)};
  Replica decode;
  DisaggregatedStats stats;
  DisaggregatedHandover handover;
};

}  // namespace

TEST_CASE("the hand-over reserves a decode instance's blocks at its scheduling point in "
          "hand-over order, queues the transfers FIFO on its link, and admits each request when "
          "its KV lands",
          "[serving][disaggregated]") {
  OneDecodeInstance f(2);
  Replica& decode = f.decode;
  DisaggregatedStats& stats = f.stats;
  DisaggregatedHandover& h = f.handover;

  Request r1 = prefilled(1, 64, 5);  // 4 blocks
  Request r2 = prefilled(2, 32, 5);  // 2 blocks
  Request r3 = prefilled(3, 48, 5);  // 3 blocks: only 2 left
  Request r4 = prefilled(4, 16, 5);  // 1 block: fits, but waits behind r3
  std::vector<KvTransfer> started;
  for (Request* r : {&r1, &r2, &r3, &r4}) CHECK(h.prefill_done(*r, at_us(80)) == 0);
  // Handed over, nothing reserved until the instance schedules.
  CHECK(decode.kv().num_used_blocks() == 0);
  CHECK(h.has_waiting(0));
  CHECK(!h.has_inbound(0));
  CHECK(r1.output_tokens == 5);
  CHECK(r1.num_computed_tokens == 63);
  CHECK(r1.prefill_finish == at_us(80));

  // Its schedule() at 100 us: the gate is open.
  const SimTime now = at_us(100);
  h.reserve_at_schedule(0, RemoteKvGate::kOpen, now, started);

  // r1: 64,000 B over 2 lanes = 32 us on the wire from 100 us, + 5 us latency. r2: 16 us on
  // the wire after r1's (the link is busy until 132 us), + 5 us.
  REQUIRE(started.size() == 2);
  CHECK(started[0].request == &r1);
  CHECK(started[0].decode == 0);
  CHECK(started[0].lands == at_us(137));
  CHECK(started[1].request == &r2);
  CHECK(started[1].lands == at_us(153));
  CHECK(stats.num_transfers == 2);
  CHECK(stats.transfer_bytes == 96'000);
  CHECK(stats.num_reserve_waits == 2);  // r3 (blocks short) and r4 (behind it)
  CHECK(stats.num_reserve_seat_waits == 0);
  CHECK(stats.reserve_wait.max() == us(20));  // handed over at 80 us, reserved at 100 us
  CHECK(stats.prefill_ttft.quantile(0.5) == us(40));
  CHECK(decode.kv().num_used_blocks() == 6);
  CHECK(h.has_waiting(0));
  CHECK(h.has_inbound(0));

  // No blocks freed: r3 still does not fit, and r4 stays behind it.
  started.clear();
  h.reserve_at_schedule(0, RemoteKvGate::kOpen, at_us(120), started);
  CHECK(started.empty());
  CHECK(decode.kv().num_used_blocks() == 6);
  CHECK(stats.num_reserve_waits == 2);  // each held-back request counted once

  // The KV lands: each request joins the decode instance's queue.
  h.transfer_done({0, &r1, at_us(137)}, at_us(137));
  CHECK(stats.transfer.quantile(0.5) == us(57));  // handed over at 80 us, landed at 137 us
  CHECK(decode.num_unfinished() == 1);
  CHECK(h.has_inbound(0));
  h.transfer_done({0, &r2, at_us(153)}, at_us(153));
  CHECK(decode.num_unfinished() == 2);
  CHECK(!h.has_inbound(0));
  CHECK(h.has_waiting(0));
}

TEST_CASE("a closed gate holds every hand-over back, whatever the free blocks, and counts the "
          "waits max_num_seqs caused apart",
          "[serving][disaggregated]") {
  OneDecodeInstance f(1);
  Replica& decode = f.decode;
  DisaggregatedStats& stats = f.stats;
  DisaggregatedHandover& h = f.handover;

  Request r1 = prefilled(1, 16, 5);  // 1 block each: all fit
  Request r2 = prefilled(2, 16, 5);
  std::vector<KvTransfer> started;
  h.prefill_done(r1, at_us(50));

  // The running queue is at max_num_seqs: a seat wait.
  h.reserve_at_schedule(0, RemoteKvGate::kSeatsFull, at_us(100), started);
  CHECK(started.empty());
  CHECK(decode.kv().num_used_blocks() == 0);
  CHECK(stats.num_reserve_waits == 1);
  CHECK(stats.num_reserve_seat_waits == 1);

  // The next scheduling point stops at a request of its own waiting queue: r1 is not counted
  // again, r2 (new) is a wait but not a seat wait.
  h.prefill_done(r2, at_us(150));
  h.reserve_at_schedule(0, RemoteKvGate::kQueueAhead, at_us(200), started);
  CHECK(started.empty());
  CHECK(stats.num_reserve_waits == 2);
  CHECK(stats.num_reserve_seat_waits == 1);

  // Open: both reserve at 300 us, in hand-over order; 16,000 B take 16 us each on one lane.
  h.reserve_at_schedule(0, RemoteKvGate::kOpen, at_us(300), started);
  REQUIRE(started.size() == 2);
  CHECK(started[0].request == &r1);
  CHECK(started[0].lands == at_us(321));
  CHECK(started[1].request == &r2);
  CHECK(started[1].lands == at_us(337));
  CHECK(stats.reserve_wait.max() == us(250));  // r1: 50 -> 300 us
  CHECK(stats.reserve_wait.min() == us(150));  // r2: 150 -> 300 us
  CHECK(decode.kv().num_used_blocks() == 2);
  CHECK(!h.has_waiting(0));
  CHECK(stats.num_reserve_waits == 2);
}

}  // namespace vramsim::serving
