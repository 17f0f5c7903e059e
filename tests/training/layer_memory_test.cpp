// The caching allocator is fed one request per tensor, not one per layer: each total of
// activation_memory.hpp splits into the tensors that make it up (sizes by hand for Llama 3.1 8B
// under torchtitan's settings), and a step's reserve above its allocation comes from the
// tensors' sizes and streams.
#include <numeric>
#include <vector>

#include "sim/training/activation_memory.hpp"
#include "sim/training/layer_memory.hpp"
#include "sim/training/step_simulator.hpp"
#include "tests/catch.hpp"
#include "tests/training/zoo_setup.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

Bytes sum(const std::vector<Bytes>& v) { return std::accumulate(v.begin(), v.end(), Bytes(0)); }

constexpr std::int64_t kMiB = 1 << 20;

std::vector<std::int64_t> in_mib(const std::vector<Bytes>& v) {
  std::vector<std::int64_t> out;
  for (const Bytes b : v) out.push_back(b.count() / kMiB);
  return out;
}

}  // namespace

TEST_CASE("split_into_tensors keeps the leading tensors that fit and adds what is left",
          "[training][memory]") {
  CHECK(split_into_tensors(Bytes(10), {Bytes(4), Bytes(4), Bytes(4)}) ==
        std::vector<Bytes>{Bytes(4), Bytes(4), Bytes(2)});
  CHECK(split_into_tensors(Bytes(10), {Bytes(4)}) == std::vector<Bytes>{Bytes(4), Bytes(6)});
  CHECK(split_into_tensors(Bytes(8), {Bytes(4), Bytes(0), Bytes(4)}) ==
        std::vector<Bytes>{Bytes(4), Bytes(4)});
  CHECK(split_into_tensors(Bytes(5), {}) == std::vector<Bytes>{Bytes(5)});
  CHECK(split_into_tensors(Bytes(0), {Bytes(4)}).empty());
}

TEST_CASE("tensors_without removes one tensor of equal size per removed tensor, in order",
          "[training][memory]") {
  CHECK(tensors_without({Bytes(1), Bytes(2), Bytes(1), Bytes(3)}, {Bytes(1), Bytes(3), Bytes(7)}) ==
        std::vector<Bytes>{Bytes(2), Bytes(1)});
}

TEST_CASE("a Llama-3.1-8B layer's saved tensors under torchtitan's shapes, one request each",
          "[training][memory]") {
  const TrainingPlan plan;
  const training::TrainingSetup s =
      testing::zoo_setup("meta-llama/Llama-3.1-8B", "h100-sxm", plan);
  // 2 x 8192 tokens, bf16: h = q = 4096 -> 128 MiB, kv = 1024 -> 32 MiB, I = 14336 -> 448 MiB,
  // the log-sum-exp 4 B x 16384 x 32 heads = 2 MiB.
  const LayerActivations a = layer_activations(s.model, {8192, 2, 1, false, true, 2});
  CHECK(in_mib(a.none_tensors) ==
        std::vector<std::int64_t>{128, 128, 128, 32, 32, 2, 128, 128, 128, 448, 448, 448, 448});
  CHECK(in_mib(a.selective_tensors) ==
        std::vector<std::int64_t>{128, 128, 128, 32, 32, 128, 128, 128, 448, 448, 448, 448});
  CHECK(in_mib(a.full_tensors) == std::vector<std::int64_t>{128});
  // selective-op: the input, wq, wv, SDPA's output and log-sum-exp, w1, w2.
  CHECK(in_mib(a.selective_op_tensors) ==
        std::vector<std::int64_t>{128, 128, 32, 128, 2, 448, 128});
  CHECK(in_mib(a.recompute_tensors) == std::vector<std::int64_t>{128, 128, 448, 448, 448, 448});
  CHECK(in_mib(a.backward_tensors) == std::vector<std::int64_t>{448, 448, 128});
  for (const auto& [total, tensors] :
       {std::pair{a.stored_none, a.none_tensors}, {a.stored_selective, a.selective_tensors},
        {a.stored_full, a.full_tensors}, {a.stored_selective_op, a.selective_op_tensors},
        {a.recompute_peak, a.recompute_tensors}, {a.backward_transient, a.backward_tensors}}) {
    CHECK(sum(tensors) == total);
  }
  // What selective-op recomputes: the norms' outputs, wk, w3 and the MLP's activations.
  BlockCosts c;
  const Checkpointing op{CheckpointKind::kSelectiveOp, 1};
  CHECK(assign_layer_memory(a, op, 0, c) == Recompute::kOps);
  CHECK(in_mib(c.rematerialized_tensors) ==
        std::vector<std::int64_t>{32, 128, 128, 448, 448, 448});
  CHECK(sum(c.rematerialized_tensors) == c.rematerialized);
  // Eager attention with dropout: the probabilities, their mask and the dropped output apart.
  const LayerActivations eager = layer_activations(s.model, {1024, 1, 1, false, false, 2, true});
  CHECK(sum(eager.none_tensors) == eager.stored_none);
  const Bytes scores(32 * 1024 * 1024);  // 32 heads x 1024^2 scores
  CHECK(eager.none_tensors[5] == 2 * scores);
  CHECK(eager.none_tensors[6] == scores);
  CHECK(eager.none_tensors[7] == 2 * scores);
}

TEST_CASE("the full loss's logits, fp32 copy and gradients are tensors of their own",
          "[training][memory]") {
  const TrainingSetup s = testing::zoo_setup("meta-llama/Llama-3.1-8B", "h100-sxm", {});
  const LossMemory m = loss_memory(s.model, {8192, 2, 1, false, true, 2}, Loss{LossKind::kFull});
  // 16384 tokens x 128256 logits: bf16 4008 MiB, fp32 8016 MiB.
  CHECK(in_mib(m.stored_tensors) == std::vector<std::int64_t>{8016});
  CHECK(in_mib(m.forward_tensors) == std::vector<std::int64_t>{4008, 8016});
  CHECK(in_mib(m.backward_tensors) == std::vector<std::int64_t>{8016, 8016});
}

TEST_CASE("FSDP's gathers are cached on the communication stream, apart from the compute's",
          "[training][memory]") {
  TrainingPlan p;
  p.num_gpus = 8;
  p.strategy = Strategy::kFsdpFull;
  p.checkpointing = Checkpointing{CheckpointKind::kSelectiveOp, 1};
  p.micro_batch = 1;
  p.seq_len = 2048;
  const TrainingResult r = simulate_training(
      testing::zoo_setup("meta-llama/Llama-3.1-8B", "h100-sxm", p),
      {.num_steps = 2, .record_timeline = false, .record_allocations = true});
  REQUIRE(r.final_segments.size() == 1);
  Bytes comm(0), compute(0);
  for (const memory::SegmentState& seg : r.final_segments[0]) {
    (seg.stream == static_cast<std::int32_t>(Stream::kComm) ? comm : compute) += Bytes(seg.size);
  }
  // The comm stream holds the gathered layers (218 M parameters x 2 B each, 3 in flight at
  // most: one in use, one prefetched, one being freed) and the root unit (embedding and head).
  CHECK(comm > Bytes(0));
  CHECK(compute > comm);
  CHECK(r.devices[0].peak_reserved >= r.devices[0].peak_allocated);
}
