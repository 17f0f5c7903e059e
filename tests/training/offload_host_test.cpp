// Host memory of the model state: ZeRO-Offload's master weights, optimizer states and fp32
// gradient partition with --offload-optimizer, a paged optimizer's states, and which resource
// binds the offloaded step (the host link or CPU Adam).
#include <filesystem>

#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/model/param_count.hpp"
#include "sim/training/step_simulator.hpp"
#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

TrainingSetup llama8b(TrainingPlan plan) {
  const std::filesystem::path root(VRAMSIM_SOURCE_ROOT);
  TrainingSetup s{model::load_model("meta-llama/Llama-3.1-8B", root / "scenarios" / "models"),
                  io::find_device("h100-sxm", root / "topologies"), plan, {}};
  s.links = default_cluster_links(s.device);
  return s;
}

}  // namespace

TEST_CASE("ZeRO-Offload keeps 16 bytes per parameter in host memory and CPU Adam binds",
          "[training][offload]") {
  TrainingPlan p;
  p.strategy = Strategy::kZero2;
  p.offload_optimizer = true;
  p.checkpointing = Checkpointing{CheckpointKind::kFull, 1};
  const TrainingSetup s = llama8b(p);
  const std::vector<StagePlan> stages = plan_stages(s);
  const StagePlan& st = stages.front();
  const std::int64_t n = model::count_params(s.model).total;  // 8,030,261,248
  REQUIRE(st.num_params == n);
  // fp32 master (4) + Adam's two fp32 states (8) + the fp32 gradient partition (4).
  CHECK(st.host_state == Bytes(16 * n));
  CHECK(st.state.grads == Bytes(0));
  CHECK(st.state.master + st.state.optimizer == Bytes(0));
  // bf16 gradients down and bf16 parameters up the host link; 1e9 parameters/s of CPU Adam.
  CHECK(st.offload_pcie == Bytes(4 * n) / comm::host_link(s.device).bandwidth);
  CHECK(st.offload_cpu.seconds() == Approx(8.030261248).epsilon(1e-9));
  CHECK(st.offload == st.offload_pcie + st.offload_cpu);
  CHECK(st.offload_cpu > st.offload_pcie);
}

TEST_CASE("DDP with offload keeps its gradients on the device: 12 bytes per parameter on the host",
          "[training][offload]") {
  TrainingPlan p;
  p.offload_optimizer = true;
  const std::vector<StagePlan> stages = plan_stages(llama8b(p));
  CHECK(stages.front().host_state == Bytes(12 * stages.front().num_params));
  CHECK(stages.front().state.grads == Bytes(2 * stages.front().num_params));
}

TEST_CASE("a paged optimizer's states count in host memory, the rest stays on the device",
          "[training][offload][lora]") {
  TrainingPlan p;
  p.paged_optimizer = true;
  p.lora.rank = 16;
  const std::vector<StagePlan> stages = plan_stages(llama8b(p));
  constexpr std::int64_t kAdapters = 6'815'744;
  CHECK(stages.front().host_state == Bytes(8 * kAdapters));
  CHECK(stages.front().state.optimizer == Bytes(0));
  CHECK(stages.front().state.master == Bytes(4 * kAdapters));
  TrainingPlan both = p;
  both.offload_optimizer = true;
  ValidationReport r;
  both.validate(r);
  CHECK_FALSE(r.ok());
}

TEST_CASE("a paged 32-bit optimizer keeps fp32 states on the host under pure bf16 too",
          "[training][offload][lora]") {
  TrainingPlan p;
  p.paged_optimizer = true;
  p.lora.rank = 16;
  p.precision = Precision::kBf16;  // qlora.py --bf16: adapters in bf16, no master copy
  const std::vector<StagePlan> stages = plan_stages(llama8b(p));
  constexpr std::int64_t kAdapters = 6'815'744;
  // paged_adamw_32bit: two fp32 states per trainable parameter, not two bf16 ones.
  CHECK(stages.front().host_state == Bytes(8 * kAdapters));
  CHECK(stages.front().state.master == Bytes(0));
  TrainingPlan eight_bit = p;
  eight_bit.optimizer = Optimizer::kAdam8bit;  // paged_adamw_8bit: one byte per state
  CHECK(plan_stages(llama8b(eight_bit)).front().host_state == Bytes(2 * kAdapters));
}

TEST_CASE("without offload or paging nothing is in host memory", "[training][offload]") {
  const std::vector<StagePlan> stages = plan_stages(llama8b(TrainingPlan{}));
  CHECK(stages.front().host_state == Bytes(0));
}
