// The backward pass of one chunk for one micro-batch (GraphBuilder::backward_chunk,
// step_graph_builder.hpp): per block in reverse, its parameters' gathers, the recompute op where
// the block is checkpointed, the backward op freeing what its forward saved, the TP, CP and EP
// exchanges after it, and its gradients' reduction by strategy: a reduce-scatter per block
// (ZeRO-2/3, FSDP; the root unit's once), PyTorch DDP's bucketed all-reduce on the last
// micro-batch, or DeepSpeed stage 0's all-reduce after the backward; then the send of the
// input gradient to the previous stage.
#include "sim/training/step_graph_builder.hpp"

#include <initializer_list>
#include <utility>

namespace vramsim::training::detail {

void GraphBuilder::backward_chunk(int s, int chunk, std::int64_t mb) {
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

void GraphBuilder::reduce_after_backward(int s, std::int64_t mb, std::int32_t after,
                                         Bytes dense_and_experts, Bytes experts) {
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

Duration GraphBuilder::dp_all_reduce(Bytes bucket) {
  return collectives_.dp(comm::Collective::kAllReduce, bucket, plan_.grad_group());
}

Duration GraphBuilder::expert_all_reduce(Bytes bucket) {
  if (bucket <= Bytes(0)) return Duration::zero();
  return collectives_.expert_dp(comm::Collective::kAllReduce, bucket,
                                plan_.expert_grad_group());
}

}  // namespace vramsim::training::detail
