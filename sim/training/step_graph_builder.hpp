// The builder behind build_step_graph (step_graph.hpp): walks each stage's pipeline order
// (pipeline_schedule.hpp) and emits its ops and buffers into an OpGraph (op_graph.hpp).
//   step_graph.cpp           the builder's bookkeeping: emitting ops behind the previous step's
//                            gate, buffers and tensors, the set-up op, a step's pipeline sends
//                            and receives, and its end (gradient sync, optimizer, gathers)
//   step_graph_forward.cpp   one chunk's forward pass for one micro-batch
//   step_graph_backward.cpp  one chunk's backward pass and its gradient reductions
// DeepSpeed ZeRO-3's gathers of a pass (deepspeed_zero3_gather.hpp) are emitted by both passes.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/training/cluster_links.hpp"
#include "sim/training/deepspeed_zero3_gather.hpp"
#include "sim/training/op_graph.hpp"
#include "sim/training/step_graph.hpp"
#include "sim/training/training_plan.hpp"

namespace vramsim::training::detail {

class GraphBuilder {
 public:
  /// Keeps references: `setup` and `stages` must outlive it.
  GraphBuilder(const TrainingSetup& setup, const std::vector<StagePlan>& stages, int num_steps);

  /// The graph of `num_steps` steps; call once.
  OpGraph build();

 private:
  static constexpr std::int32_t kNone = -1;

  const StagePlan& stage(int s) const { return stages_[static_cast<std::size_t>(s)]; }
  std::size_t key(int vs, std::int64_t mb) const {
    return static_cast<std::size_t>(vs) * static_cast<std::size_t>(m_) +
           static_cast<std::size_t>(mb);
  }

  // Adds an op; the first op of each stream of a device in a step waits for the device's gate
  // (the end of its previous step).
  std::int32_t emit(Op op);
  std::int32_t buffer(int device, MemoryCategory c, Bytes size);
  // One buffer per tensor of `total` (split_into_tensors of `parts`), in creation order.
  std::vector<std::int32_t> tensors(int device, MemoryCategory c, Bytes total,
                                    const std::vector<Bytes>& parts);

  static void add(std::vector<std::int32_t>& v, std::int32_t id) {
    if (id != kNone) v.push_back(id);
  }
  static void add(std::vector<std::int32_t>& v, const std::vector<std::int32_t>& ids) {
    v.insert(v.end(), ids.begin(), ids.end());
  }

  void setup_device(int s);
  void build_step(int step);
  void forward_chunk(int s, int chunk, std::int64_t mb);
  void backward_chunk(int s, int chunk, std::int64_t mb);

  // DeepSpeed's stage 0 (engine.py allreduce_gradients, buffered_allreduce_fallback): once the
  // backward has ended, the dense gradients and then the routed experts' are all-reduced in
  // buckets of kDeepspeedStage0BucketSize elements, each flattened into a copy that lives
  // through its all-reduce and the copy back; nothing overlaps the backward.
  void reduce_after_backward(int s, std::int64_t mb, std::int32_t after, Bytes dense_and_experts,
                             Bytes experts);

  // NOTE: the bases of these estimates are not added to the stages' cost_basis (the stage
  // plans are const here); without a profile they are the datasheet's.
  Duration dp_all_reduce(Bytes bucket);
  Duration expert_all_reduce(Bytes bucket);
  const ClusterLinks& links() const { return links_; }

  // DeepSpeed ZeRO-3's gathers of one pass (plan_gathers), emitted as the pass runs: per pass
  // position, the ops gathering that block and their buffers.
  struct PassGathers {
    PassGathers() = default;
    PassGathers(std::vector<GatherPiece> p, std::size_t n)
        : pieces(std::move(p)), ops(n), buffers(n), done(n, 0) {}
    std::vector<GatherPiece> pieces;
    std::size_t next = 0;  // the first piece not emitted
    std::vector<std::vector<std::int32_t>> ops, buffers;
    std::vector<std::int64_t> done;  // elements of each block emitted so far
  };

  static std::int64_t gathered_params(const BlockCosts& c) {
    return c.num_params - c.persistent_params;
  }

  // Emits the pieces issued at pass position `pos` of `blocks`' pass: the block's own
  // rest (`own`) or the prefetch of later blocks, each waiting for `after`. A piece carries
  // its share of the block's bytes and all-gather time, so that the pieces add up to them.
  void emit_gathers(PassGathers& g, int s, const std::vector<BlockCosts>& blocks,
                    std::size_t pos, bool own, std::int32_t after, std::int64_t mb,
                    bool backward);

  std::int32_t send(int s, int to, std::int32_t after, std::int64_t mb, bool backward);

  static Op block_op(OpKind kind, Stream stream, int s, const BlockCosts& c, std::size_t i,
                     std::int64_t mb, Duration d);

  void finish_step();

  const TrainingPlan& plan_;
  const ClusterLinks& links_;
  cost::CostModel cost_model_;
  PlanCollectives collectives_;
  const std::vector<StagePlan>& stages_;
  int num_steps_ = 1;
  int chunks_ = 1;
  std::int64_t m_ = 1;
  // The root unit's one gather of a (chunk, micro-batch) and its buffer (root_unit_ only).
  struct RootUnit {
    std::int32_t gather = kNone;
    std::int32_t buffer = kNone;
  };
  bool in_root_unit(const BlockCosts& c) const { return root_unit_ && c.layer < 0; }

  bool gather_each_pass_ = false, gather_once_ = false, reduce_scatter_ = false, zero3_ = false;
  bool root_unit_ = false;
  std::vector<RootUnit> root_;
  bool bucket_all_reduce_ = false;
  int step_ = 0;
  OpGraph graph_;
  std::vector<std::int32_t> gate_, last_compute_, last_comm_;
  std::vector<std::array<bool, kNumStreams>> stream_started_;
  std::vector<std::int32_t> fwd_send_, bwd_send_, fwd_consumer_, bwd_consumer_;
  std::vector<std::vector<std::int32_t>> gathered_once_;
  // Per (chunk, micro-batch), each block's saved tensors (their buffers).
  std::vector<std::vector<std::vector<std::int32_t>>> stored_;
  // DeepSpeed ZeRO-3: per (chunk, micro-batch), each block's gathered parameters kept from its
  // forward to its backward (BlockCosts::kept_gathered): the buffers of its gathers, empty
  // where released.
  std::vector<std::vector<std::vector<std::int32_t>>> kept_;
  std::int32_t ipg_buffer_ = kNone;  // the running backward's ZeRO-1/2 buckets
  std::vector<std::int32_t> fwd_recv_buf_, bwd_recv_buf_;
  std::int32_t last_recv_buffer_ = kNone;
};

}  // namespace vramsim::training::detail
