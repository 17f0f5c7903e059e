// Training costs through the one cost model (sim/cost): the datasheet roofline by default, a
// calibration profile's tables where they cover the shapes.
#include <filesystem>

#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/training/step_simulator.hpp"
#include "tests/catch.hpp"
#include "tests/hardware/calibration_fixture.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

// Llama-3.1-8B on one H100: the fixture profile measured its GEMM shapes (n, k) at m up to
// 16384, and a 2048-token prefill attention.
TrainingSetup llama8b_setup() {
  const std::filesystem::path root(VRAMSIM_SOURCE_ROOT);
  TrainingPlan p;
  p.num_gpus = 1;
  p.strategy = Strategy::kDdp;
  p.micro_batch = 1;
  p.global_batch = 1;
  p.seq_len = 2048;
  TrainingSetup s{model::load_model("meta-llama/Llama-3.1-8B", root / "scenarios" / "models"),
                  io::find_device("h100-sxm", root / "topologies"), p, {}};
  s.links = default_cluster_links(s.device);
  return s;
}

cost::BasisCounts total(const TrainingResult& r) {
  cost::BasisCounts c;
  for (const StagePlan& st : r.stages) c += st.cost_basis;
  return c;
}

}  // namespace

TEST_CASE("without a profile every training cost is the datasheet roofline",
          "[training][cost]") {
  const TrainingResult r = simulate_training(llama8b_setup(), {.record_timeline = false});
  const cost::BasisCounts c = total(r);
  CHECK(c.total() > 0);
  CHECK(c.datasheet == c.total());
}

TEST_CASE("the fixture profile's GEMM tables change the training step time",
          "[training][cost]") {
  const TrainingSetup datasheet = llama8b_setup();
  TrainingSetup calibrated = datasheet;
  calibrated.calibration = testing::fixture_profile();
  const TrainingResult a = simulate_training(datasheet, {.record_timeline = false});
  const TrainingResult b = simulate_training(calibrated, {.record_timeline = false});
  const cost::BasisCounts c = total(b);
  CHECK(c.measured > 0);  // the forward GEMMs of q_proj, o_proj, gate/up and down at m = 2048
  CHECK(c.measured + c.interpolated + c.scaled > c.datasheet);
  CHECK(b.step_time != a.step_time);
  // Memory is not a cost: the profile changes times only.
  CHECK(b.devices[0].peak_reserved == a.devices[0].peak_reserved);
  // Every block's forward and backward stays positive and the backward costs more.
  for (const BlockCosts& blk : b.stages[0].chunks[0]) {
    CHECK(blk.backward > blk.forward);
  }
}

TEST_CASE("the datasheet backward of a compute-bound layer is twice its forward matmuls",
          "[training][cost]") {
  const TrainingResult r = simulate_training(llama8b_setup(), {.record_timeline = false});
  // A decoder layer at 2048 tokens: every GEMM compute-bound, so dX and dW each cost the
  // forward GEMM's time; attention and memory-bound kernels also double.
  const BlockCosts& layer = r.stages[0].chunks[0][1];
  REQUIRE(layer.layer == 0);
  CHECK(static_cast<double>(layer.backward.nanoseconds()) ==
        Approx(2.0 * static_cast<double>(layer.forward.nanoseconds())).epsilon(1e-6));
}

TEST_CASE("the fixture profile's all-reduce table times the TP collectives inside a node",
          "[training][cost][nccl]") {
  TrainingSetup datasheet = llama8b_setup();
  datasheet.plan.num_gpus = 8;
  datasheet.plan.tp = 8;
  datasheet.plan.gpus_per_node = 8;
  TrainingSetup calibrated = datasheet;
  calibrated.calibration = testing::fixture_profile();
  const std::vector<StagePlan> a = plan_stages(datasheet);
  const std::vector<StagePlan> b = plan_stages(calibrated);
  // Layer 0 of the only stage (index 1: after the embedding block).
  const BlockCosts& la = a[0].chunks[0][1];
  const BlockCosts& lb = b[0].chunks[0][1];
  REQUIRE(la.layer == 0);
  // Megatron TP without sequence parallelism: two all-reduces of s * b * h activations (bf16).
  const Bytes message(2 * 2048 * 1 * 4096);
  const cost::CostModel measured(calibrated.device, *calibrated.calibration);
  const cost::TimeEstimate e =
      measured.collective(comm::Collective::kAllReduce, message, 8, calibrated.links.intra);
  CHECK(e.basis != cost::Basis::kDatasheet);
  CHECK(lb.tp_forward == 2 * e.time);
  // Without a profile: alpha-beta over NVLink at the bus bandwidth NCCL reaches on it.
  comm::LinkModel nvlink = datasheet.links.intra;
  nvlink.bandwidth = kNcclNvlinkBusBandwidthFraction * nvlink.bandwidth;
  CHECK(la.tp_forward ==
        2 * comm::collective_time(comm::Collective::kAllReduce, message, 8, nvlink));
  CHECK(la.tp_forward != lb.tp_forward);
  // The collectives' estimates are counted with the compute ones.
  CHECK(b[0].cost_basis.total() == a[0].cost_basis.total());
  CHECK(b[0].cost_basis.datasheet < a[0].cost_basis.datasheet);
}
