#include "sim/core/event_queue.hpp"

#include <vector>

#include "sim/core/engine_bench.hpp"
#include "sim/core/simulation.hpp"
#include "tests/catch.hpp"

using namespace vramsim;

namespace {
SimTime at_ns(std::int64_t ns) { return SimTime::from_nanoseconds(ns); }
}  // namespace

TEST_CASE("events pop by time, then phase, then insertion order", "[core][engine]") {
  EventQueue<int> q;
  q.push(at_ns(10), Phase::kSchedule, 1);
  q.push(at_ns(10), Phase::kArrival, 2);
  q.push(at_ns(5), Phase::kSchedule, 3);
  q.push(at_ns(10), Phase::kCompletion, 4);
  q.push(at_ns(10), Phase::kArrival, 5);
  q.push(at_ns(10), Phase::kCompletion, 6);
  std::vector<int> order;
  while (!q.empty()) order.push_back(q.pop().payload);
  CHECK(order == std::vector<int>{3, 4, 6, 2, 5, 1});
}

TEST_CASE("many equal keys pop in FIFO order", "[core][engine]") {
  EventQueue<int> q;
  for (int i = 0; i < 1000; ++i) q.push(at_ns(7), Phase::kArrival, i);
  for (int i = 0; i < 1000; ++i) REQUIRE(q.pop().payload == i);
}

TEST_CASE("simulated time never decreases while handlers schedule more work", "[core][engine]") {
  Simulation<int> sim(42);
  RngStream r = sim.stream("test");
  for (int i = 0; i < 100; ++i) {
    sim.schedule_at(at_ns(r.uniform_int(0, 1000)), Phase::kArrival, 3);
  }
  SimTime last = SimTime::zero();
  bool monotone = true;
  sim.run([&](const Simulation<int>::Event& e) {
    monotone = monotone && e.key.time >= last;
    last = e.key.time;
    if (e.payload > 0) {
      sim.schedule_after(nanoseconds(r.uniform_int(0, 50)), Phase::kCompletion, e.payload - 1);
    }
  });
  CHECK(monotone);
  CHECK(sim.num_processed() == 400);
  CHECK(sim.queue().empty());
}

TEST_CASE("run stops at the given horizon and leaves later events queued", "[core][engine]") {
  Simulation<int> sim(1);
  sim.schedule_at(at_ns(10), Phase::kArrival, 1);
  sim.schedule_at(at_ns(20), Phase::kArrival, 2);
  int seen = 0;
  sim.run([&](const auto&) { ++seen; }, at_ns(15));
  CHECK(seen == 1);
  CHECK(sim.now() == at_ns(10));
  CHECK(sim.queue().size() == 1);
}

TEST_CASE("the engine benchmark is deterministic for a seed", "[core][engine]") {
  const EngineBenchResult a = run_engine_bench(20000, 64, 7);
  const EngineBenchResult b = run_engine_bench(20000, 64, 7);
  const EngineBenchResult c = run_engine_bench(20000, 64, 8);
  CHECK(a.num_events == 20000);
  CHECK(a.final_time_ns == b.final_time_ns);
  CHECK(a.final_time_ns != c.final_time_ns);
}
