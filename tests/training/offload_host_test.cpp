// Host memory of the model state: ZeRO-Offload's master weights, optimizer states and fp32
// gradient partition with --offload-optimizer, a paged optimizer's states, and which resource
// binds the offloaded step (the host link or CPU Adam).

#include "sim/model/model_zoo.hpp"
#include "sim/model/param_count.hpp"
#include "sim/training/step_simulator.hpp"
#include "tests/catch.hpp"
#include "tests/training/zoo_setup.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

TrainingSetup llama8b(const TrainingPlan& plan) {
  return testing::zoo_setup("meta-llama/Llama-3.1-8B", "h100-sxm", plan);
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
  // The host's rate is an input (--cpu-adam-rate): DeepSpeed's tutorial host, 1.62e9/s.
  TrainingPlan fast_host = p;
  fast_host.cpu_adam_params_per_second = 1.62e9;
  const StagePlan fast = plan_stages(llama8b(fast_host)).front();
  CHECK(fast.offload_cpu.seconds() == Approx(8.030261248 / 1.62).epsilon(1e-9));
  fast_host.cpu_adam_params_per_second = 0;
  ValidationReport r;
  fast_host.validate(r);
  CHECK_FALSE(r.ok());
  CHECK(r.format().find("memory.cpu_adam_rate") != std::string::npos);
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

namespace {

TrainingPlan zero3_offload(OffloadParams where) {
  TrainingPlan p;
  p.num_gpus = 8;
  p.strategy = Strategy::kZero3;
  p.offload_optimizer = true;
  p.offload_params = where;
  p.nvme_gb_per_s = where == OffloadParams::kNvme ? 6.0 : 0.0;
  p.checkpointing = Checkpointing{CheckpointKind::kFull, 1};
  // No persistent parameters, so that every parameter is in the shard (DeepSpeed's estimators
  // leave them out too; deepspeed_zero3_gather_test counts them).
  p.param_persistence_threshold = 0;
  return p;
}

}  // namespace

TEST_CASE("parameter offload moves the bf16 parameter shard to the host or NVMe and fetches it "
          "per block",
          "[training][offload]") {
  // Llama-3.1-8B, ZeRO-3 over 8 ranks: the bf16 shard is 2 B x ceil(n / 8) per rank.
  const TrainingSetup base = llama8b(zero3_offload(OffloadParams::kNone));
  const TrainingSetup cpu = llama8b(zero3_offload(OffloadParams::kCpu));
  const TrainingSetup nvme = llama8b(zero3_offload(OffloadParams::kNvme));
  const StagePlan b = plan_stages(base).front();
  const StagePlan c = plan_stages(cpu).front();
  const StagePlan v = plan_stages(nvme).front();
  const std::int64_t n = b.trainable_params;
  const Bytes shard(2 * ceil_div(n, 8));
  CHECK(b.state.params == shard);
  CHECK(c.state.params == Bytes(0));
  CHECK(c.host_state == b.host_state + shard);
  CHECK(v.state.params == Bytes(0));
  // On NVMe the host keeps DeepSpeed's parameter swap buffers: 5 x 1e8 bf16 elements.
  CHECK(v.host_state == b.host_state + Bytes(5 * 100'000'000 * 2));
  CHECK(v.nvme_state == shard);
  // Each block's all-gather waits for its shard: over the host link (and from NVMe at 6 GB/s).
  const comm::LinkModel host = comm::host_link(base.device);
  const BlockCosts& layer_b = b.chunks.front()[1];
  const Bytes layer_shard(2 * ceil_div(layer_b.num_params, 8));
  CHECK(c.chunks.front()[1].all_gather ==
        layer_b.all_gather + host.latency + layer_shard / host.bandwidth);
  CHECK(v.chunks.front()[1].all_gather ==
        layer_b.all_gather + host.latency + layer_shard / host.bandwidth + layer_shard / GBps(6));
  // The gradient shard goes down after the reduce-scatter: 2 B per parameter / 8.
  CHECK(c.chunks.front()[1].reduce_scatter ==
        layer_b.reduce_scatter + host.latency + layer_shard / host.bandwidth);
  // At the step nothing crosses the host link; on NVMe the updated shard is written back.
  CHECK(c.offload_pcie == Duration::zero());
  CHECK(v.offload_nvme == shard / GBps(6));
  CHECK(v.offload == v.offload_cpu + v.offload_nvme);
  // Simulated: the device holds less. (The step need not be slower than optimizer offload
  // alone: the shards' transfers overlap compute block by block instead of the whole shard
  // going up at the step.) NVMe at 6 GB/s cannot keep up with this step's compute: slower.
  const TrainingResult rb = simulate_training(base);
  const TrainingResult rc = simulate_training(cpu);
  const TrainingResult rv = simulate_training(nvme);
  CHECK(rc.devices.front().peak_allocated < rb.devices.front().peak_allocated);
  CHECK(rv.step_time > rc.step_time);
}

TEST_CASE("parameter offload is refused where DeepSpeed and FSDP do not run it",
          "[training][offload]") {
  const auto fields = [](const TrainingPlan& p) {
    ValidationReport r;
    p.validate(r);
    std::vector<std::string> out;
    for (const Problem& x : r.problems()) out.push_back(x.field + ": " + x.message);
    return out;
  };
  const auto has = [](const std::vector<std::string>& v, const std::string& prefix) {
    for (const std::string& s : v) {
      if (s.rfind(prefix, 0) == 0) return true;
    }
    return false;
  };
  TrainingPlan ddp = zero3_offload(OffloadParams::kCpu);
  ddp.strategy = Strategy::kZero2;
  CHECK(has(fields(ddp), "memory.offload_params: parameter offload fetches"));
  TrainingPlan alone = zero3_offload(OffloadParams::kCpu);
  alone.offload_optimizer = false;
  CHECK(has(fields(alone), "memory.offload_params: parameters offloaded while"));
  TrainingPlan no_bw = zero3_offload(OffloadParams::kNvme);
  no_bw.nvme_gb_per_s = 0.0;
  CHECK(has(fields(no_bw), "hardware.nvme_bandwidth: "));
  CHECK(fields(zero3_offload(OffloadParams::kNvme)).empty());
  TrainingPlan fsdp_nvme = zero3_offload(OffloadParams::kNvme);
  fsdp_nvme.strategy = Strategy::kFsdpFull;  // FSDP's CPUOffload has no NVMe tier
  fsdp_nvme.param_persistence_threshold = kDefaultParamPersistenceThreshold;  // zero3's setting
  CHECK(has(fields(fsdp_nvme), "memory.offload_params: parameters on NVMe are ZeRO-Infinity's"));
  fsdp_nvme.offload_params = OffloadParams::kCpu;
  CHECK(fields(fsdp_nvme).empty());
}

TEST_CASE("ZeRO-Infinity's optimizer on NVMe: 16 bytes per parameter there, swap buffers on the "
          "host, its reads and writes in the step",
          "[training][offload]") {
  // Llama-3.1-8B, ZeRO-3 on one H100, optimizer states on NVMe at 6 GB/s.
  TrainingPlan p;
  p.strategy = Strategy::kZero3;
  p.offload_optimizer = true;
  p.offload_optimizer_device = OffloadDevice::kNvme;
  p.nvme_gb_per_s = 6.0;
  p.checkpointing = Checkpointing{CheckpointKind::kFull, 1};
  p.param_persistence_threshold = 0;  // the parameters alone on the device
  const TrainingSetup s = llama8b(p);
  const StagePlan st = plan_stages(s).front();
  const std::int64_t n = st.trainable_params;  // 8,030,261,248
  REQUIRE(n == 8'030'261'248);
  // fp32 partition (4) + Adam's two fp32 states (8) + the fp32 gradients (4), all on NVMe.
  CHECK(st.nvme_state == Bytes(16 * n));
  CHECK(st.state.master + st.state.optimizer + st.state.grads == Bytes(0));
  CHECK(st.state.params == Bytes(2 * n));
  // Host: 4 buffers (offload_optimizer.buffer_count) of the largest sub-group, min(n, 1e9)
  // fp32 elements: 16e9 B, 14.90 GiB.
  CHECK(st.host_state == Bytes(4 * 1'000'000'000LL * 4));
  // Each byte at rest is read once and written once a step: 2 x 128.48 GB / 6 GB/s = 42.83 s.
  CHECK(st.offload_nvme == Bytes(32 * n) / GBps(6));
  CHECK(st.offload_nvme.seconds() == Approx(42.8280).epsilon(1e-5));
  CHECK(st.offload == st.offload_pcie + st.offload_cpu + st.offload_nvme);
  // A smaller sub-group shrinks the host buffers, nothing else.
  TrainingPlan small = p;
  small.sub_group_size = 100'000'000;
  const StagePlan sm = plan_stages(llama8b(small)).front();
  CHECK(sm.host_state == Bytes(4 * 100'000'000LL * 4));
  CHECK(sm.nvme_state == st.nvme_state);
  // Over 8 ranks the partition (n / 8 = 1.004e9) still exceeds a 1e9 sub-group.
  TrainingPlan eight = p;
  eight.num_gpus = 8;
  const StagePlan e8 = plan_stages(llama8b(eight)).front();
  CHECK(e8.nvme_state == Bytes(16 * ceil_div(n, 8)));
  CHECK(e8.host_state == Bytes(4 * 1'000'000'000LL * 4));
  eight.num_gpus = 16;  // 5.02e8 per rank: the buffers follow the partition
  CHECK(plan_stages(llama8b(eight)).front().host_state == Bytes(4 * ceil_div(n, 16) * 4));
  // The offloaded step is bound by the NVMe, and the whole step is slower than on the CPU.
  TrainingPlan cpu = p;
  cpu.offload_optimizer_device = OffloadDevice::kCpu;
  const TrainingSetup sc = llama8b(cpu);
  CHECK(plan_stages(sc).front().host_state == Bytes(16 * n));
  CHECK(simulate_training(s).step_time > simulate_training(sc).step_time);
}

TEST_CASE("optimizer states on NVMe are refused outside ZeRO-3, without offload or bandwidth",
          "[training][offload]") {
  const auto messages = [](const TrainingPlan& p) {
    ValidationReport r;
    p.validate(r);
    std::string out;
    for (const Problem& x : r.problems()) out += x.field + ": " + x.message + "\n";
    return out;
  };
  TrainingPlan p;
  p.strategy = Strategy::kZero3;
  p.offload_optimizer = true;
  p.offload_optimizer_device = OffloadDevice::kNvme;
  p.nvme_gb_per_s = 3.5;
  CHECK(messages(p).empty());
  TrainingPlan zero2 = p;
  zero2.strategy = Strategy::kZero2;
  CHECK_THAT(messages(zero2), Catch::Contains(
                                  "memory.offload_optimizer_device: optimizer states on NVMe "
                                  "are ZeRO-Infinity's, which needs zero3 (got zero2)"));
  TrainingPlan fsdp = p;
  fsdp.strategy = Strategy::kFsdpFull;
  CHECK_THAT(messages(fsdp), Catch::Contains("needs zero3"));
  TrainingPlan no_offload = p;
  no_offload.offload_optimizer = false;
  CHECK_THAT(messages(no_offload),
             Catch::Contains("add --offload-optimizer"));
  TrainingPlan no_bw = p;
  no_bw.nvme_gb_per_s = 0.0;
  CHECK_THAT(messages(no_bw), Catch::Contains(
                                  "hardware.nvme_bandwidth: optimizer states on NVMe need"));
  TrainingPlan no_group = p;
  no_group.sub_group_size = 0;
  CHECK_THAT(messages(no_group), Catch::Contains("memory.sub_group_size"));
}

TEST_CASE("host memory per node is DeepSpeed's ZeRO-3 estimate before its 1.5 margin",
          "[training][offload][validation]") {
  // deepspeed/runtime/zero/stage3.py, estimate_zero3_model_states_mem_needs (zero_init=True):
  //   cpu_offload, not cpu_offload_params: cpu_mem = 16 Ψ / nodes x additional_buffer_factor
  //   cpu_offload and cpu_offload_params:  cpu_mem = 18 Ψ / nodes x additional_buffer_factor
  // with additional_buffer_factor = 1.5 by default, a margin the estimator adds; the bytes it
  // multiplies are fp32 master, Adam's two states and the fp32 gradient partition (16), plus
  // the fp16 parameter partition (2) when the parameters are offloaded.
  // Llama-3.1-8B on one node of 8 GPUs: each rank's share, times 8.
  const std::int64_t n = 8'030'261'248;
  const std::int64_t per_rank = ceil_div(n, 8);
  const StagePlan gpu_params = plan_stages(llama8b(zero3_offload(OffloadParams::kNone))).front();
  CHECK(8 * gpu_params.host_state == Bytes(16 * 8 * per_rank));
  CHECK(Bytes(16 * n) <= 8 * gpu_params.host_state);
  CHECK(8 * gpu_params.host_state <= Bytes(16 * n + 16 * 8));  // the partitions' padding
  const StagePlan cpu_params = plan_stages(llama8b(zero3_offload(OffloadParams::kCpu))).front();
  CHECK(8 * cpu_params.host_state == Bytes(18 * 8 * per_rank));
  // The device side of the same estimator: 2 Ψ / N with the parameters on the device, none
  // offloaded (the largest layer's gathered copy is a temporary of the step simulation).
  CHECK(gpu_params.state.total() == Bytes(2 * per_rank));
  CHECK(cpu_params.state.total() == Bytes(0));
}
