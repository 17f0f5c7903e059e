// build_step_graph of step_graph.hpp: walks each stage's pipeline order and emits its ops.
#include "sim/training/step_graph.hpp"

#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/training/activation_memory.hpp"
#include "sim/training/deepspeed_zero3_gather.hpp"
#include "sim/training/pipeline_schedule.hpp"

namespace vramsim::training {

namespace {

constexpr std::int32_t kNone = -1;

class GraphBuilder {
 public:
  GraphBuilder(const TrainingSetup& setup, const std::vector<StagePlan>& stages, int num_steps)
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

  OpGraph build() {
    gate_.assign(static_cast<std::size_t>(plan_.pp), kNone);
    for (int s = 0; s < plan_.pp; ++s) setup_device(s);
    for (int step = 0; step < num_steps_; ++step) build_step(step);
    return std::move(graph_);
  }

 private:
  const StagePlan& stage(int s) const { return stages_[static_cast<std::size_t>(s)]; }
  std::size_t key(int vs, std::int64_t mb) const {
    return static_cast<std::size_t>(vs) * static_cast<std::size_t>(m_) +
           static_cast<std::size_t>(mb);
  }

  // Adds an op; the first op of each stream of a device in a step waits for the device's gate
  // (the end of its previous step).
  std::int32_t emit(Op op) {
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

  std::int32_t buffer(int device, MemoryCategory c, Bytes size) {
    if (size <= Bytes(0)) return kNone;
    return graph_.add_buffer(device, c, size);
  }

  // One buffer per tensor of `total` (split_into_tensors of `parts`), in creation order.
  std::vector<std::int32_t> tensors(int device, MemoryCategory c, Bytes total,
                                    const std::vector<Bytes>& parts) {
    std::vector<std::int32_t> ids;
    for (const Bytes part : split_into_tensors(total, parts)) {
      ids.push_back(graph_.add_buffer(device, c, part));
    }
    return ids;
  }

  static void add(std::vector<std::int32_t>& v, std::int32_t id) {
    if (id != kNone) v.push_back(id);
  }
  static void add(std::vector<std::int32_t>& v, const std::vector<std::int32_t>& ids) {
    v.insert(v.end(), ids.begin(), ids.end());
  }

  void setup_device(int s) {
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

  void build_step(int step) {
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

  void forward_chunk(int s, int chunk, std::int64_t mb) {
    const int vs = chunk * plan_.pp + s;
    const std::vector<BlockCosts>& blocks = stage(s).chunks[static_cast<std::size_t>(chunk)];
    auto& stored = stored_[static_cast<std::size_t>(chunk) * static_cast<std::size_t>(m_) +
                           static_cast<std::size_t>(mb)];
    auto& once = gathered_once_[static_cast<std::size_t>(chunk)];
    if (once.empty()) once.assign(blocks.size(), kNone);
    stored.assign(blocks.size(), {});
    auto& kept = kept_[static_cast<std::size_t>(chunk) * static_cast<std::size_t>(m_) +
                       static_cast<std::size_t>(mb)];
    kept.assign(blocks.size(), {});
    std::vector<std::int32_t> fwd_ops(blocks.size(), kNone);
    PassGathers z3;
    if (zero3_) {
      // Blocks kept gathered for their backward hold their parameters from their forward on.
      std::vector<std::int64_t> need(blocks.size()), held(blocks.size(), 0), hooks(blocks.size());
      std::int64_t kept_so_far = 0;
      for (std::size_t i = 0; i < blocks.size(); ++i) {
        need[i] = gathered_params(blocks[i]);
        held[i] = kept_so_far;
        hooks[i] = blocks[i].module_hooks;
        if (blocks[i].kept_gathered) kept_so_far += need[i];
      }
      z3 = PassGathers(plan_gathers(need, held, plan_.prefetch_bucket_size,
                                    plan_.max_live_parameters, hooks),
                       blocks.size());
    }
    RootUnit& root = root_[static_cast<std::size_t>(chunk) * static_cast<std::size_t>(m_) +
                           static_cast<std::size_t>(mb)];
    std::int32_t last = kNone;
    std::vector<std::int32_t> autocast_cache;  // freed when the forward pass ends
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const BlockCosts& c = blocks[i];
      std::int32_t ag = kNone;
      std::int32_t gathered = kNone;
      const bool in_root = in_root_unit(c);
      if (in_root && root.gather == kNone) {
        // The whole root unit in one all-gather, before its first block runs.
        Bytes bytes(0);
        Duration time = Duration::zero();
        for (const BlockCosts& b : blocks) {
          if (!in_root_unit(b)) continue;
          bytes += b.gathered;
          time += b.all_gather;
        }
        root.buffer = buffer(s, MemoryCategory::kTemporaries, bytes);
        Op op = block_op(OpKind::kAllGather, Stream::kComm, s, c, i, mb, time);
        add(op.allocs, root.buffer);
        root.gather = emit(std::move(op));
      }
      if (in_root) {
        ag = root.gather;
        gathered = root.buffer;
      } else if (zero3_) {
        // Its rest on demand, once the block before has run.
        emit_gathers(z3, s, blocks, i, true, i >= 1 ? fwd_ops[i - 1] : kNone, mb, false);
      } else if (gather_each_pass_ || (gather_once_ && mb == 0)) {
        gathered = buffer(s, MemoryCategory::kTemporaries, c.gathered);
        Op op = block_op(OpKind::kAllGather, Stream::kComm, s, c, i, mb, c.all_gather);
        if (i >= 2) op.deps.push_back(fwd_ops[i - 2]);  // FSDP's limit: one unit ahead
        add(op.allocs, gathered);
        ag = emit(std::move(op));
        if (gather_once_) once[i] = gathered;
      }
      Op f = block_op(OpKind::kForward, Stream::kCompute, s, c, i, mb, c.forward);
      f.deps.push_back(ag);
      if (zero3_) f.deps.insert(f.deps.end(), z3.ops[i].begin(), z3.ops[i].end());
      stored[i] = tensors(s, MemoryCategory::kActivations, c.stored, c.stored_tensors);
      const std::vector<std::int32_t> transient =
          tensors(s, MemoryCategory::kTemporaries, c.forward_transient, c.forward_tensors);
      add(f.allocs, stored[i]);
      add(f.allocs, transient);
      add(f.frees, transient);
      const std::int32_t cached = buffer(s, MemoryCategory::kTemporaries, c.autocast_cache);
      add(f.allocs, cached);
      add(autocast_cache, cached);
      if (zero3_) {
        if (c.kept_gathered) {
          kept[i] = z3.buffers[i];  // freed by its backward, which needs no gather
        } else {
          f.frees.insert(f.frees.end(), z3.buffers[i].begin(), z3.buffers[i].end());
        }
      } else if (gather_each_pass_ && !in_root) {
        add(f.frees, gathered);
      }
      fwd_ops[i] = emit(std::move(f));
      if (i == 0) fwd_consumer_[key(vs, mb)] = fwd_ops[i];
      last = fwd_ops[i];
      if (c.layer >= 0 && plan_.tp > 1) {
        last = emit(block_op(OpKind::kTpComm, Stream::kCompute, s, c, i, mb, c.tp_forward));
      }
      if (c.cp_forward > Duration::zero()) {
        last = emit(block_op(OpKind::kCpComm, Stream::kCompute, s, c, i, mb, c.cp_forward));
      }
      if (c.ep_forward > Duration::zero()) {
        last = emit(block_op(OpKind::kEpComm, Stream::kCompute, s, c, i, mb, c.ep_forward));
      }
      // The prefetch this block's fetch started (DeepSpeed issues it once the block's own
      // parameters are there, so it overlaps the block), after the gathers before it.
      if (zero3_) {
        emit_gathers(z3, s, blocks, i, false, i >= 1 ? fwd_ops[i - 1] : kNone, mb, false);
      }
    }
    if (!autocast_cache.empty()) {
      std::vector<std::int32_t>& frees = graph_.ops[static_cast<std::size_t>(fwd_ops.back())].frees;
      frees.insert(frees.end(), autocast_cache.begin(), autocast_cache.end());
    }
    if (vs + 1 < plan_.pp * chunks_) {
      fwd_send_[key(vs, mb)] = send(s, (vs + 1) % plan_.pp, last, mb, false);
      fwd_recv_buf_[key(vs + 1, mb)] = last_recv_buffer_;
    }
  }

  void backward_chunk(int s, int chunk, std::int64_t mb) {
    const int vs = chunk * plan_.pp + s;
    const std::vector<BlockCosts>& blocks = stage(s).chunks[static_cast<std::size_t>(chunk)];
    auto& stored = stored_[static_cast<std::size_t>(chunk) * static_cast<std::size_t>(m_) +
                           static_cast<std::size_t>(mb)];
    const auto& once = gathered_once_[static_cast<std::size_t>(chunk)];
    const auto& kept = kept_[static_cast<std::size_t>(chunk) * static_cast<std::size_t>(m_) +
                             static_cast<std::size_t>(mb)];
    const bool last_micro_batch = mb == m_ - 1;
    // ZeRO-1/2's reduction buckets, from the backward's first gradient to its end (ZeRO-3's
    // live as long as the model: setup_device).
    const Bytes ipg = plan_.strategy == Strategy::kZero3 ? Bytes(0) : stage(s).ipg_buckets;
    RootUnit& root = root_[static_cast<std::size_t>(chunk) * static_cast<std::size_t>(m_) +
                           static_cast<std::size_t>(mb)];
    std::size_t root_first = blocks.size();  // the root unit's first block: its last backward
    for (std::size_t i = blocks.size(); i-- > 0;) {
      if (in_root_unit(blocks[i])) root_first = i;
    }
    std::vector<std::int32_t> root_grads;
    Duration root_reduce = Duration::zero();
    PassGathers z3;
    if (zero3_) {
      // In backward order; a block kept gathered since its forward needs nothing and holds its
      // parameters until its backward ends.
      const std::size_t n = blocks.size();
      std::vector<std::int64_t> need(n), held(n, 0), hooks(n);
      std::int64_t kept_later = 0;
      for (std::size_t pos = n; pos-- > 0;) {
        const std::size_t i = n - 1 - pos;
        need[pos] = blocks[i].kept_gathered ? 0 : gathered_params(blocks[i]);
        if (blocks[i].kept_gathered) kept_later += gathered_params(blocks[i]);
        held[pos] = kept_later;
        hooks[pos] = blocks[i].module_hooks;
      }
      z3 = PassGathers(plan_gathers(need, held, plan_.prefetch_bucket_size,
                                    plan_.max_live_parameters, hooks),
                       n);
    }
    std::int32_t ag_next = kNone, gathered_next = kNone, prev_bwd = kNone, last = kNone;
    Bytes bucket(0), expert_bucket(0);  // the routed experts' part is reduced over their group
    for (std::size_t pos = 0; pos < blocks.size(); ++pos) {
      const std::size_t i = blocks.size() - 1 - pos;
      const BlockCosts& c = blocks[i];
      const bool in_root = in_root_unit(c);
      std::int32_t ag = ag_next, gathered = gathered_next;
      if (in_root) {
        ag = root.gather;
        gathered = root.buffer;
      } else if (zero3_) {
        // Its rest on demand, once the block after it (in forward order) has run backward.
        emit_gathers(z3, s, blocks, pos, true, prev_bwd, mb, true);
      } else if (gather_each_pass_ && pos == 0) {
        gathered = buffer(s, MemoryCategory::kTemporaries, c.gathered);
        Op op = block_op(OpKind::kAllGather, Stream::kComm, s, c, i, mb, c.all_gather);
        op.backward_pass = true;
        add(op.allocs, gathered);
        ag = emit(std::move(op));
      }
      std::int32_t first = kNone;
      std::vector<std::int32_t> rec;
      std::vector<std::int32_t> z3_deps;
      if (zero3_) z3_deps = z3.ops[pos];
      if (c.rematerialized > Bytes(0) || c.recompute > Duration::zero()) {
        Op r = block_op(OpKind::kRecompute, Stream::kCompute, s, c, i, mb, c.recompute);
        r.deps.push_back(ag);
        r.deps.insert(r.deps.end(), z3_deps.begin(), z3_deps.end());
        rec = tensors(s, MemoryCategory::kTemporaries, c.rematerialized,
                      c.rematerialized_tensors);
        add(r.allocs, rec);
        first = emit(std::move(r));
      }
      Op bw = block_op(OpKind::kBackward, Stream::kCompute, s, c, i, mb, c.backward);
      bw.deps.push_back(ag);
      bw.deps.insert(bw.deps.end(), z3_deps.begin(), z3_deps.end());
      const std::vector<std::int32_t> transient =
          tensors(s, MemoryCategory::kTemporaries, c.backward_transient, c.backward_tensors);
      const std::int32_t grads = reduce_scatter_ ? buffer(s,
                                                          plan_.strategy == Strategy::kZero2
                                                              ? MemoryCategory::kCommBuffers
                                                              : MemoryCategory::kTemporaries,
                                                          c.full_grads)
                                                 : kNone;
      add(bw.allocs, transient);
      add(bw.allocs, grads);
      if (pos == 0) {
        ipg_buffer_ = buffer(s, MemoryCategory::kCommBuffers, ipg);
        add(bw.allocs, ipg_buffer_);
      }
      if (pos + 1 == blocks.size()) add(bw.frees, ipg_buffer_);
      add(bw.frees, transient);
      add(bw.frees, rec);
      add(bw.frees, stored[i]);
      if (zero3_) {
        const std::vector<std::int32_t>& held_bufs = c.kept_gathered ? kept[i] : z3.buffers[pos];
        bw.frees.insert(bw.frees.end(), held_bufs.begin(), held_bufs.end());
      } else if (gather_each_pass_ && (!in_root || i == root_first)) {
        add(bw.frees, gathered);
      }
      if (gather_once_ && last_micro_batch) add(bw.frees, once[i]);
      const std::int32_t bwd = emit(std::move(bw));
      if (first == kNone) first = bwd;
      if (pos == 0) bwd_consumer_[key(vs, mb)] = first;
      last = bwd;
      if (c.layer >= 0 && plan_.tp > 1) {
        Op tp = block_op(OpKind::kTpComm, Stream::kCompute, s, c, i, mb, c.tp_backward);
        tp.backward_pass = true;
        last = emit(std::move(tp));
      }
      for (const auto& [kind, d] : {std::pair{OpKind::kCpComm, c.cp_backward},
                                    std::pair{OpKind::kEpComm, c.ep_backward}}) {
        if (d <= Duration::zero()) continue;
        Op op = block_op(kind, Stream::kCompute, s, c, i, mb, d);
        op.backward_pass = true;
        last = emit(std::move(op));
      }
      ag_next = gathered_next = kNone;
      // The next blocks' parameters, unless still gathered since forward (the loop's top).
      const bool fetch_next = gather_each_pass_ && !zero3_ && pos + 1 < blocks.size();
      if (zero3_) {
        emit_gathers(z3, s, blocks, pos, false, prev_bwd, mb, true);
      } else if (fetch_next && in_root_unit(blocks[i - 1])) {
        ag_next = root.gather;  // still gathered since forward
        gathered_next = root.buffer;
      } else if (fetch_next) {  // prefetch the next block's unit
        const BlockCosts& nc = blocks[i - 1];
        gathered_next = buffer(s, MemoryCategory::kTemporaries, nc.gathered);
        Op op = block_op(OpKind::kAllGather, Stream::kComm, s, nc, i - 1, mb, nc.all_gather);
        op.backward_pass = true;
        op.deps.push_back(prev_bwd);
        add(op.allocs, gathered_next);
        ag_next = emit(std::move(op));
      }
      if (reduce_scatter_ && in_root) {
        // The root's unsharded gradient waits for the whole unit, then one reduce-scatter.
        root_grads.push_back(grads);
        root_reduce += c.reduce_scatter;
        if (i == root_first) {
          Op rs = block_op(OpKind::kReduceScatter, Stream::kComm, s, c, i, mb, root_reduce);
          rs.deps.push_back(bwd);
          for (const std::int32_t g : root_grads) add(rs.frees, g);
          emit(std::move(rs));
        }
      } else if (reduce_scatter_) {
        Op rs = block_op(OpKind::kReduceScatter, Stream::kComm, s, c, i, mb, c.reduce_scatter);
        rs.deps.push_back(bwd);
        add(rs.frees, grads);
        emit(std::move(rs));
      } else if (bucket_all_reduce_ && last_micro_batch) {
        bucket += Bytes(c.trainable_params * plan_.grad_element_bytes());
        expert_bucket += Bytes(c.expert_params * plan_.grad_element_bytes());
        // LoRA: blocks without trainable weights (a frozen embedding) add nothing to reduce.
        const bool last_block = pos + 1 == blocks.size();
        if (plan_.deepspeed_stage0()) {
          if (last_block) reduce_after_backward(s, mb, bwd, bucket, expert_bucket);
        } else if (bucket >= plan_.ddp_bucket ||
                   (last_block && (!plan_.lora.enabled() || bucket > Bytes(0)))) {
          Op ar;
          ar.kind = OpKind::kAllReduce;
          ar.stream = Stream::kComm;
          ar.device = s;
          ar.micro_batch = static_cast<std::int32_t>(mb);
          ar.duration = dp_all_reduce(bucket - expert_bucket) + expert_all_reduce(expert_bucket);
          ar.deps.push_back(bwd);
          emit(std::move(ar));
          bucket = Bytes(0);
          expert_bucket = Bytes(0);
        }
      }
      prev_bwd = bwd;
    }
    if (vs > 0) {
      bwd_send_[key(vs, mb)] = send(s, (vs - 1 + plan_.pp) % plan_.pp, last, mb, true);
      bwd_recv_buf_[key(vs - 1, mb)] = last_recv_buffer_;
    }
  }

  // DeepSpeed's stage 0 (engine.py allreduce_gradients, buffered_allreduce_fallback): once the
  // backward has ended, the dense gradients and then the routed experts' are all-reduced in
  // buckets of kDeepspeedStage0BucketSize elements, each flattened into a copy that lives
  // through its all-reduce and the copy back; nothing overlaps the backward.
  void reduce_after_backward(int s, std::int64_t mb, std::int32_t after, Bytes dense_and_experts,
                             Bytes experts) {
    const Bytes cap(kDeepspeedStage0BucketSize * plan_.grad_element_bytes());
    for (const bool expert : {false, true}) {
      for (Bytes left = expert ? experts : dense_and_experts - experts; left > Bytes(0);
           left = left - min(left, cap)) {
        const Bytes b = min(left, cap);
        Op ar;
        ar.kind = OpKind::kAllReduce;
        ar.stream = Stream::kComm;
        ar.device = s;
        ar.micro_batch = static_cast<std::int32_t>(mb);
        ar.duration = expert ? expert_all_reduce(b) : dp_all_reduce(b);
        ar.deps.push_back(after);
        const std::int32_t flat = buffer(s, MemoryCategory::kCommBuffers, b);
        add(ar.allocs, flat);
        add(ar.frees, flat);
        emit(std::move(ar));
      }
    }
  }

  // NOTE: the bases of these estimates are not added to the stages' cost_basis (the stage
  // plans are const here); without a profile they are the datasheet's.
  Duration dp_all_reduce(Bytes bucket) {
    return collectives_.dp(comm::Collective::kAllReduce, bucket, plan_.grad_group());
  }
  Duration expert_all_reduce(Bytes bucket) {
    if (bucket <= Bytes(0)) return Duration::zero();
    return collectives_.expert_dp(comm::Collective::kAllReduce, bucket,
                                  plan_.expert_grad_group());
  }
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

  std::int32_t send(int s, int to, std::int32_t after, std::int64_t mb, bool backward) {
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

  static Op block_op(OpKind kind, Stream stream, int s, const BlockCosts& c, std::size_t i,
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

  void finish_step() {
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

}  // namespace

OpGraph build_step_graph(const TrainingSetup& setup, const std::vector<StagePlan>& stages,
                         int num_steps) {
  VRAMSIM_CHECK(num_steps >= 1 && static_cast<int>(stages.size()) == setup.plan.pp,
                "bad build_step_graph arguments");
  GraphBuilder b(setup, stages, num_steps);
  return b.build();
}

}  // namespace vramsim::training
