// The collectives the step simulation charges follow NCCL's ring traffic (nccl-tests,
// doc/PERFORMANCE.md): an all-reduce puts 2(n-1)/n of the buffer on each rank's links,
// all-gather and reduce-scatter (n-1)/n.
#include "sim/training/cluster_links.hpp"

#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {
ClusterLinks links() {
  // 100 GB/s intra-node, 10 GB/s inter-node, no latency: times are pure volume / bandwidth.
  return {{GBps(100), Duration::zero()}, {GBps(10), Duration::zero()}};
}
TrainingPlan dp_plan(int gpus, int per_node) {
  TrainingPlan p;
  p.num_gpus = gpus;
  p.gpus_per_node = per_node;
  return p;
}
}  // namespace

TEST_CASE("a data-parallel all-reduce inside a node moves 2(n-1)/n of the buffer",
          "[training][nccl][validation]") {
  const Bytes s = GB(1);
  const Duration t = dp_collective_time(comm::Collective::kAllReduce, s, 8, dp_plan(8, 8), links());
  CHECK(t == Duration::from_seconds(2.0 * 7.0 / 8.0 * 1e9 / 100e9));
}

TEST_CASE("all-gather and reduce-scatter inside a node move (n-1)/n of the buffer",
          "[training][nccl][validation]") {
  const Bytes s = GB(1);
  for (auto c : {comm::Collective::kAllGather, comm::Collective::kReduceScatter}) {
    CHECK(dp_collective_time(c, s, 4, dp_plan(4, 8), links()) ==
          Duration::from_seconds(3.0 / 4.0 * 1e9 / 100e9));
  }
}

TEST_CASE("one DP rank per node sends the whole ring volume over the network",
          "[training][nccl][validation]") {
  TrainingPlan p = dp_plan(64, 8);
  p.tp = 8;  // TP fills each node: the 8 DP ranks sit on 8 different nodes
  CHECK(p.dp_ranks_per_node() == 1);
  CHECK(dp_collective_time(comm::Collective::kAllReduce, GB(1), 8, p, links()) ==
        Duration::from_seconds(2.0 * 7.0 / 8.0 * 1e9 / 10e9));
}

TEST_CASE("a single rank or TP of 1 costs nothing", "[training][nccl]") {
  CHECK(dp_collective_time(comm::Collective::kAllReduce, GB(1), 1, dp_plan(8, 8), links()) ==
        Duration::zero());
  CHECK(tp_collective_time(comm::Collective::kAllReduce, GB(1), dp_plan(8, 8), links()) ==
        Duration::zero());
}
