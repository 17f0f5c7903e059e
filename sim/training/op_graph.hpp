// The op graph of training steps: for each pipeline stage (one representative device: its TP
// and DP peers run the same ops at the same times), the ops of every micro-batch on three
// in-order streams, their dependencies, their durations and the buffers they allocate and free.
//
//   compute  forward / recompute / backward per block (decoder layer, embedding, lm head + loss),
//            Megatron TP collectives (they block the compute stream: no overlap), grad-norm
//            barrier, optimizer step
//   comm     data-parallel collectives: ZeRO-3 / FSDP all-gathers of each block's parameters
//            (forward prefetch of the next block; in backward the next block's gather is issued
//            before this block's reduce-scatter, as FSDP's BACKWARD_PRE prefetch), gradient
//            reduce-scatters, DDP / ZeRO-1 bucketed all-reduces on the last micro-batch (no_sync
//            before it), ZeRO-1/2 parameter all-gather after the step, optimizer offload (PCIe)
//   p2p      pipeline sends of activations (forward) and their gradients (backward)
// A stream runs its ops in the order they were added (CUDA stream semantics); an op starts when
// it is at the head of its stream, the stream is idle and all its dependencies are done.
//
// Memory: each buffer belongs to one device (stage) and a category; an op allocates buffers when
// it starts and frees buffers when it ends. Persistent state (parameters, gradients, optimizer
// state, workspaces) is allocated by a set-up op before the first step.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/enum_table.hpp"
#include "sim/core/units.hpp"

namespace vramsim::training {

enum class Stream : std::uint8_t { kCompute, kComm, kP2p };
inline constexpr int kNumStreams = 3;
inline constexpr auto kStreams = enum_table<Stream>({
    {Stream::kCompute, "compute",
     "blocks, Megatron TP collectives and blocking pipeline sends, grad-norm, optimizer step"},
    {Stream::kComm, "comm", "data-parallel collectives and optimizer offload"},
    {Stream::kP2p, "p2p", "pipeline sends that overlap compute (none of the built-in schedules)"},
});
static_assert(covers_every_enumerator(kStreams) && names_are_unique(kStreams) &&
              kStreams.rows.size() == kNumStreams);
std::string_view to_string(Stream s);

enum class MemoryCategory : std::uint8_t {
  kParameters,
  kGradients,
  kOptimizerState,  // optimizer states and fp32 master weights
  kActivations,     // tensors saved for backward
  kTemporaries,     // gathered FSDP units, unsharded gradients, recompute and backward buffers
  kWorkspaces,      // cuBLAS workspace
  kCommBuffers,     // pipeline receive buffers, ZeRO-2 reduction buckets, DDP gradient buckets
};
inline constexpr int kNumMemoryCategories = 7;
inline constexpr auto kMemoryCategories = enum_table<MemoryCategory>({
    {MemoryCategory::kParameters, "parameters", "model parameters"},
    {MemoryCategory::kGradients, "gradients", "parameter gradients"},
    {MemoryCategory::kOptimizerState, "optimizer_state",
     "optimizer states and fp32 master weights"},
    {MemoryCategory::kActivations, "activations", "tensors saved for backward"},
    {MemoryCategory::kTemporaries, "temporaries",
     "gathered FSDP units, unsharded gradients, recompute and backward buffers"},
    {MemoryCategory::kWorkspaces, "workspaces", "cuBLAS workspace"},
    {MemoryCategory::kCommBuffers, "comm_buffers",
     "pipeline receive buffers, ZeRO-2 reduction buckets, DDP gradient buckets"},
});
static_assert(covers_every_enumerator(kMemoryCategories) && names_are_unique(kMemoryCategories) &&
              kMemoryCategories.rows.size() == kNumMemoryCategories);
/// snake_case names used in JSON and HDF5: "parameters", "optimizer_state", ...
std::string_view to_string(MemoryCategory c);

enum class OpKind : std::uint8_t {
  kSetup,  // allocates persistent state at time 0
  kForward,
  kRecompute,
  kBackward,
  kTpComm,         // the block's Megatron TP collectives (forward or backward)
  kCpComm,         // the block's context-parallel exchange not hidden by attention
  kEpComm,         // the block's MoE token dispatch and combine all-to-alls (EP)
  kAllGather,      // parameter all-gather of a block (ZeRO-3 / FSDP)
  kReduceScatter,  // gradient reduce-scatter of a block (ZeRO-2/3 / FSDP)
  kAllReduce,      // gradient bucket all-reduce (DDP / ZeRO-1)
  kSend,           // pipeline send to the neighbouring stage
  kGradSync,       // grad-norm all-reduce: every stage waits for every stage's reduction
  kOptimizer,
  kOffload,      // optimizer offload: gradients to host, CPU step, parameters back
  kParamGather,  // ZeRO-1/2: all-gather of the updated parameters after the step (ZeRO-3:
                 // of its persistent parameters)
};
inline constexpr auto kOpKinds = enum_table<OpKind>({
    {OpKind::kSetup, "setup", "allocates persistent state at time 0"},
    {OpKind::kForward, "fwd", "forward of a block"},
    {OpKind::kRecompute, "recompute", "forward recomputed in backward (checkpointing)"},
    {OpKind::kBackward, "bwd", "backward of a block"},
    {OpKind::kTpComm, "tp-comm", "the block's Megatron TP collectives"},
    {OpKind::kCpComm, "cp-comm", "the block's exposed context-parallel exchange"},
    {OpKind::kEpComm, "ep-comm", "the block's MoE token all-to-alls (expert parallelism)"},
    {OpKind::kAllGather, "allgather", "parameter all-gather of a block (ZeRO-3 / FSDP)"},
    {OpKind::kReduceScatter, "reducescatter", "gradient reduce-scatter of a block"},
    {OpKind::kAllReduce, "allreduce", "gradient bucket all-reduce (DDP / ZeRO-1)"},
    {OpKind::kSend, "send", "pipeline send to the neighbouring stage"},
    {OpKind::kGradSync, "grad-norm", "grad-norm all-reduce: every stage waits for every stage"},
    {OpKind::kOptimizer, "optimizer", "optimizer step"},
    {OpKind::kOffload, "offload-step", "gradients to host, CPU step, parameters back"},
    {OpKind::kParamGather, "param-allgather",
     "ZeRO-1/2 all-gather of the updated parameters (ZeRO-3: the persistent ones)"},
});
static_assert(covers_every_enumerator(kOpKinds) && names_are_unique(kOpKinds));
std::string_view to_string(OpKind k);

/// Whether time spent waiting for an op of this kind counts as communication (vs pipeline bubble).
bool is_data_parallel_comm(OpKind k);

struct Buffer {
  std::int32_t device = 0;
  MemoryCategory category = MemoryCategory::kTemporaries;
  Bytes size;
};

struct Op {
  OpKind kind = OpKind::kForward;
  Stream stream = Stream::kCompute;
  std::int32_t device = 0;  // pipeline stage
  std::int32_t step = 0;
  std::int32_t block = -1;  // -1: not a block op; else the stage-local block index
  std::int32_t micro_batch = -1;
  std::int32_t layer = -1;     // decoder layer (model-wide), -1 for embedding / head blocks
  bool backward_pass = false;  // TP / all-gather ops: in the backward pass
  Duration duration;
  std::vector<std::int32_t> deps;
  std::vector<std::int32_t> allocs;  // buffers allocated at start
  std::vector<std::int32_t> frees;   // buffers freed at end
};

/// Readable op name for timelines: "fwd L12 mb3", "allgather L4 bwd mb0", "optimizer".
std::string op_name(const Op& op);

struct OpGraph {
  int num_devices = 0;
  int num_steps = 0;
  std::vector<Op> ops;
  std::vector<Buffer> buffers;
  /// Per step, per device: the op after which the device's step is complete.
  std::vector<std::vector<std::int32_t>> step_end_ops;

  std::int32_t add_buffer(std::int32_t device, MemoryCategory c, Bytes size);
  std::int32_t add_op(Op op);
};

}  // namespace vramsim::training
