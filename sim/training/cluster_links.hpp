// The links a training plan's collectives cross: the intra-node fabric (NVLink / NVSwitch,
// Infinity Fabric or PCIe) and the inter-node network, and which of them each group uses under
// the rank order of training_plan.hpp (TP innermost, then CP, then DP, then PP; EP inside
// CP x DP).
#pragma once

#include "sim/comm/collective.hpp"
#include "sim/core/units.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/hardware/device_spec.hpp"
#include "sim/training/training_plan.hpp"

namespace vramsim::training {

/// Default inter-node bandwidth per GPU: one 400 Gb/s NIC per GPU on H100/H200/B200-class nodes
/// (DGX H100: 8 x ConnectX-7 400 Gb/s InfiniBand), one 200 Gb/s NIC per GPU otherwise (DGX A100:
/// 8 x ConnectX-6 200 Gb/s HDR InfiniBand). Source: NVIDIA DGX A100 / DGX H100 user guides.
inline constexpr double kDefaultNetworkGbpsFast = 400.0;
inline constexpr double kDefaultNetworkGbpsBase = 200.0;

/// Fraction of the per-direction NVLink bandwidth that NCCL's ring collectives reach as bus
/// bandwidth (busbw, comm/collective.hpp) on the tens-of-MB messages of tensor parallelism.
/// NOTE: an estimate quoted from memory, not re-checked here: nccl-tests' all_reduce_perf on a
/// DGX A100 (NVLink 3, 300 GB/s per direction through NVSwitch) reports about 230-235 GB/s busbw
/// from ~32 MB up, i.e. 0.77-0.78; the audit of issue 13 used 0.78. Applied to training's
/// tensor-parallel collectives only (serving keeps the raw link, so its numbers do not move); a
/// calibration profile's measured collective table replaces it where it holds the size.
inline constexpr double kNcclNvlinkBusBandwidthFraction = 0.78;

struct ClusterLinks {
  comm::LinkModel intra;
  comm::LinkModel inter;
};

/// The intra-node link of the device's own fabric and the default network above.
ClusterLinks default_cluster_links(const hardware::DeviceSpec& device);

/// Time of a collective over the plan's TP group (`buffer` as in comm/collective.hpp).
Duration tp_collective_time(comm::Collective c, Bytes buffer, const TrainingPlan& plan,
                            const ClusterLinks& links);
/// Time of a collective over a gradient group of `group_size` ranks (the cp x dp ranks holding
/// the same weights, the expert group's, or for HSDP the intra-node shard group), split into
/// intra- and inter-node phases.
Duration dp_collective_time(comm::Collective c, Bytes buffer, int group_size,
                            const TrainingPlan& plan, const ClusterLinks& links);
/// HSDP's all-reduce of the sharded gradient across the cp x dp / shard replicas (one per
/// node).
Duration hsdp_replica_allreduce_time(Bytes shard, const TrainingPlan& plan,
                                     const ClusterLinks& links);
/// One activation (or gradient) send between neighbouring pipeline stages.
Duration pp_send_time(Bytes message, const TrainingPlan& plan, const ClusterLinks& links);

/// The collectives of one plan, costed as the functions above do, except that a collective
/// inside one node goes through the one cost model: a calibration profile's measured table where
/// it holds the op, the rank count and the size, the same alpha-beta model over the fabric
/// otherwise (so without a profile the times are exactly the functions' above). A collective
/// that crosses nodes stays alpha-beta over both links: a profile measures one node. `counts`
/// tallies the basis of every intra-node estimate. Tensor-parallel collectives inside a node
/// run over NVLink at kNcclNvlinkBusBandwidthFraction of its bandwidth (what NCCL
/// reaches), unlike tp_collective_time's raw link.
class PlanCollectives {
 public:
  /// Keeps references: `cm`, `plan` and `links` must outlive this.
  PlanCollectives(const cost::CostModel& cm, const TrainingPlan& plan, const ClusterLinks& links)
      : cm_(cm), plan_(plan), links_(links) {}

  Duration tp(comm::Collective c, Bytes buffer);
  Duration dp(comm::Collective c, Bytes buffer, int group_size);
  /// A collective over `group_size` ranks of the expert gradient group (ranks tp x ep apart).
  Duration expert_dp(comm::Collective c, Bytes buffer, int group_size);
  Duration hsdp_replica_allreduce(Bytes shard) const;
  Duration pp_send(Bytes message);
  /// One step of context parallelism's ring: a send to the next CP rank (and a receive from the
  /// previous), inside a node when the tp x cp ranks fit one, else over the network.
  Duration cp_send(Bytes message);
  /// An all-to-all over the CP group (Ulysses) and over the EP group (MoE token dispatch and
  /// combine); `buffer` is each rank's whole send buffer (comm/collective.hpp). Both groups'
  /// ranks sit tp apart.
  Duration cp_all_to_all(Bytes buffer);
  Duration ep_all_to_all(Bytes buffer);

  cost::BasisCounts counts;

 private:
  Duration grouped_all_to_all(Bytes buffer, int size, int stride);
  Duration intra(comm::Collective c, Bytes buffer, int num_ranks);
  const cost::CostModel& cm_;
  const TrainingPlan& plan_;
  const ClusterLinks& links_;
};

}  // namespace vramsim::training
