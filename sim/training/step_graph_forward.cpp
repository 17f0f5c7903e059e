// The forward pass of one chunk for one micro-batch (GraphBuilder::forward_chunk,
// step_graph_builder.hpp): per block, its parameters' all-gather where the strategy gathers them
// (FSDP's root unit once, DeepSpeed ZeRO-3's pieces on demand and by prefetch), the forward op
// with its saved activations and transients, the TP, CP and EP exchanges after it, and the
// send of the chunk's output to the next stage.
#include "sim/training/step_graph_builder.hpp"

namespace vramsim::training::detail {

void GraphBuilder::forward_chunk(int s, int chunk, std::int64_t mb) {
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

}  // namespace vramsim::training::detail
