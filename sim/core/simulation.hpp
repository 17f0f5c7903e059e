// One simulation's clock, event queue, id counters and random streams. Everything that makes a
// run reproducible belongs to the instance: no global counters, no global RNG (STYLE 6.5).
//
//   Simulation<Payload> sim(seed);
//   sim.schedule_at(SimTime::zero(), Phase::kArrival, payload);
//   sim.run([&](const auto& event) { ... sim.schedule_after(d, Phase::kCompletion, p); ... });
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/core/check.hpp"
#include "sim/core/event_queue.hpp"
#include "sim/core/rng.hpp"
#include "sim/core/units.hpp"

namespace vramsim {

/// Dense per-simulation ids of one kind (requests, batches, ...), starting at 0.
class IdCounter {
 public:
  std::uint64_t next() { return next_++; }
  std::uint64_t issued() const { return next_; }

 private:
  std::uint64_t next_ = 0;
};

template <class Payload>
class Simulation {
 public:
  using Event = typename EventQueue<Payload>::Event;

  explicit Simulation(std::uint64_t seed) : rng_(seed) {}

  SimTime now() const { return now_; }
  const RngStreams& rng() const { return rng_; }
  /// A component's own random stream (see RngStreams::stream).
  RngStream stream(std::string_view name) const { return rng_.stream(name); }
  EventQueue<Payload>& queue() { return queue_; }
  std::uint64_t num_processed() const { return num_processed_; }

  /// Schedules at an absolute time, which must not be in the past.
  EventKey schedule_at(SimTime t, Phase phase, Payload payload) {
    VRAMSIM_CHECK(t >= now_, "event scheduled in the past: {} ns < now {} ns", t.nanoseconds(),
                  now_.nanoseconds());
    return queue_.push(t, phase, std::move(payload));
  }
  /// Schedules `d` after now; d must be non-negative.
  EventKey schedule_after(Duration d, Phase phase, Payload payload) {
    VRAMSIM_CHECK(d >= Duration::zero(), "negative delay {} ns", d.nanoseconds());
    return queue_.push(now_ + d, phase, std::move(payload));
  }

  /// Pops one event, advances the clock to it and returns it. Requires a pending event.
  Event step() {
    Event e = queue_.pop();
    VRAMSIM_DCHECK(e.key.time >= now_, "simulated time went backwards");
    now_ = e.key.time;
    ++num_processed_;
    return e;
  }

  /// Runs until the queue is empty or `until` is passed; `handler(const Event&)` may schedule
  /// more events. Returns the number of events processed by this call.
  template <class Handler>
  std::uint64_t run(Handler&& handler, SimTime until = SimTime::from_nanoseconds(INT64_MAX)) {
    const std::uint64_t before = num_processed_;
    while (!queue_.empty() && queue_.top().key.time <= until) {
      const Event e = step();
      handler(e);
    }
    return num_processed_ - before;
  }

 private:
  SimTime now_ = SimTime::zero();
  EventQueue<Payload> queue_;
  RngStreams rng_;
  std::uint64_t num_processed_ = 0;
};

}  // namespace vramsim
