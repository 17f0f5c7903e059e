// DeepSpeed ZeRO's own buffers and parameter reuse (stage_state.cpp, stage_plan.cpp,
// step_graph_forward.cpp, step_graph_backward.cpp), checked by hand against
// deepspeed/runtime/zero/stage3.py, stage_1_and_2.py and partitioned_param_coordinator.py
// (deepspeedai/DeepSpeed at edaa722).
#include <set>
#include <tuple>

#include "sim/training/step_simulator.hpp"
#include "tests/catch.hpp"
#include "tests/training/zoo_setup.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

// Llama-3.1-8B: 8,030,261,248 parameters; over 8 ranks 1,003,782,656 each.
constexpr std::int64_t kLlama8bParams = 8'030'261'248;
constexpr std::int64_t kLocal = kLlama8bParams / 8;

TrainingPlan zero8(Strategy s) {
  TrainingPlan p;
  p.num_gpus = 8;
  p.strategy = s;
  p.checkpointing = Checkpointing{CheckpointKind::kFull, 1};
  p.micro_batch = 1;
  p.seq_len = 256;
  return p;
}

StagePlan stage_of(const std::string& model, const TrainingPlan& p) {
  return plan_stages(testing::zoo_setup(model, "h100-sxm", p)).front();
}

// Blocks gathered per pass: ZeRO-3 may gather one block in pieces (prefetched, then the rest
// on demand: deepspeed_zero3_gather.hpp), counted once.
std::size_t gathers(const TrainingPlan& p) {
  const TrainingResult r =
      simulate_training(testing::zoo_setup("meta-llama/Llama-3.2-1B", "h100-sxm", p),
                        {.num_steps = 1, .record_timeline = false});
  std::set<std::tuple<std::int32_t, std::int32_t, bool>> gathered;
  for (const Op& o : r.graph.ops) {
    if (o.kind == OpKind::kAllGather) gathered.insert({o.block, o.micro_batch, o.backward_pass});
  }
  return gathered.size();
}

}  // namespace

TEST_CASE("DeepSpeed ZeRO's reduction buckets and the optimizer step's fp32 gradients are "
          "counted as DeepSpeed allocates them",
          "[training][deepspeed]") {
  REQUIRE(kLocal * 8 == kLlama8bParams);
  // ZeRO-3: one bf16 bucket of reduce_bucket_size = 5e8 elements; the step converts one
  // sub-group (sub_group_size 1e9 < 1,003,782,656 local) at a time: its flattened bf16 copy
  // (2 B) and its fp32 copy (4 B).
  const StagePlan z3 = stage_of("meta-llama/Llama-3.1-8B", zero8(Strategy::kZero3));
  CHECK(z3.ipg_buckets == Bytes(500'000'000LL * 2));
  CHECK(z3.optimizer_transient == Bytes(1'000'000'000LL * 6));
  TrainingPlan small_groups = zero8(Strategy::kZero3);
  small_groups.sub_group_size = 100'000'000;
  small_groups.reduce_bucket_size = 4096LL * 4096;  // Hugging Face's "auto": hidden_size^2
  const StagePlan z3_small = stage_of("meta-llama/Llama-3.1-8B", small_groups);
  CHECK(z3_small.ipg_buckets == Bytes(4096LL * 4096 * 2));
  CHECK(z3_small.optimizer_transient == Bytes(100'000'000LL * 6));

  // ZeRO-2: the whole local partition is one parameter group; overlap_comm doubles the bucket.
  const StagePlan z2 = stage_of("meta-llama/Llama-3.1-8B", zero8(Strategy::kZero2));
  CHECK(z2.ipg_buckets == Bytes(500'000'000LL * 2));
  CHECK(z2.optimizer_transient == Bytes(kLocal * 6));
  TrainingPlan overlap = zero8(Strategy::kZero2);
  overlap.overlap_comm = true;
  CHECK(stage_of("meta-llama/Llama-3.1-8B", overlap).ipg_buckets == Bytes(2 * 500'000'000LL * 2));
  TrainingPlan plain = zero8(Strategy::kZero2);
  plain.contiguous_gradients = false;
  CHECK(stage_of("meta-llama/Llama-3.1-8B", plain).ipg_buckets == Bytes(0));

  // Offloaded, the step converts on the host; the bucket stays.
  TrainingPlan offloaded = zero8(Strategy::kZero3);
  offloaded.offload_optimizer = true;
  const StagePlan z3_off = stage_of("meta-llama/Llama-3.1-8B", offloaded);
  CHECK(z3_off.optimizer_transient == Bytes(0));
  CHECK(z3_off.ipg_buckets == Bytes(500'000'000LL * 2));

  // Not DeepSpeed: FSDP, and ZeRO-1 under Megatron-LM's kernels (its distributed optimizer).
  const StagePlan fsdp = stage_of("meta-llama/Llama-3.1-8B", zero8(Strategy::kFsdpFull));
  CHECK(fsdp.ipg_buckets == Bytes(0));
  CHECK(fsdp.optimizer_transient == Bytes(0));
  TrainingPlan megatron = zero8(Strategy::kZero1);
  megatron.kernels = Kernels::kMegatron;
  const StagePlan mz1 = stage_of("meta-llama/Llama-3.1-8B", megatron);
  CHECK(mz1.ipg_buckets == Bytes(0));
  CHECK(mz1.optimizer_transient == Bytes(0));
}

TEST_CASE("DeepSpeed ZeRO-3's optimizer step can set the memory peak", "[training][deepspeed]") {
  // 256 tokens under full recompute: the activations are small, so the step's 6 GB of converted
  // gradients beside the model state (16 B x 1,003,782,656) and the 1 GB bucket is the peak.
  const TrainingSetup s =
      testing::zoo_setup("meta-llama/Llama-3.1-8B", "h100-sxm", zero8(Strategy::kZero3));
  const TrainingResult r = simulate_training(s, {.num_steps = 1, .record_timeline = false});
  const DeviceResult& d = r.devices.front();
  // With the whole bf16 copies of the 65 persistent norm weights (deepspeed_zero3_gather_test).
  CHECK(d.model_state == Bytes(16 * kLocal + 65 * 4096 * 2));
  CHECK(d.peak_allocated >= Bytes(16 * kLocal + 500'000'000LL * 2 + 1'000'000'000LL * 6));
}

TEST_CASE("DeepSpeed ZeRO-3 keeps the blocks it reuses within stage3_max_reuse_distance "
          "gathered from forward to backward",
          "[training][deepspeed]") {
  // Llama-3.2-1B: 16 layers of 60,821,504 parameters, the embedding 128,256 x 2,048 =
  // 262,668,288, tied to the head, whose module multiplies by it. Between a layer's forward and
  // its backward run the later layers and the head twice: layer 15 is 2 x 262.7M = 525M
  // elements away, layer 12 is 2 x (262.7M + 3 x 60.8M) = 890M, layer 11 1,012M. Under the
  // default 1e9 the head and layers 12-15 stay gathered. The head block's own parameters are
  // the final norm's 2048, persistent under the default stage3_param_persistence_threshold
  // (deepspeed_zero3_gather.hpp): never gathered. 17 blocks gathered in forward, 13 again in
  // backward.
  const TrainingPlan defaults = zero8(Strategy::kZero3);
  const StagePlan st = stage_of("meta-llama/Llama-3.2-1B", defaults);
  const std::vector<BlockCosts>& blocks = st.chunks.front();
  REQUIRE(blocks.size() == 18);
  std::vector<std::int64_t> kept;
  for (const BlockCosts& c : blocks) {
    if (c.kept_gathered) kept.push_back(c.layer);
  }
  CHECK(kept == std::vector<std::int64_t>{12, 13, 14, 15, -1});
  CHECK(gathers(defaults) == 17 + 13);
  // Released after every use: 17 + 17. Twice the distance: layers 3-15 and the head.
  TrainingPlan none = defaults;
  none.max_reuse_distance = 0;
  CHECK(gathers(none) == 17 + 17);
  TrainingPlan far = defaults;
  far.max_reuse_distance = 2'000'000'000;
  CHECK(gathers(far) == 17 + 4);
  // FSDP reshards its wrapped units after forward whatever DeepSpeed would do.
  TrainingPlan fsdp = zero8(Strategy::kFsdpFull);
  fsdp.fsdp_wrap_embeddings = true;
  CHECK(gathers(fsdp) == 18 + 18);
}
