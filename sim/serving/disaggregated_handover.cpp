#include "sim/serving/disaggregated_handover.hpp"

#include <algorithm>
#include <utility>

#include "sim/core/check.hpp"

namespace vramsim::serving {

DisaggregatedHandover::DisaggregatedHandover(const Disaggregation& d,
                                             std::vector<Replica*> decode,
                                             std::unique_ptr<Router> router,
                                             DisaggregatedStats& stats)
    : d_(d), decode_(std::move(decode)), router_(std::move(router)), stats_(stats) {
  VRAMSIM_CHECK(!decode_.empty() && router_ != nullptr, "a hand-over to {} decode instances",
                decode_.size());
  VRAMSIM_CHECK(d.num_link_lanes >= 1 && d.link_bandwidth.bytes_per_second() > 0.0,
                "KV transfer link with {} lanes", d.num_link_lanes);
  const std::size_t n = decode_.size();
  views_.resize(n);
  link_free_.assign(n, SimTime::zero());
  reserve_wait_.resize(n);
  num_counted_.assign(n, 0);
  num_seat_counted_.assign(n, 0);
  num_inbound_.assign(n, 0);
}

std::size_t DisaggregatedHandover::prefill_done(Request& r, SimTime now) {
  r.prefill_finish = now;
  stats_.prefill_ttft.add(r.first_token - r.arrival);
  for (std::size_t i = 0; i < decode_.size(); ++i) views_[i] = decode_[i]->view();
  const std::size_t dec = router_->route(r, views_);
  VRAMSIM_CHECK(dec < decode_.size(), "router picked decode instance {} of {}", dec,
                decode_.size());
  // On the decode instance: all but the last prompt token computed (see Disaggregation)
  // and the real output length.
  r.output_tokens = r.pd_output_tokens;
  r.num_generated = 0;
  r.num_computed_tokens = r.prompt_tokens - 1;
  r.in_flight = false;
  r.speculative_credit = 0.0;
  reserve_wait_[dec].push_back(&r);
  return dec;
}

void DisaggregatedHandover::reserve_at_schedule(std::size_t dec, RemoteKvGate gate, SimTime now,
                                                std::vector<KvTransfer>& started) {
  std::deque<Request*>& waiting = reserve_wait_[dec];
  // The requests handed over by `now` (with async scheduling the call may predate later ones:
  // Replica::RemoteKvHook), a prefix of the queue: hand-overs come in time order.
  std::size_t seen = 0;
  while (seen < waiting.size() && waiting[seen]->prefill_finish <= now) ++seen;
  if (gate == RemoteKvGate::kOpen) {
    while (seen > 0 && decode_[dec]->reserve_remote_kv(*waiting.front())) {
      Request* r = waiting.front();
      waiting.pop_front();
      --seen;
      if (num_counted_[dec] > 0) --num_counted_[dec];
      if (num_seat_counted_[dec] > 0) --num_seat_counted_[dec];
      started.push_back(send_kv(dec, *r, now));
    }
  }
  // Whatever it saw and left was held back at this scheduling point: count the newly held.
  if (seen > num_counted_[dec]) {
    stats_.num_reserve_waits += static_cast<std::int64_t>(seen - num_counted_[dec]);
    num_counted_[dec] = seen;
  }
  if (gate == RemoteKvGate::kSeatsFull && seen > num_seat_counted_[dec]) {
    stats_.num_reserve_seat_waits += static_cast<std::int64_t>(seen - num_seat_counted_[dec]);
    num_seat_counted_[dec] = seen;
  }
}

// `r`'s blocks on decode instance `dec` are reserved at `now`: its prompt's KV crosses the
// link, after the transfers into `dec` before it (their latency overlapping).
KvTransfer DisaggregatedHandover::send_kv(std::size_t dec, Request& r, SimTime now) {
  stats_.reserve_wait.add(now - r.prefill_finish);
  const Bytes bytes = r.prompt_tokens * d_.kv_bytes_per_token;
  const Bytes per_lane = Bytes(ceil_div(bytes.count(), std::int64_t{d_.num_link_lanes}));
  const Duration wire = per_lane / d_.link_bandwidth;
  const SimTime start = std::max(now, link_free_[dec]);
  link_free_[dec] = start + wire;
  ++stats_.num_transfers;
  ++num_inbound_[dec];
  stats_.transfer_bytes += bytes.count();
  return KvTransfer{dec, &r, start + wire + d_.link_latency};
}

void DisaggregatedHandover::transfer_done(const KvTransfer& t, SimTime now) {
  VRAMSIM_CHECK(t.lands <= now, "request {}: a transfer done at {} ns that lands at {} ns",
                t.request->id, now.nanoseconds(), t.lands.nanoseconds());
  stats_.transfer.add(t.lands - t.request->prefill_finish);
  --num_inbound_[t.decode];
  decode_[t.decode]->kv_landed(*t.request, t.lands);
}

}  // namespace vramsim::serving
