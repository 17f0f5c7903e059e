// The hand-over of a disaggregated run (serving_simulation.hpp, Disaggregation): a request whose
// prefill instance has finished its prompt and first token is given to a decode instance
// (chosen by the decode pool's router), where it waits for that instance's next scheduling
// point (vLLM's schedule() call: the end of its running step, or at once when it is idle);
// there it reserves the prompt's KV blocks if the scheduler's waiting loop reaches it
// (max_num_seqs, the token budget and the queue ahead allow it) and blocks are free; the KV
// then crosses the link between the pools, queued FIFO on that instance's inbound links; once
// it has landed the decode instance learns of it at its next poll of the KV connector (one per
// step: replica.hpp, KvPoll) and the request joins its waiting queue.
//
// Async scheduling (ReplicaConfig::async_scheduling) on the decode instance: the plan of a step
// that follows the last one back to back was made by vLLM when the last one started
// (Replica::RemoteKvHook); its schedule() call saw the requests handed over by then, and
// reserved and started their transfers then.
//
//   prefill done ─route─▶ wait for d's schedule() ─▶ reserve blocks ─▶ KV on the link ─▶ enqueued
//                           │ seats full, queue ahead      (latency + bytes / lanes
//                           ▼ or blocks short: next one     / bandwidth, FIFO per d)
//
// The hand-over owns the decode router, the per-instance reservation queues and link clocks,
// and the DisaggregatedStats it fills (transfer, reserve_wait, prefill_ttft, counts). It
// never touches the event queue: the caller runs each decode instance's scheduling points,
// calls reserve_at_schedule at each, schedules the arrival of the transfers it returns (in the
// order returned, each with the time its KV lands) and hands them back through transfer_done.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/serving/replica.hpp"
#include "sim/serving/request.hpp"
#include "sim/serving/router.hpp"
#include "sim/serving/serving_simulation.hpp"

namespace vramsim::serving {

/// A KV transfer started: `request`'s prompt KV lands on decode instance `decode` at `lands`.
struct KvTransfer {
  std::size_t decode = 0;
  Request* request = nullptr;
  SimTime lands;
};

class DisaggregatedHandover {
 public:
  /// `decode` are the decode instances, in their index order (not owned; they outlive the
  /// hand-over), `router` the decode pool's router instance, `stats` the run's (not owned).
  DisaggregatedHandover(const Disaggregation& d, std::vector<Replica*> decode,
                        std::unique_ptr<Router> router, DisaggregatedStats& stats);

  /// `r` finished its prefill (and first token) at `now` on its prefill instance, which has
  /// released its KV: a decode instance is chosen now and `r` joins the end of its queue of
  /// requests waiting for a reservation, which is served at that instance's scheduling points
  /// (reserve_at_schedule). Returns the decode instance's index.
  std::size_t prefill_done(Request& r, SimTime now);

  /// Decode instance `dec` runs vLLM's schedule() at `now` (Replica::RemoteKvHook: at or
  /// before the current time), and `gate` says whether its waiting loop went on past the
  /// requests it holds (Replica::remote_kv_gate). It sees the requests handed over by `now`.
  /// When open, they get their reservations in hand-over order while blocks allow,
  /// the first that does not fit holding back those behind it (vLLM's scheduler stops at the
  /// first waiting request it cannot allocate for); the transfers started are appended to
  /// `started`, in that order. Those left waiting are counted (num_reserve_waits, and
  /// num_reserve_seat_waits when max_num_seqs closed the gate), each once.
  void reserve_at_schedule(std::size_t dec, RemoteKvGate gate, SimTime now,
                           std::vector<KvTransfer>& started);

  /// The transfer `t` (returned earlier) landed at `t.lands`, at or before `now` (its transfer
  /// may have started before the current time: see reserve_at_schedule): decode instance
  /// `t.decode` takes it up at its next poll (Replica::kv_landed), `t.request` holding the
  /// blocks it reserved.
  void transfer_done(const KvTransfer& t, SimTime now);

  /// Requests handed to `dec` that wait for their reservation.
  bool has_waiting(std::size_t dec) const { return !reserve_wait_[dec].empty(); }
  /// KV transfers into `dec` on their way (their blocks reserved): its queue will move.
  bool has_inbound(std::size_t dec) const { return num_inbound_[dec] > 0; }

 private:
  KvTransfer send_kv(std::size_t dec, Request& r, SimTime now);

  const Disaggregation& d_;
  std::vector<Replica*> decode_;
  std::unique_ptr<Router> router_;
  DisaggregatedStats& stats_;
  std::vector<ReplicaView> views_;  // scratch: the decode instances' views for the router
  std::vector<SimTime> link_free_;  // per decode instance: its inbound links free again
  // Per decode instance: requests handed to it that wait for their reservation, in hand-over
  // order, and how many at its front have been counted as held back (num_reserve_waits) and
  // held back by max_num_seqs (num_reserve_seat_waits). A scheduling point that holds back
  // the queue holds back all of it, so the counted ones are always a prefix.
  std::vector<std::deque<Request*>> reserve_wait_;
  std::vector<std::size_t> num_counted_;
  std::vector<std::size_t> num_seat_counted_;
  std::vector<std::int64_t> num_inbound_;  // per decode instance: KV transfers on their way
};

}  // namespace vramsim::serving
