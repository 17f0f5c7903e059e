#include "sim/training/cluster_links.hpp"

#include <algorithm>

namespace vramsim::training {

namespace {

/// A data-parallel group of `group_size` ranks: its ranks per node and its nodes.
struct DpSpan {
  int per_node = 1;
  int nodes = 1;
};
DpSpan dp_span(const TrainingPlan& plan, int group_size) {
  const int per_node = std::clamp(plan.dp_ranks_per_node(), 1, std::max(1, group_size));
  return {per_node, std::max(1, group_size / per_node)};
}

/// A pipeline send crosses nodes when a stage (tp x cp x dp ranks) fills a node.
bool pp_crosses_nodes(const TrainingPlan& plan) {
  return plan.tp * plan.grad_group() >= plan.gpus_per_node;
}

/// A group of `size` ranks `stride` apart in the rank order: its ranks per node and its nodes.
DpSpan strided_span(const TrainingPlan& plan, int size, int stride) {
  const int per_node = std::clamp(plan.gpus_per_node / std::max(1, stride), 1, std::max(1, size));
  return {per_node, std::max(1, size / per_node)};
}

}  // namespace

ClusterLinks default_cluster_links(const hardware::DeviceSpec& device) {
  const bool fast = device.architecture == "hopper" || device.architecture == "blackwell" ||
                    device.architecture == "cdna3";
  ClusterLinks l;
  l.intra = comm::intra_node_link(device);
  l.inter = {Gbps(fast ? kDefaultNetworkGbpsFast : kDefaultNetworkGbpsBase),
             comm::kNetworkHopLatency};
  return l;
}

Duration tp_collective_time(comm::Collective c, Bytes buffer, const TrainingPlan& plan,
                            const ClusterLinks& links) {
  if (plan.tp <= 1) return Duration::zero();
  if (plan.tp <= plan.gpus_per_node) return comm::collective_time(c, buffer, plan.tp, links.intra);
  return comm::hierarchical_collective_time(c, buffer, plan.gpus_per_node,
                                            plan.tp / plan.gpus_per_node, links.intra, links.inter);
}

Duration dp_collective_time(comm::Collective c, Bytes buffer, int group_size,
                            const TrainingPlan& plan, const ClusterLinks& links) {
  if (group_size <= 1) return Duration::zero();
  const auto [per_node, nodes] = dp_span(plan, group_size);
  if (nodes == 1) return comm::collective_time(c, buffer, group_size, links.intra);
  if (per_node == 1) return comm::collective_time(c, buffer, group_size, links.inter);
  return comm::hierarchical_collective_time(c, buffer, per_node, nodes, links.intra, links.inter);
}

Duration hsdp_replica_allreduce_time(Bytes shard, const TrainingPlan& plan,
                                     const ClusterLinks& links) {
  const int replicas = plan.grad_group() / std::max(1, plan.shard_degree());
  if (replicas <= 1) return Duration::zero();
  return comm::collective_time(comm::Collective::kAllReduce, shard, replicas, links.inter);
}

Duration pp_send_time(Bytes message, const TrainingPlan& plan, const ClusterLinks& links) {
  return comm::collective_time(comm::Collective::kSendRecv, message, 2,
                               pp_crosses_nodes(plan) ? links.inter : links.intra);
}

Duration PlanCollectives::intra(comm::Collective c, Bytes buffer, int num_ranks) {
  const cost::TimeEstimate e = cm_.collective(c, buffer, num_ranks, links_.intra);
  counts.add(e.basis);
  return e.time;
}

Duration PlanCollectives::tp(comm::Collective c, Bytes buffer) {
  if (plan_.tp > 1 && plan_.tp <= plan_.gpus_per_node) {
    // Over NVLink (the device's peer link), at the bus bandwidth NCCL reaches on it.
    const auto& peer = cm_.device().peer_link;
    comm::LinkModel link = links_.intra;
    if (peer && !peer->bridge_only) {
      link.bandwidth = kNcclNvlinkBusBandwidthFraction * link.bandwidth;
    }
    const cost::TimeEstimate e = cm_.collective(c, buffer, plan_.tp, link);
    counts.add(e.basis);
    return e.time;
  }
  return tp_collective_time(c, buffer, plan_, links_);
}

Duration PlanCollectives::dp(comm::Collective c, Bytes buffer, int group_size) {
  if (group_size > 1 && dp_span(plan_, group_size).nodes == 1) return intra(c, buffer, group_size);
  return dp_collective_time(c, buffer, group_size, plan_, links_);
}

Duration PlanCollectives::hsdp_replica_allreduce(Bytes shard) const {
  return hsdp_replica_allreduce_time(shard, plan_, links_);  // across nodes: alpha-beta
}

Duration PlanCollectives::cp_send(Bytes message) {
  if (plan_.cp <= 1) return Duration::zero();
  if (strided_span(plan_, plan_.cp, plan_.tp).nodes == 1) {
    return intra(comm::Collective::kSendRecv, message, 2);
  }
  // A ring over nodes: every step waits for its slowest hop, the one between nodes.
  return comm::collective_time(comm::Collective::kSendRecv, message, 2, links_.inter);
}

Duration PlanCollectives::grouped_all_to_all(Bytes buffer, int size, int stride) {
  if (size <= 1) return Duration::zero();
  const auto [per_node, nodes] = strided_span(plan_, size, stride);
  if (nodes == 1) return intra(comm::Collective::kAllToAll, buffer, size);
  if (per_node == 1) {
    return comm::collective_time(comm::Collective::kAllToAll, buffer, size, links_.inter);
  }
  return comm::hierarchical_collective_time(comm::Collective::kAllToAll, buffer, per_node, nodes,
                                            links_.intra, links_.inter);
}

Duration PlanCollectives::expert_dp(comm::Collective c, Bytes buffer, int group_size) {
  if (group_size <= 1 || buffer <= Bytes(0)) return Duration::zero();  // no routed experts
  const auto [per_node, nodes] = strided_span(plan_, group_size, plan_.tp * plan_.ep);
  if (nodes == 1) return intra(c, buffer, group_size);
  if (per_node == 1) return comm::collective_time(c, buffer, group_size, links_.inter);
  return comm::hierarchical_collective_time(c, buffer, per_node, nodes, links_.intra,
                                            links_.inter);
}

Duration PlanCollectives::cp_all_to_all(Bytes buffer) {
  return grouped_all_to_all(buffer, plan_.cp, plan_.tp);
}

Duration PlanCollectives::ep_all_to_all(Bytes buffer) {
  return grouped_all_to_all(buffer, plan_.ep, plan_.tp);
}

Duration PlanCollectives::pp_send(Bytes message) {
  if (!pp_crosses_nodes(plan_)) return intra(comm::Collective::kSendRecv, message, 2);
  return pp_send_time(message, plan_, links_);
}

}  // namespace vramsim::training
