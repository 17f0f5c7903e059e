#include "sim/comm/collective.hpp"

#include "sim/core/check.hpp"
#include "sim/hardware/device_spec.hpp"

namespace vramsim::comm {

std::string_view to_string(Collective c) { return name_of(kCollectives, c); }
std::optional<Collective> collective_from_string(std::string_view s) {
  return parse_name(kCollectives, s);
}

double bus_bandwidth_factor(Collective c, int n) {
  VRAMSIM_CHECK(n >= 1, "collective over {} ranks", n);
  const double nd = static_cast<double>(n);
  switch (c) {
    case Collective::kAllReduce: return 2.0 * (nd - 1.0) / nd;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return (nd - 1.0) / nd;
    case Collective::kBroadcast:
    case Collective::kSendRecv: return 1.0;
  }
  VRAMSIM_UNREACHABLE("invalid Collective");
}

Bytes bytes_on_wire_per_rank(Collective c, Bytes buffer, int n) {
  VRAMSIM_CHECK(n >= 1, "collective over {} ranks", n);
  VRAMSIM_CHECK(buffer >= Bytes(0), "negative buffer {} B", buffer.count());
  if (c == Collective::kSendRecv) return buffer;
  if (n == 1) return Bytes(0);
  // Exact integer arithmetic where the formula allows: S * k(n-1) / n, rounded up.
  const std::int64_t s = buffer.count();
  const std::int64_t k = c == Collective::kAllReduce ? 2 : 1;
  if (c == Collective::kBroadcast) return buffer;
  std::int64_t wide = 0;
  VRAMSIM_CHECK(!__builtin_mul_overflow(s, k * (n - 1), &wide), "{} B x {} overflows", s,
                k * (n - 1));
  return Bytes(ceil_div(wide, n));
}

int ring_steps(Collective c, int n) {
  VRAMSIM_CHECK(n >= 1, "collective over {} ranks", n);
  switch (c) {
    case Collective::kAllReduce: return 2 * (n - 1);
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kBroadcast:
    case Collective::kAllToAll: return n - 1;
    case Collective::kSendRecv: return 1;
  }
  VRAMSIM_UNREACHABLE("invalid Collective");
}

Duration collective_time(Collective c, Bytes buffer, int n, const LinkModel& link) {
  return CollectiveCost(c, n, link).time(buffer);
}

CollectiveCost::CollectiveCost(Collective c, int n, const LinkModel& link)
    : c_(c), n_(n), steps_(ring_steps(c, n)) {
  if (steps_ == 0) return;
  VRAMSIM_CHECK(link.bandwidth.bytes_per_second() > 0.0, "link bandwidth must be positive");
  latency_s_ = static_cast<double>(steps_) * link.latency.seconds();
  bytes_per_second_ = link.bandwidth.bytes_per_second();
}

Duration hierarchical_collective_time(Collective c, Bytes buffer, int ranks_per_node,
                                      int num_nodes, const LinkModel& intra,
                                      const LinkModel& inter) {
  VRAMSIM_CHECK(ranks_per_node >= 1 && num_nodes >= 1, "hierarchy {} x {}", ranks_per_node,
                num_nodes);
  if (num_nodes == 1) return collective_time(c, buffer, ranks_per_node, intra);
  if (ranks_per_node == 1) return collective_time(c, buffer, num_nodes, inter);
  const Bytes shard = Bytes(buffer.count() / ranks_per_node);
  switch (c) {
    case Collective::kAllReduce:
      // Reduce-scatter inside the node, all-reduce of one shard across nodes (each of the
      // node's ranks drives its own NIC in parallel), all-gather inside the node.
      return collective_time(Collective::kReduceScatter, buffer, ranks_per_node, intra) +
             collective_time(Collective::kAllReduce, shard, num_nodes, inter) +
             collective_time(Collective::kAllGather, buffer, ranks_per_node, intra);
    case Collective::kAllGather:
    case Collective::kReduceScatter: {
      // Across nodes on the node-sized slices first (S / ranks_per_node per rank pair),
      // then inside the node on the full buffer.
      return collective_time(c, shard, num_nodes, inter) +
             collective_time(c, buffer, ranks_per_node, intra);
    }
    case Collective::kBroadcast:
      return collective_time(c, buffer, num_nodes, inter) +
             collective_time(c, buffer, ranks_per_node, intra);
    case Collective::kAllToAll: {
      // Of each rank's S, (n_local-1)/n stays in the node, (n-n_local)/n crosses the network.
      const int n = ranks_per_node * num_nodes;
      const auto cross = Bytes(buffer.count() * (n - ranks_per_node) / n);
      return collective_time(c, buffer, ranks_per_node, intra) +
             Duration::from_seconds(static_cast<double>(num_nodes - 1) * inter.latency.seconds() +
                                    static_cast<double>(cross.count()) /
                                        inter.bandwidth.bytes_per_second());
    }
    case Collective::kSendRecv: return collective_time(c, buffer, 2, inter);
  }
  VRAMSIM_UNREACHABLE("invalid Collective");
}

LinkModel intra_node_link(const hardware::DeviceSpec& device) {
  if (device.peer_link && !device.peer_link->bridge_only) {
    return {device.peer_link->bandwidth_per_direction, kNvlinkHopLatency};
  }
  return host_link(device);
}

LinkModel host_link(const hardware::DeviceSpec& device) {
  return {device.pcie.bandwidth_per_direction, kPcieHopLatency};
}

}  // namespace vramsim::comm
