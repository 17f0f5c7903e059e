// A training plan: how one optimizer step of a transformer is split over devices, in what
// precision, with which optimizer and activation-checkpointing policy.
//
// The closed choices (STYLE 6.3) are enums with exhaustive switches, named once in the tables
// below (to_string / from_string / *_names() come from them):
//   Strategy          ddp | zero1 | zero2 | zero3 | fsdp-full | fsdp-grad-op | hsdp | fsdp-no-shard
//   Precision         bf16-mixed | fp16-mixed | bf16 | fp32
//   Optimizer         adamw | adam | sgd | adam8bit
//   Checkpointing     none | full | selective | every:K
//   PipelineSchedule  gpipe | 1f1b | interleaved
//   Attention         flash | eager
//   Kernels           eager | megatron
//   Loss              vocab-parallel | full | chunked:N | fused
//   CpComm            ring | all-to-all   (context parallelism's attention exchange)
//   OffloadParams     none | cpu | nvme   (where ZeRO-3 / FSDP parameter shards rest)
//   BaseQuant         none | nf4 | fp4 | int8   (the frozen base of LoRA: QLoRA, LLM.int8())
//
// Device layout (Megatron-LM's default rank order, tp-cp-ep-dp-pp, tensor-parallel innermost):
// global rank
//   r = tp_rank + tp * (cp_rank + cp * (dp_rank + dp * pp_stage))
// so a TP group sits inside a node, a context-parallel group next to it, a DP group spans the
// ranks after it, and pipeline neighbours are tp * cp * dp ranks apart. num_gpus = tp * cp * pp
// * dp. Gradients of the dense weights are reduced (and ZeRO / FSDP shard them) over the cp * dp
// ranks of a stage that hold the same weights (Megatron-LM's data_parallel_group_with_cp,
// torchtitan's FSDP mesh over dp_shard x cp). Expert parallelism (MoE) splits the routed
// experts over `ep` consecutive ranks of that group (stride tp; expert tensor parallelism =
// tp), whose expert gradients are then reduced over the cp * dp / ep ranks holding the same
// experts (Megatron-LM's expert data-parallel group).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/enum_table.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/training/sample_lengths.hpp"

namespace vramsim::training {

/// How data-parallel replicas hold model state (ZeRO: Rajbhandari et al. 2020, arXiv:1910.02054;
/// FSDP: Zhao et al. 2023, arXiv:2304.11277, ShardingStrategy).
enum class Strategy {
  kDdp,          // every rank holds everything; gradients all-reduced in 25 MB buckets
  kZero1,        // optimizer states (and fp32 master weights) sharded
  kZero2,        // + gradients sharded (reduce-scatter)
  kZero3,        // + parameters sharded (all-gathered per layer)
  kFsdpFull,     // FULL_SHARD: as ZeRO-3, reshard after forward
  kFsdpGradOp,   // SHARD_GRAD_OP: parameters kept gathered from forward until backward
  kHsdp,         // HYBRID_SHARD: FULL_SHARD inside a node, replicated across nodes
  kFsdpNoShard,  // NO_SHARD: as DDP
};

inline constexpr auto kStrategies = enum_table<Strategy>({
    {Strategy::kDdp, "ddp", "every rank holds everything; gradients all-reduced in buckets"},
    {Strategy::kZero1, "zero1", "ZeRO-1: optimizer states (and fp32 master weights) sharded"},
    {Strategy::kZero2, "zero2", "ZeRO-2: + gradients sharded (reduce-scatter)"},
    {Strategy::kZero3, "zero3", "ZeRO-3: + parameters sharded (all-gathered per layer)"},
    {Strategy::kFsdpFull, "fsdp-full", "FSDP FULL_SHARD: as ZeRO-3, reshard after forward"},
    {Strategy::kFsdpGradOp, "fsdp-grad-op",
     "FSDP SHARD_GRAD_OP: parameters kept gathered from forward until backward"},
    {Strategy::kHsdp, "hsdp", "FSDP HYBRID_SHARD: FULL_SHARD inside a node, replicated across"},
    {Strategy::kFsdpNoShard, "fsdp-no-shard", "FSDP NO_SHARD: as DDP"},
});
static_assert(covers_every_enumerator(kStrategies) && names_are_unique(kStrategies));

enum class Precision {
  kBf16Mixed,  // bf16 compute, fp32 master weights and optimizer states
  kFp16Mixed,  // fp16 compute, fp32 master weights and optimizer states (loss scaling)
  kBf16,       // everything bf16, no master copy
  kFp32,       // everything fp32
  kBf16Amp,    // PyTorch autocast over fp32 weights: fp32 weights, gradients and states, bf16
               // matmuls on weight copies autocast caches through the forward
};

inline constexpr auto kPrecisions = enum_table<Precision>({
    {Precision::kBf16Mixed, "bf16-mixed", "bf16 compute, fp32 master weights and optimizer states"},
    {Precision::kFp16Mixed, "fp16-mixed", "fp16 compute, fp32 master weights, loss scaling"},
    {Precision::kBf16, "bf16", "everything bf16, no master copy"},
    {Precision::kFp32, "fp32", "everything fp32"},
    {Precision::kBf16Amp, "bf16-amp",
     "PyTorch autocast (torch.autocast bf16) over fp32 weights, as Hugging Face Trainer's "
     "--bf16 on an fp32 model: fp32 weights, gradients and optimizer states, bf16 matmuls on "
     "weight copies cached through the forward (ddp only)"},
});
static_assert(covers_every_enumerator(kPrecisions) && names_are_unique(kPrecisions));

enum class Optimizer {
  kAdamW,     // two states (exp_avg, exp_avg_sq)
  kAdam,      // two states
  kSgd,       // SGD with momentum: one state
  kAdam8bit,  // bitsandbytes 8-bit Adam: two 1-byte states (block-wise quantized)
};

inline constexpr auto kOptimizers = enum_table<Optimizer>({
    {Optimizer::kAdamW, "adamw", "AdamW: two states (exp_avg, exp_avg_sq)"},
    {Optimizer::kAdam, "adam", "Adam: two states"},
    {Optimizer::kSgd, "sgd", "SGD with momentum: one state"},
    {Optimizer::kAdam8bit, "adam8bit", "bitsandbytes 8-bit Adam: two 1-byte states"},
});
static_assert(covers_every_enumerator(kOptimizers) && names_are_unique(kOptimizers));

/// How torch.optim's Adam / AdamW runs its step (PyTorch only: DeepSpeed's and Megatron-LM's
/// fused Adam are one kernel).
enum class OptimizerImpl {
  kFused,    // one kernel per group, no intermediates (fused=True: Hugging Face Trainer's
             // adamw_torch_fused, its default from torch 2.8; torchtune's and torchtitan's)
  kForeach,  // torch.optim's default on CUDA (_multi_tensor_adamw): one pass per operation,
             // and _foreach_sqrt(exp_avg_sq) allocates a copy of that state for the whole group
};

inline constexpr auto kOptimizerImpls = enum_table<OptimizerImpl>({
    {OptimizerImpl::kFused, "fused", "one fused kernel, no intermediates (fused=True)"},
    {OptimizerImpl::kForeach, "foreach",
     "torch.optim's CUDA default: a pass per operation and a copy of one state"},
});
static_assert(covers_every_enumerator(kOptimizerImpls) && names_are_unique(kOptimizerImpls));

enum class CheckpointKind {
  kNone,       // every layer keeps all its activations
  kFull,       // every layer keeps only its input and recomputes its forward in backward
  kSelective,  // recompute the attention core only (Korthikanti et al. 2022, sec. 5)
  kSelectiveOp,  // torchtitan's op-level selective AC: keep every other matmul's output and
                 // the attention kernel's, recompute the rest (activation_memory.hpp)
  kEveryK,     // every K-th layer is fully checkpointed, the others keep everything
};

/// "every:K" is a pattern, not a name: checkpointing_from_string parses K, and parse_name on
/// this table is not the parser.
inline constexpr auto kCheckpointKinds = enum_table<CheckpointKind>({
    {CheckpointKind::kNone, "none", "every layer keeps all its activations"},
    {CheckpointKind::kFull, "full", "every layer keeps its input and recomputes its forward"},
    {CheckpointKind::kSelective, "selective", "recompute the attention core only"},
    {CheckpointKind::kSelectiveOp, "selective-op",
     "torchtitan's op-level selective AC: keep odd matmuls' and attention's outputs"},
    {CheckpointKind::kEveryK, "every:K", "every K-th layer fully checkpointed, K >= 1"},
});
static_assert(covers_every_enumerator(kCheckpointKinds) && names_are_unique(kCheckpointKinds));

struct Checkpointing {
  CheckpointKind kind = CheckpointKind::kNone;
  int every = 1;  // K of kEveryK (>= 1); every:1 == full
  /// Whether decoder layer `layer` (0-based, within the whole model) is fully recomputed.
  bool layer_recomputed(std::int64_t layer) const;
  friend bool operator==(const Checkpointing&, const Checkpointing&) = default;
};

enum class PipelineSchedule {
  kGpipe,        // all forwards, then all backwards (Huang et al. 2019)
  k1F1B,         // PipeDream-Flush (Narayanan et al. 2021, arXiv:2104.04473)
  kInterleaved,  // interleaved 1F1B with V model chunks per device (same paper, sec. 2.2)
};

inline constexpr auto kPipelineSchedules = enum_table<PipelineSchedule>({
    {PipelineSchedule::kGpipe, "gpipe", "all forwards, then all backwards (GPipe)"},
    {PipelineSchedule::k1F1B, "1f1b", "one forward, one backward (PipeDream-Flush)"},
    {PipelineSchedule::kInterleaved, "interleaved", "interleaved 1F1B, model chunks per device"},
});
static_assert(covers_every_enumerator(kPipelineSchedules) && names_are_unique(kPipelineSchedules));

/// How the attention core runs (Korthikanti et al. 2022, arXiv:2205.05198, sec. 4.1 and 5).
enum class Attention {
  kFlash,  // one fused kernel (FlashAttention, SDPA): causal half of the FLOPs, no s^2 tensors
  kEager,  // Q K^T and softmax(.) V as batched GEMMs over the full s x s scores, with the
           // softmax and its dropout reading and writing them (Megatron-LM 2022, HF "eager")
};

inline constexpr auto kAttentions = enum_table<Attention>({
    {Attention::kFlash, "flash", "fused attention kernel: causal FLOPs, no s^2 scores stored"},
    {Attention::kEager, "eager", "batched GEMMs over the full s^2 scores, softmax and dropout"},
});
static_assert(covers_every_enumerator(kAttentions) && names_are_unique(kAttentions));

/// How the memory-bound kernels between the matmuls are implemented (what they read and write:
/// block_compute.cpp, elementwise_bytes_per_token).
enum class Kernels {
  kEager,     // PyTorch eager modules as Hugging Face Transformers writes them (fp32 norms)
  kMegatron,  // Megatron-LM's fused LayerNorm, bias-GeLU and bias-dropout-add kernels, with
              // its GPT's dropout (hidden and attention 0.1): masks kept, softmax dropout run
              // (its gradient buffers are Framework::kMegatron's)
};

inline constexpr auto kKernelsTable = enum_table<Kernels>({
    {Kernels::kEager, "eager", "PyTorch eager modules (Hugging Face Transformers)"},
    {Kernels::kMegatron, "megatron",
     "Megatron-LM's fused LayerNorm, bias-GeLU and bias-dropout-add kernels, with dropout"},
});
static_assert(covers_every_enumerator(kKernelsTable) && names_are_unique(kKernelsTable));

/// The framework that runs the training loop and owns the gradients and the optimizer: what it
/// allocates beside the model state and how it reduces (the kernels between the matmuls are
/// Kernels, a separate choice: DeepSpeed drives Megatron-LM's GPT kernels in Megatron-DeepSpeed).
enum class Framework {
  kPytorch,    // torch.distributed DDP / FSDP with a torch.optim optimizer: DDP's Reducer copies
               // each gradient into its bucket; no ZeRO stages of its own (use FSDP)
  kDeepspeed,  // DeepSpeed's engine: ZeRO stages 1-3 with its own buffers (the IPG bucket, the
               // step's fp32 gradient conversion, ZeRO-3's parameter reuse), stage 0 as DDP
  kMegatron,   // Megatron-LM: its DDP over contiguous main_grad buffers, fp32 under bf16 and
               // reduced in place, and zero1 as its distributed optimizer
};

inline constexpr auto kFrameworks = enum_table<Framework>({
    {Framework::kPytorch, "pytorch", "PyTorch DDP / FSDP with torch.optim (DDP bucket copies)"},
    {Framework::kDeepspeed, "deepspeed",
     "DeepSpeed's engine: ZeRO 0-3 with its IPG bucket, fp32 step conversion and reuse"},
    {Framework::kMegatron, "megatron",
     "Megatron-LM: fp32 main gradients under bf16, reduced in place; zero1 = distributed "
     "optimizer"},
});
static_assert(covers_every_enumerator(kFrameworks) && names_are_unique(kFrameworks));

/// How the lm head and the cross-entropy loss hold the logits [tokens, vocab / tp] of one
/// micro-batch (activation_memory.hpp, loss_memory, counts the bytes of each).
enum class LossKind {
  kVocabParallel,  // Megatron-LM's vocab_parallel_cross_entropy: the fp32 softmax of the whole
                   // logits kept for backward
  kFull,           // Hugging Face transformers' ForCausalLMLoss: logits.float(), log_softmax
  kChunked,        // torchtune's CEWithChunkedOutputLoss: output projection and fp32 upcast
                   // per chunk of tokens (num_output_chunks)
  kFused,          // Liger Kernel's fused linear cross-entropy: no logits beyond one chunk,
                   // the input gradient computed in forward
};

/// "chunked:N" is a pattern, not a name: loss_from_string parses N.
inline constexpr auto kLossKinds = enum_table<LossKind>({
    {LossKind::kVocabParallel, "vocab-parallel",
     "Megatron-LM vocab-parallel cross-entropy: fp32 softmax of all logits kept"},
    {LossKind::kFull, "full",
     "Hugging Face transformers: bf16 logits, an fp32 copy, fp32 log-softmax kept"},
    {LossKind::kChunked, "chunked:N",
     "torchtune CEWithChunkedOutputLoss: logits and fp32 upcast N chunks of tokens"},
    {LossKind::kFused, "fused",
     "Liger fused linear cross-entropy: one chunk of logits, gradient in forward"},
});
static_assert(covers_every_enumerator(kLossKinds) && names_are_unique(kLossKinds));

/// The most chunks chunked:N takes (more than any sequence a step would split).
inline constexpr int kMaxLossChunks = 65536;

struct Loss {
  LossKind kind = LossKind::kVocabParallel;
  int chunks = 1;  // N of kChunked (>= 1)
  friend bool operator==(const Loss&, const Loss&) = default;
};

/// How the context-parallel ranks (each holding seq_len / cp tokens of every sequence) exchange
/// what attention needs from the others.
enum class CpComm {
  kRing,      // Megatron-LM / TransformerEngine context parallelism (cp_comm_type "p2p"),
              // torchtitan's ring attention: K and V chunks passed around a ring, each
              // transfer overlapping the attention of the chunk before
  kAllToAll,  // DeepSpeed-Ulysses: all-to-alls of Q, K, V (sequence-sharded to head-sharded)
              // and of the attention output back, not overlapped
};

inline constexpr auto kCpComms = enum_table<CpComm>({
    {CpComm::kRing, "ring", "K/V chunks around a ring, overlapping attention (Megatron CP)"},
    {CpComm::kAllToAll, "all-to-all",
     "all-to-alls of Q, K, V and the output, heads split over the ranks (Ulysses)"},
});
static_assert(covers_every_enumerator(kCpComms) && names_are_unique(kCpComms));

/// Where the parameter shards of ZeRO-3 / FSDP rest between their uses (DeepSpeed ZeRO-Offload
/// and ZeRO-Infinity's offload_param, FSDP's CPUOffload(offload_params=True)): each block's
/// shard is copied to the device before its all-gather, in forward and again in backward.
enum class OffloadParams {
  kNone,  // on the device
  kCpu,   // in host memory (pinned), over the host link
  kNvme,  // on NVMe (ZeRO-Infinity): read into host buffers, then over the host link
};

inline constexpr auto kOffloadParamsTable = enum_table<OffloadParams>({
    {OffloadParams::kNone, "none", "parameter shards stay on the device"},
    {OffloadParams::kCpu, "cpu", "parameter shards in host memory, fetched per block"},
    {OffloadParams::kNvme, "nvme", "parameter shards on NVMe (ZeRO-Infinity), fetched per block"},
});
static_assert(covers_every_enumerator(kOffloadParamsTable) &&
              names_are_unique(kOffloadParamsTable));

/// Where --offload-optimizer keeps the fp32 master weights and optimizer states between steps
/// (DeepSpeed's zero_optimization.offload_optimizer.device). The optimizer step runs on the
/// CPU either way ("Optimizer computation is offload to CPU regardless of device option",
/// deepspeed/runtime/zero/offload_config.py).
enum class OffloadDevice {
  kCpu,   // host memory (ZeRO-Offload, FSDP CPUOffload)
  kNvme,  // NVMe (ZeRO-Infinity, ZeRO-3 only): each sub-group swapped into host buffers to step
};

inline constexpr auto kOffloadDevices = enum_table<OffloadDevice>({
    {OffloadDevice::kCpu, "cpu", "states in host memory"},
    {OffloadDevice::kNvme, "nvme",
     "states and fp32 gradients on NVMe, swapped through host buffers per sub-group "
     "(ZeRO-Infinity, zero3)"},
});
static_assert(covers_every_enumerator(kOffloadDevices) && names_are_unique(kOffloadDevices));

/// DeepSpeed's swap buffers in pinned host memory (deepspeed/runtime/zero/offload_config.py
/// defaults): offload_optimizer.buffer_count = 4 buffers ("at least the number of states
/// maintained per parameter by the optimizer": Adam's parameter, gradient, momentum and
/// variance), each of the largest sub-group's fp32 elements (OptimizerSwapper's
/// SwapBufferManager); offload_param.buffer_count = 5 buffers of buffer_size = 1e8 elements in
/// the parameter dtype (AsyncPartitionedParameterSwapper).
inline constexpr std::int64_t kOptimizerSwapBuffers = 4;
inline constexpr std::int64_t kParamSwapBuffers = 5;
inline constexpr std::int64_t kParamSwapBufferElements = 100'000'000;
/// DeepSpeed's zero_optimization.sub_group_size default: ZeRO-3 steps (and with NVMe, swaps)
/// its optimizer partition in sub-groups of about this many elements.
inline constexpr std::int64_t kDefaultSubGroupSize = 1'000'000'000;
/// DeepSpeed's zero_optimization defaults (deepspeed/runtime/zero/config.py): reduce_bucket_size
/// 5e8 elements (Hugging Face Trainer's "auto" writes hidden_size^2 instead) and
/// stage3_max_reuse_distance 1e9 elements.
inline constexpr std::int64_t kDefaultReduceBucketSize = 500'000'000;
/// DeepSpeed's stage 0 (no ZeRO) all-reduces the gradients after the backward in buckets of
/// this many elements, each flattened into a copy (deepspeed/runtime/engine.py,
/// allreduce_gradients' MEMORY_OPT_ALLREDUCE_SIZE, not configurable).
inline constexpr std::int64_t kDeepspeedStage0BucketSize = 500'000'000;
inline constexpr std::int64_t kDefaultMaxReuseDistance = 1'000'000'000;
/// DeepSpeed ZeRO-3's parameter persistence and prefetch defaults, in parameter elements
/// (deepspeed/runtime/zero/config.py at edaa722): stage3_param_persistence_threshold 1e5 (a
/// tensor of at most this many elements is not partitioned), stage3_model_persistence_threshold
/// sys.maxsize (no cap on the persistent total), stage3_prefetch_bucket_size 5e7 (elements
/// gathered ahead of use) and stage3_max_live_parameters 1e9 (gathered elements beyond which
/// nothing more is prefetched).
inline constexpr std::int64_t kDefaultParamPersistenceThreshold = 100'000;
inline constexpr std::int64_t kDefaultModelPersistenceThreshold =
    std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t kDefaultPrefetchBucketSize = 50'000'000;
inline constexpr std::int64_t kDefaultMaxLiveParameters = 1'000'000'000;
/// CPU Adam throughput for --offload-optimizer (parameters per second per GPU's host share),
/// the default of TrainingPlan::cpu_adam_params_per_second. NOTE: an assumption of the order
/// DeepSpeed's CPU-Adam reports (Ren et al. 2021, ZeRO-Offload, arXiv:2101.06840, sec. 5: ~1-2 B
/// parameters/s on a multi-core host); DeepSpeed's ZeRO-Offload tutorial log of a DGX-2 host
/// shows 1.62e9 (tests/validation/README.md, deepspeed_tutorial_offload.csv). A user's host
/// differs: it is an input.
inline constexpr double kCpuAdamParamsPerSecond = 1e9;

/// How the frozen base weights of a LoRA run are stored (bitsandbytes, as transformers'
/// BitsAndBytesConfig loads them: load_in_4bit with bnb_4bit_quant_type nf4 / fp4, or
/// load_in_8bit). Only the decoder's nn.Linear modules are replaced (Linear4bit / Linear8bitLt);
/// embeddings, the lm_head (transformers keeps the output embedding unconverted), norms and MoE
/// routers stay in the compute dtype.
enum class BaseQuant {
  kNone,  // the base in the compute dtype (plain LoRA)
  kNf4,   // 4-bit NormalFloat, block size 64, absmax per block (QLoRA, Dettmers et al. 2023)
  kFp4,   // 4-bit float, same layout as NF4
  kInt8,  // LLM.int8() (Dettmers et al. 2022, arXiv:2208.07339): int8 + an fp32 scale per row
};

inline constexpr auto kBaseQuants = enum_table<BaseQuant>({
    {BaseQuant::kNone, "none", "frozen base in the compute dtype"},
    {BaseQuant::kNf4, "nf4", "bitsandbytes 4-bit NormalFloat, 64-value blocks (QLoRA)"},
    {BaseQuant::kFp4, "fp4", "bitsandbytes 4-bit float, 64-value blocks"},
    {BaseQuant::kInt8, "int8", "bitsandbytes LLM.int8(): int8 and an fp32 scale per row"},
});
static_assert(covers_every_enumerator(kBaseQuants) && names_are_unique(kBaseQuants));

/// LoRA (Hu et al. 2021, arXiv:2106.09685) as Hugging Face PEFT applies it: for each targeted
/// linear W [in x out] of every decoder layer, A [in x r] and B [r x out] are trained and W is
/// frozen; y = x W + (alpha / r) dropout(x) A B.
struct Lora {
  std::int64_t rank = 0;  // r; 0: LoRA off (full-parameter training)
  double alpha = 16.0;    // lora_alpha (a scale: no memory or time of its own)
  double dropout = 0.0;   // lora_dropout; > 0 keeps a dropped copy of x and its mask per target
  /// PEFT target_modules, Hugging Face module names ("q_proj"); PEFT's default for Llama-style
  /// models is q_proj, v_proj.
  std::vector<std::string> targets = {"q_proj", "v_proj"};
  bool all_linear = false;  // PEFT "all-linear": every linear of the decoder layers, not lm_head
  bool train_embeddings = false;  // modules_to_save embed_tokens
  bool train_lm_head = false;     // modules_to_save lm_head
  bool train_norms = false;       // the norm weights trained as well
  bool enabled() const { return rank > 0; }
  /// Whether a decoder linear named `name` ("q_proj", "experts.down_proj") gets an adapter.
  bool targets_module(std::string_view name) const;
  friend bool operator==(const Lora&, const Lora&) = default;
};

std::string_view to_string(Strategy s);
std::string_view to_string(Precision p);
std::string_view to_string(Optimizer o);
std::string to_string(const Checkpointing& c);
std::string_view to_string(PipelineSchedule s);
std::string_view to_string(Attention a);
std::string_view to_string(Kernels k);
std::string_view to_string(Framework f);
std::string_view to_string(OptimizerImpl i);
std::string to_string(const Loss& l);
std::string_view to_string(CpComm c);
std::string_view to_string(OffloadParams o);
std::optional<OffloadParams> offload_params_from_string(std::string_view s);
std::string_view offload_params_names();
std::string_view to_string(OffloadDevice d);
std::optional<OffloadDevice> offload_device_from_string(std::string_view s);
std::string_view offload_device_names();
std::optional<CpComm> cp_comm_from_string(std::string_view s);
std::string_view cp_comm_names();
std::string_view to_string(BaseQuant q);
std::optional<BaseQuant> base_quant_from_string(std::string_view s);
std::string_view base_quant_names();
std::optional<Strategy> strategy_from_string(std::string_view s);
std::optional<Precision> precision_from_string(std::string_view s);
std::optional<Optimizer> optimizer_from_string(std::string_view s);
/// "none", "full", "selective", "every:K" with K >= 1.
std::optional<Checkpointing> checkpointing_from_string(std::string_view s);
std::optional<PipelineSchedule> pipeline_schedule_from_string(std::string_view s);
std::optional<Attention> attention_from_string(std::string_view s);
std::optional<Kernels> kernels_from_string(std::string_view s);
std::optional<Framework> framework_from_string(std::string_view s);
std::optional<OptimizerImpl> optimizer_impl_from_string(std::string_view s);
/// Whether `framework` has `strategy`'s data parallelism: PyTorch ddp and FSDP (not the ZeRO
/// names), DeepSpeed ddp (stage 0) and zero1-3, Megatron-LM ddp and zero1.
bool framework_runs(Framework framework, Strategy strategy);
/// "vocab-parallel", "full", "fused", "chunked:N" with 1 <= N <= 65536.
std::optional<Loss> loss_from_string(std::string_view s);

/// The valid names, comma-separated, for error messages.
std::string_view strategy_names();
std::string_view precision_names();
std::string_view optimizer_names();
std::string_view pipeline_schedule_names();
std::string_view attention_names();
std::string_view kernels_names();
std::string_view framework_names();
std::string_view optimizer_impl_names();
/// "vocab-parallel, full, chunked:N, fused".
std::string_view loss_names();
/// "none, full, selective, selective-op, every:K".
std::string_view checkpointing_names();

/// Bytes of one element of the compute (activation / working parameter) dtype.
std::int64_t compute_element_bytes(Precision p);
/// Bytes of one element of the parameters the model holds (and of their gradients): the compute
/// dtype's, except fp32 under bf16-amp (autocast casts them for each use).
std::int64_t param_element_bytes(Precision p);

/// PyTorch DDP's default bucket_cap_mb = 25, which PyTorch turns into bytes as
/// 25 * 1024 * 1024 (torch/nn/parallel/distributed.py: bucket_bytes_cap = int(bucket_cap_mb *
/// 1024 * 1024)): 25 MiB, not 25 MB.
inline constexpr Bytes kDefaultDdpBucket = MiB(25);

struct TrainingPlan {
  int num_gpus = 1;
  int gpus_per_node = 8;
  int tp = 1;
  int pp = 1;
  int cp = 1;  // context-parallel degree: each rank holds seq_len / cp tokens of a sequence
  CpComm cp_comm = CpComm::kRing;
  int ep = 1;  // expert-parallel degree (MoE): routed experts split over ep ranks of cp x dp
  /// MoE routing (moe_routed_load): the busiest expert's tokens over the mean (>= 1; 1 is
  /// uniform routing), Megatron-LM's --moe-expert-capacity-factor (0: dropless) and
  /// --moe-pad-expert-input-to-capacity.
  double expert_load_imbalance = 1.0;
  /// Or the measured routing: tokens (or any shares) routed to each expert in expert order, as
  /// Megatron-LM's per-expert token counts give them (empty: expert_load_imbalance). Expert i
  /// sits on EP rank i / (num_experts / ep), as Megatron places its local experts.
  std::vector<double> expert_loads;
  double moe_capacity_factor = 0.0;
  bool moe_pad_to_capacity = false;
  Strategy strategy = Strategy::kDdp;
  Precision precision = Precision::kBf16Mixed;
  Optimizer optimizer = Optimizer::kAdamW;
  OptimizerImpl optimizer_impl = OptimizerImpl::kFused;
  Checkpointing checkpointing;
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  int pp_interleave = 1;  // V model chunks per device (kInterleaved only)
  bool sequence_parallel = false;
  bool offload_optimizer = false;
  OffloadDevice offload_optimizer_device = OffloadDevice::kCpu;  // with offload_optimizer
  /// ZeRO-3's optimizer sub-group, elements: the NVMe swap buffers hold the largest one.
  std::int64_t sub_group_size = kDefaultSubGroupSize;
  OffloadParams offload_params = OffloadParams::kNone;
  /// DeepSpeed ZeRO (deepspeed_zero()): its zero_optimization settings. reduce_bucket_size:
  /// elements of the gradient reduction (IPG) bucket, in the gradient dtype; with
  /// contiguous_gradients the bucket is a preallocated flat buffer, which ZeRO-1/2 double under
  /// overlap_comm (ZeRO-3 keeps one); max_reuse_distance: ZeRO-3 keeps a parameter gathered when
  /// it is used again within this many parameter elements (stage3_max_reuse_distance).
  std::int64_t reduce_bucket_size = kDefaultReduceBucketSize;
  bool contiguous_gradients = true;
  bool overlap_comm = false;
  std::int64_t max_reuse_distance = kDefaultMaxReuseDistance;
  /// DeepSpeed ZeRO-3 only (deepspeed_zero3_gather.hpp), elements: a parameter tensor of at
  /// most param_persistence_threshold elements stays whole on every rank while the persistent
  /// total stays within model_persistence_threshold; prefetch_bucket_size elements of the next
  /// blocks are gathered ahead of use (0: none) while fewer than max_live_parameters gathered
  /// elements are alive.
  std::int64_t param_persistence_threshold = kDefaultParamPersistenceThreshold;
  std::int64_t model_persistence_threshold = kDefaultModelPersistenceThreshold;
  std::int64_t prefetch_bucket_size = kDefaultPrefetchBucketSize;
  std::int64_t max_live_parameters = kDefaultMaxLiveParameters;
  /// Parameters per second the host's CPU Adam updates for one GPU (--offload-optimizer).
  double cpu_adam_params_per_second = kCpuAdamParamsPerSecond;
  /// PyTorch FSDP (fsdp-full, hsdp): the embedding and the head are FSDP units of their own
  /// (torchtune's custom_sharded_layers ['tok_embeddings', 'output']), resharded after forward
  /// like the layers; otherwise they are in the root unit, which FSDP keeps unsharded from its
  /// forward to the end of backward (step_graph_forward.cpp, step_graph_backward.cpp).
  bool fsdp_wrap_embeddings = false;
  /// Read and write bandwidth of the NVMe drives one GPU's shards use, decimal GB/s (only for
  /// NVMe offload, where it is required: no datasheet gives it).
  double nvme_gb_per_s = 0.0;
  /// Whether the optimizer states rest on NVMe (offload_optimizer with device nvme).
  bool optimizer_on_nvme() const {
    return offload_optimizer && offload_optimizer_device == OffloadDevice::kNvme;
  }
  Attention attention = Attention::kFlash;
  Kernels kernels = Kernels::kEager;
  /// The framework; none: framework_in_use() takes it from the strategy and the kernels.
  std::optional<Framework> framework;
  Loss loss;  // vocab-parallel
  std::int64_t micro_batch = 1;   // sequences per micro-batch per DP rank
  std::int64_t global_batch = 0;  // sequences per step over all DP ranks; 0 = micro_batch * dp
  std::int64_t seq_len = 2048;
  Bytes ddp_bucket = kDefaultDdpBucket;
  Lora lora;                               // rank 0: full-parameter training
  BaseQuant base_quant = BaseQuant::kNone;  // the frozen base's storage (needs LoRA)
  bool double_quant = true;  // bnb_4bit_use_double_quant: 8-bit absmax (nf4 / fp4 only)
  /// bitsandbytes paged optimizers (paged_adamw_32bit, paged_adamw_8bit): the states live in
  /// CUDA unified memory, which the driver pages out to the host when the device runs short;
  /// they are counted in host memory (the least the device can run with).
  bool paged_optimizer = false;
  /// The dataset's sample lengths (null: every sequence is seq_len tokens of data) and how they
  /// fill the step's sequences (sample_lengths.hpp).
  std::shared_ptr<const SampleLengths> samples;
  Packing packing = Packing::kPadded;
  /// Set by simulate_training for its timed run: padded micro-batches shaped at their mean
  /// padded length instead of the longest one (the memory peak).
  bool shape_mean_batch = false;

  /// Whether each micro-batch is padded to its longest sample (samples given, packing padded).
  bool pads_samples() const { return samples && packing == Packing::kPadded; }
  /// The sequence length the step's tensors have: seq_len, or for padded samples the padded
  /// length of the longest micro-batch (or with shape_mean_batch the expected one), rounded up
  /// to the multiple context parallelism splits (2 cp for the ring, cp for all-to-all).
  std::int64_t shaped_seq_len() const;
  /// Tokens of data, not padding, per sequence (seq_len without samples).
  double data_tokens_per_sequence() const;
  /// Causal query-key pairs attention computes per sequence through `window` (0: global): the
  /// whole shaped sequence (eager, or samples concatenated), each sample's own (flash over
  /// padded samples, which skips the padding; documents).
  double attention_pairs_per_sequence(std::int64_t window) const;
  /// Data tokens x the tokens each attends, per sequence, in the convention of model FLOPs
  /// (every token attends its whole sample, or the whole sequence when concatenated).
  double model_attended_tokens_per_sequence(std::int64_t window) const;

  /// Data-parallel degree num_gpus / (tp * cp * pp) (valid plans only): the ranks that take
  /// different sequences.
  int dp() const { return num_gpus / (tp * cp * pp); }
  /// Ranks of a stage that hold the same dense weights: cp * dp. Their gradients are reduced,
  /// and the sharded strategies shard them, over this group.
  int grad_group() const { return cp * dp(); }
  /// Ranks that hold the same routed experts: grad_group() / ep.
  int expert_grad_group() const { return grad_group() / ep; }
  /// Micro-batches per step per DP rank: global_batch / (micro_batch * dp).
  std::int64_t num_micro_batches() const;
  /// Sequences per step over the whole job.
  std::int64_t effective_global_batch() const;
  /// Ranks that share one copy of sharded state: grad_group() for ZeRO / FSDP, its intra-node
  /// ranks for HSDP, 1 for DDP and NO_SHARD (nothing is sharded).
  int shard_degree() const;
  /// The same for the routed experts, over expert_grad_group().
  int expert_shard_degree() const;
  /// Ranks of one gradient group (grad_group(), stride tp) that sit in the same node.
  int dp_ranks_per_node() const;

  /// The routed token copies the busiest EP rank's experts compute, over their balanced share
  /// (tokens x top_k x local experts / E): the load imbalance, capped where every token would
  /// hit min(top_k, local experts) of them (so 1 without EP) and at the capacity factor when
  /// tokens are dropped; exactly the capacity factor when inputs are padded to capacity.
  double moe_routed_load(const model::MoeSpec& moe) const;
  /// The busiest expert's tokens over the mean: expert_load_imbalance, or from expert_loads.
  double busiest_expert_load() const;
  /// With expert_loads, the busiest rank's experts' mean load (each expert's tokens over the
  /// mean, capped at the capacity factor), under the same caps.
  /// The share of the busiest expert's tokens its capacity drops (0 when dropless or within);
  /// with expert_loads, the share of all routed tokens dropped.
  double moe_dropped_fraction() const;
  /// The framework set, or the one the strategy and kernels imply: FSDP and HSDP are PyTorch's;
  /// zero1 under Megatron-LM's kernels is Megatron's distributed optimizer and the other ZeRO
  /// stages are DeepSpeed's (Megatron-DeepSpeed with those kernels); DDP is Megatron-LM's under
  /// its kernels, else PyTorch's.
  Framework framework_in_use() const;
  /// Bytes of one gradient element as the framework keeps and reduces it: Megatron-LM
  /// (Framework::kMegatron) accumulates and all-reduces bf16 training's gradients in fp32
  /// main_grad buffers (megatron/training/arguments.py sets accumulate_allreduce_grads_in_fp32
  /// for --bf16: "bfloat16 requires gradient accumulation and all-reduce to be done in fp32"),
  /// 4 bytes; otherwise the compute dtype's.
  std::int64_t grad_element_bytes() const;
  /// Whether a ZeRO stage (zero1/2/3) runs as DeepSpeed's, with its own buffers.
  bool deepspeed_zero() const;
  /// Whether ddp runs as DeepSpeed's engine without ZeRO (stage 0).
  bool deepspeed_stage0() const {
    return strategy == Strategy::kDdp && framework_in_use() == Framework::kDeepspeed;
  }

  /// Records each problem under the config path it concerns ("hardware.num_gpus", "parallel.tp").
  void validate(ValidationReport& report) const;
  /// Problems that need the model: tp must divide heads / KV heads / MLP width, pp * V must not
  /// exceed the layers.
  void validate_for_model(const model::ModelSpec& spec, ValidationReport& report) const;
};

}  // namespace vramsim::training
