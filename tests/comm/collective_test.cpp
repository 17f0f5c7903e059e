// Collective cost model against NCCL's published traffic formulas.
// Source: NVIDIA nccl-tests, doc/PERFORMANCE.md ("Bus bandwidth"): all-reduce busbw =
// algbw * 2(n-1)/n; reduce-scatter and all-gather busbw = algbw * (n-1)/n; broadcast and
// send/recv busbw = algbw.
#include "sim/comm/collective.hpp"

#include "tests/catch.hpp"

namespace vramsim::comm {
namespace {

TEST_CASE("bus bandwidth factors follow nccl-tests' PERFORMANCE.md", "[comm]") {
  CHECK(bus_bandwidth_factor(Collective::kAllReduce, 8) == Approx(2.0 * 7.0 / 8.0));
  CHECK(bus_bandwidth_factor(Collective::kAllGather, 8) == Approx(7.0 / 8.0));
  CHECK(bus_bandwidth_factor(Collective::kReduceScatter, 4) == Approx(3.0 / 4.0));
  CHECK(bus_bandwidth_factor(Collective::kBroadcast, 4) == 1.0);
  CHECK(bus_bandwidth_factor(Collective::kSendRecv, 2) == 1.0);
  CHECK(bus_bandwidth_factor(Collective::kAllReduce, 1) == 0.0);
}

TEST_CASE("each rank sends 2(n-1)/n of an all-reduce buffer and (n-1)/n of a gather", "[comm]") {
  CHECK(bytes_on_wire_per_rank(Collective::kAllReduce, MiB(8), 8).count() == 2 * 7 * MiB(1).count());
  CHECK(bytes_on_wire_per_rank(Collective::kAllGather, MiB(8), 8).count() == 7 * MiB(1).count());
  CHECK(bytes_on_wire_per_rank(Collective::kReduceScatter, MiB(8), 4).count() ==
        3 * MiB(2).count());
  CHECK(bytes_on_wire_per_rank(Collective::kAllReduce, MiB(8), 1).count() == 0);
  CHECK(bytes_on_wire_per_rank(Collective::kSendRecv, MiB(8), 2) == MiB(8));
  // Rounded up, never down: 10 B over 3 ranks all-reduce = ceil(40/3) = 14.
  CHECK(bytes_on_wire_per_rank(Collective::kAllReduce, Bytes(10), 3).count() == 14);
}

TEST_CASE("a ring all-reduce costs 2(n-1) latencies plus its wire bytes over the link",
          "[comm]") {
  const LinkModel link{GBps(100.0), microseconds(1)};
  // 1 GB over 4 ranks: 2*3/4 GB = 1.5e9 B at 100 GB/s = 15 ms, plus 6 hops of 1 us.
  const Duration t = collective_time(Collective::kAllReduce, GB(1), 4, link);
  CHECK(t.nanoseconds() == 15'000'000 + 6'000);
  CHECK(collective_time(Collective::kAllReduce, GB(1), 1, link) == Duration::zero());
  // busbw recovered from the simulated time equals the link bandwidth (latency aside).
  const LinkModel no_latency{GBps(100.0), Duration::zero()};
  const double algbw = 1e9 / collective_time(Collective::kAllReduce, GB(1), 8, no_latency).seconds();
  CHECK(algbw * bus_bandwidth_factor(Collective::kAllReduce, 8) == Approx(100e9).epsilon(1e-6));
}

TEST_CASE("a hierarchical collective on one node equals the flat ring", "[comm]") {
  const LinkModel nvlink{GBps(450.0), microseconds(1)};
  const LinkModel ib{GBps(50.0), microseconds(5)};
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter}) {
    CHECK(hierarchical_collective_time(c, MiB(64), 8, 1, nvlink, ib) ==
          collective_time(c, MiB(64), 8, nvlink));
  }
  // Across nodes it costs more than inside one node of the same total size.
  CHECK(hierarchical_collective_time(Collective::kAllReduce, MiB(64), 8, 2, nvlink, ib) >
        collective_time(Collective::kAllReduce, MiB(64), 16, nvlink));
}

TEST_CASE("collective names round-trip", "[comm]") {
  CHECK(collective_from_string("all-reduce") == Collective::kAllReduce);
  CHECK(collective_from_string("reduce-scatter") == Collective::kReduceScatter);
  CHECK_FALSE(collective_from_string("allreduce").has_value());
  CHECK(to_string(Collective::kAllToAll) == "all-to-all");
}

}  // namespace
}  // namespace vramsim::comm
