#include "sim/core/engine_bench.hpp"

#include <chrono>

#include "sim/core/simulation.hpp"

namespace vramsim {

EngineBenchResult run_engine_bench(std::uint64_t num_events, std::uint64_t num_pending,
                                   std::uint64_t seed) {
  VRAMSIM_CHECK(num_pending > 0, "the hold model needs at least one pending event");
  Simulation<std::uint32_t> sim(seed);
  RngStream delays = sim.stream("engine-bench");
  sim.queue().reserve(num_pending + 1);
  // Delays drawn ahead of time, so the benchmark measures the queue, not the log() in the draw.
  constexpr std::size_t kTable = 4096;
  std::vector<Duration> table(kTable);
  for (auto& d : table) d = Duration::from_seconds(delays.exponential(1e6));
  for (std::uint64_t i = 0; i < num_pending; ++i) {
    sim.schedule_at(SimTime::zero() + table[i % kTable], Phase::kArrival,
                    static_cast<std::uint32_t>(i));
  }
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t processed = 0;
  std::size_t k = 0;
  while (processed < num_events) {
    const auto e = sim.step();
    ++processed;
    k = (k + 1 + (e.payload & 7U)) % kTable;
    sim.schedule_after(table[k], static_cast<Phase>(e.payload % 3), e.payload + 1);
  }
  const auto stop = std::chrono::steady_clock::now();
  EngineBenchResult r;
  r.num_events = processed;
  r.num_pending = num_pending;
  r.wall_s = std::chrono::duration<double>(stop - start).count();
  r.events_per_s = r.wall_s > 0 ? static_cast<double>(processed) / r.wall_s : 0.0;
  r.final_time_ns = sim.now().nanoseconds();
  return r;
}

}  // namespace vramsim
