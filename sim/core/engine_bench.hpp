// The engine's own speed: schedule + pop on the event queue, without any model behind it.
#pragma once

#include <cstdint>

namespace vramsim {

struct EngineBenchResult {
  std::uint64_t num_events = 0;
  std::uint64_t num_pending = 0;  // events kept in the queue (the "hold" size)
  double wall_s = 0.0;
  double events_per_s = 0.0;
  std::int64_t final_time_ns = 0;  // a checksum: same seed, same value
};

/// The classic "hold" model: `num_pending` events are kept in the queue; each processed event
/// schedules one successor at now + an exponential delay (mean 1 us), in a random phase.
/// Every event costs one push and one pop. Deterministic for a seed except for wall_s.
EngineBenchResult run_engine_bench(std::uint64_t num_events, std::uint64_t num_pending,
                                   std::uint64_t seed);

}  // namespace vramsim
