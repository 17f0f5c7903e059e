// PyTorch FSDP's root unit (step_graph_forward.cpp, step_graph_backward.cpp): the embedding,
// final norm and head, which no wrapped layer holds, stay unsharded from their forward
// all-gather to the end of backward and are reduce-scattered once; with --fsdp-wrap-embeddings
// they are units of their own, resharded like the layers, as ZeRO-3 does every block.
#include <algorithm>
#include <set>
#include <tuple>

#include "sim/training/step_simulator.hpp"
#include "tests/catch.hpp"
#include "tests/training/zoo_setup.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

TrainingPlan fsdp8(Strategy s, bool wrap_embeddings) {
  TrainingPlan p;
  p.num_gpus = 8;
  p.strategy = s;
  p.checkpointing = Checkpointing{CheckpointKind::kFull, 1};
  p.micro_batch = 1;
  p.seq_len = 2048;
  p.fsdp_wrap_embeddings = wrap_embeddings;
  return p;
}

std::size_t count_ops(const OpGraph& g, OpKind kind) {
  return static_cast<std::size_t>(std::count_if(g.ops.begin(), g.ops.end(),
                                                [kind](const Op& o) { return o.kind == kind; }));
}

// Blocks gathered, each (block, micro-batch, pass) once: DeepSpeed ZeRO-3 may gather a block in
// pieces (prefetched, then the rest on demand: deepspeed_zero3_gather.hpp).
std::size_t count_gathered_blocks(const OpGraph& g) {
  std::set<std::tuple<std::int32_t, std::int32_t, bool>> blocks;
  for (const Op& o : g.ops) {
    if (o.kind == OpKind::kAllGather) blocks.insert({o.block, o.micro_batch, o.backward_pass});
  }
  return blocks.size();
}

}  // namespace

TEST_CASE("FSDP's root unit stays gathered from forward to backward, one gather and one "
          "reduce-scatter per micro-batch",
          "[training][fsdp]") {
  const TrainingSetup root =
      testing::zoo_setup("meta-llama/Llama-3.1-8B", "h100-sxm", fsdp8(Strategy::kFsdpFull, false));
  const TrainingSetup wrapped =
      testing::zoo_setup("meta-llama/Llama-3.1-8B", "h100-sxm", fsdp8(Strategy::kFsdpFull, true));
  // DeepSpeed's ZeRO-3 without its reduction bucket and releasing every block after use.
  TrainingPlan bare_zero3 = fsdp8(Strategy::kZero3, false);
  bare_zero3.contiguous_gradients = false;
  bare_zero3.max_reuse_distance = 0;
  bare_zero3.param_persistence_threshold = 0;  // no norm left out of the gathers
  const TrainingSetup zero3 = testing::zoo_setup("meta-llama/Llama-3.1-8B", "h100-sxm", bare_zero3);
  const TrainingSetup deepspeed =
      testing::zoo_setup("meta-llama/Llama-3.1-8B", "h100-sxm", fsdp8(Strategy::kZero3, false));
  const SimulationOptions once{.num_steps = 1, .record_timeline = false};
  const TrainingResult r = simulate_training(root, once);
  const TrainingResult w = simulate_training(wrapped, once);
  const TrainingResult z = simulate_training(zero3, once);
  const TrainingResult d = simulate_training(deepspeed, once);
  // 32 layers + embedding + head = 34 units. Wrapped (as ZeRO-3): each gathered in forward and
  // again in backward, 68 gathers and 34 reduce-scatters a micro-batch. Root: the embedding and
  // head share one gather in forward, kept for backward: 32 x 2 + 1 = 65; and one reduce-scatter
  // for the two: 33. DeepSpeed's default stage3_max_reuse_distance keeps the head gathered
  // into its backward (the layers before it are 2 x 525M elements away): 67.
  CHECK(count_ops(w.graph, OpKind::kAllGather) == 68);
  CHECK(count_gathered_blocks(z.graph) == 68);
  CHECK(count_gathered_blocks(d.graph) == 67);
  CHECK(count_ops(r.graph, OpKind::kAllGather) == 65);
  CHECK(count_ops(w.graph, OpKind::kReduceScatter) == 34);
  CHECK(count_ops(r.graph, OpKind::kReduceScatter) == 33);
  // Wrapped FSDP is ZeRO-3 without DeepSpeed's own buffers, except that FSDP gathers the whole
  // next unit ahead where DeepSpeed's module hooks prefetch a bucket of 5e7 elements each (the
  // embedding block has one hook for 525M elements, so layer 0 is mostly gathered on demand):
  // never faster, and in memory up to the fp32 gradients ZeRO-3's optimizer step converts
  // (stage_state.cpp).
  CHECK(z.step_time >= w.step_time);
  const Bytes converted = plan_stages(zero3).front().optimizer_transient;
  CHECK(z.devices.front().peak_allocated <= w.devices.front().peak_allocated + converted);
  // The root keeps the bf16 embedding (128256 x 4096 x 2 B = 1.05 GB) gathered through the
  // layers and the head's gradient until the embedding's: the peak grows by at least the
  // gathered embedding less its shard, and by no more than embedding and head twice (their
  // parameters and gradients).
  const std::int64_t embedding = 128256LL * 4096 * 2;
  const Bytes grown = r.devices.front().peak_allocated - w.devices.front().peak_allocated;
  CHECK(grown >= Bytes(embedding - embedding / 8));
  CHECK(grown <= Bytes(4 * embedding));
  // HSDP within one node shards like FULL_SHARD: the same root unit.
  const TrainingSetup hsdp =
      testing::zoo_setup("meta-llama/Llama-3.1-8B", "h100-sxm", fsdp8(Strategy::kHsdp, false));
  const TrainingResult h = simulate_training(hsdp, once);
  CHECK(h.devices.front().peak_allocated == r.devices.front().peak_allocated);
}
