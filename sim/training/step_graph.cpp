// build_step_graph of step_graph.hpp and the bookkeeping of its builder
// (step_graph_builder.hpp): ops behind each device's gate, buffers, a step's pipeline sends and
// receives, its end, and the ZeRO-3 gathers both passes emit.
#include "sim/training/step_graph.hpp"

#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/training/activation_memory.hpp"
#include "sim/training/pipeline_schedule.hpp"
#include "sim/training/step_graph_builder.hpp"

namespace vramsim::training {

namespace detail {

GraphBuilder::GraphBuilder(const TrainingSetup& setup, const std::vector<StagePlan>& stages,
                           int num_steps)
    : plan_(setup.plan),
      links_(setup.links),
      cost_model_(cost_model(setup)),
      collectives_(cost_model_, plan_, links_),
      stages_(stages),
      num_steps_(num_steps) {
  chunks_ = plan_.schedule == PipelineSchedule::kInterleaved ? plan_.pp_interleave : 1;
  m_ = plan_.num_micro_batches();
  const Strategy st = plan_.strategy;
  gather_each_pass_ =
      st == Strategy::kZero3 || st == Strategy::kFsdpFull || st == Strategy::kHsdp;
  gather_once_ = st == Strategy::kFsdpGradOp;
  // DeepSpeed ZeRO-3 (zero3 is DeepSpeed's only): its gathers split between prefetch and on
  // demand by its bucket (deepspeed_zero3_gather.hpp).
  zero3_ = st == Strategy::kZero3;
  // PyTorch FSDP keeps its root unit (what no wrapped layer holds: the embedding, the final
  // norm and the head) unsharded from its forward all-gather to the end of backward, and
  // reduce-scatters its gradient once, when the whole unit's gradient is ready: FSDP1's
  // _post_forward_reshard skips the root (torch/distributed/fsdp/_runtime_utils.py), and
  // FSDP2's fully_shard docs: "The root FSDP state has its value specially set to False as a
  // heuristic since its parameters would typically be immediately all-gathered for
  // backward". DeepSpeed ZeRO-3 frees every block's parameters after use.
  root_unit_ = (st == Strategy::kFsdpFull || st == Strategy::kHsdp) &&
               !plan_.fsdp_wrap_embeddings;
  reduce_scatter_ = sharded_parts(st).grads;
  bucket_all_reduce_ = !reduce_scatter_ && plan_.grad_group() > 1;
  graph_.num_devices = plan_.pp;
  graph_.num_steps = num_steps;
}

OpGraph GraphBuilder::build() {
  gate_.assign(static_cast<std::size_t>(plan_.pp), kNone);
  for (int s = 0; s < plan_.pp; ++s) setup_device(s);
  for (int step = 0; step < num_steps_; ++step) build_step(step);
  return std::move(graph_);
}

std::int32_t GraphBuilder::emit(Op op) {
  op.step = step_;
  const auto d = static_cast<std::size_t>(op.device);
  auto& first = stream_started_[d][static_cast<std::size_t>(op.stream)];
  if (!first && gate_[d] != kNone) op.deps.push_back(gate_[d]);
  first = true;
  op.deps.erase(std::remove(op.deps.begin(), op.deps.end(), kNone), op.deps.end());
  const std::int32_t id = graph_.add_op(std::move(op));
  const Op& added = graph_.ops.back();
  if (added.stream == Stream::kCompute) last_compute_[d] = id;
  if (added.stream == Stream::kComm) last_comm_[d] = id;
  return id;
}

std::int32_t GraphBuilder::buffer(int device, MemoryCategory c, Bytes size) {
  if (size <= Bytes(0)) return kNone;
  return graph_.add_buffer(device, c, size);
}

std::vector<std::int32_t> GraphBuilder::tensors(int device, MemoryCategory c, Bytes total,
                                                const std::vector<Bytes>& parts) {
  std::vector<std::int32_t> ids;
  for (const Bytes part : split_into_tensors(total, parts)) {
    ids.push_back(graph_.add_buffer(device, c, part));
  }
  return ids;
}

void GraphBuilder::setup_device(int s) {
  const StagePlan& st = stage(s);
  Op op;
  op.kind = OpKind::kSetup;
  op.device = s;
  add(op.allocs, buffer(s, MemoryCategory::kParameters, st.state.params));
  add(op.allocs, buffer(s, MemoryCategory::kGradients, st.state.grads));
  add(op.allocs,
      buffer(s, MemoryCategory::kOptimizerState, st.state.master + st.state.optimizer));
  add(op.allocs, buffer(s, MemoryCategory::kWorkspaces, st.workspace));
  for (Bytes bucket : st.ddp_buckets) {
    add(op.allocs, buffer(s, MemoryCategory::kCommBuffers, bucket));
  }
  if (plan_.strategy == Strategy::kZero3) {  // ZeRO-3's bucket lives as long as the model
    add(op.allocs, buffer(s, MemoryCategory::kCommBuffers, st.ipg_buckets));
  }
  gate_[static_cast<std::size_t>(s)] = graph_.add_op(std::move(op));
}

void GraphBuilder::build_step(int step) {
  step_ = step;
  const auto n = static_cast<std::size_t>(plan_.pp);
  const std::size_t slots =
      static_cast<std::size_t>(plan_.pp * chunks_) * static_cast<std::size_t>(m_);
  fwd_send_.assign(slots, kNone);
  bwd_send_.assign(slots, kNone);
  fwd_consumer_.assign(slots, kNone);
  bwd_consumer_.assign(slots, kNone);
  fwd_recv_buf_.assign(slots, kNone);
  bwd_recv_buf_.assign(slots, kNone);
  stream_started_.assign(n, {false, false, false});
  last_compute_.assign(n, kNone);
  last_comm_.assign(n, kNone);
  for (int s = 0; s < plan_.pp; ++s) {
    stored_.assign(static_cast<std::size_t>(chunks_) * static_cast<std::size_t>(m_), {});
    kept_.assign(static_cast<std::size_t>(chunks_) * static_cast<std::size_t>(m_), {});
    gathered_once_.assign(static_cast<std::size_t>(chunks_), {});
    root_.assign(static_cast<std::size_t>(chunks_) * static_cast<std::size_t>(m_), {});
    for (const PipelineStep& p : pipeline_order(plan_.schedule, plan_.pp, s, m_, chunks_)) {
      if (p.forward) {
        forward_chunk(s, p.chunk, p.micro_batch);
      } else {
        backward_chunk(s, p.chunk, p.micro_batch);
      }
    }
  }
  // Pipeline receives: a chunk's first op waits for its neighbour's send and frees the
  // received tensor when it ends (it lives on as that block's saved input).
  const auto mm = static_cast<std::size_t>(m_);
  for (std::size_t i = 0; i < slots; ++i) {
    if (fwd_consumer_[i] != kNone && i >= mm) {
      Op& op = graph_.ops[static_cast<std::size_t>(fwd_consumer_[i])];
      op.deps.push_back(fwd_send_[i - mm]);
      add(op.frees, fwd_recv_buf_[i]);
    }
    if (bwd_consumer_[i] != kNone && i + mm < slots) {
      Op& op = graph_.ops[static_cast<std::size_t>(bwd_consumer_[i])];
      op.deps.push_back(bwd_send_[i + mm]);
      add(op.frees, bwd_recv_buf_[i]);
    }
  }
  finish_step();
}

std::int32_t GraphBuilder::send(int s, int to, std::int32_t after, std::int64_t mb,
                                bool backward) {
  Op op;
  op.kind = OpKind::kSend;
  // Megatron-LM's pipeline sends block the sender's compute stream: its 1F1B schedule posts
  // batch_isend_irecv and waits on the requests before the next micro-batch
  // (core/pipeline_parallel/p2p_communication.py), so a send is not overlapped with compute.
  op.stream = Stream::kCompute;
  op.device = s;
  op.micro_batch = static_cast<std::int32_t>(mb);
  op.backward_pass = backward;
  op.duration = stage(s).send;
  op.deps.push_back(after);
  // The receiver's buffer; its consumer (the next chunk's first op) frees it.
  const std::int32_t buf = buffer(to, MemoryCategory::kCommBuffers, stage(s).activation_message);
  add(op.allocs, buf);
  last_recv_buffer_ = buf;
  return emit(std::move(op));
}

Op GraphBuilder::block_op(OpKind kind, Stream stream, int s, const BlockCosts& c, std::size_t i,
                          std::int64_t mb, Duration d) {
  Op op;
  op.kind = kind;
  op.stream = stream;
  op.device = s;
  op.block = static_cast<std::int32_t>(i);
  op.layer = static_cast<std::int32_t>(c.layer);
  op.micro_batch = static_cast<std::int32_t>(mb);
  op.duration = d;
  return op;
}

void GraphBuilder::finish_step() {
  std::vector<std::int32_t> finals;
  for (int s = 0; s < plan_.pp; ++s) {
    add(finals, last_compute_[static_cast<std::size_t>(s)]);
    add(finals, last_comm_[static_cast<std::size_t>(s)]);
  }
  graph_.step_end_ops.emplace_back();
  for (int s = 0; s < plan_.pp; ++s) {
    const StagePlan& st = stage(s);
    Op sync;
    sync.kind = OpKind::kGradSync;
    sync.device = s;
    sync.deps = finals;
    std::int32_t end = emit(std::move(sync));
    Op opt;
    opt.kind = plan_.offload_optimizer ? OpKind::kOffload : OpKind::kOptimizer;
    opt.stream = plan_.offload_optimizer ? Stream::kComm : Stream::kCompute;
    opt.device = s;
    opt.duration = plan_.offload_optimizer ? st.offload : st.optimizer;
    opt.deps.push_back(end);
    const std::int32_t converted =
        buffer(s, MemoryCategory::kTemporaries, st.optimizer_transient);
    add(opt.allocs, converted);
    add(opt.frees, converted);
    end = emit(std::move(opt));
    if (st.param_gather > Duration::zero()) {
      Op ag;
      ag.kind = OpKind::kParamGather;
      ag.stream = Stream::kComm;
      ag.device = s;
      ag.duration = st.param_gather;
      ag.deps.push_back(end);
      end = emit(std::move(ag));
    }
    gate_[static_cast<std::size_t>(s)] = end;
    graph_.step_end_ops.back().push_back(end);
  }
}

void GraphBuilder::emit_gathers(PassGathers& g, int s, const std::vector<BlockCosts>& blocks,
                                std::size_t pos, bool own, std::int32_t after, std::int64_t mb,
                                bool backward) {
  const std::size_t n = blocks.size();
  while (g.next < g.pieces.size() && g.pieces[g.next].issued_at == pos &&
         (g.pieces[g.next].block == pos) == own) {
    const GatherPiece& p = g.pieces[g.next++];
    const std::size_t b = backward ? n - 1 - p.block : p.block;
    const BlockCosts& c = blocks[b];
    const std::int64_t total = gathered_params(c);
    const auto upto = [&](std::int64_t x, std::int64_t whole) {
      if (x >= total) return whole;
      return static_cast<std::int64_t>(static_cast<double>(whole) *
                                       (static_cast<double>(x) / static_cast<double>(total)));
    };
    const std::int64_t from = g.done[p.block], to = from + p.elements;
    g.done[p.block] = to;
    const Bytes bytes(upto(to, c.gathered.count()) - upto(from, c.gathered.count()));
    const Duration time = Duration::from_nanoseconds(upto(to, c.all_gather.nanoseconds()) -
                                                     upto(from, c.all_gather.nanoseconds()));
    const std::int32_t buf = buffer(s, MemoryCategory::kTemporaries, bytes);
    Op op = block_op(OpKind::kAllGather, Stream::kComm, s, c, b, mb, time);
    op.backward_pass = backward;
    op.deps.push_back(after);
    add(op.allocs, buf);
    g.ops[p.block].push_back(emit(std::move(op)));
    add(g.buffers[p.block], buf);
  }
}

}  // namespace detail

OpGraph build_step_graph(const TrainingSetup& setup, const std::vector<StagePlan>& stages,
                         int num_steps) {
  VRAMSIM_CHECK(num_steps >= 1 && static_cast<int>(stages.size()) == setup.plan.pp,
                "bad build_step_graph arguments");
  detail::GraphBuilder b(setup, stages, num_steps);
  return b.build();
}

}  // namespace vramsim::training
