// Collective communication cost models (alpha-beta) and NCCL's traffic formulas.
//
// Buffer-size convention (nccl-tests, doc/PERFORMANCE.md): `buffer` is the size S that
// nccl-tests reports for the operation:
//   all-reduce      S = the buffer every rank holds (input = output size)
//   all-gather      S = the gathered output (n shards of S/n each)
//   reduce-scatter  S = the full input (each rank keeps S/n)
//   broadcast       S = the broadcast buffer
//   send-recv       S = the message
//   all-to-all      S = each rank's whole send buffer (it keeps S/n, sends (n-1)/n of it)
//
// Bytes each rank puts on its links for a ring algorithm (NCCL's bus-bandwidth factors):
//   all-reduce      2(n-1)/n * S     (reduce-scatter then all-gather)
//   all-gather      (n-1)/n * S
//   reduce-scatter  (n-1)/n * S
//   broadcast       S                (pipelined ring: every rank but the root receives S)
//   send-recv       S
//   all-to-all      (n-1)/n * S
// algbw = S / time; busbw = algbw * factor, with factor = 2(n-1)/n for all-reduce,
// (n-1)/n for all-gather / reduce-scatter / all-to-all, 1 for broadcast and send-recv.
//
// Time of a ring collective over a link model with per-rank bandwidth B (one direction) and
// per-hop latency alpha:  steps * alpha + bytes_on_wire / B, with steps = 2(n-1) for
// all-reduce, n-1 for all-gather / reduce-scatter / broadcast / all-to-all, 1 for send-recv.
// With n == 1 every collective except send-recv costs nothing.
#pragma once

#include <string_view>
#include <optional>

#include "sim/core/enum_table.hpp"
#include "sim/core/units.hpp"

namespace vramsim::hardware {
struct DeviceSpec;
}

namespace vramsim::comm {

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kSendRecv, kAllToAll };
inline constexpr auto kCollectives = enum_table<Collective>({
    {Collective::kAllReduce, "all-reduce", "every rank ends with the sum of all ranks' data"},
    {Collective::kAllGather, "all-gather", "every rank ends with every rank's shard"},
    {Collective::kReduceScatter, "reduce-scatter", "every rank ends with one shard of the sum"},
    {Collective::kBroadcast, "broadcast", "one rank's data to every rank"},
    {Collective::kSendRecv, "send-recv", "a point-to-point transfer between two ranks"},
    {Collective::kAllToAll, "all-to-all", "every rank sends a distinct shard to every rank"},
});
static_assert(covers_every_enumerator(kCollectives) && names_are_unique(kCollectives));

std::string_view to_string(Collective c);
std::optional<Collective> collective_from_string(std::string_view s);

/// One level of the interconnect as the collective sees it: the bandwidth one rank can push in
/// one direction, and the latency of one hop (launch + link + protocol).
struct LinkModel {
  Bandwidth bandwidth;
  Duration latency;
};

/// NCCL's busbw / algbw factor for `n` ranks (see the table above). n must be >= 1.
double bus_bandwidth_factor(Collective c, int n);

/// Bytes one rank sends over its links for the ring algorithm on `buffer` (S above).
Bytes bytes_on_wire_per_rank(Collective c, Bytes buffer, int n);

/// Number of sequential ring steps (each pays the link latency once).
int ring_steps(Collective c, int n);

/// Time of one collective over `n` ranks connected by `link` (ring algorithm).
Duration collective_time(Collective c, Bytes buffer, int n, const LinkModel& link);

/// collective_time of one collective, group size and link, with what does not depend on the
/// buffer computed once: a step-time model costs the same collective in every step.
class CollectiveCost {
 public:
  CollectiveCost() = default;  // a collective over one rank: no time
  CollectiveCost(Collective c, int n, const LinkModel& link);
  /// collective_time(c, buffer, n, link), exactly.
  Duration time(Bytes buffer) const {
    if (steps_ == 0) return Duration::zero();
    const Bytes wire = bytes_on_wire_per_rank(c_, buffer, n_);
    return Duration::from_seconds(latency_s_ +
                                  static_cast<double>(wire.count()) / bytes_per_second_);
  }

 private:
  Collective c_ = Collective::kAllReduce;
  int n_ = 1;
  int steps_ = 0;
  double latency_s_ = 0.0;  // ring steps x hop latency
  double bytes_per_second_ = 1.0;
};

/// Two-level (hierarchical) collective over `num_nodes` nodes of `ranks_per_node` ranks each:
/// all-reduce = intra-node reduce-scatter, inter-node all-reduce of S/ranks_per_node, intra-node
/// all-gather (NCCL's tree/ring hybrid in spirit); all-gather / reduce-scatter likewise split
/// into an intra-node and an inter-node phase. With num_nodes == 1 it equals collective_time
/// over `intra`.
Duration hierarchical_collective_time(Collective c, Bytes buffer, int ranks_per_node,
                                      int num_nodes, const LinkModel& intra,
                                      const LinkModel& inter);

/// The default intra-node link of a device sheet: its peer link (NVLink, Infinity Fabric)
/// where it has one that is not bridge-only, otherwise PCIe through the host. Latency defaults:
/// kNvlinkHopLatency / kPcieHopLatency below.
LinkModel intra_node_link(const hardware::DeviceSpec& device);

/// The host link (PCIe) of a device, for swapping and offload.
LinkModel host_link(const hardware::DeviceSpec& device);

// NOTE: per-hop latencies are datasheet-free defaults until calibration replaces them. NCCL's
// own tuning model (src/graph/tuning.cc, baseLat/hwLat tables) uses about 0.6-1 us per NVLink
// hop for the simple/LL protocols plus a few us of launch overhead; PCIe hops ~1-2 us.
inline constexpr Duration kNvlinkHopLatency = Duration::from_nanoseconds(1'000);
inline constexpr Duration kPcieHopLatency = Duration::from_nanoseconds(2'000);
inline constexpr Duration kNetworkHopLatency = Duration::from_nanoseconds(5'000);

}  // namespace vramsim::comm
