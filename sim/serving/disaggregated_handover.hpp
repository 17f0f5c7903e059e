// The hand-over of a disaggregated run (serving_simulation.hpp, Disaggregation): a request whose
// prefill instance has finished its prompt and first token is given to a decode instance
// (chosen by the decode pool's router), which reserves the prompt's KV blocks; the KV then
// crosses the link between the pools, queued FIFO on that instance's inbound links; once it
// has landed the request joins the decode instance's waiting queue.
//
//   prefill done ──route──▶ reserve blocks on decode instance d ──▶ KV on the link ──▶ enqueued
//                              │ full: wait, in hand-over order,      (latency + bytes / lanes
//                              ▼ for blocks freed by d's steps         / bandwidth, FIFO per d)
//
// The hand-over owns the decode router, the per-instance reservation queues and link clocks,
// and the DisaggregatedStats it fills (transfer, reserve_wait, prefill_ttft, counts). It
// never touches the event queue: it returns the transfers it starts, each with the time its
// KV lands, and the caller schedules their arrival (in the order returned) and hands them
// back through transfer_done.
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
  /// released its KV: a decode instance is chosen now and reserves its prompt's blocks. The
  /// transfer started is appended to `started`; none when the instance's KV is full (or others
  /// wait there before it): `r` then waits for blocks (reserve_waiting).
  void prefill_done(Request& r, SimTime now, std::vector<KvTransfer>& started);

  /// Decode instance `dec` may have freed blocks: the requests waiting for a reservation there
  /// get theirs in hand-over order, the first that does not fit holding back those behind it
  /// (vLLM's scheduler stops at the first waiting request it cannot allocate for); the
  /// transfers started are appended to `started`, in that order.
  void reserve_waiting(std::size_t dec, SimTime now, std::vector<KvTransfer>& started);

  /// The transfer `t` (returned earlier) has landed at `now`: `t.request` joins decode
  /// instance `t.decode`'s waiting queue, holding the blocks it reserved.
  void transfer_done(const KvTransfer& t, SimTime now);

  /// Requests handed to `dec` that wait for their blocks.
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
  // Per decode instance: requests handed to it that wait for their blocks, in hand-over order.
  std::vector<std::deque<Request*>> reserve_wait_;
  std::vector<std::int64_t> num_inbound_;  // per decode instance: KV transfers on their way
};

}  // namespace vramsim::serving
