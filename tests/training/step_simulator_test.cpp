// The step simulation: invariants over the memory timeline and the step-time breakdown, on zoo
// models and the device sheets.
#include "sim/training/step_simulator.hpp"

#include <filesystem>
#include <limits>

#include "sim/core/error.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/model/param_count.hpp"
#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

TrainingSetup make_setup(const std::string& model, const std::string& gpu, TrainingPlan plan) {
  const std::filesystem::path root(VRAMSIM_SOURCE_ROOT);
  TrainingSetup s{model::load_model(model, root / "scenarios" / "models"),
                  io::find_device(gpu, root / "topologies"),
                  plan,
                  {}};
  s.links = default_cluster_links(s.device);
  return s;
}

TrainingPlan small_plan(Strategy st, int gpus) {
  TrainingPlan p;
  p.num_gpus = gpus;
  p.strategy = st;
  p.micro_batch = 1;
  p.global_batch = 2 * gpus;
  p.seq_len = 1024;
  return p;
}

}  // namespace

TEST_CASE("every strategy runs two steps and returns to the same allocated bytes after each",
          "[training][step][invariant]") {
  for (Strategy st :
       {Strategy::kDdp, Strategy::kZero1, Strategy::kZero2, Strategy::kZero3, Strategy::kFsdpFull,
        Strategy::kFsdpGradOp, Strategy::kHsdp, Strategy::kFsdpNoShard}) {
    CAPTURE(to_string(st));
    const TrainingResult r =
        simulate_training(make_setup("meta-llama/Llama-3.2-1B", "h100-sxm", small_plan(st, 8)));
    REQUIRE(r.devices.size() == 1);
    const DeviceResult& d = r.devices[0];
    REQUIRE(d.allocated_after_step.size() == 2);
    CHECK(d.allocated_after_step[0] == d.allocated_after_step[1]);
    // Only the persistent state (and the cuBLAS workspace; DDP's bucket copy of the gradients)
    // is left, its buffers rounded up by the allocator: a 25 MiB bucket (PyTorch's
    // bucket_cap_mb = 25) is a large allocation, rounded to the caching allocator's 2 MiB
    // granularity, so each bucket may take up to 2 MiB more than its bytes.
    // DeepSpeed ZeRO-3 keeps its bf16 gradient reduction bucket of reduce_bucket_size
    // elements as long as the model (ZeRO-1/2 free theirs when the backward ends).
    const Bytes buckets = st == Strategy::kDdp     ? d.at_peak[1]  // = the gradients
                          : st == Strategy::kZero3 ? Bytes(kDefaultReduceBucketSize * 2)
                                                   : Bytes(0);
    const std::int64_t num_buckets = st == Strategy::kZero3
                                         ? 1
                                         : ceil_div(buckets.count(), MiB(25).count());
    CHECK(d.allocated_after_step[0] >= d.model_state + MiB(32) + buckets);
    CHECK(d.allocated_after_step[0] <
          d.model_state + MiB(32) + buckets + MiB(8) + num_buckets * MiB(2));
    CHECK(d.peak_allocated <= d.peak_reserved);
    CHECK(r.step_time > Duration::zero());
    CHECK(d.compute + d.tp_comm + d.exposed_comm + d.bubble == r.step_time);
  }
}

TEST_CASE("more checkpointing never raises the activation peak", "[training][step][invariant]") {
  TrainingPlan p = small_plan(Strategy::kFsdpFull, 8);
  p.micro_batch = 2;
  p.global_batch = 16;
  Bytes previous(std::numeric_limits<std::int64_t>::max());
  for (const char* policy : {"none", "every:4", "every:2", "selective", "full"}) {
    CAPTURE(policy);
    p.checkpointing = *checkpointing_from_string(policy);
    const TrainingResult r = simulate_training(make_setup("meta-llama/Llama-3.2-1B", "h100-sxm", p),
                                               {.num_steps = 1, .record_timeline = false});
    if (std::string(policy) != "selective") {  // selective and every:K are not ordered
      CHECK(r.devices[0].activation_peak <= previous);
      previous = r.devices[0].activation_peak;
    }
  }
}

TEST_CASE("allocated never exceeds reserved anywhere on the timeline",
          "[training][step][invariant]") {
  TrainingPlan p = small_plan(Strategy::kZero3, 16);
  p.tp = 2;
  p.pp = 2;
  p.global_batch = 32;
  const TrainingResult r =
      simulate_training(make_setup("meta-llama/Llama-3.2-1B", "a100-sxm-80g", p));
  REQUIRE_FALSE(r.memory.empty());
  for (const MemorySample& s : r.memory) REQUIRE(s.allocated <= s.reserved);
  for (const DeviceResult& d : r.devices) {
    CHECK(d.allocated_after_step[0] == d.allocated_after_step[1]);
  }
}

TEST_CASE("the first pipeline stage holds the most activations under 1F1B",
          "[training][step][pp]") {
  TrainingPlan p = small_plan(Strategy::kDdp, 4);
  p.pp = 4;
  p.global_batch = 8;
  const TrainingResult r = simulate_training(make_setup("meta-llama/Llama-3.2-1B", "h100-sxm", p),
                                             {.num_steps = 1, .record_timeline = false});
  REQUIRE(r.devices.size() == 4);
  CHECK(r.devices[0].activation_peak > r.devices[1].activation_peak);
  CHECK(r.devices[1].activation_peak > r.devices[2].activation_peak);
  CHECK(r.devices[0].bubble < r.step_time);
  SECTION("GPipe keeps every micro-batch's activations") {
    p.schedule = PipelineSchedule::kGpipe;
    const TrainingResult g = simulate_training(make_setup("meta-llama/Llama-3.2-1B", "h100-sxm", p),
                                               {.num_steps = 1, .record_timeline = false});
    CHECK(g.devices[3].activation_peak > r.devices[3].activation_peak);
  }
  SECTION("the interleaved schedule runs with two chunks per device") {
    p.schedule = PipelineSchedule::kInterleaved;
    p.pp_interleave = 2;
    const TrainingResult i = simulate_training(make_setup("meta-llama/Llama-3.2-1B", "h100-sxm", p),
                                               {.num_steps = 1, .record_timeline = false});
    CHECK(i.devices[0].bubble < r.devices[0].bubble);
  }
}

TEST_CASE("one GPU with no communication spends the step computing", "[training][step]") {
  TrainingPlan p = small_plan(Strategy::kDdp, 1);
  const TrainingResult r = simulate_training(make_setup("meta-llama/Llama-3.2-1B", "h100-sxm", p));
  const DeviceResult& d = r.devices[0];
  CHECK(d.exposed_comm == Duration::zero());
  CHECK(d.bubble == Duration::zero());
  CHECK(d.compute == r.step_time);
  CHECK(r.mfu > 0.3);
  CHECK(r.mfu < cost::kMatmulEfficiency);
}

TEST_CASE("a MoE model trains with every expert on every rank and MFU over the active ones",
          "[training][step][moe]") {
  // Mixtral-8x7B: 46.7B parameters, 12.9B active (2 of 8 experts per token).
  TrainingPlan p = small_plan(Strategy::kFsdpFull, 64);
  p.seq_len = 4096;
  p.checkpointing = *checkpointing_from_string("full");
  const TrainingSetup s = make_setup("mistralai/Mixtral-8x7B-v0.1", "h100-sxm", p);
  const model::ParamCount pc = model::count_params(s.model);
  const TrainingResult r = simulate_training(s, {.num_steps = 1, .record_timeline = false});
  // FULL_SHARD of all 46.7B parameters: 16 bytes each over 64 ranks (per-block padding aside).
  CHECK(r.devices[0].model_state.count() ==
        Approx(16.0 * static_cast<double>(pc.total) / 64.0).epsilon(1e-3));
  const double tokens = static_cast<double>(p.global_batch * p.seq_len);
  CHECK(r.model_flops.count() > 6.0 * static_cast<double>(pc.active - pc.embedding) * tokens);
  CHECK(r.model_flops.count() < 6.0 * static_cast<double>(pc.total) * tokens / 3.0);
  CHECK(r.fits);
}

TEST_CASE("PyTorch DDP keeps a second copy of the gradients in its 25 MB buckets",
          "[training][step][ddp]") {
  TrainingPlan p = small_plan(Strategy::kDdp, 8);
  const TrainingSetup s = make_setup("meta-llama/Llama-3.2-1B", "h100-sxm", p);
  const std::vector<StagePlan> stages = plan_stages(s);
  Bytes total(0);
  for (Bytes b : stages[0].ddp_buckets) {
    CHECK(b <= kDefaultDdpBucket);
    total += b;
  }
  CHECK(total == stages[0].state.grads);
  CHECK(stages[0].ddp_buckets.size() ==
        static_cast<std::size_t>(ceil_div(total.count(), kDefaultDdpBucket.count())));
  const TrainingResult r = simulate_training(s, {.num_steps = 1, .record_timeline = false});
  CHECK(r.devices[0].at_peak[static_cast<std::size_t>(MemoryCategory::kCommBuffers)] == total);
  SECTION("one rank needs no buckets") {
    p.num_gpus = 1;
    p.global_batch = 2;
    CHECK(plan_stages(make_setup("meta-llama/Llama-3.2-1B", "h100-sxm", p))[0].ddp_buckets.empty());
  }
}

TEST_CASE("a step whose transfers outlast the clock blames the links, not the batch",
          "[training][bad-input]") {
  TrainingSetup s = make_setup("meta-llama/Llama-3.2-1B", "h100-sxm", small_plan(Strategy::kDdp, 2));
  // 0.4e18 ns (about 12.7 years) per hop: the gradient all-reduces alone overflow the ns clock.
  s.links.intra.latency = Duration::from_nanoseconds(400'000'000'000'000'000);
  try {
    (void)simulate_training(s, {});
    FAIL("no error");
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    CHECK(e.report().problems()[0].field == "hardware.topology");
    CHECK_THAT(e.what(), Catch::Matchers::Contains("link bandwidth or latency"));
  }
}
