// The discrete-event engine's queue: a total, deterministic order on events.
//
// Events are ordered by the key (time, phase, seq):
//   time   simulated time (integer nanoseconds, so ties are exact, never float noise);
//   phase  same-time semantics, explicit: completions, then arrivals, then scheduling decisions;
//   seq    a per-queue insertion counter, never reused, so equal (time, phase) pop in FIFO order.
// No two events compare equal, so the pop order never depends on the heap's internals.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/check.hpp"
#include "sim/core/units.hpp"

namespace vramsim {

/// Same-timestamp semantics: finish work, then admit arrivals, then decide.
enum class Phase : std::uint8_t {
  kCompletion = 0,
  kArrival = 1,
  kSchedule = 2,
};

struct EventKey {
  SimTime time;
  Phase phase = Phase::kCompletion;
  std::uint64_t seq = 0;

  friend bool operator<(const EventKey& a, const EventKey& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.phase != b.phase) return a.phase < b.phase;
    return a.seq < b.seq;
  }
};

/// A min-priority queue of events carrying a small payload (an index, a tagged id).
/// Implemented as a 4-ary heap over one vector: fewer levels than a binary heap and
/// cache-friendly siblings, which matters at tens of millions of events per second.
template <class Payload>
class EventQueue {
 public:
  struct Event {
    EventKey key;
    Payload payload;
  };

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  /// Events pushed so far (the next seq).
  std::uint64_t num_scheduled() const { return next_seq_; }
  void reserve(std::size_t n) { heap_.reserve(n); }

  /// Schedules `payload` at `time` in `phase`. Returns the event's key.
  EventKey push(SimTime time, Phase phase, Payload payload) {
    EventKey key{time, phase, next_seq_++};
    heap_.push_back(Event{key, std::move(payload)});
    sift_up(heap_.size() - 1);
    return key;
  }

  /// The earliest event. Requires !empty().
  const Event& top() const {
    VRAMSIM_DCHECK(!heap_.empty(), "top() on an empty event queue");
    return heap_.front();
  }

  /// Removes and returns the earliest event. Requires !empty().
  Event pop() {
    VRAMSIM_CHECK(!heap_.empty(), "pop() on an empty event queue");
    Event out = std::move(heap_.front());
    Event last = std::move(heap_.back());
    heap_.pop_back();
    if (!heap_.empty()) sift_down(std::move(last));
    return out;
  }

 private:
  static constexpr std::size_t kArity = 4;

  void sift_up(std::size_t i) {
    Event e = std::move(heap_[i]);
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!(e.key < heap_[parent].key)) break;
      heap_[i] = std::move(heap_[parent]);
      i = parent;
    }
    heap_[i] = std::move(e);
  }

  // Places `e` (the former last element) starting from the root.
  void sift_down(Event e) {
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = i * kArity + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t last = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < last; ++c) {
        if (heap_[c].key < heap_[best].key) best = c;
      }
      if (!(heap_[best].key < e.key)) break;
      heap_[i] = std::move(heap_[best]);
      i = best;
    }
    heap_[i] = std::move(e);
  }

  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace vramsim
